"""The UR5 reaching problem shared by Crocoddyl's oracle (``tests/oracles/crocoddyl_reach.py``, which reads its
``spec`` as JSON), the benchmark against Crocoddyl and the tests of DDP: ``meshes/robots/ur5_robot.urdf`` from rest
at Q0, N intervals of DT, the origin of ``tool0`` to TARGET; running cost dt·(W_GOAL·½‖p − p*‖² + W_X·½‖x − x0‖² +
W_U·½‖u‖²), terminal W_GOAL_END·½‖p − p*‖² + W_X·½‖x − x0‖²; symplectic Euler."""

from pathlib import Path

import numpy as np

import flexbody as fb
from flexbody.predictive import InputResidual, PointResidual, ReachingProblem, StateResidual

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "meshes" / "robots" / "ur5_robot.urdf"
ORACLE = ROOT / "tests" / "oracles" / "crocoddyl_reach.py"
STORED = ROOT / "tests" / "data" / "crocoddyl_ur5_reach.npz"  # Crocoddyl's optimum, made by make_stored()
Q0 = (0.0, -1.0, 1.5, -0.5, 1.2, 0.0)  # rad
TARGET = (0.45, 0.25, 0.35)  # m, world
FRAME = "tool0"
N, DT = 100, 0.01  # -, s
W_GOAL, W_GOAL_END, W_X, W_U = 1.0, 1e3, 0.1, 1e-3  # 1/m², 1/m², -, 1/(N·m)²
TH_STOP = 1e-24  # Σ‖Q_u‖²: both solvers converge to the optimum's last digits


def spec(repeats: int = 1) -> dict:
    """The problem for the oracle (JSON)."""
    return dict(
        urdf=str(URDF),
        gravity=[0.0, 0.0, -9.81],
        q0=list(Q0),
        target=list(TARGET),
        frame=FRAME,
        N=N,
        dt=DT,
        w_goal=W_GOAL,
        W_goal=W_GOAL_END,
        w_x=W_X,
        w_u=W_U,
        th_stop=TH_STOP,
        max_iterations=500,
        repeats=repeats,
    )


def described() -> dict:
    """The problem as stored with the oracle's optimum (the URDF relative to the repository)."""
    return spec() | {"urdf": str(URDF.relative_to(ROOT))}


def flexbody_problem() -> ReachingProblem:
    tree = fb.load_urdf(URDF, visuals=False)
    asm = fb.System([tree], q0=np.array(Q0)).assemble()
    x0 = np.concatenate([Q0, np.zeros(6)])
    goal = tree.point(FRAME, (0.0, 0.0, 0.0))
    running = [PointResidual(goal, TARGET, W_GOAL), StateResidual(x0, W_X), InputResidual(W_U)]
    terminal = [PointResidual(goal, TARGET, W_GOAL_END), StateResidual(x0, W_X)]
    return ReachingProblem(asm, x0, DT, N, running, terminal)


def crocoddyl(python: str, repeats: int = 1) -> dict:
    """Crocoddyl's optimum and median solve time, run by ``python`` (its environment: ``make crocoddyl-venv``)."""
    import json
    import subprocess

    done = subprocess.run([python, str(ORACLE), json.dumps(spec(repeats))], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def make_stored(python: str = str(ROOT / ".venv-crocoddyl" / "bin" / "python")) -> None:
    """Write Crocoddyl's optimum to STORED (run by hand after a change of the problem)."""
    import json

    found = crocoddyl(python)
    np.savez(
        STORED,
        xs=np.array(found["xs"]),
        us=np.array(found["us"]),
        cost=found["cost"],
        iterations=found["iterations"],
        versions=json.dumps(found["versions"]),
        spec=json.dumps(described()),
    )


if __name__ == "__main__":
    make_stored()

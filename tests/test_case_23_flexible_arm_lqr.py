"""Case 23 (LQR for the flexible arm of case 14) over 0.6 s instead of 1.5 s: the design (closed-loop damping of
each mode), and against what the linear model predicts — the closed loop follows exp((A − BK)t)x₀ to first order
in the disturbance, its tip vibration (measured from the written tip signal alone, matrix pencil) decays at the
designed rate up to the integrator's one-step input delay, and the open loop vibrates at the modal frequency
with the material damping. Bounds: the numbers measured at these settings (in the comments) with a margin."""

import numpy as np
import pytest
import scipy.linalg as la
from case_files import assert_files, load
from signal_fits import matrix_pencil

import flexbody as fb

case = load("23_flexible_arm_lqr.py")
T_END = 0.6  # s
PENCIL_ORDER = 16  # damped exponentials fitted to the tip signal (x, z)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("case23")
    return out, case.main(out, t_end=T_END, vtk_every=0)


@pytest.fixture(scope="module")
def model():
    """The linear model and the gain of the case's design, computed again: (u*, lin, K)."""
    u, _, _, _, lin = case.linear_model(case.build().assemble(), case.N_MODES)
    return u, lin, case.lqr(lin, case.TIP_REF, case.TIP_RATE, case.TORQUE_REF)


def test_case_23_design_damps_the_in_plane_modes(run):
    out, s = run
    assert (s["n_dofs"], s["n_constraints"], s["n_states"]) == (245, 27, 436)
    assert s["static_residual"] < 1e-8  # 3.2e-9 N
    roles = [r["role"] for r in s["modes"]]
    assert roles[:6] == ["arm swing", "arm swing", "out of plane", "beam bending 1", "out of plane", "beam bending 2"]
    first = s["modes"][s["first_beam_mode"]]
    assert abs(first["frequency_hz"] - 6.82452) < 1e-4
    # every closed-loop eigenvalue stable; the first bending mode from ζ 0.0206 to 0.332; the modes the joints
    # cannot move (out of plane) keep their eigenvalues (to 2e-10 relative)
    assert s["open_loop_max_real"] < 0 and s["closed_loop_max_real"] < -0.16  # −0.1651
    assert abs(first["open_damping_ratio"] - 0.02060) < 1e-4 and abs(first["closed_damping_ratio"] - 0.3316) < 1e-3
    for r in s["modes"]:
        if r["role"] == "out of plane":
            assert abs(complex(*r["closed_pole"]) - complex(*r["open_pole"])) < 1e-8 * abs(complex(*r["open_pole"]))
        else:
            assert r["closed_damping_ratio"] > max(0.1, r["open_damping_ratio"])
    for name in ("open_loop", "closed_loop_1", "closed_loop_2"):
        assert s["runs"][name]["rejected"] == 0 and s["runs"][name]["max_violation"] < 1e-12  # 2e-15 m
    assert s["runs"]["closed_loop_2"]["tip_at_end"] < 1e-2 * s["runs"]["open_loop"]["tip_at_end"]  # 1.8e-5, 3.9e-3 m
    files = ["histories.csv", "lqr.png", "summary.txt", "summary.json"]
    assert_files(out, files + [f"{name}/results.npz" for name in s["runs"]])
    back = fb.Results.load(out / "closed_loop_2")
    assert abs(back.times[-1] - T_END) < 1e-12 and back.histories["tau_k"].shape == (len(back.times), 2)


def linear_prediction(lin, K, res, grid) -> tuple[np.ndarray, np.ndarray]:
    """Tip deviation (x, z) [m] and joint torques [N·m] of exp(A t) x(0) (A − BK with a gain) on ``grid``."""
    p = lin.metadata["p"]
    A = lin.A if K is None else lin.A - lin.B[:, :2] @ K
    E = la.expm(A * (grid[1] - grid[0]))
    x = np.empty((len(grid), 2 * p))
    x[0] = lin.state(res.q[0], res.v[0])
    for k in range(1, len(grid)):
        x[k] = E @ x[k - 1]
    tau = np.tile(lin.u, (len(grid), 1)) if K is None else lin.u - x @ K.T
    return x[:, :p] @ lin.C[[0, 2], :p].T, tau


def nearest(poles, target) -> complex:
    return complex(poles[np.argmin(np.abs(poles - target))])


def relative(pole, target) -> np.ndarray:
    """[Re/Re − 1, Im/Im − 1] of a pole against a target."""
    return np.array([pole.real / target.real - 1.0, pole.imag / target.imag - 1.0])


def test_case_23_runs_against_the_linear_model_and_the_designed_poles(run, model):
    out, s = run
    u, lin, K = model
    h = np.genfromtxt(out / "histories.csv", delimiter=",", names=True)
    grid = h["t"]
    first = s["modes"][s["first_beam_mode"]]
    numbers = {}
    for name, gain in (("open_loop", None), ("closed_loop_1", K), ("closed_loop_2", K)):
        y_lin, tau_lin = linear_prediction(lin, gain, fb.Results.load(out / name), grid)
        y = np.column_stack([h[f"{name}_tip_dx"], h[f"{name}_tip_dz"]])
        tau = np.column_stack([h[f"{name}_tau1"], h[f"{name}_tau2"]])
        amplitude = s["runs"][name]["amplitude"]
        target = complex(*first["open_pole" if gain is None else "closed_pole"])
        swing = np.abs(tau_lin - u).max()
        numbers[name] = {
            "deviation": np.abs(y - y_lin).max() / amplitude,
            "torque_deviation": np.abs(tau - tau_lin).max() / swing if swing else 0.0,
            "pole": nearest(matrix_pencil(grid, y, PENCIL_ORDER)[0], target),
            "pencil_on_prediction": relative(nearest(matrix_pencil(grid, y_lin, PENCIL_ORDER)[0], target), target),
            "target": target,
        }
        assert max(np.abs(numbers[name]["pencil_on_prediction"])) < 1e-6  # the method itself: ≤ 2e-8
    big, small, open_loop = numbers["closed_loop_1"], numbers["closed_loop_2"], numbers["open_loop"]
    # (a) deviation from exp((A − BK)t)x₀ / amplitude: 7.46e-2 (2 cm), 3.58e-2 (1 cm) -> ratio 2.09: first order
    assert small["deviation"] < 5e-2
    assert 1.6 < big["deviation"] / small["deviation"] < 2.4
    assert small["torque_deviation"] < 5e-2  # 2.8e-2 of 4.1 N·m
    # (b) measured closed-loop pole at 1 cm vs the eigenvalue: Re +1.64e-2, Im +1.1e-3; generalized-α applies the
    # controller's output one step late, δλ = λ Δt wᴴBKv / wᴴv: +1.13e-2, +2.4e-3; vs that delayed pole +5.0e-3,
    # −1.3e-3 (nonlinear)
    BK = lin.B[:, :2] @ K
    w, W, V = la.eig(lin.A - BK, left=True, right=True)
    j = int(np.argmin(np.abs(w - small["target"])))
    lam, v, wl = w[j], V[:, j], W[:, j]
    delayed = complex(lam + lam * case.DT * (wl.conj() @ BK @ v) / (wl.conj() @ v))
    delay_shift = relative(delayed, small["target"])
    assert abs(delay_shift[0] - 0.01133) < 2e-4 and abs(delay_shift[1] - 0.00240) < 1e-4
    to_target, to_delayed = relative(small["pole"], small["target"]), relative(small["pole"], delayed)
    assert 0 < to_target[0] < 3e-2 and abs(to_target[1]) < 5e-3
    assert abs(to_delayed[0]) < 1e-2 and abs(to_delayed[1]) < 3e-3
    # (c) open loop at 1 cm: frequency vs modal_analysis −1.08e-3 (damping −2.2e-4, the rest the amplitude); pole
    # vs the eigenvalue −2.1e-3 (Re), −8.6e-4 (Im); the damping ratio below β ω/2 (= 0.0217: 4 % of the mode's
    # stiffness is gravity's and the preload's, which Kelvin–Voigt damping leaves undamped)
    assert abs(open_loop["pole"].imag / (2 * np.pi) / first["frequency_hz"] - 1.0) < 2e-3
    to_eigenvalue = relative(open_loop["pole"], open_loop["target"])
    assert abs(to_eigenvalue[0]) < 1e-2 and abs(to_eigenvalue[1]) < 2e-3
    assert -open_loop["pole"].real / abs(open_loop["pole"]) < first["elastic_damping_ratio"]

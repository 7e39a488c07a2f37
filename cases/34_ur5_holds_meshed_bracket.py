"""Case 34: a UR5 from its URDF file holds an aluminium bracket meshed from a CAD-like geometry by gmsh (10-node
tetrahedra) while the bracket's upright carries a tool force — a part from geometry in one constrained system with a
real robot (static).

Problem: the UR5 of ``meshes/robots/ur5_robot.urdf`` (as case 17), six revolute joints held at Q0 by their torques,
gravity along −z. The bracket of ``meshes/bracket.geo`` (an L-bracket: base plate 60 × 40 × 6 mm with a 12 mm bolt
hole, upright 6 × 40 × 50 mm; meshes/README.md) is meshed by ``fb.mesh.from_geometry`` with 10-node tetrahedra of
MESH_SIZE; its physical surface "clamp" (the base plate's end face) is attached to the flange frame ``tool0``
(``fb.AttachNodes``), centred on the flange, the plate sticking out along the flange z axis
(``fb.mechanisms.TOOL_AXES``), the upright along the flange y. Aluminium, neo-Hookean (YOUNG, POISSON, DENSITY).
Loads: gravity on the bracket and a dead TOOL_FORCE (world axes) spread over the upright's top face "load".
``fb.holding_inputs`` finds the joint torques that hold Q0 and the deflected equilibrium.

Expected (tests/test_case_34_meshed_bracket.py compares; docs/verification.md, "Case 34"):
1. Holding torques: Pinocchio's RNEA of the same URDF at (Q0, 0, 0) minus J_tool0ᵀ times the wrench that the
   bracket's weight and the tool force exert about the flange origin (at the deflected equilibrium), to round-off.
2. The bracket's mass ρ V, V in closed form (plates minus the hole, 2.42814e-5 m³), within the curved elements'
   geometric error (about 1e-5 at 5 mm).
3. The flange is held still, so the bracket deflects relative to the flange as it does clamped to the ground under
   the same loads in flange axes: to the Newton tolerance.

Outputs in out_dir: bracket.vtu (the deflected bracket with displacement, strain and stress fields; ParaView),
bracket.msh (the gmsh mesh with its sets), summary.txt (JSON: torques, tip deflection, stress, mass, sizes).
``main`` returns the summary, the assembled system and the equilibrium.
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

ROBOT = "meshes/robots/ur5_robot.urdf"  # -, URDF file of the robot (absolute, or from the repository root)
FLANGE = "tool0"  # -, URDF link holding the bracket
Q0 = (0.0, -1.2, 1.8, -0.6, np.pi / 2, 0.0)  # rad, held joint angles (pan, lift, elbow, wrist 1, 2, 3)
GEOMETRY = "meshes/bracket.geo"  # -, gmsh geometry of the bracket (physical surfaces "clamp", "load", "bolt")
MESH_SIZE = 0.005  # m, largest tetrahedron edge
ORDER = 2  # -, 2: 10-node tetrahedra, 1: 4-node ones
YOUNG = 70e9  # Pa, Young's modulus (aluminium)
POISSON = 0.33  # -, Poisson's ratio
DENSITY = 2700.0  # kg/m³, density
GRAVITY = 9.81  # m/s², gravity along −z
TOOL_FORCE = (0.0, 0.0, -200.0)  # N, dead force on the upright's top face (world axes)
CLAMP_CENTRE = (0.0, 0.020, 0.003)  # m, centre of the clamp face in the geometry's coordinates


def bracket_mesh(geometry=GEOMETRY, mesh_size=MESH_SIZE, order=ORDER) -> fb.TetMesh:
    """The bracket meshed by gmsh, in its own coordinates with the clamp face's centre at the origin."""
    mesh = fb.mesh.from_geometry(Path(__file__).resolve().parents[1] / geometry, size=mesh_size, order=order)
    return mesh.with_points(mesh.points - np.asarray(CLAMP_CENTRE))


def build(
    robot=ROBOT,
    flange=FLANGE,
    q0=Q0,
    geometry=GEOMETRY,
    mesh_size=MESH_SIZE,
    order=ORDER,
    young=YOUNG,
    poisson=POISSON,
    density=DENSITY,
    gravity=GRAVITY,
    tool_force=TOOL_FORCE,
) -> fb.System:
    """The robot (joints actuated) holding the bracket at its flange at q0, gravity and the tool force on it."""
    tree = fb.load_urdf(Path(__file__).resolve().parents[1] / robot, gravity=(0.0, 0.0, -gravity), visuals=False)
    holder = tree.link(flange)
    kin = tree.kinematics(np.asarray(q0, dtype=float))
    R, p = kin.R[holder.index], kin.p[holder.index]
    local = bracket_mesh(geometry, mesh_size, order)
    mesh = local.with_points(local.points @ (R @ fb.mechanisms.TOOL_AXES).T + p)
    bracket = fb.FlexibleBody("bracket", mesh, fb.NeoHookean(young, poisson, density))
    loads = [fb.Gravity(bracket, (0.0, 0.0, -gravity)), fb.SurfaceTraction(bracket, "load", total=tool_force)]
    joints = [link for link in tree.links if link.coordinate is not None]
    attach = fb.AttachNodes(bracket, "clamp", holder, name="flange")
    return fb.System([tree, bracket], [attach], loads=loads, actuators=joints, q0=q0)


def flange_pose(asm, q, flange=FLANGE) -> tuple[np.ndarray, np.ndarray]:
    """Flange rotation (3, 3) and origin (3,) [m] at q (world)."""
    tree = asm.trees[0]
    kin = tree.kinematics(asm.coordinates(tree, np.asarray(q, dtype=float)))
    i = tree.link(flange).index
    return kin.R[i], kin.p[i]


def tip_deflection(asm, q) -> np.ndarray:
    """Mean displacement (3,) [m] of the "load" face relative to the flange, in the bracket's axes (x along the base
    plate, y across it, z along the upright)."""
    bracket = asm.bodies[0]
    top = bracket.nodes("load")
    axes = []
    for state in (asm.q0, q):
        R, p = flange_pose(asm, state)
        x = asm.coordinates(bracket, np.asarray(state, dtype=float), nodes=top).mean(axis=0)
        axes.append((R @ fb.mechanisms.TOOL_AXES).T @ (x - p))
    return axes[1] - axes[0]


def main(out_dir="out/34_ur5_holds_meshed_bracket", **overrides) -> dict:
    """Hold the bracket, write the outputs; returns the summary (with "assembled" and "equilibrium")."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    asm = build(**overrides).assemble()
    bracket = asm.bodies[0]
    torques, eq = fb.holding_inputs(asm, load_steps=2)
    q_bracket = asm.coordinates(bracket, eq.q).ravel()
    fb.io.write_vtu(out / "bracket.vtu", bracket, q_bracket)
    fb.mesh.write(bracket.mesh, out / "bracket.msh")
    stress = bracket.cell_fields(q_bracket)["von_mises"]
    summary = {
        "holding_torques": torques.tolist(),
        "tip_deflection": tip_deflection(asm, eq.q).tolist(),
        "max_von_mises": float(stress.max()),
        "mass": float(bracket.mass()),
        "elements": int(bracket.n_elements),
        "nodes": int(bracket.n_nodes),
        "coordinates": int(asm.n_dofs),
        "newton_iterations": int(eq.iterations),
        "residual": float(eq.residual),
    }
    (out / "summary.txt").write_text(json.dumps(summary, indent=1) + "\n")
    return {**summary, "assembled": asm, "equilibrium": eq}


if __name__ == "__main__":
    main()

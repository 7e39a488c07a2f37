"""Generate the small meshes shipped in meshes/ (see meshes/README.md for what each holds).

Run from the repository root:  python meshes/make_meshes.py

The Gmsh files are written here as MSH 4.1 ASCII text directly (not through meshio), in Gmsh's own
node order taken from the Gmsh manual ("Node ordering"), so that reading them back with
``flexbody.fem.mesh.read`` also checks meshio's conversion of Gmsh order to VTK order. The Abaqus and VTU
files are written with ``flexbody.fem.mesh.write`` (meshio). ``gmsh_box_h27.msh`` is not made here: it is
the output of Gmsh itself on ``gmsh_box.geo`` (see the README).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import flexbody as fb
from flexbody.fem.elements import HEX8_NODES, reference_hex

fm = fb.mesh

HERE = Path(__file__).resolve().parent

BEAM_SIZE, BEAM_DIVISIONS = (2.0, 0.5, 0.5), (4, 1, 1)
BLOCK_SIZE, BLOCK_DIVISIONS = (1.0, 1.0, 1.0), (2, 2, 2)

#: Gmsh hexahedron nodes as the corners they are the centroid of (Gmsh manual, "Node ordering"):
#: corners 0-7, edges 01 03 04 12 15 23 26 37 45 47 56 67, faces 0123 0145 0347 1256 2367 4567, centre.
GMSH_HEX27_PARENTS = [
    [0],
    [1],
    [2],
    [3],
    [4],
    [5],
    [6],
    [7],
    [0, 1],
    [0, 3],
    [0, 4],
    [1, 2],
    [1, 5],
    [2, 3],
    [2, 6],
    [3, 7],
    [4, 5],
    [4, 7],
    [5, 6],
    [6, 7],
    [0, 1, 2, 3],
    [0, 1, 4, 5],
    [0, 3, 4, 7],
    [1, 2, 5, 6],
    [2, 3, 6, 7],
    [4, 5, 6, 7],
    list(range(8)),
]
GMSH_TYPE = {("hex", 1): 5, ("hex", 2): 12, ("quad", 1): 3, ("quad", 2): 10}


def vtk_to_gmsh_hex(order: int) -> np.ndarray:
    """Permutation p with gmsh_cell = vtk_cell[:, p], from the reference positions of both orders."""
    ref = reference_hex(8 if order == 1 else 27).nodes
    gmsh = np.array([HEX8_NODES[p].mean(axis=0) for p in GMSH_HEX27_PARENTS])[: len(ref)]
    return np.array([int(np.flatnonzero(np.all(ref == g, axis=1))[0]) for g in gmsh])


def write_gmsh41(path: Path, mesh: fm.HexMesh, surfaces: dict[str, str], volume: str) -> None:
    """Write an MSH 4.1 ASCII file: physical surfaces ``{name: face set}`` and one physical volume."""
    names = [*list(surfaces), volume]
    lines = ["$MeshFormat", "4.1 0 8", "$EndMeshFormat", "$PhysicalNames", str(len(names))]
    lines += [f'{2 if k < len(surfaces) else 3} {k + 1} "{n}"' for k, n in enumerate(names)]
    lines += ["$EndPhysicalNames", "$Entities", f"0 0 {len(surfaces)} 1"]
    lo, hi = mesh.points.min(axis=0), mesh.points.max(axis=0)
    entity_of_node = np.zeros(mesh.n_nodes, dtype=int)  # 0: volume, s: surface s
    for s, face_set in enumerate(surfaces.values(), start=1):
        nodes = mesh.face_set_nodes(face_set)
        box = np.r_[mesh.points[nodes].min(axis=0), mesh.points[nodes].max(axis=0)]
        lines.append(f"{s} " + " ".join(f"{v:.16g}" for v in box) + f" 1 {s} 0")
        entity_of_node[nodes[entity_of_node[nodes] == 0]] = s
    bounding = " ".join(str(s) for s in range(1, len(surfaces) + 1))
    lines.append("1 " + " ".join(f"{v:.16g}" for v in np.r_[lo, hi]) + f" 1 {len(names)} {len(surfaces)} {bounding}")
    lines += ["$EndEntities", "$Nodes", f"{len(surfaces) + 1} {mesh.n_nodes} 1 {mesh.n_nodes}"]
    for s in [*list(range(1, len(surfaces) + 1)), 0]:
        nodes = np.flatnonzero(entity_of_node == s)
        lines.append(f"{2 if s else 3} {s if s else 1} 0 {len(nodes)}")
        lines += [str(n + 1) for n in nodes]
        lines += [" ".join(f"{v:.16g}" for v in mesh.points[n]) for n in nodes]
    blocks = [
        (2, s, GMSH_TYPE["quad", mesh.order], fm.face_quads(mesh, mesh.face_set(f)))
        for s, f in enumerate(surfaces.values(), start=1)
    ]
    blocks.append((3, 1, GMSH_TYPE["hex", mesh.order], mesh.cells[:, vtk_to_gmsh_hex(mesh.order)]))
    n_cells = sum(len(b[3]) for b in blocks)
    lines += ["$EndNodes", "$Elements", f"{len(blocks)} {n_cells} 1 {n_cells}"]
    tag = 1
    for dim, entity, gmsh_type, conn in blocks:
        lines.append(f"{dim} {entity} {gmsh_type} {len(conn)}")
        for row in conn:
            lines.append(f"{tag} " + " ".join(str(n + 1) for n in row))
            tag += 1
    lines.append("$EndElements")
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


def beam(order: int) -> fm.HexMesh:
    """2 m x 0.5 m x 0.5 m beam along x, 4 elements."""
    return fm.box(BEAM_SIZE, BEAM_DIVISIONS, order=order)


def block(order: int) -> fm.HexMesh:
    """1 m cube of 2 x 2 x 2 elements with box sets plus element sets "block" (all) and "bottom" (z < 0.5)."""
    mesh = fm.box(BLOCK_SIZE, BLOCK_DIVISIONS, order=order)
    centroid_z = mesh.points[mesh.cells[:, :8], 2].mean(axis=1)
    element_sets = {"block": np.arange(mesh.n_elements), "bottom": np.flatnonzero(centroid_z < 0.5)}
    return fm.HexMesh(mesh.points, mesh.cells, mesh.node_sets, mesh.face_sets, element_sets)


def main(out_dir: Path = HERE) -> None:
    out_dir = Path(out_dir)
    for order, name in ((1, "beam_h8.msh"), (2, "beam_h27.msh")):
        write_gmsh41(out_dir / name, beam(order), {"root": "x0", "tip": "x1"}, volume="beam")
    fm.write(block(1), out_dir / "block.inp")
    fm.write(block(2), out_dir / "block.vtu")


if __name__ == "__main__":
    main()

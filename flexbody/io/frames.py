"""What every series writer shares: the system of a results object, the recorded steps written (every k-th,
or about 100 frames: :func:`frame_stride`) and the PVD collection file that lists one file per time.
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from ..errors import FlexbodyError

SCENE_FILE = "scene.vtp"
"""File name of the static scene in a results directory (:func:`write_scene`)."""


# ----------------------------------------------------------------------------------- helpers
def results_system(results, who: str):
    if not hasattr(results, "system"):
        raise FlexbodyError(
            f"{who}: expected the Results of a run (fb.simulate, fb.solve_static or "
            f"Results.load), got {type(results).__name__}"
        )
    if results.system is None:
        raise FlexbodyError(f"{who}: results carry no system (loaded results need the system re-attached)")
    return results.system


def frame_stride(results, frames: int = 100) -> int:
    """The ``every`` of the series writers that gives at most about ``frames`` frames of ``results``."""
    return max(1, -(-results.n_steps // max(1, int(frames))))


def recorded_steps(results, every, who: str) -> list[int]:
    """Every ``every``-th recorded step and the last."""
    if not (isinstance(every, (int, np.integer)) and every >= 1):
        raise FlexbodyError(f"{who}: every must be a positive integer, got {every!r}")
    if results.n_steps == 0:
        raise FlexbodyError(f"{who}: the results hold no recorded step")
    return [int(s) for s in np.unique(np.r_[np.arange(0, results.n_steps, int(every)), results.n_steps - 1])]


def write_collection(path: Path, entries) -> Path:
    lines = [
        '<?xml version="1.0"?>',
        '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">',
        "  <Collection>",
    ]
    lines += [f'    <DataSet timestep="{t:.10g}" group="" part="0" file={quoteattr(f)}/>' for t, f in entries]
    lines += ["  </Collection>", "</VTKFile>", ""]
    path.write_text("\n".join(lines))
    return path

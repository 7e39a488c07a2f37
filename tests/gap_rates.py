"""The check the contact tests make of a moving contact point's rows: its gap rate n·(J v) from the contact's frame
beside the central difference of its gap along the motion."""

import numpy as np


def gap_rate_and_difference(asm, contact, q: np.ndarray, v: np.ndarray, eps: float) -> tuple[float, float]:
    """(n·(J v) of ``contact`` at the state (q, v) of ``asm``, (g(q + ε v) − g(q − ε v))/(2ε)) [m/s]."""
    frame = contact.frame(asm.workspace(0.0, q, v))
    rate = float((frame.G @ v[frame.cols])[0])
    ahead, behind = (contact.gap(asm.workspace(0.0, q + s * eps * v, v)) for s in (1.0, -1.0))
    return rate, (ahead - behind) / (2 * eps)

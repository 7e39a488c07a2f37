"""The closed form the contact tests compare flexible blocks with: uniaxial compression of a St Venant–Kirchhoff
solid, which 8-node bricks represent exactly."""

from __future__ import annotations


def uniaxial_stretches(young: float, nu: float, pressure: float) -> tuple[float, float]:
    """(a, b): the lateral and axial stretches F = diag(a, a, b) of a St Venant–Kirchhoff block under the nominal
    pressure P [Pa] on its faces normal to z, free sideways: S_xx = 0 and b S_zz = −P (scipy's fsolve to 1e-15)."""
    from scipy.optimize import fsolve

    lame, shear = young * nu / ((1 + nu) * (1 - 2 * nu)), young / (2 * (1 + nu))

    def balance(x):
        a, b = x
        lateral, axial = (a * a - 1) / 2, (b * b - 1) / 2
        trace = 2 * lateral + axial
        return [lame * trace + 2 * shear * lateral, b * (lame * trace + 2 * shear * axial) + pressure]

    a, b = fsolve(balance, [1.0, 1.0], xtol=1e-15)
    return float(a), float(b)

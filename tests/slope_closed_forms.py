"""The closed forms of a solid cylinder lying across a slope of angle θ with friction μ — rolling at ⅔ g sin θ while
tan θ ≤ 3μ, else slipping at g(sin θ − μ cos θ) — and a run's errors against them, which the tests of cylinders on
planes, boxes, meshes and implicit surfaces share."""

import math

import numpy as np

G = 9.81


def slope_errors(run, theta: float, mu: float) -> tuple[float, float]:
    """(the largest error of the centre's speed down the slope against the closed form's a t, relative to a T; the
    largest speed across the slope [m/s]) after the first 10 ms of ``run`` (a free flyer; the slope's normal
    (−sin θ, 0, cos θ))."""
    rolls = math.tan(theta) <= 3 * mu
    a = 2 / 3 * G * math.sin(theta) if rolls else G * (math.sin(theta) - mu * math.cos(theta))
    down = -np.array([math.cos(theta), 0.0, math.sin(theta)])
    normal = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    late = run.times > 0.01
    error = np.abs(run.v[late, :3] @ down - a * run.times[late]).max() / (a * run.times[late].max())
    return float(error), float(np.abs(run.v[late, :3] @ normal).max())

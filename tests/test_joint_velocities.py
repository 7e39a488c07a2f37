"""Tests of the joints' velocity conversions, ``fb.Spherical.velocities`` and ``fb.FreeFlyer.velocities``: from an
angular velocity (and a linear one) in the joint frame's or the link's axes to the rates of the exponential
coordinates a run takes as v.

* The angular velocity is recovered from the rates through the rotation itself (scipy's rotation vector, central
  differences of R(φ + hφ̇)): Ṙ Rᵀ = [ω]× (parent axes), Rᵀ Ṙ = [ω]× (body axes), for rotations from 1e-6 rad to π.
* A floating body's kinetic energy ½ vᵀ M v from the converted v equals ½ m |v_c|² + ½ ω_bᵀ I_c ω_b (closed form);
  its link velocity from flexbody's kinematics is the velocity given.
* A symmetric heavy top started from the angular velocity of steady precession (closed form: m g l = Ω(C ω₃ −
  A Ω cos θ)) keeps its nutation angle and precesses at Ω.
* Bad input is named.
"""

from __future__ import annotations

import numpy as np
import pytest
from heavy_top import THETA, heavy_top, precession_rate
from scipy.spatial.transform import Rotation

import flexbody as fb
from flexbody.errors import ModelError


def recovered_angular_velocity(phi, rates, frame, h=1e-6):
    """ω from Ṙ of R(φ) = scipy's rotation of the rotation vector φ, by central differences along φ̇."""
    R = Rotation.from_rotvec(phi).as_matrix()
    R_dot = (Rotation.from_rotvec(phi + h * rates).as_matrix() - Rotation.from_rotvec(phi - h * rates).as_matrix()) / (
        2 * h
    )
    W = R_dot @ R.T if frame == "parent" else R.T @ R_dot
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


@pytest.mark.parametrize("frame", ["parent", "body"])
def test_the_angular_velocity_is_recovered_through_the_rotation(frame):
    rng = np.random.default_rng(4)
    worst = 0.0
    for angle in (1e-6, 1e-3, 0.3, 1.5, 2.9, np.pi):
        for _ in range(5):
            axis = rng.normal(size=3)
            phi, omega = angle * axis / np.linalg.norm(axis), rng.normal(size=3)
            rates = fb.Spherical.velocities(phi, omega, frame)
            worst = max(worst, float(np.abs(recovered_angular_velocity(phi, rates, frame) - omega).max()))
    assert worst < 1e-8  # the central differences' error (h = 1e-6)


def floating_body():
    tree = fb.RigidTree("float", gravity=(0, 0, 0))
    body = tree.add_link("body", None, fb.FreeFlyer(), mass=2.0, com=(0.1, -0.2, 0.3), inertia=(0.4, 0.7, 0.9))
    return tree, body


def test_a_floating_body_moves_with_the_velocities_given():
    tree, body = floating_body()
    asm = fb.System([tree]).assemble()
    rng = np.random.default_rng(5)
    com, inertia = np.array([0.1, -0.2, 0.3]), np.diag([0.4, 0.7, 0.9])
    for _ in range(5):
        q = fb.FreeFlyer.coordinates(rng.normal(size=3), rotation=Rotation.random(random_state=rng).as_matrix())
        linear, omega = rng.normal(size=3), rng.normal(size=3)
        R = Rotation.from_rotvec(q[3:]).as_matrix()
        for frame in ("parent", "body"):
            v = fb.FreeFlyer.velocities(q, linear, omega, frame)
            kin = tree.kinematics(q, v)
            w_world = kin.vel[body.index, 3:]
            origin_velocity = kin.vel[body.index, :3] + np.cross(w_world, kin.p[body.index])
            to_world = np.eye(3) if frame == "parent" else R
            assert np.abs(w_world - to_world @ omega).max() < 1e-12
            assert np.abs(origin_velocity - to_world @ linear).max() < 1e-12
            w_body = R.T @ w_world
            v_com = origin_velocity + np.cross(w_world, R @ com)
            closed_form = 0.5 * 2.0 * v_com @ v_com + 0.5 * w_body @ inertia @ w_body
            assert asm.energy(q, v)[0] == pytest.approx(closed_form, rel=1e-12)


def test_a_heavy_top_started_in_steady_precession_keeps_its_nutation_angle():
    """Lagrange's top (tests/heavy_top.py) started from the angular velocity of steady precession keeps its tilt θ
    and precesses at Ω."""
    asm, v0 = heavy_top()
    theta, Omega = THETA, precession_rate()
    res = fb.simulate(asm, 0.5, integrator=fb.RK4(dt=2e-4), v0=v0, record_every=50)
    axes = np.array([Rotation.from_rotvec(q).as_matrix()[:, 2] for q in res.q])
    nutation = np.arccos(np.clip(axes[:, 2], -1.0, 1.0))
    azimuth = np.unwrap(np.arctan2(axes[:, 1], axes[:, 0]))
    assert np.abs(nutation - theta).max() < 1e-6
    assert np.abs(azimuth - azimuth[0] - Omega * res.times).max() < 1e-6


def test_bad_input_is_named():
    with pytest.raises(ModelError, match=r"frame must be 'parent'.*or 'body'.*got 'world'"):
        fb.Spherical.velocities(np.zeros(3), np.ones(3), "world")
    with pytest.raises(ModelError, match="angular_velocity must be 3 finite numbers"):
        fb.Spherical.velocities(np.zeros(3), [1.0, np.nan, 0.0])
    with pytest.raises(ModelError, match="q must be 6 finite numbers"):
        fb.FreeFlyer.velocities(np.zeros(3), np.ones(3))
    with pytest.raises(ModelError, match="linear_velocity must be 3 finite numbers"):
        fb.FreeFlyer.velocities(np.zeros(6), np.ones(2))

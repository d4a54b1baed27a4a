"""A cantilever under its own weight against Euler-Bernoulli, w L^4 / (8 E I), under mesh refinement.

Quasi-static: backward Euler (theta = 1) with dt = 100 s makes each step a static solve up to
M / (dt^2 K) ~ 1e-8; three steps settle the co-rotation. The clamp is stiff couplings to the world.
Linear tetrahedra are too stiff in bending (shear locking) and converge from below.
"""
import numpy as np
import pytest

from cond_ros.sim import ModelBuilder, Simulator, particle, world_point
from cond_ros.sim.dynamics.fem import FemMaterial, add_soft_body, box_mesh

LENGTH, SIDE, E, RHO = 0.5, 0.05, 1e8, 1000.0


def tip_deflection(cells):
    builder = ModelBuilder()
    mesh = box_mesh([LENGTH / 2, SIDE / 2, SIDE / 2], cells, center=(LENGTH / 2, 0, 0))
    body = add_soft_body(builder, mesh, FemMaterial(E, 0.0, RHO), contact_radius=0.0)
    for i in np.flatnonzero(mesh.points[:, 0] < 1e-9):
        builder.add_coupling(particle(body.particles[i]), world_point(mesh.points[i]), stiffness=[1e10] * 3)
    sim = Simulator(builder.finalize(integration_theta=1.0), dt=100.0, solver="penalty")
    sim.run(3)
    tip = body.particles[mesh.points[:, 0] > LENGTH - 1e-9]
    return -float(np.mean(sim.state.particle_q[tip, 2]))


@pytest.mark.slow
def test_cantilever_converges_to_euler_bernoulli():
    weight_per_length = RHO * 9.81 * SIDE ** 2
    reference = weight_per_length * LENGTH ** 4 / (8 * E * SIDE ** 4 / 12)  # 3.68 mm: L / 136, small
    ratios = [tip_deflection(cells) / reference for cells in [(20, 4, 4), (40, 8, 8), (80, 8, 8)]]
    # measured: 0.678, 0.897, 0.956
    assert ratios[0] < ratios[1] < ratios[2] <= 1.01
    errors = [1 - r for r in ratios]
    assert errors[1] < 0.5 * errors[0] and errors[2] < 0.6 * errors[1]
    assert abs(ratios[-1] - 1) < 0.05

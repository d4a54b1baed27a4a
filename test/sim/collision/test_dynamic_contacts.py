"""D-contacts against moving volumes: the cheap speed-bound prefilter drops only points that cannot touch."""
import numpy as np
import pytest

from cond_ros.sim import ModelBuilder
from cond_ros.sim.builder import box_inertia
from cond_ros.sim.collision.colliders import collider_signed_distance
from cond_ros.sim.collision.nodalization import SOURCE_PARTICLE, build_contact_set
from cond_ros.sim.dynamics.assembly import build_pattern
from cond_ros.sim.kinematics.rigid import quat_to_matrix
from cond_ros.sim.model import ColliderType

HALF = np.array([0.03, 0.02, 0.01])
MARGIN, DT = 0.002, 0.01


def touching_by_definition(model, state):
    """Particles the exact test accepts: gap < margin + 2 dt max(0, -(v_i - v_surface) . n)."""
    rot, com = quat_to_matrix(state.body_quat[0]), state.body_q[0]
    v, w = state.body_qd[0, :3], state.body_qd[0, 3:]
    normal, out = np.zeros(3), []
    for i, p in enumerate(state.particle_q):
        sd = collider_signed_distance(int(ColliderType.BOX), com, rot, HALF, p, normal)
        surface = p - sd * normal
        rel = state.particle_qd[i] - (v + np.cross(w, surface - com))
        if sd - model.particle_radius[i] < MARGIN + 2 * DT * max(0.0, -float(rel @ normal)):
            out.append(i)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_points_near_a_fast_spinning_box_are_found_exactly_as_the_exact_test_says(seed):
    rng = np.random.default_rng(seed)
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    spin = rng.normal(0.0, 40.0, 3)  # up to ~100 rad/s: corners move ~3 m/s, far beyond the margin / dt
    body = b.add_body([0.0, 0.0, 0.0], mass=0.2, inertia=box_inertia(0.2, HALF), velocity=rng.normal(0, 0.5, 3),
                      angular_velocity=spin)
    b.add_shape_box(body, HALF, mu=0.3)
    for _ in range(400):
        b.add_particle(rng.uniform(-0.06, 0.06, 3), mass=0.01, radius=1e-3, velocity=rng.normal(0.0, 0.3, 3), mu=0.3)
    model = b.finalize(contact_margin=MARGIN)
    state = model.state()
    contacts = build_contact_set(model, build_pattern(model), state, DT)
    found = sorted(contacts.source_index[(contacts.collider < 0) & (contacts.source_kind == SOURCE_PARTICLE)])
    expected = touching_by_definition(model, state)
    assert len(expected) > 20
    assert found == expected

"""Tests of ``ModelBuilder``, input validation and ``Model`` layout.

Bad inputs must raise :class:`cond_ros.sim.ModelError` whose message names the
offending field, at the call that introduced them; ``finalize()`` must give
arrays of the shapes and dtypes documented in ``model.Model``.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cond_ros import sim
from cond_ros.sim import ModelError

NAN = float("nan")
VALUE_RTOL = 1e-12  # values stored by finalize() vs the values passed in


def one_particle():
    bld = sim.ModelBuilder()
    bld.add_particle((0.0, 0.0, 1.0), mass=1.0)
    return bld


def one_body():
    bld = sim.ModelBuilder()
    bld.add_body((0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3))
    return bld


def rich_builder():
    """Two particles, two bodies, contact points, both potential types and every collider type."""
    bld = sim.ModelBuilder(gravity=(0.1, 0.2, -9.0))
    bld.add_particle((0.0, 0.0, 1.0), mass=1.0, radius=0.01, velocity=(1.0, 0.0, 0.0), mu=0.3)
    bld.add_particle((0.5, 0.0, 1.0), mass=2.0, mu=(0.2, 0.4))
    bld.add_body((1.0, 0.0, 1.0), mass=3.0, inertia=np.diag([0.1, 0.2, 0.3]), quat=(2.0, 0.0, 0.0, 0.0),
                 velocity=(0.0, 1.0, 0.0), angular_velocity=(0.0, 0.0, 2.0))
    bld.add_body((2.0, 0.0, 1.0), mass=1.5, inertia=sim.sphere_inertia(1.5, 0.1))
    bld.add_shape_box(0, (0.1, 0.2, 0.3), mu=0.5)
    bld.add_shape_sphere(1, 0.1, mu=(0.1, 0.2))
    bld.add_spring(sim.particle(0), sim.particle(1), stiffness=100.0)
    bld.add_spring(sim.particle(1), sim.body_point(0, (0.1, 0.0, 0.0)), stiffness=50.0, rest_length=0.3, damping=1.0)
    bld.add_coupling(sim.body_point(1), sim.world_point((2.0, 0.0, 2.0)), stiffness=1e4)
    bld.add_collider_plane(normal=(0.0, 0.0, 2.0), mu=0.6)
    bld.add_collider_box((0.0, 3.0, 0.0), (0.5, 0.5, 0.5), mu=0.2)
    bld.add_collider_sphere((0.0, -3.0, 0.0), 0.5)
    bld.add_collider_capsule((3.0, 0.0, 0.0), 0.2, 0.5)
    bld.add_collider_cylinder((-3.0, 0.0, 0.0), 0.3, 0.4, rot=Rotation.from_rotvec([0.1, 0.2, 0.3]).as_matrix())
    return bld


# ---------------------------------------------------------------------------
# Bad inputs: each case is (description, callable, regex that the message must match)
# ---------------------------------------------------------------------------
REFLECTION = np.diag([1.0, 1.0, -1.0])
SCALED = 2.0 * np.eye(3)
NOT_SYMMETRIC = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
INDEFINITE = np.diag([1.0, -0.1, 1.0])
SINGULAR = np.diag([1.0, 0.0, 1.0])

BAD_BUILDER_CALLS = [
    ("zero particle mass", lambda: sim.ModelBuilder().add_particle((0, 0, 0), mass=0.0), r"particle\[0\]\.mass"),
    ("negative particle mass", lambda: sim.ModelBuilder().add_particle((0, 0, 0), mass=-1.0), r"particle\[0\]\.mass"),
    ("NaN particle mass", lambda: sim.ModelBuilder().add_particle((0, 0, 0), mass=NAN), r"particle\[0\]\.mass"),
    ("zero body mass", lambda: sim.ModelBuilder().add_body((0, 0, 0), mass=0.0, inertia=np.eye(3)),
     r"body\[0\]\.mass"),
    ("negative body mass", lambda: sim.ModelBuilder().add_body((0, 0, 0), mass=-2.0, inertia=np.eye(3)),
     r"body\[0\]\.mass"),
    ("NaN particle position", lambda: sim.ModelBuilder().add_particle((0, NAN, 0), mass=1.0), r"particle\[0\]\.pos"),
    ("inf particle position", lambda: sim.ModelBuilder().add_particle((np.inf, 0, 0), mass=1.0),
     r"particle\[0\]\.pos"),
    ("wrong-shape particle position", lambda: sim.ModelBuilder().add_particle((0, 0), mass=1.0),
     r"particle\[0\]\.pos"),
    ("NaN particle velocity", lambda: sim.ModelBuilder().add_particle((0, 0, 0), mass=1.0, velocity=(NAN, 0, 0)),
     r"particle\[0\]\.velocity"),
    ("NaN body position", lambda: sim.ModelBuilder().add_body((NAN, 0, 0), mass=1.0, inertia=np.eye(3)),
     r"body\[0\]\.pos"),
    ("NaN body angular velocity",
     lambda: sim.ModelBuilder().add_body((0, 0, 0), mass=1.0, inertia=np.eye(3), angular_velocity=(0, NAN, 0)),
     r"body\[0\]\.angular_velocity"),
    ("zero quaternion", lambda: sim.ModelBuilder().add_body((0, 0, 0), mass=1.0, inertia=np.eye(3), quat=(0, 0, 0, 0)),
     r"body\[0\]\.quat"),
    ("non-symmetric inertia", lambda: sim.ModelBuilder().add_body((0, 0, 0), mass=1.0, inertia=NOT_SYMMETRIC),
     r"body\[0\]\.inertia"),
    ("indefinite inertia", lambda: sim.ModelBuilder().add_body((0, 0, 0), mass=1.0, inertia=INDEFINITE),
     r"body\[0\]\.inertia"),
    ("singular inertia", lambda: sim.ModelBuilder().add_body((0, 0, 0), mass=1.0, inertia=SINGULAR),
     r"body\[0\]\.inertia"),
    ("NaN inertia", lambda: sim.ModelBuilder().add_body((0, 0, 0), mass=1.0, inertia=np.full((3, 3), NAN)),
     r"body\[0\]\.inertia"),
    ("negative particle mu", lambda: sim.ModelBuilder().add_particle((0, 0, 0), mass=1.0, mu=-0.1),
     r"particle\[0\]\.mu"),
    ("negative anisotropic mu", lambda: sim.ModelBuilder().add_particle((0, 0, 0), mass=1.0, mu=(0.3, -0.1)),
     r"particle\[0\]\.mu"),
    ("NaN particle mu", lambda: sim.ModelBuilder().add_particle((0, 0, 0), mass=1.0, mu=NAN), r"particle\[0\]\.mu"),
    ("three-component mu", lambda: sim.ModelBuilder().add_particle((0, 0, 0), mass=1.0, mu=(0.1, 0.2, 0.3)),
     r"particle\[0\]\.mu"),
    ("negative contact point mu", lambda: one_body().add_contact_point(0, (0, 0, 0), mu=-1.0),
     r"contact_point\[0\]\.mu"),
    ("NaN contact point mu", lambda: one_body().add_contact_point(0, (0, 0, 0), mu=NAN), r"contact_point\[0\]\.mu"),
    ("negative collider mu", lambda: sim.ModelBuilder().add_collider_plane(mu=-0.5), r"collider\[0\]\.mu"),
    ("NaN collider mu", lambda: sim.ModelBuilder().add_collider_sphere((0, 0, 0), 1.0, mu=NAN), r"collider\[0\]\.mu"),
    ("negative contact radius", lambda: one_body().add_contact_point(0, (0, 0, 0), radius=-0.1),
     r"contact_point\[0\]\.radius"),
    ("negative spring stiffness",
     lambda: one_particle().add_spring(sim.particle(0), sim.world_point((0, 0, 0)), stiffness=-1.0),
     r"potential\[0\]\.stiffness"),
    ("NaN coupling stiffness",
     lambda: one_particle().add_coupling(sim.particle(0), sim.world_point((0, 0, 0)), stiffness=NAN),
     r"potential\[0\]\.stiffness"),
    ("negative rest length",
     lambda: one_particle().add_spring(sim.particle(0), sim.world_point((0, 0, 0)), stiffness=1.0, rest_length=-1.0),
     r"potential\[0\]\.rest_length"),
    ("negative damping",
     lambda: one_particle().add_spring(sim.particle(0), sim.world_point((0, 0, 0)), stiffness=1.0, damping=-1.0),
     r"potential\[0\]\.damping"),
    ("unknown body in add_contact_point", lambda: one_body().add_contact_point(1, (0, 0, 0)),
     r"add_contact_point\.body.*1"),
    ("negative body in add_contact_point", lambda: one_body().add_contact_point(-1, (0, 0, 0)),
     r"add_contact_point\.body"),
    ("unknown body in body_point anchor",
     lambda: one_body().add_coupling(sim.body_point(0), sim.body_point(3), stiffness=1.0), r"potential\[0\]\.b.*3"),
    ("unknown body in spring with rest length",
     lambda: one_body().add_spring(sim.body_point(3), sim.body_point(0), stiffness=1.0, rest_length=0.1),
     r"potential\[0\]\.a.*3"),
    ("unknown particle anchor",
     lambda: one_particle().add_coupling(sim.particle(2), sim.particle(0), stiffness=1.0), r"potential\[0\]\.a.*2"),
    ("NaN body_point local", lambda: sim.body_point(0, (NAN, 0, 0)), r"body_point\.local"),
    ("NaN world_point", lambda: sim.world_point((0, 0, NAN)), r"world_point"),
    ("not an anchor", lambda: one_particle().add_coupling(0, sim.particle(0), stiffness=1.0), r"potential\[0\]\.a"),
    ("world-to-world spring",
     lambda: sim.ModelBuilder().add_spring(sim.world_point((0, 0, 0)), sim.world_point((1, 0, 0)), stiffness=1.0),
     r"potential\[0\].*world"),
    ("world-to-world coupling",
     lambda: sim.ModelBuilder().add_coupling(sim.world_point((0, 0, 0)), sim.world_point((1, 0, 0)), stiffness=1.0),
     r"potential\[0\].*world"),
    ("reflection as collider rotation",
     lambda: sim.ModelBuilder().add_collider_box((0, 0, 0), (1, 1, 1), rot=REFLECTION),
     r"collider\[0\]\.rot"),
    ("scaled collider rotation", lambda: sim.ModelBuilder().add_collider_capsule((0, 0, 0), 0.1, 0.2, rot=SCALED),
     r"collider\[0\]\.rot"),
    ("plane rot not a rotation", lambda: sim.ModelBuilder().add_collider_plane(rot=REFLECTION), r"collider\[0\]\.rot"),
    ("zero plane normal", lambda: sim.ModelBuilder().add_collider_plane(normal=(0, 0, 0)), r"plane\.normal"),
    ("zero box half extent", lambda: sim.ModelBuilder().add_collider_box((0, 0, 0), (1, 0, 1)),
     r"box\.half_extents"),
    ("negative sphere radius", lambda: sim.ModelBuilder().add_collider_sphere((0, 0, 0), -1.0), r"sphere\.radius"),
    ("zero shape-box half extent", lambda: one_body().add_shape_box(0, (0.1, 0.0, 0.1)),
     r"add_shape_box\.half_extents"),
    ("NaN gravity", lambda: sim.ModelBuilder(gravity=(0, 0, NAN)), r"gravity"),
    ("restitution above one", lambda: sim.ModelBuilder().finalize(restitution=1.5), r"restitution"),
    ("negative restitution", lambda: sim.ModelBuilder().finalize(restitution=-0.1), r"restitution"),
    ("zero penetration recovery", lambda: sim.ModelBuilder().finalize(penetration_recovery=0.0),
     r"penetration_recovery"),
    ("penetration recovery above one", lambda: sim.ModelBuilder().finalize(penetration_recovery=1.5),
     r"penetration_recovery"),
    ("zero virtual node gain", lambda: sim.ModelBuilder().finalize(virtual_node_gain=0.0), r"virtual_node_gain"),
    ("negative contact margin", lambda: sim.ModelBuilder().finalize(contact_margin=-1e-3), r"contact_margin"),
    ("unknown damping policy", lambda: sim.ModelBuilder().finalize(damping_policy=7), r"damping_policy"),
]


@pytest.mark.parametrize("call,pattern", [c[1:] for c in BAD_BUILDER_CALLS], ids=[c[0] for c in BAD_BUILDER_CALLS])
def test_bad_builder_input_raises_model_error_naming_field(call, pattern):
    """An invalid builder argument raises ModelError (a ValueError) whose message names the field."""
    with pytest.raises(ModelError, match=pattern) as info:
        call()
    assert isinstance(info.value, ValueError)


SPRING_DEFAULT_REST_BAD_ANCHORS = [
    ("unknown body", lambda: sim.body_point(3), r"potential\[0\]\.a.*no body 3"),
    ("unknown particle", lambda: sim.particle(5), r"potential\[0\]\.a.*no particle 5"),
    ("not an anchor", lambda: 0, r"potential\[0\]\.a"),
]


@pytest.mark.parametrize("anchor,pattern", [c[1:] for c in SPRING_DEFAULT_REST_BAD_ANCHORS],
                         ids=[c[0] for c in SPRING_DEFAULT_REST_BAD_ANCHORS])
def test_spring_default_rest_length_validates_anchor_first(anchor, pattern):
    """add_spring without rest_length and a bad anchor raises ModelError naming the end, like add_coupling."""
    bld = one_particle()
    bld.add_body((1.0, 0.0, 0.0), mass=1.0, inertia=np.eye(3))
    with pytest.raises(ModelError, match=pattern):
        bld.add_spring(anchor(), sim.world_point((0.0, 0.0, 0.0)), stiffness=1.0)


def test_rejected_add_leaves_builder_unchanged():
    """A rejected add_* call adds nothing: the next finalize() has the earlier items only."""
    bld = one_particle()
    with pytest.raises(ModelError):
        bld.add_particle((0, 0, 0), mass=1.0, mu=-1.0)
    with pytest.raises(ModelError):
        bld.add_coupling(sim.particle(0), sim.world_point((0, 0, 0)), stiffness=-1.0)
    with pytest.raises(ModelError):
        bld.add_collider_plane(mu=NAN)
    model = bld.finalize()
    assert model.particle_count == 1
    assert model.potential_count == 0
    assert model.collider_count == 0


@pytest.mark.parametrize("dt", [0.0, -0.01, NAN, np.inf])
def test_simulator_rejects_bad_dt(dt):
    """Simulator(dt <= 0 or non-finite) raises ModelError naming dt."""
    with pytest.raises(ModelError, match=r"\bdt\b"):
        sim.Simulator(one_particle().finalize(), dt=dt)


def test_simulator_rejects_unknown_solver():
    """An unknown solver name raises ModelError naming the solver field and the bad name."""
    with pytest.raises(ModelError, match=r"solver.*no_such_solver"):
        sim.Simulator(one_particle().finalize(), dt=0.01, solver="no_such_solver")


@pytest.mark.parametrize("field,index", [("particle_force", (0, 1)), ("body_wrench", (0, 4))])
@pytest.mark.parametrize("bad", [NAN, np.inf])
def test_step_rejects_non_finite_control_and_keeps_state(field, index, bad):
    """A NaN/inf in Control passed to step() raises ModelError naming the field; the state is unchanged."""
    bld = one_particle()
    bld.add_body((1.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3), velocity=(0.0, 1.0, 0.0))
    simulator = sim.Simulator(bld.finalize(), dt=0.01, solver="penalty")
    simulator.step()
    before = simulator.state
    snapshot = before.copy()
    control = simulator.model.control()
    getattr(control, field)[index] = bad
    with pytest.raises(ModelError, match=rf"control\.{field}"):
        simulator.step(control)
    assert simulator.state is before
    assert simulator.state.time == snapshot.time
    for name in ("particle_q", "particle_qd", "body_q", "body_quat", "body_qd"):
        np.testing.assert_array_equal(getattr(simulator.state, name), getattr(snapshot, name))
    simulator.step()  # still usable afterwards
    assert simulator.state.time > snapshot.time


def test_step_rejects_wrong_shape_control():
    """A Control of the wrong shape raises ModelError naming the field."""
    simulator = sim.Simulator(one_particle().finalize(), dt=0.01, solver="penalty")
    control = sim.Control(particle_force=np.zeros((2, 3)), body_wrench=np.zeros((0, 6)))
    with pytest.raises(ModelError, match=r"control\.particle_force"):
        simulator.step(control)


def test_run_rejects_bad_step_count():
    """Simulator.run with a negative or fractional step count raises ModelError naming steps."""
    simulator = sim.Simulator(one_particle().finalize(), dt=0.01, solver="penalty")
    for steps in (-1, 2.5):
        with pytest.raises(ModelError, match="steps"):
            simulator.run(steps)
    assert simulator.state.time == 0.0


# ---------------------------------------------------------------------------
# finalize(): shapes, dtypes, values
# ---------------------------------------------------------------------------
def expected_layout(P, B, C, U, G):
    """Documented shape (and dtype kind) of every array field of Model for the given counts."""
    f, i = np.float64, np.int64
    return {
        "gravity": ((3,), f),
        "particle_q": ((P, 3), f), "particle_qd": ((P, 3), f), "particle_mass": ((P,), f),
        "particle_radius": ((P,), f), "particle_mu": ((P, 2), f),
        "body_q": ((B, 3), f), "body_quat": ((B, 4), f), "body_qd": ((B, 6), f), "body_mass": ((B,), f),
        "body_inertia": ((B, 3, 3), f),
        "contact_point_body": ((C,), i), "contact_point_local": ((C, 3), f), "contact_point_radius": ((C,), f),
        "contact_point_mu": ((C, 2), f), "contact_point_node": ((C,), np.bool_),
        "contact_point_chain": ((C,), i), "contact_point_arc": ((C,), f),
        "potential_type": ((U,), i), "potential_kind": ((U, 2), i), "potential_index": ((U, 2), i),
        "potential_local": ((U, 2, 3), f), "potential_stiffness": ((U, 3), f), "potential_rest_length": ((U,), f),
        "potential_damping": ((U, 3), f), "potential_link": ((U, 2), i), "potential_rest_rotation": ((U, 3, 3), f),
        "collider_type": ((G,), i), "collider_pos": ((G, 3), f), "collider_rot": ((G, 3, 3), f),
        "collider_size": ((G, 3), f), "collider_mu": ((G, 2), f),
    }


def check_layout(model, P, B, C, U, G):
    assert (model.particle_count, model.body_count, model.contact_point_count, model.potential_count,
            model.collider_count) == (P, B, C, U, G)
    for name, (shape, dtype) in expected_layout(P, B, C, U, G).items():
        arr = getattr(model, name)
        assert isinstance(arr, np.ndarray), name
        assert arr.shape == shape, f"{name}: {arr.shape} != {shape}"
        assert arr.dtype == dtype, f"{name}: {arr.dtype} != {dtype}"
        assert arr.flags.c_contiguous, name
    assert isinstance(model.damping_policy, int)
    for name in ("virtual_node_gain", "contact_margin", "restitution", "penetration_recovery"):
        assert isinstance(getattr(model, name), float), name
    assert model.dof_count == 3 * P + 6 * B
    assert model.body_dof_start == 3 * P


def test_finalize_empty_scene_layout():
    """The empty scene finalizes to zero-length arrays of the documented trailing shapes and dtypes."""
    model = sim.ModelBuilder().finalize()
    check_layout(model, 0, 0, 0, 0, 0)
    np.testing.assert_array_equal(model.gravity, [0.0, 0.0, -9.81])
    state = model.state()
    assert state.velocity().shape == (0,)
    control = model.control()
    assert control.particle_force.shape == (0, 3) and control.body_wrench.shape == (0, 6)


def test_finalize_rich_scene_layout_and_values():
    """A scene with every item kind finalizes to the documented shapes/dtypes holding the given values."""
    model = rich_builder().finalize(virtual_node_gain=2e4, contact_margin=0.01, restitution=0.3,
                                    penetration_recovery=0.7, damping_policy=sim.DampingPolicy.GEOMETRIC)
    check_layout(model, 2, 2, 9, 3, 5)
    close = dict(rtol=VALUE_RTOL, atol=0.0)
    np.testing.assert_allclose(model.gravity, [0.1, 0.2, -9.0], **close)
    np.testing.assert_allclose(model.particle_mu, [[0.3, 0.3], [0.2, 0.4]], **close)
    np.testing.assert_allclose(model.particle_mass, [1.0, 2.0], **close)
    np.testing.assert_allclose(model.body_quat[0], [1.0, 0.0, 0.0, 0.0], **close)  # normalised
    np.testing.assert_allclose(model.body_qd[0], [0.0, 1.0, 0.0, 0.0, 0.0, 2.0], **close)
    np.testing.assert_allclose(model.body_inertia[1], 0.4 * 1.5 * 0.01 * np.eye(3), **close)
    # box corners: all sign combinations of the half extents
    corners = model.contact_point_local[:8]
    assert sorted(map(tuple, np.abs(corners))) == [(0.1, 0.2, 0.3)] * 8
    assert len({tuple(np.sign(c)) for c in corners}) == 8
    np.testing.assert_array_equal(model.contact_point_body, [0] * 8 + [1])
    np.testing.assert_allclose(model.contact_point_radius, [0.0] * 8 + [0.1], **close)
    np.testing.assert_allclose(model.contact_point_mu[8], [0.1, 0.2], **close)
    # potentials: types, end kinds and indices, default rest length = current distance
    np.testing.assert_array_equal(model.potential_type, [sim.PotentialType.DISTANCE, sim.PotentialType.DISTANCE,
                                                         sim.PotentialType.COUPLING])
    P, B, W = sim.PointKind.PARTICLE, sim.PointKind.BODY, sim.PointKind.WORLD
    np.testing.assert_array_equal(model.potential_kind, [[P, P], [P, B], [B, W]])
    np.testing.assert_array_equal(model.potential_index, [[0, 1], [1, 0], [1, -1]])
    np.testing.assert_allclose(model.potential_rest_length, [0.5, 0.3, 0.0], **close)
    np.testing.assert_allclose(model.potential_local[2, 1], [2.0, 0.0, 2.0], **close)
    np.testing.assert_allclose(model.potential_local[1, 1], [0.1, 0.0, 0.0], **close)
    # colliders: rotations are rotations, the plane's local z is its (normalised) normal
    for rot in model.collider_rot:
        np.testing.assert_allclose(rot @ rot.T, np.eye(3), rtol=0, atol=1e-12)
        assert np.linalg.det(rot) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(model.collider_rot[0][:, 2], [0.0, 0.0, 1.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.collider_size[1], [0.5, 0.5, 0.5], **close)
    assert model.damping_policy == int(sim.DampingPolicy.GEOMETRIC)
    assert (model.virtual_node_gain, model.contact_margin, model.restitution, model.penetration_recovery) == (
        2e4, 0.01, 0.3, 0.7)


def test_default_rest_length_uses_rotated_body_point():
    """add_spring's default rest length is the current distance, the body point rotated by the body's quaternion."""
    bld = sim.ModelBuilder()
    rot = Rotation.from_rotvec([0.0, 0.0, np.pi / 2])  # local x -> world y
    x, y, z, w = rot.as_quat()
    bld.add_body((1.0, 2.0, 3.0), mass=1.0, inertia=np.eye(3), quat=(w, x, y, z))
    bld.add_spring(sim.body_point(0, (0.5, 0.0, 0.0)), sim.world_point((1.0, 0.0, 3.0)), stiffness=1.0)
    model = bld.finalize()
    # body point at (1, 2.5, 3); distance to (1, 0, 3) is 2.5
    assert model.potential_rest_length[0] == pytest.approx(2.5, rel=VALUE_RTOL)


def test_finalize_arrays_are_independent_of_builder():
    """Changing the builder after finalize() does not change an earlier Model, and state() copies."""
    bld = one_particle()
    model = bld.finalize()
    bld.add_particle((1.0, 1.0, 1.0), mass=1.0)
    assert model.particle_count == 1 and model.particle_q.shape == (1, 3)
    state = model.state()
    state.particle_q[0, 0] = 42.0
    assert model.particle_q[0, 0] == 0.0


def test_inertia_helpers_match_textbook_formulas():
    """box_inertia / sphere_inertia equal the solid-box and solid-sphere formulas."""
    m, (a, b, c) = 2.0, (0.1, 0.2, 0.3)  # half extents
    w, h, d = 2 * a, 2 * b, 2 * c
    np.testing.assert_allclose(sim.box_inertia(m, (a, b, c)),
                               np.diag([m * (h * h + d * d) / 12, m * (w * w + d * d) / 12, m * (w * w + h * h) / 12]),
                               rtol=VALUE_RTOL)
    np.testing.assert_allclose(sim.sphere_inertia(m, 0.5), 2.0 / 5.0 * m * 0.25 * np.eye(3), rtol=VALUE_RTOL)

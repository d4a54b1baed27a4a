"""Grasping through D-contacts: a box held between two effort-driven fingers, against the friction bound.

Two fingers squeeze a 0.5 kg box with force F each; the box hangs on friction alone, which holds
iff 2 mu F >= m g (Coulomb, both faces sliding together). The test checks both sides of the bound.
"""
import numpy as np
import pytest

from cond_ros import sim
from cond_ros.sim.kinematics.articulation import Articulation
from cond_ros.sim.model import GeometryType

BOX_HALF = 0.03
BOX_MASS = 0.5
GRIP_FORCE = 10.0  # [N] per finger
FINGER_HALF = np.array([0.01, 0.005, 0.02])  # pad half extents (x, y: closing direction, z)


def gripper() -> Articulation:
    """Fixed palm with two prismatic fingers closing along -y / +y; finger pads are boxes."""
    links = 3
    origin = np.tile(np.eye(4), (links, 1, 1))
    origin[1][1, 3] = BOX_HALF + FINGER_HALF[1] + 0.002  # left finger starts 2 mm off the box
    origin[2][1, 3] = -(BOX_HALF + FINGER_HALF[1] + 0.002)
    axis = np.array([[0, 0, 1.0], [0, -1.0, 0], [0, 1.0, 0]])  # q > 0 closes
    inertia = np.zeros((links, 3, 3))
    inertia[1:] = 1e-5 * np.eye(3)
    geom_origin = np.tile(np.eye(4), (2, 1, 1))
    return Articulation(
        name="gripper", link_name=["palm", "left", "right"], link_parent=np.array([-1, 0, 0]),
        joint_name=["", "left", "right"], joint_type=np.array([0, 3, 3]), joint_origin=origin, joint_axis=axis,
        joint_dof=np.array([-1, 0, 1]), joint_multiplier=np.ones(links), joint_offset=np.zeros(links),
        link_mass=np.array([0.0, 0.05, 0.05]), link_com=np.zeros((links, 3)), link_inertia=inertia, dof_count=2,
        dof_name=["left", "right"], dof_lower=np.full(2, -0.01), dof_upper=np.full(2, 0.02),
        dof_velocity_limit=np.full(2, np.inf), dof_effort_limit=np.full(2, np.inf), dof_damping=np.zeros(2),
        dof_friction=np.zeros(2), base_transform=np.eye(4), geom_link=np.array([1, 2]),
        geom_type=np.full(2, int(GeometryType.BOX)), geom_origin=geom_origin, geom_size=np.tile(FINGER_HALF, (2, 1)))


def hold(mu, seconds=0.5):
    builder = sim.ModelBuilder()
    builder.add_articulation(gripper(), q=[0.0, 0.0], mu=mu)
    box = builder.add_body((0, 0, 0), mass=BOX_MASS, inertia=sim.box_inertia(BOX_MASS, (BOX_HALF,) * 3))
    builder.add_shape_box(box, (BOX_HALF,) * 3, mu=mu)
    model = builder.finalize(virtual_node_gain=1e4)
    simulator = sim.Simulator(model, dt=0.01, solver_options=dict(tolerance=1e-9, max_iterations=5000))
    control = model.control()
    control.robot_effort[:] = GRIP_FORCE
    # the finger gravity would pull the fingers along z otherwise: the joints are along y only
    for _ in range(int(seconds / 0.01)):
        simulator.step(control)
    return simulator


def test_grasp_holds_above_the_friction_bound():
    """mu = 0.5: 2 mu F = 10 N > m g = 4.9 N, the box stays put (slip < 1 mm in 0.5 s)."""
    simulator = hold(0.5)
    assert abs(simulator.state.body_q[0, 2]) < 1e-3
    assert abs(simulator.state.body_qd[0, 2]) < 1e-2


def test_grasp_slips_below_the_friction_bound():
    """mu = 0.05: 2 mu F = 1 N < m g = 4.9 N; the box slides down with a = g - 2 mu F / m (within 5 %),
    measured over 0.1 s while it is still between the pads (it drops ~4 cm of its 6 cm)."""
    seconds = 0.1
    simulator = hold(0.05, seconds)
    accel = 9.81 - 2 * 0.05 * GRIP_FORCE / BOX_MASS
    drop = -simulator.state.body_q[0, 2]
    assert (simulator.contacts.dof_b >= 0).sum() >= 2  # still squeezed
    assert drop == pytest.approx(0.5 * accel * seconds ** 2, rel=0.05)


def test_a_particle_squeezed_by_two_fingers_keeps_one_warm_start_key_per_finger():
    """Both finger contacts of one particle have the same source point and no collider; their keys must
    still differ (they name the other side's owner and link), or the force warm start gives both
    fingers the force of one."""
    from cond_ros.sim.collision.nodalization import contact_keys

    builder = sim.ModelBuilder()
    builder.add_articulation(gripper(), q=[0.0, 0.0], mu=0.5)
    builder.add_particle((0, 0, 0), mass=BOX_MASS, radius=BOX_HALF, mu=0.5)
    model = builder.finalize(virtual_node_gain=1e4)
    simulator = sim.Simulator(model, dt=0.01)
    control = model.control()
    control.robot_effort[:] = GRIP_FORCE
    simulator.step(control)
    contacts = simulator.contacts
    fingers = contacts.dof_b >= model.dof_count
    assert fingers.sum() == 2 and np.all(contacts.source_index[fingers] == 0)
    assert len(set(contact_keys(contacts)[fingers].tolist())) == 2

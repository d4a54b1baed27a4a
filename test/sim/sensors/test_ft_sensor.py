"""The simulated wrist F/T sensor on the Panda: statics against weights read from the URDF file."""
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from cond_ros.sim import ModelBuilder, ModelError, Simulator
from cond_ros.sim.builder import robot_link_point
from cond_ros.sim.dynamics.rod import RodMaterial, add_rod, clamp_rod_end
from cond_ros.sim.kinematics.articulation import ArticulationKinematics
from cond_ros.sim.kinematics.urdf import load_urdf
from cond_ros.sim.model import DampingPolicy
from cond_ros.sim.sensors import FTSensorSpec, SimulatedFTSensor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
URDF = os.path.join(ROOT, "urdf", "panda.urdf")
Q_DOWN = [0.0, -0.3831, 0.0, -1.7152, 0.0, 1.3321, 0.7854, 0.0021]  # tool pointing down, fingers on a 4 mm cable
GAINS = dict(drive_stiffness=[3000] * 4 + [1000] * 3 + [500], drive_damping=[100] * 4 + [30] * 3 + [20])


def urdf_mass(*links):
    """Sum of <mass> of the named links, read straight from the URDF XML."""
    root = ET.parse(URDF).getroot()
    total = 0.0
    for link in root.iter("link"):
        if link.get("name") in links:
            mass = link.find("inertial/mass")
            total += float(mass.get("value")) if mass is not None else 0.0
    return total


def wrist_sensor(model, **kwargs):
    spec = FTSensorSpec(name="wrist", parent_link="ft_sensor_link", child_link="panda_hand", frame="parent",
                        measure_direction="child_to_parent", **kwargs)
    return SimulatedFTSensor(model, spec, 0)


def settle(sim, sensors, steps):
    control = sim.model.control()
    for _ in range(steps):
        sim.step(control)
        for sensor in sensors:
            sensor.update(sim.state.time, sim.previous_state, sim.state, sim.contacts, sim.dt)


def build(cable_length=0.0, segments=20):
    b = ModelBuilder()
    art = load_urdf(URDF)
    b.add_articulation(art, q=Q_DOWN, **GAINS)
    rod = None
    if cable_length > 0.0:
        kin = ArticulationKinematics(art)
        kin.update(Q_DOWN)
        tcp = kin.link_pose[art.link_index("panda_tcp")][:3, 3]
        mat = RodMaterial(radius=0.002, density=1259.0, youngs_modulus=2.954e6, poisson_ratio=0.49, damping_time=0.01)
        rod = add_rod(b, tcp - np.array([0.0, 0.0, cable_length]), tcp, segments, mat, contact_skip_end=cable_length)
        clamp_rod_end(b, rod, "end", robot_link_point(0, "panda_tcp"))
    return b.finalize(damping_policy=DampingPolicy.GEOMETRIC), rod


def test_sensor_reads_the_hand_weight_at_rest():
    model, _ = build()
    sim = Simulator(model, dt=0.01, solver_options=dict(tolerance=1e-10, max_iterations=500))
    sensor = wrist_sensor(model)
    settle(sim, [sensor], 200)
    reading, wrench = sensor.last
    weight = urdf_mass("panda_hand", "panda_leftfinger", "panda_rightfinger") * 9.81
    # the tool side pulls the sensor down with its weight; expressed in the sensor frame, then in the world
    sensor_rot = wrench.parent_pose[:3, :3]
    force_world = sensor_rot @ reading.true_wrench[:3]
    np.testing.assert_allclose(force_world, [0.0, 0.0, -weight], atol=5e-3 * weight)


@pytest.mark.parametrize("solver, options", [("cond", dict(tolerance=1e-10, max_iterations=3000)),
                                             ("primal_newton", dict(tolerance=1e-10))], ids=["cond", "primal_newton"])
def test_sensor_reads_hand_plus_hanging_cable_within_half_a_percent(solver, options):
    length = 0.2
    model, rod = build(cable_length=length)
    sim = Simulator(model, dt=0.01, solver=solver, solver_options=options)
    sensor = wrist_sensor(model)
    settle(sim, [sensor], 300)
    reading, wrench = sensor.last
    cable = 1259.0 * np.pi * 0.002 ** 2 * length
    weight = (urdf_mass("panda_hand", "panda_leftfinger", "panda_rightfinger") + cable) * 9.81
    force_world = wrench.parent_pose[:3, :3] @ reading.true_wrench[:3]
    assert force_world[2] == pytest.approx(-weight, rel=5e-3)
    assert np.hypot(force_world[0], force_world[1]) < 5e-3 * weight
    # the force the cable exerts on the tool is its weight
    np.testing.assert_allclose(wrench.external_force, [0.0, 0.0, -cable * 9.81], atol=5e-3 * cable * 9.81 + 1e-4)


def test_noise_free_value_beside_the_noisy_one():
    model, _ = build()
    sim = Simulator(model, dt=0.01)
    sensor = wrist_sensor(model, noise_std=[0.1] * 3 + [0.01] * 3, seed=3)
    settle(sim, [sensor], 20)
    reading, _ = sensor.last
    assert not np.allclose(reading.wrench, reading.true_wrench)
    assert np.abs(reading.wrench - reading.true_wrench).max() < 1.0


def test_wrong_parent_link_is_named():
    model, _ = build()
    spec = FTSensorSpec(name="wrist", parent_link="panda_link7", child_link="panda_hand")
    with pytest.raises(ModelError, match="ft_sensor_link"):
        SimulatedFTSensor(model, spec, 0)

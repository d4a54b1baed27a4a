"""Contact wrenches per body pair: named, summed, in a fixed sign convention."""
import numpy as np

from cond_ros.cosim.contact_wrenches import BodyNames, pair_wrenches
from cond_ros.scenes.registry import load_named_scene


def test_pairs_sum_the_step_contacts(small_scene):
    """After some winding steps the cable touches the post; each pair's force is the sum over its contacts."""
    scene = load_named_scene("panda_cable_small")
    sim = scene.simulator
    for _ in range(5):
        sim.step(scene.script.control(sim.state.time))
    names = BodyNames(sim.model, scene.cables)
    wrenches = pair_wrenches(names, sim.contacts)
    assert ("cable0", "cylinder0") in wrenches
    contacts = sim.contacts
    on_post = (contacts.collider == 0)
    force = contacts.world_forces()[on_post].sum(axis=0)
    np.testing.assert_allclose(wrenches[("cable0", "cylinder0")][:3], force, atol=1e-12)
    torque = np.cross(contacts.position[on_post], contacts.world_forces()[on_post]).sum(axis=0)
    np.testing.assert_allclose(wrenches[("cable0", "cylinder0")][3:], torque, atol=1e-12)
    known = set(names.group) | set(names.collider) | set(sum(names.links, []))
    assert all(a < b and a in known and b in known for a, b in wrenches)  # joint limits never become a pair


def test_names(small_scene):
    """Cable segments share the cable's name, links keep theirs, colliders are type + index."""
    model = small_scene.simulator.model
    names = BodyNames(model, small_scene.cables)
    assert set(names.group[:model.body_count]) == {"cable0"}
    assert names.collider == ["cylinder0", "box1"]
    robot_group = model.particle_count + model.body_count
    assert names.side(robot_group, model.robots[0].link_index("panda_hand")) == "panda_hand"
    assert names.group_of_dof(model.body_dof_start + 6 * 3) == 3


def test_no_contacts():
    """Before any step there is nothing to publish."""
    scene = load_named_scene("panda_pick")
    assert pair_wrenches(BodyNames(scene.simulator.model), None) == {}

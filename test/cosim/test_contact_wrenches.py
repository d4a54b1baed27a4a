"""Contact wrenches per body pair: named, summed, in a fixed sign convention."""
import numpy as np
import pytest

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


def _by_contact(names: BodyNames, contacts) -> dict:
    """The pairs' wrenches from one contact at a time, by name strings: the module docstring's definition."""
    model = names.model
    force = contacts.world_forces()
    torque = np.cross(contacts.position, force)
    out = {}
    for m in range(contacts.count):
        a = names.side(int(contacts.point_group[m]), int(contacts.link[m, 0]))
        if contacts.collider[m] >= 0:
            b = names.collider[int(contacts.collider[m])]
        elif contacts.dof_b[m] >= model.dof_count:
            node = (contacts.dof_b[m] - model.dof_count) // 3
            b = names.side(int(contacts.vn_group[node]), int(contacts.link[m, 1]))
        elif contacts.dof_b[m] >= 0:
            b = names.group[int(names.group_of_dof(int(contacts.dof_b[m])))]
        else:
            continue
        if a == b:
            continue
        sign = 1.0 if a < b else -1.0
        wrench = out.setdefault((a, b) if a < b else (b, a), np.zeros(6))
        wrench[:3] += sign * force[m]
        wrench[3:] += sign * torque[m]
    return dict(sorted(out.items()))


@pytest.mark.parametrize("scene_name, steps, pairs", [("panda_cable_small", 150, 1), ("panda_pick", 600, 3)])
def test_pairs_are_the_contact_by_contact_sums(scene_name, steps, pairs):
    """Bit for bit the sums of a loop over the contacts, in name order: a cable on the post; a box on the table,
    then gripped by both fingers (virtual nodes on robot links)."""
    scene = load_named_scene(scene_name)
    sim = scene.simulator
    names = BodyNames(sim.model, scene.cables)
    seen = set()
    for k in range(steps):
        sim.step(scene.script.control(sim.state.time))
        if k % 10 == 9:
            expected = _by_contact(names, sim.contacts)
            got = pair_wrenches(names, sim.contacts)
            assert list(got) == list(expected)
            for key in expected:
                np.testing.assert_array_equal(got[key], expected[key])
            seen |= set(expected)
    assert len(seen) >= pairs, seen

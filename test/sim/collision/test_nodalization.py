"""Node contacts: rod-segment centre nodes, node-node self-contact, grouping by shared node, soft landing."""
import numpy as np
import pytest

from cond_ros.sim import ModelBuilder, ModelError, Simulator
from cond_ros.sim.collision.nodalization import build_contact_set
from cond_ros.sim.dynamics.assembly import build_pattern
from cond_ros.sim.dynamics.rod import RodMaterial, add_rod
from cond_ros.sim.model import DampingPolicy

MAT = RodMaterial(radius=0.002, density=1259.0, youngs_modulus=1e6, poisson_ratio=0.3, mu=0.5)


def crossing_rods(gap):
    """Two rods crossing at right angles, one ``gap`` [m] above the other, both on a plane at z = 0."""
    b = ModelBuilder()
    low = add_rod(b, (-0.05, 0.0, 0.002), (0.05, 0.0, 0.002), 41, MAT, chain=0)  # odd: a node at the crossing
    high = add_rod(b, (0.0, -0.05, 0.006 + gap), (0.0, 0.05, 0.006 + gap), 41, MAT, chain=1)
    b.add_collider_plane(mu=0.5)
    return b.finalize(damping_policy=DampingPolicy.GEOMETRIC, contact_margin=0.001), low, high


def test_node_contacts_act_on_segment_translations_and_share_groups():
    model, low, high = crossing_rods(0.0)
    contacts = build_contact_set(model, build_pattern(model), model.state(), 0.01)
    node_pairs = np.flatnonzero(contacts.dof_b >= 0)
    assert len(node_pairs) > 0  # the crossing is detected node to node
    for m in node_pairs:
        # both sides are segment centres: DOFs of a body's translation, no virtual node
        assert contacts.dof_a[m] < model.dof_count and contacts.dof_b[m] < model.dof_count
        assert (contacts.dof_a[m] - model.body_dof_start) % 6 == 0
    # contacts that share a node are one group; groups never share a node
    starts = contacts.group_start()
    owner = {}
    for g in range(len(starts) - 1):
        for m in range(starts[g], starts[g + 1]):
            for node in (contacts.dof_a[m], contacts.dof_b[m]):
                if node >= 0:
                    assert owner.setdefault(node, g) == g
    assert len(contacts.vn_dof) == 0


def test_no_self_contact_between_neighbours_of_one_rod():
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    add_rod(b, (0.0, 0.0, 1.0), (0.2, 0.0, 1.0), 80, MAT)  # 2.5 mm segments, 4 mm diameter: neighbours overlap
    model = b.finalize()
    contacts = build_contact_set(model, build_pattern(model), model.state(), 0.01)
    assert contacts.count == 0


def test_rod_rests_on_rod_without_penetration():
    model, low, high = crossing_rods(0.003)
    sim = Simulator(model, dt=0.01, solver_options=dict(tolerance=1e-9, max_iterations=3000))
    worst = 0.0
    for _ in range(60):
        stats = sim.step()
        worst = max(worst, stats.max_penetration)
    crossing = sim.state.body_q[high.bodies[20], 2] - sim.state.body_q[low.bodies[20], 2]
    assert worst < 1e-5
    assert crossing == pytest.approx(2 * MAT.radius, abs=2e-4)


def test_dropped_particle_lands_without_penetration_or_bounce():
    """The speculative bound lets a node approach only as fast as the next step can stop it."""
    b = ModelBuilder()
    b.add_particle((0.0, 0.0, 0.05), mass=0.1, radius=0.01)
    b.add_collider_plane()
    sim = Simulator(b.finalize(contact_margin=0.005), dt=0.01)
    heights, worst = [], 0.0
    for _ in range(60):
        stats = sim.step()
        worst = max(worst, stats.max_penetration)
        heights.append(sim.state.particle_q[0, 2])
    landed = int(np.argmax(np.array(heights) < 0.0101))
    assert worst < 1e-6
    assert max(heights[landed:]) < 0.0101 + 1e-6  # no bounce
    assert heights[-1] == pytest.approx(0.01, abs=1e-6)


def test_node_point_must_be_the_centre():
    b = ModelBuilder()
    body = b.add_body((0, 0, 0), mass=1.0, inertia=np.eye(3))
    with pytest.raises(ModelError, match="centre"):
        b.add_contact_point(body, (0.01, 0.0, 0.0), node=True)


def all_pairs_within_reach(pos, radius, vel, chain, rest, candidates, margin, dt, arc_factor):
    """The definition, for each candidate against every later one (numpy, no grid)."""
    out = []
    for a, i in enumerate(candidates):
        j = candidates[a + 1:]
        at_rest = (chain[i] >= 0) & (chain[j] == chain[i]) & \
            (np.linalg.norm(rest[j] - rest[i], axis=1) <= arc_factor * (radius[i] + radius[j]))
        dist = np.linalg.norm(pos[j] - pos[i], axis=1)
        reach = dist - radius[i] - radius[j] < margin + 2 * dt * np.linalg.norm(vel[j] - vel[i], axis=1)
        out.extend((i, k) for k in j[~at_rest & reach & (dist > 1e-12)])
    return np.array(out, np.int64).reshape(-1, 2)


@pytest.mark.parametrize("seed", range(6))
def test_grid_node_pair_search_finds_exactly_the_pairs_within_reach_in_loop_order(seed):
    from cond_ros.sim.collision.dynamic_contacts import SELF_CONTACT_ARC, _node_pairs, neighbour_windows
    rng = np.random.default_rng(seed)
    n = 400
    pos = rng.uniform(-0.05, 0.05, (n, 3)) * [1.0, 1.0, 0.2 + seed]  # flat to cubic clouds
    radius = rng.uniform(0.5e-3, 3e-3, n)
    vel = rng.normal(0.0, 0.05 * seed, (n, 3))  # seed 0: at rest
    chain = rng.integers(-1, 3, n)
    rest = pos + rng.normal(0.0, 2e-3, (n, 3))
    candidates = np.sort(rng.choice(n, 300, replace=False)).astype(np.int64)
    expected = all_pairs_within_reach(pos, radius, vel, chain, rest, candidates, 1e-3, 0.01, SELF_CONTACT_ARC)
    assert len(expected) > 20
    windows = neighbour_windows(candidates, radius, chain, rest, SELF_CONTACT_ARC)
    found = _node_pairs(pos, radius, vel, chain, rest, candidates, windows[1], 1e-3, 0.01, SELF_CONTACT_ARC)
    np.testing.assert_array_equal(found, expected)


@pytest.mark.parametrize("segments", [160, 1280])
def test_a_wound_rod_skips_its_neighbours_at_rest_and_finds_every_pair_within_reach(segments):
    """A rod wound as a helix around a post, its turns one diameter apart, nodes in arc order (a fine rod has
    dozens of neighbours at rest within a grid cell, which the search skips by their windows): the pairs are
    the all-pairs loop's, and the windows hold only neighbours at rest."""
    from cond_ros.sim.collision.dynamic_contacts import SELF_CONTACT_ARC, _node_pairs, neighbour_windows
    rng = np.random.default_rng(segments)
    r, length, post = 2e-3, 0.4, 0.022
    arc = np.linspace(0.0, length, segments + 1)
    angle = arc / post
    pos = np.stack([post * np.cos(angle), post * np.sin(angle), 2.05 * r * angle / (2 * np.pi)], axis=1)
    pos += rng.normal(0.0, 1e-4, pos.shape)
    n = len(pos)
    radius = np.full(n, r)
    vel = rng.normal(0.0, 0.02, (n, 3))
    chain = np.zeros(n, np.int64)
    rest = np.zeros((n, 3))
    rest[:, 0] = arc
    candidates = np.arange(n, dtype=np.int64)
    lo, hi = neighbour_windows(candidates, radius, chain, rest, SELF_CONTACT_ARC)
    assert np.all(lo <= candidates) and np.all(candidates <= hi)
    assert (hi - lo).max() > 10 if segments == 1280 else True  # the windows matter where the rod is fine
    for c in range(0, n, 7):  # a window holds neighbours at rest only, and ends where they end
        inside = np.abs(arc[lo[c]:hi[c] + 1] - arc[c]) <= SELF_CONTACT_ARC * 2 * r
        assert inside.all()
        assert lo[c] == 0 or abs(arc[lo[c] - 1] - arc[c]) > SELF_CONTACT_ARC * 2 * r
    for margin in (1e-3, 6e-3):
        expected = all_pairs_within_reach(pos, radius, vel, chain, rest, candidates, margin, 0.01, SELF_CONTACT_ARC)
        assert len(expected) > segments / 4  # the next turn
        found = _node_pairs(pos, radius, vel, chain, rest, candidates, hi, margin, 0.01, SELF_CONTACT_ARC)
        np.testing.assert_array_equal(found, expected)


@pytest.mark.parametrize("seed, spread", [(0, 0.15), (1, 0.15), (2, 0.04)])
def test_a_node_pair_list_finds_what_the_full_search_finds_at_every_step(seed, spread):
    """Nodes drifting and jittering over 60 steps, their speeds changing: the list's pairs equal the all-pairs
    loop's every step, while the grid search runs on only some of them (a sparse cloud), or on all of them
    once the list would hold too many pairs to pay (a dense one)."""
    from cond_ros.sim.collision.dynamic_contacts import NODE_PAIR_LIST_MAX, SELF_CONTACT_ARC, NodePairList

    model = ModelBuilder().finalize()
    rng = np.random.default_rng(seed)
    n, dt = 300, 0.01
    pos = rng.uniform(-spread, spread, (n, 3)) * [1.0, 1.0, 0.1]
    radius = rng.uniform(0.5e-3, 2e-3, n)
    chain = rng.integers(-1, 3, n)
    rest = pos + rng.normal(0.0, 2e-3, (n, 3))
    candidates = np.sort(rng.choice(n, 250, replace=False)).astype(np.int64)
    drift = rng.normal(0.0, 0.03, (n, 3))
    pair_list, found_any = NodePairList(), 0
    for step in range(60):
        vel = drift * (1.0 + 0.5 * np.sin(0.3 * step)) + rng.normal(0.0, 0.005, (n, 3))
        pos = pos + dt * vel
        expected = all_pairs_within_reach(pos, radius, vel, chain, rest, candidates, model.contact_margin, dt,
                                          SELF_CONTACT_ARC)
        found = pair_list.pairs_within_reach(model, pos, radius, vel, chain, rest, candidates, dt)
        np.testing.assert_array_equal(found, expected)
        found_any += len(found)
    assert found_any > 30
    if spread > 0.1:
        assert 3 <= pair_list.searches <= 40 and len(pair_list.pairs) <= NODE_PAIR_LIST_MAX * len(candidates)
    else:
        assert pair_list.pairs is None and pair_list.searches == 1


def hairpin(spacing, bend_radius, length=0.13):
    """A rod ``length`` long folded around a half circle of ``bend_radius`` [m] in its middle, its two straight
    legs 2 ``bend_radius`` apart, nodes ``spacing`` apart in arc order: (positions, rest arc positions)."""
    half = np.pi * bend_radius
    arc = np.arange(0.0, length, spacing)
    s = arc - 0.5 * (length - half)  # from the bend's start
    theta = np.clip(s / bend_radius, 0.0, np.pi)
    pos = np.stack([bend_radius * np.sin(theta), bend_radius * (1.0 - np.cos(theta)), np.zeros_like(s)], axis=1)
    pos[s < 0, 0] = s[s < 0]
    pos[s > half, 0] = half - s[s > half]
    return pos, arc


@pytest.mark.parametrize("spacing", [2.5e-3, 0.3e-3])
def test_a_node_pair_list_leaves_a_rods_band_out_and_still_finds_its_pairs(spacing):
    """A hairpin whose legs close from 9 to 5 mm apart over 40 steps, beside a long straight rod: the nodes
    across the hairpin touch at every arc distance from the window's end (12 mm) on, inside the chain's band
    and beyond it. The list's pairs equal the all-pairs loop's every step; the list holds no pair of a band;
    and, on a fine rod, far fewer pairs than a list of every pair within its reach would (the straight rod's
    neighbours just past its window made that grow with the square of its nodes)."""
    from cond_ros.sim.collision.dynamic_contacts import SELF_CONTACT_ARC, NodePairList, _node_pairs, \
        neighbour_windows

    model = ModelBuilder().finalize()
    r, dt = 2e-3, 0.01
    rng = np.random.default_rng(7)
    straight = np.arange(0.0, 0.12, spacing)
    found_in_band = found_listed = 0
    pair_list = NodePairList()
    for step in range(40):
        pos, arc = hairpin(spacing, 4.5e-3 - 2e-3 * step / 39, length=0.05)
        pos = np.concatenate([pos, np.stack([straight, np.full_like(straight, 0.2), np.zeros_like(straight)], 1)])
        rest = np.zeros_like(pos)
        rest[:, 0] = np.concatenate([arc, straight])
        n = len(pos)
        pos = pos + rng.normal(0.0, 2e-5, pos.shape)
        vel = rng.normal(0.0, 0.01, (n, 3))
        radius = np.full(n, r)
        chain = np.repeat([0, 1], [len(arc), len(straight)])
        if step == 0:  # one array: a list answers for the candidates it was built for
            candidates, on_arc = np.arange(n, dtype=np.int64), np.ones(n, bool)
        expected = all_pairs_within_reach(pos, radius, vel, chain, rest, candidates, model.contact_margin, dt,
                                          SELF_CONTACT_ARC)
        found = pair_list.pairs_within_reach(model, pos, radius, vel, chain, rest, candidates, dt, on_arc=on_arc)
        np.testing.assert_array_equal(found, expected)
        in_band = found[:, 1] <= pair_list.band_hi[found[:, 0]]
        found_in_band += int(in_band.sum())
        found_listed += int((~in_band).sum())
        assert not np.any(pair_list.pairs[:, 1] <= pair_list.band_hi[pair_list.pairs[:, 0]])
    assert found_in_band > 0 and found_listed > 0
    _, hi = neighbour_windows(candidates, radius, chain, rest, SELF_CONTACT_ARC)
    assert np.all(pair_list.band_hi >= hi) and np.any(pair_list.band_hi > hi)
    # what the list would hold without bands: every pair within its reach past the windows
    unbanded = _node_pairs(pos, radius, np.zeros_like(vel), chain, rest, candidates, hi,
                           model.contact_margin + pair_list.skin, dt, SELF_CONTACT_ARC, -1.0)
    if spacing < 1e-3:
        assert len(pair_list.pairs) < 0.5 * len(unbanded)
    # the same points as an FEM surface's (not on an arc): no bands, the same pairs
    fem_list = NodePairList()
    found = fem_list.pairs_within_reach(model, pos, radius, vel, chain, rest, candidates, dt)
    np.testing.assert_array_equal(found, expected)
    np.testing.assert_array_equal(fem_list.band_hi, hi)


def test_a_bands_walk_jumps_no_member_within_reach_where_the_chain_heads_straight_back():
    """The triangle inequality's bound is tight where the chain runs straight back towards a node: a rod (radius
    0.5 mm, nodes 0.05 mm apart) goes 2.9 mm out and folds back 1.3 mm along itself, 0.01 mm aside, so the first
    member of a node's band is 2.8 mm away (out of reach: 2 radii + a 1 mm margin) and the members 0.85 mm of
    arc further are within reach. The list finds what the all-pairs loop finds, band pairs among them."""
    from cond_ros.sim.collision.dynamic_contacts import SELF_CONTACT_ARC, NodePairList

    model = ModelBuilder().finalize(contact_margin=0.001)
    arc = np.arange(0.0, 4.2e-3, 5e-5)
    out = 2.9e-3
    pos = np.stack([np.where(arc <= out, arc, 2 * out - arc), np.where(arc <= out, 0.0, 1e-5), np.zeros_like(arc)], 1)
    n = len(arc)
    radius, chain, vel = np.full(n, 5e-4), np.zeros(n, np.int64), np.zeros((n, 3))
    rest = np.zeros((n, 3))
    rest[:, 0] = arc
    candidates = np.arange(n, dtype=np.int64)
    pair_list = NodePairList()
    found = pair_list.pairs_within_reach(model, pos, radius, vel, chain, rest, candidates, 0.01,
                                         on_arc=np.ones(n, bool))
    expected = all_pairs_within_reach(pos, radius, vel, chain, rest, candidates, model.contact_margin, 0.01,
                                      SELF_CONTACT_ARC)
    np.testing.assert_array_equal(found, expected)
    assert pair_list.pairs is not None and np.any(found[:, 1] <= pair_list.band_hi[found[:, 0]])


@pytest.mark.parametrize("approach", ["moving", "speeding"])
def test_a_node_pair_list_searches_again_when_nodes_could_have_come_within_reach(approach):
    """Two nodes just beyond the list's reach: closing the gap by 1.2 skins between calls (each moving 0.6), or
    gaining a closing speed worth 1.2 skins in place, brings them within reach; the list must see it."""
    from cond_ros.sim.collision.dynamic_contacts import NODE_PAIR_SKIN, SELF_CONTACT_ARC, NodePairList

    model = ModelBuilder().finalize()
    dt, r = 0.01, 1e-3
    skin = NODE_PAIR_SKIN * 2.0 * r
    radius, chain = np.full(2, r), np.full(2, -1)
    candidates = np.arange(2, dtype=np.int64)
    gap = model.contact_margin + 1.02 * skin
    pos = np.array([[0.0, 0.0, 0.0], [2 * r + gap, 0.0, 0.0]])
    vel = np.zeros((2, 3))
    pair_list = NodePairList()

    def check(pos, vel):
        expected = all_pairs_within_reach(pos, radius, vel, chain, pos, candidates, model.contact_margin, dt,
                                          SELF_CONTACT_ARC)
        found = pair_list.pairs_within_reach(model, pos, radius, vel, chain, pos, candidates, dt)
        np.testing.assert_array_equal(found, expected)
        return len(found)

    assert check(pos, vel) == 0
    if approach == "moving":
        pos = pos + np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]]) * 0.6 * skin
    else:
        vel = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]]) * 0.3 * skin / dt
    assert check(pos, vel) == 1
    assert pair_list.searches == 2


@pytest.mark.parametrize("count", [0, 1, 7, 300])
def test_kept_forces_are_numpys_stable_sort_and_world_forces(count):
    """What a solver keeps for the next step's warm start: keys sorted stably (repeated keys keep their
    order) and R_c^T lambda in that order, bit for bit numpy's argsort(kind="stable") and einsum."""
    from scipy.spatial.transform import Rotation

    from cond_ros.sim.collision.nodalization import forces_to_world, keyed_world_forces

    rng = np.random.default_rng(count)
    keys = rng.integers(0, max(1, count // 3), count).astype(np.int64)
    frame = Rotation.random(count, random_state=1).as_matrix().reshape(count, 3, 3) if count else np.zeros((0, 3, 3))
    force = rng.normal(0.0, 10.0, (count, 3))
    order = np.argsort(keys, kind="stable")
    sorted_keys, world = keyed_world_forces(keys, frame, force)
    np.testing.assert_array_equal(sorted_keys, keys[order])
    np.testing.assert_array_equal(world, forces_to_world(frame, force)[order])

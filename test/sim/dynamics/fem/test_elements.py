"""Co-rotational tetrahedra against continuum mechanics: patch tests, rigid motions, the stiffness as the
derivative of the force, and the polar decomposition."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cond_ros.sim import ModelBuilder
from cond_ros.sim.dynamics.assembly import build_pattern
from cond_ros.sim.dynamics.fem import FemMaterial, add_soft_body, box_mesh
from cond_ros.sim.dynamics.fem.elements import assemble_tetrahedra, elastic_forces, element_stresses, polar_rotation

MATERIAL = FemMaterial(youngs_modulus=2e5, poisson_ratio=0.3, density=1000.0)


def irregular_block():
    """A 3x3x3-cell box with its interior nodes shuffled, so no element is axis aligned."""
    mesh = box_mesh([0.1, 0.075, 0.05], [3, 3, 3])
    points = mesh.points.copy()
    lo, hi = points.min(axis=0), points.max(axis=0)
    interior = np.all((points > lo + 1e-9) & (points < hi - 1e-9), axis=1)
    points[interior] += np.random.default_rng(1).uniform(-0.01, 0.01, (interior.sum(), 3))
    return type(mesh).from_arrays(points, mesh.tets)


def model_of(mesh, material=MATERIAL):
    builder = ModelBuilder()
    body = add_soft_body(builder, mesh, material)
    return builder.finalize(), body


def hooke(strain, material=MATERIAL):
    return 2 * material.shear_modulus * strain + material.lame_lambda * np.trace(strain) * np.eye(3)


def forces_at(model, q):
    out = np.zeros((model.particle_count, 3))
    elastic_forces(model.tet_nodes, model.tet_rest_shape_inverse, model.tet_rest_volume, model.tet_lame, q, out)
    return out


def stresses_at(model, q):
    out = np.zeros((model.tet_count, 3, 3))
    element_stresses(model.tet_nodes, model.tet_rest_shape_inverse, model.tet_lame, q, out)
    return out


def test_patch_uniform_strain_gives_exact_uniform_stress():
    mesh = irregular_block()
    model, _ = model_of(mesh)
    strain = np.array([[2e-3, 5e-4, -3e-4], [5e-4, -1e-3, 8e-4], [-3e-4, 8e-4, 1.5e-3]])
    q = mesh.points @ (np.eye(3) + strain).T  # symmetric F: its polar rotation is exactly I
    expected = hooke(strain)
    stress = stresses_at(model, q)
    assert np.abs(stress - expected).max() < 1e-9 * np.abs(expected).max()
    force = forces_at(model, q)
    lo, hi = mesh.points.min(axis=0), mesh.points.max(axis=0)
    interior = np.all((mesh.points > lo + 1e-9) & (mesh.points < hi - 1e-9), axis=1)
    scale = np.abs(expected).max() * 0.05 ** 2
    assert np.abs(force[interior]).max() < 1e-9 * scale  # equilibrium inside
    # the forces on the face x = max are the traction sigma n over its area (sign: internal force = -traction)
    face = mesh.points[:, 0] > hi[0] - 1e-9
    area = (hi[1] - lo[1]) * (hi[2] - lo[2])
    assert np.allclose(-force[face].sum(axis=0), expected @ np.array([1.0, 0, 0]) * area, rtol=1e-9, atol=0)
    assert np.abs(force.sum(axis=0)).max() < 1e-9 * scale


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rigid_motion_gives_zero_force_and_rotated_patch_stress(seed):
    mesh = irregular_block()
    model, _ = model_of(mesh)
    rot = Rotation.random(random_state=seed).as_matrix()
    shift = np.random.default_rng(seed).normal(size=3)
    q = mesh.points @ rot.T + shift
    assert np.abs(forces_at(model, q)).max() < 1e-9 * MATERIAL.youngs_modulus * 0.05 ** 2
    assert np.abs(stresses_at(model, q)).max() < 1e-7 * MATERIAL.youngs_modulus
    strain = np.diag([1e-3, -2e-3, 5e-4])
    q = mesh.points @ (rot @ (np.eye(3) + strain)).T + shift
    expected = rot @ hooke(strain) @ rot.T
    assert np.abs(stresses_at(model, q) - expected).max() < 1e-8 * np.abs(expected).max()


def test_stiffness_is_the_derivative_of_the_elastic_force():
    """A's element part at h = 1, no damping, equals -df/dq by central differences (at a deformed, rotated
    state the difference is the dropped rotation term, which is second order in the strain)."""
    mesh = box_mesh([0.05, 0.05, 0.05], [1, 1, 1])
    model, _ = model_of(mesh)
    pattern = build_pattern(model)
    rng = np.random.default_rng(3)
    q = mesh.points + 1e-5 * rng.normal(size=mesh.points.shape)
    data = np.zeros(pattern.nnz)
    b = np.zeros(model.dof_count)
    assemble_tetrahedra(model.tet_nodes, model.tet_rest_shape_inverse, model.tet_rest_volume, model.tet_lame,
                        np.zeros(model.tet_count), False, q, 1.0, pattern.tet_pairs, pattern.block_slot,
                        pattern.tet_incidence, data, b)
    import scipy.sparse as sp
    stiffness = sp.csr_matrix((data, pattern.indices, pattern.indptr)).toarray()
    assert np.allclose(b, forces_at(model, q).ravel(), rtol=0, atol=1e-12 * np.abs(b).max())
    n = model.dof_count
    numeric = np.zeros((n, n))
    step = 1e-7
    for k in range(n):
        dq = np.zeros(n)
        dq[k] = step
        plus = forces_at(model, q + dq.reshape(-1, 3)).ravel()
        minus = forces_at(model, q - dq.reshape(-1, 3)).ravel()
        numeric[:, k] = -(plus - minus) / (2 * step)
    assert np.abs(stiffness - numeric).max() < 1e-3 * np.abs(stiffness).max()
    assert np.allclose(stiffness, stiffness.T)


@pytest.mark.parametrize("seed", range(5))
def test_polar_rotation_matches_svd(seed):
    rng = np.random.default_rng(seed)
    f = Rotation.random(random_state=seed).as_matrix() @ (np.eye(3) + 0.3 * rng.normal(size=(3, 3)))
    if np.linalg.det(f) < 0:
        f[:, 0] *= -1
    r = np.empty((3, 3))
    polar_rotation(f, r, np.empty((3, 3)))
    u, _, vt = np.linalg.svd(f)
    assert np.allclose(r, u @ vt, atol=1e-10)
    assert np.allclose(r @ r.T, np.eye(3), atol=1e-12) and np.linalg.det(r) > 0


def test_inverted_element_is_turned_back_out():
    f = np.diag([1.0, 1.0, -0.5])  # flattened through itself
    r = np.empty((3, 3))
    polar_rotation(f, r, np.empty((3, 3)))
    assert np.isclose(np.linalg.det(r), 1.0)
    local = r.T @ f
    assert np.linalg.det(local) < 0 and np.allclose(local, local.T)  # one principal stretch stays negative


def test_lumped_masses_sum_to_the_body_mass():
    mesh = irregular_block()
    model, body = model_of(mesh)
    assert np.isclose(model.particle_mass.sum(), MATERIAL.density * 0.2 * 0.15 * 0.1, rtol=1e-12)
    assert np.isclose(body.mass, model.particle_mass.sum(), rtol=1e-12)


def test_assembly_is_bit_identical_on_one_core_and_on_all():
    """The two parallel passes (per element, then per node's rows with its elements in ascending order) give the
    serial loop's sums whatever the thread count, with the geometric term too; a mesh large enough that every
    thread gets work."""
    import numba
    mesh = box_mesh([0.1, 0.08, 0.06], [6, 5, 4])
    model, _ = model_of(mesh)
    pattern = build_pattern(model)
    q = mesh.points + 1e-3 * np.random.default_rng(4).normal(size=mesh.points.shape)
    threads = numba.get_num_threads()
    results = []
    try:
        for count in sorted({1, threads}):
            numba.set_num_threads(count)
            data, b = np.zeros(pattern.nnz), np.zeros(model.dof_count)
            assemble_tetrahedra(model.tet_nodes, model.tet_rest_shape_inverse, model.tet_rest_volume, model.tet_lame,
                                np.full(model.tet_count, 1e-3), True, q, 0.005, pattern.tet_pairs, pattern.block_slot,
                                pattern.tet_incidence, data, b)
            results.append((data, b))
    finally:
        numba.set_num_threads(threads)
    assert model.tet_count > 2 * 256  # two threads both get elements (CHUNK = 256)
    assert all(np.array_equal(x, y) for x, y in zip(results[0], results[-1]))
    assert np.any(results[0][0]) and np.any(results[0][1])

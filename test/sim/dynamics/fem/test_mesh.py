"""Tetrahedral meshes: validation errors, the boundary surface, meshio round trips, structured meshers."""
import numpy as np
import pytest

from cond_ros.sim import ModelError
from cond_ros.sim.dynamics.fem import FemMaterial, TetMesh, box_mesh, cylinder_mesh, read_mesh, sphere_mesh, write_mesh

UNIT_TET = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])


def test_single_tet_surface_is_outward():
    mesh = TetMesh.from_arrays(UNIT_TET, [[0, 1, 2, 3]])
    assert len(mesh.surface_faces) == 4
    centre = UNIT_TET.mean(axis=0)
    for face in mesh.surface_faces:
        a, b, c = UNIT_TET[face]
        assert np.cross(b - a, c - a) @ (a - centre) > 0


def test_inverted_tet_is_named():
    with pytest.raises(ModelError, match="inverted tetrahedra.*: 0"):
        TetMesh.from_arrays(UNIT_TET, [[0, 2, 1, 3]], name="bad.msh")


def test_degenerate_tet_is_named():
    flat = UNIT_TET.copy()
    flat[3] = [0.3, 0.3, 0.0]
    with pytest.raises(ModelError, match="degenerate"):
        TetMesh.from_arrays(flat, [[0, 1, 2, 3]])
    with pytest.raises(ModelError, match="repeat a node"):
        TetMesh.from_arrays(UNIT_TET, [[0, 1, 1, 3]])


def test_non_manifold_meshes_are_refused():
    # two tetrahedra sharing only the edge (0, 1): the surface pinches along it
    points = np.vstack([UNIT_TET, [[0.5, -1, 0.1], [0.5, -0.2, -1]]])
    tets = [[0, 1, 2, 3], [0, 1, 4, 5]]
    tets = [t if np.linalg.det((points[t[1:]] - points[t[0]])) > 0 else [t[0], t[2], t[1], t[3]] for t in tets]
    with pytest.raises(ModelError, match="non-manifold surface"):
        TetMesh.from_arrays(points, tets)
    # three tetrahedra on one face
    points = np.vstack([UNIT_TET, [[0.2, 0.2, -1], [0.3, 0.3, 0.9]]])
    with pytest.raises(ModelError, match="shared by more than two"):
        TetMesh.from_arrays(points, [[0, 1, 2, 3], [0, 2, 1, 4], [0, 1, 2, 5]])


def test_bad_shapes_and_indices():
    with pytest.raises(ModelError, match="outside"):
        TetMesh.from_arrays(UNIT_TET, [[0, 1, 2, 7]])
    with pytest.raises(ModelError, match="belong to no tetrahedron"):
        TetMesh.from_arrays(np.vstack([UNIT_TET, [[5, 5, 5]]]), [[0, 1, 2, 3]])
    with pytest.raises(ModelError, match="non-finite"):
        TetMesh.from_arrays(np.vstack([UNIT_TET[:3], [[0, 0, np.nan]]]), [[0, 1, 2, 3]])
    with pytest.raises(ModelError, match=r"\(T >= 1, 4\)"):
        TetMesh.from_arrays(UNIT_TET, [[0, 1, 2]])


def test_poisson_ratio_half_is_refused():
    with pytest.raises(ModelError, match="poisson_ratio"):
        FemMaterial(1e5, 0.5, 1000)
    with pytest.raises(ModelError, match="youngs_modulus"):
        FemMaterial(-1.0, 0.3, 1000)


@pytest.mark.parametrize("ext", [".msh", ".vtk", ".vtu"])
def test_meshio_round_trip(tmp_path, ext):
    mesh = sphere_mesh(0.05, 4)
    path = str(tmp_path / f"ball{ext}")
    write_mesh(path, mesh)
    back = read_mesh(path)
    assert np.allclose(back.points, mesh.points) and np.array_equal(back.tets, mesh.tets)
    assert back.name == f"ball{ext}"


def test_read_mesh_errors_name_the_file(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        read_mesh(str(tmp_path / "missing.msh"))
    with pytest.raises(ModelError, match="unsupported mesh format"):
        read_mesh(str(tmp_path / "x.obj"))
    corrupt = tmp_path / "corrupt.vtu"
    write_mesh(str(corrupt), sphere_mesh(0.05, 3))
    corrupt.write_bytes(corrupt.read_bytes()[:200])
    with pytest.raises(ModelError, match="corrupt.vtu: cannot read"):
        read_mesh(str(corrupt))
    import meshio
    surface_only = str(tmp_path / "surface.vtk")
    meshio.write(surface_only, meshio.Mesh(UNIT_TET, [("triangle", np.array([[0, 1, 2]]))]))
    with pytest.raises(ModelError, match="no tetrahedra.*triangle"):
        read_mesh(surface_only)
    inverted = str(tmp_path / "inverted.vtu")
    meshio.write(inverted, meshio.Mesh(UNIT_TET, [("tetra", np.array([[0, 2, 1, 3]]))]))
    with pytest.raises(ModelError, match="inverted.vtu: 1 inverted"):
        read_mesh(inverted)


@pytest.mark.parametrize("mesh, volume", [
    (box_mesh([0.2, 0.1, 0.005], [40, 17, 1]), 0.4 * 0.2 * 0.01),
    (sphere_mesh(0.05, 10), 4 / 3 * np.pi * 0.05 ** 3),
    (cylinder_mesh(0.02, 0.05, 8, 10), np.pi * 0.02 ** 2 * 0.1),
])
def test_structured_meshes_are_valid_and_fill_the_solid(mesh, volume):
    v = mesh.volumes()
    assert v.min() > 0.3 * v.mean()  # no slivers
    # polyhedral approximations of curved solids fall short by O(h^2)
    assert volume * 0.97 < v.sum() <= volume * (1 + 1e-12)
    on_surface = np.zeros(mesh.node_count, bool)
    on_surface[mesh.surface_nodes] = True
    centre = mesh.points.mean(axis=0)
    if "sphere" in mesh.name:
        assert np.allclose(np.linalg.norm(mesh.points[on_surface] - centre, axis=1), 0.05)
        assert np.all(np.linalg.norm(mesh.points[~on_surface] - centre, axis=1) < 0.05 - 1e-6)


def test_paper_sizes():
    """The scenes' meshes are close to the paper's (Sec. V-C3, V-C4)."""
    mat = box_mesh([0.2, 0.085, 0.005], [40, 17, 1])
    assert (mat.node_count, mat.tet_count) == (1476, 4080)  # paper: 1477 nodes, 4100 tetrahedra
    ball = sphere_mesh(0.05, 11)
    assert (ball.node_count, ball.tet_count) == (1728, 7986)  # paper: 1463, 6928

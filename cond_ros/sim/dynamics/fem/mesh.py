"""Tetrahedral meshes: validation, the boundary surface, and reading files with meshio (.msh, .vtk, .vtu).

A :class:`TetMesh` is checked once, when it is made: every tetrahedron has a positive volume (nodes
ordered so that (x1 - x0) . ((x2 - x0) x (x3 - x0)) > 0), no node is left out, and the boundary surface is
a closed 2-manifold (every interior face is shared by exactly two tetrahedra, every boundary edge by
exactly two boundary faces). A bad mesh raises :class:`~cond_ros.sim.validate.ModelError` naming the
first offending elements, so a scene never starts on a mesh that would blow up or leak contacts.
"""
from __future__ import annotations

import dataclasses
import os

import numpy as np

from ...validate import ModelError

# A tetrahedron whose volume is below this fraction of its mean edge length cubed is degenerate (a sliver
# flat to round-off: its shape gradients, and so its stiffness, are unbounded).
DEGENERATE_VOLUME = 1e-9

# The faces of tetrahedron (0, 1, 2, 3) ordered so that their normals point out of a positive tetrahedron.
_FACES = np.array([[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]], dtype=np.int64)


def signed_volumes(points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Signed volume of every tetrahedron [m^3], (T,); positive for the node order above."""
    x = points[tets]
    return np.einsum("ti,ti->t", x[:, 1] - x[:, 0], np.cross(x[:, 2] - x[:, 0], x[:, 3] - x[:, 0])) / 6.0


def _mean_edge(points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    x = points[tets]
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    return np.mean([np.linalg.norm(x[:, a] - x[:, b], axis=1) for a, b in pairs], axis=0)


def _first(ids, limit=5) -> str:
    ids = list(ids)
    head = ", ".join(str(int(i)) for i in ids[:limit])
    return head + (f" (and {len(ids) - limit} more)" if len(ids) > limit else "")


@dataclasses.dataclass(frozen=True)
class TetMesh:
    """A validated tetrahedral mesh.

    Attributes:
        points: node positions [m], (N, 3).
        tets: node indices of each tetrahedron, positive orientation, (T, 4).
        surface_faces: boundary triangles with outward normals (right-hand order), (F, 3).
        name: where the mesh came from (file name or generator), used in error messages.
    """

    points: np.ndarray
    tets: np.ndarray
    surface_faces: np.ndarray
    name: str = "mesh"

    @staticmethod
    def from_arrays(points, tets, name: str = "mesh") -> "TetMesh":
        """Validate ``points`` (N, 3) and ``tets`` (T, 4) and find the surface; raises ModelError."""
        try:
            points = np.array(points, dtype=np.float64)
            tets = np.array(tets)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{name}: points and tets must be numeric arrays ({exc})") from None
        if points.ndim != 2 or points.shape[1] != 3 or len(points) < 4:
            raise ModelError(f"{name}: points must be (N >= 4, 3), got shape {points.shape}")
        if not np.all(np.isfinite(points)):
            raise ModelError(f"{name}: non-finite node coordinates at nodes "
                             f"{_first(np.flatnonzero(~np.all(np.isfinite(points), axis=1)))}")
        if tets.ndim != 2 or tets.shape[1] != 4 or len(tets) == 0:
            raise ModelError(f"{name}: tets must be (T >= 1, 4), got shape {tets.shape}")
        if not np.issubdtype(tets.dtype, np.integer):
            raise ModelError(f"{name}: tets must hold integer node indices, got {tets.dtype}")
        tets = tets.astype(np.int64)
        bad = np.flatnonzero(np.any((tets < 0) | (tets >= len(points)), axis=1))
        if len(bad):
            raise ModelError(f"{name}: tetrahedra {_first(bad)} reference nodes outside 0..{len(points) - 1}")
        s = np.sort(tets, axis=1)
        bad = np.flatnonzero(np.any(s[:, 1:] == s[:, :-1], axis=1))
        if len(bad):
            raise ModelError(f"{name}: tetrahedra {_first(bad)} repeat a node (degenerate)")
        unused = np.setdiff1d(np.arange(len(points)), tets.ravel())
        if len(unused):
            raise ModelError(f"{name}: nodes {_first(unused)} belong to no tetrahedron")
        volume = signed_volumes(points, tets)
        scale = _mean_edge(points, tets) ** 3
        bad = np.flatnonzero(np.abs(volume) <= DEGENERATE_VOLUME * scale)
        if len(bad):
            raise ModelError(f"{name}: {len(bad)} degenerate (zero-volume) tetrahedra: {_first(bad)}")
        bad = np.flatnonzero(volume < 0)
        if len(bad):
            raise ModelError(f"{name}: {len(bad)} inverted tetrahedra (negative volume; swap two nodes to fix): "
                             f"{_first(bad)}")
        return TetMesh(points, tets, boundary_faces(tets, name), name)

    @property
    def node_count(self) -> int:
        return len(self.points)

    @property
    def tet_count(self) -> int:
        return len(self.tets)

    @property
    def surface_nodes(self) -> np.ndarray:
        """Sorted indices of the nodes on the boundary surface (the contact nodes)."""
        return np.unique(self.surface_faces)

    def volumes(self) -> np.ndarray:
        return signed_volumes(self.points, self.tets)

    def mean_surface_edge(self) -> float:
        """Mean edge length of the surface triangles [m]."""
        x = self.points[self.surface_faces]
        return float(np.mean(np.linalg.norm(x - np.roll(x, 1, axis=1), axis=2)))

    def transformed(self, rotation=np.eye(3), translation=(0.0, 0.0, 0.0)) -> "TetMesh":
        """The mesh moved rigidly (rotation matrix, then translation) [m]."""
        rot = np.asarray(rotation, dtype=float)
        return TetMesh(self.points @ rot.T + np.asarray(translation, dtype=float), self.tets, self.surface_faces,
                       self.name)


def boundary_faces(tets: np.ndarray, name: str = "mesh") -> np.ndarray:
    """Outward boundary triangles of a positively oriented tet mesh; raises ModelError if not a manifold."""
    faces = tets[:, _FACES].reshape(-1, 3)
    key = np.sort(faces, axis=1)
    _, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    shared = np.flatnonzero(counts > 2)
    if len(shared):
        tets_at = np.flatnonzero(np.isin(inverse, shared)) // 4
        raise ModelError(f"{name}: non-manifold mesh: {len(shared)} faces are shared by more than two tetrahedra "
                         f"(tetrahedra {_first(np.unique(tets_at))})")
    surface = faces[counts[inverse] == 1]
    edges = np.sort(surface[:, [[0, 1], [1, 2], [2, 0]]].reshape(-1, 2), axis=1)
    _, edge_counts = np.unique(edges, axis=0, return_counts=True)
    if np.any(edge_counts != 2):
        bad = np.unique(edges, axis=0)[edge_counts != 2]
        raise ModelError(f"{name}: non-manifold surface: {len(bad)} surface edges are not shared by exactly two "
                         f"surface triangles (e.g. nodes {bad[0].tolist()}); two solids touching along an edge "
                         f"or at a vertex must be meshed apart or merged")
    return np.ascontiguousarray(surface)


MESH_FORMATS = (".msh", ".vtk", ".vtu")


def read_mesh(path: str) -> TetMesh:
    """A tetrahedral mesh from a file meshio reads (.msh, .vtk, .vtu); other cell types are ignored.

    Raises ModelError naming the file when it is missing, unreadable, or holds no tetrahedra.
    """
    import meshio  # deferred: only scenes with mesh files need it

    ext = os.path.splitext(path)[1].lower()
    if ext not in MESH_FORMATS:
        raise ModelError(f"{path}: unsupported mesh format {ext!r}; use one of {', '.join(MESH_FORMATS)}")
    if not os.path.isfile(path):
        raise ModelError(f"{path}: mesh file not found")
    try:
        data = meshio.read(path)
    # meshio raises many types on bad files (ReadError, ValueError, struct.error...), and some of its
    # readers call sys.exit: none of that may end the caller's process
    except (Exception, SystemExit) as exc:
        raise ModelError(f"{path}: cannot read the mesh ({type(exc).__name__}: {exc})") from None
    blocks = [c.data for c in data.cells if c.type == "tetra"]
    if not blocks:
        kinds = sorted({c.type for c in data.cells}) or ["none"]
        raise ModelError(f"{path}: no tetrahedra in the mesh (cell types: {', '.join(kinds)}); "
                         f"volume-mesh it first (e.g. gmsh -3)")
    tets = np.concatenate(blocks)
    used = np.unique(tets)
    # surface-only nodes (of triangle cells, say) are dropped and the tets renumbered
    remap = np.full(len(data.points), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    points = np.asarray(data.points, dtype=float)
    if points.shape[1] == 2:
        raise ModelError(f"{path}: 2-D points; a tetrahedral mesh needs 3-D coordinates")
    return TetMesh.from_arrays(points[used], remap[tets], name=os.path.basename(path))


def write_mesh(path: str, mesh: TetMesh) -> None:
    """Write ``mesh`` with meshio (format from the extension)."""
    import meshio

    meshio.write(path, meshio.Mesh(mesh.points, [("tetra", mesh.tets)]))

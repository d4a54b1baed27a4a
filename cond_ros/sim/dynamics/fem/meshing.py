"""Structured tetrahedral meshes of boxes, cylinders and spheres (no external mesher in the runtime path).

All three start from a grid of hexahedral cells split into six tetrahedra each along the cell's main
diagonal (the Kuhn / Freudenthal split). Neighbouring cells split their shared faces the same way, so
the mesh is conforming. Cylinders and spheres map the grid's square (cube) onto the disc (ball) by
scaling each point radially by max-norm / 2-norm: the mapping keeps the grid's topology, puts the
grid's boundary exactly on the curved surface, and leaves the centre undistorted.
"""
from __future__ import annotations

import itertools

import numpy as np

from ...validate import ModelError
from .mesh import TetMesh, signed_volumes

# The six tetrahedra of a unit cell: corner 000 to corner 111 along the axes in every order.
_KUHN = np.array([[0, 1 << a, (1 << a) | (1 << b), 7] for a, b, _ in itertools.permutations(range(3))],
                 dtype=np.int64)


def _cells(name: str, cells) -> np.ndarray:
    cells = np.asarray(cells).reshape(-1)
    if len(cells) != 3 or np.any(cells < 1) or np.any(cells != np.round(cells)):
        raise ModelError(f"{name}: cells must be three integers >= 1, got {cells.tolist()}")
    return cells.astype(np.int64)


def _grid(lo, hi, cells, *, toward_center=False) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and tetrahedra of a box grid from ``lo`` to ``hi`` with ``cells`` (3,) hexahedra per axis.

    ``toward_center``: mirror the split per octant so that every cell's diagonal points at the grid's
    centre; the radial maps then stretch cells along their diagonal instead of flattening corner
    tetrahedra into slivers. Cells across a mid-plane share the mirroring of the other two axes, so
    their common faces are still split alike.
    """
    nx, ny, nz = cells
    axes = [np.linspace(lo[d], hi[d], cells[d] + 1) for d in range(3)]
    points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)

    def node(i, j, k):
        return (i * (ny + 1) + j) * (nz + 1) + k
    i, j, k = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij"))
    mirror = np.zeros(len(i), dtype=np.int64)
    if toward_center:
        for d, index in enumerate((i, j, k)):
            mirror |= (2 * index + 1 < cells[d]).astype(np.int64) << d
    corners = np.stack([node(i + ((c ^ mirror) & 1), j + (((c ^ mirror) >> 1) & 1), k + (((c ^ mirror) >> 2) & 1))
                        for c in range(8)], axis=1)
    tets = corners[:, _KUHN].reshape(-1, 4)
    return points, tets


def _oriented(points, tets) -> np.ndarray:
    """Swap two nodes of every negatively oriented tetrahedron."""
    tets = tets.copy()
    flip = signed_volumes(points, tets) < 0
    tets[flip, 2], tets[flip, 3] = tets[flip, 3].copy(), tets[flip, 2].copy()
    return tets


def box_mesh(half_extents, cells, *, center=(0.0, 0.0, 0.0)) -> TetMesh:
    """A box of ``half_extents`` [m] with ``cells`` hexahedra per axis (6 tetrahedra each)."""
    h = np.asarray(half_extents, dtype=float).reshape(-1)
    if len(h) != 3 or not np.all(np.isfinite(h)) or np.any(h <= 0):
        raise ModelError(f"box_mesh.half_extents: three positive lengths, got {h.tolist()}")
    c = np.asarray(center, dtype=float)
    points, tets = _grid(c - h, c + h, _cells("box_mesh.cells", cells))
    return TetMesh.from_arrays(points, _oriented(points, tets), name="box_mesh")


def _radial(xy: np.ndarray) -> np.ndarray:
    """Scale factor max-norm / 2-norm of each row (1 at the origin)."""
    two = np.linalg.norm(xy, axis=1)
    inf = np.max(np.abs(xy), axis=1)
    return np.where(two > 0, inf / np.where(two > 0, two, 1.0), 1.0)


def cylinder_mesh(radius: float, half_height: float, cells_across: int, cells_along: int) -> TetMesh:
    """A solid cylinder along z, centred at the origin: ``cells_across`` cells per diameter (even keeps a
    node on the axis), ``cells_along`` along the axis."""
    if not (np.isfinite(radius) and radius > 0 and np.isfinite(half_height) and half_height > 0):
        raise ModelError(f"cylinder_mesh: radius and half_height must be positive, got {radius}, {half_height}")
    cells = _cells("cylinder_mesh.cells", [cells_across, cells_across, cells_along])
    points, tets = _grid(np.array([-1.0, -1.0, -half_height]), np.array([1.0, 1.0, half_height]), cells,
                          toward_center=True)
    points[:, :2] *= radius * _radial(points[:, :2])[:, None]
    return TetMesh.from_arrays(points, _oriented(points, tets), name="cylinder_mesh")


def sphere_mesh(radius: float, cells_across: int, *, center=(0.0, 0.0, 0.0)) -> TetMesh:
    """A solid ball: a cube grid of ``cells_across`` cells per edge mapped radially onto the ball."""
    if not (np.isfinite(radius) and radius > 0):
        raise ModelError(f"sphere_mesh.radius: must be positive, got {radius}")
    cells = _cells("sphere_mesh.cells", [cells_across] * 3)
    points, tets = _grid(-np.ones(3), np.ones(3), cells, toward_center=True)
    points *= radius * _radial(points)[:, None]
    points += np.asarray(center, dtype=float)
    return TetMesh.from_arrays(points, _oriented(points, tets), name="sphere_mesh")

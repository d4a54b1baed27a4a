"""A tetrahedral mesh added to a :class:`~cond_ros.sim.builder.ModelBuilder` as an FEM body.

Every mesh node becomes a particle with its lumped mass (each element gives rho V / 4 to each of its
nodes); surface nodes are contact nodes with a sphere of ``contact_radius``, interior nodes are not.
Contacts act on the nodes directly (they are nodes in the paper's sense, no virtual node needed); a
robot link or rigid body touching the surface gets a virtual node on its side.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ... import validate as V
from ...builder import ModelBuilder
from .material import FemMaterial
from .mesh import TetMesh

# Default node sphere radius as a fraction of the mean surface edge. Node-node (self) contact needs
# about 0.4 or more, or nodes of one surface slip between those of the other; node-volume contact
# wants it small, because the sphere is an offset of the true surface.
DEFAULT_CONTACT_RADIUS = 0.25


@dataclasses.dataclass(frozen=True)
class SoftBody:
    """Indices of an FEM body in the model.

    Attributes:
        particles: particle index of each mesh node, (N,). tets: element indices, (T,).
        surface_faces: boundary triangles in particle indices, (F, 3). surface_nodes: particle indices, sorted.
        material: the :class:`FemMaterial`. mesh: the rest mesh. object_id: the deformable-object id.
    """

    particles: np.ndarray
    tets: np.ndarray
    surface_faces: np.ndarray
    surface_nodes: np.ndarray
    material: FemMaterial
    mesh: TetMesh
    object_id: int

    @property
    def mass(self) -> float:
        return float(self.material.density * self.mesh.volumes().sum())


def lumped_masses(mesh: TetMesh, density: float) -> np.ndarray:
    """Each node's share of the mass, rho V / 4 from every element around it [kg], (N,)."""
    mass = np.zeros(mesh.node_count)
    np.add.at(mass, mesh.tets.ravel(), np.repeat(density * mesh.volumes() / 4.0, 4))
    return mass


def add_soft_body(builder: ModelBuilder, mesh: TetMesh, material: FemMaterial, *, contact_radius=None,
                  velocity=(0.0, 0.0, 0.0)) -> SoftBody:
    """Add ``mesh`` (at rest where it is) as a co-rotational FEM body; returns its indices.

    Args:
        contact_radius: sphere radius of the surface nodes [m] (default: DEFAULT_CONTACT_RADIUS times the
            mean surface edge).
        velocity: initial velocity of every node [m/s].
    """
    if contact_radius is None:
        contact_radius = DEFAULT_CONTACT_RADIUS * mesh.mean_surface_edge()
    radius = V.non_negative(f"{mesh.name}.contact_radius", contact_radius)
    mass = lumped_masses(mesh, material.density)
    on_surface = np.zeros(mesh.node_count, bool)
    on_surface[mesh.surface_nodes] = True
    obj = builder.new_deformable_object()
    first = None
    for i, p in enumerate(mesh.points):
        k = builder.add_particle(p, mass=mass[i], radius=radius if on_surface[i] else 0.0, velocity=velocity,
                                 mu=material.mu, contact=bool(on_surface[i]), deformable_object=obj)
        first = k if first is None else first
    particles = first + np.arange(mesh.node_count, dtype=np.int64)
    lame = (material.shear_modulus, material.lame_lambda)
    tets = np.array([builder.add_tetrahedron(particles[t], lame=lame, damping_time=material.damping_time)
                     for t in mesh.tets], dtype=np.int64)
    return SoftBody(particles, tets, particles[mesh.surface_faces], particles[mesh.surface_nodes], material, mesh,
                    obj)

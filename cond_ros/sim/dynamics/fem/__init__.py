"""FEM objects: co-rotational linear tetrahedra (``elements``), meshes (``mesh``, ``meshing``) and the
builder glue (``soft_body``)."""
from .material import FemMaterial
from .mesh import MESH_FORMATS, TetMesh, read_mesh, write_mesh
from .meshing import box_mesh, cylinder_mesh, sphere_mesh
from .soft_body import SoftBody, add_soft_body, lumped_masses

__all__ = ["FemMaterial", "MESH_FORMATS", "SoftBody", "TetMesh", "add_soft_body", "box_mesh", "cylinder_mesh",
           "lumped_masses", "read_mesh", "sphere_mesh", "write_mesh"]

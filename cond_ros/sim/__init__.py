"""The physics core: no ROS import; usable as a plain Python library.

Typical use::

    from cond_ros import sim
    builder = sim.ModelBuilder()
    ...
    simulator = sim.Simulator(builder.finalize(), options=sim.SimOptions(dt=0.01, solver="cond"))
    stats = simulator.step()

The sub-packages follow one step's data flow: ``kinematics`` (rigid bodies, robots, URDF, IK),
``dynamics`` (the step's linear system, potentials, robots, rods, FEM, integration), ``collision``
(colliders, contacts between owners, contact nodalization), ``solvers`` (one interface, seven
solvers), ``sensors`` (wrenches and F/T readings). Code outside ``cond_ros.sim`` imports only the
names listed in ``__all__`` here (``test/test_code_layout.py`` checks it).
"""
from . import jit
from .builder import ModelBuilder, body_point, box_inertia, particle, robot_link_point, sphere_inertia, world_point
from .collision.nodalization import ContactSet
from .dynamics.fem import (MESH_FORMATS, FemMaterial, SoftBody, TetMesh, add_soft_body, box_mesh, cylinder_mesh,
                           read_mesh, sphere_mesh, write_mesh)
from .dynamics.fem.elements import elastic_forces
from .dynamics.rod import Rod, RodMaterial, add_rod, add_rod_polyline, clamp_rod_end
from .kinematics.articulation import Articulation, ArticulationKinematics
from .kinematics.ik import rotation_error, solve_ik
from .kinematics.rigid import matrix_to_quat, quat_to_matrix
from .kinematics.urdf import load_urdf
from .model import ColliderType, Control, DampingPolicy, GeometryType, JointType, Model, PointKind, PotentialType, State
from .options import DEFAULT_DT, DEFAULT_SOLVER, SimOptions, override_options
from .sensors import (BodyMount, FTReading, FTSensor, FTSensorSpec, JointWrench, JointWrenchProbe, SimulatedFTSensor,
                      mount_body, spec_from_dict)
from .simulator import Simulator
from .solvers import SOLVERS, SimulationError, SolverBase, SolverCOND, SolverPenalty, StepStats, make_solver
from .validate import ModelError, finite_array

__all__ = [
    # plain data and the one options value
    "Model", "State", "Control", "PointKind", "PotentialType", "DampingPolicy", "JointType", "GeometryType",
    "ColliderType", "SimOptions", "override_options", "DEFAULT_DT", "DEFAULT_SOLVER",
    # building a model
    "ModelBuilder", "body_point", "box_inertia", "particle", "robot_link_point", "sphere_inertia", "world_point",
    "Articulation", "ArticulationKinematics", "load_urdf", "quat_to_matrix", "matrix_to_quat", "solve_ik",
    "rotation_error",
    "Rod", "RodMaterial", "add_rod", "add_rod_polyline", "clamp_rod_end",
    "FemMaterial", "SoftBody", "TetMesh", "add_soft_body", "box_mesh", "cylinder_mesh", "sphere_mesh", "read_mesh",
    "write_mesh", "MESH_FORMATS", "elastic_forces",
    # stepping
    "Simulator", "ContactSet", "SOLVERS", "SolverBase", "SolverCOND", "SolverPenalty", "StepStats", "make_solver",
    # sensors
    "BodyMount", "mount_body", "FTReading", "FTSensor", "FTSensorSpec", "JointWrench", "JointWrenchProbe",
    "SimulatedFTSensor", "spec_from_dict",
    # errors, input checks and the compilation policy
    "ModelError", "SimulationError", "finite_array", "jit",
]

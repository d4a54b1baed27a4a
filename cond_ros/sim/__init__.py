"""The physics core: no ROS import; usable as a plain Python library.

Typical use::

    from cond_ros import sim
    builder = sim.ModelBuilder()
    ...
    simulator = sim.Simulator(builder.finalize(), dt=0.01, solver="cond")
    stats = simulator.step()
"""
from .articulation import Articulation, ArticulationKinematics, JointType
from .builder import ModelBuilder, body_point, box_inertia, particle, robot_link_point, sphere_inertia, world_point
from .model import Control, DampingPolicy, Model, PointKind, PotentialType, State
from .rod import Rod, RodMaterial, add_rod, add_rod_polyline, clamp_rod_end
from .simulator import SimulationError, Simulator
from .solvers import SOLVERS, SolverBase, SolverCOND, SolverPenalty, StepStats, make_solver
from .urdf import load_urdf
from .validate import ModelError

__all__ = [
    "Articulation", "ArticulationKinematics", "JointType", "load_urdf",
    "Control", "DampingPolicy", "Model", "ModelBuilder", "ModelError", "PointKind", "PotentialType", "SOLVERS",
    "SimulationError", "Simulator", "SolverBase", "SolverCOND", "SolverPenalty", "State", "StepStats",
    "body_point", "box_inertia", "make_solver", "particle", "robot_link_point", "sphere_inertia", "world_point",
    "Rod", "RodMaterial", "add_rod", "add_rod_polyline", "clamp_rod_end",
]

"""A simulated F/T sensor on a robot joint: the transmitted wrench of each step through the measurement model."""
from __future__ import annotations

import numpy as np

from ..model import Model
from ..validate import ModelError
from .measurement import FTReading, FTSensor, FTSensorSpec
from .wrench import JointWrench, JointWrenchProbe


class SimulatedFTSensor:
    """Reads the wrench across the joint between ``spec.parent_link`` and ``spec.child_link`` of one robot.

    Call :meth:`update` after every simulator step with the states before and after it and the step's
    contacts; it returns the :class:`FTReading` (measured and noise-free) and the physical
    :class:`JointWrench` (world coordinates, including the force the environment exerts on the tool).
    """

    def __init__(self, model: Model, spec: FTSensorSpec, robot: int = 0):
        self.spec = spec
        self.robot = robot
        self.probe = JointWrenchProbe(model, robot, spec.child_link)
        art = model.robots[robot]
        parent = art.link_name[self.probe.parent]
        if parent != spec.parent_link:
            raise ModelError(f"ft_sensor {spec.name!r}: the parent of {spec.child_link!r} is {parent!r}, "
                             f"not {spec.parent_link!r}")
        self.base_rotation = art.base_transform[:3, :3].copy()
        self.sensor = FTSensor(spec)
        self.last: tuple[FTReading, JointWrench] | None = None

    def reset(self) -> None:
        self.sensor.reset()
        self.last = None

    def update(self, time: float, state_start, state_end, contacts, dt: float):
        """(reading, joint wrench) of the step from ``state_start`` to ``state_end`` at ``time``."""
        wrench = self.probe.measure(state_start, state_end, contacts, dt)
        reading = self.sensor.measure(time, wrench.force, wrench.torque, wrench.point, wrench.parent_pose,
                                      wrench.child_pose)
        self.last = (reading, wrench)
        return reading, wrench

    def reading_pose(self, wrench: JointWrench) -> np.ndarray:
        """World pose (4x4) of the frame the step's reading is expressed in (``spec.frame``: the child link,
        the parent link or the sensor's own frame on the child link)."""
        pose = wrench.parent_pose if self.spec.frame == "parent" else wrench.child_pose
        return pose @ self.spec.sensor_pose if self.spec.frame == "sensor" else pose

    def base_frame(self, vector_world: np.ndarray) -> np.ndarray:
        """A world vector in the robot's base frame."""
        return self.base_rotation.T @ vector_world

"""Simulated sensors: the physical quantity of a step (``wrench``), the measurement model that turns it
into a reading (``measurement``), both together on a robot joint (``ft_sensor``), and a body held by
an F/T sensor (``mount``)."""
from .ft_sensor import SimulatedFTSensor
from .measurement import (MEASURE_DIRECTIONS, SENSOR_FRAMES, FTReading, FTSensor, FTSensorSpec,
                          spec_from_dict)
from .mount import BodyMount, mount_body
from .wrench import JointWrench, JointWrenchProbe

__all__ = ["BodyMount", "mount_body", "JointWrench", "JointWrenchProbe", "SimulatedFTSensor", "FTReading", "FTSensor",
           "FTSensorSpec",
           "MEASURE_DIRECTIONS", "SENSOR_FRAMES", "spec_from_dict"]

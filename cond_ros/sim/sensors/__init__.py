"""Simulated sensors: the physical quantity of a step (``wrench``), the measurement model that turns it
into a reading (``measurement``), and both together on a robot joint (``ft_sensor``)."""
from .ft_sensor import SimulatedFTSensor
from .measurement import (MEASURE_DIRECTIONS, SENSOR_FRAMES, FTReading, FTSensor, FTSensorSpec,
                          spec_from_dict)
from .wrench import JointWrench, JointWrenchProbe

__all__ = ["JointWrench", "JointWrenchProbe", "SimulatedFTSensor", "FTReading", "FTSensor", "FTSensorSpec",
           "MEASURE_DIRECTIONS", "SENSOR_FRAMES", "spec_from_dict"]

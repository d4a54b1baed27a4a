"""Simulated sensors: measurement models that turn true physical quantities into readings."""
from .measurement import (MEASURE_DIRECTIONS, SENSOR_FRAMES, FTReading, FTSensor, FTSensorSpec,
                          spec_from_dict)

__all__ = ["FTReading", "FTSensor", "FTSensorSpec", "MEASURE_DIRECTIONS", "SENSOR_FRAMES", "spec_from_dict"]

"""Scenes: what is simulated, built on the physics core (which never imports this package).

``scene`` loads a scene YAML into a :class:`~cond_ros.scenes.scene.Scene` (model, simulator, sensors);
``motion`` is the scripted robot motion behind one protocol (``control(t)``); ``tool_trajectory`` turns a
recorded tool trajectory into joint targets by IK; ``registry`` names the built-in scenes (the YAML files of
``config/`` and a few made in code), loads them and edits one for a benchmark or a test; ``overlay`` changes
numbers of a scene file by key path or parameter name (``--overlay``, what ``cond-ros fit`` writes).
"""
from .motion import Motion
from .overlay import PARAMETER_PATHS, Overlay, current_value, expand, format_key_path, read_overlay
from .registry import (BOX_HALF, BOX_MASS, BUILT_IN, box_on_plane, cloth, edited_scene, load_named_scene, scene_names,
                       with_options)
from .scene import Scene, read_scene_yaml
from .tool_trajectory import ToolTrajectory

__all__ = ["BOX_HALF", "BOX_MASS", "BUILT_IN", "PARAMETER_PATHS", "Motion", "Overlay", "Scene", "ToolTrajectory",
           "box_on_plane", "cloth", "current_value", "edited_scene", "expand", "format_key_path", "load_named_scene",
           "read_overlay", "read_scene_yaml", "scene_names", "with_options"]

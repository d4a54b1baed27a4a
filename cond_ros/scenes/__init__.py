"""Scenes: what is simulated, built on the physics core (which never imports this package).

``scene`` loads a scene YAML into a :class:`~cond_ros.scenes.scene.Scene` (model, simulator, sensors) with its
scripted robot motion; ``tool_trajectory`` turns a recorded tool trajectory into joint targets by IK;
``registry`` names the built-in scenes (the YAML files of ``config/`` and a few made in code), loads them and
edits one for a benchmark or a test.
"""

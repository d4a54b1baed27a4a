"""Writes panda_cable_N40_8s.csv: the tool force of panda_cable at 40 segments over its first 8 s, solved by
primal Newton to 1e-9 m/s with contact compliance 1e-8 / 1e-6 of the Delassus estimate (normal / friction),
which is COND's hard contact model to within 1e-4 N here. test_panda_cable.py compares the scene's own solve
with it. Run it again (python test/sim/data/make_panda_cable_reference.py) when a change to the scene or the
physics is meant to move the cable's force, and say in the commit why the force moved.

``--shipped`` writes panda_cable_N40_8s_shipped.csv instead: the same run solved by the scene's own solver
(COND at the paper's settings), with the step's max penetration. It was written at commit c2260a0, before
issue 29's speed work, and guards it: a change made for speed must leave the tool force within 1e-4 N RMS of
it and the penetration as it was (test_panda_cable.py). Regenerate it only with a change that is meant to
move the physics, never to make a speed change pass.
"""
import pathlib
import sys

import numpy as np

from cond_ros.tools.runner import run_scene
from cond_ros.scenes.registry import edited_scene

SEGMENTS, STEPS = 40, 800
CONVERGED = {"name": "primal_newton", "tolerance": 1e-9, "max_iterations": 100, "relative_regularization": 1e-8,
             "relative_friction_regularization": 1e-6}
PATH = pathlib.Path(__file__).resolve().parent / "panda_cable_N40_8s.csv"
SHIPPED_PATH = PATH.with_name("panda_cable_N40_8s_shipped.csv")


def converged_run(solver=None):
    """(time, tool force (steps, 3), the run's :class:`RunResult`) of panda_cable at SEGMENTS over STEPS with
    ``solver`` (a scene YAML solver section; None: the scene's own)."""
    def edit(data):
        data["cables"][0]["segments"] = SEGMENTS
        if solver is not None:
            data["solver"] = dict(solver)
    result = run_scene(edited_scene("panda_cable", edit), STEPS, progress=False)
    force = np.column_stack([result.column(f"wrist_ft_tool_force_base_f{a}") for a in "xyz"])
    return result.column("time_s"), force, result


if __name__ == "__main__":
    if sys.argv[1:] == ["--shipped"]:
        t, force, result = converged_run()
        np.savetxt(SHIPPED_PATH, np.column_stack([t, force, result.column("max_penetration_m")]), delimiter=",",
                   header="time_s,fx,fy,fz,max_penetration_m", comments="", fmt="%.17g")
        print(f"written {SHIPPED_PATH}")
    elif sys.argv[1:]:
        sys.exit("usage: make_panda_cable_reference.py [--shipped]")
    else:
        t, force, _ = converged_run(CONVERGED)
        np.savetxt(PATH, np.column_stack([t, force]), delimiter=",", header="time_s,fx,fy,fz", comments="",
                   fmt=["%.2f", "%.9e", "%.9e", "%.9e"])
        print(f"written {PATH}")

"""Dynamics: the step's linear system (``assembly``), the potentials of form (7) that fill it, robots, rods and
FEM bodies as contributors to it, and the state update of eq. (4) (``integration``)."""

"""COND: the solver (``solver``), its velocity fixed-point iteration (``fixed_point``, Alg. 1-3), the step-size
matrix W (``weights``) and the coarse space of its two-level correction (``coarse_space``)."""

"""The impulse-space solvers around the Delassus operator G = J_c A^-1 J_c^T (``operator``): PGS, APGD,
per-contact bisection, non-smooth Newton and the compliant-constraint solver, on one base class."""

"""Isotropic linear elasticity: the moduli that both the FEM material and the rod's cross-section derive
from Young's modulus E and Poisson's ratio nu."""


def shear_modulus(youngs_modulus: float, poisson_ratio: float) -> float:
    """G = E / (2 (1 + nu)) [Pa] (Lame's mu)."""
    return youngs_modulus / (2.0 * (1.0 + poisson_ratio))

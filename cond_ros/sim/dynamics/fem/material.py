"""Material of a deformable solid: isotropic linear elasticity (co-rotated), density, friction, damping."""
from __future__ import annotations

import dataclasses

from ... import validate as V
from ..elasticity import shear_modulus


@dataclasses.dataclass(frozen=True)
class FemMaterial:
    """Isotropic material of a tetrahedral FEM body.

    Attributes:
        youngs_modulus: E [Pa], > 0.
        poisson_ratio: nu in [0, 0.5): at 0.5 the material is incompressible and linear tetrahedra lock
            (lambda is infinite), so it is refused rather than clamped.
        density: [kg/m^3], > 0.
        mu: friction coefficient of the surface.
        damping_time: damping policy 1 of Sec. II-A, a constant C = ``damping_time`` K (stiffness
            proportional, Rayleigh beta) [s]; the damping ratio of a mode of angular frequency w is
            damping_time * w / 2.
    """

    youngs_modulus: float
    poisson_ratio: float
    density: float
    mu: float = 0.5
    damping_time: float = 0.0

    def __post_init__(self):
        V.positive("fem.youngs_modulus", self.youngs_modulus)
        V.scalar("fem.poisson_ratio", self.poisson_ratio)
        if not 0.0 <= self.poisson_ratio < 0.5:
            raise V.ModelError(f"fem.poisson_ratio: must be in [0, 0.5) (0.5 is incompressible and locks linear "
                               f"tetrahedra), got {self.poisson_ratio}")
        V.positive("fem.density", self.density)
        V.non_negative("fem.mu", self.mu)
        V.non_negative("fem.damping_time", self.damping_time)

    @property
    def shear_modulus(self) -> float:
        """Lame's mu (G) [Pa]."""
        return shear_modulus(self.youngs_modulus, self.poisson_ratio)

    @property
    def lame_lambda(self) -> float:
        """Lame's first parameter [Pa]."""
        nu = self.poisson_ratio
        return self.youngs_modulus * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))

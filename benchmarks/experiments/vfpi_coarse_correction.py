"""Experiment (not product code): V-FPI with a contact-aware two-level correction on the soft-ball grip.

    python benchmarks/experiments/vfpi_coarse_correction.py [--damping 1.0] [--no-joints]

Issue 5's Table IV: COND's mean iterations on ``soft_ball`` are 139 / 135 / 96 at E = 0.1 / 1 / 10 MPa
against the paper's ~38. Plain V-FPI corrects a soft body's rigid motion (and a gripper joint moving with
its virtual nodes) by only ~w m per iteration, because W is set by the element stiffness. This script
captures COND's problem at a few steps and re-solves it in Python with, after every contact solve
(Alg. 2), a Galerkin correction on a coarse space P: the ball's 6 rigid modes and each robot joint
(its virtual nodes following by J_v). The coarse matrix P^T A P + sum_c P_c^T P_c / Gamma_c includes each
active contact's surrogate stiffness (normal row while sliding, all rows while sticking); without it the
correction diverges. The fixed point is unchanged (the correction vanishes when A v = b + J^T lambda).
It prints the iterations to 1e-5 of the shipped COND and of this variant ("!": not converged).
"""
import argparse

import numpy as np

from cond_ros.sim.dynamics import augmented_matvec
from cond_ros.sim.solvers import cond as cond_module
from cond_ros.sim.solvers.cond_kernels import LOCAL_SWEEPS, chebyshev_weight, solve_surrogate_contacts
from cond_ros.tools.fem_benchmarks import ball_stiffness_edit
from cond_ros.tools.scenes import edited_scene


def capture(e_mpa, step):
    """COND's linear system, contacts, W and warm start at ``step`` of soft_ball at E = ``e_mpa``."""
    scene = edited_scene("soft_ball", ball_stiffness_edit(e_mpa))
    sim = scene.simulator
    captured = {}
    solve = cond_module.SolverCOND.solve

    def spy(self, system, contacts, dt):
        v0 = self.initial_guess(system)
        if self.force_warm_start and system.vn_count:
            self._warm_start_owners(system, contacts, v0)
        captured.update(system=system, contacts=contacts, v0=v0, w=self._weights(system, contacts)[0],
                        q=sim.state.particle_q.copy())
        return solve(self, system, contacts, dt)
    cond_module.SolverCOND.solve = spy
    try:
        for _ in range(step):
            stats = sim.step(scene.script.control(sim.state.time))
    finally:
        cond_module.SolverCOND.solve = solve
    return captured, stats.iterations, sim.model.particle_count


def coarse_space(captured, particles, joints):
    system = captured["system"]
    n = len(captured["v0"])
    r = captured["q"] - captured["q"].mean(axis=0)
    cols = []
    for k in range(3):
        c = np.zeros(n)
        c[k:3 * particles:3] = 1.0
        cols.append(c)
        axis = np.eye(3)[k]
        c = np.zeros(n)
        c[:3 * particles] = np.cross(axis, r).ravel()
        cols.append(c)
    if joints:
        for j in range(3 * particles, system.dof_count):
            c = np.zeros(n)
            c[j] = 1.0
            for k in range(system.vn_count):
                owner = system.vn_dof[k]
                if owner <= j < owner + system.vn_size[k]:
                    c[system.dof_count + 3 * k:system.dof_count + 3 * k + 3] = system.vn_jac[k, :, j - owner]
            cols.append(c)
    return np.column_stack(cols)


def solve(captured, coarse=None, damping=1.0, tolerance=1e-5, max_iterations=2000, chebyshev_start=5,
          under_relaxation=0.9):
    """COND's V-FPI with Chebyshev (Alg. 1-3, strict, as cond_kernels.velocity_fixed_point), optionally
    with the coarse correction; returns (iterations, final residual)."""
    system, contacts, w = captured["system"], captured["contacts"], captured["w"]
    v = captured["v0"].copy()
    b = system.rhs()
    n = len(v)
    force = np.zeros((contacts.count, 3))

    def a_times(x):
        out = np.empty(n)
        augmented_matvec(system.indptr, system.indices, system.data, system.vn_dof, system.vn_size, system.vn_jac,
                         system.virtual_node_gain, x, out)
        return out
    if coarse is not None:
        galerkin = coarse.T @ np.column_stack([a_times(coarse[:, k]) for k in range(coarse.shape[1])])
    groups = contacts.group_start()
    v_prev, nu, rho, theta_prev = v.copy(), 1.0, 0.0, np.inf
    for it in range(max_iterations):
        v_star = v - w * (a_times(v) - b)
        v_next = v_star.copy()
        solve_surrogate_contacts(groups, contacts.dof_a, contacts.dof_b, contacts.frame,
                                 contacts.friction, contacts.offset, 0.0, 0, LOCAL_SWEEPS, w, v_star, v_next, force)
        if coarse is not None:
            matrix = galerkin.copy()
            for m in np.flatnonzero(force[:, 0] > 0.0):
                a, bb = contacts.dof_a[m], contacts.dof_b[m]
                gamma = w[a] + (w[bb] if bb >= 0 else 0.0)
                sticking = np.hypot(force[m, 1], force[m, 2]) < 0.999 * contacts.friction[m, 0] * force[m, 0]
                rows = contacts.frame[m] if sticking else contacts.frame[m, :1]
                rel = coarse[a:a + 3] - (coarse[bb:bb + 3] if bb >= 0 else 0.0)
                matrix += (rows @ rel).T @ (rows @ rel) / gamma
            contact_impulse = (v_next - v_star) / w  # J^T lambda, since W is diagonal here
            residual = b + contact_impulse - a_times(v_next)
            v_next += damping * coarse @ np.linalg.solve(matrix, coarse.T @ residual)
        nu = chebyshev_weight(it, chebyshev_start, rho, nu)
        v_next = nu * (v + under_relaxation * (v_next - v) - v_prev) + v_prev
        theta = np.linalg.norm(v_next - v)
        if theta_prev < np.inf and theta_prev > 0.0:
            rho = min(theta / theta_prev, 1.0)
        theta_prev, v_prev, v = theta, v, v_next
        if theta < tolerance or not np.isfinite(theta):
            break
    return it + 1, theta


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--damping", type=float, default=1.0)
    parser.add_argument("--no-joints", action="store_true", help="the ball's rigid modes only")
    args = parser.parse_args()
    for e in (0.1, 1.0, 10.0):
        row = []
        for step in (20, 90, 150, 200):
            captured, shipped, particles = capture(e, step)
            plain = solve(captured)
            coarse = solve(captured, coarse_space(captured, particles, not args.no_joints), args.damping)
            row.append(f"step {step}: {shipped} (python {plain[0]}) -> {coarse[0]}{'' if coarse[1] < 1e-5 else '!'}")
        print(f"E = {e:g} MPa | " + " | ".join(row), flush=True)


if __name__ == "__main__":
    main()

"""Closing the sim-to-real gap: ``cond-ros fit`` calibrates a scene's parameters to a recorded bag, and
``cond-ros sweep`` runs a scene over a grid or a random set of them.

- ``parameters``: what is moved (overlay settings), bounds, scales, the optimizer's unit box.
- ``rollout``: one rollout scored against the real recording (``cond-ros compare``'s alignment); the loss.
- ``problem``: the whole problem checked, and the first rollout run, before any worker starts.
- ``backends``: where rollouts run: this process, this machine's cores, or Ray.
- ``search``: CMA-ES over the unit box, then the polish; the sensitivity and standard errors at the fit.
- ``polish``: Levenberg-Marquardt on the rollouts' residual traces; least-squares standard errors.
- ``report``: the fitted overlay, fit.json, report.md and plots.
- ``sweep``: samples of parameter values and the benchmark's outputs per sample.

Public names are loaded on first use, so ``import cond_ros.fit`` stays cheap.
"""
from ..exports import lazy_exports

_EXPORTS = {
    "FitError": "parameters", "FitParameter": "parameters", "make_parameters": "parameters",
    "parse_bounds": "parameters",
    "Loss": "rollout", "RolloutSpec": "rollout", "RolloutResult": "rollout", "Evaluator": "rollout",
    "parse_window": "rollout",
    "FitProblem": "problem", "prepare_fit": "problem", "scene_document": "problem",
    "BACKENDS": "backends", "open_backend": "backends",
    "FitResult": "search", "fit": "search", "weakly_determined": "search",
    "check_search": "search",
    "write_fit_report": "report", "out_dir_problem": "report",
    "SWEEP_FILES": "sweep", "SweepParameter": "sweep", "SweepSpec": "sweep", "sweep_samples": "sweep",
    "write_sweep": "sweep",
}
__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)

"""Where rollouts run: this process, this machine's cores (``local``), or a Ray cluster (``ray``).

Every backend takes a batch of parameter sets and returns their results in the batch's order, whatever order
they finish in (``on_done()`` is called as each finishes, for a progress bar that moves with them), so a fit
is the same for a seed whatever the backend and the number of workers. Workers hold one evaluator each, made
once by the spec (``spec.evaluator()``: a fit's :class:`~cond_ros.fit.rollout.Evaluator`, a sweep's sample
runner); only parameter values and results travel per rollout.
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import signal

from .parameters import FitError

BACKENDS = ("local", "ray")
RAY_MISSING = "--backend ray needs Ray, an optional extra: pip install 'cond_ros[ray]'"

_worker_evaluator = None


def _start_worker(spec) -> None:
    """A local worker process: one numba thread (the workers already fill the cores), Ctrl-C left to the
    parent (which stops the fit between batches), one evaluator."""
    global _worker_evaluator
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import numba
    numba.set_num_threads(1)
    _worker_evaluator = spec.evaluator()


def _run_in_worker(settings: dict):
    return _worker_evaluator(settings)


class InProcess:
    """Rollouts one after another in this process (``--workers 1``)."""

    name = "local"

    def __init__(self, spec):
        self.workers = 1
        self.evaluator = spec.evaluator()

    def map(self, batch: list, on_done=None) -> list:
        out = []
        for settings in batch:
            out.append(self.evaluator(settings))
            if on_done is not None:
                on_done()
        return out

    def close(self) -> None:
        pass


class LocalPool:
    """Rollouts in ``workers`` processes of this machine (spawned: no state shared with this one)."""

    name = "local"

    def __init__(self, spec, workers: int):
        self.workers = workers
        self.pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker,
            initargs=(spec,))

    def map(self, batch: list, on_done=None) -> list:
        futures = [self.pool.submit(_run_in_worker, settings) for settings in batch]
        try:
            for _ in concurrent.futures.as_completed(futures):
                if on_done is not None:
                    on_done()
            return [future.result() for future in futures]
        except BaseException:  # Ctrl-C: let the running rollouts end, start no other
            for future in futures:
                future.cancel()
            raise

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class RayBackend:
    """Rollouts as Ray actors: a local Ray instance of ``workers`` CPUs started here (``address`` None), or
    ``workers`` actors on the cluster at ``address`` (default: one per CPU of the cluster)."""

    name = "ray"

    def __init__(self, spec, workers: int | None, address: str | None):
        try:
            import ray
        except ImportError as exc:
            raise FitError(f"{RAY_MISSING} ({exc})") from None
        self.ray = ray
        if address is None:
            ray.init(num_cpus=workers or os.cpu_count(), include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        self.workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actor = ray.remote(num_cpus=1)(_RayEvaluator)
        self.actors = [actor.remote(spec) for _ in range(self.workers)]

    def map(self, batch: list, on_done=None) -> list:
        refs = [self.actors[i % self.workers].run.remote(settings) for i, settings in enumerate(batch)]
        try:
            pending = list(refs)
            while pending:
                done, pending = self.ray.wait(pending, num_returns=1)
                if on_done is not None:
                    on_done()
            return self.ray.get(refs)
        except BaseException:
            for ref in refs:
                self.ray.cancel(ref)
            raise

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.ray.shutdown()


class _RayEvaluator:
    """A Ray actor around one evaluator (one numba thread: the actors fill the CPUs)."""

    def __init__(self, spec):
        import numba
        numba.set_num_threads(1)
        self.evaluator = spec.evaluator()

    def run(self, settings: dict):
        return self.evaluator(settings)


def open_backend(spec, backend: str = "local", *, workers: int | None = None, address: str | None = None):
    """The backend that runs the rollouts of ``spec`` (what has an ``evaluator()``); FitError for an unknown
    backend, a bad worker count, an address without Ray, or a missing Ray."""
    if backend not in BACKENDS:
        raise FitError(f"--backend: expected one of {', '.join(BACKENDS)}, got {backend!r}")
    if workers is not None and workers < 1:
        raise FitError(f"--workers: must be >= 1, got {workers}")
    if address is not None and backend != "ray":
        raise FitError("--address: joins a Ray cluster; it needs --backend ray")
    if backend == "ray":
        return RayBackend(spec, workers, address)
    workers = workers or os.cpu_count() or 1
    return InProcess(spec) if workers == 1 else LocalPool(spec, workers)

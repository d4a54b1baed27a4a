"""How long ``cond_sim`` takes from its start to its first step, with the kernels already cached (or not).

    python benchmarks/node_start.py [--venv DIR] [--cold] [--repeats 3] [--scene panda_cable_small] [--out FILE]

Without ``--venv`` it starts this environment's ``cond_sim``. With ``--venv DIR`` (an install of a wheel,
e.g. ``pip wheel --no-deps -w dist . && python -m venv --system-site-packages DIR && DIR/bin/pip install
--no-deps dist/*.whl``) it starts ``DIR/bin/cond_sim`` with ``DIR`` mounted read-only in a mount namespace
of its own, as a system install is to a user: its kernels then come from ``~/.cache/cond_ros/numba``.
``cond-ros compile`` runs first (untimed) so the cache is filled. Each start runs at real-time factor 0
and is stopped once the node has logged its ready line, which follows its warm-up step (kernels loaded,
scene built, one step taken): the time to that line is the time to the first step.

``--cold`` gives every start an empty numba cache of its own (``NUMBA_CACHE_DIR``) and skips the compile: the
first start after an install that did not run ``cond-ros compile``.

Writes every start's seconds and their median to ``benchmarks/results/node_start.json`` (or ``--out``).
Needs the ``ros`` extra, and for ``--venv`` ``unshare`` with permission to mount.
"""
import argparse
import json
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
TIMEOUT_S = 600.0


def read_only(directory: pathlib.Path, command: list) -> list:
    mount = f'mount --bind "{directory}" "{directory}" && mount -o remount,ro,bind "{directory}" && exec "$@"'
    return ["unshare", "--mount", "sh", "-c", mount, "sh", *command]


def time_to_ready(command: list, scene: str, env: dict) -> float:
    """Seconds from starting ``command`` (cond_sim) to its ready line; the node is then stopped."""
    ready = f"scene '{scene}'"
    with tempfile.TemporaryDirectory() as tmp:
        log_path = pathlib.Path(tmp) / "cond_sim.log"
        start = time.monotonic()
        with open(log_path, "w") as log:
            proc = subprocess.Popen([*command, "--ros-args", "-p", f"scene:={scene}", "-p", "real_time_factor:=0.0"],
                                    env=env, cwd=tmp, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while proc.poll() is None and time.monotonic() - start < TIMEOUT_S:
                if ready in log_path.read_text():
                    return time.monotonic() - start
                time.sleep(0.02)
            raise SystemExit(f"cond_sim did not get ready (exit code {proc.poll()}):\n{log_path.read_text()}")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=pathlib.Path, default=None, help="a venv with cond_ros installed from a wheel; "
                                                                        "started read-only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scene", default="panda_cable_small")
    parser.add_argument("--cold", action="store_true", help="each start compiles every kernel (an empty cache)")
    parser.add_argument("--out", type=pathlib.Path, default=RESULTS / "node_start.json")
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    env.setdefault("ROS_DOMAIN_ID", str(90 + os.getpid() % 10))
    if args.venv is not None:
        venv = args.venv.resolve()
        wrap = lambda command: read_only(venv, command)  # noqa: E731
        cond_ros, cond_sim = str(venv / "bin" / "cond-ros"), str(venv / "bin" / "cond_sim")
    else:
        wrap = lambda command: command  # noqa: E731
        bindir = pathlib.Path(sys.executable).parent
        cond_ros, cond_sim = str(bindir / "cond-ros"), str(bindir / "cond_sim")
    if not args.cold:
        compiled = subprocess.run(wrap([cond_ros, "compile", args.scene]), env=env, capture_output=True, text=True)
        if compiled.returncode != 0:
            raise SystemExit(f"cond-ros compile failed:\n{compiled.stdout}{compiled.stderr}")
        print(compiled.stdout.strip())
    seconds = []
    for k in range(args.repeats):
        with tempfile.TemporaryDirectory() as cache:
            start_env = dict(env, NUMBA_CACHE_DIR=cache) if args.cold else env
            seconds.append(time_to_ready(wrap([cond_sim]), args.scene, start_env))
        print(f"start {k + 1}: ready after {seconds[-1]:.2f} s", flush=True)
    result = dict(scene=args.scene, install="read-only wheel venv" if args.venv else "this environment",
                  cache="cold (empty)" if args.cold else "warm", ready_s=seconds,
                  ready_s_median=statistics.median(seconds), cores=os.cpu_count())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

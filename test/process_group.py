"""A command run the way the tests must run one: in its own process group, which is killed when it ends."""
import os
import signal
import subprocess


def run_in_group(argv, *, cwd=None, timeout: float, env=None, interrupt_after: float | None = None) -> tuple:
    """(exit code, output, whether it was interrupted) of ``argv``; ``interrupt_after`` [s]: send the group
    SIGINT then, as Ctrl-C does (if it is still running), and wait up to ``timeout`` more."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        if interrupt_after is not None:
            try:
                out, _ = proc.communicate(timeout=interrupt_after)
                return proc.returncode, out, False
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out, interrupt_after is not None
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()

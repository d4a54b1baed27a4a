"""What importing cond_ros sets for the whole process: freed arrays' memory stays for the next step's."""
import os
import sys

import pytest

from process_group import run_in_group

# a "step" that makes six 4 MB arrays and frees them together, 20 times: the minor page faults the second 20
# took (glibc returns free memory at the top of its heap beyond twice the largest array it has mapped)
_FAULTS = """
import resource, sys
if sys.argv[1] == "cond_ros":
    import cond_ros
import numpy as np
def loop():
    for _ in range(20):
        arrays = [np.empty(1 << 19) for _ in range(6)]
        for a in arrays:
            a[:] = 1.0
        del arrays
loop()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
loop()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


#: glibc's own malloc settings, which cond_ros leaves as a process's environment sets them
_MALLOC_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")


def _environment(**env) -> dict:
    return {**{k: v for k, v in os.environ.items() if k not in _MALLOC_VARIABLES}, **env}


def _faults(mode: str, **env) -> int:
    code, out, _ = run_in_group([sys.executable, "-c", _FAULTS, mode], timeout=120, env=_environment(**env))
    assert code == 0, out
    return int(out.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc settings")
def test_a_freed_array_is_not_faulted_in_again():
    # without cond_ros, glibc gives memory back and faults it in again (~3 500 faults here, 2026-11-28); with
    # it, the second 20 steps reuse the first 20's memory
    assert _faults("numpy") > 1000
    assert _faults("cond_ros") < 100


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc settings")
def test_the_environments_malloc_settings_win():
    code, out, _ = run_in_group([sys.executable, "-c", "import cond_ros; print(cond_ros.FREED_MEMORY_KEPT)"],
                                timeout=120, env=_environment(MALLOC_TRIM_THRESHOLD_="131072"))
    assert code == 0 and out.strip().splitlines()[-1] == "False", out
    assert _faults("cond_ros", MALLOC_TRIM_THRESHOLD_="131072") > 1000

"""Whether an output path can be written, asked before any work so that no run is lost to it at its end.

``os.access`` is not enough: it says yes to root everywhere, also in ``/proc`` or on a read-only mount.
The directory is therefore probed by creating (and removing) a temporary file in it. Nothing here imports
the rest of ``cond_ros``, so every layer may use it.
"""
from __future__ import annotations

import os
import tempfile


def output_problem(path, *, new: bool = False) -> str | None:
    """Why ``path`` cannot be written, or None. ``new``: it must not exist yet (a bag directory); else an
    existing file is overwritten, and a directory in its place is a problem."""
    path = os.path.abspath(str(path))
    directory = os.path.dirname(path)
    if new and os.path.lexists(path):
        return f"{path} exists already"
    if not new and os.path.isdir(path):
        return f"{path} is a directory"
    if not os.path.isdir(directory):
        return f"the directory {directory} does not exist"
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        return f"the directory {directory} is not writable ({exc.strerror or exc})"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"{path} is not writable"
    return None


def report_dir_problem(path, files) -> str | None:
    """Why the report directory ``path`` cannot be (re)written, or None: it may be new, or a report of the same
    kind (holding every one of ``files``), which is replaced; anything else there is left alone."""
    out = os.path.abspath(str(path))
    if os.path.lexists(out) and not (os.path.isdir(out) and all(os.path.isfile(os.path.join(out, f)) for f in files)):
        return f"{out} exists and is not such a report ({', '.join(files)}); choose another --out"
    return output_problem(os.path.join(out, files[0])) if os.path.isdir(out) else output_problem(out, new=True)


def write_report_dir(path, files, write) -> str:
    """Write a report directory at ``path`` whole or not at all: ``write(tmp)`` fills a temporary directory
    beside it, which then replaces ``path`` (see :func:`report_dir_problem`, raised as FileExistsError or
    OSError). Returns the directory's absolute path."""
    import shutil
    out = os.path.abspath(str(path))
    problem = report_dir_problem(out, files)
    if problem is not None:
        raise (FileExistsError if os.path.lexists(out) else OSError)(problem)
    parent, name = os.path.dirname(out), os.path.basename(out)
    tmp = tempfile.mkdtemp(prefix=f".{name}.", suffix=".partial", dir=parent)
    try:
        write(tmp)
        if os.path.lexists(out):
            shutil.rmtree(out)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out

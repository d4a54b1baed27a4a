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

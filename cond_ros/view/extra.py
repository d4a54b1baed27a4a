"""Whether the ``view`` extra (viser) is installed, and the one line that says how to get it."""
from __future__ import annotations

import importlib.util

VIEW_EXTRA = "pip install 'cond_ros[view]' (or pip install viser)"


class ViewerUnavailable(ImportError):
    """viser is not installed: the message names the extra."""


def viewer_missing() -> str | None:
    """The one-line message naming the extra when viser is not installed, else None."""
    return None if importlib.util.find_spec("viser") is not None else f"the viewer needs viser; {VIEW_EXTRA}"


def import_viser():
    try:
        import viser
    except ImportError as exc:
        raise ViewerUnavailable(f"the viewer needs viser ({exc}); {VIEW_EXTRA}") from None
    return viser

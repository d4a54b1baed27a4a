"""The browser 3D view (viser, the ``view`` extra): a scene live beside the loop that steps it (``cond-ros run
--view``, the node's ``view`` parameter), or a recorded run or bag played back (``cond-ros view``).

``layout`` turns a scene and its state into plain arrays (what to draw); ``viewer`` draws them with viser and
turns its buttons into calls on a controls object; ``live`` samples a running simulation on its own thread;
``run_control`` is the play / pause / step / reset state of a ``cond-ros run``; ``playback`` plays back a run's
CSV or a bag; ``command`` is the command line. Public names load on first use: ``cond-ros --help`` imports
neither viser nor the physics.
"""
from ..exports import lazy_exports

_EXPORTS = {
    "Frame": "layout", "FrameSampler": "layout", "Layout": "layout", "scene_layout": "layout",
    "RunControl": "run_control", "LatestStep": "live", "LiveView": "live", "SceneViewer": "viewer",
    "VIEW_EXTRA": "extra", "ViewerUnavailable": "extra", "viewer_missing": "extra",
    "add_view_options": "command", "add_view_parser": "command", "run_viewed": "command",
    "view_option_problems": "command", "ReplayView": "command",
}
__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)

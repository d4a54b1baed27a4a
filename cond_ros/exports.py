"""A package's public names, loaded on first use (PEP 562), so that importing the package stays cheap and the
ROS layer's names can be listed without importing rclpy."""
from __future__ import annotations

import importlib


def lazy_exports(package: str, exports: dict):
    """``(__getattr__, __all__)`` for ``package``, whose public name ``N`` lives in submodule ``exports[N]``."""

    def __getattr__(name: str):
        if name in exports:
            return getattr(importlib.import_module(f".{exports[name]}", package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__, sorted(exports)

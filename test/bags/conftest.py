"""Fixtures of the bag tests: they live in bag_helpers.py, importable under a name of its own."""
from bag_helpers import *  # noqa: F401,F403 (fixtures are found by name in this module)

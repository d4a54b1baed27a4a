"""``python -m cond_ros.cli``: the ``cond-ros`` command."""
import sys

from . import main

if __name__ == "__main__":  # not when a spawned worker process (cond-ros fit) imports its parent's main module
    sys.exit(main())

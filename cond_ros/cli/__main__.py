"""``python -m cond_ros.cli``: the ``cond-ros`` command."""
import sys

from . import main

sys.exit(main())

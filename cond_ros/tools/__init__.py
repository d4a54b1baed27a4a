"""Command-line tools: scenes, benchmarks, plots (the ``cond-ros`` command)."""

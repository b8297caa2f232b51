# Kernel docstrings are collected as doctests through the public functions
# generated from them (tensormodes.add ...); collecting the _ops modules too
# would run every example twice.
collect_ignore_glob = ["src/tensormodes/_ops/*.py"]

# Doctests are collected from the op kernels (each op's docstring, once); the
# package __init__ is skipped because its lazily generated functions share
# those docstrings and appear in its namespace only once used.
collect_ignore = ["src/tensormodes/__init__.py"]
# tests/data holds fixture files and the scripts that wrote them (with PyTorch): not test modules.
collect_ignore_glob = ["tests/data/*.py"]

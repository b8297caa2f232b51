"""The package's version (the one in ``pyproject.toml``).

>>> import tensormodes as tm
>>> tm.__version__
'0.1.0'
"""

__version__ = "0.1.0"

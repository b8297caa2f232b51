"""PyTorch's NumPy-style names for ops declared in their own families (``torch.divide`` is
``div``, ``torch.arccos`` is ``acos`` ...): one line each, each with the Tensor method and
in-place method PyTorch has, and the backward node and ATen op of its target, as PyTorch's
composite aliases record them.

>>> import tensormodes as tm
>>> tm.divide(tm.tensor([3.0]), 2).tolist(), tm.tensor([0.5]).arccos().tolist()
([1.5], [1.0471975803375244])
"""

from __future__ import annotations

from . import arithmetic, binary_math, comparison, joining, reduction, unary_math  # noqa: F401 - they declare the named ops
from .registry import OPS, alias


def _numpy_name(name: str, of: str, *, method: bool = True, inplace_function: bool = False) -> None:
    """Declare ``tensormodes.<name>`` (and ``Tensor.<name>`` / ``Tensor.<name>_`` if ``method``)
    as the op ``of``; ``inplace_function``: ``tensormodes.<name>_`` too."""
    target = OPS[of]
    alias(name, of=of, method=method, inplace=method, inplace_function=inplace_function, node=of,
          samples=target.samples, doc=f"Alias for ``tensormodes.{target.function}``.\n\n" + target.doc.split("\n\n")[0])


for _name, _of in (("absolute", "abs"), ("arctan2", "atan2"), ("divide", "div"), ("multiply", "mul"),
                   ("subtract", "sub"), ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                   ("less_equal", "le"), ("not_equal", "ne")):
    _numpy_name(_name, _of)
# Their in-place forms are functions too, as PyTorch declares them (``torch.arccos_``).
for _name, _of in (("arccos", "acos"), ("arccosh", "acosh"), ("arcsin", "asin"), ("arcsinh", "asinh"),
                   ("arctan", "atan"), ("arctanh", "atanh"), ("fix", "trunc")):
    _numpy_name(_name, _of, inplace_function=True)
_numpy_name("row_stack", "vstack", method=False)
_numpy_name("trapz", "trapezoid", method=False)

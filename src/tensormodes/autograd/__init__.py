"""Reverse-mode automatic differentiation.

Operations on tensors that require grad are recorded (while grad mode is on)
into a graph of backward nodes; ``backward()`` / ``grad()`` walk it. Gradient
formulas are declared with each op in the op table and are written with
public ops, so higher-order gradients (``create_graph=True``) and modes work
through them.

>>> import tensormodes as tm
>>> w = tm.tensor([[1., 2.], [3., 4.]], requires_grad=True)
>>> loss = (w * w).sum()
>>> g, = tm.autograd.grad(loss, w, create_graph=True)
>>> g.tolist()
[[2.0, 4.0], [6.0, 8.0]]
"""

from __future__ import annotations

from collections.abc import Callable

from .._api import build as _build
from .._api.tensor import Tensor
from .._autograd.engine import RemovableHandle
from .._autograd.function import Function, FunctionCtx
from .._autograd.grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .._autograd.graph import Node
from ..overrides import TorchFunctionMode, handle_torch_function, has_torch_function, is_tensor_like, resolve_name
from . import anomaly_mode, functional, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .api import backward, grad
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

__all__ = ["backward", "grad", "Function", "FunctionCtx", "BackwardOverride", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "gradcheck", "gradgradcheck",
           "GradcheckError", "Node", "RemovableHandle", "functional", "graph", "Variable", "variable",
           "is_tensor_like", "has_torch_function", "handle_torch_function", "anomaly_mode", "detect_anomaly",
           "set_detect_anomaly"]


def variable(*args, **kwargs):
    """PyTorch's deprecated ``torch.autograd.variable(...)``: raises, pointing to ``tensor``."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


# As PyTorch: the function shadows the submodule ``autograd.variable``, and names its class (FX
# writes ``Variable``'s calls as ``<module>.Variable(...)``).
variable.Variable = Variable


class BackwardOverride(TorchFunctionMode):
    """A mode that swaps the gradient rule of chosen functions within its scope.

    This is the override protocol's third purpose: vary backward semantics
    without adding arguments to functions. Inside the ``with`` block every call
    of a chosen function (as a function or as a method) is replaced by
    ``rules[func]`` with the same arguments — typically the ``apply`` of an
    ``autograd.Function`` whose forward matches the original and whose backward
    is the new rule. Declares ``handled_functions``, so every other call skips
    this mode at almost no cost.

    >>> import tensormodes as tm
    >>> class StraightThrough(tm.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x.round()
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         return grad
    >>> x = tm.tensor([0.4, 1.6], requires_grad=True)
    >>> with tm.autograd.BackwardOverride({tm.round: StraightThrough.apply}):
    ...     y = x.round() * 3
    >>> y.sum().backward(); x.grad.tolist()
    [3.0, 3.0]
    """

    def __init__(self, rules: dict[Callable, Callable]) -> None:
        self.rules: dict = {}
        for func, replacement in rules.items():
            self.rules[func] = replacement
            counterpart = _method_counterpart(func)
            if counterpart is not None:
                self.rules.setdefault(counterpart, replacement)
        self.handled_functions = frozenset(self.rules)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Route chosen functions to their replacement, everything else through unchanged."""
        return self.rules.get(func, func)(*args, **(kwargs or {}))

    def __repr__(self) -> str:
        return f"BackwardOverride({sorted(resolve_name(f) or repr(f) for f in self.rules)})"


def _method_counterpart(func):
    """``Tensor.round`` for ``tensormodes.round`` and the reverse (None if there is none)."""
    name = resolve_name(func) or ""
    owner, _, short = name.rpartition(".")
    try:
        if owner == "tensormodes":
            return getattr(Tensor, short)
        if owner == "tensormodes.Tensor":
            return _build.public_function(short)
    except AttributeError:
        pass
    return None

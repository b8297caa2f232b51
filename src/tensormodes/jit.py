"""``tensormodes.jit``: there is no TorchScript here. ``script`` and ``trace`` raise a
``NotImplementedError`` naming the alternative, ``tensormodes.fx`` (graphs of calls that
can be read, transformed and run again); the helpers model code calls in its forward
(``is_scripting``, ``is_tracing``, ``ignore``, ``unused``, ``export``, ``annotate``) answer
as PyTorch's do outside TorchScript.

>>> import tensormodes as tm
>>> tm.jit.is_scripting()
False
>>> tm.jit.script(tm.nn.Linear(2, 2))  # doctest: +ELLIPSIS
Traceback (most recent call last):
NotImplementedError: tensormodes.jit.script is not supported: ... use tensormodes.fx.symbolic_trace(model) ...
"""

from __future__ import annotations

__all__ = ["script", "trace", "is_scripting", "is_tracing", "ignore", "unused", "export", "annotate"]

_ALTERNATIVE = ("tensormodes has no TorchScript compiler. To capture a model as a graph, use "
                "tensormodes.fx.symbolic_trace(model) (the graph can be printed, transformed and run again).")


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """Raises ``NotImplementedError``: use ``tensormodes.fx.symbolic_trace`` instead."""
    raise NotImplementedError(f"tensormodes.jit.script is not supported: {_ALTERNATIVE}")


def trace(func, example_inputs=None, optimize=None, check_trace: bool = True, check_inputs=None,
          check_tolerance: float = 1e-05, strict: bool = True, _force_outplace: bool = False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None, _store_inputs: bool = True):
    """Raises ``NotImplementedError``: use ``tensormodes.fx.symbolic_trace`` instead."""
    raise NotImplementedError(f"tensormodes.jit.trace is not supported: {_ALTERNATIVE}")


def is_scripting() -> bool:
    """False: code never runs under TorchScript here."""
    return False


def is_tracing() -> bool:
    """False: code never runs under the TorchScript tracer here."""
    return False


def ignore(drop=False, **kwargs):
    """Decorator leaving a function as it is (TorchScript would not compile it).

    >>> import tensormodes as tm
    >>> @tm.jit.ignore
    ... def f(x):
    ...     return x + 1
    >>> f(1)
    2
    """
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """Decorator leaving a function as it is."""
    return fn


def export(fn):
    """Decorator leaving a method as it is."""
    return fn


def annotate(the_type, the_value):
    """Returns ``the_value`` (a type hint for TorchScript, which is not here)."""
    return the_value

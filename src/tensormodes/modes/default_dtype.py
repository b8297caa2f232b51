"""``DefaultDtypeMode``: a scope with another default floating dtype, restored exactly on exit.

>>> import tensormodes as tm
>>> from tensormodes.modes import DefaultDtypeMode
>>> with DefaultDtypeMode(tm.float64):
...     tm.tensor([1.0]).dtype
tensormodes.float64
>>> tm.tensor([1.0]).dtype
tensormodes.float32
"""

from __future__ import annotations

from .. import _dtype
from ..overrides import TorchFunctionMode

__all__ = ["DefaultDtypeMode"]


class DefaultDtypeMode(TorchFunctionMode):
    """Within its scope, ``tm.get_default_dtype()`` is ``dtype`` (float16, bfloat16, float32 or
    float64): Python floats and float factories produce it, as after
    ``tm.set_default_dtype(dtype)``.

    The scope's default is seen by the thread or task that entered it (and by the tasks it
    creates inside), not by other threads: outside such scopes the default dtype is
    process-wide, as PyTorch's. The scope restores exactly the default it replaced, on exit
    and on exceptions, even if the code inside called ``set_default_dtype``. It is a mode
    (it shows on the mode stack and composes with other modes) that declares no functions,
    so it costs nothing per call.

    >>> import tensormodes as tm
    >>> from tensormodes.modes import DefaultDtypeMode
    >>> with DefaultDtypeMode(tm.float16):
    ...     tm.set_default_dtype(tm.float64)
    >>> tm.get_default_dtype()
    tensormodes.float32
    """

    handled_functions = frozenset()

    def __init__(self, dtype: _dtype.dtype) -> None:
        if type(dtype) is not _dtype.dtype:
            raise TypeError(f"DefaultDtypeMode(): argument 'dtype' must be a tensormodes.dtype, not "
                            f"{type(dtype).__name__}")
        if not dtype.is_floating_point:
            raise TypeError("only floating-point types are supported as the default type")
        self.dtype = dtype

    def _scoped_context_vars(self) -> tuple:
        # A default cell of the scope's own (see tensormodes._dtype): set_default_dtype inside
        # the scope writes into it, and the cell the scope replaced comes back on exit.
        return ((_dtype._DEFAULT_DTYPE, _dtype.default_dtype_cell(self.dtype)),)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Never called (no function is declared); passes a call on unchanged."""
        return func(*args, **(kwargs or {}))

    def __repr__(self) -> str:
        return f"DefaultDtypeMode({self.dtype!r})"

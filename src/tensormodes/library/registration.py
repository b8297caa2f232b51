"""Registering the parts of a custom op by name (PyTorch's ``torch.library.register_fake``,
``register_autograd``, ``register_kernel``, ``register_torch_dispatch``), and the older
``Library`` / ``define`` / ``impl`` API in its common subset.

>>> import tensormodes as tm
>>> define("doc::halve", "(Tensor x) -> Tensor")
>>> @impl("doc::halve", "cpu")
... def _(x):
...     return x / 2
>>> tm.ops.doc.halve(tm.tensor([4.0]))
tensor([2.])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .custom_ops import CustomOpDef, custom_op_of

__all__ = ["register_fake", "register_autograd", "register_kernel", "register_torch_dispatch", "Library", "define",
           "impl"]


def _custom(op, what: str) -> CustomOpDef:
    custom = custom_op_of(op)
    if custom is not None:
        return custom
    if isinstance(op, str):
        raise RuntimeError(f"operator {op} does not exist")
    raise NotImplementedError(f"{what}(op, ...): op must be a custom op (made by tensormodes.library.custom_op or "
                              f"define), or its name 'namespace::name'; the table's ops declare theirs in "
                              f"tensormodes/_ops (got {op!r})")


def register_fake(op, func: Callable | None = None, /, *, lib=None, _stacklevel: int = 1):
    """Register the fake rule of custom op ``op`` (see ``CustomOpDef.register_fake``); usable as a
    decorator."""
    custom = _custom(op, "register_fake")
    return custom.register_fake if func is None else custom.register_fake(func)


def register_autograd(op, backward: Callable, /, *, setup_context: Callable | None = None, lib=None) -> None:
    """Register the backward formula of custom op ``op`` (see ``CustomOpDef.register_autograd``).

    >>> import tensormodes as tm
    >>> @tm.library.custom_op("doc::square", mutates_args=())
    ... def square(x: tm.Tensor) -> tm.Tensor:
    ...     return x * x
    >>> def setup_context(ctx, inputs, output):
    ...     ctx.save_for_backward(inputs[0])
    >>> def backward(ctx, grad):
    ...     x, = ctx.saved_tensors
    ...     return grad * 2 * x
    >>> register_autograd("doc::square", backward, setup_context=setup_context)
    >>> x = tm.tensor([3.0], requires_grad=True)
    >>> square(x).backward(); x.grad
    tensor([6.])
    """
    _custom(op, "register_autograd").register_autograd(backward, setup_context=setup_context)


def register_kernel(op, device_types, func: Callable | None = None, /, *, lib=None):
    """Register the kernel of custom op ``op`` for ``device_types`` (see
    ``CustomOpDef.register_kernel``); usable as a decorator."""
    return _custom(op, "register_kernel").register_kernel(device_types, func)


def register_torch_dispatch(op, torch_dispatch_class, func: Callable | None = None, /, *, lib=None):
    """Register what custom op ``op`` does for one ``__torch_dispatch__`` subclass or
    ``TorchDispatchMode`` type: ``func(cls_or_mode, func, types, args, kwargs)``, run instead of its
    ``__torch_dispatch__`` for this op; usable as a decorator."""
    return _custom(op, "register_torch_dispatch").register_torch_dispatch(torch_dispatch_class, func)


# -- Library, define, impl -----------------------------------------------------------------------

# PyTorch's dispatch keys ``impl`` accepts here: a kernel for a device type (None: every one), or
# the fake rule ("Meta").
_KEYS = {"": None, "CompositeExplicitAutograd": None, "CPU": "cpu", "Meta": "meta"}


class Library:
    """A namespace of ops defined by schema (PyTorch's ``torch.library.Library``): ``kind`` is
    ``"DEF"`` or ``"FRAGMENT"``; ``define`` declares an op, ``impl`` gives it a kernel
    (dispatch keys ``"CPU"``, ``"CompositeExplicitAutograd"``) or its fake rule (``"Meta"``)."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in ("DEF", "FRAGMENT", "IMPL"):
            raise ValueError("Unsupported kind: ", kind)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._ops: list[CustomOpDef] = []

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define op ``name(args) -> returns`` in this library's namespace; returns its name."""
        name, _, rest = schema.partition("(")
        op = CustomOpDef(self.ns, name.strip(), "(" + rest, None, tags)
        self._ops.append(op)
        return name.strip()

    def impl(self, op_name, fn: Callable, dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        """Register ``fn`` for op ``op_name`` of this namespace under ``dispatch_key``."""
        key = dispatch_key or self.dispatch_key
        if key not in _KEYS:
            raise NotImplementedError(f"Library.impl: dispatch key {key!r} is not supported here; use "
                                      f"{sorted(k for k in _KEYS if k)} (and register_autograd for gradients)")
        name = op_name if isinstance(op_name, str) else op_name._custom._name
        custom = _custom(name if "::" in name else f"{self.ns}::{name}", "impl")
        if _KEYS[key] == "meta":
            custom.register_fake(fn)
        else:
            custom.register_kernel(_KEYS[key], fn)

    def _destroy(self) -> None:
        self._ops.clear()


def define(qualname: str, schema: str, *, lib=None, tags=()) -> None:
    """Define op ``qualname`` (``"mylib::foo"``) with ``schema`` (``"(Tensor x) -> Tensor"``)."""
    namespace, name = qualname.split("::")
    (lib or Library(namespace, "FRAGMENT")).define(name + schema, tags=tags)


def impl(qualname: str, types: str | Sequence[str], func: Callable | None = None, *, lib=None):
    """Register ``func`` as the kernel of op ``qualname`` for device ``types`` (``"cpu"``), or as
    its fake rule for ``"meta"``; usable as a decorator."""

    def register(func: Callable) -> Callable:
        custom = _custom(qualname, "impl")
        kinds = [types] if isinstance(types, str) else list(types)
        for kind in kinds:
            kind = kind.lower()
            if kind == "meta":
                custom.register_fake(func)
            else:
                custom.register_kernel(None if kind in ("default", "compositeexplicitautograd") else kind, func)
        return func

    return register if func is None else register(func)

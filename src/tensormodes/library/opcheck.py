"""``opcheck``: PyTorch's tests of a custom op's declaration, run on given arguments.

* ``test_schema`` — the op writes only into the arguments its schema declares mutable (and,
  checked on every call, returns no input nor a view of one);
* ``test_autograd_registration`` — an input that requires grad meets an autograd
  registration (every ``custom_op`` has one: its gradient or an error at backward time);
* ``test_faketensor`` — the fake rule runs, and beyond PyTorch: its results have the real
  results' shapes, dtypes and strides (as ``tensormodes.meta.validate`` checks the table's
  meta rules), on meta tensors — the rule FakeTensorMode runs;
* ``test_aot_dispatch_static`` / ``test_aot_dispatch_dynamic`` — there is no AOTAutograd
  here: the fake rule must run (as tracing needs it), and with inputs that require grad the
  op's backward must run and give each such input a gradient of its shape.

>>> import tensormodes as tm
>>> @tm.library.custom_op("doc::double", mutates_args=())
... def double(x: tm.Tensor) -> tm.Tensor:
...     return x * 2
>>> _ = double.register_fake(lambda x: tm.empty_like(x))
>>> opcheck(double, (tm.ones(3),))
{'test_schema': 'SUCCESS', 'test_autograd_registration': 'SUCCESS', 'test_faketensor': 'SUCCESS', \
'test_aot_dispatch_dynamic': 'SUCCESS'}
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._api import namespace as tm
from .._dispatch.aten import OpOverload
from ..autograd import grad as autograd_grad
from .custom_ops import custom_op_of

__all__ = ["opcheck", "OpCheckError", "MetadataMismatchError", "DEFAULT_TEST_UTILS", "ALL_TEST_UTILS"]

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
ALL_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_static",
                  "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    """An ``opcheck`` test failed (PyTorch's ``OpCheckError``); ``__cause__`` is the failure."""


class MetadataMismatchError(Exception):
    """The fake rule's results differ from the real ones in shape, dtype or strides."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __repr__(self) -> str:
        return f"MetadataMismatchError(reason={self.reason!r})"


def opcheck(op, args: tuple, kwargs: dict | None = None, *, test_utils: str | Sequence[str] = DEFAULT_TEST_UTILS,
            raise_exception: bool = True, rtol: float | None = None, atol: float | None = None) -> dict:
    """Check that a custom op was registered correctly (PyTorch's ``torch.library.opcheck``),
    running ``op(*args, **kwargs)`` for each test of ``test_utils`` on copies of the arguments.
    Returns ``{test: "SUCCESS" or the exception}``; with ``raise_exception`` the first failure
    raises ``OpCheckError`` naming the test and what differed."""
    if (rtol is None) ^ (atol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify both")
    kwargs = {} if kwargs is None else kwargs
    custom = custom_op_of(op)
    overload = custom._opoverload if custom is not None else op
    if not isinstance(overload, OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of torch._ops.OpOverload, e.g. "
                         f"torch.ops.aten.sin.default, got {type(op)}")
    if test_utils == "ALL":
        test_utils = ALL_TEST_UTILS
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils).issubset(ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be subset of "
                         f"{ALL_TEST_UTILS} but it was not")
    results = {}
    for name in test_utils:
        try:
            _TESTS[name](overload, args, kwargs)
            results[name] = "SUCCESS"
        except Exception as error:  # noqa: BLE001 - every failure is reported, as PyTorch's opcheck does
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {error} (scroll up for stack trace)") \
                    from error
            results[name] = error
    return results


def _map_tensors(value, fn):
    if isinstance(value, tm.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map_tensors(v, fn) for k, v in value.items()}
    return value


def _copy(t):
    copy = t.detach().clone()
    return copy.requires_grad_() if t.requires_grad else copy


def _on_meta(t):
    return tm.empty_strided(tuple(t.shape), t.stride(), dtype=t.dtype, device="meta")


def _tensors(value) -> list:
    found = []
    _map_tensors(value, found.append)
    return found


def _test_schema(op, args: tuple, kwargs: dict) -> None:
    args, kwargs = _map_tensors((args, kwargs), _copy)
    schema = op._schema
    bound = dict(zip((a.name for a in schema.arguments if not a.kwarg_only), args))
    bound.update(kwargs)
    before = {name: [t._data.copy() for t in _tensors(value)] for name, value in bound.items()}
    op(*args, **kwargs)
    mutable = {a.name for a in schema.arguments if a.is_write}
    for name, value in bound.items():
        if name in mutable:
            continue
        for old, t in zip(before[name], _tensors(value)):
            if old.shape != t._data.shape or not np.array_equal(old, t._data, equal_nan=old.dtype.kind in "fc"):
                raise RuntimeError(f"Argument {name} is not defined as mutable but was mutated")


def _test_autograd_registration(op, args: tuple, kwargs: dict) -> None:
    # A custom op always answers for autograd: with its registered gradient, or with PyTorch's error
    # at backward time; it never silently drops an input's gradient.
    if custom_op_of(op) is None and any(t.requires_grad for t in _tensors((args, kwargs))):
        raise RuntimeError(f"{op.name()}: not a custom op; its gradient is declared in tensormodes/_ops")


def _test_faketensor(op, args: tuple, kwargs: dict) -> None:
    real = op(*_map_tensors(args, _copy), **_map_tensors(kwargs, _copy))
    fake = op(*_map_tensors(args, _on_meta), **_map_tensors(kwargs, _on_meta))
    real_items = real if isinstance(real, (list, tuple)) else (real,)
    fake_items = fake if isinstance(fake, (list, tuple)) else (fake,)
    if len(real_items) != len(fake_items):
        raise MetadataMismatchError(f"When comparing the output of {op} on FakeTensor and concrete Tensors, found "
                                    f"{len(fake_items)} fake outputs and {len(real_items)} real ones")
    for r, f in zip(real_items, fake_items):
        if isinstance(r, tm.Tensor) != isinstance(f, tm.Tensor):
            raise MetadataMismatchError(f"When comparing the output of {op} on FakeTensor and concrete Tensors, "
                                        f"found {type(f).__name__} where the real output is {type(r).__name__}")
        if isinstance(r, tm.Tensor):
            _compare_metadata(op, r, f)


def _compare_metadata(op, real, fake) -> None:
    prefix = f"When comparing the output of {op} on FakeTensor and concrete Tensors, found mismatched tensor metadata: "
    if real.shape != fake.shape:
        raise MetadataMismatchError(f"{prefix}Shapes {real.shape} and {fake.shape} are not equal!")
    if real.dtype != fake.dtype:
        raise MetadataMismatchError(f"{prefix}Dtypes {real.dtype} and {fake.dtype} are not equal!")
    real_strides, fake_strides = real.stride(), fake.stride()
    for i, (a, b, size) in enumerate(zip(real_strides, fake_strides, real.shape)):
        if a != b and size > 1:  # PyTorch ignores the stride of a dimension of size 0 or 1
            raise MetadataMismatchError(f"{prefix}Stride mismatch! Strides are {real_strides} and {fake_strides} "
                                        f"(mismatched at {i})!")


def _test_aot_dispatch(op, args: tuple, kwargs: dict) -> None:
    op(*_map_tensors(args, _on_meta), **_map_tensors(kwargs, _on_meta))  # tracing needs the fake rule
    args, kwargs = _map_tensors((args, kwargs), _copy)
    inputs = [t for t in _tensors((args, kwargs)) if t.requires_grad]
    out = op(*args, **kwargs)
    outputs = [t for t in _tensors(out) if t.requires_grad]
    if not inputs or not outputs:
        return
    grads = autograd_grad(outputs, inputs, [tm.ones_like(o) for o in outputs], allow_unused=True)
    for t, g in zip(inputs, grads):
        if g is not None and g.shape != t.shape:
            raise RuntimeError(f"{op}: the gradient of an input of shape {list(t.shape)} has shape {list(g.shape)}")


_TESTS = {"test_schema": _test_schema, "test_autograd_registration": _test_autograd_registration,
          "test_faketensor": _test_faketensor, "test_aot_dispatch_static": _test_aot_dispatch,
          "test_aot_dispatch_dynamic": _test_aot_dispatch}

"""Fake tensors whose sizes hold an unbacked ``SymInt`` (``torch.zeros(n)`` with ``n = t.item()``
under ``make_fx(f, tracing_mode="fake")``), and symbolic scalars as op arguments (``x * n``).

The meta rules are written for integer sizes, so an op meeting an unbacked size runs its meta
rule at three stand-in values of the symbol (every size an affine ``a*u0 + b`` of it, as sizes
made from ``u0`` by factories, pointwise ops and reductions are) and reads each size and stride
of the result back as the affine function of the symbol the three runs agree on. That is exact
for ops whose result sizes are affine in their input sizes, so only those take symbolic sizes:
factories (a ``SymInt[]`` size; ``full``'s fill value), pointwise ops, reductions and
``_to_copy``. Any other op, an in-place op, a second symbol in one call, or a result that is not
affine raises a RuntimeError naming the op and "unbacked symbolic size". A symbolic *scalar*
argument (``Scalar``/``float``: ``x * n``, ``clamp(x, max=n)``) does not change the result's
metadata beyond its type, so any op takes one: the meta rule sees ``1``, ``1.0`` or ``True``.

>>> import tensormodes as tm
>>> from tensormodes.fx.experimental.proxy_tensor import make_fx
>>> def f(x):
...     y = x.new_zeros(x.sum().item()) + 1
...     print(y)
...     return y.sum()
>>> gm = make_fx(f, tracing_mode="fake")(tm.ones(3, dtype=tm.int64))
FakeTensor(..., size=(u0,), dtype=tensormodes.int64)
>>> gm(tm.ones(3, dtype=tm.int64))
tensor(3)
"""

from __future__ import annotations

from .._dispatch.aten import Tag, aten
from .._meta_array import MetaArray
from .._symbolic import SymBool, SymFloat, SymInt, affine_value, is_symbolic
from .._tensor_base import TensorBase

__all__ = ["has_symbolic", "run_unbacked", "unbacked_scalar"]

# the symbol's stand-in values: large, distinct, unlikely to be a model's dimension
_STAND_INS = (1009, 2003, 3011)
# argument types whose symbolic value is a scalar (a ``Tensor`` one: ``mul.Tensor``'s wrapped number)
_SCALAR_TYPES = frozenset({"Scalar", "Scalar?", "float", "float?", "Tensor", "Tensor?"})
_TO_COPY = aten._to_copy.default


def unbacked_scalar(shape_env, tensor):
    """The value of a one-element fake tensor as a fresh unbacked symbol of its kind (``u0``,
    ``zuf0``, a bool tensor's ``Eq(u0, 1)``), as PyTorch's FakeTensorMode with a ShapeEnv."""
    kind = tensor._data.dtype.kind
    if kind == "f" or tensor._data.dtype.name == "bfloat16":
        return shape_env.create_unbacked_symfloat()
    if kind == "b":
        return shape_env.create_unbacked_symbool()
    if kind in "iu":
        return shape_env.create_unbacked_symint()
    return None  # complex: no symbol kind here; the caller raises DataDependentOutputException


def _tensor_is_symbolic(t) -> bool:
    data = t._data
    return type(data) is MetaArray and any(isinstance(v, SymInt)
                                           for v in (*data.shape, *data.elem_strides, data.offset))


def has_symbolic(args, kwargs) -> bool:
    """Whether a symbolic scalar or a tensor with a symbolic size is among the arguments."""
    for value in (*args, *kwargs.values()):
        for item in (value if type(value) is list or type(value) is tuple else (value,)):
            if is_symbolic(item) or (isinstance(item, TensorBase) and _tensor_is_symbolic(item)):
                return True
    return False


def _unsupported(func, why: str) -> RuntimeError:
    return RuntimeError(f"{func}: cannot run on an unbacked symbolic size ({why}). tensormodes's fake tensors "
                        "take unbacked symbolic sizes in factories, pointwise ops, reductions and _to_copy only")


def _bound_arguments(func, args, kwargs):
    arguments = func._schema.arguments
    pairs = list(zip(arguments, args))
    by_name = {a.name: a for a in arguments}
    pairs += [(by_name.get(name), value) for name, value in kwargs.items()]
    return pairs


def _affine_leaf(func, value: SymInt, leaves: dict):
    if value._affine is None:
        raise _unsupported(func, f"{value} is not an affine function of one symbol")
    leaf = value._affine[0]
    leaves[id(leaf)] = leaf
    leaves.setdefault(("known", value._affine[1], value._affine[2]), value)


def _check(func, args, kwargs, writes: bool):
    """Raise for what this module cannot run; return the one leaf symbol of the sizes (or None)
    and the SymInts seen, by affine form."""
    factory = func._opdef.factory
    shape_op = factory or Tag.pointwise in func.tags or Tag.reduction in func.tags or func is _TO_COPY
    leaves: dict = {}
    for argument, value in _bound_arguments(func, args, kwargs):
        type_name = argument.type if argument is not None else ""
        items = value if type(value) is list or type(value) is tuple else (value,)
        for item in items:
            if is_symbolic(item):
                if type_name in _SCALAR_TYPES and not (factory and argument.name != "fill_value"):
                    continue  # a scalar: a stand-in of its type
                if not (factory and type_name.startswith("SymInt") and isinstance(item, SymInt)):
                    raise _unsupported(func, f"{item} as argument {argument.name if argument else '?'}")
                _affine_leaf(func, item, leaves)
            elif isinstance(item, TensorBase) and _tensor_is_symbolic(item):
                if not shape_op or writes:
                    raise _unsupported(func, f"an input of size {tuple(item._data.shape)}")
                data = item._data
                for size in (*data.shape, *data.elem_strides, data.offset):
                    if isinstance(size, SymInt):
                        _affine_leaf(func, size, leaves)
    found = [v for k, v in leaves.items() if type(k) is int]
    if len(found) > 1:
        raise _unsupported(func, f"more than one symbol: {', '.join(map(str, found))}")
    known = {(k[1], k[2]): v for k, v in leaves.items() if type(k) is tuple}
    return (found[0] if found else None), known


def _stand_in(value, point: int | None):
    """``value`` with the symbol at ``point``: an affine SymInt size its number, a scalar a stand-in."""
    if isinstance(value, SymInt):
        if point is not None and value._affine is not None:
            _, a, b = value._affine
            return a * point + b
        return 1
    if isinstance(value, SymFloat):
        return 1.0
    if isinstance(value, SymBool):
        return True
    if isinstance(value, TensorBase) and _tensor_is_symbolic(value):
        data = value._data
        meta = MetaArray(tuple(_stand_in(s, point) for s in data.shape), data.dtype,
                         tuple(_stand_in(s, point) for s in data.elem_strides), _stand_in(data.offset, point))
        clone = object.__new__(type(value))
        clone._data = meta
        clone._requires_grad = False
        clone.fake_mode = value.fake_mode
        return clone
    kind = type(value)
    if kind is list or kind is tuple:
        return kind(_stand_in(v, point) for v in value)
    return value


def run_unbacked(func, args, kwargs, writes: bool, run):
    """``run(args, kwargs)`` (the meta rule) for a call with symbolic arguments: see the module."""
    leaf, known = _check(func, args, kwargs, writes)
    if leaf is None:
        return run(tuple(_stand_in(a, None) for a in args), {k: _stand_in(v, None) for k, v in kwargs.items()})
    results = []
    for point in _STAND_INS:
        try:
            results.append(run(tuple(_stand_in(a, point) for a in args),
                               {k: _stand_in(v, point) for k, v in kwargs.items()}))
        except (RuntimeError, ValueError, IndexError) as error:
            raise _unsupported(func, f"its meta rule fails with {leaf} = {point}: {error}") from error
    return _fit(func, leaf, known, results)


def _fit(func, leaf, known: dict, results: list):
    first = results[0]
    if isinstance(first, TensorBase):
        datas = [r._data for r in results]
        shape = tuple(_fit_int(func, leaf, known, [d.shape[i] for d in datas]) for i in range(len(first._data.shape)))
        strides = tuple(_fit_int(func, leaf, known, [d.elem_strides[i] for d in datas])
                        for i in range(len(first._data.elem_strides)))
        offset = _fit_int(func, leaf, known, [d.offset for d in datas])
        first._data = MetaArray(shape, first._data.dtype, strides, offset)
        return first
    kind = type(first)
    if kind is list or isinstance(first, tuple):
        items = [_fit(func, leaf, known, [r[i] for r in results]) for i in range(len(first))]
        return kind(*items) if hasattr(kind, "_fields") else kind(items)
    if any(r != first for r in results[1:]):
        raise _unsupported(func, f"a result that depends on {leaf}")
    return first


def _fit_int(func, leaf, known: dict, values: list):
    """The affine ``a*leaf + b`` through the stand-in points' ``values`` (an int when constant)."""
    p1, p2, p3 = _STAND_INS
    v1, v2, v3 = values
    a, remainder = divmod(v2 - v1, p2 - p1)
    b = v1 - a * p1
    if remainder or a * p3 + b != v3:
        raise _unsupported(func, f"a result size that is not an affine function of {leaf}")
    if a == 0:
        return b
    same = known.get((a, b))  # an input's own SymInt when one has this form
    return same if same is not None else affine_value(leaf, a, b)

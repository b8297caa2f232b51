"""Meta execution: the rules that compute an op's result metadata from its arguments'
metadata (what a meta tensor holds, ``MetaArray``, is at the bottom: ``_meta_array.py``).

A ``device="meta"`` tensor holds a :class:`MetaArray` where a cpu tensor holds an ``ndarray``.
Every op declares its meta rule next to its NumPy kernel (``@op(meta=...)``); the kernel-call
site of the generated code calls the rule instead of the kernel when an argument is meta.
Most ops name a family rule:

* :data:`pointwise` — broadcasting; the result dtype and every dtype or argument error come
  from running the op's own kernel on one-element *probes* of the operands' dtypes, so the
  promotion code is the same as real execution's;
* :func:`reduction` — the dims ``dim``/``keepdim`` remove, dtype and errors from a probe
  whose sizes are clamped to 1 (0 stays 0: empty inputs fail as they do for real);
* :func:`rule` — an op's own function, with the kernel's signature, of MetaArrays.

>>> import numpy as np
>>> a = MetaArray((1000, 64), np.dtype(np.float32))
>>> a.shape, a.strides, a.nbytes
((1000, 64), (256, 4), 256000)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._meta_array import DataDependentOutputError, MetaArray, contiguous_strides, dense_strides
from .common import check_same_shape_or_broadcast, wrap_dims

__all__ = ["MetaRule", "rule", "pointwise", "reduction", "same_shape", "data_dependent", "probe",
           "with_shape", "same_metadata", "metadata"]


def with_shape(result, shape):
    """``result`` (a probe's output: arrays, tuples of them, Python values) as MetaArrays of
    ``shape`` with the probe's dtypes; ``shape`` may be a tuple of shapes, one per output."""
    if isinstance(result, np.ndarray) or type(result) is MetaArray:
        return MetaArray(shape, result.dtype)
    if isinstance(result, np.generic):
        return MetaArray(shape, result.dtype)
    if isinstance(result, tuple):
        shapes = shape if shape and isinstance(shape[0], tuple) else (shape,) * len(result)
        items = [with_shape(r, s) for r, s in zip(result, shapes, strict=True)]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    return result


# One read-only probe per (clamped shape, dtype), shared by every rule that probes a kernel.
_PROBES: dict[tuple, np.ndarray] = {}


def _cached_probe(value: MetaArray) -> np.ndarray:
    key = (tuple(min(s, 1) for s in value.shape), value.dtype)
    array = _PROBES.get(key)
    if array is None:
        if len(_PROBES) > 1024:  # bounded: ranks and dtypes are few, but never grow without limit
            _PROBES.clear()
        array = _PROBES[key] = np.ones(*key)
        array.flags.writeable = False
    return array


def probe(value):
    """A small real stand-in for a meta operand: ones of its dtype, each size clamped to at most 1
    (0 stays 0), read-only and shared. Lists and tuples are probed item by item; other values
    pass through."""
    if type(value) is MetaArray:
        return _cached_probe(value)
    if isinstance(value, list):
        return [probe(v) for v in value]
    if type(value) is tuple:
        return tuple(probe(v) for v in value)
    return value


class MetaRule:
    """An op's meta rule: ``rule(opdef, args, kwargs)`` computes what the kernel would return
    for these arguments, as MetaArrays, or raises the kernel's error."""

    def __init__(self, compute: Callable, name: str) -> None:
        self.compute = compute
        self.__name__ = name

    def __call__(self, opdef, args: tuple, kwargs: dict):
        return self.compute(opdef, args, kwargs)

    def __repr__(self) -> str:
        return f"<meta rule {self.__name__}>"


def rule(function: Callable) -> MetaRule:
    """An op's own meta rule: ``function`` takes the kernel's parameters (MetaArrays in place
    of arrays) and returns the kernel's result as MetaArrays."""
    return MetaRule(lambda opdef, args, kwargs: function(*args, **kwargs), function.__name__)


def _tensor_arguments(opdef, args, kwargs):
    bound = opdef.signature.bind(*args, **kwargs)
    return bound, [(name, bound.arguments[name]) for name in opdef.tensor_params if name in bound.arguments]


def _shapes_of(value) -> list:
    if type(value) is MetaArray or isinstance(value, np.ndarray):
        return [value.shape]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _shapes_of(v)]
    return []


def _broadcast(shapes: list) -> tuple[int, ...]:
    if not shapes:
        return ()
    shape = shapes[0]
    for other in shapes[1:]:
        shape = check_same_shape_or_broadcast(shape, other)
    return tuple(shape)


def _run_probed(opdef, bound):
    for name in opdef.tensor_params:
        if name in bound.arguments:
            bound.arguments[name] = probe(bound.arguments[name])
    return opdef.kernel(*bound.args, **bound.kwargs)


def _swap_operands(value, shapes: list, operands: list):
    """``value`` with each MetaArray replaced by its probe; every array operand's shape and the
    operand itself are appended to ``shapes`` and ``operands`` (kernels receive arrays only for
    tensor parameters, so no binding to the signature is needed)."""
    kind = type(value)
    if kind is MetaArray:
        shapes.append(value.shape)
        operands.append(value)
        return _cached_probe(value)
    if kind is np.ndarray:
        shapes.append(value.shape)
        operands.append(value)
        return value
    if kind is list or kind is tuple:
        return kind(_swap_operands(v, shapes, operands) for v in value)
    return value


def _pointwise_parts(opdef, args, kwargs):
    shapes, operands = [], []
    probe_args = [_swap_operands(a, shapes, operands) for a in args]
    probe_kwargs = {k: _swap_operands(v, shapes, operands) for k, v in kwargs.items()}
    shape = _broadcast(shapes)
    return with_shape(opdef.kernel(*probe_args, **probe_kwargs), shape), operands


def _pointwise(opdef, args, kwargs):
    return _pointwise_parts(opdef, args, kwargs)[0]


pointwise = MetaRule(_pointwise, "pointwise")
pointwise.__doc__ = """Elementwise ops: the broadcast shape of the tensor operands (PyTorch's error
for a mismatch); dtype and argument errors from the kernel run on one-element probes."""


metadata = MetaRule(lambda opdef, args, kwargs: opdef.kernel(*args, **kwargs), "metadata")
metadata.__doc__ = """Kernels that read only shape, dtype or strides (``numel``, ``is_complex``): the kernel itself,
run on the MetaArrays."""


def _same_metadata(opdef, args, kwargs):
    bound, tensors = _tensor_arguments(opdef, args, kwargs)
    source = tensors[0][1]
    result = _run_probed(opdef, bound)
    if type(source) is not MetaArray:
        return with_shape(result, source.shape)
    return MetaArray(source.shape, result.dtype, dense_strides(source.shape, source.elem_strides))


same_metadata = MetaRule(_same_metadata, "same_metadata")
same_metadata.__doc__ = """Copies of the first tensor argument (``clone``, ``_to_copy``, ``*_like``): its
shape and memory format; the dtype and errors from the kernel run on a probe."""


def _same_shape(opdef, args, kwargs):
    bound, tensors = _tensor_arguments(opdef, args, kwargs)
    shape = tensors[0][1].shape
    return with_shape(_run_probed(opdef, bound), shape)


same_shape = MetaRule(_same_shape, "same_shape")
same_shape.__doc__ = """Ops whose outputs have their first tensor argument's shape (softmax, cumsum ...):
dtype and errors from the kernel run on a probe with sizes clamped to 1."""


def reduction(dims: Callable | None = None) -> MetaRule:
    """Reductions over ``dim`` (an int, a sequence or None for all) with ``keepdim``: the
    output shape drops (or keeps as 1) the reduced dims; dtype and errors come from a probe.
    ``dims(bound_arguments, ndim)`` overrides which dims are reduced (None: all)."""

    def compute(opdef, args, kwargs):
        bound, tensors = _tensor_arguments(opdef, args, kwargs)
        shape = tensors[0][1].shape
        keepdim = bool(bound.arguments.get("keepdim", False))
        result = _run_probed(opdef, bound)  # raises the kernel's own errors first
        if dims is not None:
            reduced = dims(bound.arguments, len(shape))
        else:
            dim = bound.arguments.get("dim")
            reduced = None if dim is None or (isinstance(dim, (list, tuple)) and not dim) else wrap_dims(
                dim, max(len(shape), 1))
        if reduced is None:
            out = (1,) * len(shape) if keepdim else ()
        elif keepdim:
            out = tuple(1 if i in reduced else s for i, s in enumerate(shape))
        else:
            out = tuple(s for i, s in enumerate(shape) if i not in reduced)
        return with_shape(result, out)

    return MetaRule(compute, "reduction")


def _data_dependent(opdef, args, kwargs):
    raise DataDependentOutputError(
        f"{opdef.name}(): the output shape depends on the input's values, which meta tensors do not have")


data_dependent = MetaRule(_data_dependent, "data_dependent")
data_dependent.__doc__ = "Ops whose output shape depends on values: meta execution raises DataDependentOutputError."


# -- added with the pointwise families' rules ----------------------------------------------------

def broadcasting(*names: str, kernel_first: bool = False, keep_layout: bool = True) -> MetaRule:
    """:data:`pointwise` with the operands broadcast in the order of the parameters ``names``
    (the order the kernel checks them in, which names them "tensor a" and "tensor b" in the
    error), e.g. ``where``'s condition first. ``kernel_first``: the probe runs before the
    broadcast, for kernels that check dtypes before shapes (``complex``). The result keeps the
    operands' memory order (:func:`kept_layout`) unless ``keep_layout`` is False (kernels that
    allocate a row-major result)."""

    def compute(opdef, args, kwargs):
        bound, _ = _tensor_arguments(opdef, args, kwargs)
        shapes = [s for name in names for s in _shapes_of(bound.arguments.get(name))]
        operands = [bound.arguments.get(name) for name in names] if keep_layout else []
        if kernel_first:
            result = _run_probed(opdef, bound)
            return _laid_out(with_shape(result, _broadcast(shapes)), operands)
        shape = _broadcast(shapes)
        return _laid_out(with_shape(_run_probed(opdef, bound), shape), operands)

    return MetaRule(compute, "broadcasting")


def _probed(opdef, args, kwargs):
    bound, _ = _tensor_arguments(opdef, args, kwargs)
    return _run_probed(opdef, bound)


probed = MetaRule(_probed, "probed")
probed.__doc__ = """Kernels whose result depends only on the operands' dtypes and dimensions, not on
their sizes (``result_type``): the kernel's result on probes, returned as it is."""


def checked_data_dependent(checks: MetaRule) -> MetaRule:
    """Ops whose result depends on values but whose argument errors do not (``allclose``):
    ``checks`` raises the kernel's errors, then meta execution raises DataDependentOutputError."""

    def compute(opdef, args, kwargs):
        checks(opdef, args, kwargs)
        return _data_dependent(opdef, args, kwargs)

    return MetaRule(compute, "checked_data_dependent")


__all__ += ["broadcasting", "probed", "checked_data_dependent"]


def _element_strides(value) -> tuple[int, ...] | None:
    if type(value) is MetaArray:
        return value.elem_strides
    if isinstance(value, np.ndarray) and value.itemsize:
        return tuple(s // value.itemsize for s in value.strides)
    return None


def kept_layout(shape, operands) -> tuple[int, ...]:
    """Output strides of an elementwise op: the memory order of its full-shape operands when
    they agree on one (a transposed input gives a transposed result, as NumPy's ``order="K"``
    and PyTorch's TensorIterator do), else contiguous. Operands with broadcast (stride 0) dims
    do not decide.

    >>> kept_layout((2, 3), [MetaArray((2, 3), np.dtype(np.float32), (1, 2))])
    (1, 2)
    """
    layouts = set()
    for value in operands:
        strides = _element_strides(value)
        if strides is None or tuple(value.shape) != tuple(shape):
            continue
        if any(st == 0 for size, st in zip(shape, strides) if size > 1):
            continue
        layouts.add(dense_strides(shape, strides))
    return layouts.pop() if len(layouts) == 1 else contiguous_strides(tuple(shape))


def _laid_out(result, operands):
    """``result`` (fresh MetaArrays, or tuples of them) with strides from :func:`kept_layout`."""
    if isinstance(result, tuple):
        items = [_laid_out(r, operands) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if type(result) is MetaArray and result.size > 1:
        return MetaArray(result.shape, result.dtype, kept_layout(result.shape, operands))
    return result


def _elementwise(opdef, args, kwargs):
    result, operands = _pointwise_parts(opdef, args, kwargs)
    return _laid_out(result, operands)


elementwise = MetaRule(_elementwise, "elementwise")
elementwise.__doc__ = """:data:`pointwise`, with the operands' memory order kept in the result (see
:func:`kept_layout`): what ops computed by NumPy ufuncs in ``order="K"`` return."""

__all__ += ["kept_layout", "elementwise"]

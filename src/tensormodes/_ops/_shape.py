"""Helpers shared by the shape families (``views``, ``joining``, ``reordering``, ``properties``):
parsing of sizes and dims, and the helpers of their gradient formulas.

Gradients put ``grad`` back where the input's elements went: views and copies
rearrange it the inverse way (``transpose`` transposes it, ``cat`` narrows it,
``split`` writes the pieces' gradients into zeros); ops that pick elements, possibly
several times (``diagonal``, ``unfold``, advanced indexing), apply themselves to the
input's flat positions (``positions_of``) and add each gradient back there
(``gather_back``). Formulas that need only the input's shape ask for ``input_shape``,
not ``input`` (see ``_registry.op``), so the input may change in place before backward.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from ._common import array_type_name, is_int, operand_dtype, wrap_dim, wrap_dims

# PyTorch names tensors by their legacy type in some messages ("torch.FloatTensor").


def legacy_type_name(array: np.ndarray) -> str:
    """``'torch.FloatTensor'`` for a float32 array: the name PyTorch's expand errors use."""
    return f"torch.{array_type_name(array)}Tensor"


# -- argument parsing --------------------------------------------------------------------


def int_tuple(values, op_name: str, param: str, *, allow_int: bool = True) -> tuple[int, ...]:
    """A sequence of ints (or, if ``allow_int``, one int) as a tuple, with PyTorch's
    TypeError for anything else."""
    if type(values) is tuple and all(type(i) is int for i in values):
        return values  # the common case, already as wanted
    if is_int(values):
        if not allow_int:
            raise TypeError(f"{op_name}(): argument '{param}' must be tuple of ints, not int")
        return (int(values),)
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(f"{op_name}(): argument '{param}' must be tuple of ints, "
                        f"not {type(values).__name__}") from None
    for position, item in enumerate(items):
        if not is_int(item):
            raise TypeError(f"{op_name}(): argument '{param}' must be tuple of ints, but found element of "
                            f"type {type(item).__name__} at pos {position}")
    return tuple(int(i) for i in items)


def varargs_ints(args: tuple, op_name: str, param: str) -> tuple[int, ...]:
    """Method varargs: ``x.view(2, 3)``, ``x.view((2, 3))`` and ``x.view([2, 3])`` all mean (2, 3)."""
    if len(args) == 1 and not is_int(args[0]):
        return int_tuple(args[0], op_name, param)
    return int_tuple(args, op_name, param)


def _dim_list(dims, ndim: int, op_name: str, param: str = "dims") -> tuple[int, ...]:
    """Wrapped dims; RuntimeError naming the dim given twice."""
    return wrap_dims(int_tuple(dims, op_name, param), ndim)


def _wrap_dim_of_tensor(dim, ndim: int) -> int:
    """Like ``wrap_dim`` but for ops that need a real dimension (no 0-dim tensors)."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


# -- gradient helpers: formulas run on Tensors, through public methods (see _registry.op) --
# The engine sums gradients back to broadcast inputs' shapes and casts them to the
# inputs' dtypes, so broadcasting views need no rule of their own (``_same_grad``).

def _same_grad(grad):
    """Gradient of an op that passes its input through (copies, broadcasting views)."""
    return grad


def _as_tuple(grad) -> tuple:
    """Output gradients of a multi-output op (a single Tensor when it had one output)."""
    return grad if isinstance(grad, tuple) else (grad,)


def positions_of(grad, shape):
    """Each element's flat position in an input of ``shape`` (an int64 tensor of that
    shape, made from ``grad``): an op that picks elements, applied to it, tells where
    each picked element came from."""
    shape = tuple(shape)
    return (grad.new_ones(math.prod(shape), dtype=dt.int64).cumsum(0) - 1).reshape(shape)


def gather_back(grad, shape, positions):
    """Gradient of an op that picked the elements of an input of ``shape`` at flat
    ``positions`` (one per element of ``grad``): each gradient added back where its element
    came from, so elements picked several times (repeats, overlapping windows) accumulate."""
    shape = tuple(shape)
    flat = grad.new_zeros(math.prod(shape)).index_add(0, positions.reshape(-1), grad.reshape(-1))
    return flat.reshape(shape)


# -- joining ----------------------------------------------------------------------------

def _legacy_empty(shape) -> bool:
    """PyTorch's joins skip legacy empty tensors of shape (0,), whatever the others' shapes."""
    return len(shape) == 1 and shape[0] == 0


def _cat(arrays: list[np.ndarray], dim: int, op_name: str = "cat") -> np.ndarray:
    if not arrays:
        raise ValueError(f"{op_name}(): expected a non-empty list of Tensors")
    dtype = operand_dtype(*arrays)._np
    for position, a in enumerate(arrays):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {position}) cannot be concatenated")
    kept = [(i, a) for i, a in enumerate(arrays) if not _legacy_empty(a.shape)]
    if not kept:
        d = wrap_dim(dim, 1)
        return np.concatenate([a.astype(dtype, copy=False) for a in arrays], axis=d)
    reference = kept[0][1]
    d = wrap_dim(dim, reference.ndim)
    for position, a in kept[1:]:
        if a.ndim != reference.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {reference.ndim} and {a.ndim}")
        for axis, (expected, got) in enumerate(zip(reference.shape, a.shape, strict=True)):
            if axis != d and expected != got:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {expected} "
                                   f"but got size {got} for tensor number {position} in the list.")
    return np.concatenate([a.astype(dtype, copy=False) for _, a in kept], axis=d)


def _diagonal_dims(ndim: int, dim1, dim2) -> tuple[int, int]:
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2

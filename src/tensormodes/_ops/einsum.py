"""``einsum``: its equation and sublist formats, checked with PyTorch's messages, and its
gradient (each operand's, an ``einsum`` of the others with the output's gradient).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray, dense_strides
from .common import (
    HALF_TYPES,
    array_of,
    dtype_of,
    not_implemented,
    one_sequence_as_items,
    recordable,
    scalar_type_name,
)
from .common import conjugate as _conj
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op


def _to_label_space(t, full: list[str], space: list[str]):
    """``t`` (dims labelled ``full``) with diagonals taken for repeated labels, permuted to
    ``space``'s order and with size-1 dims for the labels it lacks."""
    full = list(full)
    while len(set(full)) != len(full):
        label = next(x for x in full if full.count(x) > 1)
        first = full.index(label)
        second = full.index(label, first + 1)
        t = t.diagonal(0, first, second)
        full = [x for k, x in enumerate(full) if k not in (first, second)] + [label]
    if full:
        order = sorted(range(len(full)), key=lambda k: space.index(full[k]))
        t = t.permute(order)
        full = [full[k] for k in order]
    sizes = dict(zip(full, t.shape, strict=True))
    return t.reshape([sizes.get(label, 1) for label in space])


def _embed_repeats(t, own: list[str], full: list[str]):
    """``t`` (dims labelled ``own``, unique) spread onto the diagonals ``full`` repeats."""
    current = list(own)
    for label in own:
        if full.count(label) < 2:
            continue
        if full.count(label) > 2:
            raise NotImplementedError("einsum backward: a subscript repeated more than twice in one operand")
        t = t.movedim(current.index(label), -1).diag_embed(0, -2, -1)
        current.remove(label)
        current += [label, label]
    if current == full:
        return t
    order, used = [], set()
    for label in full:
        k = next(k for k, x in enumerate(current) if x == label and k not in used)
        used.add(k)
        order.append(k)
    return t.permute(order)


# -- einsum -----------------------------------------------------------------------------------------

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _sublist_equation(arguments: tuple) -> tuple[str, list]:
    """``einsum(op0, [0, 1], op1, [1, 2], [0, 2])`` -> (``"Ab,bc->Ac"``-style equation, operands)."""
    operands, terms = list(arguments[0::2]), [list(s) for s in arguments[1::2]]
    output = None
    if len(operands) > len(terms):  # the trailing element is the output sublist
        output = operands.pop()
    if len(operands) != len(terms):
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")

    def letters(sublist) -> str:
        text = []
        for s in sublist:
            if s is Ellipsis:
                text.append("...")
                continue
            if not isinstance(s, numbers.Integral) or not 0 <= s < len(_LETTERS):
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
            text.append(_LETTERS[int(s)])
        return "".join(text)

    equation = ",".join(letters(t) for t in terms)
    if output is not None:
        equation += "->" + letters(output)
    return equation, operands


def _einsum_arguments(equation, operands: tuple) -> tuple:
    """The forms PyTorch's ``einsum`` accepts besides ``(equation, *operands)``: a single list
    of operands, and the sublist format (a tensor first), turned into an equation."""
    if array_of(equation) is not None:
        equation, operands = _sublist_equation((equation, *operands))
        return equation, tuple(operands)
    return equation, one_sequence_as_items(operands)


def _parse_term(term: str, offset: int, operand: int | str) -> tuple[list[str], bool]:
    """Labels of one subscript term (``"..."`` kept as one label) and whether it has an ellipsis."""
    labels, i, ellipsis = [], 0, False
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "..." or ellipsis:
                raise RuntimeError(f"einsum(): found '.' for operand {operand} that is not part of any ellipsis")
            labels.append("...")
            ellipsis = True
            i += 3
            continue
        if c not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
        labels.append(c)
        i += 1
    return labels, ellipsis


class _EinsumLabels:
    """An einsum equation checked against the operands' shapes (PyTorch's messages).

    ``named``: each operand's letter labels; ``full``: each operand's label per
    dimension, the ellipsis dimensions labelled ``"0"``, ``"1"`` ... aligned to the
    right as they broadcast; ``output``: the output's labels in the same terms;
    ``kept``: the letters the output keeps.
    """

    def __init__(self, equation: str, shapes: list[tuple[int, ...]]) -> None:
        lhs, arrow, rhs = equation.partition("->")
        terms = lhs.split(",")
        if len(terms) > len(shapes):
            raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
        if len(terms) < len(shapes):
            raise RuntimeError("einsum(): more operands were provided than specified in the equation")
        parsed, offset = [], 0
        sizes: dict[str, int] = {}
        ellipsis_counts = []
        for index, (term, shape) in enumerate(zip(terms, shapes, strict=True)):
            labels, ellipsis = _parse_term(term, offset, index)
            offset += len(term) + 1
            named = [label for label in labels if label != "..."]
            if not ellipsis and len(named) != len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(named)}) does not "
                                   f"match the number of dimensions ({len(shape)}) for operand {index} and no "
                                   "ellipsis was given")
            if ellipsis and len(named) > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(named)}) is more than "
                                   f"the number of dimensions ({len(shape)}) for operand {index}")
            ellipsis_counts.append(len(shape) - len(named))
            dims = iter(shape)
            seen_here: dict[str, int] = {}
            for label in labels:
                if label == "...":
                    for _ in range(len(shape) - len(named)):
                        next(dims)
                    continue
                size = next(dims)
                if label in seen_here and seen_here[label] != size:
                    raise RuntimeError(f"einsum(): subscript {label} is repeated for operand {index} but the sizes "
                                       f"don't match, {size} != {seen_here[label]}")
                seen_here[label] = size
                previous = sizes.get(label)
                if previous is not None and size != previous and size != 1 and previous != 1:
                    raise RuntimeError(f"einsum(): subscript {label} has size {size} for operand {index} which does "
                                       f"not broadcast with previously seen size {previous}")
                if previous is None or previous == 1:
                    sizes[label] = size
            parsed.append(labels)
        widest = max(ellipsis_counts, default=0)
        self.named = [[label for label in labels if label != "..."] for labels in parsed]
        self.full = [self._expand(labels, count, widest) for labels, count in zip(parsed, ellipsis_counts, strict=True)]
        if arrow:
            output, _ = _parse_term(rhs, len(lhs) + 2, "output")
            for label in output:
                if label == "...":
                    continue
                if label not in sizes:
                    raise RuntimeError(f"einsum(): output subscript {label} does not appear in the equation for any "
                                       "input operand")
                if output.count(label) > 1:
                    raise RuntimeError(f"einsum(): output subscript {label} appears more than once in the output")
            self.kept = {label for label in output if label != "..."}
            self.output = self._expand(output, widest, widest)
        else:
            counts: dict[str, int] = {}
            for named in self.named:
                for label in named:
                    counts[label] = counts.get(label, 0) + 1
            self.kept = {label for label, count in counts.items() if count == 1}
            self.output = [str(i) for i in range(widest)] + sorted(self.kept)

    @staticmethod
    def _expand(labels: list[str], count: int, widest: int) -> list[str]:
        """Labels with ``...`` replaced by ``count`` ellipsis labels, right-aligned among ``widest``."""
        expanded = []
        for label in labels:
            if label == "...":
                expanded.extend(str(i) for i in range(widest - count, widest))
            else:
                expanded.append(label)
        return expanded


def _einsum_plan(equation: str, arrays: list[np.ndarray]) -> tuple[str, dt.dtype]:
    """Validate ``equation`` against the operands; return the equation for NumPy and the
    result dtype PyTorch's contraction order produces."""
    equation = equation.replace(" ", "")
    labels = _EinsumLabels(equation, [a.shape for a in arrays])
    return equation, _einsum_dtype(labels.named, labels.kept, arrays, labels.full, labels.output)


def _label_sizes(full: list[list[str]], arrays) -> dict[str, int]:
    """Each label's size (broadcast over the operands)."""
    sizes: dict[str, int] = {}
    for labels, array in zip(full, arrays, strict=True):
        for label, size in zip(labels, array.shape, strict=True):
            sizes[label] = size if sizes.get(label, 1) == 1 else sizes[label]
    return sizes


def _einsum_dtype(parsed: list[list[str]], kept: set[str], arrays: list[np.ndarray],
                  full: list[list[str]] | None = None, output: list[str] | None = None) -> dt.dtype:
    """PyTorch's result dtype: labels found in one operand only are summed out first (``sum``
    promotes integers to int64), then operands combine left to right, by a product (dtypes
    promote) or, when labels are contracted, by a bmm (dtypes must match, no bool; but a bmm with
    no result or nothing to add up never reaches its kernel: it gives the right operand's
    dtype, the right one being the operand whose output labels come last)."""
    sizes = _label_sizes(full, arrays) if full is not None else {}
    order = {label: position for position, label in enumerate(output or [])}
    last_operand = {}
    for index, named in enumerate(parsed):
        for label in named:
            last_operand[label] = index
    dtypes = []
    for index, (named, array) in enumerate(zip(parsed, arrays, strict=True)):
        d = dtype_of(array)
        own = {label for label in named if label not in kept
               and all(label not in other for j, other in enumerate(parsed) if j != index)}
        if own and d._category <= dt._INT:
            d = dt.int64
        dtypes.append(d)
    combined = dtypes[0]
    own_labels = [{label for label in named if label not in kept
                   and all(label not in other for j, other in enumerate(parsed) if j != index)}
                  for index, named in enumerate(parsed)]
    alive = set((full or parsed)[0]) - own_labels[0]
    for index in range(1, len(parsed)):
        earlier = set().union(*parsed[:index])
        contracted = {label for label in parsed[index]
                      if label not in kept and last_operand[label] == index and label in earlier}
        d = dtypes[index]
        right = set((full or parsed)[index]) - own_labels[index]
        involved = alive | right
        if contracted and any(sizes.get(label, 1) == 0 for label in involved):
            # PyTorch orders the pair so that the bmm's result lies in the output's order
            first_left = min((order[label] for label in alive - right if label in order), default=-1)
            first_right = min((order[label] for label in right - alive if label in order), default=len(order))
            combined = combined if first_right < first_left else d
            alive = involved - contracted
            continue
        alive = involved - contracted
        if contracted:
            if combined is dt.bool:  # (the kernel is chosen by the left operand's dtype, then reads the right's)
                raise not_implemented("bmm", combined)
            if combined is not d:
                raise RuntimeError(f"expected scalar type {scalar_type_name(combined)} but found "
                                   f"{scalar_type_name(d)}")
        else:
            combined = dt.promote_types(combined, d)
    return combined


def _einsum_grad(grad, equation, operands):
    """Each operand's gradient: the output gradient times every other operand, in one
    broadcast space of all labels, summed over the labels the operand lacks; repeated
    labels (diagonals) are embedded back with ``diag_embed``."""
    tensors = list(operands)
    labels = _EinsumLabels(equation.replace(" ", ""), [tuple(t.shape) for t in tensors])
    space = list(dict.fromkeys(labels.output + [label for full in labels.full for label in full]))
    spread = [_to_label_space(t, full, space) for t, full in zip(tensors, labels.full, strict=True)]
    spread_grad = _to_label_space(grad, labels.output, space)
    grads = []
    for i, (tensor, full) in enumerate(zip(tensors, labels.full, strict=True)):
        total = spread_grad
        for j, other in enumerate(spread):
            if j != i:
                total = total * _conj(other)
        own = list(dict.fromkeys(full))
        summed = tuple(k for k, label in enumerate(space) if label not in own)
        if summed:
            total = total.sum(summed)
        present = [label for label in space if label in own]
        total = total.permute([present.index(label) for label in own]) if own else total
        sizes = dict(zip(full, tensor.shape, strict=True))
        total = total.expand([sizes[label] if total.shape[k] == 1 else total.shape[k]
                              for k, label in enumerate(own)])
        grads.append(_embed_repeats(total, own, full))
    return grads


@rule
def _einsum_meta(equation, *operands):
    """The output's labels, sized from the operands' shapes; the kernel's checks and dtype."""
    if not operands:
        return einsum(equation)  # the kernel's error for no operands
    equation, result_dtype = _einsum_plan(equation, list(operands))
    labels = _EinsumLabels(equation, [a.shape for a in operands])
    sizes: dict[str, int] = {}
    for full, operand in zip(labels.full, operands, strict=True):
        for label, size in zip(full, operand.shape, strict=True):
            if sizes.get(label, 1) == 1:
                sizes[label] = size
    shape = tuple(sizes[label] for label in labels.output)
    (source,) = operands if len(operands) == 1 else (None,)
    if source is None or not set(labels.full[0]) <= set(labels.output):
        return MetaArray(shape, result_dtype._np)
    # One operand, nothing summed: NumPy's result is a view (transposed, or a diagonal: a
    # repeated label steps by the sum of its dims' strides), copied in its layout if the dtype
    # changes (float16 computes in float32).
    strides = tuple(sum(step for label, step in zip(labels.full[0], source.elem_strides, strict=True) if label == out)
                    for out in labels.output)
    if source.dtype in HALF_TYPES:
        strides = dense_strides(shape, strides)
    return MetaArray(shape, result_dtype._np, strides)


def _half_contraction(equation: str, arrays: list, dtype: np.dtype) -> np.ndarray:
    """A half-type einsum as PyTorch contracts it: a dimension only one operand has (and the
    result has not) summed out of it first, then the operands multiplied in pairs from the left,
    each pair's sum of products accumulated in float32 and rounded to ``dtype`` (its result is
    a half-type tensor)."""
    inputs, output = equation.split("->")
    terms = inputs.split(",")

    def rounded(values):
        return np.asarray(values).astype(dtype).astype(np.float32)

    operands = []
    for k, (term, array) in enumerate(zip(terms, arrays)):
        elsewhere = set(output).union(*(terms[j] for j in range(len(terms)) if j != k))
        kept = "".join(label for label in dict.fromkeys(term) if label in elsewhere)
        array = array.astype(np.float32)
        if kept != term:  # (a repeated label takes a diagonal, exactly)
            array = rounded(np.einsum(f"{term}->{kept}", array))
        operands.append((kept, array))
    labels, result = operands[0]
    for k in range(1, len(operands)):
        right_labels, right = operands[k]
        later = set(output).union(*(operands[j][0] for j in range(k + 1, len(operands))))
        keep = "".join(label for label in dict.fromkeys(labels + right_labels) if label in later)
        result, labels = rounded(np.einsum(f"{labels},{right_labels}->{keep}", result, right)), keep
    return np.array(np.einsum(f"{labels}->{output}", result), dtype=dtype, order="C")


def _einsum_differentiable(equation, operands) -> bool:
    stand_ins = [MetaArray(tuple(t.shape), t.dtype._np) for t in operands]
    return recordable(_einsum_plan(equation, stand_ins)[1])


@op(meta=_einsum_meta, differentiable=_einsum_differentiable,
    errors=(Sample(("ij,jk->ik", TensorSpec((2, 3)), TensorSpec((4, 2)))), Sample(("ij->k", TensorSpec((2, 3))))),
    grad=_einsum_grad, normalize=_einsum_arguments, samples=(
    Sample(("ij,jk->ik", TensorSpec((2, 3)), TensorSpec((3, 4)))),
    Sample(("ij,jk", TensorSpec((2, 3)), TensorSpec((3, 4)))),
    Sample(("ii", TensorSpec((3, 3)))), Sample(("ii->i", TensorSpec((3, 3), "int32"))),
    Sample(("...ij->...ji", TensorSpec((2, 3, 4)))),
    Sample(("i,j->ij", TensorSpec((3,), "int32"), TensorSpec((2,), "int64"))),
    Sample(("i->", TensorSpec((4,), "bool"))), Sample(("bij,bjk->bik", TensorSpec((2, 2, 3)), TensorSpec((2, 3, 2)))),
    Sample(("ij,ij->ij", TensorSpec((2, 3)), TensorSpec((1, 3)))),
    Sample(("i j , j k -> i k", TensorSpec((2, 3)), TensorSpec((3, 4)))),
    Sample(("ij,k->i", TensorSpec((2, 3), "int32"), TensorSpec((4,), "int32"))),
    Sample(("i,i,i->", TensorSpec((3,), "float64"), TensorSpec((3,), "float64"), TensorSpec((3,), "float64"))),
    Sample(("Ab,bC->CA", TensorSpec((2, 3), "float16"), TensorSpec((3, 2), "float16"))),
    Sample(("ii,i->i", TensorSpec((3, 3)), TensorSpec((3,)))), Sample(("i,i->i", TensorSpec((3,)), TensorSpec((1,)))),
    Sample(("ij,jk", [TensorSpec((2, 3)), TensorSpec((3, 4))])),
    Sample((TensorSpec((2, 3)), [0, 1], TensorSpec((3, 4)), [1, 2], [2, 0])),
    Sample((TensorSpec((2, 3)), [Ellipsis, 1], TensorSpec((3,)), [1]))),
    schema={"equation": "str", "operands": "Tensor[] tensors", "path": "*int[]?=None"})
def einsum(equation, *operands: Tensor) -> Tensor:
    """Sums the product of the elements of ``operands`` along the dimensions named in
    ``equation``, using the Einstein summation convention.

    ``equation`` labels each dimension of each operand with a letter
    (``"ij,jk->ik"``); ``...`` stands for broadcast dimensions; without ``->``
    the output keeps the letters used once, in alphabetical order.

    >>> import tensormodes as tm
    >>> tm.einsum("ij,jk->ik", tm.ones(2, 3), tm.ones(3, 4)).shape
    tensormodes.Size([2, 4])
    >>> tm.einsum("ii", tm.tensor([[1, 2], [3, 4]]))
    tensor(5)

    The operands may also come as one list, or in the sublist format, each operand
    followed by a list of ints naming its dimensions (then, optionally, the output's):

    >>> tm.einsum(tm.ones(2, 3), [0, 1], tm.ones(3, 4), [1, 2], [0, 2]).shape
    tensormodes.Size([2, 4])
    """
    arrays = list(operands)
    if not arrays:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    equation, result_dtype = _einsum_plan(equation, arrays)
    compute = np.float32 if result_dtype._np in HALF_TYPES else result_dtype._np
    if compute is np.float32 and len(arrays) > 1 and "->" in equation and "." not in equation:
        return _half_contraction(equation, arrays, result_dtype._np)
    result = np.einsum(equation, *(a.astype(compute, copy=False) for a in arrays))
    result = np.asarray(result).astype(result_dtype._np, copy=False)
    # PyTorch's products are contiguous; one operand's transposes and diagonals are views.
    return result.copy() if len(arrays) > 1 and not result.flags.c_contiguous else result

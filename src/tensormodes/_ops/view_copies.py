"""The ``*_copy`` ops (``permute_copy``, ``view_copy`` ...: PyTorch's functional forms of its views,
tag ``view_copy``), derived from the view ops' declarations by one rule: the view's kernel, its
result copied into new contiguous memory; the view's parameters, gradient formula and meta rule;
the view's aten overloads renamed ``<name>_copy``; the view's node suffixed
(``PermuteBackward0_copy``, as PyTorch's).

>>> import tensormodes as tm
>>> x = tm.arange(6).view(2, 3)
>>> y = tm.permute_copy(x, (1, 0))
>>> y.tolist(), y.is_contiguous(), y._base is None
([[0, 3], [1, 4], [2, 5]], True, True)
"""

from __future__ import annotations

import inspect

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from . import complex_numbers, joining, views, views_complex  # noqa: F401 - the views, declared first
from .meta_rules import MetaRule
from .registry import OPS, Sample, op

__all__ = ["VIEW_COPIES"]

# Each copy op: the view op it copies, and its aten overloads where not the view's renamed
# (``split_copy`` has only ``split``'s int overload; ``expand_copy`` copies ``broadcast_to``, the
# function form of ``expand``).
VIEW_COPIES = {
    "alias_copy": ("alias", None), "as_strided_copy": ("as_strided", None), "diagonal_copy": ("diagonal", None),
    "expand_copy": ("broadcast_to", "expand_copy.default"), "permute_copy": ("permute", None),
    "select_copy": ("select", None), "slice_copy": ("slice", None),
    "split_copy": ("split", {"split_copy.Tensor": ("split_size_or_sections: SymInt split_size",)}),
    "split_with_sizes_copy": ("split_with_sizes", None), "squeeze_copy": ("squeeze", None), "t_copy": ("t", None),
    "transpose_copy": ("transpose", {"transpose_copy.int": ()}), "unbind_copy": ("unbind", None),
    "unfold_copy": ("unfold", None), "unsqueeze_copy": ("unsqueeze", None), "view_copy": ("view", None),
    "view_as_real_copy": ("view_as_real", None),
    "narrow_copy": ("narrow", "default"),
}
# Where a copy differs beyond that: ``narrow_copy`` is a method too, with a node of its own name and
# ``start`` a number; ``split_copy`` takes no list of sizes (so not those samples of ``split``);
# ``expand_copy``'s node is ``expand``'s; ``view_copy`` reshapes what no view can reach (PyTorch's
# kernel falls back to ``reshape``), so it runs ``reshape``'s kernel, with one sequence of sizes.
_OWN = {"narrow_copy": {"method": True, "node": "narrow_copy", "schema": {"start": "SymInt"}},
        "split_copy": {"sample": lambda sample: type(sample.args[1]) is int},
        "expand_copy": {"node": "expand/copy"}, "view_copy": {"runs": "reshape"}}


def _dense(result):
    """A view's result in new contiguous memory (a tuple of views: each)."""
    if type(result) is tuple:
        return tuple(_dense(item) for item in result)
    if type(result) is MetaArray:
        return MetaArray(result.shape, result.dtype)  # (row-major, as PyTorch's contiguous clone)
    return np.array(result, order="C", copy=True)


def _renamed_aten(aten, copy_name: str, view_name: str):
    """The view's aten overloads as the copy's: packets renamed ``<name>_copy``, tags beyond the
    op's dropped (a copy has only ``view_copy``), no ``out=`` or in-place forms."""
    if aten is None or isinstance(aten, str) and "." not in aten:
        return aten
    if isinstance(aten, str):
        packet, _, overload = aten.partition(".")
        return f"{copy_name if packet == view_name else packet + '_copy'}.{overload}"
    return {f"{key.partition('.')[0]}_copy.{key.partition('.')[2]}":
            tuple(entry for entry in entries if not entry.startswith(("+", "-", "out=", "inplace=")))
            for key, entries in aten.items()}


def _copy_signature(signature: inspect.Signature) -> tuple[inspect.Signature, str | None]:
    """The view's signature with a ``*shape`` parameter made one sequence (``view_copy(x, size)``);
    and that parameter's name."""
    parameters, packed = [], None
    for p in signature.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            packed = p.name
            p = p.replace(kind=p.POSITIONAL_OR_KEYWORD, annotation="Sequence[int]")
        parameters.append(p)
    return signature.replace(parameters=parameters), packed


def _copy_samples(samples: tuple, packed: str | None, position: int, complex_inputs: bool) -> tuple:
    """The view's samples for the copy: a ``*shape`` tail given as one tuple; dtype views and complex
    inputs (no gradient, see ``_real_outputs_only``) left out."""
    samples = tuple(sample for sample in samples if complex_inputs
                    or not any(getattr(value, "dtype", "").startswith("complex") for value in sample.args))
    if packed is None:
        return samples
    kept = []
    for sample in samples:
        head, tail = sample.args[:position], sample.args[position:]
        if any(isinstance(value, dt.dtype) for value in tail):
            continue
        if len(tail) == 1 and isinstance(tail[0], (tuple, list)):
            tail = tail[0]
        kept.append(Sample((*head, tuple(tail)), sample.kwargs))
    return tuple(kept)


# The copies PyTorch 2.13 has no complex gradient for (their complex calls raise its error).
_REAL_ONLY = frozenset({"select_copy", "slice_copy"})


def _real_outputs_only(copy_name: str, view_differentiable):
    """A ``differentiable=`` predicate (asked only for calls that would be recorded): the view's
    answer, after PyTorch's error for a complex call of a copy in ``_REAL_ONLY``."""
    if copy_name not in _REAL_ONLY:
        return view_differentiable

    def differentiable(input, *arguments) -> bool:
        if input.is_complex():
            raise RuntimeError(f"{copy_name} does not support automatic differentiation for outputs with complex "
                               "dtype.")
        return view_differentiable if view_differentiable in (True, False) else view_differentiable(input, *arguments)

    return differentiable


def _copy_node(view):
    node = view.node or view.name
    if callable(node):
        return lambda *args: f"{node(*args)}/copy"
    return f"{node}/copy"


def _declare(copy_name: str, view_name: str, aten) -> None:
    view, own = OPS[view_name], _OWN.get(copy_name, {})
    signature, packed = _copy_signature(view.signature)
    position = list(signature.parameters).index(packed) if packed else 0
    runs = OPS[own.get("runs", view_name)]
    view_kernel, view_meta = runs.kernel, runs.meta
    unpacks = packed is not None and runs is view

    def kernel(*args, **kwargs):
        if unpacks:  # the sequence back as the view's ``*shape``
            args = (*args[:position], *args[position], *args[position + 1:])
        return _dense(view_kernel(*args, **kwargs))

    def meta(opdef, args, kwargs):
        if unpacks:
            args = (*args[:position], *args[position], *args[position + 1:])
        return _dense(view_meta(runs, args, kwargs))

    kernel.__name__ = kernel.__qualname__ = copy_name
    kernel.__module__ = __name__
    kernel.__signature__ = signature
    kernel.__doc__ = (f"``{view_name}``'s result copied into new contiguous memory (not a view); its gradient is "
                      f"``{view_name}``'s (PyTorch's ``{copy_name}``).")
    samples = _copy_samples(view.samples, packed, position, copy_name not in _REAL_ONLY)
    op(name=copy_name, grad=view.grad, meta=MetaRule(meta, f"{copy_name}_meta"), node=own.get("node", _copy_node(view)),
       method=own.get("method", False), differentiable=_real_outputs_only(copy_name, view.differentiable),
       samples=tuple(filter(own.get("sample"), samples)),
       aten=aten if aten is not None else _renamed_aten(view.aten, copy_name, view_name),
       schema={**view.schema_types, **own.get("schema", {})}, tags=("view_copy",))(kernel)


for _copy_name, (_view_name, _aten) in VIEW_COPIES.items():
    _declare(_copy_name, _view_name, _aten)

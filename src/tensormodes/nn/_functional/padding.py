"""``nn.functional.pad``: constant, reflect, replicate and circular padding.
"""

from __future__ import annotations

from ..._memory_format import strided
from ..._ops.registry import Tensor
from ...ops import aten
from ._common import _function, _public

# -- padding ---------------------------------------------------------------------------------

_NON_CONSTANT_PADDING = ("Supported combinations for non-constant padding:\n"
                         "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                         "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                         "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _padding_sizes(pad) -> list[int]:
    if not isinstance(pad, (list, tuple)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    for position, size in enumerate(pad):
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(size).__name__} at pos {position}")
    return list(pad)


def _check_non_constant_padding(input: Tensor, sizes: list[int], mode: str) -> None:
    pairs = len(sizes) // 2
    if pairs not in (1, 2, 3) or input.dim() not in (pairs + 1, pairs + 2):
        raise NotImplementedError(f"Padding size {len(sizes)} is not supported for {input.dim()}D input tensor.\n"
                                  + _NON_CONSTANT_PADDING)
    shape = list(input.shape)
    if mode in ("reflect", "replicate"):
        batched = input.dim() == pairs + 2
        if any(size == 0 for size in shape[1 if batched else 0:]):
            raise RuntimeError(f"Expected {pairs + 1}D or {pairs + 2}D (batch mode) tensor with possibly 0 batch "
                               f"size and other non-zero dimensions for input, but got: {shape}")
    for pair in range(pairs):
        dim = input.dim() - 1 - pair
        before, after = sizes[2 * pair], sizes[2 * pair + 1]
        if mode == "reflect" and not (before < shape[dim] and after < shape[dim]):
            raise RuntimeError(f"Argument #{2 * pairs + 2}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({before}, {after}) at dimension {dim} of input {shape}")
        if mode == "circular":
            if before > shape[dim] or after > shape[dim]:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            cropped = shape[dim] + min(before, 0) + min(after, 0)
            if cropped < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
            if max(before, after) > cropped:
                # PyTorch reads out of bounds here (garbage or an aliasing error).
                raise RuntimeError("Padding value causes wrapping around more than once.")


@_public
def pad(input: Tensor, pad: list[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dimensions of ``input``: ``pad`` lists (before, after)
    sizes starting from the last dimension. ``mode`` is ``'constant'`` (filled with ``value``,
    default 0; negative sizes crop), ``'reflect'``, ``'replicate'`` or ``'circular'``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.pad(tm.tensor([[1, 2]]), (1, 2)).tolist()
    [[0, 1, 2, 0, 0]]
    >>> F.pad(tm.tensor([[1., 2., 3.]]), (2, 1), mode="reflect").tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    sizes = _padding_sizes(pad)
    if len(sizes) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(sizes) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(sizes)} and input of dimension {input.dim()}")
    if mode == "constant":
        # PyTorch's pad takes the value as a float (0.0 when none is given) and passes it on
        return _function("constant_pad_nd")(input, sizes, 0.0 if value is None else
                                            float(value) if type(value) in (int, bool) else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    _check_non_constant_padding(input, sizes, mode)
    if mode != "circular":  # PyTorch's own ops (ReflectionPad2DBackward0 ...)
        kind = "reflection" if mode == "reflect" else "replication"
        return _function(f"_{kind}_pad{len(sizes) // 2}d")(input, sizes)
    return _pad_circular(input, sizes)


def _pad_circular(input: Tensor, sizes: list[int]) -> Tensor:
    """PyTorch's circular padding, op for op (what the dispatch level sees): a ``new_empty``
    result, the input (cropped by negative sizes) copied into its middle through ``slice`` views,
    then per padded dimension, from the last, the wrapped-around parts copied from the result into
    its two ends (corners are written more than once)."""
    pairs = len(sizes) // 2
    dims = [input.dim() - 1 - pair for pair in range(pairs)]
    shape = list(input.shape)
    for pair, dim in enumerate(dims):
        shape[dim] += sizes[2 * pair] + sizes[2 * pair + 1]
    out = aten.new_empty.default(input, shape, dtype=input.dtype, layout=strided, device=input.device)
    inner, source = out, input
    for pair, dim in enumerate(dims):
        before, after = sizes[2 * pair], sizes[2 * pair + 1]
        inner = aten.slice.Tensor(inner, dim, max(before, 0), shape[dim] - max(after, 0))
        source = aten.slice.Tensor(source, dim, max(-before, 0), input.shape[dim] - max(-after, 0))
    inner.copy_(source)
    for pair, dim in enumerate(dims):
        before, after = sizes[2 * pair], sizes[2 * pair + 1]
        end = shape[dim] - max(after, 0)
        if before > 0:
            aten.slice.Tensor(out, dim, 0, before).copy_(aten.slice.Tensor(out, dim, end - before, end))
        if after > 0:
            start = max(before, 0)
            aten.slice.Tensor(out, dim, shape[dim] - after, shape[dim]).copy_(
                aten.slice.Tensor(out, dim, start, start + after))
    return out

"""``FlopCounterMode``: counts the floating-point operations of matrix products, convolutions and
attention at the dispatch level, as PyTorch's does: every aten op that runs in its scope, forward
and backward, is looked up by its ``OpOverloadPacket`` (``aten.mm``, ``aten.addmm``, ``aten.bmm``,
``aten.convolution``, ``aten.convolution_backward`` ...), with PyTorch's convention (2 FLOPs per
multiply-add; bias additions and elementwise ops are not counted).

Composites are already decomposed there (``F.linear`` is ``t`` and ``addmm``), and the backward
pass counts the ops autograd runs: a gradient nobody needs is not computed, so not counted.

>>> import tensormodes as tm, tensormodes.nn.functional as F
>>> from tensormodes.utils.flop_counter import FlopCounterMode
>>> x, w = tm.ones(8, 4), tm.ones(3, 4, requires_grad=True)
>>> with FlopCounterMode(display=False) as counter:
...     F.linear(x, w).sum().backward()
>>> counter.get_total_flops()          # 2*8*4*3 forward, as much again for w's gradient
384
>>> print(counter.get_table())
Module      FLOP  % Total
----------  ----  -------
Global       384  100.00%
 - aten.mm   384  100.00%
"""

from __future__ import annotations

import math
import warnings
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from .._api.tensor import Tensor
from .._autograd.engine import current_node, queue_callback
from .._autograd.nodes import next_sequence_nr
from .._dispatch.aten import OpOverloadPacket
from ..modes.observing import ModuleNames, render_table, rich_table
from ..nn.modules import module as _module_api
from ..ops import aten
from ._python_dispatch import TorchDispatchMode

__all__ = ["FlopCounterMode", "register_flop_formula", "mm_flop", "bmm_flop", "matmul_flop", "addmm_flop",
           "baddbmm_flop", "conv_flop", "conv_flop_count", "conv_backward_flop", "sdpa_flop_count", "einsum_flop",
           "flop_registry"]


# -- formulas: shapes in, FLOPs out (tensors are passed as their shapes) -----------------------

def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """FLOPs of ``a @ b`` for matrices (m, k) and (k, n): ``2 * m * k * n``.

    >>> from tensormodes.utils.flop_counter import mm_flop
    >>> mm_flop((2, 3), (3, 4))
    48
    """
    m, k = a_shape
    _, n = b_shape
    return 2 * m * k * n


def bmm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """FLOPs of a batched product of (b, m, k) and (b, k, n): ``2 * b * m * k * n``."""
    b, m, k = a_shape
    return 2 * b * m * k * b_shape[-1]


def matmul_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """FLOPs of ``matmul`` for every shape case: vectors count as one row (left) or one
    column (right), and batch dimensions broadcast.

    >>> from tensormodes.utils.flop_counter import matmul_flop
    >>> matmul_flop((5, 2, 3), (3, 4)), matmul_flop((3,), (3,))
    (240, 6)
    """
    if len(a_shape) == 2 and len(b_shape) == 2:  # the common case, kept cheap
        return 2 * a_shape[0] * a_shape[1] * b_shape[1]
    a = (1, *a_shape) if len(a_shape) == 1 else tuple(a_shape)
    b = (*b_shape, 1) if len(b_shape) == 1 else tuple(b_shape)
    batch = _broadcast(a[:-2], b[:-2])
    return 2 * math.prod(batch) * a[-2] * a[-1] * b[-1]


def _broadcast(a: tuple, b: tuple) -> tuple:
    width = max(len(a), len(b))
    a, b = (1,) * (width - len(a)) + a, (1,) * (width - len(b)) + b
    return tuple(max(x, y) if min(x, y) != 0 else 0 for x, y in zip(a, b))


def addmm_flop(self_shape, a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """FLOPs of ``addmm(bias, a, b)``: those of ``a @ b`` (the bias addition is not counted)."""
    return mm_flop(a_shape, b_shape)


def baddbmm_flop(self_shape, a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """FLOPs of ``baddbmm(bias, a, b)``: those of ``bmm(a, b)``."""
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed: bool = False) -> int:
    """FLOPs of a convolution, PyTorch's convention: ``2 * batch * prod(w_shape) *
    prod(spatial)``, the spatial size of the output (of the input when ``transposed``).

    >>> from tensormodes.utils.flop_counter import conv_flop_count
    >>> conv_flop_count((2, 3, 8, 8), (4, 3, 3, 3), (2, 4, 6, 6))
    15552
    """
    spatial = (x_shape if transposed else out_shape)[2:]
    return 2 * x_shape[0] * math.prod(w_shape) * math.prod(spatial)


def conv_flop(x_shape, w_shape, bias, stride, padding, dilation, transposed, *args, out_shape=None, **kwargs) -> int:
    """FLOPs of ``aten.convolution`` (and ``aten._convolution``), see ``conv_flop_count``."""
    return conv_flop_count(x_shape, w_shape, out_shape, bool(transposed))


def conv_backward_flop(grad_out_shape, x_shape, w_shape, bias_sizes, stride, padding, dilation, transposed,
                       output_padding, groups, output_mask, *args, out_shape=None, **kwargs) -> int:
    """Both gradients of a convolution (``_convolution_backward``, ATen's ``convolution_backward``),
    counted as PyTorch counts them: the input's gradient is the transposed convolution of the
    output gradient with the weight, the weight's a convolution of the input (batch and channels
    swapped) with the output gradient."""
    def swapped(shape):
        return (shape[1], shape[0], *shape[2:])

    flops = 0
    if output_mask[0]:
        flops += conv_flop_count(grad_out_shape, w_shape, out_shape[0], not transposed)
    if output_mask[1]:
        image, kernel = (grad_out_shape, x_shape) if transposed else (x_shape, grad_out_shape)
        flops += conv_flop_count(swapped(image), swapped(kernel), swapped(out_shape[1]), False)
    return flops


def sdpa_flop_count(query_shape, key_shape, value_shape) -> int:
    """FLOPs of attention, ``softmax(q @ k.mT) @ v``: the two batched products (the softmax
    and the scaling are not counted). Query heads may be a multiple of key heads (GQA).

    >>> from tensormodes.utils.flop_counter import sdpa_flop_count
    >>> sdpa_flop_count((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7))
    3456
    """
    batch = math.prod(query_shape[:-2])
    queries, depth = query_shape[-2:]
    keys, value_depth = key_shape[-2], value_shape[-1]
    return 2 * batch * queries * keys * depth + 2 * batch * queries * keys * value_depth


def _sdpa_flop(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
    return sdpa_flop_count(query_shape, key_shape, value_shape)


def einsum_flop(equation: str, *operand_shapes, out_shape=None, **kwargs) -> int:
    """FLOPs of ``einsum`` contracted left to right, as PyTorch runs it: labels only one operand
    has (and the output lacks) are summed first, then each pair contraction that sums a label
    costs 2 FLOPs per element of the pair's label space; pure products (no label summed)
    cost nothing, as elementwise multiplications do.

    >>> from tensormodes.utils.flop_counter import einsum_flop
    >>> einsum_flop("ij,jk->ik", (2, 3), (3, 4)), einsum_flop("ij,ij->ij", (2, 3), (2, 3))
    (48, 0)
    """
    if len(operand_shapes) == 1 and isinstance(operand_shapes[0], list):
        operand_shapes = tuple(operand_shapes[0])
    terms, output = _einsum_labels(equation, operand_shapes)
    if len(terms) < 2:
        return 0
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, operand_shapes):
        for label, size in zip(term, shape):
            sizes[label] = max(sizes.get(label, 1), size)
    wanted = set(output)
    labels = [set(term) for term in terms]
    used = [label for term in labels for label in term]
    labels = [{label for label in term if label in wanted or used.count(label) > 1} for term in labels]
    total = 0
    current = labels[0]
    for i in range(1, len(labels)):
        later = wanted.union(*labels[i + 1:])
        space = current | labels[i]
        summed = space - later
        if summed & current & labels[i]:
            total += 2 * math.prod(sizes[label] for label in space)
        current = space - summed
    return total


def _einsum_labels(equation: str, shapes) -> tuple[list[str], str]:
    """The operands' label strings and the output's, with ``...`` spelled out as one
    placeholder label per broadcast dimension."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    ellipsis_dims = max([len(shape) - len(term) + 3 for term, shape in zip(terms, shapes) if "..." in term],
                        default=0)
    placeholders = "".join(chr(0x2460 + i) for i in range(ellipsis_dims))
    spelled = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            count = len(shape) - len(term) + 3
            term = term.replace("...", placeholders[ellipsis_dims - count:])
        spelled.append(term)
    if arrow:
        output = rhs.replace("...", placeholders)
    else:
        letters = "".join(spelled)
        output = placeholders + "".join(sorted(c for c in set(letters) if letters.count(c) == 1
                                               and c not in placeholders))
    return spelled, output


def _conv_op_flop(transposed: bool) -> Callable:
    """The formula of a convolution op that PyTorch decomposes into ``aten.convolution`` and
    this library still runs as one op (``conv3d``, ``conv_transpose2d`` ...)."""

    def flop(x_shape, w_shape, *args, out_shape=None, **kwargs) -> int:
        if len(x_shape) == len(w_shape) - 1:  # unbatched input: a batch of one
            x_shape, out_shape = (1, *x_shape), (1, *out_shape)
        return conv_flop_count(x_shape, w_shape, out_shape, transposed)

    flop.__name__ = "conv_transpose_flop" if transposed else "conv_flop"
    return flop


def _einsum_op_flop(equation: str, operand_shapes, *args, out_shape=None, **kwargs) -> int:
    return einsum_flop(equation, *operand_shapes)


# -- the registry: aten op packets to formulas -------------------------------------------------

def _shape_of(value):
    if isinstance(value, Tensor):
        return tuple(value._data.shape)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_shape_of(v) for v in value)
    return value


def _on_shapes(formula: Callable) -> Callable:
    """``formula`` called with tensors replaced by their shapes and ``out_shape`` (PyTorch's
    ``shape_wrapper``)."""

    def counted(*args, out_val=None, **kwargs):
        return formula(*[_shape_of(a) for a in args], out_shape=_shape_of(out_val),
                       **{k: _shape_of(v) for k, v in kwargs.items()})

    counted.__name__ = getattr(formula, "__name__", "formula")
    return counted


def _on_first_two(formula: Callable) -> Callable:
    """``formula`` for ops whose FLOPs depend only on their first two arguments' shapes (``mm``,
    ``bmm``): read straight off the tensors, as they are the hot ones."""

    def counted(a, b, *args, out_val=None, **kwargs):
        return formula(a._data.shape, b._data.shape)

    counted.__name__ = formula.__name__
    return counted


def _on_operands(formula: Callable) -> Callable:
    """``formula`` for ``addmm``-like ops: FLOPs of the product of arguments 1 and 2."""

    def counted(bias, a, b, *args, out_val=None, **kwargs):
        return formula(a._data.shape, b._data.shape)

    counted.__name__ = formula.__name__
    return counted


flop_registry: dict = {}  # OpOverloadPacket -> formula(*args, out_val=, **kwargs), PyTorch's name


def register_flop_formula(targets, get_raw: bool = False) -> Callable:
    """Decorator adding ``formula`` to the registry for ``targets`` (an ``OpOverloadPacket`` —
    ``tm.ops.aten.foo`` — or a list of them), as PyTorch's. The formula receives the op's
    arguments with tensors replaced by their shapes, and ``out_shape``; ``get_raw=True`` passes
    the tensors themselves and ``out_val``.

    >>> import tensormodes as tm
    >>> from tensormodes.utils.flop_counter import FlopCounterMode, register_flop_formula, flop_registry
    >>> @register_flop_formula(tm.ops.aten.exp)
    ... def exp_flop(x_shape, *args, out_shape=None, **kwargs):
    ...     return x_shape[0]
    >>> with FlopCounterMode(display=False) as counter:
    ...     _ = tm.ones(3).exp()
    >>> counter.get_flop_counts()
    {'Global': {aten.exp: 3}}
    >>> del flop_registry[tm.ops.aten.exp]
    """

    def register(formula: Callable) -> Callable:
        wrapped = formula if get_raw else _on_shapes(formula)
        for target in targets if isinstance(targets, (list, tuple)) else [targets]:
            if not isinstance(target, OpOverloadPacket):
                raise ValueError(f"register_flop_formula(targets): expected each target to be OpOverloadPacket "
                                 f"(i.e. torch.ops.mylib.foo), JitFunction, or HigherOrderOperator, got {target} "
                                 f"which is of type {type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = wrapped
        return formula

    return register


def _builtin_formulas() -> dict:
    """PyTorch's table, for the ops this library has (the attention kernels PyTorch counts are
    not ops here: ``scaled_dot_product_attention`` decomposes into ``bmm``s, as PyTorch's math
    path), and ops PyTorch decomposes and this library still runs as one op, counted as their
    decomposition would be: ``aten.einsum`` (PyTorch: ``bmm``s) and the convolutions
    ``conv_transpose2d`` ... when they reach the dispatch level whole (PyTorch: ``convolution``)."""
    table = {aten.mm: _on_first_two(mm_flop), aten.bmm: _on_first_two(bmm_flop),
             aten.addmm: _on_operands(mm_flop), aten.baddbmm: _on_operands(bmm_flop),
             aten.convolution: _on_shapes(conv_flop), aten.convolution_backward: _on_shapes(conv_backward_flop),
             aten.einsum: _on_shapes(_einsum_op_flop)}
    for name, formula in (("conv1d", _conv_op_flop(False)), ("conv2d", _conv_op_flop(False)),
                          ("conv3d", _conv_op_flop(False)), ("conv_transpose1d", _conv_op_flop(True)),
                          ("conv_transpose2d", _conv_op_flop(True)), ("conv_transpose3d", _conv_op_flop(True)),
                          ("_convolution", conv_flop), ("_scaled_dot_product_efficient_attention", _sdpa_flop),
                          ("_scaled_dot_product_flash_attention", _sdpa_flop)):
        packet = getattr(aten, name, None)
        if packet is not None:
            table[packet] = _on_shapes(formula)
    return table


flop_registry.update(_builtin_formulas())


def _module_hook_api():
    """nn.Module's global hook registrars (looked up at enter, so a test can stand in for them)."""
    return (_module_api.register_module_forward_pre_hook, _module_api.register_module_forward_hook,
            _module_api.register_module_full_backward_pre_hook, _module_api.register_module_full_backward_hook)


# -- table text, PyTorch's ---------------------------------------------------------------------

_SUFFIXES = ["", "K", "M", "B", "T"]


def _suffix(number: int) -> str:
    return _SUFFIXES[max(0, min(len(_SUFFIXES) - 1, (len(str(number)) - 2) // 3))]


def _with_suffix(number: int, suffix: str) -> str:
    # PyTorch writes three decimals and a suffix; tabulate then shows suffix-less ones as numbers.
    value = number / 1000 ** _SUFFIXES.index(suffix)
    return f"{value:.3f}{suffix}" if suffix else f"{float(f'{value:.3f}'):g}"


def _percent(part: int, whole: int) -> str:
    return "0%" if whole == 0 else f"{part / whole:.2%}"



class FlopCounterMode:
    """``FlopCounterMode`` is a context manager that counts the number of flops within its
    context. It does this using a ``TorchDispatchMode`` (pushed on enter): every aten op that runs,
    forward and backward, is counted by its packet's formula in ``flop_registry`` — matrix
    products (``aten.mm``, ``aten.addmm``, ``aten.bmm``, ``aten.baddbmm``), convolutions
    (``aten.convolution``, ``aten.convolution_backward``) and ``aten.einsum`` — 2 FLOPs per
    multiply-add.

    ``get_flop_counts()`` maps module paths (``"Global"`` for everything) to ``{packet: FLOPs}``
    (``aten.mm``, as PyTorch's); with ``tensormodes.nn`` modules, each module's forward and backward
    are also counted under its path (``"MLP"``, ``"MLP.fc1"``), through nn.Module's global hooks,
    as PyTorch's module tracker names them. A float32 ``nn.LSTM`` runs PyTorch's fused layer op,
    which has no formula here as in PyTorch (0 FLOPs). ``mods`` is accepted and ignored, as in
    PyTorch. ``custom_mapping`` maps packets to formulas (called with the arguments' shapes and
    ``out_shape``). On exit the table is printed when ``display``. With ``track_uncounted=True``
    (beyond PyTorch), ``not_counted`` maps the ops that ran without a formula to how often they
    ran; by default the counter's dispatch mode declares the ops it counts (``handled_ops``), so
    every other op runs as if no mode listened — a counted training step costs little more
    than a plain one.

    >>> import tensormodes as tm
    >>> from tensormodes.utils.flop_counter import FlopCounterMode
    >>> with FlopCounterMode(display=False) as counter:
    ...     _ = tm.bmm(tm.ones(5, 2, 3), tm.ones(5, 3, 4))
    >>> counter.get_flop_counts()["Global"][tm.ops.aten.bmm]
    240
    """

    def __init__(self, mods: Any = None, depth: int = 2, display: bool = True,
                 custom_mapping: dict[Any, Any] | None = None, *, track_uncounted: bool = False) -> None:
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        self.depth = depth
        self.display = display
        self.flop_counts: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
        self.flop_registry = {**flop_registry,
                              **{k: v if getattr(v, "_get_raw", False) else _on_shapes(v)
                                 for k, v in (custom_mapping or {}).items()}}
        self.mode: _FlopCounterMode | None = None
        self._uncounted: dict = defaultdict(int)
        self.track_uncounted = track_uncounted
        self._parents: list[str] = ["Global"]
        self._entries = 0
        self._handles: list = []
        self._module_names = ModuleNames()
        self._reset_queued = False
        # einsum's backward (products and sums here, bmm's backward in PyTorch): the forward's
        # FLOPs per gradient, by the sequence number its backward node is made after
        self._einsum_marks: list[int] = []
        self._einsum_backward: dict[int, int] = {}
        self._node = None

    def get_total_flops(self) -> int:
        """All FLOPs counted (those of the ``"Global"`` entry)."""
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        """Return the flop counts as a dictionary of dictionaries: module path to ``{packet:
        FLOPs}`` (``aten.mm``; ``tm.ops.aten.mm`` finds it)."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    @property
    def not_counted(self) -> dict[str, int]:
        """The ops that ran without a FLOP formula (``"aten.relu"``) and how often; only a counter
        made with ``track_uncounted=True`` sees them."""
        if not self.track_uncounted:
            raise RuntimeError("not_counted: this FlopCounterMode saw only the ops it counts; make it with "
                               "FlopCounterMode(track_uncounted=True) to see the others")
        counts: dict[str, int] = {}
        for func, n in self._uncounted.items():
            name = str(func.overloadpacket)
            counts[name] = counts.get(name, 0) + n
        return counts

    # -- counting (called by the dispatch mode)

    def _count(self, func, packet, formula, out, args: tuple, kwargs: dict) -> None:
        flops = formula(*args, out_val=out, **kwargs)
        parents = self._parents
        for parent in parents if len(parents) == 1 else set(parents):
            self.flop_counts[parent][packet] += flops
        if packet is aten.einsum and flops:
            self._note_einsum(args, flops)

    def _note_einsum(self, args: tuple, flops: int) -> None:
        operands = args[1]
        needing = sum(1 for t in operands if isinstance(t, Tensor) and t._requires_grad)
        if needing:
            mark = next_sequence_nr()  # its backward node is made right after this op returns
            self._einsum_marks.append(mark)
            self._einsum_backward[mark] = flops * (needing if len(operands) == 2 else 2)

    def _backward_node_started(self, node) -> None:
        """A new node's formula runs: an einsum's gradient is counted as PyTorch's bmm gradients."""
        self._node = node
        if node is None or type(node).__name__ != "EinsumBackward0":
            return
        position = bisect_right(self._einsum_marks, node._sequence_nr) - 1
        if position >= 0:
            mark = self._einsum_marks.pop(position)
            flops = self._einsum_backward.pop(mark)
            for parent in set(self._parents):
                self.flop_counts[parent][aten.einsum] += flops

    # -- modules

    def _enter_module(self, module, *unused) -> None:
        self._parents.append(self._module_names(module))

    def _enter_module_backward(self, module, *unused) -> None:
        # Modules whose inputs need no gradient stay parents until the backward pass ends (their
        # backward hook fires before their parameters' gradients are computed), as in PyTorch's
        # module tracker, which resets its parents when the engine finishes.
        self._enter_module(module)
        if not self._reset_queued:
            try:
                queue_callback(self._backward_done)
                self._reset_queued = True
            except RuntimeError:  # not inside a backward pass: nothing to reset
                pass

    def _backward_done(self) -> None:
        self._reset_queued = False
        self._parents = ["Global"]

    def _leave_module_backward(self, module, grad_input, grad_output) -> None:
        if any(g is not None for g in grad_input):  # else its gradients are still to come
            self._leave_module(module)

    def _leave_module(self, module, *unused) -> None:
        name = self._module_names(module)
        if name in self._parents:
            # the innermost entry of this module
            del self._parents[len(self._parents) - 1 - self._parents[::-1].index(name)]

    # -- scope

    def __enter__(self):
        if self._entries == 0:
            self.flop_counts.clear()
            self._uncounted.clear()
            self._einsum_marks.clear()
            self._einsum_backward.clear()
            self._parents = ["Global"]
            forward_pre, forward, backward_pre, backward = _module_hook_api()
            self._handles += [forward_pre(self._enter_module), forward(self._leave_module, always_call=True),
                              backward_pre(self._enter_module_backward), backward(_quiet(self._leave_module_backward))]
            self.mode = _FlopCounterMode(self)
        self._entries += 1
        try:
            self.mode.__enter__()
        except BaseException:
            self._left()
            raise
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        try:
            self.mode.__exit__(exc_type, exc_value, traceback)
        finally:
            self._left()
        if self._entries == 0 and self.display:
            print(self.get_table(self.depth))

    def _left(self) -> None:
        self._entries -= 1
        if self._entries == 0:
            handles, self._handles = self._handles, []
            for handle in handles:
                handle.remove()
            self._parents = ["Global"]
            self.mode = None

    # -- reporting

    def _rows(self, depth: int | None) -> list[list[str]]:
        depth = self.depth if depth is None else depth
        depth = 999999 if depth is None else depth
        total = self.get_total_flops()
        suffix = _suffix(total)
        subsumed = False

        def module_rows(name: str, level: int) -> list[list[str]]:
            nonlocal subsumed
            counts = self.flop_counts[name]
            flops = sum(counts.values())
            subsumed |= flops >= total
            padding = " " * level
            rows = [[padding + name, _with_suffix(flops, suffix), _percent(flops, total)]]
            for func, count in counts.items():
                rows.append([f"{padding} - {func}", _with_suffix(count, suffix), _percent(count, total)])
            return rows

        rows: list[list[str]] = []
        for name in sorted(self.flop_counts):
            if name == "Global" or name.count(".") + 1 > depth:
                continue
            rows += module_rows(name, name.count("."))
        if "Global" in self.flop_counts and not subsumed:
            for row in rows:
                row[0] = " " + row[0]
            rows = module_rows("Global", 0) + rows
        return rows or [["Global", "0", "0%"]]

    def get_table(self, depth: int | None = None) -> str:
        """The FLOPs per module (to ``depth`` levels) and per op, as PyTorch prints them (and a
        last line naming what PyTorch's CPU counter would count as 0, when something was)."""
        text = render_table(["Module", "FLOP", "% Total"], self._rows(depth), align="lrr")
        beyond = self.counted_beyond_pytorch()
        if beyond:
            text += ("\ncounted as their math, where PyTorch's CPU counter counts 0 for its fused kernels: "
                     + ", ".join(beyond))
        return text

    def counted_beyond_pytorch(self) -> list[str]:
        """What was counted that PyTorch's counter, on CPU, counts as 0: nothing now (``nn.LSTM``
        was, until it ran PyTorch's fused layer op, which neither counter has a formula for)."""
        return []

    def rich_table(self, depth: int | None = None):
        """The same table as a ``rich.table.Table`` (needs ``rich``)."""
        return rich_table(["Module", "FLOP", "% Total"], self._rows(depth), title="FLOPs")

    def __str__(self) -> str:
        return self.get_table()

    def __repr__(self) -> str:
        return "FlopCounterMode()"


_UNKNOWN = object()


def _quiet(hook: Callable) -> Callable:
    """``hook`` marked as a tool's: a module whose inputs need no gradient does not warn that its
    full backward hook fires early (PyTorch's counter tracks modules without such hooks)."""

    def quiet_hook(*args):
        return hook(*args)

    quiet_hook.quiet_tool_hook = True
    return quiet_hook


class _FlopCounterMode(TorchDispatchMode):
    """The dispatch mode a ``FlopCounterMode`` pushes: runs each op, then counts it."""

    def __init__(self, counter: FlopCounterMode) -> None:
        super().__init__()
        self.counter = counter
        self._formulas: dict = {}  # OpOverload -> (packet, formula or None), filled as ops are met
        if not counter.track_uncounted:  # the other ops run as if the mode were not there
            handled = set(counter.flop_registry)
            if aten.einsum in handled:
                # einsum's gradient is counted when its node's formula runs (_backward_node_started),
                # which the handler learns from that formula's first op: a permute of its operands
                handled.add(aten.permute)
            self.handled_ops = frozenset(handled)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        known = self._formulas.get(func, _UNKNOWN)
        if known is _UNKNOWN:
            packet = func.overloadpacket
            known = self._formulas[func] = (packet, self.counter.flop_registry.get(packet))
        counter = self.counter
        if counter._einsum_marks:
            node = current_node()
            if node is not counter._node:
                counter._backward_node_started(node)
        if known[1] is None:
            counter._uncounted[func] += 1
        else:
            counter._count(func, known[0], known[1], out, args, kwargs)
        return out

"""``FlopCounterMode``: counts the floating-point operations of matrix products, convolutions and
attention, in the forward pass and in the backward pass, with PyTorch's API and convention
(2 FLOPs per multiply-add; bias additions and elementwise ops are not counted).

Every public call made in its scope is seen; calls of functions with a FLOP formula are
counted, composites without one (``F.relu``, ``Tensor.backward``) are re-entered so that the
calls they make are counted, and the remaining functions are listed in the table as not
counted rather than silently taken as zero.

>>> import tensormodes as tm, tensormodes.nn.functional as F
>>> from tensormodes.utils.flop_counter import FlopCounterMode
>>> x, w = tm.ones(8, 4), tm.ones(3, 4, requires_grad=True)
>>> with FlopCounterMode(display=False) as counter:
...     F.linear(x, w).sum().backward()
>>> counter.get_total_flops()          # 2*8*4*3 forward, as much again for w's gradient
384
>>> print(counter.get_table())
Module                               FLOP  % Total
-----------------------------------  ----  -------
Global                                384  100.00%
 - tensormodes.nn.functional.linear   192   50.00%
 - tensormodes.Tensor.matmul          192   50.00%
not counted: tensormodes.Tensor.sum, tensormodes.Tensor.expand, tensormodes.Tensor.is_complex, tensormodes.Tensor.t
"""

from __future__ import annotations

import math
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from .._api import build as _build
from .._api.tensor import Tensor
from .._overrides.composite import Observer, calls_public_api, implementation, run_composite
from ..modes.observing import ModuleNames, ThreadDepth, public_name, render_table, rich_table
from ..nn import functional as F
from ..nn.modules import module as _module_api
from ..nn.modules.rnn import LSTM
from ..overrides import TorchFunctionMode

__all__ = ["FlopCounterMode", "CountedFunction", "register_flop_formula", "mm_flop", "bmm_flop", "matmul_flop",
           "conv_flop_count", "sdpa_flop_count", "einsum_flop"]


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


def _addmm_flop(self_shape, a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    return mm_flop(a_shape, b_shape)


def _baddbmm_flop(self_shape, a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    return bmm_flop(a_shape, b_shape)


def _mv_flop(a_shape, v_shape, *args, out_shape=None, **kwargs) -> int:
    return 2 * a_shape[0] * a_shape[1]


def _dot_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    return 2 * a_shape[0]


def _linear_flop(input_shape, weight_shape, *args, out_shape=None, **kwargs) -> int:
    rows = math.prod(input_shape[:-1])
    outputs = weight_shape[0] if len(weight_shape) == 2 else 1
    return 2 * rows * input_shape[-1] * outputs


def conv_flop_count(x_shape, w_shape, out_shape, transposed: bool = False) -> int:
    """FLOPs of a convolution, PyTorch's convention: ``2 * batch * prod(w_shape) *
    prod(spatial)``, the spatial size of the output (of the input when ``transposed``).

    >>> from tensormodes.utils.flop_counter import conv_flop_count
    >>> conv_flop_count((2, 3, 8, 8), (4, 3, 3, 3), (2, 4, 6, 6))
    15552
    """
    spatial = (x_shape if transposed else out_shape)[2:]
    return 2 * x_shape[0] * math.prod(w_shape) * math.prod(spatial)


def _conv_nd_flop(transposed: bool) -> Callable:
    def flop(x_shape, w_shape, *args, out_shape=None, **kwargs) -> int:
        if len(x_shape) == len(w_shape) - 1:  # unbatched input: a batch of one
            x_shape, out_shape = (1, *x_shape), (1, *out_shape)
        return conv_flop_count(x_shape, w_shape, out_shape, transposed)

    flop.__name__ = "conv_transpose_flop" if transposed else "conv_flop"
    return flop


def _convolution_flop(x_shape, w_shape, bias, stride, padding, dilation, transposed, *args, out_shape=None,
                      **kwargs) -> int:
    return conv_flop_count(x_shape, w_shape, out_shape, bool(transposed))


def _convolution_backward_flop(grad_out_shape, x_shape, w_shape, bias_sizes, stride, padding, dilation, transposed,
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


def register_flop_formula(targets, get_raw: bool = False) -> Callable:
    """Decorator adding ``formula`` to the built-in table for ``targets`` (a public callable or
    a list of them). The formula receives the call's arguments with tensors replaced by their
    shapes, and ``out_shape``; ``get_raw=True`` passes the tensors themselves and ``out_val``.

    >>> import tensormodes as tm
    >>> from tensormodes.utils.flop_counter import FlopCounterMode, register_flop_formula
    >>> @register_flop_formula(tm.outer)
    ... def outer_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    ...     return a_shape[0] * b_shape[0]
    >>> with FlopCounterMode(display=False) as counter:
    ...     _ = tm.outer(tm.ones(3), tm.ones(4))
    >>> counter.get_total_flops()
    12
    """

    def register(formula: Callable) -> Callable:
        for target in targets if isinstance(targets, (list, tuple)) else [targets]:
            _REGISTERED[target] = formula if get_raw else _on_shapes(formula)
        return formula

    return register


def _shape_of(value):
    if isinstance(value, Tensor):
        return tuple(value._data.shape)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_shape_of(v) for v in value)
    return value


def _on_shapes(formula: Callable) -> Callable:
    def counted(*args, out_val=None, **kwargs):
        return formula(*[_shape_of(a) for a in args], out_shape=_shape_of(out_val),
                       **{k: _shape_of(v) for k, v in kwargs.items()})

    counted.__name__ = getattr(formula, "__name__", "formula")
    return counted


def _on_first_two(formula: Callable) -> Callable:
    """``formula`` for functions whose FLOPs depend only on their first two arguments' shapes
    (matrix products, linear): read straight off the tensors, as they are the hot ones."""
    general = _on_shapes(formula)

    def counted(*args, out_val=None, **kwargs):
        if len(args) >= 2 and isinstance(args[0], Tensor) and isinstance(args[1], Tensor):
            return formula(args[0]._data.shape, args[1]._data.shape)
        return general(*args, out_val=out_val, **kwargs)

    counted.__name__ = formula.__name__
    return counted


_REGISTERED: dict = {}


def _builtin_formulas() -> dict:
    """The built-in table: every spelling of each function (``tm.mm`` and ``Tensor.mm``)."""
    table: dict = {}
    for name, formula in (("matmul", _on_first_two(matmul_flop)), ("mm", _on_first_two(mm_flop)),
                          ("bmm", _on_first_two(bmm_flop)), ("addmm", _on_shapes(_addmm_flop)),
                          ("baddbmm", _on_shapes(_baddbmm_flop)), ("mv", _on_first_two(_mv_flop)),
                          ("dot", _on_first_two(_dot_flop))):
        if name in _build.function_names():
            table[_build.public_function(name)] = formula
        method = getattr(Tensor, name, None)
        if method is not None:
            table[method] = formula
    table[_build.public_function("einsum")] = _on_shapes(einsum_flop)
    table[F.linear] = _on_first_two(_linear_flop)
    for func in (F.conv1d, F.conv2d):
        table[func] = _on_shapes(_conv_nd_flop(False))
    for func in (F.conv_transpose1d, F.conv_transpose2d):
        table[func] = _on_shapes(_conv_nd_flop(True))
    table[_build.public_function("convolution")] = _on_shapes(_convolution_flop)
    table[_build.public_function("_convolution_backward")] = _on_shapes(_convolution_backward_flop)
    table[F.scaled_dot_product_attention] = _on_shapes(_sdpa_flop)
    return table


_BUILTIN: dict = {}


def _zero_flop_functions() -> frozenset:
    """Functions PyTorch counts no FLOPs for, forward or backward, that are written here with
    counted ones: adaptive average pooling (products with averaging matrices in its gradient),
    ``unfold`` and ``fold`` (convolutions with one-hot kernels, PyTorch's im2col / col2im)."""
    return frozenset({F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.unfold, F.fold,
                      _build.public_function("adaptive_avg_pool1d"), _build.public_function("_adaptive_avg_pool2d")})


_ZERO_FLOP: set = set()


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


class CountedFunction:
    """A key of ``FlopCounterMode.get_flop_counts()``: a counted function, shown by its public
    name, equal to (and hashed as) the function itself, and callable as it is.

    >>> import tensormodes as tm
    >>> from tensormodes.utils.flop_counter import CountedFunction
    >>> key = CountedFunction.of(tm.bmm)
    >>> key, key == tm.bmm, {key: 1}[tm.bmm]
    (tensormodes.bmm, True, 1)
    """

    __slots__ = ("func", "name")
    _KEYS: dict = {}

    def __init__(self, func: Callable) -> None:
        self.func = func
        self.name = public_name(func)

    @classmethod
    def of(cls, func: Callable) -> CountedFunction:
        """The key of ``func`` (one per function)."""
        key = cls._KEYS.get(func)
        if key is None:
            key = cls._KEYS[func] = cls(func)
        return key

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)

    def __eq__(self, other) -> bool:
        return self.func == (other.func if isinstance(other, CountedFunction) else other)

    def __hash__(self) -> int:
        return hash(self.func)

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


class FlopCounterMode(Observer, TorchFunctionMode):
    """``FlopCounterMode`` is a context manager that counts the number of flops within its
    context: matrix products (``matmul`` in all its shape cases, ``mm``, ``bmm``, ``addmm``,
    ``mv``, ``dot``, ``einsum``, ``F.linear``), convolutions (``conv1d``, ``conv2d``, the
    transposed ones, ``convolution``) and ``F.scaled_dot_product_attention``, 2 FLOPs per
    multiply-add, in the forward pass and in the backward pass (the gradient formulas that
    ``backward()`` runs are matrix products and convolutions too).

    ``get_flop_counts()`` maps module paths (``"Global"`` for everything) to ``{function:
    FLOPs}``; with ``tensormodes.nn`` modules, each module's forward and backward are also
    counted under its path (``"MLP"``, ``"MLP.fc1"``), through nn.Module's global hooks.
    Module paths are PyTorch's (``"GPT.blocks.0.attn"``, also through a ``ModuleList`` that is
    never called), and so are the totals, with two exceptions the table's last line names when
    they occur: ``scaled_dot_product_attention`` and ``nn.LSTM`` are counted as their math,
    where PyTorch's counter on CPU counts 0 for its fused kernels (with the math attention
    backend PyTorch counts the same). Functions PyTorch counts nothing for and that are written
    here with counted ones (adaptive average pooling, ``unfold``, ``fold``) count 0, forward
    and backward. ``mods`` is accepted and ignored, as in PyTorch. ``custom_mapping`` maps functions to
    formulas (called with the arguments' shapes and ``out_shape``). On exit the table is
    printed when ``display``.

    >>> import tensormodes as tm
    >>> from tensormodes.utils.flop_counter import FlopCounterMode
    >>> with FlopCounterMode(display=False) as counter:
    ...     _ = tm.bmm(tm.ones(5, 2, 3), tm.ones(5, 3, 4))
    >>> counter.get_flop_counts()["Global"][tm.bmm]
    240
    """

    def __init__(self, mods: Any = None, depth: int = 2, display: bool = True,
                 custom_mapping: dict[Any, Any] | None = None) -> None:
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=3)
        if not _BUILTIN:
            _BUILTIN.update(_builtin_formulas())
            _ZERO_FLOP.update(_zero_flop_functions())
        self.depth = depth
        self.display = display
        self.flop_counts: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
        self.flop_registry = {**_BUILTIN, **_REGISTERED,
                              **{k: v if getattr(v, "_get_raw", False) else _on_shapes(v)
                                 for k, v in (custom_mapping or {}).items()}}
        self.not_counted: dict[str, int] = {}
        self._parents: list[str] = ["Global"]
        self._einsum = _build.public_function("einsum")
        self._entries = 0
        self._inside = ThreadDepth()
        self._plans: dict = {}
        self._handles: list = []
        self._module_names = ModuleNames()
        self._collecting: list | None = None  # backward nodes made inside a zero-FLOP function
        self._silenced = ThreadDepth()  # depth of backward nodes whose gradient formulas count nothing
        self._silenced_nodes: weakref.WeakSet = weakref.WeakSet()
        self._lstm_seen = False

    def get_total_flops(self) -> int:
        """All FLOPs counted (those of the ``"Global"`` entry)."""
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        """Return the flop counts as a dictionary of dictionaries: module path to
        ``{function: FLOPs}``. The functions are keys that print as their public names
        (``tensormodes.bmm``, as PyTorch's print as ``aten.bmm``) and are equal to the
        functions themselves, so ``counts["Global"][tm.bmm]`` finds them."""
        return {k: {CountedFunction.of(func): n for func, n in v.items()} for k, v in self.flop_counts.items()}

    # -- counting

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Count the call's FLOPs (or those of the calls it makes) and run it."""
        kwargs = kwargs or {}
        plan = self._plans.get(func) or self._plan(func)
        composite = plan[1]
        if self._inside.value:  # in a counted composite: its inner calls are part of its count
            collecting = self._collecting is not None  # then the nested calls are wanted too
            out = run_composite(self, func, args, kwargs, collecting) if composite else func(*args, **kwargs)
            if collecting:
                self._collecting.append(out)
            return out
        if plan[3]:
            return self._run_uncounted(func, args, kwargs, composite)
        formula = plan[0]
        if formula is not None and self._silenced.value:  # a gradient formula PyTorch does not count
            return run_composite(self, func, args, kwargs, False) if composite else func(*args, **kwargs)
        if formula is not None:
            if composite:
                self._inside.value += 1
                try:
                    out = run_composite(self, func, args, kwargs, False)
                finally:
                    self._inside.value -= 1
            else:
                out = func(*args, **kwargs)
            flops = formula(*args, out_val=out, **kwargs)
            parents = self._parents
            for parent in parents if len(parents) == 1 else set(parents):
                self.flop_counts[parent][func] += flops
            if func is self._einsum and flops and isinstance(out, Tensor) and out._requires_grad:
                self._count_einsum_backward(out, args, flops)
            return out
        if func is _BACKWARD:
            # Modules whose inputs need no gradient stay parents until the backward pass ends
            # (their backward hook fires before their parameters' gradients are computed), as
            # in PyTorch's module tracker.
            parents = list(self._parents)
            try:
                with warnings.catch_warnings():
                    # the module hooks this mode registers must not make a model warn
                    warnings.filterwarnings("ignore", "Full backward hook is firing", UserWarning)
                    return run_composite(self, func, args, kwargs, True)
            finally:
                self._parents = parents
                self._silenced.value = 0  # a gradient formula that raised left its node's scope open
        if composite:
            return run_composite(self, func, args, kwargs, True)
        name = plan[2]
        if name is not None:
            self.not_counted[name] = self.not_counted.get(name, 0) + 1
        return func(*args, **kwargs)

    def _plan(self, func) -> tuple:
        """(formula or None, composite?, name to list when not counted or None), once per function."""
        name = public_name(func)
        listed = None if name.endswith(("__get__", "__set__")) else name  # property reads are not ops
        plan = self._plans[func] = (self.flop_registry.get(func), calls_public_api(func), listed,
                                    func in _ZERO_FLOP and func not in self.flop_registry)
        return plan

    def _run_uncounted(self, func, args: tuple, kwargs: dict, composite: bool):
        """Run a function PyTorch counts nothing for (``_ZERO_FLOP``): the calls it makes are not
        counted, nor, in the backward pass, the gradient formulas of the nodes they recorded."""
        outer, self._collecting = self._collecting, []
        self._inside.value += 1
        try:
            out = run_composite(self, func, args, kwargs, True) if composite else func(*args, **kwargs)
            made = [*self._collecting, out]
        finally:
            self._inside.value -= 1
            self._collecting = outer
        for value in made:
            for tensor in value if isinstance(value, (tuple, list)) else (value,):
                node = tensor.grad_fn if isinstance(tensor, Tensor) else None
                if node is not None and node not in self._silenced_nodes:
                    self._silenced_nodes.add(node)
                    node.register_prehook(self._silence)
                    node.register_hook(self._unsilence)
        return out

    def _silence(self, grad_outputs) -> None:
        self._silenced.value += 1

    def _unsilence(self, grad_inputs, grad_outputs) -> None:
        self._silenced.value = max(self._silenced.value - 1, 0)

    def _count_einsum_backward(self, out: Tensor, args: tuple, flops: int) -> None:
        # einsum's gradient is written with products and sums (no matrix product to count),
        # so its FLOPs are counted when the output's gradient arrives: one contraction of the
        # forward's size per operand that needs a gradient (PyTorch's bmm backward).
        operands = args[1:] if len(args) != 2 or not isinstance(args[1], (list, tuple)) else args[1]
        needing = sum(1 for t in operands if isinstance(t, Tensor) and t._requires_grad)
        backward = flops * (needing if len(operands) == 2 else 2)

        def on_gradient(grad):
            if self._entries:
                for parent in set(self._parents):
                    self.flop_counts[parent][self._einsum] += backward

        self._handles.append(implementation(Tensor.register_hook)(out, on_gradient))

    # -- modules

    def _module_name(self, module) -> str:
        """The module's path as PyTorch's module tracker names it (``observing.ModuleNames``)."""
        return self._module_names(module)

    def _enter_module(self, module, *unused) -> None:
        if isinstance(module, LSTM):
            self._lstm_seen = True
        self._parents.append(self._module_name(module))

    def _leave_module_backward(self, module, grad_input, grad_output) -> None:
        if any(g is not None for g in grad_input):  # else its gradients are still to come
            self._leave_module(module)

    def _leave_module(self, module, *unused) -> None:
        name = self._module_name(module)
        if name in self._parents:
            # the innermost entry of this module
            del self._parents[len(self._parents) - 1 - self._parents[::-1].index(name)]

    # -- scope

    def __enter__(self):
        if self._entries == 0:
            self.flop_counts.clear()
            self.not_counted.clear()
            self._lstm_seen = False
            self._parents = ["Global"]
            forward_pre, forward, backward_pre, backward = _module_hook_api()
            self._handles += [forward_pre(self._enter_module), forward(self._leave_module, always_call=True),
                              backward_pre(self._enter_module), backward(self._leave_module_backward)]
        self._entries += 1
        try:
            return super().__enter__()
        except BaseException:
            self._left()
            raise

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        try:
            super().__exit__(exc_type, exc_value, traceback)
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
                rows.append([f"{padding} - {public_name(func)}", _with_suffix(count, suffix), _percent(count, total)])
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
        """The FLOPs per module (to ``depth`` levels) and per function, as PyTorch prints them,
        followed by the functions that were called but have no FLOP formula."""
        text = render_table(["Module", "FLOP", "% Total"], self._rows(depth), align="lrr")
        if self.not_counted:
            text += "\nnot counted: " + ", ".join(self.not_counted)
        beyond = self.counted_beyond_pytorch()
        if beyond:
            text += ("\ncounted as their math, where PyTorch's CPU counter counts 0 for its fused kernels: "
                     + ", ".join(beyond))
        return text

    def counted_beyond_pytorch(self) -> list[str]:
        """What was counted that PyTorch's counter, on CPU, counts as 0: attention
        (``scaled_dot_product_attention``; PyTorch counts the same with the math backend) and
        ``nn.LSTM`` (PyTorch runs a fused kernel it has no formula for)."""
        found = []
        if any(self.flop_counts[name].get(F.scaled_dot_product_attention) for name in list(self.flop_counts)):
            found.append("tensormodes.nn.functional.scaled_dot_product_attention")
        if self._lstm_seen and self.get_total_flops():
            found.append("tensormodes.nn.LSTM")
        return found

    def rich_table(self, depth: int | None = None):
        """The same table as a ``rich.table.Table`` (needs ``rich``)."""
        return rich_table(["Module", "FLOP", "% Total"], self._rows(depth), title="FLOPs")

    def __str__(self) -> str:
        return self.get_table()

    def __repr__(self) -> str:
        return "FlopCounterMode()"


_BACKWARD = Tensor.backward

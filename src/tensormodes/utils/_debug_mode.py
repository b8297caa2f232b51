"""``DebugMode`` (PyTorch 2.13's ``torch.utils._debug_mode``): a dispatch mode that logs every aten
call with its arguments' and results' dtypes and shapes, forward and backward, as a string dump.

>>> import tensormodes as tm
>>> from tensormodes.utils._debug_mode import DebugMode
>>> a, b = tm.ones(3, 4), tm.ones(4, 2)
>>> with DebugMode() as dm:
...     _ = a @ b
>>> print(dm.debug_string())
    aten::mm(t: f32[3, 4], t: f32[4, 2])  ->  t: f32[3, 2]

Beyond PyTorch: with ``record_ids=True`` a tensor autograd saves for backward keeps its id there
(PyTorch's ``t$3`` comes back as a new ``t$7``: its ``SavedVariable`` unpacks a new alias), and
``record_hash=True`` stores a hash of each output's data, so that ``diff(log_a, log_b)`` names the
first op where two runs diverge.

>>> x = tm.tensor([1.0, 2.0], requires_grad=True)
>>> with DebugMode(record_ids=True) as dm:
...     x.exp().sum().backward()
>>> print(dm.debug_string())
    aten::exp(t$0: f32[2])  ->  t$1: f32[2]
    aten::sum(t$1: f32[2])  ->  t$2: f32[]
    aten::ones_like(t$2: f32[], pin_memory=False, memory_format=tensormodes.preserve_format)  ->  t$3: f32[]
    aten::expand(t$3: f32[], [2])  ->  t$4: f32[2]
    aten::mul.Tensor(t$4: f32[2], t$1: f32[2])  ->  t$5: f32[2]
    aten::detach(t$5: f32[2])  ->  t$6: f32[2]
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import traceback
import weakref
from bisect import bisect_right
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from .. import _dtype
from .._api import namespace as tm
from .._api.tensor import Tensor
from .._autograd.engine import current_node
from .._autograd.graph import saving_for_backward
from .._autograd.nodes import next_sequence_nr
from .._dispatch.aten import OpOverload
from ..modes.observing import ModuleNames, public_name
from ..nn.modules import module as _module_api
from ..ops import aten
from ..overrides import TorchFunctionMode
from ._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode, _get_current_dispatch_mode_stack
from ._pytree import keystr, tree_all, tree_leaves_with_path, tree_map

__all__ = ["DebugMode", "get_active_debug_mode", "diff", "Divergence", "TensorIdTracker", "hash_tensor_data",
           "norm_hash_fn", "call_site", "ForwardSites", "UserLine"]

_DTYPE_ABBRS = {
    _dtype.uint8: "u8", _dtype.int8: "i8", _dtype.int16: "i16", _dtype.int32: "i32", _dtype.int64: "i64",
    _dtype.float16: "f16", _dtype.float32: "f32", _dtype.float64: "f64", _dtype.complex64: "c64",
    _dtype.complex128: "c128", _dtype.bool: "b8", _dtype.bfloat16: "bf16",
}
_ABBR_BY_NUMPY = {d._np: abbr for d, abbr in _DTYPE_ABBRS.items()}
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_INTERNAL = (_PACKAGE_DIR, "<tensormodes generated")

# hooks installed by DebugMode.dispatch_hooks (innermost last), PyTorch's
_RECORD_HOOKS: list[Callable] = []
_LOG_HOOKS: list[Callable] = []
_PRE_LOG_HOOKS: list[Callable] = []


# -- tensors as text ----------------------------------------------------------------------------

class TensorIdTracker:
    """Ids of the tensors a log names (``t$3``), one per live tensor object, in order of first
    sight; ``alias(new, source)`` gives a tensor its source's id (autograd's saved aliases)."""

    def __init__(self) -> None:
        self.tensor_memo: dict[int, int] = {}
        self.next_tensor_id = 0

    def _id(self, tensor) -> int:
        key = id(tensor)
        known = self.tensor_memo.get(key)
        if known is None:
            known = self.tensor_memo[key] = self.next_tensor_id
            self.next_tensor_id += 1
            weakref.finalize(tensor, self.tensor_memo.pop, key, None)  # the id() may be reused after
        return known

    def alias(self, tensor, source) -> None:
        """``tensor`` is ``source`` under another object: it gets ``source``'s id."""
        self.tensor_memo[id(tensor)] = self._id(source)
        weakref.finalize(tensor, self.tensor_memo.pop, id(tensor), None)


def _shape_text(shape) -> str:
    return f"[{', '.join(str(s) for s in shape)}]"


def _tensor_text(tensor, attributes: list[str], tensor_memo: TensorIdTracker | None) -> str:
    data = tensor._data
    text = f"{_ABBR_BY_NUMPY.get(data.dtype, str(data.dtype))}{_shape_text(data.shape)}"
    pairs = {a: getattr(tensor, a) for a in attributes if hasattr(tensor, a)}
    if pairs:
        text += "{" + ", ".join(f"{k}={v}" for k, v in pairs.items()) + "}"
    ids = f"${tensor_memo._id(tensor)}" if tensor_memo is not None else ""
    # (a FakeTensor is named as PyTorch names it; its class is another layer's, known by name)
    prefix = "ft" if type(tensor).__name__ == "FakeTensor" else "t"
    return f"{prefix}{ids}: {text}"


def _plain(value):
    """Return types (named tuples) as plain tuples, as PyTorch's pytree sees its structseqs."""
    if isinstance(value, tuple) and type(value) is not tuple:
        return tuple(value)
    return value


def _arg_to_str(arg, attributes: list[str], tensor_memo: TensorIdTracker | None = None) -> str:
    def to_str(x):
        return _tensor_text(x, attributes, tensor_memo) if isinstance(x, Tensor) else x

    return str(tree_map(to_str, _plain(arg)))


def _op_name(op) -> str:
    """``aten::addmm``, ``aten::sum.dim_IntList`` (an OpOverload's qualified name in PyTorch); a
    public callable as PyTorch's DebugMode names its own (``torch`` read ``tensormodes``)."""
    if isinstance(op, OpOverload):
        return op.name()
    name = _PUBLIC_CALL_NAMES.get(op)
    if name is None:
        name = _PUBLIC_CALL_NAMES[op] = _torch_style_name(op)
    return name


_PUBLIC_CALL_NAMES: dict = {}
_SLOTS = frozenset({"__getitem__", "__setitem__"})  # PyTorch's C tensor fills the mapping slots; the rest are methods
# Public modules whose native functions PyTorch binds in a C submodule, under their aten names
# (``torch._C._nn.linear``, ``torch._C._linalg.linalg_norm``).
_C_SUBMODULES = {"tensormodes.nn.functional": "tensormodes._C._nn", "tensormodes.linalg": "tensormodes._C._linalg",
                 "tensormodes.special": "tensormodes._C._special", "tensormodes.fft": "tensormodes._C._fft"}


def _torch_style_name(func) -> str:
    """PyTorch's DebugMode names a callable ``f"{__module__}.{__name__}"``, or ``str(func)`` when it
    has no module (a method of the C tensor). Where PyTorch writes a callable in C, this library's
    op declarations say so (the callable computes one declared op, ``_OP`` in its globals), so the
    name follows where PyTorch keeps it: a method or operator of the C tensor
    (``<method 'mul' of 'tensormodes._C.TensorBase' objects>``, ``<slot wrapper '__getitem__' ...>``),
    a ``tensormodes.add``-style function, or a native function of a C submodule under its op's
    name (``tensormodes._C._nn.linear``); a Tensor method written in Python (a composite, as
    ``backward``) is in ``tensormodes._tensor`` as PyTorch's ``torch/_tensor.py``."""
    name = getattr(func, "__name__", None)
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", "")
    names = getattr(func, "__globals__", {})
    if name is None or module is None or not module.startswith("tensormodes") or ".__get__" in qualname \
            or ".__set__" in qualname:
        return public_name(func)
    if qualname.startswith("Tensor."):
        if not names.get("_leaf", True):
            return f"tensormodes._tensor.{name}"
        kind = "slot wrapper" if name in _SLOTS else "method"
        return f"<{kind} '{name}' of 'tensormodes._C.TensorBase' objects>"
    if module == "tensormodes.nn.functional" and name in _FUNCTIONAL_NAMES:
        return _FUNCTIONAL_NAMES[name]
    declared = names.get("_OP")
    if declared is not None and module in _C_SUBMODULES:
        return f"{_C_SUBMODULES[module]}.{declared}"
    return f"{module}.{name}"


# ``nn.functional``'s functions whose place differs between PyTorch and here: written in Python
# here and bound from C there (``F.gelu`` is ``torch._C._nn.gelu``, ``F.prelu`` is
# ``torch.prelu``), declared ops here and Python there (``nll_loss``), or wrapped there
# (``F.threshold`` is ``_threshold``) — under the names PyTorch's DebugMode prints.
_FUNCTIONAL_NAMES = {
    **{name: f"tensormodes.nn.functional.{name}" for name in ("binary_cross_entropy", "nll_loss")},
    "threshold": "tensormodes.nn.functional._threshold",
    **{name: f"tensormodes._C._nn.{name}" for name in (
        "gelu", "softplus", "one_hot", "elu_", "hardtanh_", "leaky_relu_", "scaled_dot_product_attention")},
    "logsigmoid": "tensormodes._C._nn.log_sigmoid",
    **{name: f"tensormodes.{name}" for name in ("prelu", "cosine_similarity", "pairwise_distance", "bilinear")},
}


# -- hashes -------------------------------------------------------------------------------------

def hash_tensor_data(t) -> str | None:
    """A stable hash of a tensor's values (its dtype, shape and bytes; 16 hex digits), the same in
    every run and process for equal data; None for a tensor without data (meta, fake)."""
    data = t._data
    if not isinstance(data, np.ndarray):
        return None
    digest = hashlib.blake2b(f"{data.dtype}{data.shape}".encode(), digest_size=8)
    digest.update(np.ascontiguousarray(data).tobytes())
    return digest.hexdigest()


def norm_hash_fn(t, use_scalar: bool = False) -> float | None:
    """PyTorch's "norm" hash: the L1 norm of the values in float64 (NaN and Inf as they are)."""
    data = t._data
    if not isinstance(data, np.ndarray):
        return None
    value = float(np.abs(data.astype(np.complex128 if data.dtype.kind == "c" else np.float64)).sum())
    return value


# -- the calls a log holds ----------------------------------------------------------------------

class _DebugCall:
    """Base class for tracking operator calls in DebugMode."""

    def __init__(self, call_depth: int, record: dict | None = None, log: dict | None = None,
                 stack: bool = False) -> None:
        self.call_depth = call_depth
        if stack:
            self.stack_trace = _stack_trace()
            self.fwd_stack_trace = None
        self.record = record
        self.log = log
        self.output_str: str | None = None

    def stringify_args(self, attributes: list[str], tensor_memo: TensorIdTracker | None = None) -> None:
        """Keep the arguments as text (and drop them), to hold no tensor alive."""
        raise NotImplementedError("Subclasses must implement stringify_args(), even if no-op")

    def stringify_output(self, output, attributes: list[str], tensor_memo: TensorIdTracker | None = None) -> None:
        """Store the text of the call's output in ``output_str``."""
        if tree_all(lambda x: x is None, _plain(output)):
            return
        self.output_str = f"  ->  {_arg_to_str(output, attributes, tensor_memo)}"

    def render(self, attributes: list[str]) -> str:
        raise NotImplementedError("Subclasses must implement string render()")

    def __repr__(self) -> str:
        return self.render([])


class _OpCall(_DebugCall):
    """Normal operator call."""

    def __init__(self, op, args: tuple, kwargs: dict, call_depth: int, stack: bool = False) -> None:
        super().__init__(call_depth, stack=stack)
        self.op = op
        self.args = args
        self.kwargs = kwargs
        self.args_str: str | None = None
        self.kwargs_str: str | None = None

    def stringify_args(self, attributes: list[str], tensor_memo: TensorIdTracker | None = None) -> None:
        self.args_str = ", ".join(_arg_to_str(arg, attributes, tensor_memo) for arg in self.args)
        self.kwargs_str = "".join(f", {k}={_arg_to_str(v, attributes, tensor_memo)}" for k, v in self.kwargs.items())
        del self.args
        del self.kwargs

    def render(self, attributes: list[str]) -> str:
        args_str = self.args_str if self.args_str is not None else \
            ", ".join(_arg_to_str(arg, attributes) for arg in self.args)
        kwargs_str = self.kwargs_str if self.kwargs_str is not None else \
            "".join(f", {k}={_arg_to_str(v, attributes)}" for k, v in self.kwargs.items())
        text = f"{_op_name(self.op)}({args_str}{kwargs_str})"
        if self.output_str:
            text += self.output_str
        if self.log:
            text += f"  # {self.log}"
        return text

    def __iter__(self):
        # PyTorch's: tuple(call) is (op, args, kwargs, call_depth)
        if self.args_str is not None:
            yield from [self.op, self.args_str, self.kwargs_str, self.call_depth]
        else:
            yield from [self.op, self.args, self.kwargs, self.call_depth]


class _AnnotateCall(_DebugCall):
    """A line of the log that is no call: a module entered (``[nn.Mod] MLP.fc1``) or a user's
    annotation (``[annotate] tag``)."""

    def __init__(self, tag: Any, header: str, call_depth: int, stack: bool = False) -> None:
        super().__init__(call_depth, stack=stack)
        self.tag = tag
        self.header = header

    def stringify_args(self, attributes: list[str], tensor_memo: TensorIdTracker | None = None) -> None:
        pass

    def render(self, attributes: list[str]) -> str:
        return f"[{self.header}] {self.tag}"

    def __iter__(self):
        yield from [f"[{self.header}] {self.tag}", (), {}, self.call_depth]


def _get_call_name(call: _DebugCall) -> str:
    """What a log entry is: the op's name, or the annotation's text."""
    if isinstance(call, _OpCall):
        return _op_name(call.op)
    if isinstance(call, _AnnotateCall):
        return f"[{call.header}] {call.tag}"
    return str(call)


# -- stack traces: the user's line, and for backward ops the forward line -----------------------

def _stack_trace() -> str:
    """The stack of the call, without the library's own frames (formatted as ``traceback``)."""
    frames = [f for f in traceback.extract_stack() if not f.filename.startswith(_INTERNAL)]
    return "".join(traceback.format_list(frames))


class UserLine(NamedTuple):
    """A line of the user's code: ``path``, ``line`` number, function ``name``, its ``code``."""

    path: str
    line: int
    name: str
    code: str

    def summary(self) -> str:
        """PyTorch's one-line form: ``File: path:line in name, code: text``."""
        return f"File: {self.path}:{self.line} in {self.name}, code: {self.code}"


def _user_line(stack_trace: str) -> UserLine | None:
    """The innermost frame of ``stack_trace`` (formatted as ``traceback`` formats stacks)."""
    lines = stack_trace.rstrip("\n").splitlines()
    for position in range(len(lines) - 1, -1, -1):
        line = lines[position].strip()
        if line.startswith('File "'):
            path, _, rest = line[6:].partition('", line ')
            number, _, name = rest.partition(", in ")
            code = lines[position + 1].strip() if position + 1 < len(lines) else ""
            return UserLine(path, int(number), name, code)
    return None


def _user_stack_summary(stack_trace: str) -> str | None:
    """``File: path:line in name, code: text`` of the innermost frame of ``stack_trace``."""
    found = _user_line(stack_trace)
    return None if found is None else found.summary()


def call_site(call: _DebugCall) -> tuple[UserLine, bool] | None:
    """Where a call logged with ``record_stack_trace`` came from: (the user's line, whether it is
    the forward line of a backward op — the line whose forward call made the autograd node that
    ran it), or None."""
    forward = getattr(call, "fwd_stack_trace", None)
    if forward:
        found = _user_line(forward)
        if found is not None:
            return found, True
    own = getattr(call, "stack_trace", None)
    found = _user_line(own) if own else None
    return None if found is None else (found, False)


class ForwardSites:
    """Which forward call made a backward node: ``note(site)`` as each forward op runs, and
    ``site_of(node)`` in backward gives what was noted for the op that made ``node``.

    Autograd numbers nodes as it makes them (``_sequence_nr``); each note takes a number from the
    same sequence, so a node's maker is the last op noted before the node's number. (PyTorch keeps
    the forward traceback on the node in anomaly mode.)"""

    def __init__(self) -> None:
        self._marks: list[int] = []
        self._sites: list = []

    def note(self, site) -> None:
        """Record ``site`` for the forward op running now (before its node is made)."""
        self._marks.append(next_sequence_nr())
        self._sites.append(site)

    def site_of(self, node):
        """What was noted for the forward op that made ``node`` (None if nothing was)."""
        if node is None:
            return None
        position = bisect_right(self._marks, node._sequence_nr) - 1
        return self._sites[position] if position >= 0 else None


# -- the mode -----------------------------------------------------------------------------------

class _TorchFunctionRecorder(TorchFunctionMode):
    """The public-API level of a ``DebugMode(record_torchfunction=True)``."""

    def __init__(self, debug_mode: DebugMode) -> None:
        super().__init__()
        self.debug_mode = debug_mode

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.debug_mode.__torch_function__(func, types, args, kwargs)


def _grad_accumulator_views(values) -> None:
    """What PyTorch's module tracker does to a module's inputs (and outputs) that are leaves
    requiring grad: it finds their gradient accumulators through ``t.view_as(t)``, a view the
    log shows (``aten::view``), so the log is PyTorch's with ``record_nn_module=True``."""
    for _, value in tree_leaves_with_path(values):
        if isinstance(value, Tensor) and value.requires_grad and value.grad_fn is None:
            with tm.enable_grad():
                value.view_as(value)


class DebugMode(TorchDispatchMode):
    """A debugging ``TorchDispatchMode`` that intercepts and logs runtime calls to a hierarchical
    string dump (``debug_string()``), PyTorch 2.13's. The arguments:

    * ``record_torchfunction``: also log the public calls (``__torch_function__`` level), with the
      aten calls they make indented under them;
    * ``record_faketensor`` / ``record_realtensor``: log ops on fake tensors (off) / real ones (on);
    * ``record_tensor_attributes``: attribute names to show with each tensor (``{requires_grad=True}``);
    * ``record_nn_module``: a ``[nn.Mod] Sequential.0`` line for each module call, its ops under it;
    * ``store_original_args``: keep the calls' arguments (else only their text, to hold no tensor);
    * ``record_stack_trace``: keep each call's stack (``call.stack_trace``), and for backward ops the
      forward call's (``call.fwd_stack_trace``); ``debug_string()`` then shows the user's line above
      each group of ops (``# File: train.py:12 in step, code: loss = model(x)``);
    * ``record_output``: show each call's outputs (on);
    * ``record_ids``: name tensors ``t$0``, ``t$1``..., stable across autograd's saved tensors;
    * ``record_hash`` (beyond PyTorch): store a hash of each output's data in ``call.log["hash"]``,
      for ``diff``;
    * ``record_profiler_context``, ``record_localtensor``, ``run_compile_with_interpreter``: accepted,
      no effect here (no profiler ranges, local tensors or compiler).

    ``operators`` (``logs``) holds the calls: ``_OpCall`` (``op``, ``call_depth``, the text of its
    arguments and output, ``log``) and ``_AnnotateCall`` entries.
    """

    def __init__(self, *, record_torchfunction: bool = False, record_faketensor: bool = False,
                 record_realtensor: bool = True, record_tensor_attributes: list[str] | None = None,
                 record_nn_module: bool = False, store_original_args: bool = False,
                 record_stack_trace: bool = False, record_output: bool = True, record_ids: bool = False,
                 record_profiler_context: bool = True, record_localtensor: bool = True,
                 run_compile_with_interpreter: bool = False, record_hash: bool = False) -> None:
        super().__init__()
        self.record_torchfunction = record_torchfunction
        self.record_faketensor = record_faketensor
        self.record_realtensor = record_realtensor
        self.record_localtensor = record_localtensor
        self.record_tensor_attributes = record_tensor_attributes or []
        self.record_nn_module = record_nn_module
        self.store_original_args = store_original_args
        self.record_stack_trace = record_stack_trace
        self.record_output = record_output
        self.record_ids = record_ids
        self.record_profiler_context = record_profiler_context
        self.run_compile_with_interpreter = run_compile_with_interpreter
        self.record_hash = record_hash
        self._function_mode: _TorchFunctionRecorder | None = None
        self._module_handles: list = []
        self._module_names = ModuleNames()
        self.reset()

    def reset(self) -> None:
        """Forget the calls logged so far (and the tensor ids)."""
        self.operators: list[_DebugCall] = []
        self.call_depth = 0
        self._tensor_memo = TensorIdTracker()
        self.current_nn_module_stack: list[str] = []
        self._forward_sites = ForwardSites()

    @property
    def logs(self) -> list[_DebugCall]:
        """The calls logged, in order (a copy of ``operators``)."""
        return list(self.operators)

    # -- recording

    def _record_call(self, call: _DebugCall) -> None:
        if not self.store_original_args:
            call.stringify_args(self.record_tensor_attributes, self._tensor_memo if self.record_ids else None)
        if self.record_stack_trace:
            node = current_node()
            if node is None:
                self._forward_sites.note(call.stack_trace)
            else:
                call.fwd_stack_trace = self._forward_sites.site_of(node)
        self.operators.append(call)

    def _record_call_output(self, call: _DebugCall, output) -> None:
        if self.record_output:
            call.stringify_output(output, self.record_tensor_attributes,
                                  self._tensor_memo if self.record_ids else None)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Log a public call (``record_torchfunction=True``), then the calls it makes under it."""
        kwargs = kwargs or {}
        call = _OpCall(func, args, kwargs, self.call_depth, stack=self.record_stack_trace)
        self._record_call(call)
        try:
            self.call_depth += 1
            result = func(*args, **kwargs)
            self._record_call_output(call, result)
            return result
        finally:
            self.call_depth -= 1

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        """Log the aten call (ops on real tensors, and on fake ones with ``record_faketensor``),
        run it, and log its output."""
        kwargs = kwargs or {}
        if func is _DETACH and saving_for_backward():
            # autograd's alias of a saved tensor: not logged (as PyTorch's), known as its source
            result = func(*args, **kwargs)
            self._tensor_memo.alias(result, args[0])
            return result
        call = None
        below = _get_current_dispatch_mode()
        if any(t.__name__ == "FakeTensor" for t in types) or type(below).__name__ == "FakeTensorMode":
            if self.record_faketensor:
                call = _OpCall(func, args, kwargs, self.call_depth + 1, stack=self.record_stack_trace)
        elif not types and self.record_realtensor:
            call = _OpCall(func, args, kwargs, self.call_depth + 1, stack=self.record_stack_trace)
        if call is not None:
            self._record_call(call)
            _run_hooks(_PRE_LOG_HOOKS, call, func, types, args, kwargs, call)
        result = func(*args, **kwargs)
        if call is not None:
            self._record_call_output(call, result)
            if self.record_hash:
                hashes = tree_map(lambda x: hash_tensor_data(x) if isinstance(x, Tensor) else None, _plain(result))
                call.log = {**(call.log or {}), "hash": hashes}
            _run_dispatch_hooks(call, func, types, args, kwargs, result)
        return result

    # -- modules

    def _enter_nn_module_call(self, fqn: str, header: str) -> None:
        self.operators.append(_AnnotateCall(fqn, header, self.call_depth + 1, stack=self.record_stack_trace))
        self.current_nn_module_stack.append(fqn)
        self.call_depth += 1

    def _exit_nn_module_call(self) -> None:
        self.call_depth -= 1
        self.current_nn_module_stack.pop()

    def _pre_forward(self, module, args) -> None:
        self._enter_nn_module_call(self._module_names(module), "nn.Mod")
        _grad_accumulator_views(args)

    def _post_forward(self, module, args, output) -> None:
        self._exit_nn_module_call()
        _grad_accumulator_views(output)

    # -- scope

    def __enter__(self):
        if self.record_torchfunction:
            self._function_mode = _TorchFunctionRecorder(self)
            self._function_mode.__enter__()
        try:
            super().__enter__()
        except BaseException:
            self._leave_function_mode(None, None, None)
            raise
        if self.record_nn_module:
            self._module_handles = [_module_api.register_module_forward_pre_hook(self._pre_forward),
                                    _module_api.register_module_forward_hook(self._post_forward, always_call=True)]
        return self

    def __exit__(self, exc_type, exc_value, traceback_) -> None:
        handles, self._module_handles = self._module_handles, []
        for handle in handles:
            handle.remove()
        try:
            super().__exit__(exc_type, exc_value, traceback_)
        finally:
            self._leave_function_mode(exc_type, exc_value, traceback_)

    def _leave_function_mode(self, exc_type, exc_value, traceback_) -> None:
        mode, self._function_mode = self._function_mode, None
        if mode is not None:
            mode.__exit__(exc_type, exc_value, traceback_)

    # -- output

    def debug_string(self, show_stack_trace: bool | None = None) -> str:
        """The log as text: one line per call, indented by nesting (two spaces per level).

        ``show_stack_trace`` (default: ``record_stack_trace``): above each group of calls from one
        line of the user's code, that line as a comment (for a backward op, the forward line that
        made it)."""
        show_stack_trace = self.record_stack_trace if show_stack_trace is None else show_stack_trace
        attributes = self.record_tensor_attributes
        if not show_stack_trace:
            return "\n".join("  " + "  " * op.call_depth + op.render(attributes) for op in self.operators)
        lines: list[str] = []
        previous = None
        for op in self.operators:
            stack_trace = getattr(op, "fwd_stack_trace", None) or getattr(op, "stack_trace", None)
            summary = _user_stack_summary(stack_trace) if stack_trace else None
            if summary and summary != previous:
                if lines:
                    lines.append("")
                lines.append("  " * (op.call_depth + 1) + "# " + summary)
                previous = summary
            lines.append("  " + "  " * op.call_depth + op.render(attributes))
        return "\n".join(lines)

    # -- PyTorch's extension points

    @staticmethod
    @contextlib.contextmanager
    def dispatch_hooks(record_hook: Callable | None = None, log_hook: Callable | None = None,
                       pre_log_hook: Callable | None = None) -> Iterator[None]:
        """Within the block, ``record_hook(func, types, args, kwargs, result)`` results (dicts) go
        to each logged call's ``record``, ``log_hook``'s to its ``log`` (shown in the dump), and
        ``pre_log_hook(func, types, args, kwargs, call)``'s, run before the op, to its ``log``."""
        for hooks, hook in ((_RECORD_HOOKS, record_hook), (_LOG_HOOKS, log_hook), (_PRE_LOG_HOOKS, pre_log_hook)):
            if hook is not None:
                hooks.append(hook)
        try:
            yield
        finally:
            for hooks, hook in ((_RECORD_HOOKS, record_hook), (_LOG_HOOKS, log_hook),
                                (_PRE_LOG_HOOKS, pre_log_hook)):
                if hook is not None:
                    hooks.remove(hook)

    @staticmethod
    @contextlib.contextmanager
    def log_tensor_hashes(hash_fn: Callable | str | list[str] = "norm", hash_inputs: bool = False) -> Iterator[None]:
        """Within the block, each logged call's ``log["hash"]`` holds a hash of each output
        (``"norm"``: the L1 norm in float64, as PyTorch's; or a function of a tensor), and with
        ``hash_inputs`` its ``log["input_hash"]`` the inputs' before the op ran."""
        if callable(hash_fn):
            fn = hash_fn
        elif hash_fn == "norm" or (isinstance(hash_fn, list) and all(h == "norm" for h in hash_fn)):
            fn = norm_hash_fn if isinstance(hash_fn, str) else (lambda t: tuple(norm_hash_fn(t) for _ in hash_fn))
        else:
            raise AssertionError(f"hash_type must be 'norm', got {hash_fn!r} (tensormodes has no torch.hash_tensor)")

        def tree_hash(value):
            return tree_map(lambda x: fn(x) if isinstance(x, Tensor) else None, _plain(value))

        def pre_hook(func, types, args, kwargs, call):
            if hash_inputs:
                hashes = tree_hash((args, kwargs))
                if not tree_all(lambda x: x is None, hashes):
                    return {"input_hash": hashes}
            return None

        def post_hook(func, types, args, kwargs, result):
            hashes = tree_hash(result)
            return None if tree_all(lambda x: x is None, hashes) else {"hash": hashes}

        with DebugMode.dispatch_hooks(log_hook=post_hook, pre_log_hook=pre_hook if hash_inputs else None):
            yield

    @staticmethod
    def call_site(call: _DebugCall) -> tuple[UserLine, bool] | None:
        """Where a call logged with ``record_stack_trace`` came from (beyond PyTorch): see
        ``call_site``."""
        return call_site(call)

    @staticmethod
    def _annotate(tag: Any) -> None:
        """Add an ``[annotate] tag`` line to the active DebugMode's log (if one is active)."""
        mode = get_active_debug_mode()
        if mode is not None:
            mode.operators.append(_AnnotateCall(tag, "annotate", mode.call_depth, mode.record_stack_trace))


_DETACH = aten.detach.default


def _run_hooks(hooks: list, call: _DebugCall, *arguments) -> None:
    for hook in hooks:
        out = hook(*arguments)
        if out is not None:
            if not isinstance(out, dict):
                raise AssertionError(f"hook must return None or dict, got {type(out).__name__}")
            call.log = {**(call.log or {}), **out}


def _run_dispatch_hooks(call: _DebugCall, func, types, args, kwargs, result) -> None:
    if _RECORD_HOOKS:
        record = {}
        for hook in _RECORD_HOOKS:
            out = hook(func, types, args, kwargs, result)
            if out is not None:
                record.update(out)
        if record:
            call.record = record
    _run_hooks(_LOG_HOOKS, call, func, types, args, kwargs, result)


def get_active_debug_mode() -> DebugMode | None:
    """The outermost active ``DebugMode``, or None."""
    for mode in _get_current_dispatch_mode_stack():
        if isinstance(mode, DebugMode):
            return mode
    return None


# -- diffing two runs ---------------------------------------------------------------------------

class Divergence(NamedTuple):
    """Where two logs first differ: the entry's ``index``, the ``op`` (as the first log names it),
    the ``output`` (its pytree path, ``""`` for a single tensor, None when the calls themselves
    differ), ``reason`` and what each log has there (``a``, ``b``)."""

    index: int
    op: str
    output: str | None
    reason: str
    a: Any
    b: Any

    def __str__(self) -> str:
        where = f"output{self.output}" if self.output is not None else "the call"
        return f"logs diverge at entry {self.index}, {self.op}: {self.reason} ({where}: {self.a!r} vs {self.b!r})"


def _calls(log) -> list:
    return log.operators if isinstance(log, DebugMode) else list(log)


def diff(log_a, log_b) -> Divergence | None:
    """The first place two runs' logs (``DebugMode`` objects or their ``operators``) differ, or
    None when they match: a different call (op, arguments' dtypes and shapes, nesting), a log that
    ends early, or an output whose data hash differs (logs taken with ``record_hash=True`` or
    ``log_tensor_hashes``).

    >>> import tensormodes as tm
    >>> def run(scale):
    ...     with DebugMode(record_hash=True) as dm:
    ...         x = tm.ones(3) * scale
    ...         _ = x.exp()
    ...     return dm
    >>> diff(run(2.0), run(2.0)) is None
    True
    >>> print(diff(run(2.0), run(3.0)).op)
    aten::mul.Tensor
    """
    a_calls, b_calls = _calls(log_a), _calls(log_b)
    for index, (a, b) in enumerate(zip(a_calls, b_calls)):
        name_a, name_b = _get_call_name(a), _get_call_name(b)
        if name_a != name_b:
            return Divergence(index, name_a, None, "a different op", name_a, name_b)
        if a.call_depth != b.call_depth:
            return Divergence(index, name_a, None, "a different nesting", a.call_depth, b.call_depth)
        if isinstance(a, _OpCall) and isinstance(b, _OpCall):
            shown_a, shown_b = a.render([]).partition("  # ")[0], b.render([]).partition("  # ")[0]
            if shown_a != shown_b:
                return Divergence(index, name_a, None, "different arguments or output metadata", shown_a, shown_b)
            found = _hash_difference(a.log, b.log)
            if found is not None:
                path, hash_a, hash_b = found
                return Divergence(index, name_a, path, "different output data", hash_a, hash_b)
    if len(a_calls) != len(b_calls):
        index = min(len(a_calls), len(b_calls))
        longer = a_calls if len(a_calls) > len(b_calls) else b_calls
        which = "the second log ends" if len(a_calls) > len(b_calls) else "the first log ends"
        return Divergence(index, _get_call_name(longer[index]), None, which, len(a_calls), len(b_calls))
    return None


def _hash_difference(log_a: dict | None, log_b: dict | None):
    """(pytree path, hash a, hash b) of the first output whose hashes differ, or None."""
    hashes_a = (log_a or {}).get("hash")
    hashes_b = (log_b or {}).get("hash")
    if hashes_a is None and hashes_b is None:
        return None
    leaves_a = tree_leaves_with_path(hashes_a)
    leaves_b = tree_leaves_with_path(hashes_b)
    for (path, value_a), (_, value_b) in zip(leaves_a, leaves_b):
        if value_a != value_b:
            return keystr(path), value_a, value_b
    if len(leaves_a) != len(leaves_b):
        return "", hashes_a, hashes_b
    return None

"""The backward graph: nodes recorded by operations, saved tensors, version counters.

This layer sits below the override layer: it never imports the Tensor class
(the Tensor layer registers it in ``TENSOR_TYPES``) and works on tensors
through their methods, so gradient formulas are ordinary public calls that
modes see and that are themselves recorded when ``create_graph=True``.

>>> import tensormodes as tm
>>> x = tm.ones(2, requires_grad=True)
>>> y = (x * 2).exp()
>>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
('ExpBackward0', 'MulBackward0')
"""

from __future__ import annotations

import inspect
import weakref

from .grad_mode import grad_enabled

__all__ = ["Node", "AccumulateGrad", "record", "record_inplace", "needs_grad", "bump_version",
           "share_version", "version_of", "TENSOR_TYPES"]

# The Tensor class and internal helpers, registered by the Tensor layer (this
# module sits below it): ``alias(t)`` a new plain tensor sharing t's storage and
# version counter, without history; ``copy(t)`` the same with its own storage;
# ``meta(t)`` its (shape tuple, dtype); ``ones(t)`` ones like it. Bookkeeping
# goes through them, never through public calls, so modes see only real math.
TENSOR_TYPES: list[type] = []
_SUPPORT: dict = {}
# The same, bound once as globals for the hot path (recording runs for every op
# that requires grad): one global lookup instead of a call and a dict lookup.
_Tensor: type = type(None)
_meta = _alias = None


def register_tensor_type(tensor_type: type, **helpers) -> None:
    """Called once by the Tensor layer with ``alias``, ``copy``, ``meta`` and ``ones``."""
    global _Tensor, _meta, _alias
    TENSOR_TYPES.append(tensor_type)
    _SUPPORT.update(helpers)
    _Tensor, _meta, _alias = tensor_type, helpers["meta"], helpers["alias"]


def meta(t) -> tuple:
    """``(shape, dtype)`` of a tensor, without a public call."""
    return _meta(t)


def _is_tensor(value) -> bool:
    return isinstance(value, _Tensor)


def alias(t):
    return _alias(t)


def ones_like(t):
    """Ones with ``t``'s shape and dtype, no history."""
    return _SUPPORT["ones"](t)


def zeros(shape: tuple, dtype):
    """A zero tensor of ``shape`` and ``dtype``, no history."""
    return _SUPPORT["zeros"](shape, dtype)


def copy_detached(t):
    """A new plain tensor with a copy of ``t``'s data and no history."""
    return _SUPPORT["copy"](t)


# -- version counters ------------------------------------------------------------------------
# A tensor and its views share one counter (a one-element list), bumped by every
# in-place write; a saved tensor remembers the version it was saved at.

def version_counter(t) -> list:
    counter = t.__dict__.get("_version_counter")
    if counter is None:
        counter = t._version_counter = [0]
    return counter


def version_of(t) -> int:
    counter = t.__dict__.get("_version_counter")
    return 0 if counter is None else counter[0]


def bump_version(t) -> None:
    """Record an in-place modification of ``t`` (and of every tensor sharing its storage)."""
    version_counter(t)[0] += 1


def share_version(view, base) -> None:
    """Make ``view`` share ``base``'s version counter."""
    view._version_counter = version_counter(base)


# -- nodes ----------------------------------------------------------------------------------------

class Node:
    """A function of the backward graph: takes output gradients, returns input gradients.

    ``next_functions`` holds, for each input, ``(node, output_nr)`` or ``(None, 0)``
    for inputs that need no gradient.
    """

    next_functions: tuple = ()

    def name(self) -> str:
        """The node's name, PyTorch style (``'MulBackward0'``)."""
        return type(self).__name__

    def apply(self, grads: tuple) -> tuple:
        """Input gradients (one per entry of ``next_functions``) from output gradients."""
        raise NotImplementedError

    def release(self) -> None:
        """Free saved tensors (after a backward pass without ``retain_graph``)."""

    def register_hook(self, hook) -> None:
        """``hook(grad_inputs, grad_outputs)`` runs after the node; a non-None result
        replaces ``grad_inputs``."""
        self.__dict__.setdefault("_post_hooks", []).append(hook)

    def register_prehook(self, hook) -> None:
        """``hook(grad_outputs)`` runs before the node; a non-None result replaces them."""
        self.__dict__.setdefault("_pre_hooks", []).append(hook)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """Sink of a leaf tensor: adds incoming gradients into its ``.grad``."""

    def __init__(self, variable) -> None:
        self._variable = weakref.ref(variable)

    @property
    def variable(self):
        """The leaf tensor this node accumulates into."""
        return self._variable()

    def apply(self, grads: tuple) -> tuple:
        return ()


def grad_edge(t) -> tuple:
    """The ``(node, output_nr)`` a gradient for ``t`` must flow into."""
    node = t._grad_fn
    if node is not None:
        return (node, t.__dict__.get("_output_nr", 0))
    if not t._requires_grad:
        return (None, 0)
    accumulator = t.__dict__.get("_grad_accumulator")
    if accumulator is None:
        accumulator = t._grad_accumulator = AccumulateGrad(t)
    return (accumulator, 0)


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved."""

    __slots__ = ("_tensor", "_version", "_counter", "_producer", "_output_nr", "_is_output")

    def __init__(self, t, is_output: bool) -> None:
        attributes = t.__dict__
        counter = attributes.get("_version_counter")  # version_counter(t), inline: saved per op
        if counter is None:
            counter = t._version_counter = [0]
        self._counter = counter
        self._version = counter[0]
        self._is_output = is_output
        self._output_nr = attributes.get("_output_nr", 0)
        # Named in the error if the tensor is modified in place before backward.
        producer = t._grad_fn
        self._producer = None if is_output or producer is None else producer.name()
        # Saving the output itself would make a cycle (node -> output -> node):
        # keep its storage and rebuild the tensor, pointing at this node, on unpack.
        self._tensor = _alias(t) if is_output else t

    def unpack(self, node: Node):
        t = self._tensor
        if t is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after "
                "they have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling backward.")
        if self._counter[0] != self._version:
            producer = node.name() if self._is_output else self._producer
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{t.type()} {list(meta(t)[0])}]"
                + (f", which is output {self._output_nr} of {producer}," if producer else "")
                + f" is at version {self._counter[0]}; expected version {self._version} instead. Hint: the "
                f"backtrace further above can point at the operation that failed to compute its gradient.")
        if self._is_output:
            t = _alias(t)
            t._requires_grad = True
            t._grad_fn = node
            if self._output_nr:
                t._output_nr = self._output_nr
        return t

    def release(self) -> None:
        self._tensor = None


_NODE_CLASSES: dict[str, type] = {}


def _node_class(op_name: str) -> type:
    cls = _NODE_CLASSES.get(op_name)
    if cls is None:
        camel = "".join(part[:1].upper() + part[1:] for part in op_name.strip("_").split("_"))
        cls = _NODE_CLASSES[op_name] = type(f"{camel}Backward0", (OpBackward,), {"__module__": __name__})
    return cls


class OpBackward(Node):
    """Backward of an op from the op table: runs its declared gradient formula.

    The formula receives the output gradient (``grad``, a tuple for ops with
    several outputs), the output (``result``) and the op's arguments by name,
    and returns one gradient (or None) per tensor parameter.
    """

    def __init__(self, formula, wanted: tuple[str, ...], saved: dict, edges: tuple, shapes: tuple,
                 dtypes: tuple) -> None:
        self._formula = formula
        self._wanted = wanted
        self._saved = saved
        self.next_functions = edges
        self._shapes = shapes
        self._dtypes = dtypes

    def apply(self, grads: tuple) -> tuple:
        saved = self._saved
        values = []
        for name in self._wanted:
            if name == "grad":
                values.append(grads if len(grads) > 1 else grads[0])
            else:
                value = saved[name]
                # type() is: SavedTensor is final, and this runs per saved value per node.
                values.append(value.unpack(self) if type(value) is SavedTensor else _unpack(value, self))
        formula = self._formula
        if formula in _POSITIONAL:  # positional arguments: no keyword dict to build and parse
            result = formula(*values)
        else:
            result = formula(**dict(zip(self._wanted, values)))
        if not isinstance(result, (tuple, list)):
            result = (result,)
        flat = []
        for value in result:
            if value is None or type(value) is _Tensor:
                flat.append(value)
            elif isinstance(value, (tuple, list)):
                flat.extend(value)
            else:
                flat.append(value)
        return tuple([_fit(g, shape, dtype) for g, shape, dtype in zip(flat, self._shapes, self._dtypes)])

    def release(self) -> None:
        saved = self._saved
        if saved:
            for value in saved.values():
                if type(value) is SavedTensor:
                    value._tensor = None
                elif isinstance(value, list):
                    for item in value:
                        if isinstance(item, SavedTensor):
                            item.release()


def _unpack(value, node):
    if isinstance(value, SavedTensor):
        return value.unpack(node)
    if isinstance(value, list):
        return [_unpack(v, node) for v in value]
    if isinstance(value, tuple) and value and any(isinstance(v, SavedTensor) for v in value):
        items = [_unpack(v, node) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def _fit(grad, shape, dtype):
    """Sum a broadcast gradient back to its input's shape and cast it to the input's dtype."""
    if grad is None or shape is None:
        return None
    grad_shape, grad_dtype = _meta(grad)
    if grad_shape != shape:
        grad = sum_to_shape(grad, grad_shape, shape)
    if grad_dtype is not dtype:
        if grad_dtype.is_complex and not dtype.is_complex:
            grad = grad.real  # a real input's gradient is the real part
        grad = grad.to(dtype)
    return grad


def sum_to_shape(grad, grad_shape: tuple, shape: tuple):
    """``grad`` summed over the dimensions broadcasting added or expanded to reach ``shape``."""
    extra = len(grad_shape) - len(shape)
    if extra < 0:
        raise RuntimeError(f"gradient of shape {list(grad_shape)} cannot be reduced to shape {list(shape)}")
    if extra and grad_shape[extra:] == shape:
        # Only leading dimensions to drop (a bias): one sum, no reshape.
        return grad.sum(0) if extra == 1 else grad.sum(list(range(extra)))
    dims = list(range(extra))
    dims += [extra + i for i, size in enumerate(shape) if size == 1 and grad_shape[extra + i] != 1]
    if dims:
        grad = grad.sum(dims, keepdim=True)
    if extra:
        grad = grad.reshape(shape)
    return grad


# -- recording ------------------------------------------------------------------------------------

def needs_grad(tensors) -> bool:
    """True if one of ``tensors`` (lists looked into) requires grad and grad mode is on."""
    for t in tensors:
        if isinstance(t, (list, tuple)):
            if any(getattr(x, "_requires_grad", False) for x in t):
                return grad_enabled()
        elif getattr(t, "_requires_grad", False):
            return grad_enabled()
    return False


_WANTED: dict = {}
# Formulas whose parameters can all be passed positionally: called without a keyword dict.
_POSITIONAL: set = set()


def _wanted(formula) -> tuple[str, ...]:
    wanted = _WANTED.get(formula)
    if wanted is None:
        parameters = inspect.signature(formula).parameters.values()
        wanted = _WANTED[formula] = tuple(p.name for p in parameters)
        if all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters):
            _POSITIONAL.add(formula)
    return wanted


_DIFFERENTIABLE: dict = {}  # dtype -> floating or complex, memoised: asked per recorded output


def _differentiable(t) -> bool:
    dtype = _meta(t)[1]
    answer = _DIFFERENTIABLE.get(dtype)
    if answer is None:
        answer = _DIFFERENTIABLE[dtype] = dtype.is_floating_point or dtype.is_complex
    return answer


def record(op_name: str, formula, tensor_params: tuple[str, ...], arguments: dict, result):
    """Attach a backward node for one call of op ``op_name`` to its (wrapped) result."""
    # Runs for every op on tensors that require grad: plain loops, no generators.
    for value in arguments.values():
        if value is result:
            return result  # the op returned its input itself (contiguous()): nothing happened
    if formula is None:
        raise RuntimeError(f"the derivative for '{op_name}' is not implemented")
    wanted = _WANTED.get(formula)
    if wanted is None:
        wanted = _wanted(formula)
    edges, shapes, dtypes = [], [], []
    for name in tensor_params:
        value = arguments[name]
        for item in ((value,) if type(value) is _Tensor or not isinstance(value, (list, tuple)) else value):
            if isinstance(item, _Tensor) and item._requires_grad:
                node = item._grad_fn
                edges.append(grad_edge(item) if node is None else (node, item.__dict__.get("_output_nr", 0)))
                shape, dtype = _meta(item)
                shapes.append(shape)
                dtypes.append(dtype)
            else:
                edges.append((None, 0))
                shapes.append(None)
                dtypes.append(None)
    cls = _NODE_CLASSES.get(op_name)
    if cls is None:
        cls = _node_class(op_name)
    node = cls(formula, wanted, None, tuple(edges), tuple(shapes), tuple(dtypes))
    saved = {}
    for name in wanted:
        if name == "grad":
            continue
        if name == "result":
            saved[name] = _save_outputs(result, node)
        elif name in arguments:
            value = arguments[name]
            saved[name] = SavedTensor(value, False) if isinstance(value, _Tensor) else _save(value)
        else:
            saved[name] = _save_meta(name, arguments)
    node._saved = saved
    if isinstance(result, tuple):
        # Outputs that receive no gradient get zeros (see engine._materialize).
        if len(result) > 1:
            node._output_meta = [_meta(o) if _is_tensor(o) and _differentiable(o) else (None, None)
                                 for o in result]
        for i, out in enumerate(result):
            if _is_tensor(out) and _differentiable(out):
                out._requires_grad = True
                out._grad_fn = node
                if i:
                    out._output_nr = i
    elif isinstance(result, _Tensor) and _differentiable(result):
        result._requires_grad = True
        result._grad_fn = node
    return result


def _save_meta(name: str, arguments: dict):
    """``<param>_shape`` / ``<param>_dtype``: what a formula may ask for instead of a whole
    tensor, so that modifying that tensor in place later does not break backward."""
    base, _, what = name.rpartition("_")
    value = arguments.get(base)
    if what not in ("shape", "dtype") or not _is_tensor(value):
        raise TypeError(f"gradient formula parameter {name!r} names no argument of the op")
    shape, dtype = meta(value)
    return shape if what == "shape" else dtype


def _save(value):
    if isinstance(value, _Tensor):
        return SavedTensor(value, False)
    if isinstance(value, (list, tuple)) and value and all(_is_tensor(v) for v in value):
        return [SavedTensor(v, False) for v in value]
    return value


def _save_outputs(result, node):
    if isinstance(result, tuple):
        # Outputs without gradients (indices) have no history: saved like inputs.
        items = [SavedTensor(r, _differentiable(r)) if _is_tensor(r) else r for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    return SavedTensor(result, True)


def check_inplace(t, op_name: str) -> None:
    """PyTorch's refusals for an in-place op on a tensor taking part in autograd."""
    if grad_enabled() and t._requires_grad and t._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = t.__dict__.get("_view_base")
    if grad_enabled() and base is not None and (base._requires_grad or t._requires_grad):
        raise RuntimeError(
            f"{op_name}(): in-place modification of a view of a tensor that requires grad is not supported "
            "by tensormodes' autograd yet; modify a clone instead (view.clone()).")


def record_inplace(op_name: str, formula, tensor_params: tuple[str, ...], arguments: dict, target, write):
    """Record an in-place op on ``target``; ``write()`` performs the write.

    The formula sees the target's value from before the write, and the new
    node's edge for it continues the target's old history.
    """
    check_inplace(target, op_name)
    before = _SUPPORT["copy"](target)
    if target._requires_grad:
        before._requires_grad = True
        before._grad_fn = target._grad_fn
        if "_output_nr" in target.__dict__:
            before._output_nr = target._output_nr
    write()
    result = alias(target)
    record(op_name, formula, tensor_params,
           {name: (before if value is target else value) for name, value in arguments.items()}, result)
    # An integer target stays without gradient even when the written value has one.
    if result._requires_grad:
        target._requires_grad = True
        target._grad_fn = result._grad_fn
        target.__dict__.pop("_output_nr", None)
    return target

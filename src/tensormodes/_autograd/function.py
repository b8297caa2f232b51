"""``autograd.Function``: user-defined forward and backward.

>>> import tensormodes as tm
>>> class Exp(tm.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         result = x.exp()
...         ctx.save_for_backward(result)
...         return result
...     @staticmethod
...     def backward(ctx, grad):
...         result, = ctx.saved_tensors
...         return grad * result
>>> x = tm.zeros(2, requires_grad=True)
>>> Exp.apply(x).sum().backward(); x.grad.tolist()
[1.0, 1.0]
"""

from __future__ import annotations

from .._tensor_base import TensorBase, meta_of
from .grad_mode import _GRAD_ENABLED, grad_enabled
from .graph import SavedTensor, sum_to_shape
from .nodes import Node, alias, grad_edge, next_sequence_nr
from .nodes import differentiable_tensor as _differentiable

__all__ = ["Function", "FunctionCtx"]


class FunctionCtx:
    """The ``ctx`` of a custom Function: what forward leaves for backward."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self._saved: tuple = ()
        self._non_differentiable: set[int] = set()
        self.materialize_grads = True
        self._node: Node | None = None

    def save_for_backward(self, *tensors) -> None:
        """Save tensors (or None) for backward; modifying them in place before backward is an error."""
        for t in tensors:
            if t is not None and not isinstance(t, TensorBase):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        # saved once forward has returned (``_save``), as PyTorch's: an output is then saved as one
        # (its unpacked tensor has this node's history), and writes forward makes after this count not
        self._saved = tensors

    def _save(self, node: Node | None) -> None:
        """Turn the tensors given to ``save_for_backward`` into saved tensors (saved-tensor hooks
        pack them now); ``node``: the call's backward node (None when nothing was recorded)."""
        saved = []
        for t in self._saved:
            if t is None:
                saved.append(None)
            elif node is not None and t._grad_fn is node:
                saved.append(SavedTensor(t, True, t.__dict__.get("_output_nr", 0)))
            else:
                saved.append(SavedTensor(t, False))
        self._saved = tuple(saved)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked against in-place changes."""
        return tuple(None if s is None else s.unpack(self._node) for s in self._saved)

    def mark_non_differentiable(self, *outputs) -> None:
        """Declare outputs that have no gradient (their ``requires_grad`` stays False)."""
        self._non_differentiable.update(id(o) for o in outputs)

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward receives zeros (True, the default) or None for unused outputs."""
        self.materialize_grads = value


class FunctionBackward(Node):
    """The backward node of one ``Function.apply`` call."""

    def __init__(self, function: type, ctx: FunctionCtx, edges: tuple, output_meta: list,
                 input_meta: tuple) -> None:
        self._sequence_nr = next_sequence_nr()
        self._function = function
        self.ctx = ctx
        self.next_functions = edges
        self._input_meta = input_meta  # per input: (shape, dtype) its gradient must fit, or None
        if ctx.materialize_grads:
            self._output_meta = output_meta
            self._special = True

    def name(self) -> str:
        return f"{self._function.__name__}Backward"

    def apply(self, grads: tuple) -> tuple:
        result = self._function.backward(self.ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self.next_functions)
        if len(result) != expected and (len(result) < expected or any(g is not None for g in result[expected:])):
            # Extra gradients are allowed when they are all None, as in PyTorch.
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected "
                               f"{expected}, got {len(result)})")
        return tuple([self._validated(i, g) for i, g in enumerate(result[:expected])])

    def _validated(self, index: int, grad):
        """PyTorch's checks on a returned gradient: a tensor (or None) whose shape broadcasts to
        the input's (it is summed back to it) and whose dtype is cast to the input's."""
        if grad is None:
            return None
        if not isinstance(grad, TensorBase):
            raise RuntimeError(f"expected Variable or None (got {type(grad).__name__})")
        fit = self._input_meta[index]
        if fit is None:
            return grad
        shape, dtype = fit
        grad_shape, grad_dtype = meta_of(grad)
        if grad_shape != shape:
            if not _expandable(shape, grad_shape):
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index {index} - got "
                                   f"{list(grad_shape)} but expected shape compatible with {list(shape)}")
            grad = sum_to_shape(grad, grad_shape, shape)
        if grad_dtype is not dtype:
            if grad_dtype.is_complex and not dtype.is_complex:
                raise RuntimeError("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == "
                                   "grad_is_complex) to be true, but got false.")
            grad = grad.to(dtype)
        return grad

    def release(self) -> None:
        for s in self.ctx._saved:
            if s is not None:
                s.release()


class Function:
    """Base class for differentiable operations with a hand-written backward.

    Subclasses define ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``
    as static methods and are called through ``apply``. ``backward`` returns one
    gradient per argument of ``forward`` (None for non-tensors).
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """Compute the outputs (runs with grad mode off)."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Gradients of the inputs from gradients of the outputs."""
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and, if an input requires grad, record ``backward`` in the graph."""
        needs = tuple(isinstance(a, TensorBase) and a._requires_grad for a in args)
        record = grad_enabled() and any(needs)
        ctx = FunctionCtx(needs)
        previous_grad_mode = _GRAD_ENABLED.get()
        try:
            _GRAD_ENABLED.set(False)  # inside the try, restored by value: nothing left behind on an interrupt
            if _has_setup_context(cls):
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            _GRAD_ENABLED.set(previous_grad_mode)
        if not record:
            ctx._save(None)
            return outputs
        single = not isinstance(outputs, tuple)
        items = [outputs] if single else list(outputs)
        edges = tuple(grad_edge(a) if need else (None, 0) for a, need in zip(args, needs))
        input_ids = {id(a) for a in args if isinstance(a, TensorBase)}
        for i, out in enumerate(items):
            if isinstance(out, TensorBase) and id(out) in input_ids:
                # Returning an input: give the output its own identity (and history).
                items[i] = alias(out)
                if id(out) in ctx._non_differentiable:
                    ctx._non_differentiable.add(id(items[i]))
        output_meta = [meta_of(o) if isinstance(o, TensorBase) else (None, None) for o in items]
        input_meta = tuple(meta_of(a) if need else None for a, need in zip(args, needs))
        node = FunctionBackward(cls, ctx, edges, output_meta, input_meta)
        ctx._node = node
        for i, out in enumerate(items):
            if isinstance(out, TensorBase) and id(out) not in ctx._non_differentiable and _differentiable(out):
                out._requires_grad = True
                out._grad_fn = node
                if i:
                    out._output_nr = i
        ctx._save(node)
        return items[0] if single else type(outputs)(items)


def _expandable(shape: tuple, to: tuple) -> bool:
    """True if ``shape`` broadcasts to ``to`` (a gradient of shape ``to`` sums back to it)."""
    if len(shape) > len(to):
        return False
    return all(size == 1 or size == other for size, other in zip(reversed(shape), reversed(to)))


def _has_setup_context(cls: type) -> bool:
    return getattr(cls, "setup_context", None) is not None and "setup_context" in _own_names(cls)


def _own_names(cls: type) -> set:
    names = set()
    for klass in cls.__mro__:
        if klass is Function:
            break
        names.update(vars(klass))
    return names

"""Activation checkpointing (``torch.utils.checkpoint``): run part of a model without keeping
its intermediate tensors for backward, and recompute them when backward needs them.

>>> import tensormodes as tm
>>> from tensormodes.utils.checkpoint import checkpoint
>>> layer = tm.nn.Linear(3, 3)
>>> x = tm.ones(2, 3, requires_grad=True)
>>> y = checkpoint(lambda h: layer(h).relu() * 2, x, use_reentrant=False)
>>> y.sum().backward()
>>> x.grad.shape, layer.weight.grad.shape
(tensormodes.Size([2, 3]), tensormodes.Size([3, 3]))

How it works here (``use_reentrant=False``). The function runs once in forward with grad
mode on, under a small mode that finds the tensors requiring grad it reaches from *outside* its
arguments (a module's parameters, a captured activation) and stands a detached copy in for each
outside leaf; the graph so built is dropped at once, keeping only the outputs' values. One
backward node (a ``Function``) links the outputs to the tensor arguments and to those outside
tensors. When backward reaches it, it restores the random state, runs the function again with
grad mode on (the same stand-ins), and differentiates the recomputed outputs with
``autograd.grad``; the outside tensors receive their gradients through the node's edges, so a
parameter's hooks run once, as in PyTorch. ``use_reentrant=True`` is PyTorch's reentrant
variant: forward under ``no_grad``, and a backward that recomputes and calls ``autograd.backward``.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator

from .. import autograd
from .._api import namespace as tm
from .._autograd.saved_hooks import hooks_set_aside
from ..autograd import Function
from ..nn import Sequential
from ..overrides import TorchFunctionMode
from ..random import fork_rng
from ._pytree import tree_flatten, tree_leaves, tree_map_only, tree_unflatten

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "noop_context_fn", "detach_variable",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled"]

_DETERMINISM_CHECKS = ("default", "none")


class CheckpointError(RuntimeError):
    """Raised when the recomputation does not reproduce what the forward pass computed."""


def noop_context_fn() -> tuple:
    """The default ``context_fn``: two null contexts."""
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Accepted for PyTorch's API: recomputation here always runs the whole function."""
    yield


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Accepted for PyTorch's API: checkpoint errors here carry no operator trace."""
    yield


def detach_variable(inputs: tuple) -> tuple:
    """Each tensor of ``inputs`` detached, keeping its ``requires_grad``; other values as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    return tuple(_detached(x) if isinstance(x, tm.Tensor) else x for x in inputs)


def _detached(t):
    alias = t.detach()
    alias.requires_grad_(t.requires_grad)
    return alias


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None, context_fn: Callable = noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True, **kwargs):
    """Checkpoint a model or part of the model: run ``function(*args, **kwargs)`` without keeping
    its intermediate tensors, and run it again in backward to recompute them.

    ``use_reentrant`` should be passed explicitly (without it, PyTorch 2.13 warns and uses the
    reentrant variant). ``use_reentrant=False`` accepts keyword arguments and nested inputs, and
    works with ``autograd.grad``; ``use_reentrant=True`` needs a tensor input that requires grad,
    and only plain tensor positional inputs take part in autograd. ``preserve_rng_state=True``
    (a keyword) replays the random stream in the recomputation, so dropout draws the same mask.
    ``context_fn`` (non-reentrant only) returns two context managers, for the forward run and
    for the recomputation.

    >>> import tensormodes as tm
    >>> from tensormodes.utils.checkpoint import checkpoint
    >>> x = tm.tensor([1.0, 2.0], requires_grad=True)
    >>> y = checkpoint(lambda a, scale: (a * a).sum() * scale, x, scale=3.0, use_reentrant=False)
    >>> tm.autograd.grad(y, x)[0].tolist()
    [6.0, 12.0]
    >>> checkpoint(lambda a: a, x, scale=3.0, use_reentrant=True)
    Traceback (most recent call last):
        ...
    ValueError: Unexpected keyword arguments: scale
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                      "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return _ReentrantCheckpoint.apply(function, preserve, *args)
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
                         f"but got {determinism_check}")
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, args, kwargs)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Checkpoint a sequential model: run ``functions`` (an ``nn.Sequential`` or a list of
    modules or functions) in ``segments`` chunks, each but the last checkpointed.

    >>> import tensormodes as tm
    >>> from tensormodes.utils.checkpoint import checkpoint_sequential
    >>> model = Sequential(tm.nn.Linear(2, 2), tm.nn.Tanh(), tm.nn.Linear(2, 1))
    >>> out = checkpoint_sequential(model, 2, tm.ones(1, 2, requires_grad=True), use_reentrant=False)
    >>> out.shape
    tensormodes.Size([1, 1])
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))

    def run(start: int, end: int) -> Callable:
        def forward(value):
            for j in range(start, end + 1):
                value = functions[j](value)
            return value
        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


# --- use_reentrant=True -------------------------------------------------------------------------

class _ReentrantCheckpoint(Function):
    """PyTorch's reentrant variant: forward without a graph, backward recomputes and backpropagates."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(a.requires_grad for a in args if isinstance(a, tm.Tensor)):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        ctx.run_function = run_function
        ctx.rng_state = tm.get_rng_state() if preserve_rng_state else None
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, tm.Tensor)]
        ctx.inputs = [None if isinstance(a, tm.Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, tm.Tensor)])
        with tm.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for index, tensor in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            inputs[index] = tensor
        with fork_rng(enabled=ctx.rng_state is not None):
            if ctx.rng_state is not None:
                tm.set_rng_state(ctx.rng_state)
            detached = detach_variable(tuple(inputs))
            with tm.enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, tm.Tensor):
            outputs = (outputs,)
        chosen = [(out, grad) for out, grad in zip(outputs, grads)
                  if isinstance(out, tm.Tensor) and out.requires_grad]
        if not chosen:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd.backward([out for out, _ in chosen], [grad for _, grad in chosen])
        return (None, None) + tuple(x.grad if isinstance(x, tm.Tensor) else None for x in detached)


# --- use_reentrant=False ------------------------------------------------------------------------

class _StandIns(TorchFunctionMode):
    """Finds the tensors a checkpointed function reaches from outside its arguments, and stands
    detached copies in for the outside *leaves*.

    A tensor argument of a call that requires grad and was not produced inside the region is
    outside. An outside leaf (a module's parameter) gets a stand-in, ``detach()`` with
    ``requires_grad``, used from then on: the recomputed graph ends there, and differentiating it
    touches nothing outside. An outside non-leaf (a captured activation) is used as it is and
    differentiated by; a non-leaf made inside by a path the mode does not see (an
    ``autograd.Function``, such as a module's backward hook) is told apart by its history, which
    reaches the region's own leaves within a few steps.
    """

    _SEARCH_LIMIT = 64  # history nodes visited to tell an unseen inside tensor from an outside one

    def __init__(self, inside: list, known: list | None = None) -> None:
        # ids of tensors made inside the region (kept alive while it runs, so ids stay unique)
        self.inside = {id(t) for t in inside}
        self.keep = list(inside)
        self.inside_nodes: set[int] = set()
        self.outside: list = list(known or [])  # in order of first use
        self.stand_ins: dict[int, object] = {}
        self.discover = known is None
        self._seen_outside: set[int] = {id(t) for t in self.outside}
        for t in self.outside:
            if t.is_leaf:
                self.stand_ins[id(t)] = _detached(t)

    def _substitute(self, t):
        key = id(t)
        stand_in = self.stand_ins.get(key)
        if stand_in is not None:
            return stand_in
        if key in self.inside or key in self._seen_outside or not self.discover or not t.requires_grad:
            return t
        if t.is_leaf:
            self.outside.append(t)
            self._seen_outside.add(key)
            stand_in = self.stand_ins[key] = _detached(t)
            return stand_in
        if not self._made_inside(t.grad_fn):
            self.outside.append(t)
            self._seen_outside.add(key)
        return t

    def _made_inside(self, node) -> bool:
        """Whether the history from ``node`` reaches the region's leaves or nodes (searched
        breadth first, a bounded number of nodes: an outside tensor's history can be long)."""
        queue, seen = [node], set()
        while queue and len(seen) < self._SEARCH_LIMIT:
            current = queue.pop(0)
            if current is None or id(current) in seen:
                continue
            seen.add(id(current))
            if id(current) in self.inside_nodes:
                return True
            variable = getattr(current, "variable", None)
            if variable is not None and id(variable) in self.inside:
                return True
            queue.extend(child for child, _ in current.next_functions)
        return False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Run ``func`` on stand-ins for outside leaves; remember what it made as inside."""
        args, kwargs = tree_map_only(tm.Tensor, self._substitute, (args, kwargs or {}))
        result = func(*args, **kwargs)
        for t in tree_leaves(result):
            if isinstance(t, tm.Tensor) and id(t) not in self.inside:
                self.inside.add(id(t))
                self.keep.append(t)
                node = t.grad_fn
                if node is not None:
                    self.inside_nodes.add(id(node))
        return result


def _metadata(t) -> dict:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _NonReentrantCheckpoint(Function):
    """One backward node for a checkpointed region. ``forward`` gets the outputs already
    computed (their values, detached) and the region's differentiable inputs; ``backward``
    recomputes the region and differentiates it."""

    @staticmethod
    def forward(ctx, region, *tensors):
        ctx.region = region
        ctx.save_for_backward(*tensors)
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable(*region.non_differentiable)
        return tuple(region.outputs)

    @staticmethod
    def backward(ctx, *grads):
        region = ctx.region
        tensors = ctx.saved_tensors  # checks that none was modified in place since
        # the outside tensors by identity: the function reaches them itself (module attributes ...)
        explicit, outside = tensors[:region.explicit_count], region.outside
        outputs, targets = region.recompute(explicit, outside)
        chosen = [(out, grad) for out, grad in zip(outputs, grads, strict=True)
                  if grad is not None and out.requires_grad]
        result = [None] * len(tensors)
        wanted = [i for i, t in enumerate(targets) if t is not None and ctx.needs_input_grad[i + 1]]
        if chosen and wanted:
            # retain_graph: a captured activation among the targets belongs to the outer graph,
            # which its own backward still has to run through
            found = autograd.grad([out for out, _ in chosen], [targets[i] for i in wanted],
                                  [grad for _, grad in chosen], allow_unused=True, retain_graph=True,
                                  create_graph=tm.is_grad_enabled())
            for i, grad in zip(wanted, found, strict=True):
                result[i] = grad
        return (None, *result)


class _Region:
    """What a non-reentrant checkpoint keeps between forward and backward: the function, its
    arguments' structure and non-tensor values, the random state, the outputs' metadata."""

    def __init__(self, function, preserve: bool, context_fn, determinism_check: str, args, kwargs) -> None:
        self.function = function
        self.flat, self.spec = tree_flatten((args, kwargs))
        self.positions = [i for i, x in enumerate(self.flat) if isinstance(x, tm.Tensor)]
        self.explicit_count = len(self.positions)
        self.rng_state = tm.get_rng_state() if preserve else None
        self.context_fn = context_fn
        self.check = determinism_check != "none"
        self.outputs: list = []
        self.outside: list = []
        self.non_differentiable: list = []
        self.saved_metadata: list = []

    def run(self, explicit, outside, context, *, differentiable: bool = False):
        """The function with grad mode on, on detached copies of ``explicit`` (the tensor
        arguments) and stand-ins for ``outside`` (None: discover them) — or, ``differentiable``,
        on the tensors themselves (for a backward that builds a graph). Returns (result,
        the tensor arguments it ran on, the stand-in mode)."""
        flat = list(self.flat)
        inputs = list(explicit) if differentiable else [_detached(t) for t in explicit]
        for position, t in zip(self.positions, inputs, strict=True):
            flat[position] = t
        args, kwargs = tree_unflatten(flat, self.spec)
        stand_ins = _StandIns(inputs, outside)
        if differentiable:
            stand_ins.stand_ins = {}  # the outside tensors themselves
        # (the saved-tensor hooks of the caller do not see the region's tensors, as in PyTorch,
        # whose checkpoint packs them with hooks of its own)
        with tm.enable_grad(), context, stand_ins, hooks_set_aside():
            result = self.function(*args, **kwargs)
        return result, inputs, stand_ins

    def recompute(self, explicit, outside) -> tuple[list, list]:
        """The recomputed tensor outputs, and the tensors to differentiate them by (the tensor
        arguments then the outside tensors' stand-ins, None where one does not require grad).
        A backward that builds a graph (grad mode on) differentiates by the tensors themselves,
        so that the gradients it returns are functions of them (double backward)."""
        differentiable = tm.is_grad_enabled()
        with fork_rng(enabled=self.rng_state is not None):
            if self.rng_state is not None:
                tm.set_rng_state(self.rng_state)
            result, inputs, stand_ins = self.run(explicit, list(outside), self.context_fn()[1],
                                                 differentiable=differentiable)
        outputs = [t for t in tree_leaves(result) if isinstance(t, tm.Tensor)]
        if self.check:
            self._check(outputs)
        targets = [t if t.requires_grad else None for t in inputs]
        targets += [stand_ins.stand_ins.get(id(t), t) for t in outside]
        return outputs, targets

    def _check(self, outputs: list) -> None:
        recomputed = [_metadata(t) for t in outputs]
        if len(recomputed) != len(self.saved_metadata):
            raise CheckpointError("torch.utils.checkpoint: A different number of tensors was saved during the "
                                  "original forward and recomputation.\n"
                                  f"Number of tensors saved during forward: {len(self.saved_metadata)}\n"
                                  f"Number of tensors saved during recomputation: {len(recomputed)}.\n")
        different = ""
        for index, (saved, again) in enumerate(zip(self.saved_metadata, recomputed, strict=True)):
            if saved != again:
                different += f"tensor at position {index}:\nsaved metadata: {saved}\nrecomputed metadata: {again}\n"
        if different:
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                  f"different metadata than during the forward pass.\n{different}.\n")


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, args, kwargs):
    if not tm.is_grad_enabled():
        return function(*args, **kwargs)  # no graph to save: nothing to recompute
    region = _Region(function, preserve, context_fn, determinism_check, args, kwargs)
    explicit = [region.flat[i] for i in region.positions]
    result, _, stand_ins = region.run(explicit, None, context_fn()[0])
    leaves, spec = tree_flatten(result)
    tensor_positions = [i for i, x in enumerate(leaves) if isinstance(x, tm.Tensor)]
    computed = [leaves[i] for i in tensor_positions]
    region.saved_metadata = [_metadata(t) for t in computed]
    # the values only: the graph the run built (and the tensors it saved) goes with it
    region.outputs = [t.detach() for t in computed]
    region.non_differentiable = [d for d, t in zip(region.outputs, computed, strict=True) if not t.requires_grad]
    region.outside = stand_ins.outside
    linked = _NonReentrantCheckpoint.apply(region, *explicit, *stand_ins.outside)
    if not isinstance(linked, tuple):  # no tensor output, or the graph was not recorded
        linked = tuple(region.outputs)
    for position, t in zip(tensor_positions, linked, strict=True):
        leaves[position] = t
    return tree_unflatten(leaves, spec)

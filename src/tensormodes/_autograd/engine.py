"""The backward pass: run the graph's nodes from the outputs down, iteratively.

A node runs once every node that can send it a gradient has run: nodes are
numbered as they are created, and the engine runs them highest number first
(see ``graph.next_sequence_nr``), so it need not count dependencies.

No recursion: a chain of many thousands of ops backpropagates without touching
the recursion limit. Saved tensors are freed node by node unless
``retain_graph``, so intermediate buffers go as soon as they are used.
"""

from __future__ import annotations

import itertools
from contextvars import ContextVar
from heapq import heapify, heappop, heappush
from sys import getrefcount

import numpy as np

from .._dispatch.python_dispatch import FORMULA_CALLS, HOOKS
from .._memory_format import preserve_format
from .._ops.common import ops
from .._tensor_base import PLAIN, copy_detached, meta_of, ones_like, zeros
from .anomaly_mode import ANOMALY, check_gradients, report_failed_node
from .grad_mode import _GRAD_ENABLED
from .graph import (
    NEEDS_PARAM,
    AccumulateGrad,
    Node,
    OpBackward,
    aten_overload,
    below_listens,
    bump_version,
    first_grad_below,
    grad_edge,
)
from .nodes import GradientEdge

__all__ = ["run_backward", "register_tensor_hook", "register_post_accumulate_hook", "RemovableHandle",
           "current_node", "queue_callback"]


class _Pass:
    """One running backward pass: the node it is running (PyTorch's ``_current_autograd_node``)
    and the callbacks to run when it ends (``queue_callback``)."""

    __slots__ = ("node", "callbacks", "id", "roots", "wanted", "graph", "accumulates")

    def __init__(self) -> None:
        self.node = None
        self.callbacks: list = []
        self.id = next(_PASS_IDS)
        self.roots = self.graph = self.wanted = self.accumulates = None  # (see will_execute)


_PASS_IDS = itertools.count()


# The innermost running pass of this thread or task (None outside backward). Tools at the dispatch
# level read it to tell which forward call a backward op belongs to.
_PASS: ContextVar[_Pass | None] = ContextVar("tensormodes_backward_pass", default=None)


def current_node() -> Node | None:
    """The node whose gradient formula is running (None outside a backward pass): its
    ``_sequence_nr`` says when the forward pass made it. PyTorch's ``torch._C._current_autograd_node``.

    >>> import tensormodes as tm
    >>> seen = []
    >>> class Spy(tm.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 1
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         seen.append(current_node().name())
    ...         return grad
    >>> Spy.apply(tm.ones(2, requires_grad=True)).sum().backward()
    >>> seen, current_node()
    (['SpyBackward'], None)
    """
    running = _PASS.get()
    return None if running is None else running.node


def current_pass_id() -> int:
    """The running backward pass's number, -1 outside one (PyTorch's ``torch._C._current_graph_task_id``)."""
    running = _PASS.get()
    return -1 if running is None else running.id


def will_execute(node: Node) -> bool:
    """Whether the running backward pass runs ``node`` (PyTorch's ``torch._C._will_engine_execute_node``):
    it lies in the graph below the pass's roots, among the nodes that lead to the wanted inputs if any."""
    running = _PASS.get()
    if running is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    if running.wanted is not None:
        if type(node) is AccumulateGrad and not running.accumulates:
            raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                               "autograd.grad(). This is currently not supported.")
        return node in running.wanted
    if running.graph is None:
        running.graph = _graph_nodes(running.roots)
    return node in running.graph


def queue_callback(callback) -> None:
    """Run ``callback()`` when the current backward pass ends (PyTorch's
    ``Variable._execution_engine.queue_callback``); outside a backward pass, a RuntimeError."""
    running = _PASS.get()
    if running is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    running.callbacks.append(callback)


class RemovableHandle:
    """Returned by ``register_hook``: ``handle.remove()`` unregisters the hook."""

    def __init__(self, hooks: list, hook) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        """Unregister the hook (no-op if already removed)."""
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def register_tensor_hook(node: Node, output_nr: int, hook) -> RemovableHandle:
    """``hook(grad)`` runs when the gradient for output ``output_nr`` of ``node`` is known."""
    if node._tensor_hooks is None:
        node._tensor_hooks = {}
    node._special = True
    hooks = node._tensor_hooks.setdefault(output_nr, [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def register_post_accumulate_hook(node: AccumulateGrad, hook) -> RemovableHandle:
    """``hook(leaf)`` runs each time ``node`` has accumulated a gradient into its leaf's ``.grad``
    (PyTorch's post-accumulate-grad hooks: optimizers step inside backward with them)."""
    hooks = node.__dict__.setdefault("_post_accumulate_hooks", [])
    node._special = True  # the engine's early accumulation skips special nodes: the hooks must run
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def _run_tensor_hooks(node: Node, grads: list) -> None:
    per_output = node._tensor_hooks
    if not per_output:
        return
    for output_nr, hooks in per_output.items():
        if output_nr < len(grads) and grads[output_nr] is not None:
            for hook in list(hooks):
                replaced = hook(grads[output_nr])
                if replaced is not None:
                    grads[output_nr] = replaced


def _graph_nodes(roots: list[Node]) -> set:
    """Every node reachable from ``roots``."""
    seen = set(roots)
    stack = list(seen)
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


def _nodes_leading_to(targets: set, nodes: set) -> set:
    """The ``nodes`` from which some target node can be reached through at least one edge (for
    ``autograd.grad``): a target's own node runs only when another target lies below it, as in
    PyTorch, whose engine captures a gradient where it enters a node (a fake tensor's ``Error``
    history must not run when the gradient is wanted right above it)."""
    parents: dict[Node, list[Node]] = {}
    for node in nodes:
        for child, _ in node.next_functions:
            if child is not None:
                parents.setdefault(child, []).append(node)
    useful = set()
    stack = [parent for t in targets if t in nodes for parent in parents.get(t, ())]
    while stack:
        node = stack.pop()
        if node in useful:
            continue
        useful.add(node)
        stack.extend(parents.get(node, ()))
    return useful


def _first_refcount(items: list) -> int:
    return getrefcount(items[0])


# What _first_refcount says of an object referenced by its list alone, and by its list
# and a node's results tuple (calibrated, not assumed: interpreters count differently).
_SOLE_REFERENCE = _first_refcount([object()])


def _count_in_results() -> int:
    results = (object(),)
    # The engine's loop over a node's results, reference for reference (zip keeps the last pair).
    for _edge, grad in zip(((None, 0),), results):
        return _first_refcount([grad])


_SOLE_IN_RESULTS = _count_in_results()


def _accumulate(leaf, grads: list, create_graph: bool, sole: int = _SOLE_REFERENCE) -> None:
    """``leaf.grad += grads[0]``; with ``create_graph`` the sum stays differentiable.

    As in PyTorch, a first gradient that nothing else references (a fresh result
    of a formula) becomes ``.grad`` itself; anything else is copied, because the
    same tensor may flow into several leaves or be held by a hook or the caller.
    A later gradient is added into the existing ``.grad`` in place.
    """
    old = leaf._grad
    if create_graph:
        leaf._grad = grads[0] if old is None else old + grads[0]
        return
    if below_listens(grads[0]):
        # As PyTorch's AccumulateGrad, with ops the dispatch level sees (handed to it directly
        # for plain tensors: nothing records here)
        shared = _first_refcount(grads) > sole  # (before ``grad`` holds it too)
        grad = grads[0]
        if old is None:  # PyTorch's rule: the gradient itself, or a copy laid out as the leaf
            leaf._grad = first_grad_below(leaf, grad, shared) if type(grad) is PLAIN.tensor else ops.detach(grad)
        elif type(old) is PLAIN.tensor and type(grad) is PLAIN.tensor:
            HOOKS.below(aten_overload("add_", "Tensor"), (old, grad), {})
        else:
            old.add_(grad)
        return
    if old is None:
        if _first_refcount(grads) <= sole:
            grad = grads[0]
            data = grad._data
            if type(grad) is PLAIN.tensor and data.base is None and not grad._requires_grad:
                leaf._grad = grad
                return
        leaf._grad = copy_detached(grads[0])
    elif type(old) is PLAIN.tensor and old._data.flags.writeable and not old._requires_grad:
        np.add(old._data, grads[0]._data, out=old._data, casting="unsafe")
        bump_version(old)
    else:
        leaf._grad = old + grads[0]


def _applied(node: Node, grads: tuple):
    """``node``'s gradients; an op's formula (not a user's ``Function``) runs as PyTorch's C++
    formula where the dispatch level sees its calls (``FORMULA_CALLS``)."""
    if not isinstance(node, OpBackward):
        return node.apply(grads)
    first = grads[0]
    if first is None:
        first = next((g for g in grads if g is not None), None)
    if not below_listens(first):
        return node.apply(grads)
    token = FORMULA_CALLS.set(node.wrapped_numbers())
    try:
        return node.apply(grads)
    finally:
        FORMULA_CALLS.reset(token)


def run_backward(outputs: list, grad_outputs: list, *, retain_graph: bool, create_graph: bool,
                 inputs: list | None = None, allow_unused: bool = False, accumulate: bool = True):
    """Backpropagate from ``outputs``; return gradients for ``inputs`` when given.

    With ``accumulate``, gradients reaching leaf tensors are added into their
    ``.grad`` (``backward``); otherwise they are only returned (``autograd.grad``).
    The callbacks queued during the pass (``queue_callback``) run at its end.
    """
    running = _Pass()
    token = _PASS.set(running)
    try:
        result = _run_pass(running, outputs, grad_outputs, retain_graph, create_graph, inputs, allow_unused,
                           accumulate)
        for callback in running.callbacks:
            callback()
        return result
    finally:
        _PASS.reset(token)


def _run_pass(running: _Pass, outputs: list, grad_outputs: list, retain_graph: bool, create_graph: bool,
              inputs: list | None, allow_unused: bool, accumulate: bool):
    roots, buffers, listens = _seeded_buffers(outputs, grad_outputs)
    targets, captured, useful, wanted = _targets(inputs, roots)
    running.roots, running.wanted, running.accumulates = roots, wanted, accumulate
    useful = useful | wanted if wanted is not None and accumulate else useful  # backward(inputs=): theirs run too
    direct = accumulate and not targets
    previous_grad_mode = _GRAD_ENABLED.get()
    try:
        _GRAD_ENABLED.set(create_graph)  # inside the try, restored by value: nothing left behind on an interrupt
        # Nodes that have received a gradient, highest sequence number first: every node
        # that can send a gradient to a node was created after it, so it has run by then.
        ready = [(-node._sequence_nr, node) for node in buffers]
        heapify(ready)
        pending = _LeafOrder(roots) if accumulate and listens else None
        while ready:
            node = heappop(ready)[1]
            grads = buffers.pop(node, None)
            if grads is None:  # an accumulation that ran early (see _LeafOrder)
                continue
            if node._special:
                grads = _before_node(node, grads)
            if type(node) is AccumulateGrad:
                _run_accumulation(running, node, grads, accumulate, create_graph)
                if targets:  # after: held by ``captured`` too, the gradient could not become ``.grad`` itself
                    _capture(node, grads, targets, captured)
                continue
            if targets:
                _capture(node, grads, targets, captured)
            if useful is not None and node not in useful:
                continue
            results = None
            if grads[0] is not None or any(g is not None for g in grads):
                results = _run_node(running, node, tuple(grads), wanted)
            if not retain_graph:
                node.release()
            if results is None:
                if pending is not None:
                    pending.after(node, buffers, ready)
                continue
            # No other reference to a gradient may stay alive here (see _SOLE_IN_RESULTS): one would
            # keep _accumulate from taking it over.
            for (child, output_nr), grad in zip(node.next_functions, results):
                if child is None or grad is None or wanted is not None and child not in wanted:
                    continue
                if type(child) is AccumulateGrad and direct and not child._special and not below_listens(grad):
                    # A leaf without hooks: accumulate now rather than queue the sink. (Not while the
                    # dispatch level listens: there, as PyTorch, a leaf's gradients are summed first, then
                    # accumulated once.)
                    leaf = child._variable()
                    if leaf is not None:
                        _accumulate(leaf, [grad], create_graph, _SOLE_IN_RESULTS)
                elif child in buffers:
                    _add_to_buffer(buffers, child, output_nr, grad)
                else:  # the first gradient for child: it joins the queue
                    buffers[child] = [grad] if output_nr == 0 else [None] * output_nr + [grad]
                    heappush(ready, (-child._sequence_nr, child))
            grad = results = None  # the buffers alone hold the gradients now (see _accumulate)
            if pending is not None:
                pending.after(node, buffers, ready)
    finally:
        _GRAD_ENABLED.set(previous_grad_mode)

    if inputs is not None:
        for index, grad in enumerate(captured):
            if grad is None and not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {index} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
        return tuple(captured)
    return None


def _run_node(running: _Pass, node: Node, grads: tuple, wanted):
    """``node``'s input gradients, its post hooks applied; under anomaly detection checked for NaN,
    and a failure reported with the forward traceback of the call that made the node."""
    running.node = node
    try:
        results = _applied(node, grads) if wanted is None else _applied_wanted(node, grads, wanted)
        if ANOMALY.enabled:
            check_gradients(node, results)
    except BaseException:
        if ANOMALY.enabled:
            report_failed_node(node)
        raise
    running.node = None
    if node._post_hooks:
        for hook in node._post_hooks:
            replaced = hook(results, grads)
            if replaced is not None:
                results = tuple(replaced)
    return results


# Keys of accumulations ready to run: below every node's key (-sequence number), so they run next,
# in the order they became ready. PyTorch's AccumulateGrad nodes have the highest sequence number.
_FIRST = -(1 << 62)


def _run_accumulation(running: _Pass, node: AccumulateGrad, grads: list, accumulate: bool, create_graph: bool):
    """A leaf's ``AccumulateGrad`` node in the pass: its gradients added into ``.grad`` (``accumulate``)."""
    if accumulate and grads[0] is not None:
        leaf = node._variable()
        if leaf is not None:
            running.node = node
            _accumulate(leaf, grads, create_graph)
            running.node = None
            for hook in list(node.__dict__.get("_post_accumulate_hooks", ())):
                if hook(leaf) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _capture(node: Node, grads: list, targets: dict, captured: list) -> None:
    """For ``autograd.grad``: keep the gradients entering ``node`` that are wanted."""
    for output_nr, grad in enumerate(grads):
        index = targets.get((id(node), output_nr))
        if index is not None and grad is not None:
            captured[index] = grad


class _LeafOrder:
    """PyTorch's order of accumulations: for each leaf's accumulation below the roots, how many
    edges lead to it (its dependency count); once all its producers have run it runs next,
    rather than at its own sequence number (its queued entry is then stale and skipped)."""

    __slots__ = ("counts", "feeds", "made")

    def __init__(self, roots: list) -> None:
        self.made = 0  # accumulations made ready so far: their order among themselves
        # A node's edges never change once it is made, so the counts of a graph's one root are
        # found once (kept on it: a retained graph's next backward reuses them) and copied per pass
        known = roots[0].__dict__.get("_leaf_counts") if len(roots) == 1 else None
        if known is None:
            counts: dict = {}
            feeds: dict = {}  # node -> the accumulations it sends to
            for node in _graph_nodes(roots):
                for child, _ in node.next_functions:
                    if type(child) is AccumulateGrad:
                        counts[child] = counts.get(child, 0) + 1
                        feeds.setdefault(node, []).append(child)
            known = (counts, feeds)
            if len(roots) == 1:
                roots[0]._leaf_counts = known
        self.counts = known[0].copy()
        self.feeds = known[1]

    def after(self, node: Node, buffers: dict, ready: list) -> None:
        """``node`` has run (or been passed over)."""
        for child in self.feeds.get(node, ()):
            self.counts[child] -= 1
            if self.counts[child] == 0 and child in buffers:
                self.made += 1
                heappush(ready, (_FIRST + self.made, child))


def _seeded_buffers(outputs: list, grad_outputs: list) -> tuple[list, dict, bool]:
    """The root nodes, the gradient buffers seeded with the output gradients (ones for a
    scalar output given none), and whether the dispatch level listens to the first. The
    gradients are referenced by their buffers only, so ``_accumulate`` may take them over."""
    roots = []
    buffers: dict[Node, list] = {}
    listens = False
    for i, (out, grad) in enumerate(zip(outputs, grad_outputs)):
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        shape = out._data.shape
        if grad is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            listening = below_listens(out)
            # PyTorch's seed, argument for argument, where the dispatch level sees it (and only there: PyTorch's
            # engine makes it in C++, below __torch_function__)
            if not listening:
                grad = ones_like(out)
            elif type(out) is PLAIN.tensor:  # (autograd done: the seed records nothing)
                grad = HOOKS.below(aten_overload("ones_like", "default"), (out,),
                                   {"pin_memory": False, "memory_format": preserve_format})
            else:
                grad = ops.ops.aten.ones_like.default(out, pin_memory=False, memory_format=preserve_format)
        elif meta_of(grad)[0] != shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {list(meta_of(grad)[0])} and "
                               f"output[{i}] has a shape of {list(shape)}.")
        else:
            listening = below_listens(grad)
        listens = listens or listening
        node, output_nr = grad_edge(out)
        roots.append(node)
        _add_to_buffer(buffers, node, output_nr, grad)
    return roots, buffers, listens


def _targets(inputs: list | None, roots: list) -> tuple[dict, list, set | None, set | None]:
    """For ``autograd.grad`` and ``backward(inputs=)``: where the wanted gradients are caught
    (``(id(node), output_nr)`` -> position), the list catching them, the nodes worth running
    (None: all) and the nodes a gradient is worth sending to (those and the inputs' own: PyTorch
    computes no other gradient, ``task_should_compute_output``; None: all)."""
    if inputs is None:
        return {}, [], None, None
    targets: dict[tuple[int, int], int] = {}
    nodes = set()
    for i, t in enumerate(inputs):
        if type(t) is GradientEdge:  # (get_gradient_edge's: where a tensor's gradient arrives)
            node, output_nr = t.node, t.output_nr
        elif not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        else:
            node, output_nr = grad_edge(t)
        targets[(id(node), output_nr)] = i
        nodes.add(node)
    useful = _nodes_leading_to(nodes, _graph_nodes(roots))
    return targets, [None] * len(inputs), useful, useful | nodes


def _applied_wanted(node: Node, grads: tuple, wanted: set):
    """``_applied`` where only the gradients for the nodes ``wanted`` are worth computing: an op's
    formula that takes ``needs_input_grad`` is told the others are not needed, as PyTorch's formulas
    skip them (the dispatch level sees that)."""
    if not isinstance(node, OpBackward) or node._nested or node._arguments is None:
        return _applied(node, grads)
    kinds = node._plan.kinds
    if NEEDS_PARAM not in kinds:
        return _applied(node, grads)
    arguments = node._arguments
    at = kinds.index(NEEDS_PARAM)
    needs = arguments[at]
    narrowed = tuple(need and child is not None and child in wanted
                     for need, (child, _) in zip(needs, node.next_functions))
    if narrowed == needs:
        return _applied(node, grads)
    node._arguments = [*arguments[:at], narrowed, *arguments[at + 1:]]
    try:
        return _applied(node, grads)
    finally:
        node._arguments = arguments


def _add_to_buffer(buffers: dict, node: Node, output_nr: int, grad) -> None:
    """Add ``grad`` to what ``node``'s output ``output_nr`` has received."""
    slots = buffers.setdefault(node, [])
    while len(slots) <= output_nr:
        slots.append(None)
    slots[output_nr] = grad if slots[output_nr] is None else slots[output_nr] + grad


def _before_node(node: Node, grads: list) -> list:
    """What runs before a node with hooks or several outputs: tensor hooks, pre-hooks,
    and zeros for outputs that received no gradient."""
    if node._tensor_hooks:
        _run_tensor_hooks(node, grads)
    if node._pre_hooks and any(g is not None for g in grads):
        for hook in node._pre_hooks:
            replaced = hook(tuple(grads))
            if replaced is not None:
                grads = list(replaced)
    metas = node._output_meta
    if metas is not None and any(g is not None for g in grads):
        grads = list(grads) + [None] * (len(metas) - len(grads))
        like = next(g for g in grads if g is not None)
        grads = [zeros(shape, dtype, like) if g is None and shape is not None else g
                 for g, (shape, dtype) in zip(grads, metas)]
    return grads

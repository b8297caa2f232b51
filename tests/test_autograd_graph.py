"""``autograd.graph``: saved-tensor hooks, multi-gradient hooks, gradient edges,
``increment_version``, and the legacy ``autograd.Variable``, each scenario run on tensormodes
against literals and, when PyTorch is installed, on PyTorch with the same outcome (hook calls
and counts, values, error classes and messages)."""

from __future__ import annotations

import threading
import warnings

import pytest

import tensormodes as tm

try:
    import torch
except ImportError:
    torch = None


def _outcome(call):
    """What ``call()`` gives, or the class and message of what it raises."""
    try:
        return call()
    except Exception as error:  # noqa: BLE001 - the outcome compared is the error itself
        return type(error).__name__, str(error)


def _rounded(t) -> list:
    return [round(v, 4) for v in t.tolist()]


# -- saved_tensors_hooks -----------------------------------------------------------------------

def _pack_unpack_log(lib):
    """Which tensors are packed (shape, requires_grad, grad mode inside) and unpacked, and the
    gradients: an op saving both inputs, one saving its output, a wrapped number (never packed)."""
    log = []

    def pack(x):
        log.append(("pack", tuple(x.shape), x.requires_grad, lib.is_grad_enabled()))
        return x.detach()

    def unpack(x):
        log.append(("unpack", tuple(x.shape), lib.is_grad_enabled()))
        return x

    a = lib.ones(2, requires_grad=True)
    b = lib.full((3, 1), 2.0, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        w = (a * b).exp() * 2
    packed = sorted(log)
    log.clear()
    w.sum().backward()
    return packed, sorted(log), _rounded(a.grad), _rounded(b.grad.flatten())


def test_saved_tensors_hooks_pack_and_unpack_each_saved_tensor():
    packed, unpacked, a_grad, b_grad = _pack_unpack_log(tm)
    assert packed == [("pack", (2,), True, False), ("pack", (3, 1), True, False), ("pack", (3, 2), True, False)]
    assert unpacked == [("unpack", (2,), False), ("unpack", (3, 1), False), ("unpack", (3, 2), False)]
    assert a_grad == [88.6687, 88.6687] and b_grad == [29.5562, 29.5562, 29.5562]


def _hook_scenarios(lib) -> dict:
    G = lib.autograd.graph
    a = lib.ones(2, requires_grad=True)
    results = {}

    def unpack_not_tensor():
        with G.saved_tensors_hooks(lambda x: x, lambda packed: 3):
            y = a.sin()
        y.sum().backward()
    results["unpack returns a number"] = _outcome(unpack_not_tensor)

    def backward_twice():
        with G.saved_tensors_hooks(lambda x: x.detach(), lambda packed: packed):
            y = a.sin()
        y.sum().backward()
        y.sum().backward()
    results["second backward"] = _outcome(backward_twice)

    def hooks_while_disabled():
        with G.disable_saved_tensors_hooks("no hooks here"), G.saved_tensors_hooks(lambda x: x, lambda x: x):
            pass
    results["hooks inside disable"] = _outcome(hooks_while_disabled)

    def disable_while_hooks():
        with G.saved_tensors_hooks(lambda x: x, lambda x: x), G.disable_saved_tensors_hooks("hooks are on"):
            pass
    results["disable inside hooks"] = _outcome(disable_while_hooks)

    def disabled_then_allowed():
        with G.disable_saved_tensors_hooks("outer"):
            with G.disable_saved_tensors_hooks("inner"):
                pass
            inner = _outcome(lambda: G.saved_tensors_hooks(lambda x: x, lambda x: x).__enter__())
        with G.saved_tensors_hooks(lambda x: x, lambda x: x):
            pass
        return inner
    results["disable restores the outer message"] = _outcome(disabled_then_allowed)

    def pack_modifies_input():
        c = lib.ones(2)
        with G.saved_tensors_hooks(lambda x: x if x.requires_grad else x.add_(1), lambda x: x):
            a * c
    results["pack hook writes its input"] = _outcome(pack_modifies_input)

    def no_version_check():
        x = lib.ones(2, requires_grad=True)
        q = x * 1
        with G.saved_tensors_hooks(lambda t: t, lambda t: t):
            r = q.sin()
        q.add_(1)  # with hooks the saved tensor is not version-checked (PyTorch can't see through them)
        r.sum().backward()
        return _rounded(x.grad)
    results["no version check"] = _outcome(no_version_check)

    def innermost_pair():
        log = []
        with G.saved_tensors_hooks(lambda x: log.append("outer") or x, lambda x: x):
            with G.saved_tensors_hooks(lambda x: log.append("inner") or x, lambda x: x):
                a.sin()
            a.sin()
        return log
    results["innermost pair applies"] = innermost_pair()

    def other_thread():
        log = []
        with G.saved_tensors_hooks(lambda x: log.append("pack") or x, lambda x: x):
            thread = threading.Thread(target=a.sin)
            thread.start()
            thread.join()
        return log
    results["a new thread has no hooks"] = other_thread()

    def packing_pair_unpacks():
        log = []
        with G.saved_tensors_hooks(lambda x: log.append("p1") or x.detach(), lambda x: log.append("u1") or x):
            y = a.sin()
        with G.saved_tensors_hooks(lambda x: log.append("p2") or x, lambda x: log.append("u2") or x):
            y.sum().backward()
        return log
    results["the packing pair unpacks"] = packing_pair_unpacks()

    def pack_raises():
        with G.saved_tensors_hooks(lambda x: 1 / 0, lambda x: x):
            a.sin()
    results["pack hook raises"] = _outcome(pack_raises), lib.is_grad_enabled(), a.sin().requires_grad

    def double_backward():
        b = lib.tensor([1.0, 2.0], requires_grad=True)
        with G.saved_tensors_hooks(lambda x: x.detach(), lambda x: x):
            y = b * b * b
        g, = lib.autograd.grad(y.sum(), b, create_graph=True)
        g.sum().backward()
        return _rounded(g), g.requires_grad, _rounded(b.grad)
    results["double backward through unpacked tensors"] = double_backward()

    def function_ctx():
        log = []

        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, None)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                saved, none = ctx.saved_tensors
                ctx.saved_tensors  # noqa: B018 - each read unpacks again
                return grad * saved * 2
        b = lib.tensor([1.0, 3.0], requires_grad=True)
        with G.saved_tensors_hooks(lambda x: log.append("pack") or x.detach(), lambda x: log.append("unpack") or x):
            out = Twice.apply(b)
        out.sum().backward()
        return log, _rounded(b.grad)
    results["Function.save_for_backward"] = function_ctx()

    def save_on_cpu():
        b = lib.tensor([0.0, 1.0], requires_grad=True)
        with G.save_on_cpu():
            y = b.exp() * b
        y.sum().backward()
        return _rounded(b.grad)
    results["save_on_cpu"] = save_on_cpu()
    return results


_EXPECTED = {
    "unpack returns a number": ("TypeError", "Output of saved tensor unpack_hook expected to be a Tensor but got "
                                "result of type int"),
    "second backward": ("RuntimeError", "Trying to backward through the graph a second time (or directly access "
                        "saved tensors after they have already been freed). Saved intermediate values of the graph "
                        "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you "
                        "need to backward through the graph a second time or if you need to access saved tensors "
                        "after calling backward."),
    "hooks inside disable": ("RuntimeError", "no hooks here"),
    "disable inside hooks": ("RuntimeError", "hooks are on"),
    "disable restores the outer message": ("RuntimeError", "outer"),
    "pack hook writes its input": ("RuntimeError", "A saved tensor pack hook is modifying its input in place. "
                                   "Tensors provided as input to pack hook cannot be modified by in-place operations "
                                   "as this can lead to unexpected side-effects. Please open an issue if you need to "
                                   "perform in-place operations on the input to a pack hook."),
    "no version check": [-0.4161, -0.4161],
    "innermost pair applies": ["inner", "outer"],
    "a new thread has no hooks": [],
    "the packing pair unpacks": ["p1", "u1"],
    "pack hook raises": (("ZeroDivisionError", "division by zero"), True, True),
    "double backward through unpacked tensors": ([3.0, 12.0], True, [6.0, 12.0]),
    "Function.save_for_backward": (["pack", "unpack", "unpack"], [2.0, 6.0]),
    "save_on_cpu": [1.0, 5.4366],
}


def test_saved_tensors_hooks_rules():
    assert _hook_scenarios(tm) == _EXPECTED


@pytest.mark.torch
def test_saved_tensors_hooks_match_torch():
    assert _pack_unpack_log(tm) == _pack_unpack_log(torch)
    assert _hook_scenarios(tm) == _hook_scenarios(torch)


def test_hooks_leave_saving_unchanged_once_exited():
    x = tm.ones(2, requires_grad=True)
    with tm.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
    y = x.sin()
    x.data.add_(0)  # (no version bump through .data)
    y.sum().backward()
    assert _rounded(x.grad) == [0.5403, 0.5403]
    q = x * 1
    r = q.sin()
    q.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        r.sum().backward()


# -- register_multi_grad_hook -----------------------------------------------------------------

def _multi_grad_calls(lib) -> list:
    G = lib.autograd.graph
    calls = []
    p = lib.ones(2, 3, requires_grad=True)
    q = lib.full((2, 3), 2.0, requires_grad=True)
    c, d = p * q, p * q
    handle = G.register_multi_grad_hook((p, q, c, d), lambda grads: calls.append(
        [None if g is None else g.sum().item() for g in grads]))
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(p,), retain_graph=True)
    calls.append(_outcome(lambda: lib.autograd.grad(c.sum(), (p,), retain_graph=True) and None))
    handle.remove()
    c.sum().backward(retain_graph=True)
    calls.append("removed")
    G.register_multi_grad_hook((p, q, c), lambda g: calls.append(("any", g.sum().item())), mode="any")
    (c.sum() + d.sum()).backward()
    calls.append(_outcome(lambda: G.register_multi_grad_hook((p,), print, mode="every")))
    calls.append(_outcome(lambda: G.register_multi_grad_hook((lib.ones(1),), print)))
    return calls


_MULTI_GRAD_CALLS = [
    [12.0, 6.0, 6.0, None],
    [12.0, None, 6.0, None],
    ("RuntimeError", "A leaf node was passed to _will_engine_execute_node but we are currently running "
                     "autograd.grad(). This is currently not supported."),
    "removed",
    ("any", 6.0),
    ("ValueError", "Expects mode to be one of ('all', 'any') but got every"),
    ("AssertionError", "Expected gradient function to be set"),
]


def test_register_multi_grad_hook():
    assert _multi_grad_calls(tm) == _MULTI_GRAD_CALLS


@pytest.mark.torch
def test_register_multi_grad_hook_matches_torch():
    assert _multi_grad_calls(tm) == _multi_grad_calls(torch)


# -- gradient edges, increment_version, Variable ----------------------------------------------------

def _edges_and_versions(lib) -> list:
    G = lib.autograd.graph
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    z = y.exp()
    edge = G.get_gradient_edge(y)
    results = [type(edge).__name__, edge.output_nr, len(edge), edge.node is y.grad_fn,
               isinstance(edge.node, G.Node), G.get_gradient_edge(x).node is x.view_as(x).grad_fn.next_functions[0][0]]
    results.append(_rounded(lib.autograd.grad(z.sum(), edge, retain_graph=True)[0]))
    results.append([_rounded(g) for g in lib.autograd.grad(z.sum(), [edge, x])])
    results.append(_outcome(lambda: G.get_gradient_edge(lib.ones(1))))
    s = x.sin()
    G.increment_version(x)
    results.append(x._version)
    results.append(_outcome(lambda: s.sum().backward())[1].split(": [")[0])
    t, u = lib.zeros(1), lib.zeros(2)
    G.increment_version([t, u])
    results.append((t._version, u._version))
    return results


def test_gradient_edges_and_increment_version():
    assert _edges_and_versions(tm) == [
        "GradientEdge", 0, 3, True, True, True, [7.3891, 7.3891, 7.3891], [[7.3891] * 3, [14.7781] * 3],
        ("RuntimeError", "It is not possible to get the gradient edge for a Tensor that does not require gradients"),
        1, "one of the variables needed for gradient computation has been modified by an inplace operation",
        (1, 1)]


@pytest.mark.torch
def test_gradient_edges_and_increment_version_match_torch():
    assert _edges_and_versions(tm) == _edges_and_versions(torch)


def _variable(lib) -> list:
    Variable = lib.autograd.Variable
    t = lib.ones(2)
    v = Variable(t, requires_grad=True)
    w = Variable(v * 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Variable(t, volatile=True)
    return [type(v).__name__, v is t, v.requires_grad, t.requires_grad, isinstance(t, Variable),
            isinstance(3, Variable), w.requires_grad, w.grad_fn, tuple(Variable().shape),
            _outcome(lambda: Variable(3)), _outcome(lambda: lib.autograd.variable(t)),
            lib.autograd.variable.Variable is Variable, [str(w.message) for w in caught],
            lib.autograd.is_tensor_like(t), lib.autograd.has_torch_function((t,))]


def test_variable():
    assert _variable(tm) == [
        "Tensor", False, True, False, True, False, False, None, (0,),
        ("TypeError", "Variable data has to be a tensor, but got int"),
        ("RuntimeError", "torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead"), True,
        ["volatile was removed and now has no effect. Use `with torch.no_grad():` instead."], True, False]
    v = tm.autograd.Variable(tm.tensor([1.0, 2.0]), requires_grad=True)
    (v * v).sum().backward()
    assert v.grad.tolist() == [2.0, 4.0]


@pytest.mark.torch
def test_variable_matches_torch():
    assert _variable(tm) == _variable(torch)


def test_graph_namespace_names_torch_has():
    names = {"Node", "GradientEdge", "get_gradient_edge", "increment_version", "saved_tensors_hooks",
             "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook", "RemovableHandle"}
    assert names <= set(dir(tm.autograd.graph))
    assert {"Variable", "variable", "graph", "is_tensor_like", "has_torch_function",
            "handle_torch_function"} <= set(dir(tm.autograd))
    assert tm.autograd.handle_torch_function is tm.overrides.handle_torch_function


def _checkpoint_under_hooks(lib, checkpoint) -> list:
    """The caller's hooks see what the checkpointed region's node saves, never the region's own
    saved tensors (PyTorch packs those with hooks of its own); under disable_saved_tensors_hooks
    the non-reentrant variant raises the message."""
    G = lib.autograd.graph
    log, results = [], []
    x = lib.ones(3, requires_grad=True)

    def region(h):
        return (h.sin() * h).exp()

    def pack(t):
        log.append(("pack", tuple(t.shape)))
        return t.detach()

    for reentrant in (False, True):
        with G.saved_tensors_hooks(pack, lambda t: log.append("unpack") or t):
            y = checkpoint(region, x * 1, use_reentrant=reentrant) * x
        y.sum().backward()
        results.append((list(log), _rounded(x.grad)))
        log.clear()
        x.grad = None

    def disabled():
        with G.disable_saved_tensors_hooks("no hooks in here"):
            checkpoint(region, x, use_reentrant=False).sum().backward()
    results.append(_outcome(disabled))
    return results


def test_checkpoint_under_saved_tensors_hooks():
    from tensormodes.utils.checkpoint import checkpoint
    calls = [("pack", (3,))] * 3 + ["unpack"] * 3
    assert _checkpoint_under_hooks(tm, checkpoint) == [
        (calls, [5.5252] * 3), (calls, [5.5252] * 3), ("RuntimeError", "no hooks in here")]


@pytest.mark.torch
def test_checkpoint_under_saved_tensors_hooks_matches_torch():
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    from tensormodes.utils.checkpoint import checkpoint
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's reentrant variant warns about requires_grad inputs)
        assert _checkpoint_under_hooks(tm, checkpoint) == _checkpoint_under_hooks(torch, torch_checkpoint)


def _mutation_on_saved(lib) -> list:
    G = lib.autograd.graph
    results = []
    with G.allow_mutation_on_saved_tensors() as ctx:
        a = lib.tensor([0.5, 1.0], requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum() + (b * b).sum()
        b.sin_()
        b.mul_(3)  # a second write: the clone made before the first one stays
        out.backward()
        results += [_rounded(a.grad), _rounded(b), len(ctx.cloned) > 0]  # (the clone goes once backward used it)
        results.append(_outcome(lambda: G.allow_mutation_on_saved_tensors().__enter__()))
    with G.allow_mutation_on_saved_tensors():
        c = a.clone()
        out = (c ** 2).sum()
    results.append(_outcome(lambda: out.backward()))
    return results


def test_allow_mutation_on_saved_tensors():
    assert _mutation_on_saved(tm) == [
        [2.0, 4.0], [1.4383, 2.5244], False,
        ("RuntimeError", "allow_mutation_on_saved_tensors contexts cannot be nested"),
        ("AssertionError", "Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which the "
                           "graph was originally recorded.")]


@pytest.mark.torch
def test_allow_mutation_on_saved_tensors_matches_torch():
    assert _mutation_on_saved(tm) == _mutation_on_saved(torch)


def _saved_attributes(lib) -> list:
    """``node._saved_<name>`` reads a saved argument, running the unpack hook."""
    G = lib.autograd.graph
    log = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    results = [y.grad_fn._saved_self is x, y.grad_fn._saved_other.tolist(), x.sum().grad_fn._saved_self_sym_sizes]
    with G.saved_tensors_hooks(lambda t: log.append("pack") or t.detach(), lambda t: log.append("unpack") or t):
        z = x.exp()
        w = x * x
    result = z.grad_fn._saved_result
    results += [list(log), _rounded(result), result.requires_grad, result.grad_fn is z.grad_fn]
    saved_self = w.grad_fn._saved_self
    results += [saved_self is x, saved_self.requires_grad, list(log)]
    results.append(_outcome(lambda: y.grad_fn._saved_nothing))
    y.sum().backward()
    results.append(_outcome(lambda: y.grad_fn._saved_self)[0])
    return results


def test_saved_attributes_of_nodes():
    assert _saved_attributes(tm) == [
        True, [1.0, 2.0], (2,), ["pack", "pack", "pack", "unpack"], [2.7183, 7.3891], True, True,
        False, True, ["pack", "pack", "pack", "unpack", "unpack"],
        ("AttributeError", "'MulBackward0' object has no attribute '_saved_nothing'"), "RuntimeError"]


@pytest.mark.torch
def test_saved_attributes_of_nodes_match_torch():
    assert _saved_attributes(tm) == _saved_attributes(torch)


def _hooks_under_a_dispatch_mode(lib, mode_class) -> tuple:
    """Under a dispatch mode, unpacking shows it a detach per saved tensor, as PyTorch's."""
    class Log(mode_class):
        def __init__(self) -> None:
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))
    G = lib.autograd.graph
    log = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with Log() as mode, G.saved_tensors_hooks(lambda t: log.append("pack") or t, lambda t: log.append("unpack") or t):
        (x * x).exp().sum().backward()
    return log, _rounded(x.grad), mode.ops


def test_saved_tensors_hooks_under_a_dispatch_mode():
    from tensormodes.utils._python_dispatch import TorchDispatchMode
    log, grad, ops = _hooks_under_a_dispatch_mode(tm, TorchDispatchMode)
    assert log == ["pack"] * 3 + ["unpack"] * 3 and grad == [5.4366, 218.3926]
    assert ops == ["aten.mul.Tensor", "aten.exp.default", "aten.sum.default", "aten.ones_like.default",
                   "aten.expand.default", "aten.detach.default", "aten.mul.Tensor", "aten.detach.default",
                   "aten.detach.default", "aten.mul.Tensor", "aten.mul.Tensor", "aten.add.Tensor",
                   "aten.detach.default"]


@pytest.mark.torch
def test_saved_tensors_hooks_under_a_dispatch_mode_match_torch():
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    from tensormodes.utils._python_dispatch import TorchDispatchMode
    assert _hooks_under_a_dispatch_mode(tm, TorchDispatchMode) == _hooks_under_a_dispatch_mode(torch, TorchMode)


def _function_saves_after_forward(lib) -> list:
    """A custom Function's ``save_for_backward`` takes effect when forward returns, as PyTorch's:
    a saved output is packed with its history (double backward through it works under hooks),
    and a write forward makes after saving does not count as a modification."""
    G = lib.autograd.graph

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result, x)
            return result

        @staticmethod
        def backward(ctx, grad):
            result, _ = ctx.saved_tensors
            return grad * result

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            scale = x.clone()
            ctx.save_for_backward(scale)
            scale.mul_(2)
            return x * 3

        @staticmethod
        def backward(ctx, grad):
            scale, = ctx.saved_tensors
            return grad * scale

    log = []
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    with G.saved_tensors_hooks(lambda t: log.append((t.requires_grad, t.grad_fn is not None)) or t.detach(),
                               lambda t: t):
        y = Exp.apply(x)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    g.sum().backward()
    results = [log, _rounded(x.grad)]
    x.grad = None
    Scale.apply(x).sum().backward()
    return results + [_rounded(x.grad)]


def test_function_saves_after_forward():
    assert _function_saves_after_forward(tm) == [[(True, True), (True, False)], [1.0, 2.7183], [0.0, 2.0]]


@pytest.mark.torch
def test_function_saves_after_forward_matches_torch():
    assert _function_saves_after_forward(tm) == _function_saves_after_forward(torch)

"""Autograd: graph recording, backward, grad, grad mode, custom Functions, hooks,
in-place safety, and modes that change backward semantics."""

from __future__ import annotations

import asyncio
import gc
import threading
import tracemalloc

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.overrides import TorchFunctionMode

from .recording import Recorder

# -- recording ---------------------------------------------------------------------------------


def test_leaves_and_grad_fn():
    x = tm.ones(2, requires_grad=True)
    y = x * 2
    z = y.exp()
    assert x.is_leaf and x.grad_fn is None
    assert not y.is_leaf and y.requires_grad
    assert y.grad_fn.name() == "MulBackward0"
    assert z.grad_fn.next_functions[0][0] is y.grad_fn
    assert y.grad_fn.next_functions[0][0].name() == "AccumulateGrad"
    assert y.grad_fn.next_functions[0][0].variable is x
    assert repr(z).endswith("grad_fn=<ExpBackward0>)")


def test_nothing_is_recorded_without_requires_grad_or_in_no_grad():
    x = tm.ones(2)
    assert (x * 2).grad_fn is None and not (x * 2).requires_grad
    w = tm.ones(2, requires_grad=True)
    with tm.no_grad():
        y = w * 2
    assert y.grad_fn is None and not y.requires_grad


def test_integer_outputs_do_not_require_grad():
    x = tm.tensor([1.0, 3.0, 2.0], requires_grad=True)
    assert not x.argmax().requires_grad
    assert not (x > 1).requires_grad
    values, indices = x.max(dim=0)
    assert values.requires_grad and not indices.requires_grad


# -- backward -----------------------------------------------------------------------------------


def test_backward_matches_hand_derivatives():
    x = tm.tensor([1.0, 2.0, 3.0], requires_grad=True)
    ((x * x).sum() + (x * 3).sum()).backward()
    assert x.grad.tolist() == [5.0, 7.0, 9.0]


def test_gradients_accumulate_across_backward_calls():
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_later_gradients_are_added_into_the_same_grad_tensor():
    # As in PyTorch: accumulation writes into the existing .grad, whose version moves.
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    first = x.grad
    version = first._version
    (x * 3).sum().backward()
    assert x.grad is first and first.tolist() == [5.0, 5.0] and first._version == version + 1


class _TimesTwo(tm.autograd.Function):
    """Doubles; its backward's result is kept in ``results`` when ``keep`` (else only its id)."""

    keep = False
    results: list = []

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        result = grad * 2
        _TimesTwo.results.append(result if _TimesTwo.keep else id(result))
        return result


@pytest.mark.parametrize("keep", [False, True])
def test_a_fresh_gradient_becomes_grad_without_a_copy_and_a_held_one_is_copied(keep, monkeypatch):
    # As in PyTorch: a gradient nothing else references is taken over as .grad.
    monkeypatch.setattr(_TimesTwo, "keep", keep)
    monkeypatch.setattr(_TimesTwo, "results", [])
    x = tm.ones(2, requires_grad=True)
    _TimesTwo.apply(x).sum().backward()
    (made,) = _TimesTwo.results
    if keep:
        assert x.grad is not made and x.grad.tolist() == made.tolist() == [2.0, 2.0]
    else:
        assert id(x.grad) == made  # the very tensor backward returned (it is still alive as .grad)


def test_a_gradient_shared_by_two_leaves_is_not_shared_by_their_grads():
    x, b = tm.ones(3, requires_grad=True), tm.ones(3, requires_grad=True)
    (x + b).sum().backward()  # AddBackward hands the same tensor to both leaves
    assert x.grad is not b.grad
    x.grad.add_(1)
    assert b.grad.tolist() == [1.0, 1.0, 1.0]


def test_a_gradient_held_by_a_hook_is_copied_not_taken_over():
    seen = []
    y = tm.ones(2, requires_grad=True)
    y.register_hook(seen.append)
    (y * 3).sum().backward()
    (y * 3).sum().backward()
    assert [g.tolist() for g in seen] == [[3.0, 3.0], [3.0, 3.0]]
    assert y.grad.tolist() == [6.0, 6.0] and all(g is not y.grad for g in seen)


def test_a_caller_gradient_reaching_a_leaf_is_copied():
    x = tm.ones(2, requires_grad=True)
    gradient = tm.tensor([1.0, 2.0])
    x.backward(gradient)
    assert x.grad is not gradient
    x.grad.zero_()
    assert gradient.tolist() == [1.0, 2.0]


def test_node_pre_hooks_replace_the_incoming_gradient():
    x = tm.ones(2, requires_grad=True)
    y = x * 1
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 10,))
    y.sum().backward()
    assert x.grad.tolist() == [10.0, 10.0]


def test_a_node_runs_once_all_its_gradients_have_arrived():
    # The engine runs nodes newest first: y's node must wait for z's contribution,
    # also when y is itself a root and when a branch is recorded much later.
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * 3
    tm.autograd.backward([y.sum(), z.sum()])
    assert x.grad.tolist() == [8.0, 8.0]
    x.grad = None
    a = x * 1
    late = [a]
    for _ in range(50):
        late.append(late[-1] + 0)
    (a * late[-1]).sum().backward()  # d(x*x)/dx
    assert x.grad.tolist() == [2.0, 4.0]


def test_leaves_with_and_without_hooks_around_a_custom_function():
    # Hook-free leaves are accumulated as gradients are produced, hooked ones through the
    # queue; both must see the full sum (values as PyTorch gives them).
    class Double(tm.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    a, b = tm.tensor([1.0, 2.0], requires_grad=True), tm.tensor([3.0, 4.0], requires_grad=True)
    seen = []
    a.register_hook(lambda grad: seen.append(grad.tolist()))
    (Double.apply(a * b) + a).sum().backward()
    assert a.grad.tolist() == [7.0, 9.0] and b.grad.tolist() == [2.0, 4.0] and seen == [[7.0, 9.0]]


def test_create_graph_gradients_accumulate_with_history():
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    first = x.grad
    assert first.requires_grad and first.tolist() == [3.0, 12.0]
    first.sum().backward()
    assert x.grad.tolist() == [9.0, 24.0]


def test_broadcasting_is_reduced_in_gradients():
    x = tm.ones(3, 1, requires_grad=True)
    b = tm.ones(4, requires_grad=True)
    (x + b).sum().backward()
    assert x.grad.tolist() == [[4.0], [4.0], [4.0]]
    assert b.grad.tolist() == [3.0, 3.0, 3.0, 3.0]


def test_non_scalar_backward_needs_a_gradient():
    x = tm.ones(2, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(tm.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [2.0, 20.0]


def test_backward_twice_without_retain_graph_raises():
    x = tm.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_backward_of_a_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        tm.ones(2).sum().backward()


def test_a_ten_thousand_op_chain_does_not_hit_the_recursion_limit():
    x = tm.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_backward_frees_intermediate_buffers():
    x = tm.randn(256, 256, requires_grad=True)
    y = x
    tracemalloc.start()
    for _ in range(100):
        y = (y * 1.0001).tanh()
    forward_current, forward_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    y.sum().backward()
    _, backward_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert backward_peak < 2 * forward_peak


# -- autograd.grad ------------------------------------------------------------------------------


def test_grad_returns_without_accumulating():
    x = tm.tensor([2.0], requires_grad=True)
    (g,) = tm.autograd.grad((x ** 3).sum(), x)
    assert g.tolist() == [12.0]
    assert x.grad is None


def test_grad_allow_unused():
    x, unused = tm.ones(1, requires_grad=True), tm.ones(1, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^The differentiated Tensor at index 1 appears to not have been used in "
                                           r"the graph. Set allow_unused=True if this is the desired behavior.$"):
        tm.autograd.grad((x * 2).sum(), [x, unused])
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 0 appears"):
        tm.autograd.grad(x.norm(0), x)  # the count of nonzeros has no gradient at all
    gx, gu = tm.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gx.tolist() == [2.0] and gu is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        tm.autograd.grad((x * 2).sum(), [tm.ones(1)])


def test_second_order_gradients():
    x = tm.tensor([1.5], requires_grad=True)
    (g,) = tm.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad
    g.sum().backward()
    assert x.grad.tolist() == [9.0]


def test_gradgradcheck_on_a_composite():
    x = tm.tensor([0.3, -0.7], dtype=tm.float64, requires_grad=True)
    assert tm.autograd.gradgradcheck(lambda t: (t * t).tanh() * t, (x,))


def test_gradcheck_catches_a_wrong_gradient():
    class Wrong(tm.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    x = tm.tensor([1.0, 2.0], dtype=tm.float64, requires_grad=True)
    with pytest.raises(tm.autograd.GradcheckError, match="Jacobian mismatch"):
        tm.autograd.gradcheck(Wrong.apply, (x,))
    assert tm.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False


# -- grad mode -------------------------------------------------------------------------------------


def test_grad_mode_context_managers_and_decorators():
    x = tm.ones(1, requires_grad=True)

    @tm.no_grad()
    def with_parentheses():
        return x * 2

    @tm.no_grad
    def without_parentheses():
        return x * 2

    assert not with_parentheses().requires_grad and not without_parentheses().requires_grad
    with tm.no_grad():
        assert not tm.is_grad_enabled()
        with tm.enable_grad():
            assert (x * 2).requires_grad
        with tm.set_grad_enabled(True):
            assert tm.is_grad_enabled()
    assert tm.is_grad_enabled()
    with tm.inference_mode():
        assert tm.is_inference_mode_enabled() and not tm.is_grad_enabled()
    with tm.inference_mode(False):
        assert tm.is_grad_enabled()


def test_grad_mode_restored_after_exceptions():
    with pytest.raises(KeyError):
        with tm.no_grad():
            raise KeyError
    assert tm.is_grad_enabled()


def test_set_grad_enabled_as_a_function():
    tm.set_grad_enabled(False)
    try:
        assert not tm.is_grad_enabled()
    finally:
        tm.set_grad_enabled(True)
    assert tm.is_grad_enabled()


def test_grad_mode_is_thread_and_task_local():
    seen = []
    with tm.no_grad():
        worker = threading.Thread(target=lambda: seen.append(tm.is_grad_enabled()))
        worker.start()
        worker.join()

    async def task():
        with tm.no_grad():
            await asyncio.sleep(0)
            return tm.is_grad_enabled()

    async def main():
        inside = await asyncio.create_task(task())
        return inside, tm.is_grad_enabled()

    assert seen == [True]
    assert asyncio.run(main()) == (False, True)


# -- custom Functions -------------------------------------------------------------------------------


class ScaledExp(tm.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        result = x.exp() * scale
        ctx.save_for_backward(result)
        ctx.scale = scale
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * result, None


def test_custom_function_forward_and_backward():
    x = tm.zeros(2, requires_grad=True)
    y = ScaledExp.apply(x, 3.0)
    assert y.grad_fn.name() == "ScaledExpBackward"
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_custom_function_needs_input_grad_and_non_differentiable_outputs():
    seen = {}

    class Split(tm.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            seen["needs"] = ctx.needs_input_grad
            index = a.argmax()
            ctx.mark_non_differentiable(index)
            return a * b, index

        @staticmethod
        def backward(ctx, grad, grad_index):
            return grad, None

    a = tm.tensor([1.0, 3.0], requires_grad=True)
    value, index = Split.apply(a, tm.ones(2))
    assert seen["needs"] == (True, False)
    assert value.requires_grad and not index.requires_grad


def test_custom_function_saved_tensor_modified_in_place():
    x = tm.ones(2, requires_grad=True)
    y = ScaledExp.apply(x * 1, 1.0)
    with tm.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# -- hooks --------------------------------------------------------------------------------------------


def test_tensor_hooks_and_retain_grad():
    x = tm.ones(2, requires_grad=True)
    y = x * 3
    y.retain_grad()
    seen = []
    handle = y.register_hook(lambda g: seen.append(g.tolist()))
    x.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert seen == [[1.0, 1.0]]
    assert y.grad.tolist() == [1.0, 1.0] and y.retains_grad
    assert x.grad.tolist() == [30.0, 30.0]
    handle.remove()
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tm.ones(1).register_hook(lambda g: g)


# -- in-place safety ------------------------------------------------------------------------------


def test_modifying_a_saved_tensor_makes_backward_fail():
    x = tm.ones(2, requires_grad=True)
    a = x * 2
    s = a.sin()  # saves its input
    a.mul_(2)
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been modified "
                                           r"by an inplace operation: \[tensormodes.FloatTensor \[2\]\], which is "
                                           r"output 0 of MulBackward0, is at version 1; expected version 0 instead"):
        s.sum().backward()
    e = (x * 2).exp()  # saves its output, which is not modified below
    e.detach().add_(0)
    with pytest.raises(RuntimeError, match="which is output 0 of ExpBackward0, is at version 1"):
        e.sum().backward()


def test_in_place_on_a_leaf_that_requires_grad_raises():
    x = tm.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place "
                                           "operation."):
        x.add_(1)
    with tm.no_grad():
        x.add_(1)
    assert x.tolist() == [2.0, 2.0] and x._version == 1


def _writes_through_views(lib):
    """In-place writes through views of tensors with history, run in tensormodes or torch."""
    grads = {}
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 1
    y[:, 0].mul_(2)                                   # through a column view
    (y * y).sum().backward()
    grads["column"] = x.grad.tolist()
    x.grad = None
    y = x * 1
    row = y[0]                                        # a view made before its base changes
    y[1].add_(x[0] * 3)
    (row * y[1]).sum().backward()
    grads["earlier view"] = x.grad.tolist()
    x.grad = None
    buffer = lib.zeros(2, 3)                          # a base without history gets one
    buffer[0].copy_(x[1] * 2)
    buffer.t()[:, 1].add_(x[0])
    (buffer ** 2).sum().backward()
    grads["buffer"] = x.grad.tolist()
    x.grad = None
    y = x.clone()
    view = y.t()
    view.sub_(1)
    view[1:].mul_(x[:, 1:].t())                       # a view of a view
    (y ** 2).sum().backward()
    grads["view of a view"] = x.grad.tolist()
    x.grad = None
    buffer = lib.zeros(4)                             # views made while the base had no history
    first, second, inner = buffer[:2], buffer[2:], buffer[1:3][1:]
    buffer.copy_(x[0].repeat(2)[:4] * 2)              # the base gains one: the views follow it
    (first * 3 + second * inner + x[0, :2]).sum().backward()
    grads["views made before any history"] = x.grad.tolist()
    x.grad = None
    buffer = lib.zeros(2, 3)
    top, bottom = buffer[0], buffer[1]
    top.copy_(x[1] * 4)                               # written through one of them: the other follows
    (bottom + top).pow(2).sum().backward()
    grads["sibling of the written view"] = x.grad.tolist()
    return grads


def test_in_place_writes_through_views_rebase_the_base():
    # Values from PyTorch 2.13 (CopySlices), see test_in_place_writes_through_views_match_torch.
    assert _writes_through_views(tm) == {
        "column": [[8.0, 4.0, 6.0], [32.0, 10.0, 12.0]],
        "earlier view": [[10.0, 17.0, 24.0], [1.0, 2.0, 3.0]],
        "buffer": [[2.0, 4.0, 6.0], [32.0, 40.0, 48.0]],
        "view of a view": [[0.0, 12.0, 60.0], [6.0, 360.0, 660.0]],
        "views made before any history": [[19.0, 7.0, 28.0], [0.0, 0.0, 0.0]],
        "sibling of the written view": [[0.0, 0.0, 0.0], [128.0, 160.0, 192.0]],
    }
    buffer = tm.zeros(3)
    view = buffer[:2]
    buffer.copy_(tm.ones(3, requires_grad=True) * 2)
    assert view.requires_grad and view.grad_fn.name() == "ViewOfRebased" and not view.is_leaf
    ints = tm.zeros(2, dtype=tm.float32)
    as_ints = ints.view(tm.int32)
    ints.copy_(tm.ones(2, requires_grad=True))
    assert not as_ints.requires_grad  # integer views never require grad
    y = tm.ones(3, requires_grad=True) * 1
    y[1:].mul_(3)
    assert y.grad_fn.name() == "CopySlices"
    leaf = tm.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an "
                                            "in-place operation.$"):
        leaf[0].mul_(2)


@pytest.mark.torch
def test_in_place_writes_through_views_match_torch():
    import torch

    assert _writes_through_views(tm) == _writes_through_views(torch)


def _writes_through_complex_views(lib):
    """In-place writes through real views of complex tensors and complex views of real ones."""
    grads = {}
    z = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    w = lib.tensor([2.0, -1.0], requires_grad=True)
    y = z * 1
    y.real.mul_(w)                                    # through .real
    (y * lib.tensor([1 + 1j, 2 - 1j])).real.sum().backward()
    grads["real"] = z.grad.tolist(), w.grad.tolist()
    z.grad = w.grad = None
    y = z * 1
    lib.view_as_real(y)[:, 1].add_(w)                 # through view_as_real (the imaginary parts)
    imag = y.imag                                     # a real view made before the next write
    y.mul_(1j)
    (imag * w + y.abs()).sum().backward()
    grads["view_as_real, earlier view"] = z.grad.tolist(), w.grad.tolist()
    z.grad = w.grad = None
    pairs = lib.stack([w, w * 3], 1)                  # [[2, 6], [-1, -3]]
    lib.view_as_complex(pairs).mul_(z)                # through a complex view of a real tensor
    (pairs ** 2).sum().backward()
    grads["view_as_complex"] = z.grad.tolist(), w.grad.tolist()
    z.grad = w.grad = None
    buffer = lib.zeros(2, dtype=lib.complex128)       # a base without history
    real = buffer.real
    buffer.imag.copy_(w * 2)
    (real + buffer.imag * w + (buffer * z).real).sum().backward()
    grads["buffer"] = z.grad.tolist(), w.grad.tolist()
    return grads


def test_in_place_writes_through_complex_and_real_views():
    # Values from PyTorch 2.13, see test_in_place_writes_through_complex_views_match_torch.
    grads = _writes_through_complex_views(tm)
    assert grads["real"] == ([2 - 1j, -2 + 1j], [1.0, 6.0])
    assert grads["view_as_complex"] == ([80 + 160j, 60 - 20j], [200.0, -200.0])
    assert grads["buffer"] == ([-4j, 2j], [4.0, -2.0])
    z_grad, w_grad = grads["view_as_real, earlier view"]
    assert z_grad == [pytest.approx(2.24253553 + 0.97014254j), pytest.approx(-0.16794966 - 0.55470020j)]
    assert w_grad == pytest.approx([1.97014254, 2.44529980])
    y = tm.ones(2, dtype=tm.complex64, requires_grad=True) * 1
    y.real.add_(1)
    assert y.grad_fn.name() == "CopySlices"


def test_second_order_through_a_write_through_a_real_view():
    z = tm.tensor([1 + 2j, -0.5 + 1j], dtype=tm.complex128, requires_grad=True)

    def written(z):
        y = z * z
        y.imag.mul_(z.real)
        return y

    assert tm.autograd.gradcheck(written, (z,))
    assert tm.autograd.gradgradcheck(written, (z,))


@pytest.mark.torch
def test_in_place_writes_through_complex_views_match_torch():
    import torch

    assert _writes_through_complex_views(tm) == _writes_through_complex_views(torch)


def test_second_order_through_a_write_through_a_view():
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y[0].mul_(x[1])                                   # y = [x0 * x1, x1]
    g, = tm.autograd.grad((y ** 2).sum(), x, create_graph=True)
    assert g.tolist() == [2 * 1.0 * 4.0, 2 * 2.0 * 1.0 + 2 * 2.0]
    g.sum().backward()                                # d/dx of [2 x0 x1^2, 2 x0^2 x1 + 2 x1]
    assert x.grad.tolist() == [2 * 4.0 + 4 * 1.0 * 2.0, 4 * 1.0 * 2.0 + 2 * 1.0 + 2]


def test_in_place_forms_save_operands_only_for_wanted_gradients():
    # b.mul_(c) needs c's values only for b's gradient, which nobody wants: c is not saved,
    # so changing c afterwards does not break backward (as in PyTorch).
    w = tm.ones(3, requires_grad=True)
    c = w.clone()
    b = tm.ones(3) * 5
    b.mul_(c)
    with tm.no_grad():
        c.add_(1)
    b.sum().backward()
    assert w.grad.tolist() == [5.0, 5.0, 5.0]


def test_in_place_on_a_non_leaf_is_recorded():
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.mul_(x)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_setitem_is_differentiable():
    x = tm.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = tm.tensor(5.0, requires_grad=True)
    y = x * 1
    y[1] = v * 2
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]
    assert v.grad.item() == 2.0


def test_version_counters_are_shared_with_views():
    x = tm.zeros(4)
    view = x[1:3]
    view.add_(1)
    assert x._version == view._version == 1
    x[0] = 1
    assert view._version == 2


def test_out_argument_refuses_tensors_that_require_grad():
    x = tm.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tm.add(x, 1, out=tm.empty(2))


# -- modes and autograd -----------------------------------------------------------------------------


def test_a_rewriting_mode_keeps_gradients_correct():
    class MulToAdd(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is tm.Tensor.mul:
                return args[0] + args[1]
            return func(*args, **(kwargs or {}))

    x = tm.tensor([1.0, 2.0], requires_grad=True)
    with MulToAdd():
        y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_modes_see_gradient_formulas_during_backward():
    x = tm.ones(2, requires_grad=True)
    y = (x * 3).sum()
    with Recorder() as recorder:
        y.backward()
    assert "tensormodes.Tensor.backward" in recorder.names


def test_formulas_skip_gradients_no_input_needs():
    # needs_input_grad: a first layer's data input gets no gradient, so its matmul is not run.
    class MatmulRecorder(Recorder):
        handled_functions = {tm.Tensor.matmul}  # backward() itself passes by, the formula's calls are seen

    data, weight = tm.ones(4, 3), tm.ones(2, 3, requires_grad=True)
    loss = F.linear(data, weight).sum()
    with MatmulRecorder() as recorder:
        loss.backward()
    assert recorder.names.count("tensormodes.Tensor.matmul") == 1
    assert weight.grad.tolist() == [[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]


def test_backward_override_swaps_a_gradient_rule_in_a_scope():
    class StraightThroughRound(tm.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.round()

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = tm.tensor([0.4, 1.6], requires_grad=True)
    with tm.autograd.BackwardOverride({tm.round: StraightThroughRound.apply}):
        inside = tm.round(x) + x.round()
    inside.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    x.grad = None
    outside = tm.round(x)
    outside.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


# -- a training step end to end ------------------------------------------------------------------


def test_mlp_training_step_matches_hand_computed_shapes():
    tm.manual_seed(0)
    w1 = tm.randn(4, 3, requires_grad=True)
    b1 = tm.zeros(4, requires_grad=True)
    w2 = tm.randn(2, 4, requires_grad=True)
    x = tm.randn(5, 3)
    target = tm.tensor([0, 1, 1, 0, 1])
    loss = F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2), target)
    loss.backward()
    assert w1.grad.shape == (4, 3) and b1.grad.shape == (4,) and w2.grad.shape == (2, 4)
    assert np.isfinite(w1.grad.numpy()).all()


@pytest.mark.torch
def test_random_compositions_match_torch_gradients():
    import torch

    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = rng.standard_normal((3, 4)), rng.standard_normal((4,))

        def compute(lib, x, y):
            h = (x * y).tanh() + (x - y).exp() / 3
            h = h.matmul(y) if lib is tm else h.matmul(y)
            return (h.relu() ** 2).sum() + x.sigmoid().mean()

        x, y = tm.tensor(a, requires_grad=True), tm.tensor(b, requires_grad=True)
        tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        compute(tm, x, y).backward()
        compute(torch, tx, ty).backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-6, atol=1e-9)


def test_garbage_collection_frees_the_graph():
    x = tm.ones(3, requires_grad=True)
    y = (x * 2).exp()
    node = y.grad_fn
    import weakref

    ref = weakref.ref(node)
    del y, node
    gc.collect()
    assert ref() is None


def test_detach_in_place():
    x = tm.ones(2, requires_grad=True)
    y = x * 2
    assert y.detach_() is y and not y.requires_grad and y.is_leaf
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        (x * 2)[0:1].detach_()
    assert x.detach().data_ptr() == x.data_ptr() and not x.detach().requires_grad


@pytest.mark.parametrize("convert, name", [
    (lambda t: t.T, "PermuteBackward0"), (lambda t: t.mT, "TransposeBackward0"),
    (lambda t: t.double(), "ToCopyBackward0"), (lambda t: t.to(tm.float16), "ToCopyBackward0"),
    (lambda t: t.type(tm.float64), "ToCopyBackward0"), (lambda t: t.bfloat16(), "ToCopyBackward0")])
def test_tensor_level_conversions_and_transposes_keep_gradients(convert, name):
    # As in PyTorch: x.T, x.mT and dtype conversions are differentiable (they used to drop history).
    x = tm.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = convert(x)
    assert y.grad_fn.name() == name
    (y.float() * tm.arange(6.0).reshape(y.shape)).sum().backward()
    expected = tm.arange(6.0).reshape(y.shape)
    assert x.grad.tolist() == (expected.mT if y.shape != x.shape else expected).tolist()
    assert x.grad.dtype == tm.float32


def test_matmul_double_backward_matches_finite_differences():
    a, b = (tm.randn(3, 3, dtype=tm.float64, requires_grad=True) for _ in range(2))
    assert tm.autograd.gradgradcheck(lambda x, y: x @ y, (a, b))

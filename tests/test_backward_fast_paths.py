"""The short paths the backward under a dispatch mode takes (issue 24's speed section): each must give
what the general path gives, bit for bit, and leave the general path's errors as they were.

The kernels' short paths (``nll_loss_backward``'s mean over valid targets, ``threshold_backward``'s
mask, ``_log_softmax_backward_data`` in one buffer, ``mm`` and ``addmm`` of float matrices, ``sum``
over a one-element dim list, ``view`` to a size of plain ints) are compared with the same values
computed another way; the dispatch level's (an overload's kernel end called with an int list or with
options, ``view``'s size handed over as one tuple) with literal results and errors; the engine's
(the leaf order's counts kept on a retained graph's root) with the op log of a second backward.
"""

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F

from .recording import aten_op_log

A = tm.ops.aten


def bits(t) -> bytes:
    return t.numpy().tobytes() if isinstance(t, tm.Tensor) else np.asarray(t).tobytes()


@pytest.mark.parametrize("dtype", [tm.float32, tm.float64])
def test_nll_loss_backward_mean_matches_the_weighted_path(dtype):
    # a weight of ones takes the general path: -weight[class] * grad / total, the same bits
    rng = np.random.default_rng(0)
    logp = tm.tensor(rng.standard_normal((7, 5)), dtype=dtype)
    target = tm.tensor(rng.integers(0, 5, 7))
    grad, total = tm.tensor(0.3, dtype=dtype), tm.tensor(7.0, dtype=dtype)
    fast = A.nll_loss_backward.default(grad, logp, target, None, 1, -100, total)
    general = A.nll_loss_backward.default(grad, logp, target, tm.ones(5, dtype=dtype), 1, -100, total)
    assert fast.dtype == dtype and bits(fast) == bits(general)
    np_dtype = np.float32 if dtype == tm.float32 else np.float64
    assert fast.numpy()[np.arange(7), target.numpy()].tolist() == [(-(np.asarray(0.3, np_dtype) / 7.0)).item()] * 7
    assert np.count_nonzero(fast.numpy()) == 7


def test_nll_loss_backward_literal_cases():
    run = A.nll_loss_backward.default
    assert run(tm.tensor(1.0), tm.zeros(2, 2), tm.tensor([0, 1]), None, 1, -100, tm.tensor(2.0)).tolist() == \
        [[-0.5, 0.0], [0.0, -0.5]]
    # an ignored target, a zero total: the general path, as before
    assert run(tm.tensor(1.0), tm.zeros(2, 2), tm.tensor([0, 1]), None, 1, 1, tm.tensor(1.0)).tolist() == \
        [[-1.0, 0.0], [0.0, 0.0]]
    assert run(tm.tensor(1.0), tm.zeros(2, 2), tm.tensor([0, 1]), None, 1, -100, tm.tensor(0.0)).tolist() == \
        [[-float("inf"), 0.0], [0.0, -float("inf")]]
    with pytest.raises(IndexError, match="Target 2 is out of bounds."):
        run(tm.tensor(1.0), tm.zeros(2, 2), tm.tensor([0, 2]), None, 1, -100, tm.tensor(2.0))
    with pytest.raises(RuntimeError, match=r"Expected a single element grad_output tensor, but got: \[2\]"):
        run(tm.ones(2), tm.zeros(2, 2), tm.tensor([0, 1]), None, 1, -100, tm.tensor(2.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threshold_backward_keeps_the_gradient_bits(dtype):
    grad = np.array([[-0.0, 1.5, -2.0, np.nan], [3.0, -1e-30, np.inf, 7.0]], dtype)
    value = np.array([[1.0, 0.0, -1.0, 2.0], [np.nan, 5.0, 0.5, -0.0]], dtype)
    out = tm._threshold_backward(tm.tensor(grad), tm.tensor(value), 0)
    expected = np.where(value <= 0, dtype(0), grad)  # NaN input keeps the gradient, as PyTorch's
    assert out.numpy().dtype == dtype and out.numpy().tobytes() == expected.tobytes()


def test_log_softmax_backward_data_in_one_buffer():
    rng = np.random.default_rng(1)
    grad, out = rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((4, 6)).astype(np.float32)
    expected = grad - np.exp(out) * np.add.reduce(grad, 1, keepdims=True)
    result = tm._log_softmax_backward_data(tm.tensor(grad), tm.tensor(out), 1, tm.float32)
    assert result.numpy().tobytes() == expected.tobytes()
    assert tm._log_softmax_backward_data(tm.tensor(1.0), tm.tensor(0.0), 0, tm.float32).item() == 0.0
    half = tm._log_softmax_backward_data(tm.tensor(grad).half(), tm.tensor(out).half(), 0, tm.float16)
    assert half.dtype == tm.float16


def test_mm_and_addmm_of_float_matrices():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32).T
    assert tm.mm(tm.tensor(a), tm.tensor(b.copy()).t().t()).numpy().tobytes() == np.matmul(a, b).tobytes()
    for bias in (rng.standard_normal(4).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)):
        got = tm.addmm(tm.tensor(bias), tm.tensor(a), tm.tensor(b.copy()))
        general = tm.addmm(tm.tensor(bias), tm.tensor(a), tm.tensor(b.copy()), beta=1.0)  # (float beta: general)
        assert got.shape == (5, 4) and bits(got) == bits(general) == (np.matmul(a, b) + bias).tobytes()
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(5x3 and 5x3\)"):
        tm.mm(tm.tensor(a), tm.tensor(a))


def test_overloads_from_a_handler_with_int_lists_and_options():
    x = tm.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    with tm.no_grad():  # as a dispatch handler calls them: grad mode off, nothing listening below
        view = A.view.default(x, [3, 2])
        assert view.shape == (3, 2) and view._view_base is x
        x.add_(1)
        assert view._version == x._version == 1 and view[0].tolist() == [1.0, 2.0]
        x.sub_(1)
        assert A.view.default(x, (6,)).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        assert A.sum.dim_IntList(x, [0], True).tolist() == [[3.0, 5.0, 7.0]]
        assert A.sum.dim_IntList(x, [-1]).tolist() == [3.0, 12.0]
        assert A.expand.default(x[0], [2, 3]).shape == (2, 3)
        assert A.repeat.default(x, [2, 1]).shape == (4, 3)
        assert A.ones_like.default(x, pin_memory=False, memory_format=tm.preserve_format).tolist() == [[1.0] * 3] * 2
        with pytest.raises(RuntimeError, match=r"aten::view\(\) is missing value for argument 'size'"):
            A.view.default(x)
        with pytest.raises(RuntimeError, match="expected at most 2 argument"):
            A.view.default(x, [3, 2], 1)
        with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
            A.view.default(x, [4, 2])
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            A.view.default(x.t(), [6])
        with pytest.raises(IndexError, match=r"expected to be in range of \[-2, 1\], but got 5"):
            A.sum.dim_IntList(x, [5])


def test_a_retained_graph_logs_the_same_backward_twice():
    rng = np.random.default_rng(0)
    x = tm.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    w = tm.tensor(rng.standard_normal((2, 3)).astype(np.float32), requires_grad=True)
    b = tm.zeros(2, requires_grad=True)
    with aten_op_log(tm):
        loss = F.cross_entropy(F.linear(x, w, b), tm.tensor([0, 1, 1, 0]))
    grads = []
    logs = []
    for _ in range(2):
        with aten_op_log(tm) as log:
            loss.backward(retain_graph=True)
        logs.append(log.ops)
        grads.append((bits(w.grad), bits(b.grad)))
        w.grad = b.grad = None
    plain = F.cross_entropy(F.linear(x, w, b), tm.tensor([0, 1, 1, 0]))
    plain.backward()
    assert logs[0] == logs[1] and grads[0] == grads[1] == (bits(w.grad), bits(b.grad))
    # PyTorch 2.13's log of the same program, both times
    assert logs[0] == ["aten.ones_like.default", "aten.nll_loss_backward.default", "aten.detach.default",
                       "aten._log_softmax_backward_data.default", "aten.t.default", "aten.mm.default",
                       "aten.t.default", "aten.sum.dim_IntList", "aten.view.default", "aten.detach.default",
                       "aten.t.default", "aten.detach.default"]


def test_pop_mode_temporarily_takes_the_cached_state_below():
    from tensormodes.utils._python_dispatch import _get_current_dispatch_mode_stack, _pop_mode_temporarily

    outer, inner = aten_op_log(tm), aten_op_log(tm)
    with outer, inner:
        for _ in range(2):  # the second time from the state's cached popped form
            with _pop_mode_temporarily() as popped:
                assert popped is inner and _get_current_dispatch_mode_stack() == [outer]
                tm.ones(1) + 1
            assert _get_current_dispatch_mode_stack() == [outer, inner]
        with pytest.raises(ValueError), _pop_mode_temporarily():
            raise ValueError
        assert _get_current_dispatch_mode_stack() == [outer, inner]
    assert outer.ops == ["aten.ones.default", "aten.add.Tensor"] * 2 and inner.ops == []
    assert _get_current_dispatch_mode_stack() == []

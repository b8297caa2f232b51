"""Everyday torch / Tensor names whole scripts stopped at: the torch-level functional names
(``torch.layer_norm``, ``torch.kl_div`` ... with PyTorch's aten-style signatures); ``reshape_as``, post-accumulate-grad
hooks, ``output_nr``, ``msort``, the split family (``split_with_sizes``, the ``unsafe_*`` forms),
the deprecated ``resize`` / ``range``, ``fill``, ``empty_permuted``, ``frombuffer``, ``typename``,
``is_storage``, the warn-always flag, ``conj_physical_``, ``detach_``, ``resize_as_`` — exact
values, and PyTorch's results, errors, gradients and dispatch-level calls when it is installed."""

from __future__ import annotations

import warnings

import pytest

import tensormodes as tm
from tests.recording import Recorder, aten_op_log
from tests.torch_oracle import assert_same_outcome

# -- post-accumulate-grad hooks ----------------------------------------------------------------------


def _post_accumulate_log(library):
    """What hooks on a leaf saw over two backward passes (the second after ``remove``), and
    the leaf's final values: PyTorch's optimizer-in-backward pattern."""
    v = library.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def step(p):
        seen.append(p.grad.tolist())
        with library.no_grad():
            p.sub_(p.grad * 0.5)

    handle = v.register_post_accumulate_grad_hook(step)
    (v * v).sum().backward()
    (v * 3).sum().backward()  # .grad accumulates: the hook sees the sum
    handle.remove()
    (v * 3).sum().backward()
    grads = library.autograd.grad((v * 2).sum(), v)  # no accumulation: no hook
    return seen, v.tolist(), v.grad.tolist(), grads[0].tolist()


def test_post_accumulate_grad_hooks_run_after_accumulation():
    seen, values, grad, grads = _post_accumulate_log(tm)
    assert seen == [[2.0, 4.0], [5.0, 7.0]]
    assert values == [-2.5, -3.5] and grad == [8.0, 10.0] and grads == [2.0, 2.0]


def test_post_accumulate_grad_hooks_refuse_what_pytorch_refuses():
    with pytest.raises(RuntimeError, match="^post accumulate grad hooks cannot be registered on non-leaf tensors$"):
        (tm.ones(1, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match="^cannot register a hook on a tensor that doesn't require gradient$"):
        tm.ones(1).register_post_accumulate_grad_hook(lambda p: None)
    v = tm.ones(1, requires_grad=True)
    v.register_post_accumulate_grad_hook(lambda p: p)
    with pytest.raises(RuntimeError, match="^Tensor post accumulate grad hooks should return None.$"):
        v.sum().backward()


@pytest.mark.torch
def test_post_accumulate_grad_hooks_match_pytorch():
    torch = pytest.importorskip("torch")
    assert _post_accumulate_log(tm) == _post_accumulate_log(torch)


# -- Tensor names --------------------------------------------------------------------------------------

def test_output_nr_and_is_inference():
    x = tm.zeros(2, 3, requires_grad=True)
    assert [t.output_nr for t in (x * 1).split(1)] == [0, 1] and x.output_nr == 0
    assert tm.is_inference(x) is False and x.is_inference() is False


def test_resize_is_a_differentiable_deprecated_reshape():
    x = tm.arange(6.0).requires_grad_()
    with pytest.warns(UserWarning, match="^non-inplace resize is deprecated$"):
        y = x.resize(2, 3)
    assert y.grad_fn.name() == "ResizeBackward" and y._base is x and y.shape == (2, 3)
    (y * tm.arange(6.0).view(2, 3)).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.warns(UserWarning, match="^non-inplace resize_as is deprecated$"):
        assert x.resize_as(tm.zeros(3, 2)).shape == (3, 2)
    with warnings.catch_warnings(), pytest.raises(RuntimeError, match=r"^requested resize to 4 \(4 elements in "
                                                  r"total\), but the given tensor has a size of 6 \(6 elements\)"):
        warnings.simplefilter("ignore")
        x.resize(4)


def test_unsafe_splits_share_memory_but_are_no_views():
    x = tm.arange(5.0)
    first, second = x.unsafe_split(3)
    assert first._base is None and second.tolist() == [3.0, 4.0]
    first.add_(1)  # (what PyTorch's contract forbids: it shows the shared memory)
    assert x.tolist() == [1.0, 2.0, 3.0, 3.0, 4.0] and x._version == 0
    y = tm.arange(5.0, requires_grad=True) * 1
    assert [t.grad_fn.name() for t in (y.unsafe_chunk(2)[0], y.unsafe_split_with_sizes([2, 3])[1],
                                       y.split_with_sizes([1, 4])[0], y.msort())] == \
        ["UnsafeSplitBackward0", "UnsafeSplitWithSizesBackward0", "SplitWithSizesBackward0", "SortBackward0"]


def test_top_level_helpers():
    assert tm.typename(tm.zeros(1, dtype=tm.int64)) == "tensormodes.LongTensor" and tm.typename(1) == "int"
    assert tm.typename(tm.nn.Linear(1, 1)) == "tensormodes.nn.modules.linear.Linear"
    assert tm.is_storage(tm.zeros(1)) is False
    assert tm.is_warn_always_enabled() is False
    tm.set_warn_always(True)
    try:
        assert tm.is_warn_always_enabled() is True
    finally:
        tm.set_warn_always(False)
    with pytest.raises(RuntimeError, match="^setWarnOnlyOnce expects a bool, but got int$"):
        tm.set_warn_always(1)
    y = tm.ones(2, requires_grad=True) * 2
    assert tm.detach_(y) is y and not y.requires_grad and y.is_leaf
    assert tm.resize_as_(tm.arange(4), tm.zeros(2, 2)).tolist() == [[0, 1], [2, 3]]


def test_frombuffer_shares_a_writable_buffer_and_copies_a_read_only_one():
    buffer = bytearray(b"abcd")
    t = tm.frombuffer(buffer, dtype=tm.int8, offset=1)
    t[0] = 65
    assert buffer == bytearray(b"aAcd") and t.tolist() == [65, 99, 100]
    with pytest.warns(UserWarning, match="^The given buffer is not writable"):
        assert tm.frombuffer(b"ab", dtype=tm.int8, requires_grad=False).tolist() == [97, 98]
    with Recorder() as recorder:  # (PyTorch's modes do not see it either)
        made = tm.frombuffer(bytearray(b"\x01\x00"), dtype=tm.int16)
    assert made.tolist() == [1] and recorder.names == []


def test_range_values_and_warning():
    with pytest.warns(UserWarning, match="^torch.range is deprecated"):
        assert tm.range(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tm.range(0, 2.5, dtype=tm.int64).tolist() == [0, 1, 2]
        with pytest.raises(RuntimeError, match="^step must be nonzero$"):  # (PyTorch 2.13 divides by 0: SIGFPE)
            tm.range(-3, 7, 0.7, dtype=tm.int32)
        assert tm.range(0, 1, 0.3, dtype=tm.float16).tolist() == [0.0, 0.300048828125, 0.60009765625,
                                                                 0.89990234375]


def test_fill_and_conj_physical_():
    x = tm.zeros(2, requires_grad=True)
    y = tm.fill(x, 2.0)
    y.sum().backward()
    assert y.tolist() == [2.0, 2.0] and y.grad_fn.name() == "FillBackward0" and x.grad.tolist() == [0.0, 0.0]
    z = tm.tensor([1 - 1j])
    assert tm.conj_physical_(z) is z and z.tolist() == [1 + 1j] and z._version == 1


def test_empty_permuted_lays_dimensions_out_in_order():
    t = tm.empty_permuted((2, 3, 4), (0, 2, 1))
    assert t.shape == (2, 3, 4) and t.stride() == (12, 1, 3)


# -- against PyTorch --------------------------------------------------------------------------------

EXPRESSIONS = [
    "L.arange(6.).reshape_as(L.zeros(3, 2))", "L.arange(6.).view(2, 3).t().reshape_as(L.zeros(6))",
    "L.arange(6.).reshape_as(L.zeros(4))",
    "L.tensor([[3., 1.], [0., 2.]]).msort()", "L.msort(L.tensor(3))",
    "L.arange(5).split_with_sizes([2, 3])", "L.split_with_sizes(L.arange(6).view(2, 3), [1, 2], 1)",
    "L.arange(5).split_with_sizes([2, 2])", "L.arange(5).split_with_sizes([-1, 6])",
    "L.unsafe_split(L.arange(5), 2)", "L.arange(5).unsafe_split(2, -1)", "L.unsafe_split(L.arange(5), [1, 4])",
    "L.unsafe_split(L.arange(5), 2.0)",
    "L.arange(5).unsafe_chunk(3)", "L.unsafe_chunk(L.zeros(0, 2), 3)", "L.unsafe_chunk(L.arange(5), 0)",
    "L.unsafe_split_with_sizes(L.arange(5), [1, 4])", "L.arange(5).unsafe_split_with_sizes([3, 3])",
    "L.range(0, 1, 0.1)", "L.range(0, 10, 3)", "L.range(5, -1, -2)", "L.range(0, 1, 0.1, dtype=L.float64)",
    "L.range(0, 1, 1 / 3, dtype=L.bfloat16)", "L.range(0, 5, 0)",
    "L.range(3, 0)", "L.range(0, 3, dtype=L.bool)", "L.range(5)", "L.range(0, float('inf'))",
    "L.fill(L.zeros(2, dtype=L.int64), 2.7)", "L.fill(L.zeros(2), L.tensor(3.))", "L.fill(L.zeros(2), L.ones(2))",
    "L.fill(L.zeros(2, dtype=L.uint8), 300)",
    "L.empty_permuted((2, 3, 4), (2, 0, 1)).stride()", "L.empty_permuted((2, 3), (0, 2, 1))",
    "L.empty_permuted((2, 3), (0, 0))", "L.empty_permuted((), ()).shape",
    "L.frombuffer(b'', dtype=L.int8)", "L.frombuffer(bytearray(b'abcd'), dtype=L.int16, offset=1)",
    "L.frombuffer(bytearray(b'abcd'), dtype=L.int16, offset=4)",
    "L.frombuffer(bytearray(b'abcd'), dtype=L.int8, offset=1, count=4)",
    "L.frombuffer(bytearray(b'abcdefgh'), dtype=L.float32)", "L.frombuffer(b'ab', dtype=L.uint8, count=0)",
    "L.tensor([1 - 1j, 2j]).conj_physical_()", "L.conj_physical_(L.tensor([1., 2.]))",
    "L.is_inference(L.zeros(1))", "L.typename(L.zeros(2, dtype=L.float64))", "L.is_storage([1])",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_matches_pytorch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression)


GRADIENT_CASES = [
    ("reshape_as", lambda L, x: x.t().reshape_as(L.zeros(6))),
    ("msort", lambda L, x: x.msort() * L.arange(6.).view(3, 2)),
    ("split_with_sizes", lambda L, x: x.split_with_sizes([1, 2])[1] * 2),
    ("unsafe_split", lambda L, x: L.unsafe_split(x, 2)[1] * 3),
    ("unsafe_chunk", lambda L, x: x.unsafe_chunk(2, 1)[0] * 3),
    ("unsafe_split_with_sizes", lambda L, x: x.unsafe_split_with_sizes([2, 1])[0] * 3),
    ("fill", lambda L, x: L.fill(x, L.tensor(2.0, requires_grad=True)) * x),
]


@pytest.mark.torch
@pytest.mark.parametrize("name, expression", GRADIENT_CASES, ids=[case[0] for case in GRADIENT_CASES])
def test_gradients_and_nodes_match_pytorch(name, expression):
    torch = pytest.importorskip("torch")
    outcomes = []
    for library in (tm, torch):
        x = library.tensor([[3.0, -1.0], [0.5, 2.0], [1.0, 1.0]], requires_grad=True)
        result = expression(library, x)
        result.sum().backward()
        outcomes.append((result.tolist(), x.grad.tolist(), result.grad_fn.next_functions[0][0].name()
                         if result.grad_fn.name() == "MulBackward0" else result.grad_fn.name()))
    assert outcomes[0] == outcomes[1]


DISPATCHED = [
    "L.arange(6.).reshape_as(L.zeros(3, 2))", "L.arange(6.).view(2, 3).t().reshape_as(L.zeros(6))",
    "L.tensor([3., 1.]).msort()", "L.arange(5).split_with_sizes([2, 3])", "L.arange(5).unsafe_chunk(2)",
    "L.arange(5).unsafe_split(2)", "L.fill(L.zeros(2), 1.5)", "L.range(0, 3)",
    "L.empty_permuted((2, 3), (1, 0))", "L.tensor([1j]).conj_physical_()",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", DISPATCHED)
def test_dispatch_level_sees_pytorchs_ops(expression):
    torch = pytest.importorskip("torch")
    logs = []
    for library in (tm, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with aten_op_log(library) as log:
                eval(expression, {"L": library})
        logs.append(log.ops)
    assert logs[0] == logs[1]


# -- torch-level functional names (aten-style signatures: reductions as ints, every norm option) ------

FUNCTIONAL_EXPRESSIONS = [
    "L.layer_norm(L.arange(6.).view(2,3), [3])",
    "L.layer_norm(L.arange(6.).view(2,3), [3], L.ones(3), L.zeros(3), 1e-3, False)",
    "L.layer_norm(L.zeros(2,3), 3)",
    "L.group_norm(L.arange(8.).view(2,4), 2)",
    "L.group_norm(L.arange(8.).view(2,4), 3)",
    "L.group_norm(L.arange(8.).view(2,4), 2, L.ones(3))",
    "L.batch_norm(L.arange(6.).view(2,3), None, None, None, None, True, 0.1, 1e-5, False)",
    "L.batch_norm(L.arange(6.).view(2,3), None, None, L.zeros(3), L.ones(3), False, 0.1, 1e-5, True)",
    "L.batch_norm(L.arange(6.).view(2,3), None, None, None, None, False, 0.1, 1e-5, False)",
    "L.batch_norm(L.arange(3.).view(1,3), None, None, None, None, True, 0.1, 1e-5, False)",
    "L.instance_norm(L.arange(12.).view(2,3,2), None, None, None, None, True, 0.1, 1e-5, False)",
    "L.instance_norm(L.arange(12.).view(2,3,2), None, None, None, None, False, 0.1, 1e-5, False)",
    "L.cosine_similarity(L.arange(6.).view(2,3), L.ones(2,3))",
    "L.pairwise_distance(L.arange(6.).view(2,3), L.ones(2,3), 1.0)",
    "L.kl_div(L.tensor([-1., -2.]), L.tensor([0.5, 0.]), 0)",
    "L.kl_div(L.tensor([-1., -2.]), L.tensor([0.5, 0.1]), 1, log_target=True)",
    "L.kl_div(L.tensor([-1., -2.]), L.tensor([0.5, 0.]), 5)",
    "L.selu(L.tensor([-1., 2.]))",
    "L.celu(L.tensor([-1., 2.]), 0.5)",
    "L.celu(L.tensor([-1., 2.]), 0.)",
    "L.threshold(L.tensor([-1., 2.]), 0.5, 7)",
    "L.prelu(L.tensor([[-1., 2.]]), L.tensor([0.25]))",
    "L.tensor([[-1., 2.]]).prelu(L.tensor([0.25, 0.5]))",
    "L.prelu(L.tensor(1.), L.tensor([0.25]))",
    "L.prelu(L.tensor(1.), L.tensor([0.25, 0.5]))",
    "L.prelu(L.tensor([[1.]]), L.ones(1, 1))",
    "L.bilinear(L.ones(2,3), L.ones(2,2), L.ones(4,3,2))",
    "L.margin_ranking_loss(L.tensor([1., 2.]), L.tensor([0., 3.]), L.tensor([1., -1.]))",
    "L.margin_ranking_loss(L.tensor([1., 2.]), L.tensor([[0.], [3.]]), L.tensor([1., -1.]), 0.5, 0)",
    "L.hinge_embedding_loss(L.tensor([0.25, 3.]), L.tensor([1., -1.]), 1.0, 2)",
    "L.cosine_embedding_loss(L.ones(2,3), L.arange(6.).view(2,3), L.tensor([1., -1.]), 0.1, 0)",
    "L.cosine_embedding_loss(L.ones(2,3), L.ones(3), L.tensor([1., -1.]))",
    "L.triplet_margin_loss(L.zeros(2,3), L.ones(2,3), L.arange(6.).view(2,3), -1.0, 1.0, 1e-6, True, 0)",
    "L.triplet_margin_loss(L.zeros(2,3), L.ones(3), L.ones(2,3))",
    "L.poisson_nll_loss(L.tensor([0.5, 1.]), L.tensor([2., 0.]), False, True, 1e-8, 0)",
    "L.poisson_nll_loss(L.tensor([0.5, 1.]), L.tensor([2., 3.]), True, True, 1e-8, 1)",
    "L.binary_cross_entropy_with_logits(L.tensor([0.5, -1.]), L.tensor([1., 0.]))",
    "L.binary_cross_entropy_with_logits(L.tensor([0.5, -1.]), L.tensor([1., 0.]), L.tensor([2., 1.]), "
    "L.tensor([3., 3.]), 0)",
    "L.binary_cross_entropy_with_logits(L.tensor([0.5, -1.]), L.tensor([1.]), None, None, 2)",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", FUNCTIONAL_EXPRESSIONS)
def test_torch_level_functional_names_match_pytorch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression, rtol=1e-6, atol=1e-7)


def test_torch_level_functional_names():
    import tensormodes.nn.functional as F

    assert tm.prelu is F.prelu and tm.bilinear is F.bilinear and tm.cosine_similarity is F.cosine_similarity
    assert tm.pairwise_distance is F.pairwise_distance
    a, b, target = tm.tensor([1.0, 2.0]), tm.tensor([3.0, 0.0]), tm.tensor([1.0, -1.0])
    # PyTorch 2.13's binding reads the schemas' default reduction (mean) as 0: unreduced
    assert tm.margin_ranking_loss(a, b, target).tolist() == [2.0, 2.0]
    assert tm.margin_ranking_loss(a, b, target, 0.0, 2).item() == 4.0
    assert tm.kl_div(tm.tensor([0.0]), tm.tensor([1.0]), 1).item() == 0.0
    assert tm.threshold(tm.tensor([0.5, 2.0]), 1.0, -1.0).tolist() == [-1.0, 2.0]
    assert tm.layer_norm(tm.tensor([[1.0, 3.0]]), [2], None, None, 0.0, False).tolist() == [[-1.0, 1.0]]


FUNCTIONAL_DISPATCHED = [
    "L.layer_norm(L.ones(2, 3), [3])", "L.group_norm(L.ones(2, 4), 2)",
    "L.batch_norm(L.ones(2, 3), None, None, None, None, True, 0.1, 1e-5, False)",
    "L.selu(L.tensor([-1., 2.]))",
    "L.celu(L.tensor([-1., 2.]), 0.5)", "L.threshold(L.tensor([-1., 2.]), 0.5, 7)",
    "L.tensor([[-1., 2.]]).prelu(L.tensor([0.25]))",
    "L.binary_cross_entropy_with_logits(L.tensor([0.5, -1.]), L.tensor([1., 0.]), None, None, 1)",
    "L.instance_norm(L.ones(2, 3, 2), None, None, None, None, True, 0.1, 1e-5, False)",
]  # (the losses written in Python here — kl_div, the margin losses ... — decompose differently, as before)


@pytest.mark.torch
@pytest.mark.parametrize("expression", FUNCTIONAL_DISPATCHED)
def test_torch_level_functional_names_reach_pytorchs_aten_ops(expression):
    test_dispatch_level_sees_pytorchs_ops(expression)


# -- the *_copy ops, derived from the views' declarations ---------------------------------------------

COPY_CALLS = [
    ("alias_copy", ()), ("as_strided_copy", ((2, 2), (1, 2), 1)), ("diagonal_copy", (1,)),
    ("expand_copy", ((2, 2, 3),)), ("permute_copy", ((1, 0),)), ("select_copy", (1, -1)), ("slice_copy", (1, 0, 3, 2)),
    ("split_copy", (1,)), ("split_with_sizes_copy", ([1, 2], 1)), ("squeeze_copy", ()), ("t_copy", ()),
    ("transpose_copy", (0, 1)), ("unbind_copy", (1,)), ("unfold_copy", (1, 2, 1)), ("unsqueeze_copy", (0,)),
    ("view_copy", ((3, 2),)), ("narrow_copy", (1, 1, 2)),
]


def test_copies_are_new_contiguous_tensors():
    x = tm.arange(6.0).view(2, 3)
    for name, args in COPY_CALLS:
        result = getattr(tm, name)(x, *args)
        for item in result if isinstance(result, tuple) else (result,):
            assert item._base is None and item.is_contiguous(), name
            assert item.data_ptr() != x.data_ptr() or item.numel() == 0, name
    assert tm.permute_copy(x, (1, 0)).stride() == (2, 1)
    assert "view_copy" in [tag.name for tag in tm.ops.aten.t_copy.default.tags]


@pytest.mark.torch
@pytest.mark.parametrize("name, args", COPY_CALLS, ids=[call[0] for call in COPY_CALLS])
def test_copies_match_pytorch(name, args):
    torch = pytest.importorskip("torch")
    outcomes = []
    for library in (tm, torch):
        x = library.arange(6.0).view(2, 3).requires_grad_()
        result = getattr(library, name)(x, *args)
        items = result if isinstance(result, (tuple, list)) else (result,)
        weights = [library.arange(float(item.numel())).view(item.shape) for item in items]
        sum(((item * w).sum() for item, w in zip(items, weights)), library.zeros(())).backward()
        described = [(item.tolist(), tuple(item.stride()), item.grad_fn.name()) for item in items]
        outcomes.append((described, x.grad.tolist()))
        with aten_op_log(library) as log:
            getattr(library, name)(library.arange(6.0).view(2, 3), *args)
        outcomes.append(log.ops[-1])
    assert outcomes[:2] == outcomes[2:]


@pytest.mark.torch
def test_complex_view_copies_match_pytorch():
    pytest.importorskip("torch")
    assert_same_outcome("L.view_as_real_copy(L.tensor([1 + 2j, 3j]))")
    assert_same_outcome("L.tensor([[1., 2.], [0., 3.]]).narrow_copy(0, 1, 1)")
    assert_same_outcome("L.view_copy(L.arange(6.).view(2, 3).t(), (6,))")


# -- the pooling functions that always return indices -------------------------------------------------

POOLING_EXPRESSIONS = [
    "L.nn.functional.max_pool1d_with_indices(L.tensor([[1., 3., 2., 0., 5.]]), 2)",
    "L.nn.functional.max_pool2d_with_indices(L.arange(16.).view(1, 4, 4).flip(-1), 2, 1, 1, ceil_mode=True)",
    "L.nn.functional.max_pool3d_with_indices(L.arange(27.).view(1, 3, 3, 3).flip(1), 2, 1)",
    "L.nn.functional.max_pool2d_with_indices(L.zeros(1, 1, 1), 3)",
    "L.nn.functional.adaptive_max_pool1d_with_indices(L.tensor([[1., 5., 2., 0., 4.]]), 2)",
    "L.nn.functional.adaptive_max_pool2d_with_indices(L.arange(12.).view(1, 3, 4).flip(-1), (2, 3))",
    "L.nn.functional.max_pool2d(L.arange(16.).view(1, 4, 4), 2, return_indices=True)",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", POOLING_EXPRESSIONS)
def test_pooling_with_indices_matches_pytorch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression)


def test_pooling_with_indices_are_public_functions():
    import tensormodes.nn.functional as F

    x = tm.tensor([[[1.0, 3.0], [4.0, 2.0]]])
    with Recorder() as recorder:
        values, indices = F.max_pool2d_with_indices(x, 2)
    assert values.tolist() == [[[4.0]]] and indices.tolist() == [[[2]]]
    assert recorder.names == ["tensormodes.nn.functional.max_pool2d_with_indices"]


# -- trapz, cumulative_trapezoid ----------------------------------------------------------------------

INTEGRATION_EXPRESSIONS = [
    "L.trapz(L.tensor([1., 2., 4.]))", "L.trapz(L.tensor([1., 2., 4.]), L.tensor([0., 1., 3.]))",
    "L.trapz(L.tensor([[1., 2.], [3., 4.]]), dx=0.5, dim=0)", "L.trapz(L.tensor([1, 2, 4]))",
    "L.cumulative_trapezoid(L.tensor([1., 2., 4.]))", "L.cumulative_trapezoid(L.tensor([0.1, 2.3, 4.7, 1.1]), dx=0.3)",
    "L.cumulative_trapezoid(L.tensor([0.1, 2.3, 4.7]), L.tensor([0.2, 1.1, 3.3]))",
    "L.cumulative_trapezoid(L.arange(6.).view(2, 3) * 0.37, L.tensor([[0., 1., 3.], [1., 2., 2.5]]))",
    "L.cumulative_trapezoid(L.arange(6.).view(2, 3) * 0.37, L.tensor([0., 1.1]), dim=0)",
    "L.cumulative_trapezoid(L.tensor([1, 2, 4]))", "L.cumulative_trapezoid(L.tensor([1, 2, 5]), L.tensor([1, 3, 4]))",
    "L.cumulative_trapezoid(L.tensor([True]))", "L.cumulative_trapezoid(L.tensor([1., 2.]), L.tensor([1., 2., 3.]))",
    "L.cumulative_trapezoid(L.tensor([1., 2.]), dx=True)", "L.cumulative_trapezoid(L.zeros(0))",
    "L.cumulative_trapezoid(L.tensor(1.))", "L.cumulative_trapezoid(L.tensor([1., 2.], dtype=L.float16), dx=0.1)",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", INTEGRATION_EXPRESSIONS)
def test_integration_matches_pytorch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression)


@pytest.mark.torch
def test_cumulative_trapezoid_ops_and_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    outcomes = []
    for library in (tm, torch):
        y = library.tensor([0.1, 2.3, 4.7], requires_grad=True)
        x = library.tensor([0.2, 1.1, 3.3], requires_grad=True)
        with aten_op_log(library) as log:  # (without grad: recorded, ATen's div.Scalar is our div.Tensor)
            library.cumulative_trapezoid(y.detach(), x.detach())
            library.cumulative_trapezoid(y.detach(), dx=0.3)
        result = library.cumulative_trapezoid(y, x)
        (result * library.tensor([1.0, 3.0])).sum().backward()
        outcomes.append((log.ops, result.tolist(), y.grad.tolist(), x.grad.tolist()))
    assert outcomes[0] == outcomes[1]


def test_cumulative_trapezoid_values():
    assert tm.cumulative_trapezoid(tm.tensor([1.0, 2.0, 4.0]), dx=2.0).tolist() == [3.0, 9.0]
    y = tm.ones(2)
    with Recorder() as recorder:
        tm.trapz(y)
    assert recorder.names == ["tensormodes.trapz"]

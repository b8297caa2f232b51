"""Differences from PyTorch that the differential fuzzer found in indexing, scatter/gather, the
losses, searchsorted/unique and matrix norms, each pinned with PyTorch's own values, types and
messages (as torch 2.13 gives them), so that these run without torch installed too."""

from __future__ import annotations

import math
import warnings

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F

T = tm.tensor
INF = float("inf")


def _raises(kind, message, call):
    with pytest.raises(kind) as info:
        call()
    assert str(info.value) == message


# -- index_put ---------------------------------------------------------------------------------

@pytest.mark.parametrize("input, mask, value, expected", [
    # One mask and one value: PyTorch's masked_fill shortcut converts the value as a number.
    (T([-2, -1, 0]), T([True, True, False]), T(True), [1, 1, 0]),
    (T([-2, -1, 0]), T([True, True, False]), T([[True]]), [1, 1, 0]),
    (T([-2.0, -1, 0]), T(False), T(1.5, dtype=tm.float16), [-2.0, -1.0, 0.0]),
    (tm.zeros(2, 3, dtype=tm.int32), T([True, False]), T(1.7), [[1, 1, 1], [0, 0, 0]]),
    (tm.zeros(2, 3, dtype=tm.uint8), T([True, False]), T(-1, dtype=tm.int8), [[255] * 3, [0] * 3]),
    (tm.zeros(2, 3), T([[True, True, False]] * 2), T(1.0).short(), [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]),
])
def test_index_put_converts_one_value_put_at_one_mask(input, mask, value, expected):
    result = tm.index_put(input, [mask], value)
    assert result.dtype == input.dtype and result.tolist() == expected


@pytest.mark.parametrize("input, indices, value, accumulate, kind, message", [
    (T([-2, -1, 0], dtype=tm.int8), [T([True, True, False])], T(300), False, RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    (T([-2.0, -1, 0]), [T([True, True, False])], T(1 + 2j), False, RuntimeError,
     "value cannot be converted to type float without overflow"),
    (T([-2, -1, 0]), [T([True, True, False], dtype=tm.uint8)], T(2.7), False, RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"),
    # the shortcut is not taken: values keep their dtype, checked after the index
    (T([-2, -1, 0]), [T([True, True, False])], T(True), True, RuntimeError,
     "Index put requires the source and destination dtypes match, got Long for the destination and Bool for "
     "the source."),
    (T([-2.0, -1, 0]), [T([True, True])], T(1.5, dtype=tm.float16), False, IndexError,
     "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3] at index 0"),
    (tm.zeros(0, 3, dtype=tm.int64), [T(1), T([2, 2])], T(True), True, IndexError,
     "index is out of bounds for dimension with size 0"),
    (tm.zeros(2, 3), [T([1], dtype=tm.int16)], T([0, 1, 2], dtype=tm.int16), False, IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    (tm.zeros(2, 3), [T([1]), T([1, 1.0]), T([0])], T([0, 1.0]), False, IndexError,
     "too many indices for tensor of dimension 2 (got 3)"),
    (tm.zeros(2, 3), [T([1]), T([1, 1, 1])], T([0, 1, 2, 3]), False, RuntimeError,
     "shape mismatch: value tensor of shape [4] cannot be broadcast to indexing result of shape [3]"),
    (tm.zeros(2, 3), [T([5]), T([1, 1, 1])], T([0, 1.0]), False, RuntimeError,
     "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [3]"),
    (tm.zeros(2, 3), [T([5]), T([1, 1])], T([0, 1.0]), False, IndexError,
     "index 5 is out of bounds for dimension 0 with size 2"),
    (tm.zeros(2, 3), [tm.ones(2, 3, dtype=tm.bool), T([0])], T([1.0]), False, IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (tm.zeros(2, 0), [T([1, 2]), T([1, 2, 3])], T([0.0, 3]).short(), False, IndexError,
     "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]"),
    # unlike t[i] = v, index_put takes no extra leading dimensions of size 1
    (tm.zeros(2, 3), [T([1, 0])], T([[[1.0, 2, 3]]]), False, RuntimeError,
     "shape mismatch: value tensor of shape [1, 1, 3] cannot be broadcast to indexing result of shape [2, 3]"),
])
def test_index_put_checks_in_pytorchs_order(input, indices, value, accumulate, kind, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises(kind, message, lambda: tm.index_put(input, indices, value, accumulate))


def test_index_put_ignores_0_dim_masks_beside_other_indices():
    result = tm.index_put(tm.zeros(2, 3), [T(False), T([1])], T([1.0, 2, 3]))
    assert result.tolist() == [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]


def test_index_put_meta_follows_the_shortcut_and_the_order():
    meta = tm.zeros(3, dtype=tm.int64, device="meta")
    assert tm.index_put(meta, [tm.ones(3, dtype=tm.bool, device="meta")], T(True, device="meta")).dtype == tm.int64
    _raises(IndexError, "tensors used as indices must be long, int, byte or bool tensors",
            lambda: tm.index_put(meta, [tm.zeros(1, dtype=tm.int16, device="meta")], T(1.0, device="meta")))


def test_index_put_gradient_through_the_shortcut():
    x = T([[1.0, 2, 3], [4, 5, 6]], requires_grad=True)
    v = T([[2.0]], dtype=tm.float64, requires_grad=True)
    (tm.index_put(x, [T([True, False])], v) * T([[1.0, 2, 3], [4, 5, 6]])).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [4.0, 5.0, 6.0]]
    assert v.grad.dtype == tm.float64 and v.grad.tolist() == [[6.0]]


def test_0_dim_integer_tensors_of_any_integer_dtype_index_as_numbers():
    x = T([[1.0, 2, 3], [4, 5, 6]])
    assert x[T(1, dtype=tm.int16)].tolist() == [4.0, 5.0, 6.0]
    assert x[T(0, dtype=tm.int8), T([0, 2])].tolist() == [1.0, 3.0]
    assert x[1, T(1, dtype=tm.int16)].item() == 5.0
    _raises(IndexError, "index 5 is out of bounds for dimension 0 with size 2", lambda: x[T(5, dtype=tm.int16)])
    _raises(IndexError, "tensors used as indices must be long, int, byte or bool tensors",
            lambda: x[T([0], dtype=tm.int16)])


# -- gather / scatter / index_* -------------------------------------------------------------------

@pytest.mark.parametrize("call, kind, message", [
    (lambda: tm.index_add(tm.zeros(4), -1, T([[2, 0, 3], [2, 0, 2]], dtype=tm.int8), T([0, 0, 0])), IndexError,
     "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: Char and size: [2, 3]"),
    (lambda: tm.index_add(tm.zeros(4), 3, T([2, 0, 3], dtype=tm.int16), T([0, 0, 0])), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 3)"),
    (lambda: tm.index_select(tm.zeros(2, 0), 1, T([[1.0, 2]], dtype=tm.float64)), IndexError,
     "index_select(): Index is supposed to be a vector"),
    (lambda: tm.index_select(tm.zeros(2, 0), 3, T([1, 2], dtype=tm.int16)), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
    (lambda: tm.gather(tm.zeros(2, 3), 5, tm.zeros(0)), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    (lambda: tm.scatter(tm.zeros(2, 3), 1, tm.zeros(2, 0), tm.zeros(2, 2, dtype=tm.int64)), RuntimeError,
     "scatter(): Expected self.dtype to be equal to src.dtype"),
    (lambda: tm.scatter(tm.zeros(2, 3), 1, tm.zeros(2, 1, dtype=tm.int64), tm.zeros(2, 2, dtype=tm.int64),
                        reduce="max"), RuntimeError, "scatter(): Expected self.dtype to be equal to src.dtype"),
    (lambda: tm.scatter(tm.zeros(2, 3), 1, tm.zeros(3, 1, dtype=tm.int64), 1e300), RuntimeError,
     "Expected index [3, 1] to be no larger than self [2, 3] apart from dimension 1"),
    (lambda: tm.scatter(tm.zeros(2, 3), 1, tm.zeros(2, 1, dtype=tm.int64), tm.zeros(2)), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    (lambda: tm.scatter(tm.zeros(3), 0, tm.zeros(2, dtype=tm.int64), tm.zeros(())), RuntimeError,
     "Expected index [2] to be no larger than self [3] apart from dimension 0 and to be no larger size than src []"),
    (lambda: tm.scatter_add(tm.zeros(2, 2, 3), 0, tm.zeros(2, 2, 3, dtype=tm.int64), tm.zeros(2, 3)), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: tm.index_copy(tm.zeros(4, 2, dtype=tm.int16), 0, T([0, 1]), T(1.7)), IndexError,
     "index_copy_(): When source is scalar, index should have one element (got 2)"),
    (lambda: tm.index_copy(tm.zeros(4, 2, dtype=tm.int16), 0, T([0]), T(1, dtype=tm.int16)), RuntimeError,
     "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: 2 at "
     "dimension 0 and source slice shape:  at dimension 0."),
    (lambda: tm.index_copy(tm.zeros(2, 3, 4), 1, T([0, 1, 2]), tm.zeros(3, 3, 3)), RuntimeError,
     "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: 2 4 at "
     "dimension 1 and source slice shape: 3 3 at dimension 0."),
    (lambda: tm.index_fill(T(1, dtype=tm.uint8), 1, T(0), -1.5), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    (lambda: tm.index_fill(T(1, dtype=tm.uint8), 0, T([[0]]), 2.5 + 1j), RuntimeError,
     "index_fill_(): Converting complex Scalar to non-complex type is not supported"),
    (lambda: tm.take_along_dim(T(-0.5), T([[1, 0, 0]]), 0), RuntimeError,
     "torch.take_along_dim(): input and indices should have the same number of dimensions, but got 0 dimensions "
     "for input, and 2 dimensions for indices"),
    (lambda: tm.take_along_dim(tm.zeros(2, 3), tm.zeros(1, dtype=tm.int16), 1), RuntimeError,
     "torch.take_along_dim(): input and indices should have the same number of dimensions, but got 2 dimensions "
     "for input, and 1 dimensions for indices"),
    (lambda: tm.take_along_dim(tm.zeros(()), T(0), 0), IndexError,
     "Dimension specified as 0 but tensor has no dimensions"),
    (lambda: tm.take_along_dim(tm.zeros(2, 3), tm.zeros(1, 1, dtype=tm.int16)), RuntimeError,
     "gather(): Expected dtype int32/int64 for index"),
    (lambda: tm.mv(T(0, dtype=tm.int16), T([1, -1], dtype=tm.int16)), IndexError,
     "Dimension specified as 0 but tensor has no dimensions"),
])
def test_gather_scatter_family_checks_in_pytorchs_order(call, kind, message):
    _raises(kind, message, call)


def test_an_empty_index_of_any_dtype_gathers_and_scatters_nothing():
    assert tm.gather(tm.zeros(2, 3), 1, tm.zeros(2, 0, dtype=tm.complex64)).shape == (2, 0)
    assert tm.scatter(tm.zeros(2, 3), 1, tm.zeros(2, 0, dtype=tm.int16), 1e300).tolist() == [[0.0] * 3] * 2
    assert tm.take_along_dim(T(0, dtype=tm.uint8), tm.zeros(1, 0, dtype=tm.int16)).shape == (0,)
    assert tm.take_along_dim(tm.zeros(2, 3), tm.zeros(1, 1, dtype=tm.int32)).tolist() == [0.0]


# -- nll_loss and cross entropy ----------------------------------------------------------------------

@pytest.mark.parametrize("call, kind, message", [
    (lambda: F.nll_loss(tm.zeros(4, 3), T([2, 0, 2, 0]), T([1, 0, 2], dtype=tm.int8)), RuntimeError,
     "expected scalar type Float but found Char"),
    (lambda: F.nll_loss(tm.zeros(4, 3), T([2, 0, 2, 5]), T([1.0, 0, 2], dtype=tm.float64)), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: F.nll_loss(tm.zeros(4, 3, 5), tm.zeros(4, 5, dtype=tm.uint8), T([1.0, 2, 3]).double()), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: F.nll_loss(tm.zeros(4, 3, 5), tm.zeros(4, 5, dtype=tm.int64), T([1.0])), RuntimeError,
     "weight tensor should be defined either for all or no classes"),
    (lambda: F.nll_loss(tm.zeros(0, 3), T(0), T(1.4)), IndexError,
     "Dimension specified as 0 but tensor has no dimensions"),
    (lambda: F.nll_loss(tm.zeros(0, 3).int(), T(0)), IndexError,
     "Dimension specified as 0 but tensor has no dimensions"),
    (lambda: tm._cross_entropy_loss(T(1.15), T(0.5, dtype=tm.float64)), IndexError,
     "Dimension specified as 1 but tensor has no dimensions"),
    (lambda: tm._cross_entropy_loss(T(-37.8, dtype=tm.float64), tm.zeros(0), None, "sum"), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    (lambda: tm._cross_entropy_loss(T(0.96), T(1), None, "none"), RuntimeError,
     "Expected floating point type for target with class probabilities, got Long"),
    (lambda: tm._cross_entropy_loss(T(0.96), T(1.0), None, "mean", 1), RuntimeError,
     "ignore_index is not supported for floating point target"),
    (lambda: F.cross_entropy(tm.zeros(2, 3), tm.zeros(2, 3), T([1.0, 2])), RuntimeError,
     "cross_entropy: weight tensor should be defined either for all 3 classes or no classes but got weight "
     "tensor of shape: [2]"),
    (lambda: tm._cross_entropy_loss(tm.zeros(4, 3), T([1, 2, 1, 0]), T([2, 2, 2], dtype=tm.int8), "none"),
     RuntimeError, "expected scalar type Float but found Char"),
])
def test_nll_and_cross_entropy_check_in_pytorchs_order(call, kind, message):
    _raises(kind, message, call)


def test_nll_loss_of_a_1d_input_squeezes_a_one_element_target_and_its_backward_refuses_it():
    x = T([-1.0, -2, -3], requires_grad=True)
    loss = F.nll_loss(x, T([1]), T([1.0, 2, 3]), reduction="none")
    assert loss.shape == () and loss.item() == 4.0
    _raises(RuntimeError, "size mismatch (got input: [3], target: [1])", loss.backward)


def test_a_spatial_nll_loss_counts_its_weight():
    x = tm.zeros(2, 3, 2, requires_grad=True)
    F.nll_loss(x, T([[0, 1], [2, 2]]), T([[1.0, 2, 3]])).backward()
    third = 1 / 3
    assert [[round(v, 6) for v in row] for plane in x.grad.tolist() for row in plane] == [
        [-round(third / 3, 6), 0.0], [0.0, -round(2 * third / 3, 6)], [0.0, 0.0],
        [0.0, 0.0], [0.0, 0.0], [-round(third, 6), -round(third, 6)]]


@pytest.mark.parametrize("reduction, expected", [("mean", [1.757606]), ("sum", [3.515212]),
                                                 ("none", [1.107606, 2.407606])])
def test_cross_entropy_loss_op_takes_class_probabilities(reduction, expected):
    x = T([[1.0, 2, 3], [0, 1, 2]], requires_grad=True)
    target = T([[0.2, 0.3, 0.5], [1, 0, 0]])
    loss = tm._cross_entropy_loss(x, target, None, reduction)
    assert loss.dtype == tm.float32 and [round(v, 6) for v in loss.reshape(-1).tolist()] == expected
    assert type(loss.grad_fn).__name__ == ("DivBackward1" if reduction == "mean" else "NegBackward0")
    loss.sum().backward()
    # softmax(x) * sum(target) - target, per class vector
    softmax = [math.exp(v) / sum(math.exp(w) for w in (0, 1, 2)) for v in (0, 1, 2)]
    scale = 0.5 if reduction == "mean" else 1.0
    expected_grad = [[scale * (p - t) for p, t in zip(softmax, row)] for row in ([0.2, 0.3, 0.5], [1, 0, 0])]
    for got, want in zip(x.grad.tolist(), expected_grad):
        assert all(abs(g - w) < 1e-6 for g, w in zip(got, want))


def test_cross_entropy_with_probabilities_promotes_and_is_nan_for_nothing():
    weighted = tm._cross_entropy_loss(T([[1.0, 2, 3], [0, 1, 2]]), T([[0.2, 0.3, 0.5], [1, 0, 0]]),
                                      T([1.0, 2, 3], dtype=tm.float64), "none")
    assert weighted.dtype == tm.float64 and [round(v, 4) for v in weighted.tolist()] == [1.9375, 2.4076]
    assert math.isnan(tm._cross_entropy_loss(tm.zeros(0, 3), tm.zeros(0, 3)).item())
    meta = tm._cross_entropy_loss(tm.zeros(4, 3, device="meta"), tm.zeros(4, 3, dtype=tm.float64, device="meta"),
                                  None, "none")
    assert meta.shape == (4,) and meta.dtype == tm.float64


# -- binary cross entropy, huber ---------------------------------------------------------------------

def test_binary_cross_entropy_broadcasts_the_weight_as_torch_broadcast_shapes():
    x, t = T([[0.5, 0.9, 0.1], [0.9, 0.3, 0.4]]), T([[0.8, 0.4, 0.5], [0.02, 0.7, 0.5]])
    _raises(RuntimeError, "Attempting to broadcast a dimension of length 0 at -1! Mismatching argument at index 1 "
            "had tensormodes.Size([0]); but expected shape should be broadcastable to [2, 3]",
            lambda: F.binary_cross_entropy(x, t, tm.zeros(0), reduction="none"))
    _raises(RuntimeError, "result type ComplexDouble can't be cast to the desired output type Double",
            lambda: F.binary_cross_entropy(T([0.5]).double(), T([1.0]).double(), T([1 + 1j])))
    _raises(RuntimeError, "all elements of input should be between 0 and 1",
            lambda: F.binary_cross_entropy(T([1.5]).double(), T([1.0]).double(), T([1 + 1j])))


@pytest.mark.parametrize("input, target, message", [
    (tm.zeros(3, 4, dtype=tm.int64), tm.ones(2, 3, 4, dtype=tm.float64),
     "result type Double can't be cast to the desired output type Long"),
    (T(2), T([[-1.2, 0.3]], dtype=tm.float16), "result type Half can't be cast to the desired output type Long"),
    (tm.zeros(2, 3), tm.ones(2, 3, dtype=tm.complex64),
     "result type ComplexFloat can't be cast to the desired output type Float"),
])
def test_huber_loss_writes_into_an_input_like_result(input, target, message):
    _raises(RuntimeError, message, lambda: tm._huber_loss(input, target, "sum", 0.5))


# -- searchsorted, unique ----------------------------------------------------------------------------

@pytest.mark.parametrize("call, expected", [
    (lambda: tm.searchsorted(tm.zeros(2, 0), tm.zeros(2, 3)), [[0, 0, 0], [0, 0, 0]]),
    (lambda: tm.searchsorted(tm.zeros(0, 2), tm.zeros(0, 3, dtype=tm.bool)), []),
    (lambda: tm.searchsorted(T([[False, True, True], [True, False, False]]),
                             T([[0.42, 0.91], [0.17, 1.74]], dtype=tm.float64), side="right"), [[1, 1], [3, 3]]),
    (lambda: tm.searchsorted(tm.zeros(2, dtype=tm.bool), 1), 2),
    (lambda: tm.searchsorted(tm.zeros(2, dtype=tm.int32), 2**40), 0),  # the number wraps into int32
    (lambda: tm.searchsorted(tm.zeros(2, dtype=tm.uint8), -1), 2),
    (lambda: tm.searchsorted(tm.zeros(2, dtype=tm.complex64), tm.zeros(0)), []),
])
def test_searchsorted_computes_where_pytorch_does(call, expected):
    assert call().tolist() == expected


@pytest.mark.parametrize("call, message", [
    (lambda: tm.searchsorted(T(0.0), T(0.5), right=True),
     "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got "
     "boundaries tensor dim(0) and input value's dim(0) numel(1)"),
    (lambda: tm.searchsorted(T(0.0), T([0.5])),
     "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension"),
    (lambda: tm.searchsorted(tm.zeros(2), T([1.0]), sorter=T([0, 1], dtype=tm.int32)),
     "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype Int"),
    (lambda: tm.searchsorted(tm.zeros(2), T([1.0]), sorter=T([0, 2])),
     "torch.searchsorted(): sorter index out of range"),
])
def test_searchsorted_checks_in_pytorchs_order(call, message):
    _raises(RuntimeError, message, call)


@pytest.mark.parametrize("call, node, name", [
    (lambda x: tm.unique(x), "Unique2Backward0", "_unique2"),
    (lambda x: tm.unique(x, dim=0), "UniqueDimBackward0", "unique_dim"),
    (lambda x: tm.unique_consecutive(x, return_counts=True)[0], "UniqueConsecutiveBackward0", "unique_consecutive"),
])
def test_unique_records_a_node_whose_backward_is_not_implemented(call, node, name):
    result = call(T([1.0, 1, 2], requires_grad=True))
    assert result.requires_grad and type(result.grad_fn).__name__ == node
    _raises(NotImplementedError, f"the derivative for '{name}' is not implemented.", result.sum().backward)


def test_complex_unique_consecutive_along_a_dim_names_unique_dim():
    _raises(NotImplementedError, "\"unique_dim\" not implemented for 'ComplexFloat'",
            lambda: tm.unique_consecutive(T([[1 + 1j, 1, 2]]), dim=1))


# -- matrix norms over empty dimensions -------------------------------------------------------------

@pytest.mark.parametrize("shape, ord, requires_grad", [
    ((0, 3), INF, False), ((3, 0), 1, False), ((0, 3), 2, False), ((0, 0), 1, False),
    ((0, 3), 1, True), ((3, 0), -INF, True), ((0, 3), "nuc", True),
])
def test_matrix_norm_max_over_nothing_is_zero_without_history(shape, ord, requires_grad):
    x = tm.zeros(shape, requires_grad=True)
    result = tm.linalg.matrix_norm(x, ord)
    assert result.tolist() == 0.0 and result.requires_grad is requires_grad
    assert tm.linalg.norm(x, ord).requires_grad is requires_grad
    if requires_grad:
        result.backward()
        assert x.grad.shape == shape


@pytest.mark.parametrize("shape, ord, keepdim, message", [
    ((0, 3), -INF, False, "amin(): Expected reduction dim 0 to have non-zero size."),
    ((3, 0), -1, False, "amin(): Expected reduction dim 0 to have non-zero size."),
    ((3, 0), -1, True, "amin(): Expected reduction dim 1 to have non-zero size."),
    ((0, 3), -2, False, "amin(): Expected reduction dim -1 to have non-zero size."),
])
def test_matrix_norm_min_over_nothing_raises_pytorchs_index_error(shape, ord, keepdim, message):
    _raises(IndexError, message, lambda: tm.linalg.matrix_norm(tm.zeros(shape), ord, keepdim=keepdim))
    _raises(IndexError, message, lambda: tm.linalg.matrix_norm(tm.zeros(shape, device="meta"), ord, keepdim=keepdim))


# -- selections of nothing, autograd refusals, empty softmax, singular values ----------------------

def test_indexing_that_selects_nothing_checks_no_position():
    assert tm.zeros(2, 0)[T([2**63 - 1, -2])].shape == (2, 0)
    assert tm.zeros(2, 3)[T([5]), T([], dtype=tm.int64)].shape == (0,)
    assert tm.index_put(tm.zeros(2, 3), [T([5]), T([], dtype=tm.int64)], tm.zeros(0)).tolist() == [[0.0] * 3] * 2
    _raises(IndexError, "index is out of bounds for dimension with size 0", lambda: tm.zeros(2, 0)[:, T([5])])
    _raises(IndexError, "index is out of bounds for dimension with size 0",
            lambda: tm.zeros(2, 0, device="meta")[:, T([5], device="meta")])


@pytest.mark.parametrize("call, message", [
    (lambda v: tm.index_put(tm.zeros(2, 3, dtype=tm.int8), [T([False, True])], v), "Autograd not support dtype: Char"),
    (lambda v: tm.index_put(tm.zeros(2, 3, dtype=tm.bool), [T([False, True])], v), "Autograd not support dtype: Bool"),
    (lambda v: tm.masked_fill(tm.zeros(2, 3, dtype=tm.int32), T(True), v), "Autograd not support dtype: Int"),
    (lambda v: tm.index_fill(tm.zeros(2, 3, dtype=tm.int32), 0, T(0), v), "Autograd not support dtype: Int"),
    (lambda v: tm._soft_margin_loss(v.to(tm.complex64).reshape(1), T([1.0])),
     "soft_margin_loss does not support automatic differentiation for outputs with complex dtype."),
    (lambda v: tm._binary_cross_entropy_with_logits(v.reshape(1), T([1 + 1j])),
     "binary_cross_entropy_with_logits does not support automatic differentiation for outputs with complex dtype."),
])
def test_results_autograd_cannot_hold_are_refused(call, message):
    _raises(RuntimeError, message, lambda: call(T(1.5, requires_grad=True)))
    assert not call(T(1.5)).requires_grad  # computed when nothing requires grad


@pytest.mark.parametrize("loss", [tm._mse_loss, tm._smooth_l1_loss])
def test_loss_gradients_take_a_bool_operand(loss):
    target = T([1.0, 0.0], requires_grad=True)
    loss(T([True, False]), target, "sum").backward()
    assert target.grad.tolist() == [0.0, 0.0]


def test_soft_margin_gradient_refuses_a_bool_target_as_pytorchs():
    x = T([1.0, 0.0], requires_grad=True)
    loss = tm._soft_margin_loss(x, T([True, False]), "sum")
    _raises(RuntimeError, "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.", loss.backward)


@pytest.mark.parametrize("weight, indices, kind, message", [
    (tm.zeros(0, 3), T(3), RuntimeError, "index_select(): self indexing axis dim should be positive"),
    (tm.zeros(2, 0), T(3), RuntimeError, "INDICES element is out of DATA bounds, id=3 axis_dim=2"),
    (tm.zeros(2, 3), T([[3]]), IndexError, "index out of range in self"),
])
def test_embedding_out_of_range_raises_index_selects_errors(weight, indices, kind, message):
    _raises(kind, message, lambda: tm.embedding(weight, indices))


@pytest.mark.parametrize("call, dtype", [
    (lambda: tm.log_softmax(tm.zeros(0, 3, dtype=tm.bool), 1), tm.bool),
    (lambda: tm.softmax(tm.zeros(0, 3, dtype=tm.int64), 1), tm.int64),
    (lambda: tm.log_softmax(tm.zeros(0, 3, dtype=tm.complex64), 1), tm.complex64),
])
def test_softmax_of_nothing_is_empty_in_any_dtype(call, dtype):
    result = call()
    assert result.dtype == dtype and result.shape == (0, 3)


@pytest.mark.parametrize("A, ord, message", [
    (T([[1.0, 2], [3, math.nan]]), 2, "linalg.svd: The algorithm failed to converge because the input matrix "
                                      "contained non-finite values."),
    (T([[[1.0, 2], [3, INF]], [[1.0, 2], [3, math.nan]]]), -2, "linalg.svd: (Batch element 1): The algorithm "
     "failed to converge because the input matrix contained non-finite values."),
    (T([[1.0, 2], [3, math.nan]]), "nuc", "linalg.svd: The algorithm failed to converge because the input matrix "
                                          "contained non-finite values."),
])
def test_matrix_norms_from_singular_values_refuse_nan(A, ord, message):
    _raises(tm.linalg.LinAlgError, message, lambda: tm.linalg.matrix_norm(A, ord))
    assert math.isnan(tm.linalg.matrix_norm(T([[1.0, 2], [3, INF]]), ord).item())


def test_index_add_with_an_int32_index_words_its_error_as_pytorchs_slice_loop():
    _raises(IndexError, "index out of range in self",
            lambda: tm.index_add(tm.zeros(2, 3), 1, T([-2**31, 0], dtype=tm.int32), tm.zeros(2, 2)))
    _raises(RuntimeError, "index 5 is out of bounds for dimension 1 with size 3",
            lambda: tm.index_add(tm.zeros(2, 3), 1, T([5, 0]), tm.zeros(2, 2)))


def test_logits_loss_subtracts_one_from_pos_weight_in_its_own_dtype():
    # int8: -128 - 1 wraps to 127, as in PyTorch's kernel; a bool pos_weight cannot be subtracted from
    x, t = T([[-0.7246331572532654, 0.5]]), T([[0.6425691843032837, 0.25]])
    loss = tm._binary_cross_entropy_with_logits(x, t, None, T([-128, 1], dtype=tm.int8), "none")
    assert [round(v, 4) for v in loss.tolist()[0]] == [92.2363, 0.8491]
    _raises(RuntimeError, "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.",
            lambda: tm._binary_cross_entropy_with_logits(x, t, None, T([True, False]), "none"))


# -- embedding_bag ------------------------------------------------------------------------------

@pytest.mark.parametrize("indices, offsets, options, kind, message", [
    (T(1), T([], dtype=tm.int64), {}, RuntimeError, "input has to be a 1D or 2D Tensor, but got Tensor of dimension 0"),
    (T([[1, 2]]), T(0), {}, IndexError, "Dimension specified as 0 but tensor has no dimensions"),
    (T([1, 3, 4]), T([0.0]).half(), {}, RuntimeError, "Expected tensor for argument #1 'indices' to have one of the "
     "following scalar types: Long, Int; but got torch.HalfTensor instead (while checking arguments for "
     "embedding_bag)"),
    (T([1, 2]), T([1]), {}, RuntimeError, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
     "start from position 0. However, got 1\n[ torch.LongTensor{} ]"),
    (T([1, 7]), T([0, 3]), {}, RuntimeError, "offsets[-1] can not be greater than input's length 2 but got "
     "offsets[-1] of 3"),
    (T([1, 2]), T([], dtype=tm.int64), {"include_last_offset": True}, RuntimeError,
     "include_last_offset: number of offset should be at least 1"),
    (T([1, 2]), T([0]), {"padding_idx": -7}, RuntimeError,
     "padding_idx must be within the number of embeddings, -5 through 4, but got -7"),
])
def test_embedding_bag_checks_in_pytorchs_order(indices, offsets, options, kind, message):
    _raises(kind, message, lambda: tm._embedding_bag(tm.zeros(5, 3), indices, offsets, **options))


def test_embedding_bag_reads_indices_promoted_with_the_offsets():
    weight = tm.arange(15.0).reshape(5, 3).requires_grad_()
    result = tm._embedding_bag(weight, T([True, False, True]), T([0, 1]), mode=1)
    assert result.tolist() == [[3.0, 4.0, 5.0], [1.5, 2.5, 3.5]]
    result.sum().backward()
    assert weight.grad.tolist() == [[0.5] * 3, [1.5] * 3, [0.0] * 3, [0.0] * 3, [0.0] * 3]
    assert tm._embedding_bag(tm.arange(15.0).reshape(5, 3), T([1, 3, 4, 1], dtype=tm.int8), T([0, 2])).tolist() == [
        [12.0, 14.0, 16.0], [15.0, 17.0, 19.0]]


@pytest.mark.parametrize("input, dim, index, source, kind, message", [
    (T([0, -1, 1, 0]), -1, T(2), T(2), RuntimeError, "source tensor shape must match self tensor shape, excluding "
     "the specified dimension. Got self.shape = [4] source.shape = []"),
    (T(0), 0, T([0, 0]), T([1, 2]), RuntimeError, "source tensor shape must match self tensor shape, excluding the "
     "specified dimension. Got self.shape = [] source.shape = [2]"),
    (T([0, -1, 1, 0]), -1, T([2, 1]), T(2), IndexError, "Dimension specified as 0 but tensor has no dimensions"),
    (tm.zeros(3), 0, T([0]), tm.zeros(1, 1), RuntimeError, "source tensor shape must match self tensor shape, "
     "excluding the specified dimension. Got self.shape = [3] source.shape = [1, 1]"),
])
def test_index_add_compares_shapes_as_pytorch(input, dim, index, source, kind, message):
    _raises(kind, message, lambda: tm.index_add(input, dim, index, source))
    assert tm.index_add(T(0), -1, T([0]), T(1)).item() == 1  # two 0-dim tensors: one position


def test_index_fill_value_gradient_selects_each_filled_slice_once_as_pytorch():
    x, v = tm.zeros(3, 2, requires_grad=True), T(2.0, requires_grad=True)
    x.index_fill(0, T([1, 1, 2]), v).sum().backward()
    assert v.grad.item() == 4.0 and x.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]
    v = T(2.0, requires_grad=True)
    loss = tm.zeros(3, 2).index_fill(0, T([-1, 1]), v).sum()  # the forward takes -1; the backward does not
    _raises(IndexError, "index out of range in self", loss.backward)

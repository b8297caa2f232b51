"""Reductions, statistics, norms, sorts and scans: exact values, dtypes, errors and
edge cases (empty tensors, 0-dim, negative and tuple dims, keepdim), with PyTorch
as the oracle for the cases marked ``torch``."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensormodes as tm
from tensormodes._ops.reduction import RETURN_TYPES

nan, inf = float("nan"), float("inf")


def values(t):
    return t._data


# -- named tuples ----------------------------------------------------------------------

def test_return_types_are_named_like_pytorchs():
    assert {"max", "min", "sort", "topk", "median", "aminmax", "linalg_svd", "cummax"} <= set(RETURN_TYPES)
    for name, cls in RETURN_TYPES.items():
        assert cls.__name__ == name
        assert cls.__module__ == "tensormodes.return_types"
        assert issubclass(cls, tuple)
    assert RETURN_TYPES["aminmax"]._fields == ("min", "max")
    assert RETURN_TYPES["sort"]._fields == ("values", "indices")
    assert RETURN_TYPES["linalg_svd"]._fields == ("U", "S", "Vh")


@pytest.mark.torch
def test_return_types_have_pytorchs_fields():
    import torch

    for name, cls in RETURN_TYPES.items():
        theirs = getattr(torch.return_types, name)(tuple(range(len(cls._fields))))
        assert all(getattr(theirs, field) == i for i, field in enumerate(cls._fields)), name


def test_named_tuple_results_unpack_index_and_print():
    result = tm.tensor([[1, 5, 2], [7, 0, 7]]).max(dim=1)
    assert type(result) is RETURN_TYPES["max"]
    assert isinstance(result.values, tm.Tensor) and isinstance(result.indices, tm.Tensor)
    v, i = result
    assert v.tolist() == result[0].tolist() == [5, 7]
    assert i.tolist() == result.indices.tolist() == [1, 0]
    assert repr(result) == "tensormodes.return_types.max(\nvalues=tensor([5, 7]),\nindices=tensor([1, 0]))"
    low_high = tm.aminmax(tm.tensor([3, 1, 2]))
    assert (low_high.min.item(), low_high.max.item()) == (1, 3)
    assert repr(low_high).startswith("tensormodes.return_types.aminmax(\nmin=")


# -- sums, means, products ---------------------------------------------------------------

def test_sum_dtypes():
    assert tm.tensor([1, 2], dtype=tm.int8).sum().dtype is tm.int64
    assert tm.tensor([True, True, False]).sum().item() == 2
    assert tm.tensor([True]).sum().dtype is tm.int64
    assert tm.tensor([1., 2.], dtype=tm.float16).sum().dtype is tm.float16
    assert tm.tensor([100, 100], dtype=tm.int8).sum(dtype=tm.int8).item() == -56  # wraps like PyTorch
    assert tm.tensor([0.6, 0.6]).sum(dtype=tm.int32).item() == 0  # cast first, then sum
    assert tm.tensor([1, 3], dtype=tm.int32).sum(dtype=tm.bool).item() is True


def test_sum_of_nothing_is_zero_and_empty_dims_reduce_everything():
    assert tm.zeros(0, 3).sum().item() == 0
    assert tm.zeros(0, 3).sum(0).tolist() == [0, 0, 0]
    x = tm.tensor([[1., 2.], [3., 4.]])
    assert x.sum(()).item() == x.sum([]).item() == 10
    assert x.sum((), True).shape == (1, 1)
    assert x.sum(None, True).shape == (1, 1)


def test_float16_sums_accumulate_in_float32():
    # 60000 + 60000 overflows float16; PyTorch's float32 accumulator does not.
    x = tm.tensor([60000., 60000., -60000.], dtype=tm.float16)
    assert x.sum().item() == 60000
    assert x.mean().item() == 20000
    assert math.isinf(x.cumsum(0).tolist()[1])  # scans round each partial sum


def test_dims_negative_tuple_keepdim():
    x = tm.ones(2, 3, 4)
    assert x.sum(-1).shape == (2, 3)
    assert x.sum((0, -1)).tolist() == [8., 8., 8.]
    assert x.sum((2, 0), keepdim=True).shape == (1, 3, 1)
    assert x.mean(dim=[1]).shape == (2, 4)


def test_dim_errors():
    x = tm.ones(2, 3)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        x.sum(2)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        x.sum((0, -2))
    with pytest.raises(TypeError, match="must be tuple of ints, not float"):
        x.amax(1.5)
    with pytest.raises(TypeError, match="must be tuple of ints, but found element of type float at pos 0"):
        x.sum((0.5,))
    with pytest.raises(TypeError, match="must be int, not tuple"):
        x.prod((0, 1))
    with pytest.raises(TypeError):
        x.prod(keepdim=True)


def test_zero_dim_inputs_accept_dim_0_and_minus_1():
    s = tm.tensor(3.)
    for dim in (0, -1):
        assert s.sum(dim).item() == 3 and s.sum(dim, keepdim=True).shape == ()
    assert s.cumsum(0).item() == 3
    values_, index = s.max(0)
    assert (values_.item(), index.item(), index.dtype) == (3., 0, tm.int64)
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
        s.sum(1)


def test_mean_needs_a_floating_dtype():
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype. Input dtype must be either a "
                                           "floating point or complex dtype. Got: Long"):
        tm.tensor([1, 2]).mean()
    with pytest.raises(RuntimeError, match="Optional dtype must be either a floating point or complex dtype. Got: Int"):
        tm.tensor([1., 2.]).mean(dtype=tm.int32)
    assert tm.tensor([1, 2]).mean(dtype=tm.float64).item() == 1.5
    assert math.isnan(tm.zeros(0).mean().item())
    assert tm.tensor([1 + 1j, 3 + 1j]).mean().dtype is tm.complex64


def test_prod_and_nansum():
    assert tm.tensor([[1, 2], [3, 4]], dtype=tm.int32).prod().dtype is tm.int64
    assert tm.tensor([[1, 2], [3, 4]]).prod(0, keepdim=True).tolist() == [[3, 8]]
    assert tm.tensor([2, 3], dtype=tm.int32).prod(dtype=tm.int32).dtype is tm.int32
    assert tm.zeros(0).prod().item() == 1
    assert tm.nansum(tm.tensor([1., nan, 2.])).item() == 3
    assert tm.nansum(tm.tensor([[nan, nan]]), 1).tolist() == [0.]
    with pytest.raises(RuntimeError, match="nansum on CPU does not support complex inputs"):
        tm.nansum(tm.tensor([1j]))


def test_cumsum_cumprod():
    assert tm.tensor([1, 2, 3], dtype=tm.int32).cumsum(0).dtype is tm.int64
    assert tm.tensor([True, True]).cumsum(0).tolist() == [1, 2]
    assert tm.tensor([[1, 2], [3, 4]]).cumprod(dim=-1).tolist() == [[1, 2], [3, 12]]
    assert tm.tensor([1, 2]).cumsum(0, dtype=tm.float16).dtype is tm.float16
    assert tm.zeros(0, 3).cumsum(1).shape == (0, 3)
    with pytest.raises(NotImplementedError, match='"cumsum_out_cpu" not implemented for \'Bool\''):
        tm.tensor([1., 2.]).cumsum(0, dtype=tm.bool)
    with pytest.raises(TypeError, match="must be int, not NoneType"):
        tm.tensor([1., 2.]).cumsum(None)


def test_cummax_cummin_take_the_latest_index_and_keep_nan():
    x = tm.tensor([1.0, 3.0, 3.0, 2.0, nan, 5.0, nan])
    top = tm.cummax(x, 0)
    assert np.isnan(values(top.values)[4:]).all() and top.values.tolist()[:4] == [1.0, 3.0, 3.0, 3.0]
    assert top.indices.tolist() == [0, 1, 2, 2, 4, 4, 6]
    assert tm.cummin(tm.tensor([[2, 1, 1], [0, 5, -1]]), 1).indices.tolist() == [[0, 1, 2], [0, 0, 2]]
    with pytest.raises(NotImplementedError, match='"cummax_cpu" not implemented for \'ComplexFloat\''):
        tm.cummax(tm.tensor([1j]), 0)
    x = tm.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    tm.cummax(x, 0).values.backward(tm.tensor([1.0, 2.0, 4.0, 8.0]))
    assert x.grad.tolist() == [1.0, 2.0, 12.0, 0.0]
    with pytest.raises(RuntimeError, match="^cummin does not support automatic differentiation for outputs with "
                                           "complex dtype.$"):
        tm.cummin(tm.tensor(1j, requires_grad=True), 0)


def test_logcumsumexp_is_stable():
    assert tm.logcumsumexp(tm.tensor([1000.0, 1000.0], dtype=tm.float64), 0).tolist() == \
        [1000.0, 1000.0 + math.log(2)]
    assert tm.logcumsumexp(tm.tensor([-inf, -inf, 0.0]), 0).tolist() == [-inf, -inf, 0.0]
    x = tm.tensor([800.0, 1.0, 801.0], dtype=tm.float64, requires_grad=True)
    tm.logcumsumexp(x, 0).sum().backward()  # exp(x_j) * sum over i >= j of exp(-result_i): no overflow
    assert tm.autograd.gradcheck(lambda t: tm.logcumsumexp(t, 0), (x,))
    assert np.isfinite(values(x.grad)).all()
    with pytest.raises(NotImplementedError, match='"logcumsumexp_out_cpu" not implemented for \'Long\''):
        tm.logcumsumexp(tm.tensor([1, 2]), 0)


def test_cumsum_in_place_keeps_the_tensor_and_its_dtype():
    x = tm.tensor([1, 2, 3], dtype=tm.int32)
    assert x.cumsum_(0) is x
    assert x.tolist() == [1, 3, 6] and x.dtype is tm.int32
    y = tm.tensor([1., 2., 3.])
    y.cumprod_(0)
    assert y.tolist() == [1., 2., 6.]


# -- all, any, count_nonzero -----------------------------------------------------------

def test_all_any():
    x = tm.tensor([[True, False], [True, True]])
    assert x.all().item() is False and x.any().item() is True
    assert x.all(1).tolist() == [False, True]
    assert tm.tensor([1., nan]).all().item() is True  # NaN is nonzero
    assert tm.zeros(0).all().item() is True and tm.zeros(0).any().item() is False
    u = tm.tensor([1, 0, 2], dtype=tm.uint8)
    assert u.all().dtype is tm.uint8 and u.any(0).tolist() == 1
    assert tm.tensor([1, 2]).all().dtype is tm.bool
    # An empty dim list tests each element (sum would reduce everything).
    assert tm.tensor([[0., 2.]]).any(()).tolist() == [[False, True]]
    assert tm.tensor([[0., 2.]]).all(None, True).shape == (1, 1)


def test_count_nonzero():
    x = tm.tensor([[0, 1, 2], [3, 0, 0]])
    assert tm.count_nonzero(x).item() == 3 and tm.count_nonzero(x).dtype is tm.int64
    assert x.count_nonzero(1).tolist() == [2, 1]
    assert x.count_nonzero((0, 1)).item() == 3
    assert tm.count_nonzero(tm.tensor([0., -0., nan])).item() == 1


# -- extrema ----------------------------------------------------------------------------

def test_max_min_overloads():
    x = tm.tensor([[1, 5, 2], [7, 0, 7]])
    assert x.max().item() == 7 and x.min().item() == 0
    assert tm.max(x, 1).indices.tolist() == [1, 0]  # the first of equal maxima
    assert tm.min(x, 0, keepdim=True).values.tolist() == [[1, 0, 2]]
    other = tm.tensor([3., 3., 3.])
    assert tm.max(x, other).dtype is tm.float32  # PyTorch promotion
    assert tm.max(x, other).tolist() == [[3., 5., 3.], [7., 3., 7.]]
    assert x.min(tm.tensor(1)).tolist() == [[1, 1, 1], [1, 0, 1]]


def test_extrema_propagate_nan():
    x = tm.tensor([1., nan, 3., nan])
    assert math.isnan(x.max().item()) and math.isnan(x.amin().item())
    assert x.max(0).indices.item() == 1 and x.argmin().item() == 1
    assert math.isnan(tm.max(tm.tensor([1.]), tm.tensor([nan])).item())
    assert math.isnan(tm.aminmax(x).min.item())


def test_max_reads_the_value_at_its_index():
    result = tm.tensor([-0., 0.]).max(0)
    assert result.indices.item() == 0 and math.copysign(1, result.values.item()) == -1


def test_extrema_of_nothing_raise():
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0"):
        tm.zeros(0, 3).max()
    with pytest.raises(IndexError, match=r"min\(\): Expected reduction dim 0 to have non-zero size."):
        tm.zeros(0, 3).min(0)
    assert tm.zeros(0, 3).max(1).values.shape == (0,)
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim -2 to have non-zero size."):
        tm.zeros(0, 3).amax(-2)
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified"):
        tm.zeros(0).argmax()
    with pytest.raises(RuntimeError, match="aminmax\\(\\): cannot compute aminmax over an empty dimension"):
        tm.aminmax(tm.zeros(0))


def test_extrema_type_errors():
    c = tm.tensor([1j, 2])
    with pytest.raises(NotImplementedError, match='"max_all" not implemented for \'ComplexFloat\''):
        c.max()
    with pytest.raises(RuntimeError, match="max\\(\\): does not support complex input"):
        c.max(0)
    with pytest.raises(RuntimeError, match="maximum not implemented for complex tensors."):
        tm.max(c, c)
    with pytest.raises(RuntimeError, match="argmax\\(\\): does not support bool input"):
        tm.tensor([True]).argmax()
    with pytest.raises(TypeError, match="received an invalid combination of arguments - got \\(Tensor, float\\)"):
        tm.tensor([1.]).max(1.5)
    with pytest.raises(TypeError):
        tm.tensor([1.]).max(keepdim=True)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        tm.max(tm.ones(2, 3), tm.ones(3, 2))


def test_argmax_argmin():
    x = tm.tensor([[1, 5, 2], [7, 0, 7]])
    assert x.argmax().item() == 3 and x.argmax().dtype is tm.int64
    assert x.argmax(keepdim=True).shape == (1, 1)
    assert x.argmin(dim=0).tolist() == [0, 1, 0]
    assert x.argmax(1, keepdim=True).tolist() == [[1], [0]]


def test_amax_amin():
    x = tm.tensor([[1, 5, 2], [7, 0, 3]])
    assert x.amax().item() == 7 and x.amax(()).item() == 7
    assert x.amin((0, 1), keepdim=True).tolist() == [[0]]
    assert x.amax(-1).tolist() == [5, 7]


# -- statistics -------------------------------------------------------------------------

def test_var_std_corrections():
    x = tm.tensor([[1., 2.], [3., 5.]])
    assert x.var(1).tolist() == [0.5, 2.0]
    assert x.var(1, correction=0).tolist() == [0.25, 1.0]
    assert x.var(1, False).tolist() == [0.25, 1.0]  # legacy positional ``unbiased``
    assert x.var(1, unbiased=False, keepdim=True).shape == (2, 1)
    assert x.var(False).item() == pytest.approx(np.var([1, 2, 3, 5]))  # ``var(x, unbiased)``
    assert tm.std(tm.tensor([1., 3., 5.])).item() == 2
    assert tm.std(tm.tensor([1 + 1j, 2.])).dtype is tm.float32
    with pytest.raises(TypeError):
        x.var(1, True, correction=0)
    with pytest.raises(TypeError):
        x.var(True, True)


def test_var_needs_floats_and_warns_without_degrees_of_freedom():
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        tm.tensor([1, 2]).var()
    with pytest.raises(RuntimeError, match="std_mean only support floating point and complex dtypes"):
        tm.std_mean(tm.tensor([1, 2]))
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        assert math.isnan(tm.tensor([1.]).var().item())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isinf(tm.tensor([1., 2.]).var(correction=3).item())
        assert math.isnan(tm.zeros(0).std().item())


def test_std_mean_var_mean():
    v, m = tm.var_mean(tm.tensor([1., 3., 5.]))
    assert (v.item(), m.item()) == (4.0, 3.0)
    s, m = tm.std_mean(tm.tensor([[1., 3.], [2., 2.]]), 1, keepdim=True)
    assert s.shape == m.shape == (2, 1)
    v, m = tm.var_mean(tm.tensor([1 + 1j, 2]))
    assert v.dtype is tm.float32 and m.dtype is tm.complex64
    # float16 statistics are rounded once, at the end.
    assert tm.tensor([300., -300.], dtype=tm.float16).std().item() == pytest.approx(424.25, rel=1e-3)


def test_logsumexp_is_stable():
    assert tm.logsumexp(tm.tensor([1000., 1000.]), 0).item() == pytest.approx(1000 + math.log(2))
    assert tm.logsumexp(tm.tensor([-1000., -1000.]), 0).item() == pytest.approx(-1000 + math.log(2))
    assert tm.logsumexp(tm.tensor([-inf, -inf]), 0).item() == -inf
    assert tm.logsumexp(tm.tensor([inf, -inf]), 0).item() == inf
    assert math.isnan(tm.logsumexp(tm.tensor([nan, 1.]), 0).item())
    assert tm.logsumexp(tm.zeros(0, 2), 0).tolist() == [-inf, -inf]
    assert tm.logsumexp(tm.tensor([1, 2]), 0).dtype is tm.float32
    assert tm.tensor([[0., 0.]]).logsumexp((0, 1), keepdim=True).shape == (1, 1)


# -- norms ------------------------------------------------------------------------------

def test_norm_orders():
    x = tm.tensor([[3., -4.], [0., 0.]])
    assert x.norm().item() == 5
    assert x.norm(1).item() == 7 and x.norm(inf).item() == 4 and x.norm(-inf).item() == 0
    assert x.norm(0).item() == 2
    assert x.norm(None, 1).tolist() == [5., 0.]
    assert x.norm("fro", (0, 1)).item() == 5
    assert x.norm("nuc").item() == pytest.approx(5)
    assert tm.tensor([3 + 4j]).norm().dtype is tm.float32
    assert x.norm(dtype=tm.float64).dtype is tm.float64
    assert tm.ones(2, 3, 4).norm("nuc", (2, 0), keepdim=True).shape == (1, 3, 1)


def test_norm_errors():
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex tensor as input. "
                                           "Got Long"):
        tm.tensor([1, 2]).norm()
    with pytest.raises(RuntimeError, match="should be convertible without narrowing to the specified dtype \\(Half\\)"):
        tm.tensor([1., 2.]).norm(dtype=tm.float16)
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2"):
        tm.ones(2, 2, 2).norm("nuc")
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order abc not supported."):
        tm.ones(2, 2).norm("abc")
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        tm.zeros(0).norm(inf)


# -- sorting and selection -------------------------------------------------------------

def test_sort_is_stable_both_ways():
    x = tm.tensor([2, 1, 2, 1, 2])
    assert x.sort().indices.tolist() == [1, 3, 0, 2, 4]
    assert x.sort(descending=True).indices.tolist() == [0, 2, 4, 1, 3]
    assert x.argsort(descending=True, stable=True).tolist() == [0, 2, 4, 1, 3]


def test_sort_puts_nan_last_ascending_and_first_descending():
    x = tm.tensor([1., nan, 0., -inf])
    assert x.sort().indices.tolist() == [3, 2, 0, 1]
    assert x.sort(descending=True).indices.tolist() == [1, 0, 2, 3]
    b = tm.tensor([1., nan, 0.], dtype=tm.bfloat16)
    assert b.sort().indices.tolist() == [2, 0, 1]


def test_sort_shapes_and_errors():
    x = tm.tensor([[3., 1.], [0., 2.]])
    assert x.sort(0).values.tolist() == [[0., 1.], [3., 2.]]
    assert tm.tensor(3.).sort().indices.shape == ()
    with pytest.raises(RuntimeError, match="Sort does not support complex dtypes on CPU"):
        tm.tensor([1j]).sort()


def test_topk():
    x = tm.tensor([1, 9, 4, 7])
    top = x.topk(2)
    assert top.values.tolist() == [9, 7] and top.indices.tolist() == [1, 3]
    assert x.topk(2, largest=False).values.tolist() == [1, 4]
    assert x.topk(0).values.shape == (0,)
    assert tm.tensor([3., nan, 2.]).topk(1).indices.tolist() == [1]  # NaN is the largest
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(5)
    with pytest.raises(RuntimeError, match="topk does not support bool dtypes on CPU"):
        tm.tensor([True]).topk(1)


def test_median():
    assert tm.tensor([4, 1, 3, 2]).median().item() == 2  # the lower middle element
    assert math.isnan(tm.tensor([1., nan, 2.]).median().item())
    result = tm.tensor([[3., nan, 1., nan], [1., 2., 3., 4.]]).median(1)
    assert math.isnan(result.values.tolist()[0]) and result.indices.tolist() == [1, 1]
    assert tm.tensor([[4, 1, 3], [2, 9, 6]]).median(0, keepdim=True).values.shape == (1, 3)
    assert math.isnan(tm.zeros(0).median().item())
    with pytest.raises(IndexError, match="median\\(\\): Expected reduction dim 1 to have non-zero size."):
        tm.zeros(2, 0).median(-1)
    with pytest.raises(NotImplementedError, match='"median_cpu" not implemented for \'Bool\''):
        tm.tensor([True]).median()


# -- out= and aliasing ------------------------------------------------------------------

def test_out_arguments():
    out = tm.zeros(2)
    assert tm.sum(tm.tensor([[1., 2.], [3., 4.]]), 1, out=out) is out
    assert out.tolist() == [3., 7.]
    values_, indices = tm.zeros(2), tm.zeros(2, dtype=tm.int64)
    result = tm.max(tm.tensor([[1., 2.], [4., 3.]]), 1, out=(values_, indices))
    assert result.values is values_ and indices.tolist() == [1, 0]
    sorted_, order = tm.zeros(3), tm.zeros(3, dtype=tm.int64)
    tm.sort(tm.tensor([3., 1., 2.]), out=(sorted_, order))
    assert sorted_.tolist() == [1., 2., 3.] and order.tolist() == [1, 2, 0]


def test_results_never_alias_the_input():
    s = tm.tensor(3.)
    for result in (s.max(0).values, s.sort().values, s.median(0).values, s.topk(1).values, s.cumsum(0)):
        assert not np.shares_memory(values(result), values(s))


# -- rules over all inputs (hypothesis) ----------------------------------------------

_floats = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
                     elements=st.floats(-100, 100))


@st.composite
def arrays_and_dims(draw):
    array = draw(_floats)
    dims = draw(st.lists(st.integers(-array.ndim, array.ndim - 1), unique_by=lambda d: d % array.ndim,
                         max_size=array.ndim))
    return array, tuple(dims), draw(st.booleans())


@settings(max_examples=60, deadline=None)
@given(arrays_and_dims())
def test_reductions_agree_with_numpy_and_keepdim(case):
    array, dims, keepdim = case
    x = tm.tensor(array)
    axis = tuple(d % array.ndim for d in dims) or None
    for ours, reference in ((x.sum(dims, keepdim), np.sum(array, axis, keepdims=keepdim)),
                            (x.mean(dims, keepdim), np.mean(array, axis, keepdims=keepdim)),
                            (x.amax(dims, keepdim), np.max(array, axis, keepdims=keepdim)),
                            (x.amin(dims, keepdim), np.min(array, axis, keepdims=keepdim))):
        assert ours.dtype is tm.float64
        assert ours.shape == np.shape(reference)
        np.testing.assert_allclose(values(ours), reference, rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=6),
                  elements=st.integers(-3, 3)), st.booleans())
def test_sort_orders_stably_and_permutes(array, descending):
    x = tm.tensor(array)
    result = x.sort(-1, descending)
    sorted_, order = values(result.values), values(result.indices)
    assert order.dtype == np.int64
    np.testing.assert_array_equal(np.take_along_axis(array, order, -1), sorted_)
    np.testing.assert_array_equal(np.sort(order, -1), np.broadcast_to(np.arange(array.shape[-1]), array.shape))
    steps = np.diff(sorted_, axis=-1)
    assert (steps <= 0).all() if descending else (steps >= 0).all()
    # Equal values keep their original order.
    assert (np.diff(order, axis=-1)[steps == 0] > 0).all()
    k = array.shape[-1] // 2
    top = x.topk(k, largest=descending)
    np.testing.assert_array_equal(values(top.values), sorted_[..., :k])


@settings(max_examples=60, deadline=None)
@given(_floats, st.integers(0, 2))
def test_std_is_the_root_of_var_and_var_is_numpys(array, correction):
    x = tm.tensor(array)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        var = values(x.var(-1, correction=correction))
        std = values(x.std(-1, correction=correction))
        expected = np.var(array, -1, ddof=correction) if array.shape[-1] > correction else None
    np.testing.assert_allclose(std ** 2, var, rtol=1e-9, atol=1e-9)
    if expected is not None:
        np.testing.assert_allclose(var, expected, rtol=1e-9, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(_floats)
def test_extreme_indices_point_at_extreme_values(array):
    x = tm.tensor(array)
    result = x.max(-1)
    np.testing.assert_array_equal(values(result.values), array.max(-1))
    np.testing.assert_array_equal(values(result.indices), array.argmax(-1))
    np.testing.assert_allclose(values(x.logsumexp(-1)), np.log(np.exp(array).sum(-1)), rtol=1e-9, atol=1e-12)
    assert x.argmin().item() == array.argmin()


# -- PyTorch as the oracle -------------------------------------------------------------

# Expressions run with ``lib`` bound to tensormodes and to torch, on the same
# inputs; values, dtypes and shapes (or error types and messages) must agree.
TORCH_CASES = """
lib.sum(i32, 0)
lib.sum(h)
lib.sum(bf, 1)
lib.sum(c, 0)
lib.sum(e2, 1, True)
lib.sum(s, -1, True)
lib.sum(f, (0, -2))
lib.sum(i32, dtype=lib.bool)
lib.sum(f3, (-1, 0), True)
lib.nansum(fn, 0, True)
lib.nansum(h, dtype=lib.float64)
lib.mean(b)
lib.mean(i, dtype=lib.int64)
lib.mean(bf, 0)
lib.mean(e, 0)
lib.mean(f, 5)
lib.prod(u)
lib.prod(e, 0)
lib.prod(i, dtype=lib.float32)
lib.max(u)
lib.max(bf)
lib.max(fn)
lib.max(f, -1, True)
lib.max(bf, 1)
lib.max(c, 0)
lib.max(e, 0)
lib.max(e2, -1)
lib.max(s, -1, True)
lib.max(i, lib.tensor(2.5))
lib.max(u, lib.tensor(-1, dtype=lib.int8))
lib.max(i32, lib.tensor(7))
lib.max(b, lib.tensor([1, 2, 3]))
lib.min(fn, lib.tensor([0., 0, 0, 0]))
lib.min(c)
lib.amax(f3, (0, 2))
lib.amax(c)
lib.amax(e, -2)
lib.amax(e2, (0, 1))
lib.amin(fn, 0)
lib.argmax(f, None, True)
lib.argmin(lib.tensor([1., nan, 0]))
lib.argmax(bf, 0)
lib.argmax(c)
lib.argmax(e, 0)
lib.argmax(s, 0, True)
lib.aminmax(f, dim=-1, keepdim=True)
lib.aminmax(c)
lib.aminmax(e2, dim=-1)
lib.aminmax(s, dim=0, keepdim=True)
lib.var(f, (0, 1), False, True)
lib.var(f, True)
lib.var(f, 0, correction=2)
lib.var(f, correction=0.5)
lib.var(f, correction=7)
lib.var(f, correction=-1)
lib.var(f, dim=(), keepdim=True)
lib.var(b)
lib.var(bf, 0)
lib.var(e, 1)
lib.var(s, 0)
lib.std(c, 1)
lib.std(lib.tensor([300., -300], dtype=lib.float16))
lib.var_mean(f, 1, keepdim=True)
lib.var_mean(c)
lib.std_mean(f, (0, 1), correction=0)
lib.std_mean(i)
lib.all(u, 0)
lib.any(u, ())
lib.all(f, ())
lib.all(f, None, True)
lib.all(s, (), True)
lib.all(c, 1)
lib.any(bf)
lib.all(f, (0, 0))
lib.count_nonzero(f, ())
lib.count_nonzero(c)
lib.count_nonzero(s, 0)
lib.count_nonzero(f, (1, 1))
lib.logsumexp(f, (), True)
lib.logsumexp(b, 0)
lib.logsumexp(h, 0)
lib.logsumexp(c, 0)
lib.logsumexp(lib.tensor([inf, inf]), 0)
lib.logsumexp(e, 0)
lib.logsumexp(e2, 1, True)
lib.logsumexp(si, 0)
lib.cumsum(u, 0)
lib.cumsum(bf, 1)
lib.cumsum(c, 0)
lib.cumsum(s, -1)
lib.cumsum(f, 0, dtype=lib.int32)
lib.cumsum(lib.tensor([256., 1, 1, 1, 1, 1, 1, 1], dtype=lib.bfloat16), 0)
lib.cumprod(h, 1)
lib.cumprod(f, 0, dtype=lib.bool)
lib.cumprod(lib.tensor([300., 300, 1e-3], dtype=lib.float16), 0)
lib.sort(ti, stable=True, descending=True)
lib.sort(fn, descending=True)
lib.sort(lib.tensor([0., -0.]))
lib.sort(lib.tensor([-0., 0.]), descending=True)
lib.sort(b, descending=True)
lib.sort(lib.tensor([1., nan, 2], dtype=lib.bfloat16))
lib.sort(c)
lib.sort(e, 0)
lib.sort(s, 0, True)
lib.argsort(fn)
lib.argsort(e, 0)
lib.topk(fn, 2)
lib.topk(fn, 4)
lib.topk(f, -1)
lib.topk(c, 1)
lib.topk(s, 0)
lib.topk(e, 0, 0)
lib.topk(e, 2, 1)
lib.topk(u, 2)
lib.median(fn)
lib.median(f, 0, True)
lib.median(fn, 0)
lib.median(lib.tensor([[3., nan, 1, nan], [1., 2, 3, 4]]), 1)
lib.median(lib.tensor([], dtype=lib.int64))
lib.median(e2, -1)
lib.median(c, 0)
lib.median(bf, 1)
lib.norm(f, 0.5)
lib.norm(f, -2)
lib.norm(f, True)
lib.norm(f, 2j)
lib.norm(f, 'fro', (), True)
lib.norm(f, 'nuc', (1, 0), True)
lib.norm(f, 'nuc', (0, -2))
lib.norm(f3, 'nuc', (2, 0), True)
lib.norm(f3, 'fro', (0, 1, 2))
lib.norm(lib.ones(3), 'abc')
lib.norm(i, 'nuc')
lib.norm(f, 'nuc', dtype=lib.float64)
lib.norm(d, 2, 1, dtype=lib.float32)
lib.norm(f, dtype=lib.complex64)
lib.norm(c, dtype=lib.float32)
lib.norm(c, 'nuc')
lib.norm(c, 0)
lib.norm(h, 'nuc')
lib.norm(e, inf, 1)
lib.norm(e, inf, 0)
lib.norm(e, -1)
lib.norm(e2, -inf, -1)
lib.norm(e2, 'nuc')
lib.norm(s, 1, 0, True)
lib.norm(lib.tensor([0., 0]), -0.5)
lib.norm(lib.zeros(2, 0, 3), 'nuc', (0, 2))
f.max(dim=1, keepdim=True)
f.std(unbiased=False)
f.norm(p=1, dim=1, keepdim=True)
f.topk(k=2, dim=0, largest=False, sorted=True)
f.argsort(dim=0, descending=True, stable=True)
f.aminmax(dim=0, keepdim=True)
lib.max(input=f, dim=1)
lib.sum(f, 1, out=lib.zeros(2))
lib.max(f, f, out=lib.zeros(2, 3))
lib.var(f, 1, out=lib.zeros(2))
lib.prod(lib.tensor([2 ** 40, 2 ** 40]))
lib.cumsum(lib.tensor([100, 100], dtype=lib.int8), 0, dtype=lib.int8)
lib.max(lib.tensor([nan, 1.], dtype=lib.bfloat16), 0)
lib.max(lib.tensor([1., 2.], dtype=lib.float16), lib.tensor([1., 2.], dtype=lib.bfloat16))
lib.min(lib.tensor(1.5), lib.tensor([1, 2]))
lib.count_nonzero(lib.tensor([0, 1], dtype=lib.uint8), 0)
lib.logsumexp(lib.tensor([[-inf, 0.], [-inf, -inf]]), 1)
lib.std(lib.tensor([1., 2, 3, 4]), correction=True)
lib.norm(lib.tensor([3., -4.], dtype=lib.float16), 2, dtype=lib.bfloat16)
lib.norm(lib.tensor([[1+1j, 2], [0, 1j]]), -inf, 1)
lib.norm(lib.zeros(2, 0, 3), 0, 1)
lib.cummax(lib.tensor([1., 3, 3, 2, nan, 5, nan, 7]), 0)
lib.cummin(lib.tensor([1., 3, 3, 2, nan, 5, nan, 7]), 0)
lib.cummax(ti, 0)
lib.cummin(ti, -1)
lib.cummax(b, 0)
lib.cummax(h, 1)
lib.cummin(bf, 0)
lib.cummax(s, 0)
lib.cummax(e, 1)
lib.cummax(c, 0)
lib.cummax(lib.tensor(1j), 0)
lib.cummax(lib.zeros(0, dtype=lib.complex64), 0)
lib.cummax(f, 2)
lib.cummax(f, None)
lib.cummax(f, 1, out=(lib.zeros(2, 3), lib.zeros(2, 3, dtype=lib.long)))
f.cummin(dim=0)
lib.logcumsumexp(lib.tensor([1., 2, -inf, 3]), 0)
lib.logcumsumexp(lib.tensor([inf, 2, -inf]), 0)
lib.logcumsumexp(lib.tensor([-inf, -inf]), 0)
lib.logcumsumexp(lib.tensor([nan, 1.]), 0)
lib.logcumsumexp(lib.tensor([1000., 1000.]), 0)
lib.logcumsumexp(c, 1)
lib.logcumsumexp(lib.tensor([-1000 + 1j, 0j]), 0)
lib.logcumsumexp(h, 1)
lib.logcumsumexp(bf, 0)
lib.logcumsumexp(i, 0)
lib.logcumsumexp(s, 0)
lib.logcumsumexp(e, 0)
lib.logcumsumexp(f, 2)
f.logcumsumexp(-1)
lib.logcumsumexp(f, None)
lib.kthvalue(lib.tensor([[3., 1, 2, 1], [nan, 5, 5, 0]]), 2)
lib.kthvalue(lib.tensor([[3., 1, 2, 1], [nan, 5, 5, 0]]), 4)
lib.kthvalue(lib.tensor([[3., 1, 2, 1], [nan, 5, 5, 0]]), 5)
lib.kthvalue(f, 0)
lib.kthvalue(f, 1, 0, True)
lib.kthvalue(s, 1)
lib.kthvalue(lib.tensor(True), 1)
lib.kthvalue(lib.tensor(1j), 1)
lib.kthvalue(b, 1)
lib.kthvalue(c, 1)
lib.kthvalue(e, 1, 1)
lib.kthvalue(f, 1.5)
f.kthvalue(3, dim=1)
lib.mode(lib.tensor([[1, 2, 2, 3, 3], [4, 4, 1, 1, 0]]))
lib.mode(lib.tensor([1., nan, nan, 2.]))
lib.mode(lib.tensor([True, False, True]))
lib.mode(s)
lib.mode(lib.tensor(1j))
lib.mode(c)
lib.mode(e2)
lib.mode(lib.tensor([[2, 2], [1, 2]]), 0, True)
lib.mode(ti)
lib.nanmean(lib.tensor([[3., 1, 2, 1], [nan, 5, 5, 0]]))
lib.nanmean(lib.tensor([[3., 1, 2, 1], [nan, 5, 5, 0]]), 1)
lib.nanmean(i)
lib.nanmean(lib.tensor([nan]))
lib.nanmean(fn, 0, dtype=lib.float64)
lib.nanmean(c)
lib.nanmean(h, 1, True)
lib.nanmean(e, 0)
lib.nanmedian(lib.tensor([[3., 1, 2, 1], [nan, 5, 5, 0]]))
lib.nanmedian(lib.tensor([[3., 1, 2, 1], [nan, 5, 5, 0]]), 1)
lib.nanmedian(lib.tensor([[nan, 1.], [nan, nan]]), 1)
lib.nanmedian(lib.tensor([nan, nan]))
lib.nanmedian(i)
lib.nanmedian(lib.tensor(1j))
lib.nanmedian(lib.tensor(1j), 0)
lib.nanmedian(b)
lib.nanmedian(e)
lib.nanmedian(f, keepdim=True)
lib.msort(lib.tensor([[3., 1, 2, 1], [nan, 5, 5, 0]]))
lib.msort(lib.tensor([1j]))
lib.msort(s)
lib.searchsorted(lib.tensor([1, 3, 5, 7]), lib.tensor([3, 6, 9]))
lib.searchsorted(lib.tensor([1, 3, 5, 7]), lib.tensor([3, 6, 9]), right=True)
lib.searchsorted(lib.tensor([1, 3, 5, 7]), lib.tensor([3, 6, 9]), side='right')
lib.searchsorted(lib.tensor([[1, 3, 5], [2, 4, 6]]), lib.tensor([[3], [3]]))
lib.searchsorted(lib.tensor([1, 3, 5, 7]), 4)
lib.searchsorted(lib.tensor([1, 3, 5, 7]), lib.tensor([3]), out_int32=True)
lib.searchsorted(lib.tensor([5, 1, 7, 3]), lib.tensor([3, 6]), sorter=lib.tensor([1, 3, 0, 2]))
lib.searchsorted(lib.tensor([1, 3, 5, 7]), lib.tensor([3]), side='up')
lib.searchsorted(lib.tensor([1, 3, 5, 7]), lib.tensor([3]), side='left', right=True)
lib.searchsorted(lib.ones(2, 3), lib.ones(3, 1))
lib.searchsorted(lib.tensor([1, 3, 5, 7]), lib.tensor([[3, 6], [0, 9]]))
lib.searchsorted(lib.tensor([1, 3, 5, 7]), lib.tensor([3.5]))
lib.searchsorted(lib.tensor([1., 3, 5, 7]), lib.tensor([3.5, nan]))
lib.searchsorted(b, lib.tensor([True]))
lib.searchsorted(lib.tensor([1j]), lib.tensor([1j]))
lib.searchsorted(lib.tensor([1, 3, 5, 7]), lib.tensor([3]), sorter=lib.tensor([0, 1]))
lib.bucketize(lib.tensor([3, 6, 9]), lib.tensor([1, 3, 5, 7]))
lib.bucketize(lib.tensor([3]), lib.ones(2, 2))
lib.bucketize(3, lib.tensor([1, 3, 5, 7]))
lib.bincount(lib.tensor([0, 1, 1, 3]))
lib.bincount(lib.tensor([0, 1, 1, 3]), lib.tensor([0.5, 1., 1., 2.]), minlength=6)
lib.bincount(lib.tensor([0, -1]))
lib.bincount(lib.tensor([0., 1.]))
lib.bincount(lib.ones(2, 2, dtype=lib.long))
lib.bincount(lib.tensor([0, 1]), lib.tensor([1.]))
lib.bincount(lib.tensor([], dtype=lib.long))
lib.bincount(lib.tensor([0, 1]), lib.tensor([1, 2]))
lib.bincount(u)
lib.bincount(lib.tensor([0, 1]), minlength=-1)
lib.histc(lib.tensor([1., 2., 3.]), bins=3)
lib.histc(lib.tensor([1., 2., 5., -1.]), bins=4, min=0, max=4)
lib.histc(lib.tensor([1., 2.]), bins=2, min=3, max=1)
lib.histc(lib.tensor([2., 2.]), bins=2)
lib.histc(lib.tensor([1.]), bins=0)
lib.histc(d, bins=2)
lib.histc(lib.tensor([]), bins=2)
lib.histc(lib.tensor([1., inf]), bins=2)
lib.histc(i, bins=4)
lib.unique(lib.tensor([3, 1, 3, 2]))
lib.unique(lib.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
lib.unique(lib.tensor([[1, 2], [1, 2], [0, 5]]), dim=0, return_counts=True)
lib.unique(lib.tensor([[1, 2], [1, 2], [0, 5]]), dim=1, return_inverse=True)
lib.unique(lib.tensor([3, 1, 3, 2]), sorted=False)
lib.unique(fn)
lib.unique(b, return_counts=True)
lib.unique(e)
lib.unique(c)
lib.unique_consecutive(lib.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_counts=True, return_inverse=True)
lib.unique_consecutive(lib.tensor([[1, 2], [1, 2], [0, 5], [1, 2]]), dim=0, return_counts=True)
lib.unique_consecutive(f)
lib.quantile(lib.tensor([[1., 4, 2, 8], [3, nan, 0, 1]]), 0.5, dim=1)
lib.quantile(lib.tensor([1., 4, 2, 8]), 0.25)
lib.quantile(lib.tensor([[1., 4, 2, 8], [3, nan, 0, 1]]), lib.tensor([0.25, 0.75]), dim=1, keepdim=True)
lib.quantile(lib.tensor([[1., 4, 2, 8], [3, 5, 0, 1]]), lib.tensor([0.25, 0.75]), keepdim=True)
lib.quantile(lib.tensor([[1., 4, 2, 8], [3, 5, 0, 1]]), lib.tensor(0.3), 0)
lib.quantile(lib.tensor([1., 2, 3, 4]), lib.tensor([0.1, 0.5, 0.625, 0.9]), interpolation='lower')
lib.quantile(lib.tensor([1., 2, 3, 4]), lib.tensor([0.1, 0.5, 0.625, 0.9]), interpolation='higher')
lib.quantile(lib.tensor([1., 2, 3, 4]), lib.tensor([0.1, 0.5, 0.625, 0.9]), interpolation='nearest')
lib.quantile(lib.tensor([1., 2, 3, 4]), lib.tensor([0.1, 0.5, 0.625, 0.9]), interpolation='midpoint')
lib.nanquantile(lib.tensor([[1., 4, 2, 8], [3, nan, 0, 1]]), 0.5, dim=1)
lib.nanquantile(lib.tensor([nan]), 0.5)
lib.nanquantile(lib.tensor([[nan, nan], [1, nan]]), lib.tensor([0., 1.]), 1)
lib.quantile(lib.tensor([1, 2]), 0.5)
lib.quantile(f, 1.5)
lib.quantile(f, lib.tensor([0.5, 2.]))
lib.quantile(f, lib.ones(2, 2) * 0.5)
lib.quantile(f, 0.5, interpolation='up')
lib.quantile(lib.ones(0), 0.5)
lib.quantile(s, 0.5)
lib.quantile(s, 0.5, 0, True)
lib.quantile(f, lib.tensor([0.5], dtype=lib.float64))
lib.quantile(d, 0.5)
lib.quantile(h, 0.5)
f.nanquantile(0.2, -1, keepdim=True)
lib.trapezoid(lib.tensor([1., 2, 3]))
lib.trapezoid(lib.tensor([1., 2, 3]), lib.tensor([0., 1, 3]))
lib.trapezoid(lib.tensor([1., 2, 3]), dx=2)
lib.trapezoid(lib.tensor([1, 2, 3]))
lib.trapezoid(lib.tensor([[1., 2, 3], [4, 5, 6]]), dim=0)
lib.trapezoid(lib.tensor([[1., 2, 3], [4, 5, 6]]), lib.tensor([0., 1, 3]))
lib.trapezoid(lib.tensor([1., 2, 3]), lib.tensor([0., 1]))
lib.trapezoid(lib.tensor(1.))
lib.trapezoid(lib.tensor([1.]))
lib.trapezoid(lib.tensor([True, True]))
lib.trapezoid(lib.tensor([1, 2, 3]), lib.tensor([0, 1, 3]))
lib.trapezoid(lib.tensor([1, 2, 3]), dx=2)
lib.trapezoid(lib.tensor([1., 2, 3]), lib.tensor([0., 1, 3], dtype=lib.float64))
lib.trapezoid(e, dim=1)
lib.argwhere(lib.tensor([0., nan, 2]))
lib.argwhere(lib.tensor(3))
lib.argwhere(e)
""".strip().splitlines()


def _inputs(lib):
    tensor = lib.tensor
    return dict(
        lib=lib, nan=nan, inf=inf,
        f=tensor([[1., -2, 3], [4, 5, 0]]), i=tensor([[1, 2, 3], [4, 5, 6]]),
        i32=tensor([[1, 2, 3], [4, 5, 6]], dtype=lib.int32), d=tensor([[1., 2.], [3., 5.]], dtype=lib.float64),
        e=lib.zeros(0, 3), e2=lib.zeros(2, 0), s=tensor(3.), si=tensor(3),
        u=tensor([1, 0, 2], dtype=lib.uint8), b=tensor([True, False, True]),
        h=tensor([[1., -2, 3], [4, 5, 0]], dtype=lib.float16), bf=tensor([[1., -2, 3], [4, 5, 0]], dtype=lib.bfloat16),
        c=tensor([[1 + 1j, 2], [0, -1j]]), fn=tensor([1., nan, 3, nan]), ti=tensor([2, 1, 2, 1, 2]),
        f3=tensor(np.arange(24.).reshape(2, 3, 4).tolist()))


def _evaluate(expression, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "value", eval(expression, _inputs(lib))
        except Exception as error:  # compared with PyTorch's below
            return "error", (type(error).__name__, str(error).split("\n")[0])


def _leaves(result):
    if isinstance(result, tuple):
        return [leaf for part in result for leaf in _leaves(part)]
    return [result]


def _as_numpy(t):
    name = repr(t.dtype).split(".")[1]
    data = t.detach().float().numpy() if name == "bfloat16" and not isinstance(t, tm.Tensor) else (
        t._data.astype(np.float32) if isinstance(t, tm.Tensor) and name == "bfloat16"
        else t._data if isinstance(t, tm.Tensor) else t.detach().numpy())
    return data, name


@pytest.mark.torch
@pytest.mark.parametrize("expression", TORCH_CASES)
def test_matches_torch(expression):
    import torch
    ours, theirs = _evaluate(expression, tm), _evaluate(expression, torch)
    assert ours[0] == theirs[0], f"tensormodes gave {ours}, torch gave {theirs}"
    if ours[0] == "error":
        assert ours[1] == theirs[1]
        return
    if isinstance(theirs[1], tuple) and hasattr(theirs[1], "_fields") and not type(theirs[1]).__name__.endswith("_out"):
        assert type(ours[1]).__name__ == type(theirs[1]).__name__
    our_leaves, their_leaves = _leaves(ours[1]), _leaves(theirs[1])
    assert len(our_leaves) == len(their_leaves)
    for mine, reference in zip(our_leaves, their_leaves, strict=True):
        (a, a_dtype), (b, b_dtype) = _as_numpy(mine), _as_numpy(reference)
        assert a_dtype == b_dtype
        assert a.shape == b.shape
        tolerance = 1e-2 if a_dtype in ("float16", "bfloat16") else 1e-5
        np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance, equal_nan=True)

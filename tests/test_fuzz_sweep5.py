"""Differences from PyTorch found by the differential fuzzer (issue 22, fifth sweep), each pinned
with PyTorch 2.13's own values, types and messages, so that these run without torch installed
too."""

from __future__ import annotations

import math

import pytest

import tensormodes as tm

aten = tm.ops.aten


# -- aten.index: every tensor is an advanced index ------------------------------------------------

def test_index_reads_a_0dim_integer_as_an_advanced_index():
    # non-adjacent advanced indices put their broadcast dimensions first; a 0-dim one is one of
    # them (Python indexing would read it as a number and select first: shape (3, 2))
    x = tm.arange(24.).reshape(2, 3, 4)
    result = aten.index.Tensor(x, [tm.tensor(-2), None, tm.tensor([3, 2])])
    assert result.shape == (2, 3)
    assert result.tolist() == [[3.0, 7.0, 11.0], [2.0, 6.0, 10.0]]
    # alone (or beside other 0-dim ones) it removes its dimension
    assert aten.index.Tensor(x, [tm.tensor(1), None, tm.tensor(1)]).tolist() == [13.0, 17.0, 21.0]
    assert aten.index.Tensor(x, [None, tm.tensor(-1)]).shape == (2, 4)
    # with a mask: the mask's positions broadcast against it
    mask = aten.index.Tensor(x, [tm.tensor(1), None, tm.tensor([True, False, True, True])])
    assert mask.shape == (3, 3) and mask[0].tolist() == [12.0, 16.0, 20.0]


def test_index_drops_a_0dim_mask_beside_other_indices():
    # ATen indexes with a mask's nonzero positions: a 0-dim mask has none and takes no dimension,
    # True or False alike
    x = tm.arange(24.).reshape(2, 3, 4)
    for flag in (True, False):
        assert aten.index.Tensor(x, [tm.tensor(1), None, tm.tensor(flag)]).tolist() == x[1].tolist()
    assert aten.index.Tensor(x, [None, tm.tensor(True), tm.tensor(1)]).tolist() == x[:, 1].tolist()


def test_index_gradient_follows_the_aten_meaning():
    x = tm.arange(24.).reshape(2, 3, 4).requires_grad_()
    aten.index.Tensor(x, [tm.tensor(-2), None, tm.tensor([3, 2])]).sum().backward()
    expected = tm.zeros(2, 3, 4)
    expected[0, :, 2:] = 1
    assert x.grad.tolist() == expected.tolist()


def test_index_with_more_indices_than_dimensions_raises():
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 0 \(got 1\)$"):
        aten.index.Tensor(tm.tensor(1.5), [tm.tensor(True)])
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 1 \(got 2\)$"):
        aten.index.Tensor(tm.zeros(2), [tm.tensor(0), None])


def test_index_meta_shapes_with_0dim_integers():
    m = tm.zeros(2, 3, 4, device="meta")
    assert aten.index.Tensor(m, [tm.tensor(0, device="meta"), None, tm.tensor(1, device="meta")]).shape == (3,)
    assert aten.index.Tensor(m, [tm.tensor(0, device="meta"), None,
                                 tm.tensor([1, 2], device="meta")]).shape == (2, 3)
    assert aten.index.Tensor(tm.zeros(0, 3, device="meta"), [tm.tensor(0, device="meta")]).shape == (3,)


# -- writes into a view's copy under autograd -----------------------------------------------------

@pytest.mark.parametrize("dtype, name", [(tm.int32, "Int"), (tm.bool, "Bool")])
def test_view_scatters_into_an_integer_input_refuse_autograd(dtype, name):
    src = tm.ones(3, 2, requires_grad=True)
    calls = (lambda x: tm.slice_scatter(x, src, 1, 0, 4, 2), lambda x: tm.select_scatter(x, src[:, 0], 1, 0),
             lambda x: tm.diagonal_scatter(x, src[:, 0], 0))
    for call in calls:
        with pytest.raises(RuntimeError, match=f"^Autograd not support dtype: {name}$"):
            call(tm.zeros(3, 4, dtype=dtype))
    # without a src that requires grad they compute, in the input's dtype
    assert tm.slice_scatter(tm.zeros(3, 4, dtype=dtype), tm.ones(3, 2), 1, 0, 4, 2).dtype == dtype
    assert tm.diagonal_scatter(tm.zeros(3, 4, dtype=tm.complex64), src[:, 0], 0).requires_grad


# -- least squares ----------------------------------------------------------------------------------

def test_lstsq_residuals_of_a_matrix_without_columns():
    # LAPACK returns at once: gels zeroes B first (residuals 0), gelsd and gelss leave it (|B|^2)
    A, B = tm.zeros(4, 0, dtype=tm.float64), tm.arange(8.0, dtype=tm.float64).reshape(4, 2)
    assert tm.linalg.lstsq(A, B, driver="gels").residuals.tolist() == [0.0, 0.0]
    for driver in ("gelsd", "gelss"):
        assert tm.linalg.lstsq(A, B, driver=driver).residuals.tolist() == [56.0, 84.0]
    assert tm.linalg.lstsq(A, B[:, 0], driver="gels").residuals.tolist() == [0.0]
    assert tm.linalg.lstsq(A, B).residuals.shape == (0,)  # gelsy computes none
    # an empty batch: empty residuals of the batch's shape
    empty = tm.linalg.lstsq(tm.zeros(0, 4, 2, dtype=tm.float64), tm.zeros(0, 4, 3, dtype=tm.float64), driver="gelsd")
    assert empty.residuals.shape == (0, 3)


def test_lstsq_reads_b_as_vectors_only_in_a_shape_without_columns():
    A = tm.ones(2, 4, 2, dtype=tm.float64)
    with pytest.raises(RuntimeError, match=r"^torch.linalg.lstsq: input.size\(-2\) should match other.size\(-2\)$"):
        tm.linalg.lstsq(A, tm.ones(1, 4, dtype=tm.float64))
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(2\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 0$"):
        tm.linalg.lstsq(A, tm.ones(4, 3, dtype=tm.float64))
    assert tm.linalg.lstsq(A, tm.ones(2, 4, dtype=tm.float64)).solution.shape == (2, 2)


# -- grid_sampler ---------------------------------------------------------------------------------

def test_grid_sampler_without_channels_gives_the_grid_a_zero_gradient():
    # the grid's gradient sums the channels' terms: none, so 0 even at a NaN coordinate
    x = tm.zeros(1, 0, 3, 4, dtype=tm.float64, requires_grad=True)
    grid = tm.tensor([[[[0.2, 0.1], [0.5, float("nan")], [-1e30, 0.3]]]], dtype=tm.float64, requires_grad=True)
    for mode in (0, 2):
        out = tm.grid_sampler(x, grid, mode, 1, True)
        _, grad = tm.autograd.grad(out, (x, grid), tm.ones_like(out))
        assert grad.tolist() == [[[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]]]


# -- LU pivoting beside NaN -----------------------------------------------------------------------

def test_inverse_pivots_past_a_nan_as_lapack_does():
    # BLAS's pivot search never takes a NaN as larger: column 1's pivot is -0., so U[2, 2] is zero
    # and PyTorch's LAPACK reports the matrix singular (NumPy's build pivots on the NaN row)
    nan, inf = float("nan"), float("inf")
    A = tm.tensor([[inf, 1.32, 0.5], [0.41, -0.0, -0.29], [nan, -inf, -0.97]])
    with pytest.raises(tm.linalg.LinAlgError, match="^linalg.inv: The diagonal element 2 is zero, the inversion "
                                                   "could not be completed because the input matrix is singular.$"):
        tm.linalg.inv(A)
    with pytest.raises(tm.linalg.LinAlgError, match="The solver failed because the input matrix is singular"):
        tm.linalg.solve(A, tm.ones(3))
    # NumPy's build refuses [[inf, 1], [-inf, -0.]], whose BLAS factorisation has a NaN pivot: NaN
    assert all(math.isnan(v) for row in tm.linalg.inv(tm.tensor([[inf, 1.04], [-inf, -0.0]])).tolist() for v in row)
    assert tm.linalg.inv(tm.tensor([[inf, 1.0], [1.0, 2.0]])).tolist() == [[0.0, -0.0], [0.0, 0.5]]


def test_rms_norm_complex_weight_gradient_is_complex_at_a_nan():
    # PyTorch's product is complex, so its gradient reaches the weight as complex: NaN in both parts
    x = tm.tensor([[1.0, float("inf")]], dtype=tm.float16, requires_grad=True)
    w = tm.tensor([1 + 1j, 2 - 1j], dtype=tm.complex64, requires_grad=True)
    out = tm.rms_norm(x, [2], w)
    _, grad = tm.autograd.grad(out, (x, w), tm.ones_like(out))
    assert grad[0].item() == 0j
    assert math.isnan(grad[1].item().real) and math.isnan(grad[1].item().imag)

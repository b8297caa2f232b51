"""Indexing: ``t[index]``, ``t[index] = value`` and the gather/scatter/mask family:
exact values, dtypes, views versus copies, errors and warnings, with PyTorch as
the oracle for the cases marked ``torch``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensormodes as tm

from .same_expression import outcome


def shares_memory(a: tm.Tensor, b: tm.Tensor) -> bool:
    return np.shares_memory(a._data, b._data)


# -- getitem -----------------------------------------------------------------------------

def test_basic_indexing_gives_views():
    x = tm.tensor([[1, 2, 3], [4, 5, 6]])
    for view in (x[1], x[:, 0], x[0, 1], x[..., None], x[None, 1:, ::2], x[()], x[tm.tensor(1)]):
        assert view._base is x and shares_memory(view, x)
    element = x[1, 2]
    assert element.shape == () and element.item() == 6
    element[...] = 60  # a 0-dim view, not a copied number
    assert x.tolist() == [[1, 2, 3], [4, 5, 60]]


def test_advanced_indexing_copies():
    x = tm.tensor([[1, 2, 3], [4, 5, 6]])
    for copy in (x[[0, 1]], x[x > 2], x[:, tm.tensor([2, 0])], x[True]):
        assert copy._base is None and not shares_memory(copy, x)
    assert x[x > 2].tolist() == [3, 4, 5, 6]
    assert x[[1, 0], [2, 0]].tolist() == [6, 1]
    assert x[tm.tensor([[0], [1]]), tm.tensor([0, 2])].tolist() == [[1, 3], [4, 6]]


def test_integers_apply_before_index_tensors():
    # NumPy would put the broadcast dimension first ((2, 3)); PyTorch selects dim 0 first.
    x = tm.zeros(2, 3, 4)
    assert x[0, :, [0, 1]].shape == (3, 2)
    assert x[[0, 1], :, [0, 1]].shape == (2, 3)
    assert x[:, [0, 1], 1].shape == (2, 2)


def test_scalar_bools_and_none():
    x = tm.tensor([1, 2])
    assert x[True].shape == (1, 2) and x[False].shape == (0, 2)
    assert x[None].shape == (1, 2) and x[..., None].shape == (2, 1)
    s = tm.tensor(5)
    assert s[None].tolist() == [5] and s[...].shape == () and s[tm.tensor(True)].tolist() == [5]


def test_index_dtypes():
    x = tm.tensor([10, 20, 30])
    assert x[tm.tensor([2, 0], dtype=tm.int32)].tolist() == [30, 10]
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        assert x[tm.tensor([1, 0, 1], dtype=tm.uint8)].tolist() == [10, 30]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[tm.tensor([1, 0], dtype=tm.int16)]
    with pytest.raises(IndexError, match="tensors used as indices must be long"):
        x[tm.tensor([1.0])]
    assert x[[]].shape == (0,) and x[[]].dtype is tm.int64


def test_list_holding_slices_is_a_tuple():
    x = tm.tensor([[1, 2], [3, 4]])
    with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
        assert x[[0, slice(None)]].tolist() == [1, 2]
    assert x[[0, 1]].tolist() == [[1, 2], [3, 4]]  # plain ints: an index tensor, no warning


@pytest.mark.parametrize("index, error, message", [
    (5, IndexError, "index 5 is out of bounds for dimension 0 with size 2"),
    ((slice(None), -4), IndexError, "index -4 is out of bounds for dimension 1 with size 3"),
    ((0, 0, 0), IndexError, "too many indices for tensor of dimension 2"),
    (slice(None, None, -1), ValueError, "step must be greater than zero"),
    (slice(None, None, 0), ValueError, "slice step cannot be zero"),
    (1.0, IndexError, r"only integers, slices \(`:`\), ellipsis \(`...`\), None and long or byte Variables"),
    ([3], IndexError, "index 3 is out of bounds for dimension 0 with size 2"),
    (([0, 1], [0, 1, 2]), IndexError, r"shape mismatch: indexing tensors could not be broadcast together with "
                                      r"shapes \[2\], \[3\]"),
    ((slice(None), [True, False]), IndexError, r"The shape of the mask \[2\] at index 0 does not match the shape "
                                               r"of the indexed tensor \[2, 3\] at index 1"),
    ("a", TypeError, "valid indices"),
])
def test_getitem_errors(index, error, message):
    with pytest.raises(error, match=message):
        tm.zeros(2, 3)[index]


def test_zero_dim_errors():
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        tm.tensor(1.)[0]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 0"):
        tm.tensor(1.)[[0]]


# -- setitem -----------------------------------------------------------------------------

def test_setitem_casts_and_broadcasts():
    x = tm.zeros(2, 3, dtype=tm.int64)
    x[0] = 2.9
    x[1, :] = tm.tensor([1.5, 2.5, 3.5])
    assert x.tolist() == [[2, 2, 2], [1, 2, 3]] and x.dtype is tm.int64
    x[:, 0] = tm.tensor([[7]])
    x[0] = tm.ones(1, 1, 3, dtype=tm.int64)  # leading ones are dropped, as PyTorch does
    assert x.tolist() == [[1, 1, 1], [7, 2, 3]]
    x[x > 2] = -1
    x[[0, 1], [2, 2]] = tm.tensor([8, 9])
    assert x.tolist() == [[1, 1, 8], [-1, 2, 9]]
    u = tm.zeros(2, dtype=tm.uint8)
    u[0] = -1
    assert u.tolist() == [255, 0]


def test_setitem_writes_through_views():
    x = tm.zeros(3, 3)
    x[1][2] = 5
    x[:, 0][1:] = 7
    x.t()[0, 0] = 1
    assert x.tolist() == [[1, 0, 0], [7, 0, 5], [7, 0, 0]]


def test_setitem_overlapping_source():
    x = tm.tensor([1, 2, 3, 4])
    x[1:] = x[:-1]
    assert x.tolist() == [1, 1, 2, 3]


@pytest.mark.parametrize("target, index, value, error, message", [
    (tm.zeros(2, 3), 0, tm.ones(2), RuntimeError, r"The expanded size of the tensor \(3\) must match the existing "
                                                  r"size \(2\) at non-singleton dimension 0"),
    (tm.zeros(2, 3), 0, tm.ones(2, 3), RuntimeError, "the number of sizes provided"),
    (tm.zeros(2, 3), [0, 1], tm.ones(4), RuntimeError, r"shape mismatch: value tensor of shape \[4\] cannot be "
                                                       r"broadcast to indexing result of shape \[2, 3\]"),
    (tm.zeros(2, 3), [0], tm.ones(3, dtype=tm.float64), RuntimeError, "Index put requires the source and "
                                                                      "destination dtypes match, got Float"),
    (tm.zeros(3, dtype=tm.uint8), 0, 300, RuntimeError, "value cannot be converted to type uint8_t without overflow"),
    (tm.zeros(3, dtype=tm.int64), 0, float("nan"), RuntimeError, "cannot be converted to type int64_t"),
    (tm.zeros(3), 0, 1 + 2j, RuntimeError, "value cannot be converted to type float without overflow"),
    (tm.zeros(3), 0, [1, 2, 3], TypeError, "must be Tensor or Number"),
])
def test_setitem_errors(target, index, value, error, message):
    with pytest.raises(error, match=message):
        target[index] = value


def test_setitem_mask_with_0_dim_value_casts():
    x = tm.zeros(3)
    x[x == 0] = tm.tensor(2, dtype=tm.int64)  # PyTorch's masked_fill path casts
    assert x.tolist() == [2.0, 2.0, 2.0]


# -- gather, scatter and friends -----------------------------------------------------------

def test_index_select_gather_take():
    x = tm.tensor([[1, 2, 3], [4, 5, 6]])
    assert tm.index_select(x, 1, tm.tensor([2, 2, 0])).tolist() == [[3, 3, 1], [6, 6, 4]]
    assert x.index_select(0, tm.tensor(1)).tolist() == [[4, 5, 6]]
    assert x.gather(1, tm.tensor([[2, 0], [1, 1]])).tolist() == [[3, 1], [5, 5]]
    assert x.gather(0, tm.tensor([[1, 0, 1]], dtype=tm.int32)).tolist() == [[4, 2, 6]]
    assert tm.take(x, tm.tensor([[0, -1], [3, 2]])).tolist() == [[1, 6], [4, 3]]
    out = tm.zeros(2, 1, dtype=tm.int64)
    assert tm.index_select(x, 1, tm.tensor([0]), out=out) is out and out.tolist() == [[1], [4]]


def test_scatter_family():
    zeros = tm.zeros(2, 3, dtype=tm.int64)
    index = tm.tensor([[1, 0, 1]])
    assert zeros.scatter(0, index, tm.tensor([[7, 8, 9]])).tolist() == [[0, 8, 0], [7, 0, 9]]
    assert zeros.scatter(0, index, 4).tolist() == [[0, 4, 0], [4, 0, 4]]
    assert zeros.scatter(1, tm.tensor([[0, 0]]), value=3, reduce="add").tolist() == [[6, 0, 0], [0, 0, 0]]
    ones = tm.ones(2, 2)
    assert ones.scatter(0, tm.tensor([[0, 0]]), 3.0, reduce="multiply").tolist() == [[3.0, 3.0], [1.0, 1.0]]
    assert tm.scatter_add(tm.zeros(3), 0, tm.tensor([0, 0, 2]), tm.tensor([1., 2., 3.])).tolist() == [3., 0., 3.]
    assert tm.index_add(tm.zeros(3), 0, tm.tensor([2, 2]), tm.tensor([1., 2.]), alpha=2).tolist() == [0., 0., 6.]
    # src may be larger than index: only its leading part is used
    assert tm.zeros(3).scatter(0, tm.tensor([1]), tm.tensor([5., 6.])).tolist() == [0., 5., 0.]


def test_take_along_dim_index_fill_index_copy():
    x = tm.tensor([[10, 30, 20], [60, 40, 50]])
    assert tm.take_along_dim(x, tm.tensor([[0], [2]]), 1).tolist() == [[10], [50]]
    assert tm.take_along_dim(x, tm.tensor([[1]]), 1).tolist() == [[30], [40]]  # broadcasts the other dims
    assert x.take_along_dim(tm.tensor([5, 0])).tolist() == [50, 10]
    assert tm.take_along_dim(x, tm.tensor([[-1], [5]]), 1).tolist() == [[20], [50]]  # along a dim: modulo the size
    assert x.index_fill(0, tm.tensor([-1]), 0).tolist() == [[10, 30, 20], [0, 0, 0]]
    assert x.index_copy(1, tm.tensor([2, 0]), tm.tensor([[1, 2], [3, 4]])).tolist() == [[2, 30, 1], [4, 40, 3]]
    y = tm.zeros(3)
    assert y.index_fill_(0, tm.tensor([1]), 2.0) is y and y.tolist() == [0.0, 2.0, 0.0]
    assert y.index_copy_(0, tm.tensor([0]), tm.tensor([5.0])) is y and y.tolist() == [5.0, 2.0, 0.0]


def test_in_place_variants_write_into_self():
    x = tm.zeros(2, 2)
    assert x.masked_fill_(tm.tensor([[True, False], [False, True]]), 1.0) is x
    assert x.scatter_(0, tm.tensor([[1, 0]]), 5.0) is x
    assert x.scatter_add_(1, tm.tensor([[0], [0]]), tm.tensor([[1.], [1.]])) is x
    assert x.index_add_(0, tm.tensor([0]), tm.tensor([[10., 10.]])) is x
    assert x.tolist() == [[12.0, 15.0], [6.0, 1.0]]
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        tm.zeros(2).masked_fill_(tm.ones(3, 2, dtype=tm.bool), 1.0)


def test_masks_and_nonzero():
    x = tm.tensor([[0, 3], [4, 0]])
    assert x.masked_fill(x == 0, -1).tolist() == [[-1, 3], [4, -1]]
    assert x.masked_fill(tm.tensor([True, False]), tm.tensor(9.7)).tolist() == [[9, 3], [9, 0]]
    assert x.masked_fill(tm.ones(2, 2, 2, dtype=tm.bool), 1).shape == (2, 2, 2)  # broadcasts
    assert tm.masked_select(x, x > 0).tolist() == [3, 4]
    assert tm.masked_select(x, tm.tensor([True, False])).tolist() == [0, 4]
    assert x.nonzero().tolist() == [[0, 1], [1, 0]] and x.nonzero().dtype is tm.int64
    rows, cols = x.nonzero(as_tuple=True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    assert tm.nonzero(tm.tensor(2.)).shape == (1, 0)
    assert [t.tolist() for t in tm.nonzero(tm.tensor(0.), as_tuple=True)] == [[]]
    assert tm.nonzero(tm.tensor([0., float("nan")])).tolist() == [[1]]
    assert tm.nonzero(tm.tensor([0, 1.5], dtype=tm.bfloat16)).tolist() == [[1]]


@pytest.mark.parametrize("call, error, message", [
    (lambda: tm.gather(tm.zeros(2, 3), 0, tm.tensor([[0.]])), RuntimeError,
     "gather\\(\\): Expected dtype int32/int64 for index"),
    (lambda: tm.gather(tm.zeros(2, 3), 0, tm.tensor([[2]])), RuntimeError,
     "index 2 is out of bounds for dimension 0 with size 2"),
    (lambda: tm.gather(tm.zeros(2, 3), 0, tm.tensor([0])), RuntimeError,
     "Index tensor must have the same number of dimensions as input tensor"),
    (lambda: tm.gather(tm.zeros(2, 3), 1, tm.tensor([[0], [0], [0]])), RuntimeError,
     r"Size does not match at dimension 0 expected index \[3, 1\] to be no larger than self \[2, 3\]"),
    (lambda: tm.index_select(tm.zeros(2, 3), 1, tm.tensor([[0]])), IndexError, "Index is supposed to be a vector"),
    (lambda: tm.index_select(tm.zeros(2, 3), 1, tm.tensor([3])), RuntimeError, "out of DATA bounds, id=3 axis_dim=3"),
    (lambda: tm.scatter(tm.zeros(2, 3), 0, tm.tensor([[0]]), tm.ones(1, 1, dtype=tm.float64)), RuntimeError,
     r"scatter\(\): Expected self.dtype to be equal to src.dtype"),
    (lambda: tm.scatter(tm.zeros(2, 3), 0, tm.tensor([[0, 0]]), tm.ones(1, 1)), RuntimeError,
     r"to be no larger size than src \[1, 1\]"),
    (lambda: tm.scatter(tm.zeros(2, 3), 0, tm.tensor([[0]]), 1.0, reduce="mean"), RuntimeError,
     "reduce argument must be either add or multiply."),
    (lambda: tm.scatter(tm.zeros(2, 3), 0, tm.tensor([[0]])), TypeError, "exactly one of 'src'"),
    (lambda: tm.scatter_add(tm.zeros(2, 3), 0, tm.tensor([[0]]), 1.0), TypeError, "must be Tensor"),
    (lambda: tm.masked_fill(tm.zeros(2), tm.tensor([1, 0]), 1.0), RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype long int"),
    (lambda: tm.masked_fill(tm.zeros(2), tm.tensor([True, False]), tm.tensor([1.])), RuntimeError,
     "only supports a 0-dimensional value tensor, but got tensor with 1 dimension"),
    (lambda: tm.masked_fill(tm.zeros(2, dtype=tm.int8), tm.tensor([True, False]), 200), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    (lambda: tm.masked_select(tm.zeros(2), tm.tensor([1, 0])), RuntimeError, "expected BoolTensor for mask"),
    (lambda: tm.take(tm.zeros(2), tm.tensor([2])), IndexError,
     "out of range: tried to access index 2 on a tensor of 2 elements."),
    (lambda: tm.take(tm.zeros(2), tm.tensor([0], dtype=tm.int32)), RuntimeError,
     "take\\(\\): Expected a long tensor for index, but got Int"),
    (lambda: tm.index_add(tm.zeros(2, 3), 0, tm.tensor([0]), tm.ones(2, 3)), RuntimeError,
     r"Number of indices \(1\) should be equal to source.size\(dim\): \(2\), for dim: 0"),
])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# -- rules over all inputs ---------------------------------------------------------------

def _basic_index(shape):
    """Strategy: a tuple of in-range integers, step-positive slices, None and one Ellipsis."""
    def part(size):
        return st.one_of(st.integers(-size, size - 1) if size else st.nothing(),
                         st.builds(slice, st.integers(-5, 5) | st.none(), st.integers(-5, 5) | st.none(),
                                   st.integers(1, 3) | st.none()))
    return st.tuples(*[part(size) for size in shape]).flatmap(
        lambda parts: st.integers(0, len(parts)).map(lambda k: parts[:k] + (None,) + parts[k:]))


@settings(max_examples=80, deadline=None)
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
def test_basic_indexing_is_numpys_and_a_view(data, shape):
    array = np.arange(int(np.prod(shape))).reshape(shape)
    index = data.draw(_basic_index(shape))
    x = tm.tensor(array)
    result = x[index]
    assert result.tolist() == array[index].tolist()
    assert result._base is x or result.numel() == 0


@settings(max_examples=60, deadline=None)
@given(array=hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=st.integers(-3, 3)))
def test_masks_nonzero_and_masked_select_agree(array):
    x = tm.tensor(array)
    mask = x > 0
    assert x[mask].tolist() == tm.masked_select(x, mask).tolist() == array[array > 0].tolist()
    assert x[mask.nonzero(as_tuple=True)].tolist() == array[array > 0].tolist()
    assert x.masked_fill(mask, 0).tolist() == np.where(array > 0, 0, array).tolist()


@settings(max_examples=60, deadline=None)
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
def test_scatter_of_a_permutation_inverts_gather(data, shape):
    dim = data.draw(st.integers(0, len(shape) - 1))
    array = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    order = np.asarray(data.draw(st.permutations(range(shape[dim]))), dtype=np.int64)
    index = np.broadcast_to(order.reshape([-1 if i == dim else 1 for i in range(len(shape))]), shape).copy()
    x, idx = tm.tensor(array), tm.tensor(index)
    gathered = x.gather(dim, idx)
    assert gathered.tolist() == np.take_along_axis(array, index, dim).tolist()
    assert tm.zeros(shape, dtype=tm.int64).scatter(dim, idx, gathered).tolist() == array.tolist()


# -- cross-checks against PyTorch --------------------------------------------------------

def _names(L):
    return {
        "x": L.tensor([[0., 1., 2.], [3., 4., 5.]]),
        "x3": L.tensor(np.arange(24).reshape(2, 3, 4)),
        "s": L.tensor(5.),
        "i": L.tensor([[0, 1, 0]]),
        "np": np,
    }


GETITEM_CASES = """
x3[0]
x3[-1]
x3[2]
x3[:, 5]
x3[0, 0, 0, 0]
x3[[0, 1]]
x3[[[0, 1], [1, 0]]]
x3[[0, slice(None)]]
x3[[0, 1], None, [0, 1]]
x3[[0, 1], :, [0, 1]]
x3[:, [0, 1], [0, 1]]
x3[None, [0, 1], [1, 2]]
x3[..., [0, 1]]
x3[L.tensor(1)]
x3[L.tensor(True)]
x3[True]
x3[False]
x3[L.tensor([True, False])]
x3[L.tensor([True, False, True])]
x3[L.tensor([1, 0], dtype=L.int32)]
x3[L.tensor([1, 0], dtype=L.int8)]
x3[L.tensor([1, 0], dtype=L.uint8)]
x3[L.tensor([1.])]
x3[1.0]
x3[::-1]
x3[::0]
x3[0, ..., ...]
x3[L.tensor([5])]
x3[L.tensor([-3])]
x3[L.tensor([-2])]
x3[x3 > 5]
x3[(x3 > 5)[0]]
x3[[True, False]]
x3[[0, True]]
x3[L.tensor([[0, 1]])]
x3[[]]
x3[L.tensor([], dtype=L.long)]
x3[1:0]
x3[5:]
x3[:, L.tensor(1), L.tensor([0, 1])]
x3[0, [0, 1], :2]
x3[[0, 1], 0, [0, 1]]
x3[[0], [0, 1, 2], [0]]
x3[[0, 1], [0, 1, 2]]
x3[L.tensor(0), L.tensor(0), 1]
x3[None]
x3[None, ..., None]
x3[slice(None), None, 0]
x3[(0, 1)]
x3[[(0, 1)]]
x3[0, :, [0, 1]]
x3[0, :, [9]]
x3[:, :, [9]]
x3[[0], :, [9]]
x3[:, L.tensor([True, False])]
x3[:, :, L.tensor([True, False])]
x3[[0, 1], L.tensor([[0], [1]]), [0, 1, 2]]
x3[[0, 1], x3[0] > 1]
s[0]
s[None]
s[...]
s[()]
s[True]
s[[0]]
s[L.tensor(True)]
s[L.tensor(False)]
x3[[0] * 40]
x3[L.tensor([True, True]), L.tensor([1, 2])]
x3[1:2:3, L.tensor(True)]
x3[L.tensor([True, True]), L.tensor(True)]
x3[L.tensor(1), [0, 1]]
x3[[0, 1], L.tensor(1)]
x3[:, [0, 1], 1]
x3[1, [0, 1], :, None]
x3[[1], [0, 1], None]
x3[[1], None, [0, 1]]
x3[..., None, [0, 1]]
x3[[0, 1], ..., [0, 1]]
x3[L.tensor([[True, False, True], [True, True, True]])]
x3[L.tensor(1.)]
x3[1, 2.0]
x3[None, None, 0, 0, 0, 0]
x3[..., 0, 0, 0, 0]
x3[:, :, :, :]
x3[-3]
x3[1:-5]
x3[0, L.tensor([1, 0], dtype=L.uint8)]
x3[L.tensor([[0, 1], [1, 0]]), :, L.tensor([0, 3])]
x3[1:, ::2, 1::3]
x3[..., 1]
x3[L.tensor([0, 1]), ..., L.tensor([[0], [3]])]
x3[0, 1, [[0, 1], [2, 3]]]
x3[L.tensor([[True, False, True], [False, False, True]]), 1:3]
x3[:, L.tensor([True, False, True]), L.tensor([0, 1])]
x3[[[0]], [[1], [2]]]
x3[:, None, [1, 2], None, 0]
x3[0][1][2]._base is x3
x3[L.tensor(1)]._base is x3
"""

FUNCTION_CASES = """
L.gather(x, 0, i.int())
L.gather(x, 0, i.float())
L.gather(x, 0, L.tensor([[5]]))
L.gather(x, 0, L.tensor([[-1]]))
L.gather(x, 0, L.tensor([0]))
L.gather(x, 1, L.tensor([[0], [1], [0]]))
L.gather(x, 1, L.tensor([[0, 0, 0, 0]]))
L.gather(x, 2, i)
L.gather(s, 0, L.tensor(0))
L.gather(s, 0, L.tensor([0, 0]))
L.gather(x, 0, L.zeros(0, dtype=L.long))
L.gather(x, 0, L.zeros(0, 5, dtype=L.long))
L.gather(x, -1, L.tensor([[2, 1], [0, 0]]))
L.index_select(x, 1, L.tensor([2, 0]))
L.index_select(x, 1, L.tensor([[2, 0]]))
L.index_select(x, 1, L.tensor([2, 0]).int())
L.index_select(x, 1, L.tensor([2., 0]))
L.index_select(x, 1, L.tensor([3]))
L.index_select(x, 1, L.tensor([-1]))
L.index_select(x, 1, L.tensor(1))
L.index_select(s, 0, L.tensor([0, 0]))
L.index_select(s, 0, L.tensor(0))
L.index_select(x, 0, L.zeros(0, dtype=L.long))
L.scatter(x, 0, i, L.ones(1, 3))
L.scatter(x, 0, i, 7.)
L.scatter(x, 0, i, 7)
L.scatter(x, 0, i.int(), 7.)
L.scatter(x, 0, i, L.ones(1, 3).double())
L.scatter(x, 0, i, L.ones(1, 2))
L.scatter(x, 0, L.tensor([[5, 0, 0]]), 1.)
L.scatter(x, 0, i, 2., reduce='add')
L.scatter(x, 0, i, 2., reduce='multiply')
L.scatter(x, 0, i, L.full((1, 3), 2.), reduce='multiply')
L.scatter(x, 0, i, 2., reduce='mean')
L.scatter(x, 0, L.tensor([[0, 0, 0], [0, 0, 0]]), L.full((2, 3), 2.), reduce='add')
L.scatter(x, 0, L.tensor([0, 0, 0]), 1.)
L.scatter(x.long(), 0, i, 7.5)
L.scatter(x, 0, i, L.tensor(3.))
L.scatter(x, 0, L.zeros(1, 4, dtype=L.long), L.ones(1, 4))
L.scatter(x, 0, L.zeros(3, 1, dtype=L.long), L.ones(3, 1))
L.scatter(x, 0, i, src=L.ones(1, 3))
L.scatter(x, 0, i, value=3.)
L.scatter(x, 0, i.float(), 1.)
L.scatter(x, 0, L.zeros(3, 4, dtype=L.long), 1.)
L.scatter(x, 1, L.zeros(2, 5, dtype=L.long), 1.)
L.scatter(x, 0, L.tensor([[-1, 0, 0]]), 1.)
L.scatter(s, 0, L.tensor(0), 5.)
L.scatter(s, 0, L.tensor([0]), 5.)
L.scatter(x.bool(), 0, i, True)
L.scatter(x, 0, i, L.ones(2, 5))
L.scatter(x, 0, L.zeros(0, dtype=L.long), 1.)
L.scatter(x, 0, L.zeros(2, 0, dtype=L.long), 1.)
L.scatter(x.int(), 0, i, 2**40)
L.scatter_add(x, 0, L.tensor([[0, 0, 0], [0, 0, 0]]), L.ones(2, 3))
L.scatter_add(x, 0, i, L.ones(1, 3).double())
L.scatter_add(x.long(), 0, i, L.ones(1, 3))
L.scatter_add(x, 0, i, 1.)
L.scatter_add(x, 0, i.int(), L.ones(1, 3))
L.scatter_add(x, 0, i.float(), L.ones(1, 3))
L.scatter_add(x, 1, L.tensor([[0, 0], [2, 2]]), L.ones(2, 3))
x.masked_fill(x > 2, 1.5)
x.long().masked_fill(x > 2, 1.5)
x.masked_fill((x > 2).int(), 1.)
x.masked_fill((x > 2).byte(), 1.)
x.masked_fill(L.tensor([True, False, True]), 9.)
x.masked_fill(L.tensor([True, False]), 9.)
x.masked_fill(L.ones(2, 2, 3, dtype=L.bool), 9.)
x.long().masked_fill(x > 2, L.tensor(1.5))
x.masked_fill(x > 2, L.tensor(2, dtype=L.int64))
x.int().masked_fill(x > 2, 2**40)
x.masked_fill(x > 2, 1 + 1j)
x.masked_fill(x > 2, L.tensor([9.]))
L.masked_fill(s, L.tensor(True), 3.)
x.int().masked_fill(x > 2, L.tensor(2.5))
x.masked_fill(L.tensor(True), 3)
x.int().masked_fill(x > 1, L.tensor(2.5, dtype=L.float64))
x.bool().masked_fill(x > 1, 0.)
L.zeros(3, dtype=L.uint8).masked_fill(L.ones(3, dtype=L.bool), -255)
L.zeros(3, dtype=L.uint8).masked_fill(L.ones(3, dtype=L.bool), -256)
L.zeros(3, dtype=L.int8).masked_fill(L.ones(3, dtype=L.bool), 255)
L.zeros(3, dtype=L.float16).masked_fill(L.ones(3, dtype=L.bool), 1e6)
L.zeros(3, dtype=L.float16).masked_fill(L.ones(3, dtype=L.bool), float('inf'))
L.zeros(3, dtype=L.int64).masked_fill(L.ones(3, dtype=L.bool), float('nan'))
L.masked_select(x, x > 2)
L.masked_select(x, L.tensor([True, False, True]))
L.masked_select(x, L.ones(2, 2, 3, dtype=L.bool))
L.masked_select(x, (x > 2).int())
L.masked_select(s, L.tensor(True))
L.masked_select(x, L.tensor([True, False]))
L.nonzero(x)
L.nonzero(s)
L.nonzero(L.tensor(0.))
L.nonzero(s, as_tuple=True)
L.nonzero(L.tensor(0.), as_tuple=True)
L.nonzero(L.tensor([0., float('nan')]))
L.nonzero(L.zeros(2, 0))
L.tensor([1 + 0j, 0j]).nonzero()
L.nonzero(x, as_tuple=True)
L.take(x, L.tensor([[0, 5]]))
L.take(x, L.tensor([6]))
L.take(x, L.tensor([-6]))
L.take(x, L.tensor([-7]))
L.take(x, L.tensor([1.]))
L.take(x, L.tensor([1]).int())
L.take(s, L.tensor(0))
L.take(x, L.zeros(0, dtype=L.long))
L.index_add(x, 0, L.tensor([0, 0]), L.ones(2, 3))
L.index_add(x, 0, L.tensor([0, 0]), L.ones(2, 3), alpha=2)
L.index_add(x, 0, L.tensor([0]), L.ones(2, 3))
L.index_add(x, 0, L.tensor([0]), L.ones(1, 3).double())
L.index_add(x, 0, L.tensor([5]), L.ones(1, 3))
L.index_add(x, 0, L.tensor([0]).int(), L.ones(1, 3))
L.index_add(x, 1, L.tensor([0]), L.ones(3, 1))
L.index_add(x, 0, L.tensor([0]), L.ones(1, 3), alpha=0.5)
L.index_add(x.long(), 0, L.tensor([0]), L.ones(1, 3).long(), alpha=0.5)
L.index_add(x, 0, L.tensor([[0]]), L.ones(1, 3))
L.index_add(x, 0, L.tensor([0.]), L.ones(1, 3))
L.index_add(s, 0, L.tensor([0]), L.tensor(2.))
L.index_add(x, 0, L.tensor([-1]), L.ones(1, 3))
L.index_add(x, 1, L.tensor([2, 2, 0]), L.ones(2, 3))
L.take_along_dim(x, L.tensor([[0], [2]]), 1)
L.take_along_dim(x, L.tensor([5, 0]))
L.take_along_dim(x, L.tensor([[0, 1]]), 0)
L.take_along_dim(x, L.tensor([[2]]), 1)
L.take_along_dim(x, L.tensor([[[2]]]), 1)
L.take_along_dim(x, L.tensor([[2]]).int(), 1)
L.take_along_dim(x, L.tensor([[-1]]), 1)
L.take_along_dim(x, L.tensor([[0, 1]]), -1)
L.take_along_dim(s, L.tensor(0))
L.take_along_dim(s, L.tensor([0, 0]))
L.take_along_dim(x, L.tensor([[0]]), 2)
L.take_along_dim(x3, L.tensor([[[1], [0], [3]]]), 2)
x.index_fill(1, L.tensor([0, 2]), -1.)
x.index_fill(1, L.tensor([0, 2]), L.tensor(-1.))
x.index_fill(1, L.tensor([0, 2]), L.tensor([-1.]))
x.index_fill(1, L.tensor([[0]]), 1.)
x.index_fill(1, L.tensor([5]), 1.)
x.index_fill(1, L.tensor([-1]), 1.)
x.index_fill(1, L.tensor([0.]), 1.)
x.index_fill(1, L.tensor([0]).int(), 1.)
s.index_fill(0, L.tensor(0), 5.)
x.index_fill(1, L.tensor(1), 7)
x.int().index_fill(1, L.tensor(1), 2.5)
x.int().index_fill(1, L.tensor(1), 2**40)
x.index_copy(1, L.tensor([2, 0]), L.ones(2, 2))
x.index_copy(1, L.tensor([2, 0]), L.ones(2, 3))
x.index_copy(1, L.tensor([2, 0]), L.ones(2, 2).double())
x.index_copy(1, L.tensor([2, 0]).int(), L.ones(2, 2))
x.index_copy(1, L.tensor([5, 0]), L.ones(2, 2))
x.index_copy(1, L.tensor([-1, 0]), L.ones(2, 2))
x.index_copy(1, L.tensor([[2, 0]]), L.ones(2, 2))
x.index_copy(0, L.tensor(1), L.ones(3))
x.index_copy(0, L.tensor(1), L.ones(1, 3))
s.index_copy(0, L.tensor(0), L.tensor(5.))
"""

SETITEM_CASES = """
y[0] = L.ones(1, 3)
y[0] = L.ones(2, 3)
y[0] = L.ones(1, 1, 3)
y[0] = L.ones(2)
y[0] = L.ones(1, 2)
y[:] = L.ones(3)
y[0] = 1.7
y[0] = 1 + 2j
y[0] = L.tensor([1 + 2j] * 3)
y[[0, 1]] = L.ones(4)
y[y > 0] = L.tensor([1., 2.])
y[y == 0] = L.tensor([1., 2.])
y[::-1] = 1
y[5] = 1
y[L.tensor([0, 0])] = L.tensor([[1., 2, 3], [4, 5, 6]])
y[[0]] = L.ones(3).double()
y[[0]] = L.tensor(1., dtype=L.float64)
y[y == 0] = L.tensor(1)
y[y == 0] = L.ones(6, dtype=L.int64)
y[0] = L.ones(3).double()
y[[0]] = 5
y[L.tensor([True, False])] = L.ones(1, 3).half()
y[y == 0] = L.tensor([1.])
y[[0, 1], [0, 1]] = L.tensor([[1.], [2.]])
y[[0, 1], [0, 1]] = L.tensor([1., 2.])
y[:, [2, 0]] = L.tensor([[1., 2.], [3., 4.]])
y[0, [2, 0]] = 7
y[..., 1] = L.tensor([5., 6.])
y[None, 1] = 3
y[True] = 2
y[L.tensor(1)] = 4
y[1][2] = 9
y[:, 1:][0] = 8
z[0] = 1.7
z[0] = L.tensor(2.9)
z[1] = True
z[0] = float('nan')
z[:] = L.tensor([1.5, 2.5, 3.5])
z[0] = -2**63
z[z == 0] = 2.5
b[0] = 2
b[1] = 0.5
b[:] = L.tensor([0, 2, 0])
u[0] = -1
u[1] = 300
u[2] = -255
u[2] = -256
h[0] = 1e6
h[1] = float('inf')
s[...] = 5
s[()] = L.tensor(3)
s[0] = 1
s[None] = 2
s[True] = 7
s[False] = 7
c[0] = 1 + 2j
c[1] = L.tensor(3.)
c[:] = 1e300
y[[0, 0], [1, 1]] = L.tensor([1., 2.])
y[:, [True, False, True]] = L.tensor([[1., 2.]])
y[0, L.tensor([[0, 1]])] = L.tensor([[1., 2.]])
y[L.tensor([[True, False, True], [False, True, False]])] = 5
y[[1, 0]] = L.tensor([1., 2., 3.])
y[L.tensor([1, 0], dtype=L.int32)] = 3
y[1:, 1:] = y[:1, :2] + 1
"""

# PyTorch raises this deprecation warning once per process, we on every call (as
# Python's filters allow): its warnings are compared in test_scatter_reduce_warns.
WARNS_ONCE_IN_TORCH = "reduce='multiply')", "reduce='add')"


@pytest.mark.torch
@pytest.mark.parametrize("expression", (GETITEM_CASES + FUNCTION_CASES).strip().splitlines())
def test_matches_torch(expression):
    import torch
    ours, theirs = outcome(tm, expression, _names(tm)), outcome(torch, expression, _names(torch))
    if "L.full" in expression and expression.endswith(WARNS_ONCE_IN_TORCH):
        ours, theirs = ours[0], theirs[0]
    assert ours == theirs


def test_scatter_reduce_warns():
    with pytest.warns(UserWarning, match="The reduce argument of torch.scatter with Tensor src is deprecated"):
        tm.zeros(2).scatter(0, tm.tensor([0]), tm.ones(1), reduce="add")


def _setitem_names(L):
    return {"y": L.zeros(2, 3), "z": L.zeros(3, dtype=L.int64), "b": L.zeros(3, dtype=L.bool),
            "u": L.zeros(3, dtype=L.uint8), "h": L.zeros(3, dtype=L.float16), "s": L.tensor(1.),
            "c": L.zeros(2, dtype=L.complex64)}


@pytest.mark.torch
@pytest.mark.parametrize("statement", SETITEM_CASES.strip().splitlines())
def test_setitem_matches_torch(statement):
    import torch
    names = ("y", "z", "b", "u", "h", "s", "c")
    ours = outcome(tm, statement, _setitem_names(tm), statement=True, result_names=names)
    theirs = outcome(torch, statement, _setitem_names(torch), statement=True, result_names=names)
    assert ours == theirs

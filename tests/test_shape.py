"""Shape ops: views that share memory, joins, splits and reorderings: exact values,
dtypes, errors and edge cases (0-dim, empty, negative dims), with PyTorch as the
oracle for the cases marked ``torch``."""

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


# -- views share memory with their base --------------------------------------------------

VIEWS = {
    "view": lambda x: x.view(3, 4),
    "view_dtype": lambda x: x.view(tm.int32),
    "view_as": lambda x: x.view_as(tm.zeros(4, 3)),
    "reshape": lambda x: x.reshape(4, 3),
    "tm.reshape": lambda x: tm.reshape(x, (-1,)),
    "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "squeeze": lambda x: x.unsqueeze(0).squeeze(),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "permute": lambda x: x.permute(1, 0),
    "tm.permute": lambda x: tm.permute(x, (1, 0)),
    "transpose": lambda x: x.transpose(0, 1),
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "swapdims": lambda x: x.swapdims(1, 0),
    "t": lambda x: x.t(),
    "movedim": lambda x: x.movedim(0, 1),
    "moveaxis": lambda x: tm.moveaxis(x, 0, 1),
    "expand": lambda x: x.expand(2, 3, 4),
    "expand_as": lambda x: x.expand_as(tm.zeros(5, 3, 4)),
    "broadcast_to": lambda x: tm.broadcast_to(x, (2, 3, 4)),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(1, 2),
    "diagonal": lambda x: x.diagonal(1),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_memory_and_write_through(name):
    base = tm.zeros(3, 4)
    view = VIEWS[name](base)
    assert view._base is base
    assert shares_memory(view, base)
    view[...] = 1
    assert (base._data != 0).any()


@pytest.mark.parametrize("op", ["split", "chunk", "unbind"])
def test_split_family_returns_views(op):
    base = tm.zeros(4, 2)
    pieces = {"split": lambda: base.split(2), "chunk": lambda: base.chunk(2), "unbind": lambda: base.unbind()}[op]()
    assert isinstance(pieces, tuple)
    for piece in pieces:
        assert piece._base is base
    pieces[-1][...] = 5.0
    assert base._data[-1].tolist() == [5.0, 5.0]


def test_view_of_view_has_the_root_as_base():
    base = tm.zeros(2, 3)
    assert base.view(3, 2).t()._base is base


def test_expand_is_writable_and_aliases():
    base = tm.tensor([[1], [2]])
    expanded = base.expand(2, 3)
    assert expanded.stride() == (1, 0)
    assert expanded._data.flags.writeable
    expanded[0, 2] = 9  # one memory location behind the whole row
    assert base.tolist() == [[9], [2]]
    assert expanded.tolist() == [[9, 9, 9], [2, 2, 2]]


def test_diagonal_is_a_writable_view():
    x = tm.zeros(3, 3, dtype=tm.int64)
    d = x.diagonal()
    d[:] = tm.tensor([1, 2, 3])
    assert x.tolist() == [[1, 0, 0], [0, 2, 0], [0, 0, 3]]
    assert x.diagonal(-1, 1, 0).tolist() == [0, 0]


def test_reshape_copies_when_it_must():
    x = tm.zeros(2, 3)
    y = x.t().reshape(6)
    assert y._base is None and not shares_memory(x, y)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(6)


def test_copies_do_not_alias():
    x = tm.tensor([[1, 2], [3, 4]])
    for result in (x.flip(0), x.roll(1), x.repeat(1, 1), x.tile((1,)), x.clone(), x.tril(), tm.cat([x]),
                   tm.stack([x]), x.diag_embed()):
        assert not shares_memory(result, x)
        assert result._base is None


def test_detach_shares_memory_without_being_a_view():
    x = tm.tensor([1., 2.])
    y = x.detach()
    assert y._base is None and y is not x and shares_memory(x, y)


def test_contiguous():
    x = tm.tensor([[1, 2], [3, 4]])
    assert shares_memory(x.contiguous(), x)
    c = x.t().contiguous()
    assert c.is_contiguous() and c.stride() == (2, 1) and c.tolist() == [[1, 3], [2, 4]]
    assert not shares_memory(c, x)


def test_clone_preserves_strides():
    x = tm.zeros(2, 3).t()
    assert x.clone().stride() == x.stride() == (1, 3)


# -- values ------------------------------------------------------------------------------

def test_reshape_family_values():
    x = tm.tensor([[1, 2, 3], [4, 5, 6]])
    assert x.view(3, 2).tolist() == [[1, 2], [3, 4], [5, 6]]
    assert x.view((-1,)).tolist() == [1, 2, 3, 4, 5, 6]
    assert x.view([6, 1]).shape == (6, 1)
    assert x.reshape(6).tolist() == x.reshape((6,)).tolist() == tm.reshape(x, [6]).tolist()
    assert x.flatten().tolist() == [1, 2, 3, 4, 5, 6]
    assert tm.tensor(7).flatten().tolist() == [7]
    assert x.unflatten(1, (-1, 1)).shape == (2, 3, 1)
    assert tm.zeros(0, 3).view(-1, 3).shape == (0, 3)
    assert tm.zeros(2, 0, 3).flatten(0, 1).shape == (0, 3)


def test_view_dtype_reinterprets_bytes():
    x = tm.tensor([1.0], dtype=tm.float32)
    assert x.view(tm.int32).tolist() == [1065353216]
    assert tm.zeros(2, 4, dtype=tm.int8).view(tm.int32).shape == (2, 1)
    assert tm.zeros(2, dtype=tm.float64).view(tm.float32).shape == (4,)
    with pytest.raises(RuntimeError, match="must be divisible by 2"):
        tm.zeros(3, dtype=tm.float32).view(tm.float64)
    with pytest.raises(RuntimeError, match="self.dim\\(\\) cannot be 0"):
        tm.tensor(1.0).view(tm.float64)


def test_squeeze_unsqueeze():
    x = tm.zeros(1, 2, 1)
    assert x.squeeze().shape == (2,)
    assert x.squeeze(0).shape == (2, 1)
    assert x.squeeze(1).shape == (1, 2, 1)  # not of size 1: kept
    assert x.squeeze((0, -1)).shape == (2,)
    assert x.squeeze([]).shape == (1, 2, 1)
    assert tm.tensor(3.).squeeze(0).shape == ()
    assert tm.tensor(3.).unsqueeze(-1).shape == (1,)
    assert tm.zeros(2, 3).unsqueeze(-1).shape == (2, 3, 1)
    assert tm.zeros(2, 3).unsqueeze(-3).shape == (1, 2, 3)


def test_permute_and_transposes():
    x = tm.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])
    assert x.permute(2, 0, 1).tolist() == np.transpose(x._data, (2, 0, 1)).tolist()
    assert x.permute((-1, 0, 1)).tolist() == x.permute([2, 0, 1]).tolist()
    assert tm.permute(x, (2, 1, 0)).tolist() == x.transpose(0, 2).tolist()
    assert tm.tensor(1).t().shape == () and tm.tensor([1, 2]).t().tolist() == [1, 2]
    assert tm.movedim(tm.zeros(2, 3, 4), (0, 1), (2, 0)).shape == (3, 4, 2)
    assert tm.movedim(tm.zeros(2, 3, 4), -1, 0).shape == (4, 2, 3)


def test_expand_and_broadcasting():
    assert tm.tensor([1, 2]).expand(2, -1).tolist() == [[1, 2], [1, 2]]
    assert tm.tensor(5).expand(3).tolist() == [5, 5, 5]
    assert tm.tensor([[1], [2]]).expand((2, 2)).tolist() == [[1, 1], [2, 2]]
    assert tm.zeros(1, 3).expand(0, 3).shape == (0, 3)
    a, b = tm.broadcast_tensors(tm.tensor([[1], [2]]), tm.tensor([10, 20, 30], dtype=tm.int32))
    assert a.tolist() == [[1, 1, 1], [2, 2, 2]] and b.dtype is tm.int32 and b.shape == (2, 3)
    assert tm.broadcast_tensors() == ()


def test_cat_and_stack():
    a, b = tm.tensor([[1, 2]]), tm.tensor([[3, 4]])
    assert tm.cat([a, b]).tolist() == [[1, 2], [3, 4]]
    assert tm.cat((a, b), dim=-1).tolist() == [[1, 2, 3, 4]]
    assert tm.concat([a, b], 1).shape == tm.concatenate([a, b], 1).shape == (1, 4)
    assert tm.cat([a, tm.zeros(0)]).dtype is tm.float32  # legacy empty tensors join any shape
    assert tm.cat([tm.tensor([[1, 2]], dtype=tm.int32), tm.tensor([[True, False]])]).dtype is tm.int32
    assert tm.stack([a, b]).shape == (2, 1, 2)
    assert tm.stack([a, b], dim=-1).tolist() == [[[1, 3], [2, 4]]]
    assert tm.stack([tm.tensor(1), tm.tensor(2.5)]).tolist() == [1.0, 2.5]
    assert tm.hstack([tm.tensor([1, 2]), tm.tensor([3])]).tolist() == [1, 2, 3]
    assert tm.hstack([a, b]).tolist() == [[1, 2, 3, 4]]
    assert tm.vstack([tm.tensor([1, 2]), tm.tensor([3, 4])]).tolist() == [[1, 2], [3, 4]]
    assert tm.dstack([tm.tensor([1, 2]), tm.tensor([3, 4])]).tolist() == [[[1, 3], [2, 4]]]


def test_cat_out():
    out = tm.zeros(4, dtype=tm.int64)
    result = tm.cat([tm.tensor([1, 2]), tm.tensor([3, 4])], out=out)
    assert result is out and out.tolist() == [1, 2, 3, 4]


def test_split_chunk_unbind_values():
    x = tm.tensor([0, 1, 2, 3, 4])
    assert [t.tolist() for t in x.split(2)] == [[0, 1], [2, 3], [4]]
    assert [t.tolist() for t in tm.split(x, [1, 0, 4])] == [[0], [], [1, 2, 3, 4]]
    assert [t.tolist() for t in x.split(split_size=9)] == [[0, 1, 2, 3, 4]]
    assert [t.tolist() for t in x.chunk(3)] == [[0, 1], [2, 3], [4]]
    assert len(tm.tensor([0, 1, 2, 3, 4, 5]).chunk(4)) == 3  # fewer chunks than asked
    assert [t.shape for t in tm.zeros(0).chunk(2)] == [(0,), (0,)]
    assert [t.tolist() for t in tm.tensor([[1, 2], [3, 4]]).unbind(-1)] == [[1, 3], [2, 4]]
    assert tm.zeros(0, 2).unbind() == ()


def test_narrow_select():
    x = tm.tensor([[1, 2, 3], [4, 5, 6]])
    assert x.narrow(1, -2, 2).tolist() == [[2, 3], [5, 6]]
    assert x.narrow(0, tm.tensor(1), 1).tolist() == [[4, 5, 6]]
    assert x.narrow(1, 3, 0).shape == (2, 0)
    assert x.select(1, -1).tolist() == [3, 6]
    assert x.select(0, 0).select(0, 1).shape == ()


def test_flip_roll_repeat_tile():
    x = tm.tensor([[1, 2], [3, 4]])
    assert x.flip(0).tolist() == [[3, 4], [1, 2]]
    assert x.flip((0, 1)).tolist() == [[4, 3], [2, 1]]
    assert tm.flip(x, [-1]).tolist() == [[2, 1], [4, 3]]
    assert x.roll(1).tolist() == [[4, 1], [2, 3]]
    assert x.roll((1, -1), (0, 1)).tolist() == [[4, 3], [2, 1]]
    assert x.roll(-1, dims=1).tolist() == [[2, 1], [4, 3]]
    assert x.repeat(1, 2).tolist() == [[1, 2, 1, 2], [3, 4, 3, 4]]
    assert x.repeat(2, 1, 1).shape == (2, 2, 2)
    assert x.repeat(0, 1).shape == (0, 2)
    assert x.tile((2,)).tolist() == [[1, 2, 1, 2], [3, 4, 3, 4]]
    assert tm.tile(tm.tensor(3), (2,)).tolist() == [3, 3]
    # Tensor.tile takes its repeats as separate arguments too (PyTorch's method; torch.tile does not)
    assert x.tile(2, 1).tolist() == [[1, 2], [3, 4], [1, 2], [3, 4]] and x.tile(2).tolist() == x.tile((2,)).tolist()
    with pytest.raises(TypeError, match='^tile\\(\\) missing 1 required positional arguments: "dims"$'):
        x.tile()
    with pytest.raises(TypeError, match=r"^tile\(\) takes 2 positional arguments but 3 were given$"):
        tm.tile(x, 2, 1)


def test_triangles_and_diagonals():
    x = tm.ones(3, 3, dtype=tm.int64)
    assert x.tril(-1).tolist() == [[0, 0, 0], [1, 0, 0], [1, 1, 0]]
    assert x.triu(2).tolist() == [[0, 0, 1], [0, 0, 0], [0, 0, 0]]
    assert tm.tril(tm.ones(2, 2, 2)).sum().item() == 6
    y = tm.ones(2, 2)
    assert y.tril_() is y and y.tolist() == [[1, 0], [1, 1]]
    out = tm.zeros(2, 2)
    assert tm.triu(tm.ones(2, 2), out=out) is out and out.tolist() == [[1, 1], [0, 1]]
    assert tm.tensor([[1, 2, 3], [4, 5, 6]]).diagonal(1).tolist() == [2, 6]
    assert tm.zeros(2, 3, 4).diagonal(0, -1, 0).shape == (3, 2)
    assert tm.tensor([[1, 2], [3, 4]]).diag_embed().tolist() == [[[1, 0], [0, 2]], [[3, 0], [0, 4]]]
    assert tm.tensor([1, 2]).diag_embed(1).tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    assert tm.tensor([1, 2]).diag_embed(-1, 0, 1).tolist() == [[0, 0, 0], [1, 0, 0], [0, 2, 0]]


def test_more_splits_and_rotations():
    x = tm.tensor([[1, 2, 3], [4, 5, 6]])
    pieces = tm.tensor_split(x, 2, dim=1)
    assert [p.tolist() for p in pieces] == [[[1, 2], [4, 5]], [[3], [6]]] and pieces[0]._base is x
    assert [p.shape for p in x.tensor_split([1, 5], 1)] == [(2, 1), (2, 2), (2, 0)]
    assert [p.tolist() for p in tm.hsplit(x, 3)] == [[[1], [4]], [[2], [5]], [[3], [6]]]
    assert [p.tolist() for p in tm.vsplit(x, [1])] == [[[1, 2, 3]], [[4, 5, 6]]]
    assert tm.rot90(x, -1).tolist() == [[4, 1], [5, 2], [6, 3]]
    assert tm.fliplr(x).tolist() == [[3, 2, 1], [6, 5, 4]] and tm.flipud(x).tolist() == [[4, 5, 6], [1, 2, 3]]
    windows = tm.tensor([1, 2, 3, 4, 5]).unfold(0, 3, 2)
    assert windows.tolist() == [[1, 2, 3], [3, 4, 5]] and windows.stride() == (2, 1)
    assert tm.column_stack([tm.tensor([1, 2]), tm.tensor([[3, 4], [5, 6]])]).tolist() == [[1, 3, 4], [2, 5, 6]]
    assert tm.atleast_2d(tm.tensor(1), tm.tensor([1, 2]))[1].shape == (1, 2)


def test_meshgrid():
    x, y = tm.meshgrid(tm.tensor([1, 2]), tm.tensor([3, 4, 5]), indexing="ij")
    assert x.tolist() == [[1, 1, 1], [2, 2, 2]] and y.tolist() == [[3, 4, 5], [3, 4, 5]]
    x, y = tm.meshgrid(tm.tensor([1, 2]), tm.tensor([3, 4, 5]), indexing="xy")
    assert x.tolist() == [[1, 2], [1, 2], [1, 2]] and y.tolist() == [[3, 3], [4, 4], [5, 5]]
    with pytest.warns(UserWarning, match="required to pass the indexing argument"):
        grids = tm.meshgrid(tm.tensor([1]), tm.tensor([2, 3]))
    assert [g.shape for g in grids] == [(1, 2), (1, 2)]
    (only,) = tm.meshgrid(tm.tensor(4), indexing="ij")
    assert only.shape == (1,)


# -- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, message", [
    (lambda: tm.zeros(2, 3).reshape(4), RuntimeError, r"shape '\[4\]' is invalid for input of size 6"),
    (lambda: tm.zeros(2, 3).view(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda: tm.zeros(2, 3).view(2.0, 3), TypeError, "must be tuple of ints"),
    (lambda: tm.reshape(tm.zeros(6), 6), TypeError, "must be tuple of ints, not int"),
    (lambda: tm.zeros(2, 3).flatten(1, 0), RuntimeError, "start_dim cannot come after end_dim"),
    (lambda: tm.zeros(2, 3).unflatten(1, (2, 2)), RuntimeError, r"Provided sizes \[2, 2\] don't multiply up"),
    (lambda: tm.zeros(2, 3).squeeze(2), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\]"),
    (lambda: tm.zeros(2, 3).permute(0), RuntimeError, "input.dim\\(\\) = 2 is not equal to len\\(dims\\) = 1"),
    (lambda: tm.zeros(2, 3).permute(1, 1), RuntimeError, "duplicate dims are not allowed"),
    (lambda: tm.zeros(2, 3, 4).t(), RuntimeError, "t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D"),
    (lambda: tm.zeros(2, 3).expand(3, 3), RuntimeError,
     r"The expanded size of the tensor \(3\) must match the existing size \(2\) at non-singleton dimension 0"),
    (lambda: tm.zeros(2, 3).expand(3), RuntimeError, r"expand\(torch.FloatTensor\{\[2, 3\]\}, size=\[3\]\)"),
    (lambda: tm.zeros(2).expand(-1, 2), RuntimeError, "isn't allowed in a leading, non-existing dimension 0"),
    (lambda: tm.broadcast_tensors(tm.zeros(2), tm.zeros(3)), RuntimeError, "must match the size of tensor b"),
    (lambda: tm.cat([]), ValueError, "expected a non-empty list of Tensors"),
    (lambda: tm.cat([tm.zeros(2), tm.tensor(1.)]), RuntimeError, r"zero-dimensional tensor \(at position 1\)"),
    (lambda: tm.cat([tm.zeros(2, 3), tm.zeros(2, 2)]), RuntimeError,
     "Expected size 3 but got size 2 for tensor number 1 in the list"),
    (lambda: tm.stack([tm.zeros(2), tm.zeros(3)]), RuntimeError, r"but got \[2\] at entry 0 and \[3\] at entry 1"),
    (lambda: tm.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda: tm.zeros(4).split(0), RuntimeError, "split_size can only be 0 if dimension size is 0"),
    (lambda: tm.zeros(4).split([1, 2]), RuntimeError, "split_sizes to sum exactly to 4"),
    (lambda: tm.zeros(4).chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda: tm.tensor(1.).unbind(), IndexError, "Dimension specified as 0 but tensor has no dimensions"),
    (lambda: tm.zeros(2, 3).narrow(1, 2, 2), RuntimeError, r"start \(2\) \+ length \(2\) exceeds dimension size \(3\)"),
    (lambda: tm.zeros(2, 3).narrow(1, 4, 0), IndexError, "start out of range"),
    (lambda: tm.zeros(2, 3).select(0, 2), IndexError, r"select\(\): index 2 out of range for tensor of size \[2, 3\]"),
    (lambda: tm.zeros(2, 3).flip((0, 0)), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    (lambda: tm.zeros(2, 3).flip((1, 0, 1)), RuntimeError, "dim 1 appears multiple times"),
    (lambda: tm.zeros(2, 3).roll((1, 2), 0), RuntimeError, "shifts and dimensions must align"),
    (lambda: tm.zeros(2, 3).repeat(2), RuntimeError, "can not be smaller than number of dimensions"),
    (lambda: tm.zeros(3).tril(), RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    (lambda: tm.zeros(3, 3).diagonal(0, 1, -1), RuntimeError, "diagonal dimensions cannot be identical 1, -1"),
    (lambda: tm.movedim(tm.zeros(2, 3), (0, 0), (0, 1)), RuntimeError, r"repeated dim in `source` \(\[0, 0\]\)"),
    (lambda: tm.meshgrid(tm.zeros(2), indexing="yx"), RuntimeError, 'indexing must be one of "xy" or "ij"'),
    (lambda: tm.meshgrid(tm.zeros(2), tm.zeros(2, dtype=tm.int64), indexing="ij"), RuntimeError, "same dtype"),
])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# -- rules over all inputs ---------------------------------------------------------------

small_shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


@settings(max_examples=60, deadline=None)
@given(shape=small_shapes, data=st.data())
def test_reshape_round_trip_and_views(shape, data):
    array = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    x = tm.tensor(array)
    target = data.draw(st.permutations(list(shape)))
    y = x.view(*target) if target else x.view(())
    assert y.shape == tuple(target)
    assert y._base is x or not x.numel()  # the Tensor layer cannot see that empty arrays alias
    assert y.reshape(shape).tolist() == array.tolist()
    assert x.flatten().tolist() == array.reshape(-1).tolist()


@settings(max_examples=60, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=3))
def test_broadcast_tensors_matches_numpy(shapes):
    tensors = [tm.tensor(np.ones(s)) for s in shapes.input_shapes]
    results = tm.broadcast_tensors(*tensors)
    assert all(r.shape == shapes.result_shape for r in results)
    assert all(shares_memory(r, t) for r, t in zip(results, tensors, strict=True) if t.numel())


@settings(max_examples=60, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5), data=st.data())
def test_split_then_cat_is_identity(shape, data):
    array = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = data.draw(st.integers(1, 6))
    pieces = tm.tensor(array).split(size, dim)
    assert all(p.shape[dim] <= size for p in pieces)
    assert tm.cat(list(pieces), dim).tolist() == array.tolist()


@settings(max_examples=60, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=4, max_side=4), data=st.data())
def test_permute_inverse_and_flip_roll_involutions(shape, data):
    array = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    x = tm.tensor(array)
    order = data.draw(st.permutations(range(len(shape))))
    inverse = list(np.argsort(order))
    assert x.permute(*order).permute(*inverse).tolist() == array.tolist() if order else True
    assert x.flip(tuple(range(len(shape)))).flip(tuple(range(len(shape)))).tolist() == array.tolist()
    shift = data.draw(st.integers(-7, 7))
    assert x.roll(shift).roll(-shift).tolist() == array.tolist()


# -- cross-checks against PyTorch --------------------------------------------------------

def _names(L):
    return {
        "x": L.tensor([[0., 1., 2.], [3., 4., 5.]]),
        "x3": L.tensor(np.arange(24).reshape(2, 3, 4)),
        "s": L.tensor(5.),
        "v": L.tensor([1, 2, 3]),
        "np": np,
    }


SHAPE_CASES = """
x.reshape(4)
x.reshape(-1, -1)
x.reshape(-2, 3)
x.reshape(0, -1)
L.zeros(0, 3).reshape(0, -1)
x.t().view(6)
x.view(3, 2)
x.view(-1)
x.view(L.int32)
x.view(L.float64)
x.view(L.int16).shape
s.view(L.int16)
x.t().view(L.float16)
x.flatten(1, 0)
x.flatten(5)
x.flatten()
s.flatten()
x3.flatten(1)
x3.flatten(0, 1)
x3.flatten(-2)
x.unflatten(1, (2, 2))
x.unflatten(1, (-1, 3))
x.unflatten(1, ())
x.unflatten(1, (-1, 2))
x3.unflatten(-1, (2, 1, 2))
x.permute(0)
x.permute(0, 0)
x.permute(0, 5)
x.permute(1, 0)
x.permute((1, 0))
L.permute(x, (1, 0))
L.permute(x, (-1, 0))
L.permute(x3, [2, 0, 1])
x.expand(3, 3)
x.expand(3)
x.expand(-1, -1)
x.expand(2, -1, 3)
x.expand(-1, 2, 3)
x.expand(2, -2, 3)
x[:1].expand(4, 3)
v.expand(2, 3).stride()
L.broadcast_to(x, (3,))
L.broadcast_to(x, (2, 2, 3))
L.broadcast_to(s, (2,))
L.broadcast_to(x, 6)
L.cat([])
L.cat([x, x[0]])
L.cat([x, x[:, :2]])
L.cat([x, x[:, :2]], 1)
L.cat([x, s])
L.cat([x, L.zeros(0)])
L.cat([x, x.long()])
L.cat([x.long(), x.int()])
L.cat([x, x], 2)
L.cat([x, x], -1)
L.cat((v, v.bool()))
L.cat([L.zeros(0), L.zeros(0)])
L.stack([])
L.stack([x, x[0]])
L.stack([x, x], 3)
L.stack([x, x], -1)
L.stack([x.int(), x.bool()])
L.stack([s, s])
L.hstack([x[0], x[1]])
L.vstack([x[0], x[1]])
L.dstack([x, x])
L.hstack([L.tensor(1), L.tensor(2)])
L.vstack([L.tensor(1), L.tensor(2)])
L.dstack([L.tensor(1), L.tensor(2)])
L.dstack([x[0], x[1]])
L.hstack([x, x])
L.hstack([])
x.split(0)
x.split(-1)
L.zeros(0, 3).split(0)
x.split([1, 1], 1)
x.split([2, -1], 1)
x.split(2, 1)
x.split(5, 1)
L.split(x, [1, 2], dim=1)
L.split(x, 1, -1)
x.chunk(0)
x.chunk(-1)
x.chunk(2, 1)
L.tensor([0, 1, 2, 3, 4, 5]).chunk(4)
L.tensor([0, 1, 2, 3, 4]).chunk(4)
L.zeros(0).chunk(2)
s.chunk(1)
s.split(1)
x.narrow(1, 2, 2)
x.narrow(1, 5, 0)
x.narrow(1, -1, 1)
x.narrow(1, 1, -1)
x.narrow(1, -4, 1)
x.narrow(1, 3, 0)
x.narrow(1, L.tensor(1), 2)
x.select(0, 5)
x.select(0, -3)
x.select(1, -1)
s.select(0, 0)
x.unbind(2)
x.unbind(1)
s.unbind()
x.flip((0, 0))
x.flip(())
x.flip((0, 1))
L.flip(s, (0,))
x.roll((1, 2), 0)
x.roll(1, (0, 1))
x.roll((), ())
x.roll(1)
x.roll(-1, 1)
x.roll((1, 1), (0, 1))
L.roll(s, 1)
L.roll(s, 1, 0)
x.roll(1, 5)
x.repeat(2)
x.repeat(-1, 1)
x.repeat(2, 1, 1)
x.repeat(2, 2)
s.repeat(())
s.repeat(2)
L.tile(x, ())
L.tile(x, (-1,))
L.tile(x, (2,))
L.tile(x, (2, 1, 2))
x.tril(5)
x.tril(-1)
x.triu(1)
L.tensor([1, 2, 3]).tril()
x3.triu()
x3.bool().tril(1)
x.diagonal(0, 0, 0)
x.diagonal(0, 0, 2)
L.tensor([1, 2, 3]).diagonal()
x.diagonal(5)
x.diagonal(1)
x.diagonal(-1)
x.diagonal(offset=1, dim1=1, dim2=0)
x3.diagonal(0, -1, 0)
x3.diagonal(1, 2, 1)
x.diag_embed(1, 0, 0)
s.diag_embed()
x.diag_embed()
x.diag_embed(1)
x.diag_embed(-1, 0, 2)
L.movedim(x, (0, 1), (0,))
L.movedim(x, (0, 0), (0, 1))
L.movedim(x, (0, 1), (1, 1))
L.movedim(x, 2, 0)
L.movedim(x3, 0, -1)
L.movedim(x3, (0, 1), (2, 0))
L.moveaxis(x3, -1, 0)
L.meshgrid(L.tensor([1, 2]), L.tensor([1., 2.]), indexing='ij')
L.meshgrid(L.tensor([1, 2]), indexing='foo')
L.meshgrid(indexing='ij')
L.meshgrid(L.tensor(1), L.tensor([1, 2, 3]), indexing='xy')
L.meshgrid(L.tensor([1, 2]), L.tensor([1, 2, 3]), L.tensor([4, 5]), indexing='xy')
L.meshgrid(L.tensor([1, 2]), L.tensor([1, 2, 3]))
L.meshgrid([L.tensor([1, 2]), L.tensor([1, 2, 3])], indexing='xy')
L.meshgrid((L.tensor([1, 2]),), indexing='ij')
L.meshgrid([], indexing='ij')
x.unsqueeze(3)
x.unsqueeze(-4)
x.unsqueeze(-1)
x.squeeze(5)
x.squeeze((0, 0))
s.squeeze(0)
s.unsqueeze(-1)
L.zeros(1, 2, 1).squeeze((0, 2))
L.zeros(1, 2, 1).squeeze([])
L.zeros(1, 2, 1).squeeze()
L.zeros(1, 2, 1).squeeze(-1)
L.transpose(s, 0, -1)
s.t()
x3.t()
x.swapaxes(0, 2)
x.swapdims(0, 1)
x3.transpose(-1, 0)
L.broadcast_tensors(x, L.zeros(3, 1, 1))
L.broadcast_tensors(x, L.zeros(4))
L.broadcast_tensors()
L.broadcast_tensors(x.int(), L.zeros(3))
x.clone()
x.t().clone().stride()
x.t().contiguous().stride()
x.detach()
x.view_as(L.zeros(3, 2))
x[0].expand_as(x)
x.view_as(L.zeros(3))
x.reshape(3, 2)
x.reshape((6,))
L.reshape(x, (3, -1))
L.tensor_split(L.tensor([0, 1, 2, 3, 4, 5, 6]), 3)
L.tensor_split(L.tensor([0, 1, 2, 3, 4, 5, 6]), (1, 6))
L.tensor_split(x, 2, dim=1)
L.tensor_split(x, L.tensor(2), 1)
L.tensor_split(x, L.tensor([1]), 1)
L.tensor_split(x, 0)
L.tensor_split(x, (5, 1), 1)
L.tensor_split(s, 1)
L.tensor_split(x, (-1,), 1)
L.tensor_split(x, L.tensor([[1]]), 1)
L.tensor_split(x, L.tensor([1.]), 1)
L.tensor_split(x, 5, 1)
L.hsplit(s, 1)
L.vsplit(L.tensor([0, 1, 2]), 1)
L.hsplit(L.tensor([0, 1, 2, 3]), 2)
L.hsplit(x, 0)
L.vsplit(x, 4)
L.hsplit(x, [1, 2])
x.hsplit(3)
L.vsplit(x, [1])
L.dsplit(x, 1)
L.dsplit(x3, 2)
x.unfold(1, -1, 1)
x.unfold(2, 1, 1)
x.unfold(-1, 2, 2)
s.unfold(0, 2, 1)
s.unfold(0, 1, 1)
x.unfold(1, 2, 1)
x.unfold(0, 3, 1)
x.unfold(1, 2, 0)
x3.unfold(2, 2, 1)
L.flipud(s)
L.flipud(L.tensor([0, 1, 2]))
L.fliplr(L.tensor([0, 1, 2]))
L.fliplr(x)
L.flipud(x)
L.rot90(x)
L.rot90(x, 2)
L.rot90(x, -1, (1, 0))
L.rot90(x, 1, (0, 0))
L.rot90(x, 1, (0,))
L.rot90(L.tensor([0, 1, 2]))
L.rot90(x, 5)
L.rot90(x, 1, (0, 2))
L.rot90(x3, 1, [2, 0])
L.column_stack([])
L.column_stack([x, L.ones(3)])
L.column_stack([L.tensor([1, 2]), L.tensor([[3], [4]])])
L.column_stack([L.tensor(1), L.tensor(2)])
L.atleast_3d(L.tensor([1, 2]))
L.atleast_3d(L.tensor(1.))
L.atleast_2d()
L.atleast_1d(s)
L.atleast_2d(L.tensor([1., 2]))
L.atleast_3d(x)
L.atleast_1d(s, s)
L.atleast_3d(x3)
L.atleast_2d(L.zeros(0))
L.atleast_3d(L.zeros(0))
L.diff(L.tensor([[1, 4, 9], [2, 3, 1]]))
L.diff(L.tensor([[1, 4, 9], [2, 3, 1]]), dim=0)
L.diff(L.tensor([[1, 4, 9], [2, 3, 1]]), n=2)
L.diff(L.tensor([[1, 4, 9], [2, 3, 1]]), n=5)
L.diff(L.tensor([[1, 4, 9], [2, 3, 1]]), n=0)
L.diff(x, n=-1)
L.diff(L.tensor([[1, 4, 9], [2, 3, 1]]), prepend=L.tensor([[0], [0]]), append=L.tensor([[7], [7]]))
L.diff(L.tensor([[1, 4, 9], [2, 3, 1]]), prepend=L.tensor([0, 0]))
L.diff(L.tensor([[1, 4, 9], [2, 3, 1]]), prepend=L.tensor([[0.5], [0]]))
L.diff(L.tensor([[1, 4], [2, 3]]), prepend=L.tensor([[0, 1, 2]]))
L.diff(L.tensor([True, False, False]))
L.diff(L.tensor([1, 250], dtype=L.uint8))
L.diff(s)
x.diff(dim=1)
L.repeat_interleave(L.tensor([[1, 4, 9], [2, 3, 1]]), 2)
L.repeat_interleave(L.tensor([[1, 4, 9], [2, 3, 1]]), L.tensor([1, 2]), dim=0)
L.repeat_interleave(L.tensor([2, 0, 1]))
L.repeat_interleave(L.tensor([[1, 4, 9], [2, 3, 1]]), L.tensor([1, 2, 3]), dim=0)
L.repeat_interleave(x, -1)
L.repeat_interleave(x, 2, dim=1, output_size=6)
L.repeat_interleave(x, 2, dim=1, output_size=5)
L.repeat_interleave(x, L.tensor([[1, 2]]), dim=0)
L.repeat_interleave(x, L.tensor([1., 2.]), dim=0)
L.repeat_interleave(x, L.tensor(2), dim=0)
L.repeat_interleave(x, L.tensor([2]), dim=0)
L.repeat_interleave(x, L.tensor([1, -1, 1]), dim=1)
L.repeat_interleave(L.tensor([[1, 2]]))
L.repeat_interleave(L.tensor([1, -2]))
L.repeat_interleave(x, L.tensor([1, 2, 1, 1, 1, 1] * 4))
L.repeat_interleave(x, 2, dim=3)
L.repeat_interleave(s, 3)
x.repeat_interleave(2, 0)
L.diagflat(L.tensor([[1, 2], [3, 4]]), 1)
L.diagflat(L.tensor(5.), -1)
L.diagflat(L.zeros(0))
x.t().ravel()
L.ravel(s)
"""

# Cases where only the outcome's kind and exception type are compared, and why.
SHAPE_MESSAGE_DIFFERENCES = {
    "x.expand(2, -2, 3)": "PyTorch reports the internal 'numel: integer multiplication overflow' only sometimes",
    "L.broadcast_to(x, 6)": "PyTorch's argument parser names the position",
}


@pytest.mark.torch
@pytest.mark.parametrize("expression", [c for c in SHAPE_CASES.strip().splitlines()])
def test_matches_torch(expression):
    import torch
    ours = outcome(tm, expression, _names(tm))
    theirs = outcome(torch, expression, _names(torch))
    if expression in SHAPE_MESSAGE_DIFFERENCES:
        assert ours[0][:2] == theirs[0][:2]
    else:
        assert ours == theirs


@pytest.mark.torch
def test_writes_through_views_match_torch():
    import torch
    ours, theirs = tm.zeros(3, 4), torch.zeros(3, 4)
    for x in (ours, theirs):
        x.diagonal(1)[...] = 5
        x.unsqueeze(0).transpose(0, 2)[1] = 7
        x.view(4, 3).t().select(0, 1).narrow(0, 1, 2)[:] = 3
        x[2:].expand(2, 4)[0, 0] = -1
    assert ours.tolist() == theirs.tolist()


def test_diff_and_its_gradient():
    x = tm.tensor([[1, 4, 9], [2, 3, 1]])
    assert tm.diff(x).tolist() == [[3, 5], [1, -2]]
    assert tm.diff(x, n=2, prepend=tm.tensor([[0], [0]])).tolist() == [[2, 2], [-1, -3]]
    assert tm.diff(x, n=7).shape == (2, 0)
    assert tm.diff(tm.tensor([True, False, False])).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="^order must be non-negative but got -1$"):
        tm.diff(x, n=-1)
    w = tm.tensor([1.0, 2.0, 4.0], requires_grad=True)
    p = tm.tensor([0.5], requires_grad=True)
    tm.diff(w, n=2, prepend=p).backward(tm.tensor([1.0, 10.0]))  # [w1 - 2 w0 + p, w2 - 2 w1 + w0]
    assert w.grad.tolist() == [8.0, -19.0, 10.0] and p.grad.tolist() == [1.0]


def test_repeat_interleave_and_its_gradient():
    x = tm.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    repeats = tm.tensor([1, 2])
    y = tm.repeat_interleave(x, repeats, dim=0)
    assert y.tolist() == [[1.0, 2.0], [3.0, 4.0], [3.0, 4.0]]
    repeats.add_(1)  # the gradient keeps the positions, not the repeats (as PyTorch's composite)
    y.backward(tm.arange(6.0).reshape(3, 2))
    assert x.grad.tolist() == [[0.0, 1.0], [6.0, 8.0]]
    assert tm.repeat_interleave(tm.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    with pytest.raises(RuntimeError, match=r"^repeat_interleave: Invalid output_size, expected 6 but got 5$"):
        tm.repeat_interleave(x, 3, dim=1, output_size=5)
    with pytest.raises(TypeError, match="argument 'repeats' must be Tensor or int, not float"):
        tm.repeat_interleave(x, 2.0)
    assert tm.diagflat(tm.tensor([1, 2]), -1).tolist() == [[0, 0, 0], [1, 0, 0], [0, 2, 0]]
    assert tm.tensor([[1, 2], [3, 4]]).t().ravel().tolist() == [1, 3, 2, 4]


def test_resize_in_place():
    x = tm.arange(6.0)
    assert x.resize_(2, 2) is x and x.tolist() == [[0.0, 1.0], [2.0, 3.0]] and x._version == 1
    assert x.resize_((3,)).tolist() == [0.0, 1.0, 2.0]
    assert x.resize_(5).tolist() == [0.0, 1.0, 2.0, 0.0, 0.0]  # new elements: zeros here
    base = tm.arange(6.0)
    view = base[2:]
    view.resize_(2)  # shrinking keeps sharing memory
    view.fill_(9)
    assert base.tolist() == [0.0, 1.0, 9.0, 9.0, 4.0, 5.0]
    with pytest.raises(RuntimeError, match="cannot grow"):
        view.resize_(7)
    with pytest.raises(RuntimeError, match="^cannot resize variables that require grad$"):
        tm.ones(2, requires_grad=True).resize_(3)


@pytest.mark.torch
def test_out_resize_warning_matches_torch():
    import torch

    messages = []
    for library in (tm, torch):
        with pytest.warns(UserWarning) as caught:
            library.add(library.ones(10), 1, out=library.ones(12))
        messages.append(str(caught[0].message).split(" (Triggered internally")[0])
    assert messages[0] == messages[1]

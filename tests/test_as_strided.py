"""``as_strided`` (a view of the input's storage, with its gradient) and ``empty_strided``,
compared with PyTorch where installed."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.meta import meta_tensor


def test_as_strided_views_the_storage_and_writes_through():
    x = tm.arange(6.0)
    view = tm.as_strided(x, (2, 3), (1, 2))
    assert view.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    assert view._base is x and view.stride() == (1, 2) and view.storage_offset() == 0
    view[1, 2] = -1.0
    assert x[5].item() == -1.0


def test_as_strided_offsets_count_from_the_storage_not_the_view():
    x = tm.arange(6)
    tail = x[4:]
    assert tail.as_strided((2,), (1,)).tolist() == [4, 5]  # default: the input's own offset
    before = tail.as_strided((3,), (1,), 1)  # reaches storage before the view
    assert before.tolist() == [1, 2, 3] and before.storage_offset() == 1 and before._base is x
    assert tm.as_strided(x, (), (), 5).item() == 5
    assert tm.as_strided(x, (0, 2), (1, 1), 10).shape == (0, 2)  # no element: no bounds check


@pytest.mark.torch
@pytest.mark.parametrize("args", [
    ((2, 4), (1, 2)), ((2, 2), (-1, 2)), ((2, 2), (1,)), ((2, 2), (1, 1), -1), ((2, -2), (1, 1)),
    ((2, -2), (-1,)), ((-2,), (1,), -1), ((), (), 6), ([2.5], [1]), (2, 1), ((2,), (1,), 1.5),
])
def test_as_strided_errors_match_torch(args):
    import torch

    def outcome(library):
        try:
            library.as_strided(library.arange(6.0), *args)
        except Exception as error:  # noqa: BLE001 - the outcome compared
            return type(error), str(error)
        return None

    ours, theirs = outcome(tm), outcome(torch)
    assert ours is not None and ours[0] is theirs[0]
    if args != ((2,), (1,), 1.5):  # PyTorch's overload-resolution message lists the signatures
        assert ours[1] == theirs[1]


def test_as_strided_of_a_view_checks_the_whole_storage():
    x = tm.arange(6.0)
    assert x[:2].as_strided((6,), (1,)).tolist() == x.tolist()
    with pytest.raises(RuntimeError, match="requiring a storage size of 28 are out of bounds for storage of size 24"):
        x[:2].as_strided((7,), (1,))


_GRADIENT_CASES = [
    # (input maker, size, stride, storage_offset)
    (lambda lib, leaf: leaf, (2, 2), (1, 2), None),
    (lambda lib, leaf: leaf, (3, 2), (1, 1), 1),  # overlapping windows
    (lambda lib, leaf: leaf, (2, 3), (0, 1), None),  # a stride of 0
    (lambda lib, leaf: leaf[1:], (2, 2), (1, 2), 0),  # reaching outside the view
    (lambda lib, leaf: leaf.t(), (2, 2), (2, 1), None),  # a transposed input
    (lambda lib, leaf: leaf[:1].expand(3, 3), (2,), (1,), None),  # an input sharing elements
    (lambda lib, leaf: leaf[::2, 1:], (4,), (1,), 1),
]


@pytest.mark.torch
@pytest.mark.parametrize("case", range(len(_GRADIENT_CASES)))
def test_as_strided_gradient_matches_torch(case):
    import torch

    make, size, stride, offset = _GRADIENT_CASES[case]
    weights = np.arange(1.0, 1.0 + np.prod(size)).reshape(size)
    results = []
    for library in (tm, torch):
        leaf = library.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
        out = library.as_strided(make(library, leaf), size, stride, offset)
        assert type(out.grad_fn).__name__ == "AsStridedBackward0"
        (out * library.tensor(weights)).sum().backward()
        results.append((out.detach().numpy().copy(), leaf.grad.numpy().copy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_as_strided_backward_does_not_keep_the_input():
    x = tm.ones(2, 3, requires_grad=True)
    y = x * 2
    out = y.as_strided((2,), (1,), 1)
    y.add_(1)  # only the layout is saved: backward still runs, as PyTorch's does
    out.sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 2.0], [0.0, 0.0, 0.0]]


def test_as_strided_on_meta_keeps_the_layout_asked_for():
    x = tm.empty(4, 3, device="meta")
    view = x[1:].as_strided((2, 2), (1, 3), 2)
    assert view.is_meta and (view.shape, view.stride(), view.storage_offset()) == ((2, 2), (1, 3), 2)
    assert x[1:].as_strided((3,), (1,)).storage_offset() == 3
    with pytest.raises(RuntimeError, match="requiring a storage size of 52 are out of bounds for storage of size 48"):
        x[2:].as_strided((13,), (1,), 0)
    leaf = tm.empty(2, 3, device="meta", requires_grad=True)
    leaf.as_strided((2, 2), (0, 1)).sum().backward()
    assert leaf.grad.is_meta and leaf.grad.shape == (2, 3)


@pytest.mark.torch
@pytest.mark.parametrize("size, stride", [((2, 3), (1, 2)), ((2, 3), (0, 0)), ((0, 3), (4, 1)), ((), ()),
                                          ((2, 3), (4, 1)), ((3,), (2,))])
def test_empty_strided_layout_matches_torch(size, stride):
    import torch

    ours, theirs = tm.empty_strided(size, stride), torch.empty_strided(size, stride)
    assert (tuple(ours.shape), ours.stride(), ours.is_contiguous()) == (
        tuple(theirs.shape), theirs.stride(), theirs.is_contiguous())
    assert ours._data.base.nbytes == theirs.untyped_storage().nbytes()  # storage just large enough


@pytest.mark.torch
@pytest.mark.parametrize("args", [((2, -3), (1, 2)), ((2, 3), (1,)), ((2, 3), (1, -2)), ((2, -2), (-1,)),
                                  (2, 1), ((2,), [1.0])])
def test_empty_strided_errors_match_torch(args):
    import torch

    def outcome(library):
        try:
            library.empty_strided(*args)
        except Exception as error:  # noqa: BLE001 - the outcome compared
            return type(error), str(error)
        return None

    assert outcome(tm) == outcome(torch)


def test_empty_strided_on_meta_allocates_nothing():
    t = tm.empty_strided((1000, 1000, 1000), (1, 1000, 1000000), dtype=tm.float64, device="meta",
                         requires_grad=True)
    assert t.is_meta and t.stride() == (1, 1000, 1000000) and t.requires_grad and t.dtype is tm.float64
    assert tm.empty_strided((2, 3), (1, 2), dtype=tm.int32).dtype is tm.int32


def test_meta_tensor_is_empty_strided_without_an_offset():
    t = meta_tensor((2, 3), (1, 2), dtype=tm.float64)
    assert (t.stride(), t.storage_offset(), t.is_meta) == ((1, 2), 0, True)
    assert meta_tensor((2, 3), (1, 2), storage_offset=3).storage_offset() == 3


def test_repro_lines_use_empty_strided_for_strided_inputs():
    from tensormodes.meta import Record, validate
    from tensormodes.meta._records import encode

    x = tm.empty_strided((3, 3), (1, 3), device="meta")
    record = Record("tensormodes.Tensor.clone", [encode(x)], {}, result=encode(tm.empty(9, device="meta")),
                    context={"grad_enabled": False})
    (mismatch,) = validate([record]).mismatches
    assert "tm.empty_strided((3, 3), (1, 3), dtype=tm.float32, device='meta')" in mismatch.repro
    namespace = {"tm": tm}
    exec(mismatch.repro.replace("with tm.no_grad(): ", "result = "), namespace)  # noqa: S102 - our own line
    assert namespace["result"].stride() == (1, 3)

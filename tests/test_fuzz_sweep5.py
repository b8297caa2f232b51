"""Differences from PyTorch found by the differential fuzzer (issue 22, fifth sweep), each pinned
with PyTorch 2.13's own values, types and messages, so that these run without torch installed
too."""

from __future__ import annotations

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

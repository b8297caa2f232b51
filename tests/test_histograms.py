"""``histogram`` (``Tensor.histogram``; bins as a count or a tensor of edges, ``range``, ``weight``,
``density``) and ``histogramdd`` with its three ATen ops: exact values without an oracle, and
PyTorch's values, dtypes, errors, result types and dispatch-level calls on edge inputs (empty,
0-dim, NaN/Inf, half types, Python scalars, elements on edges, unsorted edges)."""

from __future__ import annotations

import math

import pytest

import tensormodes as tm
from tests.torch_oracle import assert_same_outcome

# -- exact values (no oracle) ------------------------------------------------------------------------


def test_histogram_counts_edges_and_the_closed_last_bin():
    result = tm.histogram(tm.tensor([0.0, 1.0, 1.0, 2.0, 3.0, 4.0]), 4)
    assert type(result).__name__ == "histogram" and result._fields == ("hist", "bin_edges")
    assert result.hist.tolist() == [1.0, 2.0, 1.0, 2.0]  # 4.0 lands in the last bin, which holds its right edge
    assert result.bin_edges.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    hist, edges = tm.tensor([1.0, 1.0]).histogram(2)  # one value: the range widened by a half each side
    assert hist.tolist() == [0.0, 2.0] and edges.tolist() == [0.5, 1.0, 1.5]


def test_histogram_with_edges_weights_and_density():
    x = tm.tensor([0.5, 1.0, 2.0, 7.0, math.nan, -1.0])
    hist, edges = tm.histogram(x, tm.tensor([0.0, 1.0, 3.0]), weight=tm.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    assert hist.tolist() == [1.0, 5.0] and edges.tolist() == [0.0, 1.0, 3.0]  # NaN and outsiders count nowhere
    density = tm.histogram(x, tm.tensor([0.0, 1.0, 3.0]), density=True).hist
    assert density.tolist() == [pytest.approx(1 / 3), pytest.approx(1 / 3)]  # (1 / 3 / 1, 2 / 3 / 2)


def test_histogram_errors_and_no_derivative():
    with pytest.raises(RuntimeError, match=r"torch.histogram\(\): bins must be > 0, but got 0 for dimension 0"):
        tm.histogram(tm.ones(3), 0)
    with pytest.raises(NotImplementedError, match="\"histogramdd\" not implemented for 'Half'"):
        tm.histogram(tm.ones(3, dtype=tm.float16), 2)
    with pytest.raises(RuntimeError, match=r"dimension 0's range \[1, inf\] is not finite"):
        tm.histogram(tm.tensor([1.0, math.inf]), 2)
    x = tm.ones(3, requires_grad=True)
    hist = tm.histogram(x, 2).hist
    assert hist.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::histogram is not implemented"):
        hist.sum().backward()


def test_histogramdd_counts_and_meta_shapes():
    points = tm.tensor([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.2, 0.9]])
    result = tm.histogramdd(points, [2, 1])
    assert result.hist.tolist() == [[2.0], [2.0]] and isinstance(result.bin_edges, tuple)
    assert [e.tolist() for e in result.bin_edges] == [[0.0, 0.5, 1.0], [0.0, 1.0]]
    meta = tm.histogramdd(tm.empty(5, 3, device="meta"), [2, 3, 4])
    assert meta.hist.shape == (2, 3, 4) and [e.shape for e in meta.bin_edges] == [(3,), (4,), (5,)]
    assert tm.histogram(tm.empty(7, device="meta"), tm.empty(4, device="meta")).hist.shape == (3,)


# -- against PyTorch ----------------------------------------------------------------------------------

_X = "L.tensor([0.5, -1.25, 3.0, 2.0, 2.0, 0.1, 7.5, -3.0, 0.0, 1.0 / 3.0])"
EDGE_EXPRESSIONS = [
    f"L.histogram({_X})",
    f"L.histogram({_X}, 7)",
    f"L.histogram({_X}.double(), 6)",
    f"L.histogram({_X}, 4, range=(0, 3))",
    f"L.histogram({_X}, 4, range=(-1.0, 2.5), density=True)",
    f"L.histogram({_X}, 3, weight=L.linspace(-1, 2, 10), density=True)",
    f"L.histogram({_X}.reshape(2, 5), 3, weight=L.linspace(0, 2, 10).reshape(5, 2))",
    f"L.histogram({_X}, L.tensor([-2.0, 0.0, 0.5, 2.0, 3.0]))",
    f"L.histogram({_X}, L.tensor([-2.0, 0.0, 0.5, 2.0, 3.0]), weight=L.arange(10.0), density=True)",
    f"L.histogram({_X}, L.tensor([2.0, 1.0, 5.0]))",
    f"L.histogram({_X}, L.tensor([0.0, 0.0, 1.0]))",
    f"{_X}.histogram(5)",
    f"{_X}.histogram(L.tensor([0.0, 1.0]))",
    "L.histogram(L.linspace(0, 1, 11), 10)",
    "L.histogram(L.linspace(0, 1, 101, dtype=L.float64), 7)",
    "L.histogram(L.tensor([0.1, 0.2, 0.3, 0.7, 1.0]), L.tensor([0.0, 0.3, 0.7, 1.0]))",
    "L.histogram(L.tensor([]), 3)",
    "L.histogram(L.tensor(2.0), 3)",
    "L.histogram(L.tensor([1.0, 1.0]), 2)",
    "L.histogram(L.tensor([1.0, nan]), 3)",
    "L.histogram(L.tensor([1.0, nan]), L.tensor([0.0, 1.0, 2.0]))",
    "L.histogram(L.tensor([1.0, inf, -inf]), L.tensor([-inf, 0.0, inf]))",
    "L.histogram(L.tensor([1.0, inf]), 3)",
    "L.histogram(L.ones(3), 0)",
    "L.histogram(L.ones(3), -1)",
    "L.histogram(L.ones(3), 3, range=(3.0, 0.0))",
    "L.histogram(L.ones(3), 3, range=(0.0, inf))",
    "L.histogram(L.ones(3), 3, range=(1.0,))",
    "L.histogram(L.ones(3), L.tensor([0.0, 1.0]).double())",
    "L.histogram(L.ones(3), L.tensor([[0.0, 1.0]]))",
    "L.histogram(L.ones(3), L.tensor([]))",
    "L.histogram(L.ones(3), L.tensor([0.0]))",
    "L.histogram(L.ones(3), 3, weight=L.ones(4))",
    "L.histogram(L.ones(3), 3, weight=L.ones(3).double())",
    "L.histogram(L.ones(3, dtype=L.float16), 3)",
    "L.histogram(L.ones(3, dtype=L.bfloat16), 3)",
    "L.histogram(L.ones(3, dtype=L.int64), 3)",
    "L.histogramdd(L.tensor([[1.0, 2.0], [1.0, 0.5], [3.0, 4.0], [2.0, 2.0]]), [2, 3])",
    "L.histogramdd(L.tensor([[1.0, 2.0], [1.0, 0.5], [3.0, 4.0]]).double(), (2, 2))",
    "L.histogramdd(L.tensor([[1.0, 2.0], [1.0, 0.5], [3.0, 4.0]]), 2, range=[0.0, 4.0, 0.0, 4.0], density=True)",
    "L.histogramdd(L.linspace(-1, 1, 24).reshape(2, 4, 3), [2, 3, 1], weight=L.linspace(0, 1, 8).reshape(2, 4))",
    "L.histogramdd(L.tensor([[1.0, 2.0], [1.0, 0.5], [3.0, 4.0]]), [L.tensor([0.0, 1.0, 5.0]), "
    "L.tensor([0.0, 2.0, 4.0])], weight=L.tensor([1.0, 2.0, 3.0]), density=True)",
    "L.histogramdd(L.ones(0, 2), 2)",
    "L.histogramdd(L.tensor([[1.0, nan]]), [L.tensor([0.0, 2.0]), L.tensor([0.0, 2.0])])",
    "L.histogramdd(L.ones(3), 2)",
    "L.histogramdd(L.ones(3, 2), [2])",
    "L.histogramdd(L.ones(3, 2), [2, 0])",
    "L.histogramdd(L.ones(3, 2), 2, range=[0.0, 1.0])",
    "L.histogramdd(L.ones(3, 2), 2, weight=L.ones(3, 1))",
    "L.histogramdd(L.ones(3, 2), [L.tensor([0.0, 1.0])])",
    "L.histogramdd(L.ones(3, 2, dtype=L.float16), 2)",
    "L._histogramdd_bin_edges(L.tensor([[1.0, 2.0], [1.0, 0.5]]), [2, 3], range=[0.0, 1.0, 0.0, 3.0])",
    "L._histogramdd_from_bin_cts(L.tensor([[1.0, 2.0], [1.0, 0.5]]), [2, 3], density=True)",
    "L._histogramdd_from_bin_tensors(L.tensor([[1.0, 2.0], [1.0, 0.5]]), [L.tensor([0.0, 2.0]), "
    "L.tensor([0.0, 1.0, 3.0])])",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", EDGE_EXPRESSIONS)
def test_edge_cases_match_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression)


@pytest.mark.torch
@pytest.mark.parametrize("seed", range(4))
def test_random_data_on_and_near_edges_match_torch(seed):
    """Values drawn on the edges of ``linspace`` bins and one ulp around them (where the linear map
    and the search over the edges disagree), counts bit for bit."""
    torch = pytest.importorskip("torch")
    generator = torch.Generator().manual_seed(seed)
    edges = torch.linspace(-1.3, 2.7, 12)
    near = torch.cat([edges, edges.nextafter(torch.tensor(-10.0)), edges.nextafter(torch.tensor(10.0)),
                      torch.rand(50, generator=generator) * 4 - 1.3])
    for bins in (11, 7, 3):
        theirs = torch.histogram(near, bins, range=(-1.3, 2.7))
        ours = tm.histogram(tm.tensor(near.numpy()), bins, range=(-1.3, 2.7))
        assert ours.hist.tolist() == theirs.hist.tolist() and ours.bin_edges.tolist() == theirs.bin_edges.tolist()
        assert tm.histogram(tm.tensor(near.numpy()), tm.tensor(edges.numpy())).hist.tolist() == \
            torch.histogram(near, edges).hist.tolist()


@pytest.mark.torch
def test_histogramdd_reaches_pytorchs_aten_ops():
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    from tensormodes.utils._python_dispatch import TorchDispatchMode as OurMode

    seen = []
    for library, base in ((tm, OurMode), (torch, TorchMode)):
        class Recorder(base):
            calls: list[str] = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.calls.append(str(func))
                return func(*args, **(kwargs or {}))

        points = library.tensor([[1.0, 2.0], [0.5, 0.25]])
        edges = [library.tensor([0.0, 1.0]), library.tensor([0.0, 3.0])]
        with Recorder() as recorder:
            library.histogramdd(points, 2, range=[0.0, 1.0, 0.0, 3.0])
            library.histogramdd(points, edges)
            library.histogram(points, 3)
            points.histogram(edges[1])
        seen.append([call for call in recorder.calls if "lift_fresh" not in call])
    assert seen[0] == seen[1]

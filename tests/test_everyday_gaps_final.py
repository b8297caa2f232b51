"""Issue 26's last gaps: the top-level in-place functions (``tm.sigmoid_``, ``tm.abs_`` ..., from
the op table's declarations), ``Tensor.sum_to_size``, the legacy constructor ``Tensor.new``, and
``tm.cov`` / ``tm.corrcoef`` as PyTorch's composites — exact values, and PyTorch's results, errors,
gradients and dispatch-level calls when it is installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm
from tensormodes._ops import OPS
from tensormodes.utils._python_dispatch import TorchDispatchMode
from tests.torch_oracle import assert_same_outcome


class _FunctionLog(tm.overrides.TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen.append(func)
        return func(*args, **(kwargs or {}))


class _AtenLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


# -- top-level in-place functions -------------------------------------------------------------------

INPLACE_FUNCTIONS = sorted(opdef.inplace for opdef in OPS.values() if opdef.inplace_function)


def test_inplace_functions_come_from_the_declarations():
    assert {"abs_", "sigmoid_", "clamp_", "clip_", "arccos_", "fix_", "negative_", "index_put_", "xlogy_"} <= \
        set(INPLACE_FUNCTIONS)
    assert "add_" not in INPLACE_FUNCTIONS and not hasattr(tm, "add_") and not hasattr(tm, "mul_")  # as PyTorch
    for name in INPLACE_FUNCTIONS:
        assert getattr(tm, name).__name__ == name and name in tm.__all__ and name in dir(tm)
    assert tm.fill_ is tm.fill_ and tm.zero_.__module__ == "tensormodes"  # method-only ops made functions


def test_inplace_functions_write_their_input():
    x = tm.tensor([-1.0, 0.0, 2.0])
    assert tm.abs_(x) is x and x.tolist() == [1.0, 0.0, 2.0]
    assert tm.sigmoid_(input=x) is x and x._version == 2
    assert tm.clamp_(tm.tensor([-2.0, 3.0]), min=-1, max=1).tolist() == [-1.0, 1.0]
    assert tm.clip_(tm.tensor([-2.0, 3.0]), 0).tolist() == [0.0, 3.0]
    assert tm.fix_(tm.tensor([-1.5, 1.5])).tolist() == [-1.0, 1.0]
    assert tm.round_(tm.tensor([1.26]), decimals=1).tolist() == pytest.approx([1.3])
    assert tm.fill_(tm.zeros(2), 3).tolist() == [3.0, 3.0] and tm.zero_(tm.ones(2)).tolist() == [0.0, 0.0]
    assert tm.xlogy_(tm.tensor([0.0, 2.0]), tm.tensor([0.0, 1.0])).tolist() == [0.0, 0.0]
    assert tm.gcd_(tm.tensor([4, 9]), tm.tensor([6, 6])).tolist() == [2, 3]
    target = tm.zeros(3)
    assert tm.index_put_(target, (tm.tensor([0, 2]),), tm.tensor(5.0)).tolist() == [5.0, 0.0, 5.0]


def test_inplace_functions_check_and_record_like_the_method():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tm.sqrt_(tm.tensor([1, 4]))
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        tm.abs_(tm.ones(1), out=tm.ones(1))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        tm.exp_(tm.ones(1, requires_grad=True))
    leaf = tm.tensor([0.0, 1.0], requires_grad=True)
    y = leaf * 2
    assert tm.tanh_(y) is y and y.grad_fn.name() == "TanhBackward0"
    y.sum().backward()
    assert leaf.grad.tolist() == pytest.approx([2.0, 2 * (1 - np.tanh(2.0) ** 2)])


def test_modes_see_the_function_and_the_dispatch_level_the_inplace_overload():
    x = tm.tensor([-1.0])
    with _FunctionLog() as log:
        tm.abs_(x)
        tm.fill_(x, 1.0)
    assert log.seen == [tm.abs_, tm.fill_]
    with _AtenLog() as aten:
        tm.abs_(x)
        tm.fill_(x, 2)
    assert aten.seen == ["aten.abs_.default", "aten.fill_.Scalar"]
    assert tm.overrides.resolve_name(tm.sigmoid_) == "tensormodes.sigmoid_"
    assert tm.abs_ in tm.overrides.get_overridable_functions()[tm]
    assert tm.overrides.get_testing_overrides()[tm.clamp_](1) == -1


INPLACE_NODES = {  # expression (x: a leaf requiring grad) -> PyTorch's node
    "(x * 1).arccos_()": "AcosBackward0", "L.arccos_(x * 1)": "AcosBackward0", "(x * 1).absolute_()": "AbsBackward0",
    "L.fix_(x * 1)": "TruncBackward0", "(x * 1).clip_(0, 1)": "ClampBackward1", "(x * 1).divide_(2)": "DivBackward0",
    "(x * 1).multiply_(2)": "MulBackward0", "(x * 1).subtract_(x)": "SubBackward0",
    "L.clamp_(x * 1, L.tensor(0.0), L.tensor(1.0))": "ClampBackward0", "(x * 1).clamp_min_(0.0)": "ClampMinBackward0",
    # out of place too: an alias records its op's node, as PyTorch's composite aliases
    "L.true_divide(x, 2)": "DivBackward0", "L.swapaxes(x[None], 0, 1)": "TransposeBackward0",
    "L.swapdims(x[None], 0, 1)": "TransposeBackward0", "L.negative(x)": "NegBackward0",
    "L.concat([x, x])": "CatBackward0", "L.concatenate([x, x])": "CatBackward0", "L.clip(x, 0, 1)": "ClampBackward1",
    "L.arccos(x)": "AcosBackward0",
}


def test_aliases_and_inplace_forms_record_the_node_of_their_op():
    for library_face in (False, True):
        x = tm.tensor([0.5], requires_grad=True)
        with _AtenLog() if library_face else _FunctionLog():  # the dispatch level records them alike
            names = {code: eval(code, {"L": tm, "x": x}).grad_fn.name() for code in INPLACE_NODES}
        assert names == INPLACE_NODES


@pytest.mark.torch
def test_inplace_nodes_are_pytorchs():
    torch = pytest.importorskip("torch")
    x = torch.tensor([0.5], requires_grad=True)
    assert {code: eval(code, {"L": torch, "x": x}).grad_fn.name() for code in INPLACE_NODES} == INPLACE_NODES


def test_traced_inplace_functions_are_kept_as_mutations():
    def f(x):
        y = x * 2
        tm.sigmoid_(y)  # its result unused: a mutation, never dead code
        return y

    gm = tm.fx.symbolic_trace(f)
    gm.graph.eliminate_dead_code()
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][-1] is tm.sigmoid_
    assert gm(tm.tensor([0.0])).tolist() == [0.5]


@pytest.mark.torch
def test_the_inplace_functions_are_pytorchs():
    torch = pytest.importorskip("torch")
    theirs = {name for name in dir(torch) if name.endswith("_") and not name.startswith("_")}
    ours = {name for name in dir(tm) if name.endswith("_") and not name.startswith("_") and callable(getattr(tm, name))}
    assert ours <= theirs
    # what is left: a sparse form (detach_, conj_physical_, resize_as_ came with tensorapi)
    assert theirs - ours == {"resize_as_sparse_"}


@pytest.mark.torch
@pytest.mark.parametrize("name", INPLACE_FUNCTIONS)
def test_each_inplace_function_matches_pytorch(name):
    pytest.importorskip("torch")
    extra = {"clamp_": ", -0.3, 0.4", "clip_": ", -0.3, 0.4", "clamp_max_": ", 0.2", "clamp_min_": ", 0.2",
             "xlogy_": ", L.tensor([0.5, 2.0, 3.0])", "ldexp_": ", L.tensor([1, 2, 3])",
             "index_put_": ", (L.tensor([0, 2]),), L.tensor(5.0)", "fill_": ", 2.5",
             "addmv_": ", L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), L.tensor([0.5, -1.0])",
             "as_strided_": ", (2,), (2,)"}.get(name, "")
    data = "L.tensor([4, 6, 9])" if name in ("gcd_", "lcm_") else "L.tensor([0.25, 0.5, 0.75])"
    if name in ("gcd_", "lcm_"):
        extra = ", L.tensor([6, 4, 6])"
    assert_same_outcome(f"(lambda x: (L.{name}(x{extra}), x))({data})", rtol=1e-6, atol=1e-7)
    # an integer tensor takes no float result (clamp's and ldexp's methods word that error differently from
    # PyTorch's: "long int" for scalar bounds, "ldexp can't be cast")
    if name not in ("fill_", "zero_", "index_put_", "gcd_", "lcm_", "clamp_", "clamp_min_", "clamp_max_", "clip_",
                    "ldexp_"):
        assert_same_outcome(f"L.{name}(L.tensor([1, 2]){extra})")


# -- Tensor.sum_to_size ------------------------------------------------------------------------------


def test_sum_to_size_values_gradients_and_identity():
    x = tm.arange(24.0).view(2, 3, 4).requires_grad_()
    assert x.sum_to_size(3, 1).tolist() == [[60.0], [92.0], [124.0]]
    assert x.sum_to_size((2, 1, 4)).grad_fn.name() == "SumBackward1"
    assert x.sum_to_size(size=[1, 4]).grad_fn.name() == "ViewBackward0"
    assert x.sum_to_size(tm.Size([])).item() == 276.0 and x.sum_to_size(4).shape == (4,)
    assert x.sum_to_size(2, 3, 4) is x
    assert tm.autograd.grad(x.sum_to_size(3, 1).sum() * 2, x)[0].unique().tolist() == [2.0]
    assert tm.ones(2, 3, dtype=tm.int32).sum_to_size(1, 3).tolist() == [[2, 2, 2]]
    assert tm.ones(2, 3, device="meta").sum_to_size(3).shape == (3,)
    with pytest.raises(RuntimeError, match=r"^size \{\[3, 3\]\} is not expandable to size \{\[2, 3, 4\]\}\.$"):
        x.sum_to_size(3, 3)
    with pytest.raises(RuntimeError, match=r"size \{\[1\]\} is not expandable to size \{\[\]\}"):
        tm.tensor(1.0).sum_to_size(1)
    with pytest.raises(TypeError, match=r"sum_to_size\(\): argument 'size' \(position 1\) must be tuple of ints, "
                                        r"not float"):
        x.sum_to_size(2.0)


def test_sum_to_size_reaches_the_dispatch_level_as_pytorchs_composite():
    x = tm.ones(2, 3)
    with _FunctionLog() as log, _AtenLog() as aten:
        x.sum_to_size(3)
    assert log.seen == [tm.Tensor.sum_to_size]
    assert aten.seen == ["aten.sum.dim_IntList", "aten.view.default"]


SUM_TO_SIZE_CASES = [
    "x.sum_to_size(3, 1)", "x.sum_to_size((2, 1, 4))", "x.sum_to_size(size=(1, 4))", "x.sum_to_size(())",
    "x.sum_to_size(1)", "x.sum_to_size(L.Size([3, 4]))", "x.sum_to_size(L.tensor(4))", "x.sum_to_size(np.int64(4))",
    "x.sum_to_size(4, True)", "x.sum_to_size([])", "x.sum_to_size(3, 1).grad_fn.name()",
    "L.zeros(0, 4).sum_to_size(1, 4)",
    "x.sum_to_size(3, 3)", "x.sum_to_size(5, 2, 3, 4)", "x.sum_to_size(-1)", "x.sum_to_size(0, 4)",
    "x.sum_to_size('a')", "x.sum_to_size((3,), (4,))", "x.sum_to_size()", "x.sum_to_size(3, 4.0)",
    "x.sum_to_size([3, 4.0])", "x.sum_to_size(L.tensor(4.0))", "x.sum_to_size(size=4)",
    "x.sum_to_size(4, size=[4])", "x.sum_to_size(True)", "x.sum_to_size(None)", "x.sum_to_size(np.array([3, 4]))",
    "L.tensor(1.0).sum_to_size(())",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", SUM_TO_SIZE_CASES)
def test_sum_to_size_matches_pytorch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(f"(lambda x: {expression})(L.arange(24.0).view(2, 3, 4).requires_grad_())")


# -- Tensor.new --------------------------------------------------------------------------------------


def test_new_forms_keep_dtype_and_device():
    x = tm.tensor([1, 2], dtype=tm.int32)
    assert x.new([1.7, 2]).tolist() == [1, 2] and x.new([1.7, 2]).dtype == tm.int32
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == tm.int32
    assert x.new().shape == (0,) and x.new(size=[2]).shape == (2,) and x.new(tm.Size([2, 3])).shape == (2, 3)
    assert x.new((2, 3)).tolist() == [2, 3]  # a tuple is data; a Size, sizes
    assert x.new(np.array([1.5, 2.0])).tolist() == [1, 2] and x.new(range(3)).tolist() == [0, 1, 2]
    assert x.new(tm.tensor([2]), 3).shape == (2, 3)  # one-element integer tensors count as ints
    assert tm.zeros(1, device="meta").new(3).device.type == "meta"
    f = tm.tensor([1.5], dtype=tm.float64, requires_grad=True)
    assert not f.new(2).requires_grad and f.new([1]).dtype == tm.float64
    alias = f.new(f)
    assert alias is not f and alias._base is f and alias.requires_grad and alias.grad_fn.name() == "AliasBackward0"
    same = x.new(x)
    same[0] = 7
    assert x.tolist() == [7, 2] and x._version == same._version == 1


def test_new_errors():
    x = tm.tensor([1, 2], dtype=tm.int32)
    with pytest.raises(TypeError, match=r"^expected TensorOptions\(dtype=int, device=cpu, layout=Strided, "
                                        r"requires_grad=false \(default\), pinned_memory=false \(default\), "
                                        r"memory_format=\(nullopt\)\) \(got TensorOptions\(dtype=float, "):
        x.new(tm.tensor([1.5]))
    with pytest.raises(TypeError, match=r"new\(\): data must be a sequence \(got float\)"):
        x.new(2.5)
    with pytest.raises(TypeError, match=r"new\(\): invalid data type 'str'"):
        x.new("a")
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -1: \[2, -1\]"):
        x.new(2, -1)
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu but device type: meta"):
        x.new(2, device="meta")
    with pytest.raises(RuntimeError, match=r"tensor.new\(tensor, device=device\) is not supported.  Use "
                                           r"tensormodes.as_tensor"):
        x.new(x, device="cpu")
    with pytest.raises(TypeError, match=r"^new\(\) received an invalid combination of arguments - got "
                                        r"\(int, dtype=tensormodes.dtype\), but expected one of:"):
        x.new(2, dtype=tm.float32)


def test_new_reaches_the_dispatch_level_as_pytorchs():
    x = tm.tensor([1.0, 2.0])
    with _FunctionLog() as log, _AtenLog() as aten:
        x.new(2, 3)
        x.new([1, 2])
        x.new(x)
    assert log.seen == [tm.Tensor.new] * 3
    assert aten.seen == ["aten.empty.memory_format", "aten.lift_fresh.default", "aten.alias.default"]


NEW_CASES = [
    "x.new()", "x.new(2, 3).shape", "x.new([1, 2])", "x.new([1.7, 2])", "x.new((2, 3))", "x.new(L.Size([2, 3])).shape",
    "x.new([[1, 2], [3, 4]])", "x.new(size=(2,)).shape", "x.new(2, device='cpu').shape", "x.new([True])",
    "x.new(())", "x.new([])", "x.new(0)", "x.new(1, 2, 3, 4, 5, 6, 7).shape", "x.new((2,),)",
    "x.new(x)._base is x", "x.new(L.tensor([2]), 3).shape", "x.new(2, L.tensor(3)).shape",
    "x.new(np.int64(2)).shape", "x.new(np.array(2)).shape", "x.new(L.Size([])).shape", "x.new(other=x)",
    "x.new(data=[1])", "x.new(device='cpu')", "x.new(range(3))", "x.new(np.array([1.5, 2]))",
    "L.zeros(2, dtype=L.bfloat16).new([1.5])", "str(L.zeros(2, device='meta').new(3).device)",
    "x.new(L.tensor([1.5, 2.0]))", "x.new(L.tensor(3))", "x.new(2.5)", "x.new('a')", "x.new(-1)", "x.new(True)",
    "x.new(None)", "x.new(np.float64(2))", "x.new(iter([1]))", "x.new({1: 2})", "x.new(2, [3])", "x.new(2, 3.0)",
    "x.new(2, device='meta')", "x.new([1], device='cuda')", "x.new(x, device='cpu')", "L.zeros(1).new([[1], [2, 3]])",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", NEW_CASES)
def test_new_matches_pytorch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(f"(lambda x: {expression})(L.tensor([1, 2], dtype=L.int32))")


# -- cov and corrcoef --------------------------------------------------------------------------------

DATA = [[1.0, 2.0, 4.0], [0.0, 1.0, 1.0]]


def test_cov_and_corrcoef_values():
    x = tm.tensor(DATA, dtype=tm.float64)
    np.testing.assert_allclose(tm.cov(x).tolist(), [[7 / 3, 2 / 3], [2 / 3, 1 / 3]], rtol=1e-15)
    np.testing.assert_allclose(tm.cov(x, correction=0).tolist(), [[14 / 9, 4 / 9], [4 / 9, 2 / 9]], rtol=1e-15)
    assert tm.cov(x[0]).item() == pytest.approx(7 / 3) and tm.cov(x[0]).shape == ()
    # fweights repeat observations: the same as the data written out
    repeated = tm.tensor([[1.0, 2.0, 2.0, 4.0], [0.0, 1.0, 1.0, 1.0]], dtype=tm.float64)
    np.testing.assert_allclose(tm.cov(x, fweights=tm.tensor([1, 2, 1])).tolist(), tm.cov(repeated).tolist())
    np.testing.assert_allclose(tm.corrcoef(x).tolist(), [[1.0, 2 / 7 ** 0.5], [2 / 7 ** 0.5, 1.0]], rtol=1e-15)
    assert tm.corrcoef(x[0]).item() == 1.0
    np.testing.assert_allclose(x.cov(aweights=tm.tensor([1.0, 1.0, 1.0], dtype=tm.float64)).tolist(),
                               tm.cov(x).tolist(), rtol=1e-15)
    assert x.corrcoef().tolist() == tm.corrcoef(x).tolist()
    assert tm.cov(tm.tensor([[1, 2], [3, 5]], dtype=tm.int32)).dtype == tm.float32


def test_cov_errors_and_warning():
    ones = tm.ones(2, 3)
    with pytest.raises(RuntimeError, match="cov\\(\\): expected input to have two or fewer dimensions but got an "
                                           "input with 3 dimensions"):
        tm.cov(tm.zeros(2, 2, 2))
    with pytest.raises(RuntimeError, match="cov\\(\\): expected fweights to have integral dtype but got fweights "
                                           "with Float dtype"):
        tm.cov(ones, fweights=tm.ones(3))
    with pytest.raises(RuntimeError, match="cov\\(\\): aweights cannot be negative"):
        tm.cov(ones, aweights=-tm.ones(3))
    with pytest.raises(RuntimeError, match="cov\\(\\): weights sum to zero, can't be normalized"):
        tm.cov(ones, fweights=tm.zeros(3, dtype=tm.int64))
    with pytest.raises(TypeError, match="cov\\(\\): argument 'correction' must be int, not float"):
        tm.cov(ones, correction=1.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tm.cov(tm.tensor([[1.0, 2.0, 3.0]]), correction=3).item() == float("inf")
    assert [str(w.message) for w in caught] == [
        "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of observations."]


def test_cov_is_a_composite_at_the_dispatch_level():
    x = tm.tensor(DATA, requires_grad=True)
    with _FunctionLog() as log, _AtenLog() as aten:
        result = tm.corrcoef(x)
    assert log.seen == [tm.corrcoef]  # the cov it calls runs below the handler
    assert aten.seen == [
        "aten.scalar_tensor.default", "aten.sum.dim_IntList", "aten.div.Tensor", "aten.scalar_tensor.default",
        "aten.le.Scalar", "aten.new_ones.default", "aten.equal.default", "aten.unsqueeze.default", "aten.sub.Tensor",
        "aten.t.default", "aten.mm.default", "aten.div.Tensor", "aten.squeeze.default", "aten.diagonal.default",
        "aten.sqrt.default", "aten.detach.default", "aten.view.default", "aten.div.Tensor", "aten.view.default",
        "aten.div.Tensor", "aten.clamp.default"]
    assert result.grad_fn.name() == "ClampBackward1" and tm.cov(x).grad_fn.name() == "SqueezeBackward0"
    assert "aten.cov" not in str(tm.ops.aten.__dict__.keys())


def test_clamp_nodes_are_named_by_the_overload_reached():
    # PyTorch names the node of clamp's Scalar overload ClampBackward1 (corrcoef's last node), and
    # clip, a composite alias, records clamp's nodes
    x, t = tm.ones(2, requires_grad=True), tm.tensor([0.5])
    nodes = [x.clamp(0, 1), x.clamp(min=t), tm.clip(x, 0, 1), x.clip(t, t), x.clamp_min(0.0), x.clamp_min(t),
             x.clamp_max(0.0), tm.clamp_max(x, t)]
    assert [y.grad_fn.name() for y in nodes] == [
        "ClampBackward1", "ClampBackward0", "ClampBackward1", "ClampBackward0", "ClampMinBackward0",
        "ClampMinBackward1", "ClampMaxBackward0", "ClampMaxBackward1"]


def test_cov_gradients_are_the_composites():
    x = tm.tensor(DATA, dtype=tm.float64, requires_grad=True)
    weights = tm.tensor([0.5, 1.0, 2.0], dtype=tm.float64, requires_grad=True)
    assert tm.autograd.gradcheck(lambda a, w: tm.cov(a, fweights=tm.tensor([1, 2, 1]), aweights=w), (x, weights))
    assert tm.autograd.gradcheck(tm.corrcoef, (x,))


COV_CASES = [
    "L.cov(L.tensor(DATA))", "L.corrcoef(L.tensor(DATA))", "L.cov(L.tensor(3.0))", "L.cov(L.tensor([1, 2, 4]))",
    "L.cov(L.tensor([[1, 2], [3, 5]], dtype=L.int32))", "L.cov(L.tensor([[1 + 1j, 2], [3, 5j]]))",
    "L.corrcoef(L.tensor([[1 + 1j, 2], [3, 5j]]))", "L.cov(L.tensor([[1.0, 2.0, 3.0]]), correction=3)",
    "L.cov(L.zeros(2, 0))", "L.corrcoef(L.tensor([1.0, 2.0]))", "L.corrcoef(L.tensor([[1, 2, 3], [1, 5, 3]]))",
    "L.cov(L.tensor(DATA), fweights=L.tensor([1, 2, 1]), aweights=L.tensor([0.5, 1.0, 2.0]))",
    "L.cov(L.tensor(DATA), correction=0, aweights=L.tensor([0.5, 1.0, 2.0], dtype=L.float64))",
    "L.cov(L.tensor(DATA), correction=2, fweights=L.tensor([3, 2, 1]))",
    "L.cov(L.tensor([[1.0], [2.0]]), aweights=L.tensor([2.0]))",
    "L.cov(L.tensor([[1.0], [2.0]]), aweights=L.tensor([2.0]), fweights=L.tensor([3]))",
    "(lambda x: (L.cov(x, fweights=L.tensor([1])), x))(L.tensor([[1.0], [2.0]]))",
    "L.cov(L.tensor([[1.0], [2.0]], requires_grad=True), fweights=L.tensor([1]))",
    "L.tensor(DATA).cov(correction=0)", "L.tensor(DATA).corrcoef()", "L.cov(L.tensor(DATA, dtype=L.float16))",
    "L.cov(L.zeros(2, 2, dtype=L.bool))", "L.cov(L.ones(2, 3), fweights=L.ones(1, 3, dtype=L.long))",
    "L.cov(L.ones(2, 3), fweights=L.ones(2, dtype=L.long))", "L.cov(L.ones(2, 3), fweights=-L.ones(3, dtype=L.long))",
    "L.cov(L.ones(2, 3), aweights=L.ones(3, dtype=L.long))", "L.cov(L.ones(2, 3), aweights=L.ones(2, 3))",
    "L.cov(L.ones(2, 3), fweights=L.ones(3, dtype=L.bool))", "L.corrcoef(L.zeros(2, 2, 2))",
    "L.cov(L.ones(2, 3), fweights=[1, 1, 1])", "L.corrcoef(L.zeros(2, 2, dtype=L.bool))",
    "L.cov(L.ones(2, 3), correction=True)", "L.cov(L.ones(2, 3), fweights=L.tensor(3))", "L.cov([1, 2])",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", COV_CASES)
def test_cov_and_corrcoef_match_pytorch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression.replace("DATA", repr(DATA)), rtol=1e-6, atol=1e-7)


@pytest.mark.torch
def test_cov_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    grads = []
    for library in (tm, torch):
        x = library.tensor(DATA, dtype=library.float64, requires_grad=True)
        weights = library.tensor([0.5, 1.0, 2.0], dtype=library.float64, requires_grad=True)
        scale = library.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=library.float64)
        loss = (library.corrcoef(x) * scale).sum() + library.cov(x, fweights=library.tensor([1, 2, 1]),
                                                                 aweights=weights).square().sum()
        grads.append([g.tolist() for g in library.autograd.grad(loss, (x, weights))])
    np.testing.assert_allclose(np.array(grads[0][0]), np.array(grads[1][0]), rtol=1e-12)
    np.testing.assert_allclose(np.array(grads[0][1]), np.array(grads[1][1]), rtol=1e-12)


# -- tensormodes.dropout and its kin (the functions nn.functional's dropouts are in PyTorch) -----------

DROPOUTS = ["dropout", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
            "feature_alpha_dropout", "feature_alpha_dropout_"]


def test_dropout_functions():
    x = tm.ones(4)
    assert tm.dropout_(x, 1.0, True) is x and x.tolist() == [0.0] * 4
    assert tm.dropout(tm.ones(3), 0.5, False).tolist() == [1.0, 1.0, 1.0]
    tm.manual_seed(0)
    by_function = tm.dropout(tm.ones(8), 0.5, True)
    tm.manual_seed(0)
    assert by_function.tolist() == tm.nn.functional.dropout(tm.ones(8), 0.5, True).tolist()
    assert set(by_function.tolist()) <= {0.0, 2.0}
    channels = tm.feature_dropout(tm.ones(2, 6, 3), 0.5, True)
    assert bool((channels == channels[:, :, :1]).all())  # whole channels kept or dropped
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        tm.alpha_dropout(tm.ones(2), 1.5, True)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in the input"):
        tm.feature_dropout_(tm.ones(3), 0.5, True)
    ones = tm.ones(1, 2)
    with _FunctionLog() as log:
        tm.feature_alpha_dropout(ones, 0.5, False)
    assert log.seen == [tm.feature_alpha_dropout]


@pytest.mark.torch
@pytest.mark.parametrize("name", DROPOUTS)
@pytest.mark.parametrize("arguments", ["L.ones(2, 3, 4), 0.5, True", "L.ones(2, 3, 4), 0.5, False",
                                       "L.ones(5), 0.3, True", "L.ones(2, 3), 1.0, True", "L.ones(2, 3), 1.5, True",
                                       "L.ones(0), 0.5, True"])
def test_dropout_functions_match_pytorch(name, arguments):
    pytest.importorskip("torch")  # the same seed drops the same elements
    assert_same_outcome(f"(L.manual_seed(3), L.{name}({arguments}))[1]", rtol=1e-6, atol=1e-6)


# -- tensormodes.embedding_renorm_ (what F.embedding runs for max_norm) --------------------------------


def test_embedding_renorm_scales_the_named_rows_in_place():
    weight = tm.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]], dtype=tm.float64)
    assert tm.embedding_renorm_(weight, tm.tensor([[0, 1]]), 1.0, 2.0) is weight
    np.testing.assert_allclose(weight.tolist(), [[0.6, 0.8], [0.3, 0.4], [6.0, 8.0]], rtol=1e-7)
    with pytest.raises(RuntimeError, match="Expected 2-dimensional tensor, but got 1-dimensional tensor for "
                                           "argument #1 'self' \\(while checking arguments for embedding_renorm_\\)"):
        tm.embedding_renorm_(tm.ones(3), tm.tensor([0]), 1.0, 2.0)
    with pytest.raises(IndexError, match="select\\(\\): index 5 out of range for tensor of size \\[3, 2\\]"):
        tm.embedding_renorm_(tm.ones(3, 2), tm.tensor([5]), 1.0, 2.0)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "(lambda w: (L.embedding_renorm_(w, L.tensor([1, 1, 3]), 5.0, 2.0), w))(L.arange(12.0).view(4, 3))",
    "L.embedding_renorm_(L.ones(3, 2, requires_grad=True), L.tensor([0]), 1.0, 2.0)",
    "L.embedding_renorm_(L.ones(3, 2), L.tensor([0.0]), 1.0, 2.0)",
    "L.embedding_renorm_(L.ones(3, 2, dtype=L.int64), L.tensor([0]), 1.0, 2.0)",
    "L.embedding_renorm_(L.ones(3, 2), L.tensor([0, -1], dtype=L.int32), 1.0, 1.0)",
    "L.embedding_renorm_(L.ones(3, 2, dtype=L.float64), L.tensor([2]), 0.5, float('inf'))",
])
def test_embedding_renorm_matches_pytorch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression, rtol=1e-6, atol=1e-7)


# -- F.upsample (deprecated forms of interpolate), F.dropout3d and nn.Dropout3d ---------------------


def test_upsample_forms_warn_and_interpolate():
    image = tm.arange(8.0).view(1, 2, 2, 2)
    with pytest.warns(UserWarning, match="`nn.functional.upsample_bilinear` is deprecated. Use "
                                         "`nn.functional.interpolate` instead."):
        bilinear = tm.nn.functional.upsample_bilinear(image, size=(3, 3))
    assert bilinear[0, 0].tolist() == [[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0]]  # corners aligned
    with pytest.warns(UserWarning, match="`nn.functional.upsample` is deprecated"):
        assert tm.nn.functional.upsample(tm.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist() == [[[1.0, 1.0, 2.0, 2.0]]]
    with pytest.warns(UserWarning, match="`nn.functional.upsample_nearest` is deprecated"):
        assert tm.nn.functional.upsample_nearest(image, scale_factor=2).shape == (1, 2, 4, 4)


def test_dropout3d_drops_whole_volumes():
    tm.manual_seed(0)
    y = tm.nn.functional.dropout3d(tm.ones(2, 8, 2, 2, 2), 0.5)
    per_channel = y.flatten(2)
    assert bool((per_channel == per_channel[:, :, :1]).all()) and set(y.unique().tolist()) <= {0.0, 2.0}
    x = tm.ones(4, 2, 2, 2)
    assert tm.nn.functional.dropout3d(x, 0.5, inplace=True) is x
    assert repr(tm.nn.Dropout3d(0.3, inplace=True)) == "Dropout3d(p=0.3, inplace=True)"
    assert tm.nn.Dropout3d().eval()(tm.ones(1, 1, 1, 1, 1)).tolist() == [[[[[1.0]]]]]
    with pytest.warns(UserWarning, match="dropout3d: Received a 2-D input to dropout3d, which is deprecated"):
        tm.nn.functional.dropout3d(tm.ones(2, 3), 0.5, training=False)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.functional.upsample(L.arange(8.0).view(1, 2, 2, 2), scale_factor=2, mode='bilinear')",
    "L.nn.functional.upsample(L.arange(4.0).view(1, 1, 4), size=7)",
    "L.nn.functional.upsample_nearest(L.arange(8.0).view(1, 2, 2, 2), scale_factor=2)",
    "L.nn.functional.upsample_bilinear(L.arange(8.0).view(1, 2, 2, 2), size=(3, 5))",
    "L.nn.functional.upsample_bilinear(L.arange(8.0).view(1, 2, 4), size=3)",
    "(L.manual_seed(1), L.nn.functional.dropout3d(L.ones(2, 4, 2, 2, 2), 0.5))[1]",
    "(L.manual_seed(1), L.nn.functional.dropout3d(L.ones(4, 2, 2, 2), 0.5))[1]",
    "(lambda x: (L.manual_seed(1), L.nn.functional.dropout3d(x, 0.5, inplace=True) is x, x)[1:])(L.ones(4, 2, 2, 2))",
    "(lambda x: (L.nn.functional.dropout3d(x, 0.5, training=False, inplace=True) is x, x))(L.ones(4, 2, 2, 2))",
    "(L.manual_seed(1), L.nn.functional.dropout3d(L.ones(4, 2), 0.5))[1]",
    "L.nn.functional.dropout3d(L.ones(4, 2, 2, 2), 1.5)",
    "(L.manual_seed(1), L.nn.Dropout3d(0.3)(L.ones(2, 4, 2, 1, 1)))[1]",
])
def test_upsample_and_dropout3d_match_pytorch(expression):
    pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_outcome(expression, rtol=1e-6, atol=1e-6)


# -- F.max_unpool1d, nn.MaxUnpool1d and nn.MaxUnpool2d ------------------------------------------------


def test_max_unpooling_puts_the_maxima_back():
    pooled, indices = tm.nn.MaxPool1d(2, return_indices=True)(tm.tensor([[[1.0, 3.0, 2.0, 0.0, 5.0, 4.0]]]))
    assert tm.nn.MaxUnpool1d(2)(pooled, indices).tolist() == [[[0.0, 3.0, 2.0, 0.0, 5.0, 0.0]]]
    assert tm.nn.functional.max_unpool1d(pooled, indices, 2, output_size=[7]).shape == (1, 1, 7)
    with pytest.raises(ValueError, match=r'invalid output_size "\[9\]" \(dim 0 must be between 4 and 8\)'):
        tm.nn.functional.max_unpool1d(pooled, indices, 2, output_size=[9])
    image, where = tm.nn.MaxPool2d(2, return_indices=True)(tm.arange(16.0).view(1, 1, 4, 4))
    restored = tm.nn.MaxUnpool2d(2)(image, where)
    assert restored.sum().item() == 5 + 7 + 13 + 15 and restored[0, 0, 3, 3].item() == 15
    assert repr(tm.nn.MaxUnpool1d(3, stride=2, padding=1)) == "MaxUnpool1d(kernel_size=(3,), stride=(2,), padding=(1,))"


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "(lambda p: F.max_unpool1d(*p, 2))(F.max_pool1d(L.tensor([[[1., 3., 2., 0., 5., 4.]]]), 2, return_indices=True))",
    "(lambda p: F.max_unpool1d(*p, 2, output_size=[1, 1, 7]))(F.max_pool1d(L.arange(7.).view(1, 1, 7), 2, "
    "return_indices=True))",
    "(lambda p: F.max_unpool1d(*p, 2, output_size=[1, 9]))(F.max_pool1d(L.arange(7.).view(1, 1, 7), 2, "
    "return_indices=True))",
    "(lambda p: F.max_unpool1d(*p, 3, stride=2, padding=1))(F.max_pool1d(L.arange(10.).view(2, 1, 5), 3, 2, 1, "
    "return_indices=True))",
    "(lambda p: F.max_unpool1d(*p, 2))(F.max_pool1d(L.arange(6.).view(1, 6), 2, return_indices=True))",
    "(lambda p: L.nn.MaxUnpool2d(2)(*p, output_size=(5, 5)))(L.nn.MaxPool2d(2, return_indices=True)("
    "L.arange(25.).view(1, 1, 5, 5)))",
    "repr(L.nn.MaxUnpool2d((2, 3), 1))",
    "(lambda x: L.autograd.grad(F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2).sum() * 3, x)[0])("
    "L.arange(6., requires_grad=True).view(1, 1, 6))",
])
def test_max_unpooling_matches_pytorch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression.replace("F.", "L.nn.functional."))


# -- F.lp_pool1d/2d/3d, F.local_response_norm and their layers ----------------------------------------


def test_power_average_pooling_and_local_response_norm():
    assert tm.nn.LPPool1d(2, 2)(tm.tensor([[[3.0, 4.0, 0.0, 5.0]]])).tolist() == [[[5.0, 5.0]]]
    assert tm.nn.functional.lp_pool2d(tm.tensor([[[[1.0, -2.0], [2.0, 4.0]]]]), float("inf"), 2).tolist() == [[[[4.0]]]]
    assert tm.nn.LPPool3d(1, 2)(tm.ones(1, 1, 2, 2, 2)).tolist() == [[[[[8.0]]]]]
    assert repr(tm.nn.LPPool2d(1.2, (3, 2), stride=(2, 1))) == \
        "LPPool2d(norm_type=1.2, kernel_size=(3, 2), stride=(2, 1), ceil_mode=False)"
    # size 2 pads one zero channel before: mean squares (0 + 1) / 2 and (1 + 1) / 2 divide the ones
    normed = tm.nn.LocalResponseNorm(2, alpha=1.0, beta=1.0, k=0.0)(tm.ones(1, 2, 1))
    assert normed.tolist() == [[[2.0], [1.0]]]
    assert repr(tm.nn.LocalResponseNorm(3, k=2)) == "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=2)"
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality {26}input \\(got 2 dimensions\\)"):
        tm.nn.functional.local_response_norm(tm.ones(3, 4), 2)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "F.lp_pool1d(L.arange(12.).view(2, 1, 6) - 3, 2, 2)", "F.lp_pool1d(L.arange(12.).view(2, 1, 6), 3, 3, stride=2, "
    "ceil_mode=True)", "F.lp_pool1d(L.arange(12.).view(2, 1, 6) - 5, -float('inf'), 2)",
    "F.lp_pool2d(L.arange(32.).view(1, 2, 4, 4) / 7, 1.5, (2, 1))", "F.lp_pool2d(L.arange(32.).view(1, 2, 4, 4), 2, 3, "
    "stride=1)", "F.lp_pool3d(L.arange(64.).view(1, 1, 4, 4, 4), 2, (2, 1, 2), stride=(1, 2, 1))",
    "F.local_response_norm(L.arange(24.).view(2, 3, 4) / 5, 2)",
    "F.local_response_norm(L.arange(48.).view(2, 3, 2, 4) / 5, 3, alpha=0.5, beta=0.6, k=2.0)",
    "F.local_response_norm(L.arange(48.).view(1, 4, 3, 2, 2), 5)", "F.local_response_norm(L.ones(3, 4), 2)",
    "F.local_response_norm(L.ones(0, 2, 3), 2)", "repr(L.nn.LPPool1d(2, 3))",
    "L.nn.LPPool1d(2, 2)(L.arange(6.).view(1, 6))",
    "(lambda x: L.autograd.grad(F.local_response_norm(x, 3).sum(), x)[0])"
    "(L.arange(24., requires_grad=True).view(2, 3, 4) / 7)",
    "(lambda x: L.autograd.grad(F.lp_pool2d(x, 2, 2).sum(), x)[0])"
    "((L.arange(16., requires_grad=True) + 1).view(1, 1, 4, 4))",
])
def test_power_average_pooling_and_local_response_norm_match_pytorch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression.replace("F.", "L.nn.functional."), rtol=1e-5, atol=1e-6)

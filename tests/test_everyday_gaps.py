"""Gaps everyday scripts hit (issue 26's leftovers): ``F.grid_sample`` bicubic and volumetric,
``tm.ctc_loss`` at the top level, the lazy normalisation and transposed-convolution layers,
``StackDataset``, the everyday aliases and functions — against PyTorch's values, gradients and
errors when it is installed, and literal values that hold without it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tests.torch_oracle import assert_same_outcome

RNG = np.random.default_rng(2613)


# -- grid_sample: bicubic images, trilinear and nearest volumes ------------------------------------

def test_grid_sample_bicubic_literal_values():
    ones = tm.ones(1, 1, 8, 8)
    # the cubic weights sum to 1: a constant image stays constant where every tap is inside
    inside = F.grid_sample(ones, tm.tensor([[[[-0.25, 0.0], [0.1, -0.3]]]]), mode="bicubic", align_corners=True)
    assert tm.allclose(inside, tm.ones(1, 1, 1, 2), atol=1e-6)
    # x = 0.35: the tap at x = -1 is outside (zeros padding), its weight -0.11090625 is lost
    edge = F.grid_sample(ones, tm.tensor([[[[-0.9, 0.0]]]]), mode="bicubic", align_corners=True).item()
    assert edge == pytest.approx(1 + 0.11090625, abs=1e-6)
    border = F.grid_sample(ones, tm.tensor([[[[-0.9, 0.0]]]]), "bicubic", "border", align_corners=True).item()
    assert border == pytest.approx(1.0, abs=1e-6)
    image = tm.arange(64.0).reshape(1, 1, 8, 8)
    # at a pixel's centre only that pixel counts
    assert F.grid_sample(image, tm.tensor([[[[-1.0, -1.0]]]]), mode="bicubic", align_corners=True).item() == 0.0


def test_grid_sample_trilinear_literal_value_and_node():
    volume = tm.arange(8.0).reshape(1, 1, 2, 2, 2).requires_grad_()
    out = F.grid_sample(volume, tm.zeros(1, 1, 1, 1, 3), align_corners=True)  # the centre: the mean
    assert out.item() == 3.5
    assert out.grad_fn.name() == "GridSampler3DBackward0"
    out.sum().backward()
    assert volume.grad.flatten().tolist() == [0.125] * 8
    nearest = F.grid_sample(volume, tm.tensor([[[[[1.0, -1.0, 1.0]]]]]), mode="nearest", align_corners=True)
    assert nearest.item() == 5.0  # (z, y, x) = (1, 0, 1)


def test_grid_sample_bicubic_volume_raises():
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(tm.ones(1, 1, 2, 2, 2), tm.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False)


_GRID_CASES = [(rank, mode, padding, corners) for rank, mode, padding, corners in itertools.product(
    (4, 5), ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (False, True))
    if not (rank == 5 and mode == "bicubic")]


@pytest.mark.parametrize("rank, mode, padding, corners", _GRID_CASES)
def test_grid_sample_values_and_gradients_match_torch(rank, mode, padding, corners):
    torch = pytest.importorskip("torch")
    shape, grid_shape = ((2, 3, 4, 5), (2, 3, 4, 2)) if rank == 4 else ((2, 3, 3, 4, 5), (2, 2, 3, 4, 3))
    x = RNG.standard_normal(shape)
    grid = RNG.uniform(-1.4, 1.4, grid_shape)
    grid[0, 0, 0] = 1.0  # on the edge exactly
    weights = RNG.standard_normal((shape[0], shape[1], *grid_shape[1:-1]))
    results = []
    for library in (tm, torch):
        inputs = [library.tensor(a, requires_grad=True) for a in (x, grid)]
        out = library.nn.functional.grid_sample(*inputs, mode=mode, padding_mode=padding, align_corners=corners)
        (out * library.tensor(weights)).sum().backward()
        results.append([out.detach().numpy(), inputs[0].grad.numpy(), inputs[1].grad.numpy(),
                        out.grad_fn.name()])
    ours, theirs = results
    assert ours[3] == theirs[3]
    for mine, reference in zip(ours[:3], theirs[:3]):
        np.testing.assert_allclose(mine, reference, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("expression", [
    "L.nn.functional.grid_sample(L.ones(1, 1, 2, 2, 2, dtype=L.long), L.zeros(1, 1, 1, 1, 3, dtype=L.long), "
    "align_corners=False)",
    "L.nn.functional.grid_sample(L.ones(1, 1, 2, 2, 2), L.zeros(1, 1, 1, 1, 2), align_corners=False)",
    "L.nn.functional.grid_sample(L.ones(1, 1, 2, 2, 2), L.zeros(1, 1, 1, 3), align_corners=False)",
    "L.nn.functional.grid_sample(L.ones(1, 1, 2, 2, 2), L.zeros(1, 1, 1, 1, 3), mode='bicubic', align_corners=True)",
    "L.nn.functional.grid_sample(L.arange(8.0).reshape(1, 1, 2, 2, 2).half(), L.zeros(1, 1, 1, 1, 3).half(), "
    "align_corners=True)",
    "L.grid_sampler(L.ones(1, 1, 2, 2, 2), L.zeros(1, 1, 1, 1, 3), 2, 0, False)",
    "L.nn.functional.grid_sample(L.ones(1, 1, 3, 4), L.tensor([[[[nan, 0.0], [inf, 0.0]]]]), 'bicubic', "
    "'border', False)",
])
def test_grid_sample_edges_match_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression, rtol=None, atol=None)


# -- top-level ctc_loss and the in-place activations ------------------------------------------------

_CTC = ("L.tensor(np.random.default_rng(5).standard_normal((6, 2, 4))).log_softmax(2), "
        "L.tensor([[1, 2, 2], [3, 1, 0]]), ")


@pytest.mark.parametrize("expression", [
    f"L.ctc_loss({_CTC}[6, 5], [3, 2])",
    f"L.ctc_loss({_CTC}[6, 5], [3, 2], 0, 0)",
    f"L.ctc_loss({_CTC}[6, 5], [3, 2], 0, 2, True)",
    f"L.ctc_loss({_CTC}[6, 5], [3, 2], 0, 7)",  # any other int reduces nothing
    f"L.ctc_loss({_CTC}L.tensor([6, 5]), L.tensor([3, 2]), 0, 1, False)",
    "L.ctc_loss(L.zeros(4, 3).log_softmax(1), L.tensor([1, 2]), [4], [2], 0, 0)",
    "L.ctc_loss(L.zeros(4, 3).log_softmax(1), L.tensor([1, 2]), [4], [2])",
    "L.nn.functional.ctc_loss(L.zeros(4, 3).log_softmax(1), L.tensor([1, 2]), [4], [2], reduction='bad')",
    "L.relu_(L.tensor([-1.0, 2.0]))", "L.selu_(L.tensor([-1.0, 2.0]))", "L.celu_(L.tensor([-1.0, 2.0]), 0.5)",
    "L.threshold_(L.tensor([-1.0, 2.0]), 0.5, 9.0)", "L.rrelu_(L.tensor([-1.0, 2.0]), 0.25, 0.5)",
    "L.nn.functional.elu_(L.tensor([-1.0, 2.0]), 0.5)", "L.nn.functional.leaky_relu_(L.tensor([-1.0, 2.0]), 0.5)",
    "L.nn.functional.hardtanh_(L.tensor([-3.0, 0.5, 3.0]), -2.0, 1.0)",
    "L.relu_(L.tensor([1, -2]))",
])
def test_top_level_ctc_loss_and_inplace_activations_match_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression, rtol=1e-6, atol=1e-6)


def test_ctc_loss_top_level_literal_and_gradient():
    log_probs = tm.full((1, 1, 2), 0.5).log().requires_grad_()
    loss = tm.ctc_loss(log_probs, tm.tensor([[1]]), [1], [1], 0, 2)
    assert loss.item() == pytest.approx(0.6931471805599453)
    loss.backward()
    assert log_probs.grad.tolist() == [[[0.5, -0.5]]]
    assert F.ctc_loss(log_probs, tm.tensor([[1]]), [1], [1], reduction="sum").item() == loss.item()


def test_inplace_activations_are_one_object_and_write_in_place():
    for name in ("relu_", "rrelu_", "selu_", "celu_", "threshold_"):
        assert getattr(F, name) is getattr(tm, name), name
        assert name in tm.__all__ and name in F.__all__
    x = tm.tensor([-2.0, 0.5])
    assert F.leaky_relu_(x, 0.5) is x and x.tolist() == [-1.0, 0.5]
    assert F.elu_(x) is x and x.tolist()[1] == 0.5
    names = []

    class Names(tm.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            names.append(tm.overrides.resolve_name(func))
            return func(*args, **(kwargs or {}))

    with Names():
        tm.relu_(x)
        F.ctc_loss(tm.zeros(2, 3).log_softmax(1), tm.tensor([1]), [2], [1])
    assert names[0] == "tensormodes.relu_"
    assert "tensormodes.nn.functional.ctc_loss" in names


# -- lazy normalisation and transposed-convolution layers -------------------------------------------

_LAZY_NORMS = [("LazyBatchNorm1d", (4, 3, 5)), ("LazyBatchNorm2d", (2, 3, 2, 2)), ("LazyBatchNorm3d", (2, 3, 2, 1, 2)),
               ("LazyInstanceNorm1d", (2, 3, 4)), ("LazyInstanceNorm2d", (2, 3, 2, 2)),
               ("LazyInstanceNorm3d", (2, 3, 2, 2, 1))]


def test_lazy_batch_norm_literal_values():
    bn = tm.nn.LazyBatchNorm1d()
    assert repr(bn) == "LazyBatchNorm1d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    assert isinstance(bn.running_mean, tm.nn.UninitializedBuffer)
    assert isinstance(bn.weight, tm.nn.UninitializedParameter)
    out = bn(tm.tensor([[1.0, 2.0], [3.0, 6.0]]))
    assert type(bn) is tm.nn.BatchNorm1d and bn.num_features == 2
    assert out.flatten().tolist() == pytest.approx([-1.0, -1.0, 1.0, 1.0], abs=1e-4)
    assert bn.running_mean.tolist() == pytest.approx([0.2, 0.4]) and bn.num_batches_tracked.item() == 1
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        _ = tm.nn.LazyBatchNorm2d().running_var.shape
    with pytest.raises(ValueError, match=r"manipulating `torch.nn.parameter.UninitializedBuffer` objects"):
        tm.nn.UninitializedBuffer() + 1


@pytest.mark.parametrize("name, shape", _LAZY_NORMS)
@pytest.mark.parametrize("options", [{}, {"affine": False}, {"track_running_stats": False}, {"bias": False},
                                     {"momentum": None}])
def test_lazy_norms_match_torch(name, shape, options):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal(shape).astype(np.float32)
    results = []
    for library in (tm, torch):
        module = getattr(library.nn, name)(**options)
        before = (repr(module), sorted(module.state_dict()), [type(v).__name__ for v in module.state_dict().values()])
        out = module(library.tensor(x))
        out2 = module(library.tensor(x * 2))
        module.eval()
        out3 = module(library.tensor(x))
        state = {k: v.numpy() for k, v in module.state_dict().items()}
        results.append((before, repr(module), type(module).__name__, [o.detach().numpy() for o in (out, out2, out3)],
                        state))
    ours, theirs = results
    assert ours[:3] == theirs[:3]
    for a, b in zip(ours[3], theirs[3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert sorted(ours[4]) == sorted(theirs[4])
    for key in ours[4]:
        np.testing.assert_allclose(ours[4][key], theirs[4][key], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_lazy_conv_transpose_matches_torch(dims):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 4, *[3] * dims)).astype(np.float32)
    results = []
    for library in (tm, torch):
        library.manual_seed(7)
        module = getattr(library.nn, f"LazyConvTranspose{dims}d")(6, 2, stride=2, groups=2, output_padding=1,
                                                                  dilation=1)
        text = repr(module)
        out = module(library.tensor(x))
        out.sum().backward()
        results.append((text, repr(module), type(module).__name__, out.detach().numpy(), module.weight.grad.numpy(),
                        module.weight.detach().numpy()))
    ours, theirs = results
    assert ours[:3] == theirs[:3]
    for a, b in zip(ours[3:], theirs[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("expression", [
    "L.nn.LazyConvTranspose2d(4, 3, groups=2)(L.ones(1, 3, 4, 4))",
    "L.nn.LazyConvTranspose2d(4, 3)(L.ones(3, 4))",
    "L.nn.LazyConvTranspose1d(4, 3, bias=False)(L.ones(2, 5)).shape",
    "L.nn.LazyBatchNorm2d()(L.ones(3, 4))",
    "L.nn.LazyInstanceNorm1d()(L.ones(3, 4))",  # PyTorch reads num_features from dimension 1 even unbatched
])
def test_lazy_layer_errors_match_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression)


# -- StackDataset ---------------------------------------------------------------------------------------

def test_stack_dataset_tuple_and_dict_forms_with_a_loader():
    data = tm.utils.data
    images, labels = tm.arange(12.0).reshape(6, 2), tm.arange(6)
    pairs = data.StackDataset(data.TensorDataset(images), labels)
    assert len(pairs) == 6
    assert pairs[2][0][0].tolist() == [4.0, 5.0] and pairs[2][1].item() == 2
    batch = next(iter(data.DataLoader(pairs, batch_size=4)))
    assert batch[0][0].tolist() == images[:4].tolist() and batch[1].tolist() == [0, 1, 2, 3]
    keyed = data.StackDataset(image=images, label=labels)
    assert keyed[5]["label"].item() == 5 and list(keyed[5]) == ["image", "label"]
    batch = next(iter(data.DataLoader(keyed, batch_size=3, shuffle=False)))
    assert batch["image"].shape == (3, 2) and batch["label"].tolist() == [0, 1, 2]
    # a part's __getitems__ is used for batches (Subset has one)
    subset = data.Subset(list(range(10, 20)), [3, 1, 4])
    assert data.StackDataset(subset, "abc").__getitems__([0, 2]) == [(13, "a"), (14, "c")]
    assert data.StackDataset(s=subset).__getitems__([1]) == [{"s": 11}]


class _Short(tm.utils.data.Dataset):
    def __len__(self):
        return 3

    def __getitem__(self, index):
        return index

    def __getitems__(self, indices):
        return indices[:1]


@pytest.mark.parametrize("expression", [
    "L.utils.data.StackDataset([1, 2], y=[3, 4])",
    "L.utils.data.StackDataset()",
    "L.utils.data.StackDataset([1, 2], [3])",
    "L.utils.data.StackDataset(a=[1, 2], b=[3])",
    "L.utils.data.StackDataset([1, 2], 'ab')[-1]",
    "L.utils.data.StackDataset([1, 2], 'ab')[2]",
    "L.utils.data.StackDataset(SHORT, 'abc').__getitems__([0, 1])",
    "L.utils.data.StackDataset(x=SHORT).__getitems__([0, 1])",
    "len(L.utils.data.StackDataset(a='xyz'))",
])
def test_stack_dataset_matches_torch(expression):
    torch = pytest.importorskip("torch")

    class Short(torch.utils.data.Dataset):
        __len__, __getitem__, __getitems__ = _Short.__len__, _Short.__getitem__, _Short.__getitems__

    ours, theirs = (run(library, expression.replace("SHORT", name), extra) for library, name, extra in (
        (tm, "S", {"S": _Short()}), (torch, "S", {"S": Short()})))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "error":
        assert type(ours[1]) is type(theirs[1]) and str(ours[1]) == str(theirs[1])
    else:
        assert ours[1] == theirs[1]


def run(library, expression, extra):
    try:
        return "ok", eval(expression, {"L": library, **extra})
    except Exception as error:  # noqa: BLE001 - the outcome is compared
        return "error", error


# -- NumPy-style aliases -----------------------------------------------------------------------------

_ALIASES = {"absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
            "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh", "divide": "div", "multiply": "mul",
            "subtract": "sub", "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
            "not_equal": "ne", "fix": "trunc"}


def test_aliases_literal_values_methods_and_nodes():
    x = tm.tensor([-1.5, 0.5], requires_grad=True)
    assert tm.fix(x).tolist() == [-1.0, 0.0] and tm.absolute(x).grad_fn.name() == "AbsBackward0"
    assert tm.divide(tm.tensor([7, -7]), 2, rounding_mode="floor").tolist() == [3, -4]
    assert tm.subtract(tm.tensor([5]), 1, alpha=3).tolist() == [2]
    assert x.multiply(2).grad_fn.name() == "MulBackward0" and tm.greater_equal(x, 0.5).tolist() == [False, True]
    y = tm.tensor([0.25, 4.0])
    assert y.arctan2_(tm.tensor([1.0, 1.0])) is y and y.tolist()[0] == pytest.approx(0.24497866)
    assert tm.row_stack((tm.ones(2), tm.zeros(2))).tolist() == [[1.0, 1.0], [0.0, 0.0]]
    out = tm.empty(2)
    assert tm.multiply(tm.tensor([1.0, 2.0]), 3, out=out) is out and out.tolist() == [3.0, 6.0]
    for name in _ALIASES:
        assert name in tm.__all__ and callable(getattr(tm.Tensor, name)) and callable(getattr(tm.Tensor, name + "_"))


@pytest.mark.parametrize("name", sorted(_ALIASES))
def test_aliases_match_torch(name):
    pytest.importorskip("torch")
    binary = _ALIASES[name] in ("atan2", "div", "mul", "sub", "gt", "ge", "lt", "le", "ne")
    operands = "L.tensor([0.25, -0.5, 2.0]), L.tensor([1.0, 0.5, -3.0])" if binary else "L.tensor([0.25, -0.5, 2.0])"
    other = ", L.tensor(2.0)" if binary else ""  # a tensor: atan2 takes no number
    for expression in (f"L.{name}({operands})", f"L.{name}(L.tensor([1, 2, 3]){other})",
                       f"L.tensor([0.25, 1.5]).{name}_({other[2:]})",
                       f"L.{name}(L.tensor([0.25, 1.5], requires_grad=True){other}).grad_fn.name()"):
        assert_same_outcome(expression, rtol=1e-6, atol=1e-7)


# -- window functions ---------------------------------------------------------------------------------

def test_windows_literal_values():
    assert tm.hann_window(4).tolist() == [0.0, 0.5, 1.0, 0.5]
    assert tm.hann_window(5, periodic=False, dtype=tm.float64).tolist() == pytest.approx([0, 0.5, 1, 0.5, 0])
    assert tm.hamming_window(3, False, dtype=tm.float64).tolist() == pytest.approx([0.08, 1.0, 0.08])
    assert tm.bartlett_window(4).tolist() == [0.0, 0.5, 1.0, 0.5]
    assert tm.kaiser_window(3, False, 0.0).tolist() == [1.0, 1.0, 1.0]
    assert tm.blackman_window(1).tolist() == [1.0] and tm.blackman_window(0).shape == (0,)
    window = tm.hann_window(3, requires_grad=True, dtype=tm.float64)
    assert window.requires_grad and window.is_leaf and window.dtype == tm.float64
    assert tm.hann_window(4, device="meta").shape == (4,)
    with pytest.raises(RuntimeError, match="hann_window requires non-negative window_length, got window_length=-1"):
        tm.hann_window(-1)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_windows_match_torch(name):
    pytest.importorskip("torch")
    for arguments in ("0", "1", "2", "7", "8, False", "16", "5, dtype=L.float64", "9, False, dtype=L.float16",
                      "6, dtype=L.bfloat16", "33, dtype=L.float16", "-3", "3, dtype=L.int32", "3, dtype=L.bool",
                      "3, dtype=L.complex64", "2.5"):
        assert_same_outcome(f"L.{name}({arguments})", rtol=2e-6, atol=1e-7)
    if name in ("hamming_window", "kaiser_window"):
        assert_same_outcome(f"L.{name}(7, True, 0.3)", rtol=2e-6, atol=1e-7)
    if name == "hamming_window":
        assert_same_outcome(f"L.{name}(7, False, 0.3, 0.1, dtype=L.float16)")


# -- issue 22: asarray of a tensor that requires grad ------------------------------------------------

def test_asarray_keeps_the_history_of_a_tensor_that_requires_grad():
    t = tm.tensor([1.5, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="unspecified requires_grad now defaults to obj.requires_grad"):
        converted = tm.asarray(t, dtype=tm.float64)
    assert converted.requires_grad and converted.grad_fn.name() == "ToCopyBackward0"
    (converted * tm.tensor([3.0, 4.0], dtype=tm.float64)).sum().backward()
    assert t.grad.tolist() == [3.0, 4.0] and t.grad.dtype == tm.float32
    copied = tm.asarray(t, copy=True, requires_grad=True)
    assert copied.grad_fn.name() == "CloneBackward0"
    detached = tm.asarray(t, dtype=tm.float64, requires_grad=False)
    assert not detached.requires_grad and detached.is_leaf
    assert tm.asarray(t, requires_grad=True) is t
    with tm.no_grad():
        assert not tm.asarray(t, dtype=tm.float64, requires_grad=False).requires_grad
    leaf = tm.tensor([1.0], requires_grad=True)
    assert tm.asarray(leaf, requires_grad=False) is leaf and not leaf.requires_grad  # PyTorch's flag on the leaf


@pytest.mark.parametrize("expression", [
    "L.asarray(L.tensor([1.5], requires_grad=True), dtype=L.float64).requires_grad",
    "L.asarray(L.tensor([1.5], requires_grad=True), dtype=L.float64).grad_fn.name()",
    "L.asarray(L.tensor([1.5], requires_grad=True), copy=True).grad_fn.name()",
    "L.asarray(L.tensor([1.5], requires_grad=True), dtype=L.float64, requires_grad=False).requires_grad",
    "L.asarray(L.tensor([1.5], requires_grad=True) * 2, requires_grad=False).is_leaf",
    "L.asarray(L.tensor([1.5], requires_grad=True), copy=False, dtype=L.float64)",
    "L.asarray(L.ones(2, dtype=L.long), requires_grad=True)",
    "L.autograd.grad(L.asarray(x := L.tensor([1.5, 2.0], requires_grad=True), dtype=L.float64).pow(2).sum(), x)[0]",
])
def test_asarray_requires_grad_matches_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression)


# -- slice_scatter, select_scatter, diagonal_scatter ------------------------------------------------------

def test_view_scatters_literal_values_and_gradients():
    x = tm.zeros(2, 3, requires_grad=True)
    src = tm.tensor([[1.0], [2.0]], requires_grad=True)
    out = tm.slice_scatter(x, src, 1, 1, 2)
    assert out.tolist() == [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]] and out.grad_fn.name() == "SliceScatterBackward0"
    (out * tm.arange(6.0).reshape(2, 3)).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 2.0], [3.0, 0.0, 5.0]] and src.grad.tolist() == [[1.0], [4.0]]
    assert tm.zeros(2, 2).select_scatter(tm.tensor([5, 6]), 1, 0).tolist() == [[5.0, 0.0], [6.0, 0.0]]
    assert tm.diagonal_scatter(tm.zeros(2, 2), tm.ones(1), -1).tolist() == [[0.0, 0.0], [1.0, 0.0]]
    with pytest.raises(RuntimeError, match=r"src size = \[3\], slice size = \[2\]"):
        tm.diagonal_scatter(tm.zeros(2, 2), tm.ones(3))


@pytest.mark.parametrize("expression", [
    "L.slice_scatter(L.zeros(3, 4), L.ones(3, 2), 1, 0, 4, 2)",
    "L.slice_scatter(L.zeros(3, 4), L.ones(3, 3), 1, 0, 4, 2)",
    "L.slice_scatter(L.zeros(3, 4), L.ones(2, 4), start=-2)",
    "L.slice_scatter(L.zeros(3, 4), L.ones(3, 2), 1, 0, 4, 0)",
    "L.slice_scatter(L.zeros(()), L.ones(()))",
    "L.slice_scatter(L.zeros(3, 4, dtype=L.long), L.full((3, 2), 2.7), 1, 0, 4, 2)",
    "L.select_scatter(L.zeros(3, 4), L.ones(4), 0, 5)",
    "L.select_scatter(L.zeros(3, 4), L.arange(3.0), 1, -1)",
    "L.select_scatter(L.zeros(3, 4), 1.0, 0, 1)",
    "L.diagonal_scatter(L.zeros(2, 3, 3), L.arange(6.0).reshape(3, 2), 0, 0, 2)",
    "L.diagonal_scatter(L.zeros(3, 4), L.ones(3), dim1=0, dim2=0)",
    "L.diagonal_scatter(L.zeros(3, 4), L.arange(2.0), 2).diagonal_scatter(L.ones(3))",
    "L.select_scatter(L.zeros(2, dtype=L.complex64, requires_grad=True), L.ones(()), 0, 0)",
])
def test_view_scatters_match_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression)


# -- frexp and ldexp ---------------------------------------------------------------------------------

def test_frexp_ldexp_literal_values_and_gradients():
    parts = tm.frexp(tm.tensor([8.0, -0.375, 0.0, float("inf")]))
    assert parts.mantissa.tolist() == [0.5, -0.75, 0.0, float("inf")] and parts.exponent.tolist() == [4, -1, 0, 0]
    assert parts.exponent.dtype == tm.int32 and type(parts).__name__ == "frexp"
    x = tm.tensor([3.0, 10.0], requires_grad=True)
    mantissa, exponent = x.frexp()
    mantissa.sum().backward()
    assert x.grad.tolist() == [0.25, 0.0625]  # 1 / 2 ** exponent
    y = tm.tensor([1.0, 3.0], requires_grad=True)
    out = tm.ldexp(y, tm.tensor([3, -1]))
    assert out.tolist() == [8.0, 1.5] and out.grad_fn.name() == "LdexpBackward0"
    out.sum().backward()
    assert y.grad.tolist() == [8.0, 0.5]  # the derivative (PyTorch's integer 2 ** -1 gives 0 there)
    with pytest.raises(RuntimeError, match="only supports floating-point dtypes"):
        tm.frexp(tm.tensor([1, 2]))


@pytest.mark.parametrize("expression", [
    "L.frexp(L.tensor([0.0, -0.0, 1.5, -3.0, 1e-40, inf, -inf, nan]))",
    "L.frexp(L.tensor([0.1, 3.0, 65504.0], dtype=L.float16))",
    "L.frexp(L.tensor([0.1, 3.0, 1e38], dtype=L.bfloat16))",
    "L.frexp(L.tensor([0.1, 1e-310], dtype=L.float64))",
    "L.frexp(L.tensor([1, 2]))",
    "L.tensor([5.0]).frexp()",
    "L.ldexp(L.tensor([1, 2]), L.tensor([3, 1]))",
    "L.ldexp(L.tensor([1.0], dtype=L.float16), L.tensor([3]))",
    "L.ldexp(L.tensor([1.0]), L.tensor([3.0], dtype=L.float64))",
    "L.ldexp(L.tensor([1.0, 2.0]), L.tensor([0.5, -1.5]))",
    "L.ldexp(L.tensor([1.0]), 2)",
    "L.ldexp(L.tensor([1 + 1j]), L.tensor([2]))",
    "L.tensor([1.0, 2.0]).ldexp_(L.tensor([1, 2]))",
])
def test_frexp_ldexp_match_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression, rtol=1e-6, atol=0)


# -- unravel_index -----------------------------------------------------------------------------------------

def test_unravel_index_literal_values():
    rows, columns = tm.unravel_index(tm.tensor([[4, 1], [-1, 6]]), (2, 3))
    assert rows.tolist() == [[1, 0], [1, 0]] and columns.tolist() == [[1, 1], [2, 0]]  # wraps, as PyTorch
    assert tm.unravel_index(tm.tensor(7, dtype=tm.int32), tm.Size([2, 2, 2]))[2].dtype == tm.int64
    assert tm.unravel_index(tm.tensor([3]), ()) == ()


@pytest.mark.parametrize("expression", [
    "L.unravel_index(L.tensor([4, 1]), (2, 3))", "L.unravel_index(L.tensor(4), [2, 3])",
    "L.unravel_index(L.tensor([4, 1]), 5)", "L.unravel_index(L.tensor([-1, -6, 6]), (2, 3))",
    "L.unravel_index(L.tensor([1.0]), (2, 3))", "L.unravel_index(L.tensor([1]), (2, -3))",
    "L.unravel_index(L.tensor([1]), (2.0, 3))", "L.unravel_index(L.tensor([True]), (2,))",
    "L.unravel_index(L.tensor([1]), '23')", "L.unravel_index(L.tensor([], dtype=L.int16), (2, 3))",
    "L.unravel_index(L.tensor([1]), (2 ** 40, 2 ** 40))",
])
def test_unravel_index_matches_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression)

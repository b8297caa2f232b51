"""Every layer and loss of ``tensormodes.nn`` against PyTorch's, with the same weights.

Each case is a constructor expression over ``L`` (the library) and the shapes
(or fixed values) of the inputs. Both libraries build the module, tensormodes
takes PyTorch's state dict, both run forward on the same inputs, then backward
with the same output gradient; outputs, input and parameter gradients, the
state dict's keys and shapes and the ``repr`` must agree.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm
from tests.torch_oracle import assert_raises_like_torch

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None

RNG = np.random.default_rng(1234)


def _floats(*shape):
    return ("float", shape)


def _ints(high, *shape):
    return ("int", high, shape)


def _signs(*shape):
    return ("sign", shape)


def _probs(*shape):
    return ("prob", shape)


def _positive(*shape):
    return ("positive", shape)


def _log_probs(*shape):
    return ("logprob", shape)


def _make(spec):
    kind = spec[0]
    if kind == "float":
        return RNG.standard_normal(spec[1]).astype(np.float32), True
    if kind == "int":
        return RNG.integers(0, spec[1], spec[2]).astype(np.int64), False
    if kind == "sign":
        return np.where(RNG.standard_normal(spec[1]) > 0, 1.0, -1.0).astype(np.float32), False
    if kind == "prob":
        return RNG.uniform(0.05, 0.95, spec[1]).astype(np.float32), True
    if kind == "positive":
        return RNG.uniform(0.5, 2.0, spec[1]).astype(np.float32), True
    if kind == "logprob":
        x = RNG.standard_normal(spec[1])
        x = x - np.log(np.exp(x).sum(-1, keepdims=True))
        return x.astype(np.float32), True
    raise AssertionError(kind)


# (constructor over L, input specs, whether input gradients are compared, train mode)
CASES = [
    ("L.nn.Linear(5, 3)", [_floats(4, 5)]),
    ("L.nn.Linear(5, 3, bias=False)", [_floats(2, 4, 5)]),
    ("L.nn.Bilinear(3, 4, 2)", [_floats(5, 3), _floats(5, 4)]),
    ("L.nn.Bilinear(3, 4, 2, bias=False)", [_floats(2, 5, 3), _floats(2, 5, 4)]),
    ("L.nn.Identity(3, foo=1)", [_floats(2, 3)]),
    ("L.nn.Flatten()", [_floats(2, 3, 4)]),
    ("L.nn.Flatten(0, 1)", [_floats(2, 3, 4)]),
    ("L.nn.Unflatten(1, (2, 3))", [_floats(4, 6)]),
    ("L.nn.Sequential(L.nn.Linear(4, 6), L.nn.Tanh(), L.nn.Linear(6, 2))", [_floats(3, 4)]),
    ("L.nn.Conv1d(2, 4, 3)", [_floats(2, 2, 9)]),
    ("L.nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2)", [_floats(2, 4, 11)]),
    ("L.nn.Conv1d(2, 3, 4, padding='same', padding_mode='reflect')", [_floats(1, 2, 8)]),
    ("L.nn.Conv1d(2, 3, 3, padding=2, padding_mode='circular', bias=False)", [_floats(1, 2, 7)]),
    ("L.nn.Conv2d(3, 4, 3)", [_floats(2, 3, 6, 5)]),
    ("L.nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2))", [_floats(2, 3, 7, 6)]),
    ("L.nn.Conv2d(4, 4, 3, padding='same', groups=4, padding_mode='replicate')", [_floats(1, 4, 5, 5)]),
    ("L.nn.Conv2d(2, 2, 3, padding='valid')", [_floats(1, 2, 5, 5)]),
    ("L.nn.Conv2d(2, 3, 2, padding=1, padding_mode='reflect')", [_floats(1, 2, 4, 4)]),
    ("L.nn.ConvTranspose1d(2, 4, 3, stride=2, output_padding=1)", [_floats(2, 2, 5)]),
    ("L.nn.ConvTranspose1d(4, 2, 3, padding=1, groups=2, dilation=2)", [_floats(1, 4, 6)]),
    ("L.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)", [_floats(2, 3, 4, 4)]),
    ("L.nn.ConvTranspose2d(2, 4, (2, 3), stride=(1, 2), bias=False)", [_floats(1, 2, 3, 3)]),
    ("L.nn.MaxPool1d(2)", [_floats(2, 3, 8)]),
    ("L.nn.MaxPool1d(3, stride=2, padding=1, dilation=1, ceil_mode=True)", [_floats(2, 3, 8)]),
    ("L.nn.MaxPool2d(2)", [_floats(2, 3, 6, 6)]),
    ("L.nn.MaxPool2d((3, 2), stride=1, padding=1)", [_floats(1, 2, 5, 4)]),
    ("L.nn.BatchNorm1d(3)", [_floats(5, 3)]),
    ("L.nn.BatchNorm1d(3, momentum=None)", [_floats(4, 3, 6)]),
    ("L.nn.BatchNorm1d(3, affine=False)", [_floats(4, 3)]),
    ("L.nn.BatchNorm1d(3, track_running_stats=False, bias=False)", [_floats(4, 3)]),
    ("L.nn.BatchNorm2d(2)", [_floats(3, 2, 4, 4)]),
    ("L.nn.BatchNorm2d(2, eps=1e-3, momentum=0.3)", [_floats(3, 2, 2, 3)]),
    ("L.nn.LayerNorm(4)", [_floats(3, 4)]),
    ("L.nn.LayerNorm((3, 4), elementwise_affine=False)", [_floats(2, 3, 4)]),
    ("L.nn.LayerNorm([4], bias=False)", [_floats(2, 4)]),
    ("L.nn.GroupNorm(2, 4)", [_floats(3, 4, 5)]),
    ("L.nn.GroupNorm(1, 4, affine=False)", [_floats(2, 4, 2, 2)]),
    ("L.nn.InstanceNorm2d(3)", [_floats(2, 3, 4, 4)]),
    ("L.nn.InstanceNorm2d(3, affine=True, track_running_stats=True)", [_floats(2, 3, 4, 4)]),
    ("L.nn.InstanceNorm2d(2)", [_floats(2, 3, 3)]),
    ("L.nn.Embedding(10, 3)", [_ints(10, 4, 5)]),
    ("L.nn.Embedding(10, 3, padding_idx=2)", [("fixed", np.array([[2, 1, 2, 9]]))]),
    ("L.nn.Embedding(10, 3, padding_idx=-1, scale_grad_by_freq=True)", [("fixed", np.array([1, 1, 9, 3]))]),
    ("L.nn.Dropout(0.0)", [_floats(3, 4)]),
    ("L.nn.Dropout(1.0)", [_floats(3, 4)]),
    ("L.nn.ReLU()", [_floats(3, 4)]),
    ("L.nn.ReLU6()", [_floats(3, 4)]),
    ("L.nn.LeakyReLU(0.2)", [_floats(3, 4)]),
    ("L.nn.PReLU()", [_floats(3, 4)]),
    ("L.nn.PReLU(4, init=0.1)", [_floats(2, 4, 3)]),
    ("L.nn.ELU(alpha=0.5)", [_floats(3, 4)]),
    ("L.nn.SELU()", [_floats(3, 4)]),
    ("L.nn.CELU(alpha=2.0)", [_floats(3, 4)]),
    ("L.nn.GELU()", [_floats(3, 4)]),
    ("L.nn.GELU(approximate='tanh')", [_floats(3, 4)]),
    ("L.nn.SiLU()", [_floats(3, 4)]),
    ("L.nn.Mish()", [_floats(3, 4)]),
    ("L.nn.Hardtanh(-0.5, 0.5)", [_floats(3, 4)]),
    ("L.nn.Hardswish()", [_floats(3, 4)]),
    ("L.nn.Hardsigmoid()", [_floats(3, 4)]),
    ("L.nn.Hardshrink(0.3)", [_floats(3, 4)]),
    ("L.nn.Sigmoid()", [_floats(3, 4)]),
    ("L.nn.Tanh()", [_floats(3, 4)]),
    ("L.nn.Softplus(beta=2.0, threshold=1.0)", [_floats(3, 4)]),
    ("L.nn.Softsign()", [_floats(3, 4)]),
    ("L.nn.Tanhshrink()", [_floats(3, 4)]),
    ("L.nn.LogSigmoid()", [_floats(3, 4)]),
    ("L.nn.Softmax(dim=1)", [_floats(3, 4)]),
    ("L.nn.LogSoftmax(dim=0)", [_floats(3, 4)]),
    ("L.nn.Softmin(dim=-1)", [_floats(3, 4)]),
    ("L.nn.Threshold(0.1, 20.0)", [_floats(3, 4)]),
    ("L.nn.GLU()", [_floats(3, 4)]),
    ("L.nn.GLU(dim=0)", [_floats(4, 3)]),
    ("L.nn.CrossEntropyLoss()", [_floats(5, 4), _ints(4, 5)]),
    ("L.nn.CrossEntropyLoss(weight=L.tensor([1., 2., 0.5, 1.]), ignore_index=1, label_smoothing=0.1)",
     [_floats(6, 4), _ints(4, 6)]),
    ("L.nn.CrossEntropyLoss(reduction='none')", [_floats(2, 4, 3), _ints(4, 2, 3)]),
    ("L.nn.NLLLoss()", [_log_probs(5, 4), _ints(4, 5)]),
    ("L.nn.NLLLoss(weight=L.tensor([1., 2., 0.5, 1.]), reduction='sum')", [_log_probs(5, 4), _ints(4, 5)]),
    ("L.nn.MSELoss()", [_floats(3, 4), _floats(3, 4)]),
    ("L.nn.MSELoss(reduction='sum')", [_floats(3, 4), _floats(3, 4)]),
    ("L.nn.L1Loss(reduction='none')", [_floats(3, 4), _floats(3, 4)]),
    ("L.nn.SmoothL1Loss(beta=0.5)", [_floats(3, 4), _floats(3, 4)]),
    ("L.nn.HuberLoss(delta=0.7)", [_floats(3, 4), _floats(3, 4)]),
    ("L.nn.BCELoss()", [_probs(3, 4), _probs(3, 4)]),
    ("L.nn.BCELoss(weight=L.tensor([1., 2., 3., 4.]))", [_probs(3, 4), _probs(3, 4)]),
    ("L.nn.BCEWithLogitsLoss()", [_floats(3, 4), _probs(3, 4)]),
    ("L.nn.BCEWithLogitsLoss(pos_weight=L.tensor([1., 2., 3., 0.5]), reduction='sum')",
     [_floats(3, 4), _probs(3, 4)]),
    ("L.nn.KLDivLoss(reduction='batchmean')", [_log_probs(3, 4), _probs(3, 4)]),
    ("L.nn.KLDivLoss(reduction='sum', log_target=True)", [_log_probs(3, 4), _log_probs(3, 4)]),
    ("L.nn.MarginRankingLoss(margin=0.2)", [_floats(5), _floats(5), _signs(5)]),
    ("L.nn.HingeEmbeddingLoss(margin=0.5)", [_floats(5), _signs(5)]),
    ("L.nn.SoftMarginLoss()", [_floats(5), _signs(5)]),
    ("L.nn.CosineEmbeddingLoss(margin=0.1)", [_floats(4, 3), _floats(4, 3), _signs(4)]),
    ("L.nn.PoissonNLLLoss()", [_floats(3, 4), _positive(3, 4)]),
    ("L.nn.PoissonNLLLoss(log_input=False, full=True)", [_positive(3, 4), _positive(3, 4)]),
    ("L.nn.GaussianNLLLoss()", [_floats(3, 4), _floats(3, 4), _positive(3, 4)]),
    ("L.nn.GaussianNLLLoss(full=True, reduction='sum')", [_floats(3, 4), _floats(3, 4), _positive(3, 1)]),
    ("L.nn.TripletMarginLoss(margin=0.5)", [_floats(4, 3), _floats(4, 3), _floats(4, 3)]),
    ("L.nn.TripletMarginLoss(p=1.0, swap=True)", [_floats(4, 3), _floats(4, 3), _floats(4, 3)]),
]


def _inputs(specs):
    arrays = []
    for spec in specs:
        if spec[0] == "fixed":
            arrays.append((spec[1], False))
        else:
            arrays.append(_make(spec))
    return arrays


def _tm_from_torch(t):
    return tm.from_numpy(t.detach().numpy().copy())


def _run(library, module, arrays):
    inputs = []
    for array, differentiable in arrays:
        value = library.from_numpy(array.copy())
        if differentiable:
            value.requires_grad_(True)
        inputs.append(value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        output = module(*inputs)
    return inputs, output


def _close(ours, theirs, what, rtol=1e-5, atol=1e-6):
    assert ours is not None and theirs is not None or ours is theirs, f"{what}: {ours} vs {theirs}"
    if theirs is None:
        return
    theirs = theirs.detach().numpy()
    ours = ours.detach().numpy()
    assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype} != {theirs.dtype}"
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != {theirs.shape}"
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, err_msg=what)


def _repr_as_torch(text: str) -> str:
    return text.replace("tensormodes.", "torch.")


@pytest.mark.torch
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("expression, specs", CASES, ids=[c[0].removeprefix("L.nn.") for c in CASES])
def test_layer_matches_torch(expression, specs, train):
    theirs = eval(expression, {"L": torch})
    ours = eval(expression, {"L": tm})
    assert _repr_as_torch(repr(ours)) == repr(theirs)
    their_state = theirs.state_dict()
    assert [(k, tuple(v.shape), _repr_as_torch(str(v.dtype))) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape), str(v.dtype)) for k, v in their_state.items()]
    result = ours.load_state_dict({k: _tm_from_torch(v) for k, v in their_state.items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    ours.train(train)
    theirs.train(train)
    arrays = _inputs(specs)
    their_inputs, their_out = _run(torch, theirs, arrays)
    our_inputs, our_out = _run(tm, ours, arrays)
    _close(our_out, their_out, f"{expression}: output")
    seed = np.random.default_rng(7).standard_normal(tuple(their_out.shape)).astype(np.float32)
    their_out.backward(torch.from_numpy(seed))
    our_out.backward(tm.from_numpy(seed.copy()))
    for i, (a, b) in enumerate(zip(our_inputs, their_inputs)):
        if b.requires_grad:
            _close(a.grad, b.grad, f"{expression}: grad of input {i}", rtol=1e-4, atol=1e-5)
    their_params = dict(theirs.named_parameters())
    for name, param in ours.named_parameters():
        _close(param.grad, their_params[name].grad, f"{expression}: grad of {name}", rtol=1e-4, atol=1e-5)
    # Running statistics (and num_batches_tracked) after the step.
    for (name, ours_buffer), (_, theirs_buffer) in zip(ours.named_buffers(), theirs.named_buffers()):
        np.testing.assert_allclose(ours_buffer.numpy(), theirs_buffer.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{expression}: buffer {name}")


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.Linear(200, 300)", "L.nn.Conv2d(8, 160, 3)", "L.nn.Conv1d(40, 600, 5, groups=2)",
    "L.nn.ConvTranspose2d(80, 40, 3)", "L.nn.Bilinear(60, 7, 500)", "L.nn.Embedding(500, 20)",
])
def test_default_initialisation_matches_torch(expression):
    """PyTorch's ``reset_parameters`` schemes. Uniform ones: both libraries stay inside
    U(-b, b) with PyTorch's b, and our standard deviation is b / sqrt(3) within 10% (every checked tensor
    has at least 300 values: the std's relative standard error is under 2.6%, so 10% is about 4 sigma).
    Embeddings: N(0, 1), |mean| < 0.03 and std within 3% of 1 over 10,000 values (about 3 sigma).
    Seeded, so the figures are the same on every run."""
    tm.manual_seed(0)
    torch.manual_seed(0)
    ours = eval(expression, {"L": tm})
    theirs = eval(expression, {"L": torch})
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        ours_values, theirs_values = p.detach().numpy(), q.detach().numpy()
        assert ours_values.shape == theirs_values.shape and ours_values.dtype == theirs_values.dtype
        if expression.startswith("L.nn.Embedding"):
            assert abs(ours_values.mean()) < 0.03 and abs(ours_values.std() - 1) < 0.03
            continue
        if expression.startswith("L.nn.Bilinear"):
            bound = 1 / np.sqrt(60)
        else:
            fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(theirs.weight)
            bound = 1 / np.sqrt(fan_in)
        assert np.abs(theirs_values).max() <= bound and np.abs(ours_values).max() <= bound, name
        assert abs(ours_values.std() / (bound / np.sqrt(3)) - 1) < 0.1, name


def test_linear_initialisation_bounds_exact():
    """kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias alike."""
    layer = tm.nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)
    weight = layer.weight.detach().numpy()
    assert np.abs(weight).max() <= bound
    # 120,000 uniform samples: the max reaches within 0.1% of the bound, the std is b / sqrt(3) within 1%.
    assert np.abs(weight).max() > 0.999 * bound
    assert abs(weight.std() - bound / np.sqrt(3)) < 0.01 * bound / np.sqrt(3)
    assert np.abs(layer.bias.detach().numpy()).max() <= bound


def test_conv_padding_modes_validated():
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        tm.nn.Conv2d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        tm.nn.Conv1d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        tm.nn.Conv1d(1, 1, 3, padding="full")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        tm.nn.Conv1d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        tm.nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.Conv1d(1, 1, 3, stride=2, padding='same')",
    "L.nn.Conv1d(3, 4, 3, groups=2)",
    "L.nn.Conv1d(4, 3, 3, groups=2)",
    "L.nn.Conv1d(4, 4, 3, groups=0)",
    "L.nn.ConvTranspose1d(1, 1, 3, padding_mode='circular')",
    "L.nn.ConvTranspose1d(2, 3, 3, stride=2)(L.ones(1, 2, 4), output_size=[20])",
    "L.nn.ConvTranspose1d(2, 3, 3, stride=2)(L.ones(1, 2, 4), output_size=[1, 2, 3, 4])",
    "L.nn.Dropout(1.5)",
    "L.nn.Hardtanh(1.0, 0.0)",
    "L.nn.GroupNorm(3, 4)",
    "L.nn.BatchNorm1d(3)(L.ones(2, 3, 4, 5))",
    "L.nn.BatchNorm2d(3)(L.ones(2, 3))",
    "L.nn.InstanceNorm2d(3, affine=True)(L.ones(2, 4, 3, 3))",
    "L.nn.InstanceNorm2d(3)(L.ones(2, 3))",
    "L.nn.Embedding(3, 2, padding_idx=3)",
    "L.nn.Embedding(3, 2, padding_idx=-4)",
    "L.nn.Embedding.from_pretrained(L.ones(3))",
    "L.nn.TripletMarginLoss(margin=-1.0)",
    "L.nn.Unflatten(1, [2, 2.5])",
    "L.nn.Unflatten(1, 2)",
    "L.nn.ParameterList()(1)",
    "L.nn.ParameterDict()(1)",
    "L.nn.ParameterList().extend(L.ones(2))",
    "L.nn.ModuleList().extend(3)",
    "L.nn.Sequential(L.nn.ReLU())[3]",
    "L.nn.ModuleList([L.nn.ReLU()])[-2]",
    "L.nn.Sequential() + L.nn.ModuleList()",
    "L.nn.Sequential(L.nn.ReLU()) * 0",
    "L.nn.ModuleDict().update(3)",
    "L.nn.ModuleDict().update([('a', L.nn.ReLU(), 1)])",
    "L.nn.ParameterDict()[1]",
])
def test_construction_and_call_errors_match_torch(expression):
    assert_raises_like_torch(expression)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.ModuleList([L.nn.Linear(2, 2), L.nn.Linear(2, 2), L.nn.ReLU(), L.nn.Linear(2, 2)])",
    "L.nn.ModuleList()",
    "L.nn.Sequential(L.nn.Sequential(L.nn.Conv2d(1, 2, 3), L.nn.BatchNorm2d(2)), L.nn.Flatten(), L.nn.Dropout())",
    "L.nn.ModuleDict({'b': L.nn.ReLU(), 'a': L.nn.ModuleList([L.nn.Tanh()])})",
    "L.nn.ParameterList([L.ones(2, 3), L.zeros(4, dtype=L.float64)])",
    "L.nn.ParameterDict({'b': L.ones(2), 'a': L.zeros(1, 3)})",
    "L.nn.Embedding(5, 2, max_norm=2.0, norm_type=1.0, scale_grad_by_freq=True, sparse=True)",
    "L.nn.Conv2d(4, 8, 3, stride=2, padding=1, dilation=2, groups=2, bias=False, padding_mode='circular')",
    "L.nn.ConvTranspose2d(4, 8, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2)",
    "L.nn.MaxPool2d(3, stride=1, padding=1, dilation=2, return_indices=True, ceil_mode=True)",
    "L.nn.BatchNorm2d(3, affine=False, momentum=None, track_running_stats=False)",
    "L.nn.LayerNorm((3, 4), eps=1e-3, bias=False)",
    "L.nn.InstanceNorm2d(3, affine=True, track_running_stats=True)",
    "L.nn.GroupNorm(2, 4, affine=False)",
    "L.nn.Unflatten(-1, (2, 3))",
    "L.nn.Softplus(beta=0.5)",
    "L.nn.ReLU(inplace=True)", "L.nn.ReLU6(inplace=True)", "L.nn.ELU(inplace=True)", "L.nn.SELU(inplace=True)",
    "L.nn.CELU(0.5, inplace=True)", "L.nn.SiLU(inplace=True)", "L.nn.Mish(inplace=True)",
    "L.nn.Hardswish(inplace=True)", "L.nn.Hardsigmoid(inplace=True)", "L.nn.LeakyReLU(0.1, inplace=True)",
    "L.nn.Hardtanh(inplace=True)", "L.nn.Threshold(1, 2, inplace=True)", "L.nn.Softmax()", "L.nn.Dropout(0.1, True)",
    "L.nn.CrossEntropyLoss(label_smoothing=0.2)", "L.nn.Hardshrink()",
])
def test_repr_matches_torch(expression):
    assert _repr_as_torch(repr(eval(expression, {"L": tm}))) == repr(eval(expression, {"L": torch}))


@pytest.mark.torch
def test_batchnorm_running_stats_over_steps_match_torch():
    """Three training steps then evaluation, with momentum 0.1 and None (cumulative average)."""
    for momentum in (0.1, None):
        ours, theirs = tm.nn.BatchNorm1d(3, momentum=momentum), torch.nn.BatchNorm1d(3, momentum=momentum)
        for step in range(3):
            batch = RNG.standard_normal((4 + step, 3)).astype(np.float32)
            ours(tm.from_numpy(batch))
            theirs(torch.from_numpy(batch))
        for name in ("running_mean", "running_var"):
            # atol: a float32 mean of O(1) values near 0 is only good to a few ulps of 1 — PyTorch's
            # kernel sums the rows in one chunk per thread (its thread count), ours in one
            np.testing.assert_allclose(getattr(ours, name).numpy(), getattr(theirs, name).numpy(), rtol=1e-6,
                                       atol=1e-7)
        assert int(ours.num_batches_tracked) == 3
        ours.eval()
        theirs.eval()
        batch = RNG.standard_normal((2, 3)).astype(np.float32)
        np.testing.assert_allclose(ours(tm.from_numpy(batch)).detach().numpy(),
                                   theirs(torch.from_numpy(batch)).detach().numpy(), rtol=1e-5, atol=1e-6)
        assert int(ours.num_batches_tracked) == 3


def test_batchnorm_eval_uses_running_stats_exactly():
    bn = tm.nn.BatchNorm1d(2, eps=0.0)
    bn.running_mean.copy_(tm.tensor([1.0, -1.0]))
    bn.running_var.copy_(tm.tensor([4.0, 0.25]))
    bn.eval()
    out = bn(tm.tensor([[3.0, 0.0]]))
    assert out.tolist() == [[1.0, 2.0]]
    assert int(bn.num_batches_tracked) == 0


def test_batchnorm_momentum_none_is_cumulative_average():
    bn = tm.nn.BatchNorm1d(1, momentum=None)
    for value in (2.0, 4.0, 9.0):
        bn(tm.tensor([[value - 1.0], [value + 1.0]]))
    assert bn.running_mean.tolist() == [5.0]  # (2 + 4 + 9) / 3
    assert int(bn.num_batches_tracked) == 3


def test_batchnorm_without_tracking_has_no_buffers_and_uses_batch_stats_in_eval():
    bn = tm.nn.BatchNorm1d(2, track_running_stats=False).eval()
    assert list(bn.state_dict()) == ["weight", "bias"]
    out = bn(tm.tensor([[1.0, 2.0], [3.0, 6.0]]))
    np.testing.assert_allclose(out.detach().numpy(), [[-1, -1], [1, 1]], atol=1e-4)


def test_dropout_train_and_eval():
    x = tm.ones(10000)
    drop = tm.nn.Dropout(0.25)
    y = drop(x)
    values = set(np.unique(y.numpy()).tolist())
    assert values == {0.0, 1 / 0.75} or values == {0.0, np.float32(1 / 0.75)}
    # 10,000 Bernoulli(0.25) draws: the kept fraction's std is 0.0043; 5 sigma is 0.022.
    assert abs(float((y != 0).float().mean()) - 0.75) < 0.022
    assert drop.eval()(x) is x or drop.eval()(x).tolist() == x.tolist()


def test_embedding_padding_idx_row_is_zero_and_gets_no_gradient():
    emb = tm.nn.Embedding(4, 2, padding_idx=1)
    assert emb.weight[1].tolist() == [0.0, 0.0]
    emb(tm.tensor([1, 1, 2])).sum().backward()
    assert emb.weight.grad[1].tolist() == [0.0, 0.0]
    assert emb.weight.grad[2].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("indices", [
    [3, 0, 3, 3, 1, 3, 0, 3],  # repeated rows: each row's lookups added in order, padded rows add +0
    [5] * 30 + list(range(30)),  # one row looked up far more often than the rest: added round by round
    [0, 1, 2, 3, 4, 5, 6, 7],  # each row once: one indexed update
])
def test_embedding_backward_adds_each_rows_lookups_in_order(indices):
    # Gradients whose sums depend on their order (1e8 + 1 - 1e8 is 0 in float32, not 1), -0.0
    # and NaN: the weight's gradient sums each row's lookups in lookup order from +0, as
    # PyTorch's embedding_dense_backward
    values = np.array([1e8, 1.0, -1e8, 3.0, -0.0, 2.5, np.nan, -7.0], np.float32)
    grads = np.stack([np.roll(values, shift) for shift in range(len(indices))])
    expected = np.zeros((30, 8), np.float32)
    for position, row in enumerate(indices):  # one addition at a time, in order
        expected[row] = expected[row] + grads[position]
    weight = tm.zeros(30, 8, requires_grad=True)
    tm.nn.functional.embedding(tm.tensor(indices), weight).backward(tm.tensor(grads))
    assert weight.grad.numpy().tobytes() == expected.tobytes()
    if torch is not None:
        theirs = torch.zeros(30, 8, requires_grad=True)
        torch.nn.functional.embedding(torch.tensor(indices), theirs).backward(torch.tensor(grads))
        assert theirs.grad.numpy().tobytes() == expected.tobytes()


def test_embedding_from_pretrained():
    weight = tm.tensor([[1.0, 2.0], [3.0, 4.0]])
    emb = tm.nn.Embedding.from_pretrained(weight, freeze=False, padding_idx=0)
    assert emb.weight.requires_grad and emb.padding_idx == 0
    assert emb(tm.tensor([1, 0])).tolist() == [[3.0, 4.0], [1.0, 2.0]]
    assert repr(emb) == "Embedding(2, 2, padding_idx=0)"


def test_conv_transpose_output_size_picks_output_padding():
    conv = tm.nn.ConvTranspose2d(1, 1, 3, stride=2)
    x = tm.ones(1, 1, 4, 4)
    assert conv(x).shape == (1, 1, 9, 9)
    assert conv(x, output_size=[10, 10]).shape == (1, 1, 10, 10)
    assert conv(x, output_size=(1, 1, 10, 9)).shape == (1, 1, 10, 9)


def test_sequential_container_operations():
    a, b, c = tm.nn.ReLU(), tm.nn.Tanh(), tm.nn.Sigmoid()
    seq = tm.nn.Sequential(a, b, c)
    assert seq[-1] is c and list(seq[1:]) == [b, c] and type(seq[1:]) is tm.nn.Sequential
    del seq[0]
    assert list(seq._modules) == ["0", "1"] and list(seq) == [b, c]
    seq.insert(1, a)
    assert list(seq) == [b, a, c]
    seq[0] = c
    assert list(seq) == [c, a, c]
    doubled = tm.nn.Sequential(a) * 2
    assert list(doubled) == [a, a]
    assert list(tm.nn.Sequential(a) + tm.nn.Sequential(b)) == [a, b]
    seq2 = tm.nn.Sequential(a)
    seq2 += tm.nn.Sequential(b)
    seq2 *= 2
    assert list(seq2) == [a, b, a, b]
    assert seq2.pop(1) is b and len(seq2) == 3
    assert "0" not in dir(seq2)


def test_module_list_and_dict_operations():
    a, b = tm.nn.ReLU(), tm.nn.Tanh()
    ml = tm.nn.ModuleList([a])
    ml.append(b)
    ml += [a]
    assert list(ml) == [a, b, a] and len(ml) == 3
    assert [type(m).__name__ for m in ml[::2]] == ["ReLU", "ReLU"]
    del ml[0]
    assert list(ml._modules) == ["0", "1"] and ml[0] is b
    ml.insert(0, a)
    assert list(ml) == [a, b, a]
    assert len(list(ml.parameters())) == 0 and len(list(ml.modules())) == 3  # a is shared
    md = tm.nn.ModuleDict({"x": a})
    md["y"] = b
    md.update([("z", a)])
    assert list(md) == ["x", "y", "z"] and "y" in md and md.pop("y") is b
    assert list(md.keys()) == ["x", "z"]
    md.clear()
    assert len(md) == 0


def test_parameter_list_and_dict_wrap_tensors():
    pl = tm.nn.ParameterList([tm.ones(2)])
    pl.append(tm.nn.Parameter(tm.zeros(1)))
    pl.append("not a tensor")
    assert [type(p).__name__ for p in pl] == ["Parameter", "Parameter", "str"]
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    assert len(pl[0:2]) == 2
    pd = tm.nn.ParameterDict({"b": tm.ones(1), "a": tm.ones(2)})
    assert list(pd) == ["a", "b"]  # a plain dict is sorted, as in PyTorch
    pd["c"] = tm.zeros(3)
    assert type(pd["c"]).__name__ == "Parameter" and pd.get("missing", 5) == 5
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c"]
    key, value = pd.popitem()
    assert key == "c" and list(pd) == ["a", "b"]
    merged = pd | tm.nn.ParameterDict({"z": tm.ones(1)})
    assert list(merged) == ["a", "b", "z"] and list(pd) == ["a", "b"]


def test_losses_take_legacy_reduction_arguments_with_warning():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please use "
                                         "reduction='sum' instead."):
        loss = tm.nn.MSELoss(size_average=False)
    assert loss.reduction == "sum"
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert tm.nn.L1Loss(reduce=False).reduction == "none"


def test_weighted_losses_keep_weight_as_buffer():
    loss = tm.nn.CrossEntropyLoss(weight=tm.tensor([1.0, 2.0]))
    assert list(loss.state_dict()) == ["weight"]
    assert loss.double().weight.dtype is tm.float64
    assert list(tm.nn.CrossEntropyLoss().state_dict()) == []


def test_softmax_without_dim_warns_like_torch():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        tm.nn.Softmax()(tm.ones(2, 3))


def _small_cnn(L):
    return L.nn.Sequential(
        L.nn.Conv2d(1, 4, 3, padding=1), L.nn.BatchNorm2d(4), L.nn.ReLU(), L.nn.MaxPool2d(2),
        L.nn.Conv2d(4, 6, 3, padding="same", padding_mode="reflect"), L.nn.GroupNorm(2, 6), L.nn.GELU(),
        L.nn.Flatten(), L.nn.Dropout(0.0), L.nn.Linear(6 * 4 * 4, 16), L.nn.LayerNorm(16), L.nn.Tanh(),
        L.nn.Linear(16, 3))


@pytest.mark.torch
def test_training_steps_match_torch():
    """Five plain SGD steps of a small CNN from the same weights: the same losses, weights and running stats."""
    theirs = _small_cnn(torch)
    ours = _small_cnn(tm)
    ours.load_state_dict({k: _tm_from_torch(v) for k, v in theirs.state_dict().items()})
    loss_theirs, loss_ours = torch.nn.CrossEntropyLoss(label_smoothing=0.1), tm.nn.CrossEntropyLoss(label_smoothing=0.1)
    rng = np.random.default_rng(5)
    for _ in range(5):
        x = rng.standard_normal((8, 1, 8, 8)).astype(np.float32)
        y = rng.integers(0, 3, 8)
        for model, loss_fn, library in ((theirs, loss_theirs, torch), (ours, loss_ours, tm)):
            model.zero_grad()
            loss = loss_fn(model(library.from_numpy(x.copy())), library.from_numpy(y.copy()))
            loss.backward()
            with library.no_grad():
                for p in model.parameters():
                    p -= 0.1 * p.grad
            model.last_loss = loss.item()
        np.testing.assert_allclose(ours.last_loss, theirs.last_loss, rtol=1e-5)
    for (name, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)

"""``nn.init``'s deprecated names, ``nn.utils``'s gradient-norm pieces (``get_total_norm``,
``clip_grads_with_norm_``, the deprecated ``clip_grad_norm``), batch-norm fusion and ``skip_init``,
as PyTorch 2.13's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm

DEPRECATED_INITS = ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                    "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]
ARGUMENTS = {"constant": (0.25,), "sparse": (0.5,)}


@pytest.mark.parametrize("name", DEPRECATED_INITS)
def test_a_deprecated_init_warns_and_fills_as_its_new_name(name):
    shape = (3, 4, 1) if name == "dirac" else (3, 4)
    old, new = tm.empty(shape), tm.empty(shape)
    tm.manual_seed(7)
    with pytest.warns(FutureWarning, match=rf"^`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.$"):
        returned = getattr(tm.nn.init, name)(old, *ARGUMENTS.get(name, ()))
    tm.manual_seed(7)
    getattr(tm.nn.init, name + "_")(new, *ARGUMENTS.get(name, ()))
    assert returned is old and tm.equal(old, new)


def _parameters(library, grads):
    params = []
    for grad in grads:
        p = library.nn.Parameter(library.zeros(len(grad)))
        p.grad = library.tensor(grad)
        params.append(p)
    return params


def test_clip_grad_norm_is_get_total_norm_then_clip_grads_with_norm():
    params = _parameters(tm, [[3.0, 4.0], [12.0]])
    total = tm.nn.utils.get_total_norm([p.grad for p in params])
    assert total.item() == 13.0
    tm.nn.utils.clip_grads_with_norm_(params, 6.5, total)
    assert [p.grad.tolist() for p in params] == [[1.4999998807907104, 1.9999998807907104], [5.999999523162842]]
    assert tm.nn.utils.get_total_norm([]).item() == 0.0
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is "
                                           "non-finite"):
        tm.nn.utils.get_total_norm([tm.tensor([float("inf")])], error_if_nonfinite=True)
    params = _parameters(tm, [[3.0, 4.0]])
    with pytest.warns(FutureWarning, match="`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                                           "`torch.nn.utils.clip_grad_norm_`."):
        assert tm.nn.utils.clip_grad_norm(params, 1.0).item() == 5.0
    assert params[0].grad.tolist() == [0.5999999046325684, 0.7999998331069946]


@pytest.mark.torch
def test_gradient_norms_are_pytorchs():
    import torch

    grads = [[3.0, -4.0, 0.5], [12.0], [1e-3, 2.0]]
    for norm_type in (2.0, 1.0, float("inf"), 3.0):
        results = []
        for library in (tm, torch):
            params = _parameters(library, grads)
            total = library.nn.utils.get_total_norm([p.grad for p in params], norm_type)
            library.nn.utils.clip_grads_with_norm_(params, 2.0, total)
            results.append((total.item(), [p.grad.tolist() for p in params]))
        assert results[0] == results[1]


def _eval_pair(conv, bn):
    bn.running_mean.copy_(tm.tensor([0.5, -1.0, 2.0]))
    bn.running_var.copy_(tm.tensor([2.0, 0.25, 1.5]))
    with tm.no_grad():
        bn.weight.copy_(tm.tensor([1.5, -0.5, 2.0]))
        bn.bias.copy_(tm.tensor([0.1, 0.2, -0.3]))
    return conv.eval(), bn.eval()


@pytest.mark.parametrize("transpose", [False, True])
def test_a_fused_convolution_computes_the_batch_norm_of_the_convolution(transpose):
    tm.manual_seed(0)
    conv = tm.nn.ConvTranspose2d(3, 3, 2) if transpose else tm.nn.Conv2d(2, 3, 2)
    conv, bn = _eval_pair(conv, tm.nn.BatchNorm2d(3))
    x = tm.randn(2, 3 if transpose else 2, 5, 5)
    fused = tm.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    assert isinstance(fused.weight, tm.nn.Parameter) and fused.weight.requires_grad
    assert fused is not conv and tm.allclose(fused(x), bn(conv(x)), atol=1e-5)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        tm.nn.utils.fuse_conv_bn_eval(conv.train(), bn)


def test_a_fused_linear_layer_computes_the_batch_norm_of_the_layer():
    tm.manual_seed(0)
    linear, bn = _eval_pair(tm.nn.Linear(4, 3), tm.nn.BatchNorm1d(3))
    x = tm.randn(5, 4)
    assert tm.allclose(tm.nn.utils.fuse_linear_bn_eval(linear, bn)(x), bn(linear(x)), atol=1e-5)
    with pytest.raises(AssertionError, match="To fuse, linear.out_features == bn.num_features or bn.num_features "
                                             "== 1, got linear.out_features=3 and bn.num_features=2"):
        tm.nn.utils.fuse_linear_bn_eval(linear, tm.nn.BatchNorm1d(2).eval())


@pytest.mark.torch
def test_fused_weights_are_pytorchs_bit_for_bit():
    import torch

    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in ((3, 2, 2, 2), (3,), (3,), (3,), (3,), (3,))]
    arrays[3] = np.abs(arrays[3]) + 0.1  # the running variance
    for transpose in (False, True):
        weights = [arrays[0].transpose(1, 0, 2, 3).copy() if transpose else arrays[0], *arrays[1:4]]
        ours = tm.nn.utils.fuse_conv_bn_weights(*(tm.tensor(a) for a in weights), 1e-5,
                                                *(tm.tensor(a) for a in arrays[4:]), transpose)
        theirs = torch.nn.utils.fuse_conv_bn_weights(*(torch.tensor(a) for a in weights), 1e-5,
                                                     *(torch.tensor(a) for a in arrays[4:]), transpose)
        assert all(np.array_equal(o.detach().numpy(), t.detach().numpy()) for o, t in zip(ours, theirs))
    linear = [rng.standard_normal(shape).astype(np.float32) for shape in ((3, 4), (3,))]
    ours = tm.nn.utils.fuse_linear_bn_weights(*(tm.tensor(a) for a in linear + arrays[2:4]), 1e-5,
                                              *(tm.tensor(a) for a in arrays[4:]))
    theirs = torch.nn.utils.fuse_linear_bn_weights(*(torch.tensor(a) for a in linear + arrays[2:4]), 1e-5,
                                                   *(torch.tensor(a) for a in arrays[4:]))
    assert all(np.array_equal(o.detach().numpy(), t.detach().numpy()) for o, t in zip(ours, theirs))


def test_skip_init_builds_without_initialising():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layer = tm.nn.utils.skip_init(tm.nn.Linear, in_features=6, out_features=2)
    assert layer.weight.shape == (2, 6) and layer.weight.device == tm.device("cpu")
    assert tm.nn.utils.skip_init(tm.nn.Linear, 6, 2, device="meta").weight.is_meta
    with pytest.raises(RuntimeError, match="Expected a Module; got <class 'int'>"):
        tm.nn.utils.skip_init(int)

    class NoDevice(tm.nn.Module):
        def __init__(self, size):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
        tm.nn.utils.skip_init(NoDevice, 3)

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


def _weight_normed(library, dim=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        layer = library.nn.Conv1d(2, 3, 2)
        with library.no_grad():
            layer.weight.copy_(library.tensor(np.arange(12, dtype=np.float32).reshape(3, 2, 2) / 7 - 0.5))
            layer.bias.copy_(library.tensor([0.1, -0.2, 0.3]))
        return library.nn.utils.weight_norm(layer, dim=dim)


def test_the_hook_based_weight_norm_splits_the_weight_and_recomputes_it():
    with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated in favor of "
                                           "`torch.nn.utils.parametrizations.weight_norm`."):
        layer = tm.nn.utils.weight_norm(tm.nn.Linear(4, 3))
    assert sorted(layer.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert layer.weight_g.shape == (3, 1) and not isinstance(layer.weight, tm.nn.Parameter)
    with tm.no_grad():
        layer.weight_g.mul_(2)
    layer(tm.ones(2, 4))  # the pre-hook recomputes the weight
    assert tm.allclose(layer.weight.norm(dim=1), layer.weight_g.flatten())
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same parameter weight"):
        tm.nn.utils.weight_norm(layer)
    tm.nn.utils.remove_weight_norm(layer)
    assert sorted(layer.state_dict()) == ["bias", "weight"] and isinstance(layer.weight, tm.nn.Parameter)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in Linear"):
        tm.nn.utils.remove_weight_norm(layer)


@pytest.mark.torch
@pytest.mark.parametrize("dim", [0, 1, None])
def test_the_hook_based_weight_norm_is_pytorchs(dim):
    import torch

    ours, theirs = _weight_normed(tm, dim), _weight_normed(torch, dim)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    x = np.linspace(-1, 1, 20, dtype=np.float32).reshape(2, 2, 5)
    ours(tm.tensor(x)).square().sum().backward()
    theirs(torch.tensor(x)).square().sum().backward()
    for name in ("weight_g", "weight_v"):
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(), getattr(theirs, name).grad.numpy(), rtol=1e-5,
                                   atol=1e-6)
    ours.load_state_dict({k: tm.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(ours(tm.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)


def test_the_hook_based_spectral_norm_normalizes_and_records_its_version():
    tm.manual_seed(0)
    layer = tm.nn.utils.spectral_norm(tm.nn.Linear(5, 4))
    assert sorted(layer.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    for _ in range(30):  # power iteration, one step per training call
        layer(tm.ones(1, 5))
    assert abs(tm.linalg.matrix_norm(layer.weight, ord=2).item() - 1) < 1e-4
    assert layer.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    u = layer.weight_u.clone()
    layer.eval()(tm.ones(1, 5))
    assert tm.equal(layer.weight_u, u)  # no step in eval mode
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks on the same parameter weight"):
        tm.nn.utils.spectral_norm(layer)
    tm.nn.utils.remove_spectral_norm(layer)
    assert sorted(layer.state_dict()) == ["bias", "weight"] and not layer._state_dict_hooks
    assert not layer._load_state_dict_pre_hooks
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in Linear"):
        tm.nn.utils.remove_spectral_norm(layer)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but got n_power_iterations=0"):
        tm.nn.utils.spectral_norm(tm.nn.Linear(2, 2), n_power_iterations=0)


def test_a_version_0_spectral_norm_state_dict_gets_its_v_solved():
    tm.manual_seed(1)
    layer = tm.nn.utils.spectral_norm(tm.nn.Linear(3, 3))
    layer(tm.ones(1, 3))
    old = {k: v.clone() for k, v in layer.state_dict().items() if k != "weight_v"}
    old["weight"] = layer.weight.detach().clone()  # version 0 kept the normalized weight, no v
    fresh = tm.nn.utils.spectral_norm(tm.nn.Linear(3, 3))
    fresh.load_state_dict(old)
    fresh.eval()
    assert tm.allclose(fresh(tm.ones(1, 3)), layer.eval()(tm.ones(1, 3)), atol=1e-5)


@pytest.mark.torch
def test_the_hook_based_spectral_norm_is_pytorchs():
    import torch

    def run(library, make):
        library.manual_seed(0)
        layer = library.nn.utils.spectral_norm(make(library), n_power_iterations=2)
        x = library.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4))
        out = layer(x)
        out.square().sum().backward()
        return [a.detach().numpy() for a in (out, layer.weight_orig.grad, layer.weight_u, layer.weight_v)]

    for make in (lambda L: L.nn.Conv1d(3, 2, 2), lambda L: L.nn.ConvTranspose1d(3, 2, 2)):
        for ours, theirs in zip(run(tm, make), run(torch, make)):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_the_deprecated_container_and_nll_loss_2d_warn_and_work_as_pytorchs():
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated. All of its functionality is now "
                                           "implemented in `nn.Module`. Subclass that instead."):
        container = tm.nn.Container(first=tm.nn.ReLU(), second=tm.nn.Tanh())
    assert [name for name, _ in container.named_children()] == ["first", "second"]
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead"):
        loss = tm.nn.NLLLoss2d(ignore_index=0, reduction="sum")
    assert isinstance(loss, tm.nn.NLLLoss) and loss.ignore_index == 0
    scores = tm.tensor([[[[-1.0, -3.0]], [[-2.0, -0.5]]]])
    assert loss(scores, tm.tensor([[[1, 0]]])).item() == 2.0


def test_adaptive_log_softmax_gives_each_targets_log_probability():
    tm.manual_seed(0)
    asm = tm.nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs=[4, 9], div_value=2.0)
    assert [tuple(p.shape) for p in asm.parameters()] == [(6, 8), (4, 8), (5, 4), (2, 8), (3, 2)]
    x, target = tm.randn(6, 8), tm.tensor([0, 5, 11, 3, 9, 7])
    out = asm(x, target)
    full = asm.log_prob(x)
    assert tm.allclose(out.output, full.gather(1, target.unsqueeze(1)).squeeze(1), atol=1e-6)
    assert tm.allclose(out.loss, -out.output.mean()) and tm.allclose(full.exp().sum(1), tm.ones(6), atol=1e-5)
    assert tm.equal(asm.predict(x), full.argmax(1))
    assert asm(x[0], target[0]).output.shape == ()
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 11\], but values in range \[0, 12\] "
                                           "were found. "):
        asm(x[:2], tm.tensor([0, 12]))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive integers sorted"):
        tm.nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs=[9, 4])


@pytest.mark.torch
def test_adaptive_log_softmax_is_pytorchs():
    import torch

    def run(library):
        library.manual_seed(3)
        asm = library.nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs=[4, 9], div_value=2.0, head_bias=True)
        x = library.tensor(np.linspace(-2, 2, 48, dtype=np.float32).reshape(6, 8))
        out = asm(x, library.tensor([0, 5, 11, 3, 9, 7]))
        out.loss.backward()
        return ([p.detach().numpy().copy() for p in asm.parameters()], out.output.detach().numpy(),
                [p.grad.numpy() for p in asm.parameters()], asm.log_prob(x).detach().numpy(), asm.predict(x).numpy())

    ours, theirs = run(tm), run(torch)
    for a, b in zip(ours[0], theirs[0]):  # the same initial weights from the same seed
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ours[4], theirs[4])


def test_sync_batch_norm_with_one_process_is_batch_norm():
    tm.manual_seed(0)
    model = tm.nn.Sequential(tm.nn.Conv2d(2, 3, 1), tm.nn.BatchNorm2d(3, momentum=None), tm.nn.ReLU())
    bn = model[1]
    converted = tm.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    sync = converted[1]
    assert type(sync) is tm.nn.SyncBatchNorm and sync.weight is bn.weight and sync.running_mean is bn.running_mean
    x = tm.randn(2, 2, 3, 3)
    reference = tm.nn.functional.batch_norm(model[0](x), tm.zeros(3), tm.ones(3), bn.weight, bn.bias, True, 1.0)
    assert tm.allclose(sync(model[0](x)), reference) and sync.num_batches_tracked.item() == 1
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        sync(tm.zeros(3))
    with pytest.raises(ValueError, match="SyncBatchNorm number of input channels should be non-zero"):
        sync(tm.zeros(2, 0, 3))

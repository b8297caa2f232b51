"""tensormodes.nn.utils.parametrize and parametrizations (weight_norm, spectral_norm)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.nn.utils import parametrize as P
from tensormodes.nn.utils.parametrizations import spectral_norm, weight_norm


class Symmetric(tm.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


class Double(tm.nn.Module):
    def forward(self, X):
        return X * 2

    def right_inverse(self, A):
        return A / 2


def _layer():
    layer = tm.nn.Linear(3, 3)
    with tm.no_grad():
        layer.weight.copy_(tm.arange(9.0).reshape(3, 3))
    return layer


def test_register_use_and_remove():
    layer = _layer()
    weight = layer.weight
    assert P.register_parametrization(layer, "weight", Symmetric()) is layer
    assert type(layer).__name__ == "ParametrizedLinear" and P.type_before_parametrizations(layer) is tm.nn.Linear
    assert P.is_parametrized(layer) and P.is_parametrized(layer, "weight") and not P.is_parametrized(layer, "bias")
    # the original keeps its identity, holding right_inverse(weight)
    assert layer.parametrizations.weight.original is weight
    assert weight.tolist() == [[0.0, 1.0, 2.0], [0.0, 4.0, 5.0], [0.0, 0.0, 8.0]]
    assert layer.weight.tolist() == [[0.0, 1.0, 2.0], [1.0, 4.0, 5.0], [2.0, 5.0, 8.0]]
    assert list(layer.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [name for name, _ in layer.named_parameters()] == ["bias", "parametrizations.weight.original"]
    assert repr(layer) == ("ParametrizedLinear(\n  in_features=3, out_features=3, bias=True\n"
                           "  (parametrizations): ModuleDict(\n    (weight): ParametrizationList(\n"
                           "      (0): Symmetric()\n    )\n  )\n)")
    # gradients reach the original through the parametrization
    layer(tm.ones(1, 3)).sum().backward()
    assert weight.grad.tolist() == [[1.0, 2.0, 2.0], [0.0, 1.0, 2.0], [0.0, 0.0, 1.0]]

    # chaining, and assignment through right_inverse
    P.register_parametrization(layer, "weight", Double())
    assert layer.weight[1, 0].item() == 2.0
    layer.weight = tm.full((3, 3), 4.0)
    assert weight.tolist() == [[2.0, 2.0, 2.0], [0.0, 2.0, 2.0], [0.0, 0.0, 2.0]]

    P.remove_parametrizations(layer, "weight")
    assert type(layer) is tm.nn.Linear and not hasattr(layer, "parametrizations")
    assert layer.weight is weight and weight.tolist() == [[4.0] * 3] * 3
    assert list(layer.state_dict()) == ["bias", "weight"]


def test_remove_without_leaving_parametrized_and_errors():
    layer = _layer()
    P.register_parametrization(layer, "weight", Double(), unsafe=True)
    P.remove_parametrizations(layer, "weight", leave_parametrized=False)
    assert layer.weight.tolist() == [[0.0, 0.5, 1.0], [1.5, 2.0, 2.5], [3.0, 3.5, 4.0]]
    with pytest.raises(ValueError, match="does not have a parametrization on weight$"):
        P.remove_parametrizations(layer, "weight")
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with name "
                                         "'nothing'$"):
        P.register_parametrization(layer, "nothing", Double())

    class Flatten(tm.nn.Module):
        def forward(self, X):
            return X.flatten()

    with pytest.raises(ValueError, match=r"^Registering a parametrization may not change the shape of the tensor, "
                                         r"unless `unsafe` flag is enabled.\nunparametrized shape: "
                                         r"tensormodes.Size\(\[3, 3\]\)\nparametrized shape: "
                                         r"tensormodes.Size\(\[9\]\)$"):
        P.register_parametrization(_layer(), "weight", Flatten())

    class NoInverse(tm.nn.Module):
        def forward(self, X):
            return X

    layer = _layer()
    P.register_parametrization(layer, "weight", NoInverse())
    with pytest.raises(RuntimeError, match="^parametrization NoInverse does not implement right_inverse.$"):
        layer.weight = tm.zeros(3, 3)
    with pytest.raises(RuntimeError, match="^Serialization of parametrized modules is only supported through "
                                           "state_dict()"):
        layer.__getstate__()
    clone = copy.deepcopy(layer)
    assert type(clone).__name__ == "ParametrizedLinear" and tm.equal(clone.weight, layer.weight)


def test_cached_computes_once_per_block():
    calls = []

    class Counting(tm.nn.Module):
        def forward(self, X):
            calls.append(1)
            return X + 1

    layer = _layer()
    P.register_parametrization(layer, "weight", Counting())
    calls.clear()
    with P.cached():
        first = layer.weight
        with P.cached():
            assert layer.weight is first
        assert layer.weight is first
    assert len(calls) == 1
    assert layer.weight is not first and len(calls) == 2


def test_weight_norm_values_and_keys():
    layer = weight_norm(_layer())
    g = layer.parametrizations.weight.original0
    np.testing.assert_allclose(g.detach().numpy().ravel(), np.sqrt([5.0, 50.0, 149.0]), rtol=1e-6)
    assert g.shape == (3, 1) and isinstance(g, tm.nn.Parameter)
    np.testing.assert_allclose(layer.weight.detach().numpy(), np.arange(9.0).reshape(3, 3), rtol=1e-6, atol=1e-6)
    assert sorted(layer.state_dict()) == ["bias", "parametrizations.weight.original0",
                                          "parametrizations.weight.original1"]
    assert weight_norm(_layer(), dim=None).parametrizations.weight.original0.shape == ()
    # the old nn.utils.weight_norm keys load
    old = {"weight_g": tm.ones(3, 1), "weight_v": tm.eye(3), "bias": tm.zeros(3)}
    layer.load_state_dict(old)
    assert layer.weight.tolist() == tm.eye(3).tolist()


def test_spectral_norm_errors():
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'$"):
        spectral_norm(tm.nn.Linear(2, 2), name="w")
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-2, 1\] but "
                                         r"got 2\)$"):
        spectral_norm(tm.nn.Linear(2, 2), dim=2)
    with pytest.raises(ValueError, match="^Expected n_power_iterations to be positive, but got n_power_iterations=0$"):
        spectral_norm(tm.nn.Linear(2, 2), n_power_iterations=0)


@pytest.mark.torch
def test_same_as_pytorch():
    import torch
    from torch.nn.utils import parametrizations as TP

    data = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    x = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    for make, tmake in ((lambda m: weight_norm(m), lambda m: TP.weight_norm(m)),
                        (lambda m: weight_norm(m, dim=1), lambda m: TP.weight_norm(m, dim=1)),
                        (lambda m: weight_norm(m, dim=None), lambda m: TP.weight_norm(m, dim=None)),
                        (lambda m: spectral_norm(m), lambda m: TP.spectral_norm(m))):
        tm.manual_seed(4)
        torch.manual_seed(4)
        ours, theirs = tm.nn.Linear(3, 4), torch.nn.Linear(3, 4)
        with tm.no_grad(), torch.no_grad():
            ours.weight.copy_(tm.tensor(data))
            theirs.weight.copy_(torch.tensor(data))
            ours.bias.zero_()
            theirs.bias.zero_()
        ours, theirs = make(ours), tmake(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for _ in range(2):  # spectral_norm: one power iteration per call in training mode
            out, tout = ours(tm.tensor(x)), theirs(torch.tensor(x))
            np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
        out.pow(2).sum().backward()
        tout.pow(2).sum().backward()
        for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert name == tname
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-6)
        for key, value in ours.state_dict().items():
            np.testing.assert_allclose(value.numpy(), theirs.state_dict()[key].numpy(), rtol=1e-5, atol=1e-6)

"""tensormodes.func (torch.func) and tm.vmap: values against literals and loops of autograd.grad,
then the same lambdas run on PyTorch (values, shapes, requires_grad, error classes and messages)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.func import (
    functional_call,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    stack_module_state,
    vjp,
    vmap,
)


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))


# -- literals and loops ------------------------------------------------------------------------

def test_per_sample_gradients_of_an_mlp_equal_a_loop_of_autograd_grad():
    model = _mlp(tm)
    params = {name: p.detach() for name, p in model.named_parameters()}
    x, y = tm.randn(5, 3), tm.randn(5, 2)

    def loss(params, x, y):
        return tm.nn.functional.mse_loss(functional_call(model, params, (x.unsqueeze(0),)), y.unsqueeze(0))

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for i in range(5):
        model.zero_grad()
        expected = tm.autograd.grad(tm.nn.functional.mse_loss(model(x[i:i + 1]), y[i:i + 1]),
                                    list(model.parameters()))
        for (name, _), g in zip(model.named_parameters(), expected):
            assert np.array_equal(per_sample[name][i].numpy(), g.numpy()), name
    assert not any(g.requires_grad for g in per_sample.values())
    # the model's own parameters are untouched and still its parameters
    assert all(isinstance(p, tm.nn.Parameter) for p in model.parameters())


def test_jacobians_of_small_functions():
    x = tm.tensor([1.0, 2.0])
    assert jacrev(lambda a: a ** 2)(x).tolist() == [[2.0, 0.0], [0.0, 4.0]]
    assert jacfwd(lambda a: a ** 2)(x).tolist() == [[2.0, 0.0], [0.0, 4.0]]
    jac = jacrev(lambda a, b: {"p": a * b, "s": (a * b).sum()}, argnums=(0, 1))(x, tm.tensor(3.0))
    assert jac["p"][0].tolist() == [[3.0, 0.0], [0.0, 3.0]] and jac["p"][1].tolist() == [1.0, 2.0]
    assert jac["s"][0].tolist() == [3.0, 3.0] and jac["s"][1].tolist() == 3.0
    jac, aux = jacrev(lambda a: (a.sin(), a.cos()), has_aux=True)(tm.zeros(2))
    assert jac.tolist() == [[1.0, 0.0], [0.0, 1.0]] and aux.tolist() == [1.0, 1.0]
    assert jacrev(lambda a: a.sum())(x).tolist() == [1.0, 1.0]
    assert jacrev(lambda a: a.new_ones(2))(x).tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_hessian_of_a_quadratic():
    a = tm.tensor([[1.0, 2.0], [3.0, 4.0]])
    x = tm.tensor([0.5, -1.0])
    h = hessian(lambda v: v @ a @ v)(x)
    assert h.tolist() == (a + a.t()).tolist()
    assert not h.requires_grad


def test_nested_grad_and_no_perturbation_confusion():
    x = tm.tensor(2.0)
    assert grad(grad(lambda v: v ** 3))(x).item() == 12.0
    assert grad(grad(grad(lambda v: v ** 3)))(x).item() == 6.0
    # d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x: the inner grad must not see x as y
    assert grad(lambda v: v * grad(lambda w: v * w)(tm.tensor(1.0)))(x).item() == 4.0


def test_grad_keeps_outer_autograd_when_the_inputs_require_grad():
    w = tm.tensor([1.0, 2.0], requires_grad=True)
    g = grad(lambda v: (v ** 3).sum())(w)
    assert g.requires_grad
    g.sum().backward()
    assert w.grad.tolist() == [6.0, 12.0]
    # a captured tensor requiring grad keeps the graph too; the input itself did not require it
    c = tm.tensor(3.0, requires_grad=True)
    g = grad(lambda v: (v * c).sum())(tm.ones(2))
    assert g.requires_grad and tm.autograd.grad(g.sum(), c)[0].item() == 2.0


def test_grad_and_value_vjp_jvp():
    g, value = grad_and_value(lambda a: (a ** 2).sum())(tm.tensor([1.0, 2.0]))
    assert g.tolist() == [2.0, 4.0] and value.item() == 5.0 and not value.requires_grad
    (g, aux) = grad(lambda a: ((a ** 2).sum(), a * 10), has_aux=True)(tm.tensor([1.0]))
    assert g.tolist() == [2.0] and aux.tolist() == [10.0] and not aux.requires_grad
    out, vjp_fn = vjp(lambda a, b: (a * b, a + b), tm.tensor([1.0, 2.0]), tm.tensor([3.0, 4.0]))
    ga, gb = vjp_fn((tm.ones(2), tm.ones(2)))
    assert ga.tolist() == [4.0, 5.0] and gb.tolist() == [2.0, 3.0]
    out, tangent = jvp(lambda a: a.sin() * a, (tm.tensor([0.0, 1.0]),), (tm.tensor([1.0, 2.0]),))
    a = tm.tensor([0.0, 1.0])
    expected = (a.cos() * a + a.sin()) * tm.tensor([1.0, 2.0])
    assert np.allclose(tangent.numpy(), expected.numpy()) and not tangent.requires_grad
    # an output that does not depend on the input: zeros
    assert grad(lambda a, b: (b * 2).sum())(tm.ones(3), tm.ones(2)).tolist() == [0.0, 0.0, 0.0]


class _Tied(tm.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = tm.nn.Linear(2, 2, bias=False)
        self.second = tm.nn.Linear(2, 2, bias=False)
        self.second.weight = self.first.weight
        self.register_buffer("scale", tm.tensor(1.0))

    def forward(self, x):
        return self.second(self.first(x)) * self.scale


def test_functional_call_with_tied_weights():
    model = _Tied()
    eye = tm.eye(2) * 2
    x = tm.tensor([1.0, 3.0])
    # the value given for one name is used for its tied twin
    assert functional_call(model, {"first.weight": eye}, (x,)).tolist() == [4.0, 12.0]
    assert functional_call(model, ({"first.weight": eye}, {"scale": tm.tensor(0.5)}), x).tolist() == [2.0, 6.0]
    untied = functional_call(model, {"first.weight": eye}, (x,), tie_weights=False)
    assert np.allclose(untied.detach().numpy(), (model.second.weight @ (eye @ x)).detach().numpy())
    tied = "functional_call got multiple values for keys ['first.weight', 'second.weight'], which are tied."
    with pytest.raises(ValueError, match=re.escape(tied + " Consider using tie_weights=False")):
        functional_call(model, {"first.weight": eye, "second.weight": tm.eye(2)}, (x,))
    with pytest.raises(RuntimeError, match=re.escape("Error(s) in reparametrizing for _Tied:\n\tMissing key(s): "
                                                     "'scale'.")):
        functional_call(model, {"first.weight": eye}, (x,), strict=True)
    with pytest.raises(ValueError, match=re.escape("['scale'] appeared in multiple dictionaries; behavior of "
                                                   "functional call is ambiguous")):
        functional_call(model, ({"scale": tm.ones(())}, {"scale": tm.ones(())}), (x,))
    assert model.second.weight is model.first.weight


def test_functional_call_restores_the_state_after_an_exception():
    model = _Tied()
    weight, scale = model.first.weight, model.scale

    class Boom(Exception):
        pass

    def hook(module, args):
        assert module.weight is replacement
        raise Boom

    replacement = tm.zeros(2, 2)
    handle = model.first.register_forward_pre_hook(hook)
    with pytest.raises(Boom):
        functional_call(model, {"first.weight": replacement, "scale": tm.tensor(9.0)}, (tm.ones(2),))
    handle.remove()
    assert model.first.weight is weight and model.second.weight is weight and model.scale is scale
    assert dict(model.named_parameters())["first.weight"] is weight
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tm.nn.utils.stateless.functional_call(model, {"scale": tm.tensor(2.0)}, (tm.zeros(2),))
    assert "torch.func.functional_call" in str(caught[0].message) and caught[0].category is FutureWarning


def test_stack_module_state_for_an_ensemble():
    models = [tm.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = stack_module_state(models)
    assert params["weight"].shape == (4, 2, 3) and params["weight"].is_leaf and params["weight"].requires_grad
    x = tm.randn(5, 3)
    out = vmap(lambda p, b, x: functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(params, buffers, x)
    for i, model in enumerate(models):
        assert np.allclose(out[i].detach().numpy(), model(x).detach().numpy())
    with pytest.raises(RuntimeError, match="^stack_module_state: Expected all models to be of the same class.$"):
        stack_module_state([tm.nn.Linear(1, 1), tm.nn.Identity()])


def test_vmap_structures_dims_and_chunks():
    x = tm.arange(6.0).view(2, 3)
    assert vmap(lambda r: r.sum())(x).tolist() == [3.0, 12.0]
    assert vmap(lambda c: c.sum(), in_dims=-1)(x).tolist() == [3.0, 5.0, 7.0]
    assert vmap(lambda r: r * 2, out_dims=1)(x).shape == (3, 2)
    assert vmap(lambda r: r * 2, chunk_size=1)(x).tolist() == (x * 2).tolist()
    out = vmap(lambda d: {"a": d["x"] + 1, "b": (d["x"].sum(), 7)}, in_dims=({"x": 0},),
               out_dims={"a": 1, "b": (0, None)})({"x": x})
    assert out["a"].shape == (3, 2) and out["b"][0].tolist() == [3.0, 12.0] and out["b"][1] == 7
    # nested: an outer product
    assert vmap(vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(tm.tensor([1.0, 2.0]),
                                                                                 tm.tensor([3.0, 4.0])).tolist() == \
        [[3.0, 4.0], [6.0, 8.0]]
    # batch size 0
    assert vmap(lambda r: r.sum(0, keepdim=True).expand(4))(tm.ones(0, 3)).shape == (0, 4)
    # gradients flow through the slices
    w = tm.ones(2, 3, requires_grad=True)
    vmap(lambda r: (r * r).sum())(w).sum().backward()
    assert w.grad.tolist() == [[2.0] * 3] * 2


def test_vmap_randomness():
    with pytest.raises(RuntimeError, match="^vmap: called random operation while in randomness error mode"):
        vmap(lambda r: r + tm.randn(()))(tm.ones(3))
    with pytest.raises(RuntimeError, match="^vmap: called random operation while in randomness error mode"):
        vmap(lambda r: tm.nn.functional.dropout(r, 0.5))(tm.ones(3, 2))  # inside a composite
    for draw in (lambda r: tm.nn.init.kaiming_uniform_(r.clone()), lambda r: tm.nn.init.xavier_normal_(r.clone()),
                 lambda r: tm.nn.init.normal_(r.clone()), lambda r: r[tm.randperm(2)]):
        with pytest.raises(RuntimeError, match="^vmap: called random operation while in randomness error mode"):
            vmap(draw)(tm.ones(3, 2, 2))
    assert vmap(lambda r: tm.nn.functional.dropout(r, 0.5, training=False))(tm.ones(3)).tolist() == [1.0] * 3
    tm.manual_seed(1)
    same = vmap(lambda r: r + tm.randn(()), randomness="same")(tm.zeros(3))
    after_same = tm.randn(())
    tm.manual_seed(1)
    assert tm.randn(()).item() == same[0].item() == same[1].item() == same[2].item()
    assert tm.randn(()).item() == after_same.item()
    different = vmap(lambda r: r + tm.randn(()), randomness="different")(tm.zeros(3))
    assert len(set(different.tolist())) == 3
    with pytest.raises(RuntimeError, match="^Only allowed values for randomness are 'error', 'different', or 'same'. "
                                           "Got wrong$"):
        vmap(lambda r: r, randomness="wrong")


# -- against PyTorch ---------------------------------------------------------------------------

def _to_numpy(tree):
    if isinstance(tree, dict):
        return {k: _to_numpy(v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_to_numpy(v) for v in tree)
    if hasattr(tree, "detach"):
        return (tree.detach().numpy(), tuple(tree.shape), bool(tree.requires_grad))
    return tree


def _assert_same(ours, theirs):
    if isinstance(ours, dict):
        assert list(ours) == list(theirs)
        for key in ours:
            _assert_same(ours[key], theirs[key])
    elif isinstance(ours, (tuple, list)) and not (len(ours) == 3 and isinstance(ours[0], np.ndarray)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
    elif isinstance(ours, tuple):
        (a, shape_a, rg_a), (b, shape_b, rg_b) = ours, theirs
        assert shape_a == shape_b and rg_a == rg_b and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    else:
        assert ours == theirs


def _quadratic(lib, x):
    a = lib.tensor([[2.0, 1.0], [0.5, 3.0]])
    return x @ a @ x


def _grad_of_parameters(lib):
    """grad over a model's own parameters (they require grad): the gradients keep a graph."""
    model = _mlp(lib)
    grads = lib.func.grad(lambda p, x: lib.func.functional_call(model, p, (x,)).pow(2).sum())(
        dict(model.named_parameters()), lib.ones(2, 3))
    return grads, lib.autograd.grad(grads["0.weight"].sum(), model[2].weight)[0]


def _batched_grads(lib):
    """autograd.grad(is_grads_batched=True): values, unused inputs, a kept graph."""
    x, z = lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor(3.0, requires_grad=True)
    y = x ** 2 * z
    unused = lib.autograd.grad(y.sum(), [x, lib.ones(1, requires_grad=True)], lib.ones(3), is_grads_batched=True,
                               materialize_grads=True, retain_graph=True)
    pair = lib.autograd.grad([y, y.sum()], [x, z], [lib.eye(2), lib.ones(2)], is_grads_batched=True,
                             create_graph=True)
    return unused, pair, lib.autograd.grad(pair[0].sum(), x)


SAME_AS_PYTORCH = {
    "grad": lambda lib: lib.func.grad(lambda x: (x.sin() * x).sum())(lib.tensor([0.5, -1.0])),
    "grad_argnums": lambda lib: lib.func.grad(lambda x, y: (x * y.exp()).sum(), argnums=(1, 0))(
        lib.tensor([1.0, 2.0]), lib.tensor([0.1, 0.2])),
    "grad_pytree": lambda lib: lib.func.grad(lambda p: (p["w"] * p["b"][0]).sum())(
        {"w": lib.tensor([1.0, 2.0]), "b": [lib.tensor(3.0)]}),
    "grad_requires_grad_input": lambda lib: lib.func.grad(lambda x: (x ** 3).sum())(
        lib.tensor([1.0, 2.0], requires_grad=True)),
    "grad_and_value_aux": lambda lib: lib.func.grad_and_value(lambda x: ((x ** 2).sum(), {"x": x.detach()}),
                                                              has_aux=True)(lib.tensor([1.0, 3.0])),
    "grad_of_grad": lambda lib: lib.func.grad(lib.func.grad(lambda x: x.sin() * x ** 2))(lib.tensor(0.7)),
    "vjp": lambda lib: lib.func.vjp(lambda x: (x.tanh(), x.sum()), lib.tensor([0.3, 0.4]))[1](
        (lib.tensor([1.0, 2.0]), lib.tensor(3.0))),
    "vjp_mixed_outputs": lambda lib: (lambda w: lib.func.vjp(lambda x: (x * w, x * 2), lib.ones(2))[0])(
        lib.tensor([1.0, 2.0], requires_grad=True)),
    "jvp": lambda lib: lib.func.jvp(lambda x, y: (x * y).cos(), (lib.tensor([0.3, 0.4]), lib.tensor([1.0, 2.0])),
                                    (lib.tensor([1.0, 0.0]), lib.tensor([0.5, 0.5]))),
    "jacrev": lambda lib: lib.func.jacrev(lambda x, y: (x.unsqueeze(1) * y).exp(), argnums=(0, 1))(
        lib.tensor([0.1, 0.2]), lib.tensor([0.3, 0.4, 0.5])),
    "jacfwd": lambda lib: lib.func.jacfwd(lambda x: x.softmax(0))(lib.tensor([0.1, 0.2, 0.7])),
    "hessian": lambda lib: lib.func.hessian(lambda x: _quadratic(lib, x))(lib.tensor([1.0, -1.0])),
    "hessian_nonlinear": lambda lib: lib.func.hessian(lambda x: (x.sin() * x.prod()).sum())(lib.tensor([0.3, 0.5])),
    "vmap_in_out_dims": lambda lib: lib.vmap(lambda a, b: (a * b, a.sum()), in_dims=(1, None), out_dims=(0, 0))(
        lib.arange(6.0).view(2, 3), lib.tensor([1.0, 2.0])),
    "vmap_nested": lambda lib: lib.vmap(lib.vmap(lib.dot))(lib.ones(2, 3, 4), lib.arange(24.0).view(2, 3, 4)),
    "vmap_out_dims_negative": lambda lib: lib.vmap(lambda a: a.outer(a), out_dims=-1)(lib.arange(6.0).view(3, 2)),
    "vmap_unbatched_output": lambda lib: lib.vmap(lambda a: lib.ones(2))(lib.ones(3)),
    "linearize": lambda lib: lib.func.linearize(lambda x: (x.exp(), x.sum()), lib.tensor([0.5, 1.0]))[1](
        lib.tensor([1.0, -1.0])),
    "grad_functional_call_parameters": lambda lib: _grad_of_parameters(lib),
    "grads_batched": lambda lib: _batched_grads(lib),
    "jacrev_of_vmap": lambda lib: lib.func.jacrev(lib.vmap(lambda a: a.sin().sum()))(lib.tensor([[0.1, 0.2]])),
    "vmap_of_jacrev": lambda lib: lib.vmap(lib.func.jacrev(lambda a: a.sin()))(lib.tensor([[0.1, 0.2], [0.3, 0.4]])),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", list(SAME_AS_PYTORCH))
def test_same_as_pytorch(name):
    import torch
    import torch.func  # noqa: F401 - torch.func

    _assert_same(_to_numpy(SAME_AS_PYTORCH[name](tm)), _to_numpy(SAME_AS_PYTORCH[name](torch)))


@pytest.mark.torch
def test_per_sample_gradients_same_as_pytorch():
    import torch
    import torch.func  # noqa: F401 - torch.func

    def run(lib):
        model = _mlp(lib)
        params = {name: p.detach() for name, p in model.named_parameters()}
        x = lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
        y = lib.tensor(np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2))

        def loss(params, x, y):
            out = lib.func.functional_call(model, params, (x.unsqueeze(0),))
            return lib.nn.functional.mse_loss(out, y.unsqueeze(0))
        return lib.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    _assert_same(_to_numpy(run(tm)), _to_numpy(run(torch)))


@pytest.mark.torch
def test_randomness_draws_pytorchs_numbers():
    import torch

    def draws(lib):
        lib.manual_seed(0)
        same = lib.vmap(lambda r: r + lib.randn(3), randomness="same")(lib.zeros(4, 3))
        different = lib.vmap(lambda r: r + lib.rand(3), randomness="different")(lib.zeros(4, 3))
        dropped = lib.vmap(lambda r: lib.nn.functional.dropout(r, 0.5), randomness="different")(lib.ones(4, 3))
        in_sixteens = lib.vmap(lambda r: r + lib.randn(16), randomness="different")(lib.zeros(2, 16))
        return same, different, dropped, in_sixteens, lib.rand(2)

    for ours, theirs in zip(draws(tm), draws(torch)):
        assert np.array_equal(ours.numpy(), theirs.numpy())


def _batched_grad_error(lib, func, grad_outputs):
    x = lib.ones(2, requires_grad=True)
    return lib.autograd.grad(func(x), x, grad_outputs, is_grads_batched=True)


ERRORS = {
    "grad_not_scalar": lambda lib: lib.func.grad(lambda x: x)(lib.ones(3)),
    "grad_not_tensor": lambda lib: lib.func.grad(lambda x: 1.0)(lib.ones(3)),
    "grad_aux_not_pair": lambda lib: lib.func.grad(lambda x: x.sum(), has_aux=True)(lib.ones(3)),
    "grad_argnum_out_of_range": lambda lib: lib.func.grad(lambda x, y: x.sum(), argnums=2)(lib.ones(3), lib.ones(2)),
    "grad_argnums_repeated": lambda lib: lib.func.grad(lambda x, y: x.sum(), argnums=(0, 0))(lib.ones(3), lib.ones(2)),
    "grad_argnums_empty": lambda lib: lib.func.grad(lambda x, y: x.sum(), argnums=())(lib.ones(3), lib.ones(2)),
    "grad_argnums_float": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=0.5)(lib.ones(3)),
    "grad_non_tensor_input": lambda lib: lib.func.grad(lambda x: x)(2.0),
    "grad_integer_input": lambda lib: lib.func.grad(lambda x: x.sum())(lib.arange(3)),
    "grad_aux_not_tensors": lambda lib: lib.func.grad(lambda x: (x.sum(), {"n": 1}), has_aux=True)(lib.ones(2)),
    "vjp_aux_none": lambda lib: lib.func.vjp(lambda x: (x.sum(), None), lib.ones(2), has_aux=True),
    "vjp_integer_output": lambda lib: lib.func.vjp(lambda x: x.long(), lib.ones(2)),
    "vjp_non_tensor_output": lambda lib: lib.func.vjp(lambda x: (x, 1), lib.ones(2)),
    "vjp_cotangent_structure": lambda lib: lib.func.vjp(lambda x: x, lib.ones(2))[1]((lib.ones(2), lib.ones(2))),
    "jvp_primals_not_tuple": lambda lib: lib.func.jvp(lambda x: x, lib.ones(2), lib.ones(2)),
    "jvp_structure": lambda lib: lib.func.jvp(lambda x: x, (lib.ones(2),), (lib.ones(2), lib.ones(2))),
    "jvp_integer_primal": lambda lib: lib.func.jvp(lambda x: x * 2, (lib.arange(2),), (lib.arange(2),)),
    "jvp_integer_tangent": lambda lib: lib.func.jvp(lambda x: x * 2, (lib.ones(2),), (lib.arange(2),)),
    "jvp_tangent_shape": lambda lib: lib.func.jvp(lambda x: x * 2, (lib.ones(2),), (lib.ones(2, 1),)),
    "jacrev_chunk_size": lambda lib: lib.func.jacrev(lambda x: x, chunk_size=0),
    "jacrev_complex": lambda lib: lib.func.jacrev(lambda x: x)(lib.ones(2, dtype=lib.complex64)),
    "vmap_sizes": lambda lib: lib.vmap(lambda a, b: a + b)(lib.ones(3), lib.ones(2)),
    "vmap_in_dim_range": lambda lib: lib.vmap(lambda a: a, in_dims=2)(lib.ones(3, 2)),
    "vmap_in_dims_type": lambda lib: lib.vmap(lambda a: a, in_dims=[0])(lib.ones(3)),
    "vmap_in_dims_structure": lambda lib: lib.vmap(lambda a, b: a, in_dims=(0,))(lib.ones(3), lib.ones(3)),
    "vmap_in_dim_float": lambda lib: lib.vmap(lambda a: a, in_dims=(0.5,))(lib.ones(3)),
    "vmap_non_tensor_in_dim": lambda lib: lib.vmap(lambda a, n: a, in_dims=(0, 0))(lib.ones(3), 2),
    "vmap_nothing_batched": lambda lib: lib.vmap(lambda a: a, in_dims=None)(lib.ones(3)),
    "vmap_no_inputs": lambda lib: lib.vmap(lambda: 1)(),
    "vmap_non_tensor_output": lambda lib: lib.vmap(lambda a: (a, 1.0))(lib.ones(3)),
    "vmap_out_dims_type": lambda lib: lib.vmap(lambda a: a, out_dims="x")(lib.ones(3)),
    "vmap_out_dims_structure": lambda lib: lib.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(lib.ones(3)),
    "vmap_chunk_size": lambda lib: lib.vmap(lambda a: a, chunk_size=0),
    "vmap_random": lambda lib: lib.vmap(lambda a: a.clone().uniform_())(lib.ones(3)),
    "jacfwd_random": lambda lib: lib.func.jacfwd(lambda a: a * lib.rand(2))(lib.ones(2)),
    "functional_call_not_dicts": lambda lib: lib.func.functional_call(lib.nn.Linear(1, 1), [{}, 1], (lib.ones(1),)),
    "functional_call_bad_type": lambda lib: lib.func.functional_call(lib.nn.Linear(1, 1), 3, (lib.ones(1),)),
    "functional_call_strict": lambda lib: lib.func.functional_call(lib.nn.Linear(1, 1), {"weight": lib.ones(1, 1),
                                                                                          "extra": lib.ones(1)},
                                                                   (lib.ones(1),), strict=True),
    "functional_call_empty_name": lambda lib: lib.func.functional_call(lib.nn.Linear(1, 1), {"": lib.ones(1)},
                                                                       lib.ones(1)),
    "stack_module_state_empty": lambda lib: lib.func.stack_module_state([]),
    "grads_batched_shape": lambda lib: lib.autograd.grad((lib.ones(2, requires_grad=True) * 2), [lib.ones(2)],
                                                         lib.ones(3, 3), is_grads_batched=True),
    "grads_batched_scalar_none": lambda lib: _batched_grad_error(lib, lambda x: (x * 2).sum(), None),
    "grads_batched_none": lambda lib: _batched_grad_error(lib, lambda x: x * 2, None),
    "grads_batched_sizes": lambda lib: _batched_grad_error(lib, lambda x: (x * 2, x.sum()),
                                                           [lib.ones(3, 2), lib.ones(2)]),
    "functionalize_remove": lambda lib: lib.func.functionalize(lambda x: x, remove="views"),
    "linearize_structure": lambda lib: lib.func.linearize(lambda x: x, lib.ones(2))[1](lib.ones(2), lib.ones(2)),
    "linearize_dtype": lambda lib: lib.func.linearize(lambda x: x, lib.ones(2))[1](lib.ones(2, dtype=lib.float64)),
}


def _error_of(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error), str(error).replace("tensormodes.", "torch.")
    return None


@pytest.mark.torch
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_same_as_pytorch(name):
    import torch
    import torch.func  # noqa: F401 - torch.func

    theirs = _error_of(lambda: ERRORS[name](torch))
    assert theirs is not None
    assert _error_of(lambda: ERRORS[name](tm)) == theirs


def test_linearize_and_the_transforms_with_nothing_to_undo():
    out, jvp_fn = tm.func.linearize(lambda x, y: x.sin() * y, tm.tensor([0.0, 1.0]), tm.tensor(2.0))
    assert out.tolist() == (tm.tensor([0.0, 1.0]).sin() * 2).tolist()
    first = jvp_fn(tm.tensor([1.0, 0.0]), tm.tensor(0.0))
    assert first.tolist() == [2.0, 0.0] and jvp_fn(tm.zeros(2), tm.tensor(1.0)).tolist() == (out / 2).tolist()
    with pytest.raises(RuntimeError, match=re.escape("tangent:0 with shape tensormodes.Size([3]) in flattened pytree "
                                                     "doesn't match the shape tensormodes.Size([2]) of the "
                                                     "corresponding primal.")):
        jvp_fn(tm.zeros(3), tm.tensor(1.0))
    x = tm.zeros(2)
    assert tm.func.functionalize(lambda t: t.add_(1))(x) is x and x.tolist() == [1.0, 1.0]
    assert tm.func.debug_unwrap(x) is x
    net = tm.func.replace_all_batch_norm_modules_(tm.nn.Sequential(tm.nn.BatchNorm2d(2), tm.nn.Linear(2, 2)))
    assert net[0].running_mean is None and net[0].running_var is None and not net[0].track_running_stats
    assert set(dict(net.named_buffers())) == set()


@pytest.mark.torch
def test_the_namespace_is_pytorchs():
    import inspect

    import torch
    import torch.func  # noqa: F401 - torch.func

    missing = {"rearrange"}  # einops' pattern language: not here
    assert set(tm.func.__all__) == {name for name in dir(torch.func) if not name.startswith("_")} - missing
    for name in tm.func.__all__:
        ours, theirs = inspect.signature(getattr(tm.func, name)), inspect.signature(getattr(torch.func, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in theirs.parameters.values()], name
    assert tm.vmap is tm.func.vmap


def _meta_learning_and_ensembles(torch):
    """A PyTorch-style script (``torch`` is either library): MAML's inner step through
    ``functional_call`` and ``grad`` with the outer optimizer differentiating through it, an
    ensemble run with ``stack_module_state`` and ``vmap``, and DP-SGD's clipped per-sample
    gradients. Returns the numbers it would print."""
    functional_call, grad, stack_module_state, vmap = (torch.func.functional_call, torch.func.grad,
                                                       torch.func.stack_module_state, torch.func.vmap)
    F = torch.nn.functional
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    printed = []
    for step in range(3):
        x = torch.linspace(-1, 1, 10).unsqueeze(1).repeat(1, 2) * (step + 1)
        y = x.sum(1, keepdim=True).sin()
        params = dict(model.named_parameters())

        def inner_loss(p, x, y):
            return F.mse_loss(functional_call(model, p, (x,)), y)
        grads = grad(inner_loss)(params, x, y)
        adapted = {name: p - 0.1 * grads[name] for name, p in params.items()}
        outer = F.mse_loss(functional_call(model, adapted, (x * 0.5,)), y * 0.5)
        optimizer.zero_grad()
        outer.backward()
        optimizer.step()
        printed.append(outer.item())
    models = [torch.nn.Linear(2, 3) for _ in range(4)]
    stacked, buffers = stack_module_state(models)
    ensemble = vmap(lambda p, b, x: functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))
    printed.append(ensemble(stacked, buffers, torch.ones(5, 2)).sum().item())

    def sample_loss(p, xi, yi):
        return F.mse_loss(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))
    detached = {name: p.detach() for name, p in model.named_parameters()}
    x = torch.linspace(-1, 1, 12).view(6, 2)
    per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))(detached, x, x.sum(1, keepdim=True))
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()]).norm(dim=0)
    clipped = {name: (g / norms.clamp(min=1.0).view(-1, *[1] * (g.dim() - 1))).mean(0)
               for name, g in per_sample.items()}
    printed.extend(clipped[name].sum().item() for name in sorted(clipped))
    return printed


def test_a_meta_learning_script_runs():
    printed = _meta_learning_and_ensembles(tm)
    assert len(printed) == 8 and all(np.isfinite(printed))


@pytest.mark.torch
def test_a_meta_learning_script_prints_pytorchs_numbers():
    import torch
    import torch.func  # noqa: F401 - torch.func

    np.testing.assert_allclose(_meta_learning_and_ensembles(tm), _meta_learning_and_ensembles(torch), rtol=1e-4,
                               atol=1e-5)


def _run_example(source: str) -> str:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-c", source, "--steps", "10"], capture_output=True, text=True,
                            timeout=600, env=env, cwd=root)
    assert result.returncode == 0, result.stderr
    return result.stdout


EXAMPLE = "examples/per_sample_gradients.py"


def test_the_per_sample_gradients_example_runs():
    from pathlib import Path

    output = _run_example((Path(__file__).resolve().parents[1] / EXAMPLE).read_text())
    assert "per-sample gradients equal a loop of autograd.grad: True" in output
    assert "ensemble of 5: logits (5, 256, 2), same as each model: True" in output


@pytest.mark.torch
def test_the_per_sample_gradients_example_prints_what_pytorch_prints():
    from pathlib import Path

    source = (Path(__file__).resolve().parents[1] / EXAMPLE).read_text()
    with_torch = source.replace("import tensormodes as tm\n", "import torch as tm\n").replace(
        "from tensormodes.func import", "from torch.func import")
    assert _run_example(with_torch) == _run_example(source)

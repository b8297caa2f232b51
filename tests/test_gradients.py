"""Every differentiable op's gradient formula, checked by finite differences on its samples
(float64) to first and second order, and against PyTorch's gradients when torch is installed."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensormodes as tm
from tensormodes._ops import OPS, RANDOM_MODULES
from tensormodes._ops.registry import TensorSpec

from .op_samples import callable_for, make_array, materialize, tm_maker, torch_maker

# Ops whose gradient is zero almost everywhere or undefined at the sampled points
# are still checked: finite differences agree with a zero gradient away from
# the (measure-zero) jumps, which random samples avoid.
MAX_ELEMENTS = 64

# Samples where PyTorch 2.13 itself is inconsistent, so it cannot serve as the oracle:
# var/std(x, dim=()) reduce every element in the forward pass, but their backward
# treats () as "no dimension reduced" (dividing by N - 1 = 0 and returning infinities);
# addcdiv's backward fails for an integer tensor2 ("result type Float can't be cast to the
# desired output type Long") although its forward runs.
# vander's backward fails in PyTorch whenever its result has history ("modified by an inplace
# operation": its composite writes into a tensor its own backward saved).
# PyTorch's native pointwise losses divide a broadcast target's 'mean' gradient by the target's own
# element count (their backward swaps input and target); nn.functional broadcasts before calling them.
TORCH_ORACLE_BUGS = {("_mse_loss", 3), ("_smooth_l1_loss", 3), ("_huber_loss", 3),
                     ("var", 11), ("std", 11), ("var_mean", 11), ("std_mean", 11), ("addcdiv", 5), ("vander", 0),
                     ("vander", 2), ("vander", 5),
                     # PyTorch's double backward of embedding_dense_backward ignores scale_grad_by_freq
                     ("embedding_dense_backward", 1),
                     # complex samples give factors with a non-real diagonal, no Cholesky factor: LAPACK's potri
                     # (PyTorch's cholesky_inverse) then gives no (L L^H)^-1 to differentiate
                     ("cholesky_inverse", 0), ("cholesky_inverse", 1), ("cholesky_inverse", 2)}
# Samples with a dtype argument are left out (it would round the float64 results), except
# for these ops, whose dtype argument does not set the result's dtype.
# Complex singular vectors are defined up to a phase each, so a generic function of them is
# ill-defined (the gradient raises, as in PyTorch): test_linalg checks phase-invariant ones.
PHASE_DEPENDENT = {"linalg_svd", "svd"}
# linalg.eig's eigenvectors are complex whatever the input: every generic function of them is ill-defined
# (test_everyday_tensor_api checks phase-invariant ones against PyTorch).
ALWAYS_PHASE_DEPENDENT = {"linalg_eig"}
DTYPE_KEEPS_RESULT = {"_softmax_backward_data", "_log_softmax_backward_data"}
# Ops whose gradient is, by PyTorch's design, not the derivative of their forward: finite
# differences cannot check them (the comparison with PyTorch's gradient still runs).
NOT_THE_DERIVATIVE = {
    "cholesky_solve": "as PyTorch's, the factor's gradient is taken as if the whole factor were used (only its "
                      "triangle is read)",
    "cholesky_inverse": "as PyTorch's, the factor's gradient is taken as if the whole factor were used (only its "
                        "triangle is read)",
    "_ctc_loss": "PyTorch's CTC gradient assumes log_probs come out of a log_softmax (exp(log_probs) - posterior); "
                 "through log_softmax it equals the derivative",
    "log_sigmoid_backward": "the input's gradient is log_sigmoid's second derivative, as in PyTorch: it assumes the "
                            "buffer is exp(-|input|), and the buffer (a separate argument) has none",
    "native_layer_norm_backward": "as PyTorch's, its input's gradient takes mean and rstd as the input's statistics "
                                  "(they are separate arguments, without gradients)",
    "native_batch_norm_backward": "as PyTorch's, in training its input's gradient takes the saved mean and invstd as "
                                  "the input's statistics (they are separate arguments, without gradients)",
}
# Ops whose backward PyTorch does not differentiate (its backward op records no derivative).
NO_DOUBLE_BACKWARD = {"_ctc_loss": "_ctc_loss_backward", "grid_sampler": "grid_sampler_2d_backward",
                      "grid_sampler_3d": "grid_sampler_3d_backward",
                      "_hardsigmoid": "hardsigmoid_backward",
                      "_scaled_dot_product_flash_attention_for_cpu":
                          "_scaled_dot_product_flash_attention_for_cpu_backward"}


def _float64_spec(spec: TensorSpec) -> TensorSpec | None:
    """The spec of a leaf for a floating or complex tensor: float64 or complex128 (None for others)."""
    if spec.dtype in ("float16", "bfloat16", "float32", "float64"):
        return TensorSpec(spec.shape, "float64", spec.low, spec.high)
    if spec.dtype in ("complex64", "complex128"):
        return TensorSpec(spec.shape, "complex128", spec.low, spec.high)
    return None


# Arguments (positions) built as constants, not leaves: PyTorch refuses a gradient for them
# (native_batch_norm's running statistics), has none (a backward op's saved statistics) or declares
# it not implemented (the order of zeta and of the incomplete gamma functions, whose formulas raise
# PyTorch's NotImplementedError when it is wanted, as test_special_functions checks).
CONSTANT_ARGUMENTS = {"_native_batch_norm": (3, 4), "native_batch_norm_backward": (3, 4, 5, 6),
                      **dict.fromkeys(("igamma", "igammac", "special_gammainc", "special_gammaincc", "special_zeta"),
                                      (0,))}


def differentiable_cases():
    for name, opdef in sorted(OPS.items()):
        if not opdef.differentiable or opdef.factory or getattr(opdef.grad, "no_derivative", False):
            continue
        if opdef.kernel.__module__ in RANDOM_MODULES:  # no finite differences of random draws
            continue
        constants = CONSTANT_ARGUMENTS.get(name, ())
        for i, sample in enumerate(opdef.samples):
            specs = [a for a in _flat(sample.args) + _flat(list(sample.kwargs.values())) if isinstance(a, TensorSpec)]
            leaf_args = [a for position, a in enumerate(sample.args) if position not in constants]
            leaf_specs = [a for a in _flat(leaf_args + list(sample.kwargs.values())) if isinstance(a, TensorSpec)]
            if not any(_float64_spec(s) for s in leaf_specs):  # (zeta(x, 1.5): nothing to differentiate)
                continue
            if name in PHASE_DEPENDENT and any(s.dtype.startswith("complex") for s in specs):
                continue
            if name in ALWAYS_PHASE_DEPENDENT:
                continue
            sizes = [int(np.prod(s.shape)) for s in specs]
            if sum(sizes) > MAX_ELEMENTS or 0 in sizes:
                continue
            if name not in DTYPE_KEEPS_RESULT and any(
                    isinstance(v, tm.dtype) for v in list(sample.args) + list(sample.kwargs.values())):
                continue
            yield pytest.param(opdef, sample, id=f"{name}-{i}")


def _flat(values):
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_flat(v))
        else:
            out.append(v)
    return out


def _build(value, rng, leaves, maker):
    if isinstance(value, TensorSpec):
        spec = _float64_spec(value)
        array = make_array(spec or value, rng)
        tensor = maker(array, spec is not None and leaves is not None)  # leaves None: a constant
        if spec is not None and leaves is not None:
            leaves.append(tensor)
        return tensor
    if isinstance(value, list):
        return [_build(v, rng, leaves, maker) for v in value]
    if isinstance(value, tuple) and any(isinstance(v, TensorSpec) for v in value):
        return tuple(_build(v, rng, leaves, maker) for v in value)
    if isinstance(value, tm.dtype):  # the library's own dtype object (see DTYPE_KEEPS_RESULT)
        return maker(value, False)
    return value


def _inputs(sample, maker, seed=0, constants=()):
    rng = np.random.default_rng(seed)
    leaves = []
    args = tuple(_build(a, rng, None if i in constants else leaves, maker) for i, a in enumerate(sample.args))
    kwargs = {k: _build(v, rng, leaves, maker) for k, v in sample.kwargs.items()}
    return args, kwargs, leaves


def _tm_maker(array, requires_grad):
    if isinstance(array, tm.dtype):
        return array
    return tm.tensor(array, requires_grad=requires_grad)


def _torch_maker(array, requires_grad):
    import torch
    if isinstance(array, tm.dtype):
        return torch_maker(array)
    return torch.tensor(array, requires_grad=requires_grad)


def _replace_leaves(value, mapping):
    if isinstance(value, tm.Tensor) and id(value) in mapping:
        return mapping[id(value)]
    if isinstance(value, list):
        return [_replace_leaves(v, mapping) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_replace_leaves(v, mapping) for v in value)
    return value


def _as_function(opdef, args, kwargs, leaves):
    func = callable_for(opdef, tm)

    def run(*new_leaves):
        mapping = {id(old): new for old, new in zip(leaves, new_leaves)}
        call_args = [_replace_leaves(a, mapping) for a in args]
        if opdef.mutates:  # writes into its first argument: give it a non-leaf copy
            target = call_args[0].clone()
            func(target, *call_args[1:], **kwargs)
            return target
        return func(*call_args, **{k: _replace_leaves(v, mapping) for k, v in kwargs.items()})

    return run


@pytest.mark.parametrize("opdef, sample", list(differentiable_cases()))
def test_gradient_matches_finite_differences(opdef, sample):
    if opdef.name in NOT_THE_DERIVATIVE:
        pytest.skip(NOT_THE_DERIVATIVE[opdef.name])
    args, kwargs, leaves = _inputs(sample, _tm_maker, constants=CONSTANT_ARGUMENTS.get(opdef.name, ()))
    assert tm.autograd.gradcheck(_as_function(opdef, args, kwargs, leaves), tuple(leaves), atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("opdef, sample", list(differentiable_cases()))
def test_second_gradient_matches_finite_differences(opdef, sample):
    # Formulas are written with public ops so that they are differentiable themselves: a formula
    # step that drops history (a .mT that was not an op, a detached intermediate) shows here.
    if opdef.name in NO_DOUBLE_BACKWARD:
        pytest.skip(f"PyTorch has no derivative of {NO_DOUBLE_BACKWARD[opdef.name]} either")
    if opdef.name in NOT_THE_DERIVATIVE:
        pytest.skip(NOT_THE_DERIVATIVE[opdef.name])
    args, kwargs, leaves = _inputs(sample, _tm_maker, constants=CONSTANT_ARGUMENTS.get(opdef.name, ()))
    assert tm.autograd.gradgradcheck(_as_function(opdef, args, kwargs, leaves), tuple(leaves), atol=1e-5, rtol=1e-3)


def _skip_where_torch_is_inconsistent(opdef, request) -> None:
    if (opdef.name, int(request.node.callspec.id.rsplit("-", 1)[1])) in TORCH_ORACLE_BUGS:
        pytest.skip("PyTorch's own gradient is inconsistent with its forward here (see TORCH_ORACLE_BUGS)")


@pytest.mark.torch
@pytest.mark.parametrize("opdef, sample", list(differentiable_cases()))
def test_gradient_matches_torch(opdef, sample, request):
    import torch

    _skip_where_torch_is_inconsistent(opdef, request)

    args, kwargs, leaves = _inputs(sample, _tm_maker, constants=CONSTANT_ARGUMENTS.get(opdef.name, ()))
    t_args, t_kwargs, t_leaves = _inputs(sample, _torch_maker, constants=CONSTANT_ARGUMENTS.get(opdef.name, ()))
    ours = _as_function(opdef, args, kwargs, leaves)(*leaves)
    func = callable_for(opdef, torch)
    if opdef.mutates:
        base = t_args[0].clone()
        func(base, *t_args[1:], **t_kwargs)
        theirs = base
    else:
        try:
            theirs = func(*t_args, **t_kwargs)
        except RuntimeError as error:
            if "is not differentiable with respect to argument" in str(error):
                pytest.skip(f"PyTorch has no gradient here, tensormodes does: {error}")
            raise
    ours_out = [o for o in (ours if isinstance(ours, tuple) else (ours,)) if isinstance(o, tm.Tensor)]
    theirs_out = [o for o in (theirs if isinstance(theirs, tuple) else (theirs,)) if isinstance(o, torch.Tensor)]
    ours_diff = [o for o in ours_out if o.requires_grad]
    theirs_diff = [o for o in theirs_out if o.requires_grad]
    assert len(ours_diff) == len(theirs_diff)
    if not ours_diff:
        return
    rng = np.random.default_rng(1)
    seeds = [rng.standard_normal(tuple(o.shape)) for o in ours_diff]
    theirs_seeds = [torch.tensor(s, dtype=o.dtype) for s, o in zip(seeds, theirs_diff)]
    try:
        ours_seeds = [tm.tensor(s, dtype=o.dtype) for s, o in zip(seeds, ours_diff)]
        ours_grads = tm.autograd.grad(ours_diff, leaves, ours_seeds, allow_unused=True)
    except NotImplementedError as error:  # a derivative PyTorch lacks too (native_layer_norm_backward's mean)
        with pytest.raises(NotImplementedError, match=re.escape(str(error))):
            torch.autograd.grad(theirs_diff, t_leaves, theirs_seeds, allow_unused=True)
        return
    theirs_grads = torch.autograd.grad(theirs_diff, t_leaves, theirs_seeds, allow_unused=True)
    for o, t in zip(ours_grads, theirs_grads):
        if t is None:
            assert o is None or not np.any(o.numpy())
            continue
        assert o is not None
        np.testing.assert_allclose(o.numpy(), t.numpy(force=True), rtol=1e-6, atol=1e-8)


def _complex_leaf_cases():
    """The every-op cases, to run with each floating or complex tensor as a complex128 leaf."""
    for case in differentiable_cases():
        opdef, _ = case.values
        if not opdef.mutates and opdef.name not in DTYPE_KEEPS_RESULT:
            yield case


def _complex_build(value, rng, leaves, library):
    if isinstance(value, TensorSpec):
        if value.dtype.startswith(("float", "complex", "bfloat")):
            part = TensorSpec(value.shape, "float64", value.low, value.high)
            leaf = library.tensor(make_array(part, rng) + 0.5j * make_array(part, rng), requires_grad=True)
            leaves.append(leaf)
            return leaf
        return (tm_maker if library is tm else torch_maker)(make_array(value, rng))
    if isinstance(value, list):
        return [_complex_build(v, rng, leaves, library) for v in value]
    if isinstance(value, tuple) and any(isinstance(v, TensorSpec) for v in value):
        return tuple(_complex_build(v, rng, leaves, library) for v in value)
    return value


def _complex_gradients(library, opdef, sample):
    """The gradients of every complex128 leaf for random complex cotangents, or the error raised."""
    rng, leaves = np.random.default_rng(0), []
    try:
        args = [_complex_build(a, rng, leaves, library) for a in sample.args]
        kwargs = {k: _complex_build(v, rng, leaves, library) for k, v in sample.kwargs.items()}
        result = callable_for(opdef, library)(*args, **kwargs)
        outputs = [o for o in (result if isinstance(result, tuple) else (result,))
                   if hasattr(o, "requires_grad") and o.requires_grad]
        seeds = np.random.default_rng(1)
        cotangents = [library.tensor(seeds.standard_normal(tuple(o.shape)) + (
            1j * seeds.standard_normal(tuple(o.shape)) if o.is_complex() else 0), dtype=o.dtype) for o in outputs]
        grads = library.autograd.grad(outputs, leaves, cotangents, allow_unused=True) if outputs else ()
    except Exception as error:  # noqa: BLE001 - an error is part of what is compared
        return f"{type(error).__name__}: {error}"
    return [None if g is None or not np.any(g.numpy(force=True)) else g.numpy(force=True) for g in grads]


@pytest.mark.torch
@pytest.mark.parametrize("opdef, sample", list(_complex_leaf_cases()))
def test_complex_gradients_match_torch(opdef, sample, request):
    # PyTorch's convention for complex inputs: the gradient is the conjugate Wirtinger
    # derivative, so formulas multiply by conjugated local derivatives.
    import torch

    _skip_where_torch_is_inconsistent(opdef, request)
    ours, theirs = _complex_gradients(tm, opdef, sample), _complex_gradients(torch, opdef, sample)
    if isinstance(theirs, str) and "is not differentiable with respect to argument" in theirs:
        # class weights, pos_weight, soft_margin_loss's target: tensormodes' extension
        pytest.skip("an argument PyTorch refuses to differentiate, which tensormodes differentiates")
    if isinstance(theirs, str) or isinstance(ours, str):
        # Same error type; messages may differ where the oracle composes an op from others
        # (torch_equivalents: _nll_loss_backward through nll_loss's backward).
        assert isinstance(ours, str) and ours.split(":")[0] == theirs.split(":")[0], (ours, theirs)
        return
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if o is not None:
            np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-8)


def _requiring_grad(make):
    """A tensor maker (see op_samples.materialize) whose floating tensors require grad."""
    def maker(value):
        made = make(value)
        if not isinstance(value, tm.dtype) and (value.dtype.kind in "fc" or value.dtype == tm.bfloat16._np):
            made.requires_grad_()
        return made
    return maker


def _every_sample():
    for name, opdef in sorted(OPS.items()):
        if opdef.differentiable and not opdef.factory and not opdef.mutates:
            for i, sample in enumerate(opdef.samples):
                yield pytest.param(opdef, sample, id=f"{name}-{i}")


@pytest.mark.torch
@pytest.mark.parametrize("opdef, sample", list(_every_sample()))
def test_which_outputs_require_grad_matches_torch(opdef, sample):
    # Every sample, dtype arguments included: an output requires grad exactly when PyTorch's does
    # (integer results and non-differentiable overloads such as view(dtype) do not).
    import torch

    def flags(library, make):
        args, kwargs = materialize(sample, _requiring_grad(make))
        try:
            result = callable_for(opdef, library)(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - an error is part of what is compared
            return f"{type(error).__name__}: {error}"
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        return [o.requires_grad for o in outputs if isinstance(o, (tm.Tensor, torch.Tensor))]

    ours, theirs = flags(tm, tm_maker), flags(torch, torch_maker)
    if isinstance(theirs, str) and "is not differentiable with respect to argument" in theirs and ours != theirs:
        # tensormodes differentiates class weights (see nn._nll_loss_weight_grad), pos_weight and
        # soft_margin_loss's target; nll_loss_forward's total_weight has no history in either (the
        # flash-attention op refuses a mask requiring grad, as PyTorch does)
        assert ours[0] is True and not any(ours[1:])
    else:
        assert ours == theirs

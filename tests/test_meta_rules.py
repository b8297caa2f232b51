"""Every op's meta rule against real execution, over the op table's samples and error samples.

For each sample the op runs on real tensors and on the same tensors moved to the meta device
(factories get ``device="meta"``); the meta results must have the real results' shapes,
dtypes and strides, and errors the same type and message. Ops whose output shape depends on
values may raise ``DataDependentOutputError`` instead.
"""

from __future__ import annotations

import re

import pytest

import tensormodes as tm
from tensormodes._meta_array import DataDependentOutputError
from tensormodes._ops import OPS

from .op_samples import callable_for, materialize, tm_maker


def meta_applicable(opdef) -> bool:
    """Ops that can meet a meta tensor: they take a tensor or a ``device``."""
    return bool(opdef.tensor_params) or "device" in opdef.signature.parameters


CASES = [(f"{name}-{kind}{i}", opdef, sample, kind == "error")
         for name, opdef in sorted(OPS.items()) if meta_applicable(opdef)
         for kind, samples in (("", opdef.samples), ("error", opdef.errors))
         for i, sample in enumerate(samples)]


def _to_meta(value):
    if isinstance(value, tm.Tensor):
        meta = value.detach().to("meta")
        return meta.requires_grad_() if value.requires_grad else meta
    if isinstance(value, list):
        return [_to_meta(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_meta(v) for v in value)
    if isinstance(value, dict):  # the kwargs: tensors passed by keyword move too
        return {k: _to_meta(v) for k, v in value.items()}
    return value


def _holds_tensor(value) -> bool:
    if isinstance(value, tm.Tensor):
        return True
    if isinstance(value, dict):
        value = list(value.values())
    return isinstance(value, (list, tuple)) and any(_holds_tensor(v) for v in value)


def _outcome(function, args, kwargs):
    try:
        return function(*args, **kwargs), None
    except Exception as error:  # noqa: BLE001 - the outcome under test
        return None, error


def _significant_strides(t):
    return tuple(s for size, s in zip(t.shape, t.stride()) if size != 1)


def assert_same_metadata(real, meta, where="result"):
    if isinstance(real, tm.Tensor):
        assert isinstance(meta, tm.Tensor) and meta.is_meta, f"{where}: expected a meta tensor, got {meta!r}"
        assert (meta.shape, meta.dtype) == (real.shape, real.dtype), f"{where}: shape/dtype"
        if real.numel() > 1:
            assert _significant_strides(meta) == _significant_strides(real), \
                f"{where}: strides {meta.stride()} != {real.stride()}"
    elif isinstance(real, (tuple, list)):
        assert type(meta) is type(real) and len(meta) == len(real), f"{where}: {meta!r} vs {real!r}"
        for i, (r, m) in enumerate(zip(real, meta)):
            assert_same_metadata(r, m, f"{where}[{i}]")
    else:
        assert meta == real, f"{where}: {meta!r} != {real!r}"


@pytest.mark.parametrize("case, opdef, sample, is_error", CASES, ids=[c[0] for c in CASES])
def test_meta_rule_matches_real_execution(case, opdef, sample, is_error):
    function = callable_for(opdef, tm)
    args, kwargs = materialize(sample, tm_maker)
    real, real_error = _outcome(function, args, kwargs)
    assert (real_error is not None) == is_error, f"real execution: {real_error!r}"
    meta_args, meta_kwargs = _to_meta(args), _to_meta(kwargs)
    if not opdef.tensor_params or (opdef.factory and "device" in opdef.signature.parameters
                                   and "device" not in meta_kwargs):  # linspace(0, 1, 5), normal(0., 1., (2,))
        meta_kwargs["device"] = "meta"
    elif not _holds_tensor((args, kwargs)):
        return  # no tensor argument to move to the meta device (``block_diag()``): nothing runs on meta
    meta, meta_error = _outcome(function, meta_args, meta_kwargs)
    if isinstance(meta_error, DataDependentOutputError):
        assert str(meta_error).startswith(f"{opdef.name}()")
        return
    if real_error is not None:
        assert meta_error is not None, f"meta execution accepted what real execution rejects: {real_error!r}"
        assert (type(meta_error), str(meta_error)) == (type(real_error), str(real_error))
        return
    if meta_error is not None:
        raise meta_error
    assert_same_metadata(real, meta)


def test_meta_rule_coverage():
    applicable = [name for name, opdef in OPS.items() if meta_applicable(opdef)]
    missing = sorted(name for name in applicable if OPS[name].meta is None)
    print(f"meta rules: {len(applicable) - len(missing)} of {len(applicable)} ops; "
          f"{len(CASES)} samples ({sum(c[3] for c in CASES)} error samples)")
    assert not missing, f"ops without a meta rule: {missing}"


def _differentiable_outputs(result):
    return [r for r in _flat_tensors(result) if r.requires_grad]


def _flat_tensors(result):
    if isinstance(result, tm.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _flat_tensors(r)]
    return []


def _gradients(opdef, sample, on_meta: bool):
    from .test_gradients import CONSTANT_ARGUMENTS, _as_function, _inputs, _tm_maker

    args, kwargs, leaves = _inputs(sample, _tm_maker, constants=CONSTANT_ARGUMENTS.get(opdef.name, ()))
    if on_meta:
        moved = [leaf.detach().to("meta").requires_grad_() for leaf in leaves]
        mapping = dict(zip(map(id, leaves), moved))
        args = tuple(_to_meta_with(a, mapping) for a in args)
        kwargs = {k: _to_meta_with(v, mapping) for k, v in kwargs.items()}
        leaves = moved
    outputs = _differentiable_outputs(_as_function(opdef, args, kwargs, leaves)(*leaves))
    if not outputs:
        return []
    return tm.autograd.grad(outputs, leaves, [tm.ones_like(o) for o in outputs], allow_unused=True)


def _to_meta_with(value, mapping):
    if isinstance(value, tm.Tensor):
        moved = mapping.get(id(value))
        return _to_meta(value) if moved is None else moved
    if isinstance(value, list):
        return [_to_meta_with(v, mapping) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_to_meta_with(v, mapping) for v in value)
    return value


def _backward_cases():
    from .test_gradients import differentiable_cases

    return list(differentiable_cases())


@pytest.mark.parametrize("opdef, sample", _backward_cases())
def test_meta_backward_gives_the_gradients_shapes_and_dtypes(opdef, sample):
    """Autograd on meta tensors: every gradient formula, run on meta gradients, gives meta
    gradients of the real gradients' shapes and dtypes (None where real execution has none)."""
    try:
        real = _gradients(opdef, sample, on_meta=False)
    except NotImplementedError as error:  # a derivative PyTorch has not either (native_layer_norm_backward's mean)
        with pytest.raises(NotImplementedError, match=re.escape(str(error))):
            _gradients(opdef, sample, on_meta=True)
        return
    try:
        meta = _gradients(opdef, sample, on_meta=True)
    except DataDependentOutputError as error:
        # The forward, or a step of the gradient formula (setitem with a mask gathers the masked
        # gradient), has an output shape that depends on values: meta execution cannot go on.
        assert "the output shape depends on the input's values" in str(error)
        return
    assert len(meta) == len(real)
    for i, (r, m) in enumerate(zip(real, meta)):
        assert (r is None) == (m is None), f"gradient {i}: {r!r} vs {m!r}"
        if r is not None:
            assert m.is_meta and (m.shape, m.dtype) == (r.shape, r.dtype), f"gradient {i}"

"""Every op's meta rule against real execution, over the op table's samples and error samples.

For each sample the op runs on real tensors and on the same tensors moved to the meta device
(factories get ``device="meta"``); the meta results must have the real results' shapes,
dtypes and strides, and errors the same type and message. Ops whose output shape depends on
values may raise ``DataDependentOutputError`` instead.
"""

from __future__ import annotations

import pytest

import tensormodes as tm
from tensormodes._ops import OPS
from tensormodes._ops._meta import DataDependentOutputError

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
    return value


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

"""``scaled_dot_product_attention`` at the dispatch level: PyTorch 2.13's CPU flash op
(``_scaled_dot_product_flash_attention_for_cpu`` and its backward op) where PyTorch picks its flash
kernel, its math path elsewhere; values and gradients as PyTorch's."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.nn.attention import SDPBackend, sdpa_kernel
from tensormodes.utils._python_dispatch import TorchDispatchMode

FLASH = "aten._scaled_dot_product_flash_attention_for_cpu.default"
FLASH_BACKWARD = "aten._scaled_dot_product_flash_attention_for_cpu_backward.default"


def _log_mode(base):
    class Log(base):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    return Log


# (query shape, key shape, dtype, keyword arguments, mask (shape, "bool"/"float") or None)
CONFIGS = {
    "plain": ((2, 2, 4, 8), None, "float32", {}, None),
    "causal": ((2, 2, 4, 8), (2, 2, 6, 8), "float32", {"is_causal": True}, None),
    "scale": ((2, 2, 4, 8), None, "float64", {"scale": 0.3}, None),
    "bool mask": ((2, 2, 4, 8), None, "float32", {}, ((4, 4), "bool")),
    "float mask 4-d": ((2, 2, 4, 8), None, "float32", {}, ((2, 1, 4, 4), "float")),
    "bfloat16": ((2, 2, 4, 8), None, "bfloat16", {}, None),
    "grouped query": ((2, 4, 3, 8), (2, 2, 5, 8), "float32", {"enable_gqa": True}, None),
    "3-d: math": ((2, 4, 8), None, "float32", {}, None),
    "dropout: math": ((2, 2, 4, 8), None, "float32", {"dropout_p": 0.5}, None),
    "3-d mask: math": ((2, 2, 4, 8), None, "float32", {}, ((2, 4, 4), "float")),
    "head sizes differ: math": ((2, 2, 4, 8), None, "float32", {}, None),
}


def _inputs(library, config, requires_grad=True):
    q_shape, k_shape, dtype, kwargs, mask = config
    k_shape = k_shape or q_shape
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in (q_shape, k_shape, k_shape)]
    dtype_of = getattr(library, dtype)
    q, k, v = (library.tensor(a).to(dtype_of).requires_grad_(requires_grad) for a in arrays)
    kwargs = dict(kwargs)
    if mask is not None:
        shape, kind = mask
        values = rng.standard_normal(shape).astype(np.float32)
        kwargs["attn_mask"] = library.tensor(values > -0.5) if kind == "bool" else library.tensor(values)
    return q, k, v, kwargs


def _run(library, functional, config, log_class, grad=True):
    q, k, v, kwargs = _inputs(library, config, grad)
    if config is CONFIGS["head sizes differ: math"]:
        v = v[..., :5].detach().requires_grad_(grad)
    with log_class() as log:
        out = functional.scaled_dot_product_attention(q, k, v, **kwargs)
    forward = list(log.ops)
    grads = None
    if grad:
        seed = library.ones_like(out)
        with log_class() as log:
            grads = library.autograd.grad(out, (q, k, v), seed)
        return forward, list(log.ops), out, grads
    return forward, None, out, grads


def _flash_ops(ops):
    return [op for op in ops if "flash_attention" in op]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_which_kernel_is_reached_without_torch(name):
    forward, backward, _, _ = _run(tm, F, CONFIGS[name], _log_mode(TorchDispatchMode))
    if name.endswith("math"):
        assert not _flash_ops(forward) and not _flash_ops(backward)
        assert "aten.bmm.default" in forward
    else:
        assert _flash_ops(forward) == [FLASH] and _flash_ops(backward) == [FLASH_BACKWARD]


def test_literal_sequence_without_torch():
    # PyTorch 2.13's, logged with its TorchDispatchMode (autograd.grad with a given output gradient)
    forward, backward, _, _ = _run(tm, F, CONFIGS["bool mask"], _log_mode(TorchDispatchMode))
    assert forward == ["aten.scalar_tensor.default", "aten.scalar_tensor.default", "aten.where.self", FLASH,
                       "aten.detach.default"]
    assert backward == ["aten.detach.default", FLASH_BACKWARD]
    forward, backward, _, _ = _run(tm, F, CONFIGS["plain"], _log_mode(TorchDispatchMode), grad=False)
    assert forward == [FLASH]


def test_literal_values_without_torch():
    q = tm.tensor([[[[1.0, 0.0], [0.0, 1.0]]]])
    v = tm.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    out = F.scaled_dot_product_attention(q, q, v, scale=math.log(3.0))  # weights 3/4, 1/4
    assert out.tolist() == [[[[1.5, 2.5], [2.5, 3.5]]]]
    out, lse = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, q, v, is_causal=True)
    s = math.sqrt(0.5)  # the default scale; row 0 sees key 0 only (score s), row 1 both (scores 0 and s)
    row1 = (np.array([1.0, 2.0]) + math.exp(s) * np.array([3.0, 4.0])) / (1 + math.exp(s))
    assert np.allclose(out.numpy(), [[[[1.0, 2.0], row1]]], rtol=1e-6, atol=0)
    assert lse.dtype == tm.float32 and lse.shape == (1, 1, 2)
    assert np.allclose(lse.numpy(), [[[s, math.log(1 + math.exp(s))]]], rtol=1e-6, atol=0)
    # a row with nothing to attend to: zeros and a log-sum-exp of 0, as PyTorch's kernel
    mask = tm.tensor([[0.0, -math.inf], [-math.inf, -math.inf]])
    out, lse = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, q, v, attn_mask=mask)
    assert out.tolist() == [[[[1.0, 2.0], [0.0, 0.0]]]] and lse[0, 0, 1].item() == 0.0
    bq = tm.ones(1, 1, 2, 2, dtype=tm.bfloat16)
    out, lse = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(bq, bq, bq)
    assert out.dtype == tm.bfloat16 and lse.dtype == tm.float32


def test_strides_as_pytorchs_without_torch():
    x = tm.randn(2, 3, 4, 8)  # (batch, length, heads, size) memory, seen as (batch, heads, length, size)
    q = x.transpose(1, 2)
    out, lse = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, q, q)
    assert out.stride() == (96, 8, 32, 1) and lse.stride() == (12, 1, 4)
    grads = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default(
        tm.ones_like(out), q, q, q, out, lse, 0.0, False)
    assert [g.stride() for g in grads] == [(96, 8, 32, 1)] * 3
    meta = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(*(q.to("meta"),) * 3)
    assert meta[0].stride() == out.stride() and meta[1].stride() == lse.stride()


def test_errors_without_torch():
    flash = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    q = tm.randn(1, 2, 3, 4)
    with pytest.raises(RuntimeError, match="^scaled_dot_product_attention_flash_attention: Currently do not support "
                                           "dropout > 0$"):
        flash(q, q, q, 0.5)
    with pytest.raises(RuntimeError, match="is not differentiable with respect to argument 'attn_mask'"):
        flash(q, q, q, attn_mask=tm.zeros(3, 3, requires_grad=True))
    out, _ = flash(q.requires_grad_(), q, q)
    grad, = tm.autograd.grad(out.sum(), q, create_graph=True)
    with pytest.raises(RuntimeError, match="^derivative for aten::_scaled_dot_product_flash_attention_for_cpu_"
                                           "backward is not implemented$"):
        grad.sum().backward()


def test_math_disabled_still_runs_flash_and_flash_disabled_runs_math():
    q = tm.randn(1, 2, 3, 4)
    log_class = _log_mode(TorchDispatchMode)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]), log_class() as log:
        F.scaled_dot_product_attention(q, q, q)
    assert log.ops == [FLASH]
    with sdpa_kernel([SDPBackend.MATH]), log_class() as log:
        F.scaled_dot_product_attention(q, q, q)
    assert FLASH not in log.ops


@pytest.mark.torch
@pytest.mark.parametrize("name", list(CONFIGS))
def test_flash_ops_and_values_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    config = CONFIGS[name]
    ours = _run(tm, F, config, _log_mode(TorchDispatchMode), grad="dropout" not in name)
    theirs = _run(torch, torch.nn.functional, config, _log_mode(TorchMode), grad="dropout" not in name)
    assert _flash_ops(ours[0]) == _flash_ops(theirs[0])
    if ours[1] is not None:
        assert _flash_ops(ours[1]) == _flash_ops(theirs[1])
    if _flash_ops(theirs[0]):  # the whole sequence: the flash op, the mask's conversion, autograd's detaches
        assert ours[0] == theirs[0] and ours[1] == theirs[1]
    if "dropout" in name:
        return
    tolerance = {"bfloat16": 2e-2, "float64": 1e-12}.get(config[2], 2e-6)
    for a, b in zip((ours[2], *ours[3]), (theirs[2], *theirs[3]), strict=True):
        expected = b.detach().float().numpy()
        scale = max(float(np.abs(expected).max()), 1.0)
        assert np.abs(a.detach().float().numpy() - expected).max() <= tolerance * scale


@pytest.mark.torch
def test_flash_op_matches_pytorch_on_random_inputs():
    torch = pytest.importorskip("torch")
    ours_op = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    ours_backward = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default
    theirs_op = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    theirs_backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default
    rng = np.random.default_rng(3)
    for shape, source, kwargs in [((8, 2, 32, 32), 32, {}), ((2, 3, 40, 16), 70, {"is_causal": True}),
                                  ((1, 2, 20, 8), 600, {"scale": 0.2})]:  # 600 keys: two blocks
        arrays = [rng.standard_normal(s).astype(np.float32) * 2 for s in (shape, shape[:2] + (source, shape[3]),
                                                                          shape[:2] + (source, shape[3]))]
        ours = ours_op(*map(tm.tensor, arrays), **kwargs)
        theirs = theirs_op(*map(torch.tensor, arrays), **kwargs)
        for a, b in zip(ours, theirs, strict=True):
            b = b.numpy()
            assert np.abs(a.numpy() - b).max() <= 1e-6 * np.abs(b).max()
        grad = rng.standard_normal(shape).astype(np.float32)
        is_causal = kwargs.get("is_causal", False)
        ours_grads = ours_backward(tm.tensor(grad), *map(tm.tensor, arrays), ours[0], ours[1], 0.0, is_causal,
                                   scale=kwargs.get("scale"))
        theirs_grads = theirs_backward(torch.tensor(grad), *map(torch.tensor, arrays), theirs[0], theirs[1], 0.0,
                                       is_causal, scale=kwargs.get("scale"))
        for a, b in zip(ours_grads, theirs_grads, strict=True):
            b = b.numpy()
            assert a.stride() == tuple(s // 4 for s in b.strides)
            assert np.abs(a.numpy() - b).max() <= 2e-5 * np.abs(b).max()


def test_flash_shortcut_only_where_every_check_passes():
    # A GPT's call (plain 4-D float operands, no mask, no dropout, no mode) skips the argument
    # checks (nn/_functional/attention.py); anything a check or the flash gates look at takes them.
    from tensormodes.nn._functional.attention import _flash_without_checks

    q = tm.tensor(np.random.default_rng(0).standard_normal((2, 2, 3, 4)).astype(np.float32))
    assert _flash_without_checks(q, q, q)
    assert _flash_without_checks(q.double(), q.double(), q.double())
    assert not _flash_without_checks(q, q, q.double())  # the dtype error
    assert not _flash_without_checks(q[0], q[0], q[0])  # 3-D: the math path
    assert not _flash_without_checks(q, q[:, :1], q[:, :1])  # head counts differ
    assert not _flash_without_checks(q, q, q.transpose(-1, -2).contiguous().transpose(-1, -2))  # stride(-1) != 1
    assert not _flash_without_checks(q, q[:, :, :0], q[:, :, :0])  # an empty key sequence
    assert not _flash_without_checks(q.half(), q.half(), q.half())
    with sdpa_kernel(SDPBackend.MATH):
        assert not _flash_without_checks(q, q, q)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype"):
        F.scaled_dot_product_attention(q, q, q.double())
    causal = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    class Through(tm.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Through():  # a mode: the checks and the same op
        assert tm.equal(F.scaled_dot_product_attention(q, q, q, is_causal=True), causal)
    assert causal[0, 0, 0].tolist() == q[0, 0, 0].tolist()  # the first query sees only the first key

"""tensormodes.nn.attention: SDPBackend and sdpa_kernel, switching what scaled_dot_product_attention may use."""

from __future__ import annotations

import pytest

import tensormodes as tm
from tensormodes.nn.attention import SDPBackend, sdpa_kernel

F = tm.nn.functional
SWITCHES = ("flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled", "cudnn_sdp_enabled")


def _switches():
    return tuple(getattr(tm.backends.cuda, name)() for name in SWITCHES)


def test_enum():
    assert [(m.name, m.value) for m in SDPBackend] == [
        ("ERROR", -1), ("MATH", 0), ("FLASH_ATTENTION", 1), ("EFFICIENT_ATTENTION", 2), ("CUDNN_ATTENTION", 3),
        ("OVERRIDEABLE", 4)]
    assert repr(SDPBackend.MATH) == "<SDPBackend.MATH: 0>" and str(SDPBackend.MATH) == "SDPBackend.MATH"


@pytest.mark.parametrize(("backends", "expected", "runs"), [
    ([], (False, False, False, False), False),
    (SDPBackend.MATH, (False, False, True, False), True),
    ([SDPBackend.FLASH_ATTENTION], (True, False, False, False), "flash"),
    ([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION], (False, True, False, True), False),
    ([SDPBackend.OVERRIDEABLE, SDPBackend.ERROR], (False, False, False, False), False),
])
def test_switches_inside_and_restored_after(backends, expected, runs):
    q = tm.arange(8.0).reshape(1, 2, 4) / 8
    before = _switches()
    assert before == (True, True, True, True)
    plain = F.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(backends) as value:
        assert value == {} and _switches() == expected
        if runs == "flash":  # 3-D operands: PyTorch's flash kernel refuses them, and says why
            with pytest.warns(UserWarning) as warned, \
                    pytest.raises(RuntimeError, match="^No available kernel.  Aborting execution.$"):
                F.scaled_dot_product_attention(q, q, q)
            assert [str(w.message) for w in warned] == [
                "Flash attention kernel not used because:",
                "All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: 3, Key dim: "
                "3, Value dim: 3 instead."]
            q4 = q.unsqueeze(0)
            assert tm.allclose(F.scaled_dot_product_attention(q4, q4, q4), plain.unsqueeze(0))
        elif runs:
            assert tm.equal(F.scaled_dot_product_attention(q, q, q), plain)
        else:
            with pytest.raises(RuntimeError, match="^No viable backend for scaled_dot_product_attention was found. "
                                                   "This is likely due to turning off both the math kernel and the "
                                                   "fused kernels.$"):
                F.scaled_dot_product_attention(q, q, q)
    assert _switches() == before


def test_restored_after_an_exception_and_bad_argument():
    with pytest.raises(ValueError), sdpa_kernel([]):
        raise ValueError
    assert _switches() == (True, True, True, True)
    with pytest.raises(AssertionError, match="^Backend must be an instance of SDPBackend or a list of SDPBackend "
                                             "instances, got str$"), sdpa_kernel("math"):
        pass


@pytest.mark.torch
def test_same_switches_as_pytorch():
    import torch
    from torch.nn.attention import SDPBackend as TorchBackend
    from torch.nn.attention import sdpa_kernel as torch_sdpa_kernel

    for names in ([], ["MATH"], ["FLASH_ATTENTION"], ["EFFICIENT_ATTENTION", "CUDNN_ATTENTION"]):
        with torch_sdpa_kernel([getattr(TorchBackend, n) for n in names]):
            theirs = tuple(getattr(torch.backends.cuda, name)() for name in SWITCHES)
        with sdpa_kernel([getattr(SDPBackend, n) for n in names]):
            ours = _switches()
        assert ours == theirs

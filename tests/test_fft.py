"""tensormodes.fft: values, dtypes, gradients, node names and errors (literal, and against PyTorch)."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm

from .torch_oracle import assert_same_outcome


def test_literal_values_and_dtypes():
    x = tm.arange(4.0)
    assert tm.fft.fft(x).tolist() == [6 + 0j, -2 + 2j, -2 + 0j, -2 - 2j] and tm.fft.fft(x).dtype == tm.complex64
    assert tm.fft.rfft(x.double()).dtype == tm.complex128
    assert tm.fft.fft(tm.arange(4)).dtype == tm.complex64  # integers compute in the default float dtype
    assert tm.fft.irfft(tm.fft.rfft(x)).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert tm.fft.fft(x, n=2).tolist() == [1 + 0j, -1 + 0j]
    assert tm.fft.fft(x, norm="forward").tolist() == [1.5 + 0j, -0.5 + 0.5j, -0.5 + 0j, -0.5 - 0.5j]
    assert tm.fft.fftfreq(4).tolist() == [0.0, 0.25, -0.5, -0.25]
    assert tm.fft.rfftfreq(5, d=0.5).tolist() == pytest.approx([0.0, 0.4, 0.8])
    assert tm.fft.fftshift(tm.arange(6).reshape(2, 3), dim=1).tolist() == [[2, 0, 1], [5, 3, 4]]
    assert tm.fft.ifftshift(tm.arange(5)).tolist() == [2, 3, 4, 0, 1]
    assert tm.fft.irfft(tm.ones(3, dtype=tm.complex64), n=5).shape == (5,)
    # an empty batch: PyTorch's MKL backend raises here ("Inconsistent configuration parameters")
    assert tm.fft.rfft(tm.ones(4, 0), dim=0, n=3).shape == (2, 0)


def test_gradients_literal():
    x = tm.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    tm.fft.rfft(x).real.sum().backward()  # d/dx_t: the sum over k <= 2 of cos(2 pi k t / 4)
    assert x.grad.tolist() == [3.0, 0.0, 1.0, 0.0]
    z = tm.tensor([1.0 + 1j, 2.0, 0.0], requires_grad=True)
    tm.fft.fft(z).abs().pow(2).sum().backward()  # Parseval: sum |fft z|^2 = 3 sum |z|^2
    np.testing.assert_allclose(z.grad.numpy(), 6 * np.array([1.0 + 1j, 2.0, 0.0]), rtol=1e-6, atol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.fft.fft(L.ones(4, dtype=L.float16))", "L.fft.fft(L.ones(4, dtype=L.bfloat16))",
    "L.fft.rfft(L.ones(4, dtype=L.complex64))", "L.fft.rfftn(L.ones(2, 2, dtype=L.complex64))",
    "L.fft.ihfft(L.ones(4, dtype=L.complex64))", "L.fft.fft(L.ones(4), n=0)", "L.fft.fft(L.ones(4), dim=1)",
    "L.fft.fft(L.ones(4), norm='x')", "L.fft.fftn(L.ones(2, 3), s=(2,), dim=(0, 1))",
    "L.fft.fftn(L.ones(2, 3), dim=(0, 0))", "L.fft.irfft(L.ones(1, dtype=L.complex64))", "L.fft.fft(L.ones(0))",
    "L.fft.rfft(L.ones(4), n=-2)", "L.fft.rfftfreq(5, dtype=L.int64)", "L.fft.fft(L.tensor(1.))",
    "L.fft.fft2(L.ones(3))", "L.fft.fftfreq(0)", "L.fft.fftfreq(3, d=0.0)",
    "L.fft.irfftn(L.ones(2, 3, dtype=L.complex128), s=(3, 7))", "L.fft.hfft(L.ones(3, 2), n=5, dim=0)",
    "L.fft.ifft(L.arange(6).reshape(2, 3), norm='ortho')", "L.fft.fftn(L.ones(2, 3, 4), s=(3, -1))",
    "L.fft.irfft2(L.zeros((3, 0), dtype=L.complex64), s=(4, 5), norm='ortho')", "L.fft.rfftn(L.ones(2, 3), dim=())",
    "L.fft.irfftn(L.ones(2, 3, dtype=L.complex64), dim=())", "L.fft.fftn(L.ones(2, 3), dim=())",
    "L.fft.ihfftn(L.ones(2, 2, dtype=L.complex128))", "L.fft.ihfft2(L.ones(2, 3))", "L.fft.hfft2(L.ones(2, 3))",
    "L.fft.ihfftn(L.tensor(1j), dim=(0,))", "L.fft.fftn(L.tensor(1.0), dim=(0,))", "L.fft.fftshift(L.tensor(1.0))",
    "L.fft.irfft(L.tensor(1.0, dtype=L.bfloat16), dim=0)",
])
def test_same_outcome_as_pytorch(expression):
    assert_same_outcome(expression, rtol=1e-6, atol=1e-6)


_GRAD_CASES = [
    ("fft", "r", {}), ("fft", "c", {"n": 7, "norm": "ortho"}), ("fft", "r", {"n": 3, "norm": "forward"}),
    ("ifft", "r", {}), ("ifft", "c", {"n": 6}), ("rfft", "r", {}), ("rfft", "r", {"n": 9, "norm": "ortho"}),
    ("rfft", "r", {"n": 4}), ("irfft", "c", {}), ("irfft", "c", {"n": 7}), ("irfft", "c", {"n": 4, "norm": "forward"}),
    ("irfft", "r", {}), ("hfft", "c", {}), ("hfft", "c", {"n": 5, "norm": "ortho"}), ("ihfft", "r", {}),
    ("ihfft", "r", {"n": 8, "norm": "forward"}), ("fft2", "c", {}), ("ifft2", "r", {"s": (3, 7)}),
    ("rfft2", "r", {}), ("irfft2", "c", {"s": (5, 6)}), ("fftn", "c", {"dim": (0,)}), ("rfftn", "r", {"s": (2, 4)}),
    ("irfftn", "c", {}), ("fftshift", "c", {}), ("ifftshift", "r", {"dim": 0}), ("hfftn", "c", {}),
    ("hfft2", "c", {"s": (3, 5), "norm": "ortho"}), ("ihfftn", "r", {}),
    ("ihfft2", "r", {"s": (5, 6), "norm": "forward"}),
]


@pytest.mark.torch
@pytest.mark.parametrize(("name", "kind", "kwargs"), _GRAD_CASES, ids=[f"{n}-{k}-{kw}" for n, k, kw in _GRAD_CASES])
def test_gradients_and_node_names_as_pytorch(name, kind, kwargs):
    import torch

    rng = np.random.default_rng(1)
    data = rng.standard_normal((4, 5))
    if kind == "c":
        data = data + 1j * rng.standard_normal((4, 5))
    ours_in, theirs_in = tm.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ours, theirs = getattr(tm.fft, name)(ours_in, **kwargs), getattr(torch.fft, name)(theirs_in, **kwargs)
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().resolve_conj().numpy(), rtol=1e-10, atol=1e-10)
    weights = rng.standard_normal(tuple(ours.shape)) + (1j * rng.standard_normal(tuple(ours.shape))
                                                       if ours.is_complex() else 0)
    (ours * tm.tensor(weights)).real.sum().backward()
    (theirs * torch.tensor(weights)).real.sum().backward()
    np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-10)

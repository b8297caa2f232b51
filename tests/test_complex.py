"""Complex tensors: the complex-number ops (real, imag, conj, angle, sgn, complex, polar ...),
gradients in PyTorch's convention (conjugate Wirtinger derivatives), and gradcheck on
complex inputs and outputs."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm

from .torch_oracle import assert_same_outcome

_Z = "L.tensor([3 + 4j, -1 + 0j, 0j, -2 - 0.5j])"
_R = "L.tensor([-2.0, -0.0, 0.0, 1.5, float('nan')])"

ORACLE_CASES = [
    f"L.real({_Z})", f"L.real({_R})", "L.real(L.tensor([1, 2]))", f"L.imag({_Z})", f"L.imag({_R})",
    f"{_Z}.real", f"{_Z}.imag", f"{_R}.imag", f"L.conj({_Z})", f"{_Z}.conj()", "L.conj(L.tensor([1, 2]))",
    f"L.conj_physical({_Z})", "L.conj_physical(L.tensor([True]))", f"{_Z}.resolve_conj()", f"{_Z}.resolve_neg()",
    f"{_Z}.conj().is_conj() and False", f"L.angle({_Z})", f"L.angle({_R})", "L.angle(L.tensor([-2, 0, 3]))",
    "L.angle(L.tensor([True, False]))", "L.angle(L.tensor([-1.0], dtype=L.float16))",
    f"L.angle({_Z}.to(L.complex64))", f"L.sgn({_Z})", f"L.sgn({_R})", "L.sgn(L.tensor([-2, 0, 3]))",
    "L.sgn(L.tensor([True, False]))", f"{_Z}.sgn_()", "L.sgn(L.tensor([complex(float('nan'), 1)]))",
    "L.complex(L.tensor([1.0, 2.0]), L.tensor([[0.5], [-1.0]]))",
    "L.complex(L.tensor([1.0], dtype=L.float64), L.tensor([2.0], dtype=L.float64))",
    "L.complex(L.tensor([1.0]), L.tensor([2.0], dtype=L.float64))", "L.complex(L.tensor([1]), L.tensor([2]))",
    "L.complex(L.tensor([1.0], dtype=L.bfloat16), L.tensor([2.0], dtype=L.bfloat16))",
    "L.polar(L.tensor([2.0, 0.5]), L.tensor([0.3, -1.0]))",
    "L.polar(L.tensor([2.0], dtype=L.float64), L.tensor([[0.0], [3.0]], dtype=L.float64))",
    "L.polar(L.tensor([2]), L.tensor([1]))", "L.polar(L.tensor([2.0]), L.tensor([1.0], dtype=L.float64))",
    "L.nan_to_num(L.tensor([1 + 1j, float('nan')], requires_grad=True))",
    "L.aminmax(L.tensor(1j), dim=0)", "L.aminmax(L.tensor([1j]), dim=0)",
    f"L.view_as_real({_Z})", f"L.view_as_real({_Z}.reshape(2, 2).t()).stride()", "L.view_as_real(L.tensor(1j))",
    f"L.view_as_real({_R})", "L.view_as_complex(L.ones(3, 2))", "L.view_as_complex(L.ones(4, 2)[::2]).stride()",
    "L.view_as_complex(L.ones(2, dtype=L.float64))", "L.view_as_complex(L.ones(3, 2, dtype=L.long))",
    "L.view_as_complex(L.ones(3, 2, dtype=L.bfloat16))", "L.view_as_complex(L.ones(3, 3))",
    "L.view_as_complex(L.ones(()))", "L.view_as_complex(L.ones(2, 3).t())", "L.view_as_complex(L.ones(3, 3)[:, :2])",
    "L.view_as_complex(L.ones(8)[1:5].reshape(2, 2))",
]


@pytest.mark.torch
@pytest.mark.parametrize("case", ORACLE_CASES)
def test_complex_ops_match_torch(case):
    assert_same_outcome(case, rtol=1e-6, atol=1e-7)


def test_values():
    z = tm.tensor([3 + 4j, 0j], dtype=tm.complex128)
    assert z.real.tolist() == [3.0, 0.0] and z.imag.tolist() == [4.0, 0.0]
    assert tm.conj(z).tolist() == [3 - 4j, 0j]
    assert tm.sgn(z).tolist() == [pytest.approx(0.6 + 0.8j), 0j]
    assert tm.angle(tm.tensor([1j, -1 + 0j], dtype=tm.complex128)).tolist() == [np.pi / 2, np.pi]
    assert tm.angle(tm.tensor([-2.0, -0.0, 1.0], dtype=tm.float64)).tolist() == [np.pi, 0.0, 0.0]
    assert tm.angle(tm.tensor([-2, 3])).dtype is tm.float32
    assert tm.complex(tm.tensor([1.0]), tm.tensor([2.0])).tolist() == [1 + 2j]
    assert tm.complex(tm.tensor([1.0], dtype=tm.float64), tm.tensor([2.0], dtype=tm.float64)).dtype is tm.complex128
    assert tm.polar(tm.tensor([2.0], dtype=tm.float64), tm.tensor([np.pi / 2], dtype=tm.float64)).tolist() == \
        [pytest.approx(2j)]


def test_real_parts_are_views_and_real_tensors_are_their_own():
    z = tm.tensor([1 + 2j, 3 - 1j])
    z.real.mul_(10)
    z.imag.add_(1)
    assert z.tolist() == [10 + 3j, 30 + 0j]
    assert z.real._base is z and z.real._version == z._version
    x = tm.tensor([1.0, -2.0])
    assert tm.real(x) is x and x.real is x and x.conj() is x and tm.conj_physical(x) is x
    assert x.resolve_conj() is x and x.resolve_neg() is x and not x.is_conj() and not x.is_neg()


def test_view_as_real_and_view_as_complex_share_memory():
    z = tm.tensor([1 + 2j, 3 - 1j])
    pairs = tm.view_as_real(z)
    pairs[1, 1] = 5
    assert z.tolist() == [1 + 2j, 3 + 5j] and pairs._base is z
    r = tm.zeros(2, 2)
    tm.view_as_complex(r)[0] = 1 + 2j
    assert r.tolist() == [[1.0, 2.0], [0.0, 0.0]]
    with pytest.raises(RuntimeError, match="^Tensor must have a storage_offset divisible by 2$"):
        tm.view_as_complex(tm.ones(8)[1:5].reshape(2, 2))


def test_conj_of_a_complex_tensor_is_a_copy():
    # PyTorch returns a lazily conjugated view; tensormodes computes the conjugate.
    z = tm.tensor([1 + 2j])
    c = z.conj()
    c[0] = 5
    assert z.tolist() == [1 + 2j] and not c.is_conj()


def test_errors():
    with pytest.raises(RuntimeError, match="^imag is not implemented for tensors with non-complex dtypes.$"):
        _ = tm.tensor([1.0]).imag
    with pytest.raises(RuntimeError, match="^Expected both inputs to be Half, Float or Double tensors but got Long "
                                           "and Long$"):
        tm.complex(tm.tensor([1]), tm.tensor([2]))
    with pytest.raises(RuntimeError, match="^Expected object of scalar type Float but got scalar type Double for "
                                           "second argument$"):
        tm.polar(tm.tensor([1.0]), tm.tensor([2.0], dtype=tm.float64))
    with pytest.raises(NotImplementedError, match="complex32"):
        tm.complex(tm.tensor([1.0], dtype=tm.float16), tm.tensor([2.0], dtype=tm.float16))
    with pytest.raises(RuntimeError, match="^aminmax not implemented for ComplexFloat$"):
        tm.aminmax(tm.tensor(1j, dtype=tm.complex64), dim=0)


def test_nan_to_num_has_no_complex_gradient():
    z = tm.tensor([1 + 1j, complex("nan")], requires_grad=True)
    message = "^nan_to_num does not support automatic differentiation for outputs with complex dtype.$"
    for call in (lambda: tm.nan_to_num(z), lambda: z.nan_to_num()):  # PyTorch checks no in-place form
        with pytest.raises(RuntimeError, match=message):
            call()
    assert tm.nan_to_num(z.detach()).tolist() == [1 + 1j, 0j]
    assert tm.nan_to_num(tm.tensor([1.0], requires_grad=True)).grad_fn.name() == "NanToNumBackward0"


# -- gradients ---------------------------------------------------------------------------------

def _leaf(values):
    return tm.tensor(values, dtype=tm.complex128, requires_grad=True)


def test_gradients_follow_pytorchs_convention():
    # For a real loss L of z = x + iy, the gradient is dL/dx + i dL/dy.
    z = _leaf([3 + 4j, 1 - 1j])
    (z.real * tm.tensor([1.0, 2.0], dtype=tm.float64)).sum().backward()
    assert z.grad.tolist() == [1 + 0j, 2 + 0j]
    z.grad = None
    (z.imag * tm.tensor([1.0, 2.0], dtype=tm.float64)).sum().backward()
    assert z.grad.tolist() == [1j, 2j]
    z.grad = None
    z.abs().sum().backward()  # d|z| = z / |z|
    np.testing.assert_allclose(z.grad.numpy(), [0.6 + 0.8j, (1 - 1j) / np.sqrt(2)])
    z.grad = None
    (z * z.conj()).real.sum().backward()  # |z|^2: 2z
    np.testing.assert_allclose(z.grad.numpy(), [6 + 8j, 2 - 2j])
    assert z.real.grad_fn.name() == "RealBackward0" and z.conj().grad_fn.name() == "ConjBackward0"


def test_real_inputs_get_real_gradients_through_complex_results():
    a, b = tm.tensor([2.0, 0.5], requires_grad=True), tm.tensor([0.3, -1.0], requires_grad=True)
    g = tm.tensor([0.3 - 0.2j, 1 + 2j])
    grad_a, grad_b = tm.autograd.grad(tm.complex(a, b), (a, b), g)
    assert grad_a.dtype is tm.float32 and grad_a.tolist() == pytest.approx([0.3, 1.0])
    assert grad_b.tolist() == pytest.approx([-0.2, 2.0])


COMPLEX_FUNCTIONS = [
    lambda z: z.real, lambda z: z.imag, lambda z: z.conj(), lambda z: z.conj_physical(), lambda z: z.angle(),
    lambda z: z.sgn(), lambda z: z.abs(), lambda z: z * z.sin() / (z + 3), lambda z: (z @ z.mT).exp(),
    lambda z: tm.polar(z.abs(), z.angle()), lambda z: tm.complex(z.real * z.imag, z.real.exp()),
    lambda z: (z.sgn() * z.conj()).sum(), lambda z: z.pow(2).log(),
    lambda z: tm.view_as_real(z) ** 2, lambda z: tm.view_as_complex(tm.view_as_real(z * z).flip(-1).contiguous()),
]


@pytest.mark.parametrize("function", COMPLEX_FUNCTIONS)
def test_complex_gradients_and_second_gradients_match_finite_differences(function):
    z = tm.tensor(np.random.default_rng(0).standard_normal((2, 2)) + 1j * np.random.default_rng(1).standard_normal(
        (2, 2)), requires_grad=True)
    assert tm.autograd.gradcheck(function, (z,))
    assert tm.autograd.gradgradcheck(function, (z,))


def test_gradcheck_catches_an_unconjugated_formula():
    class Scale(tm.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            return z * (1 + 2j)

        @staticmethod
        def backward(ctx, grad):
            return grad * (1 + 2j)  # should be grad * conj(1 + 2j)

    z = _leaf([0.5 - 1j])
    assert not tm.autograd.gradcheck(Scale.apply, (z,), raise_exception=False)
    with pytest.raises(tm.autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        tm.autograd.gradcheck(Scale.apply, (z,))
    assert tm.autograd.gradcheck(lambda z: z * (1 + 2j), (z,))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_square_is_pytorchs_pow_bit_for_bit(dtype):
    # PyTorch's square is pow(x, 2), whose complex product rounds differently from NumPy's multiply
    # (a third of complex64 squares used to differ in the last bit)
    import torch

    rng = np.random.default_rng(0)
    values = (rng.standard_normal(2000) + 1j * rng.standard_normal(2000)).astype(dtype)
    theirs = torch.square(torch.tensor(values)).numpy()
    assert np.array_equal(tm.square(tm.tensor(values)).numpy(), theirs)
    assert np.array_equal(tm.tensor(values).square().numpy(), theirs)

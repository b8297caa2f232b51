"""Special functions and the further elementwise ops (inverse hyperbolics, xlogy, logit,
fmax, gcd, lgamma, digamma, polygamma, erfinv, i0 ...): exact values, special points and
errors on their own; dtypes, errors and accuracy against PyTorch (``@pytest.mark.torch``);
identities that hold for all inputs with hypothesis."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensormodes as tm

from .test_pointwise import DTYPE_NAMES, DTYPE_PAIRS, SCALARS, Problems, reversed_values, values
from .torch_oracle import assert_same_outcome

inf, nan = math.inf, math.nan
EULER_GAMMA = 0.5772156649015329
ZETA_3 = 1.2020569031595942


def f64(*data) -> tm.Tensor:
    return tm.tensor(list(data), dtype=tm.float64)


def same(tensor: tm.Tensor, expected: list) -> bool:
    """Elementwise equality, NaN equal to NaN and -0.0 told from 0.0."""
    got = tensor.tolist()
    return len(got) == len(expected) and all(
        (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
        for a, b in zip(got, expected, strict=True))


# -- exact values and special points ---------------------------------------------------------

def test_lgamma_known_values_and_poles():
    assert tm.lgamma(f64(0.5)).item() == pytest.approx(math.log(math.sqrt(math.pi)), rel=1e-16)
    assert tm.lgamma(f64(1.0, 2.0)).tolist() == [0.0, 0.0]
    assert tm.lgamma(f64(-0.5)).item() == pytest.approx(math.log(2 * math.sqrt(math.pi)), rel=1e-15)
    assert tm.lgamma(f64(0.0, -0.0, -1.0, -7.0, inf, -inf, 1e308)).tolist() == [inf] * 7
    assert math.isnan(tm.lgamma(f64(nan)).item())
    assert tm.lgamma(tm.tensor([3, 4])).tolist() == pytest.approx([math.log(2), math.log(6)], rel=1e-7)
    assert tm.lgamma(tm.tensor([3, 4])).dtype == tm.float32


def test_lgamma_is_accurate_relative_to_its_small_values_near_one_and_two():
    # Around the roots 1 and 2 the value is tiny: the relative error is what matters.
    assert tm.lgamma(f64(1 + 1e-10)).item() == pytest.approx(-EULER_GAMMA * 1e-10, rel=1e-9)
    assert tm.lgamma(f64(2 - 1e-12)).item() == pytest.approx(-(1 - EULER_GAMMA) * 1e-12, rel=1e-11)


def test_digamma_known_values_and_poles():
    assert tm.digamma(f64(1.0)).item() == pytest.approx(-EULER_GAMMA, rel=2e-16)
    assert tm.digamma(f64(0.5)).item() == pytest.approx(-EULER_GAMMA - 2 * math.log(2), rel=1e-15)
    assert tm.digamma(f64(10.0)).item() == pytest.approx(2.251752589066721, rel=1e-15)
    # 0 gives -inf, -0.0 gives inf, negative integers and -inf give NaN (as in PyTorch).
    assert same(tm.digamma(f64(0.0, -0.0, -1.0, -4.0, inf, -inf, nan)), [-inf, inf, nan, nan, inf, nan, nan])


def test_polygamma_known_values_and_poles():
    assert tm.polygamma(1, f64(1.0)).item() == pytest.approx(math.pi ** 2 / 6, rel=1e-15)
    assert tm.polygamma(1, f64(0.5)).item() == pytest.approx(math.pi ** 2 / 2, rel=1e-15)
    assert tm.polygamma(2, f64(1.0)).item() == pytest.approx(-2 * ZETA_3, rel=1e-15)
    assert tm.polygamma(3, f64(1.0)).item() == pytest.approx(math.pi ** 4 / 15, rel=1e-15)
    assert tm.polygamma(0, f64(1.0)).item() == tm.digamma(f64(1.0)).item()
    # Poles: the sign of (-1)^(n+1) n! zeta(n + 1, x).
    assert tm.polygamma(1, f64(0.0, -2.0)).tolist() == [inf, inf]
    assert tm.polygamma(2, f64(0.0, -2.0)).tolist() == [-inf, -inf]
    assert tm.polygamma(3, f64(-0.0, -3.0)).tolist() == [inf, inf]
    assert same(tm.polygamma(1, f64(inf, -inf, nan)), [0.0, nan, nan])
    assert same(tm.polygamma(2, f64(inf, -inf, nan)), [nan, -inf, nan])


def test_polygamma_method_takes_n_after_self():
    x = f64(1.5, 2.5)
    assert x.polygamma(2).tolist() == tm.polygamma(2, x).tolist()
    y = x.clone()
    assert y.polygamma_(1) is y and y.tolist() == tm.polygamma(1, x).tolist()


def test_polygamma_errors():
    with pytest.raises(RuntimeError, match=r"^polygamma\(n, x\) does not support negative n\.$"):
        tm.polygamma(-1, f64(1.0))
    with pytest.raises(TypeError, match="argument 'n' .* must be int, not float"):
        tm.polygamma(1.0, f64(1.0))
    with pytest.raises(NotImplementedError, match="\"trigamma\" not implemented for 'ComplexFloat'"):
        tm.polygamma(1, tm.tensor([1j]))


def test_erfinv_special_points_and_round_trip():
    assert same(tm.erfinv(f64(0.0, -0.0, 1.0, -1.0, 1.5, -2.0, nan)), [0.0, -0.0, inf, -inf, nan, nan, nan])
    # Where erf is well conditioned to invert (|x| <= 2: erf's slope is above 0.02).
    x = f64(-2.0, -0.3, 1e-300, 0.1, 0.7, 1.5, 2.0)
    np.testing.assert_allclose(tm.erfinv(tm.erf(x)).numpy(), x.numpy(), rtol=1e-14)
    # The tail, 1 - y as small as float64 allows.
    assert tm.erfinv(f64(1 - 2 ** -53)).item() == pytest.approx(5.8635847487551676, rel=2e-16)


def test_i0_known_values():
    assert tm.i0(f64(0.0, -0.0)).tolist() == [1.0, 1.0]
    assert tm.i0(f64(1.0, -1.0)).tolist() == pytest.approx([1.2660658777520082] * 2, rel=1e-16)
    assert tm.i0(f64(30.0)).item() == pytest.approx(781672297823.9775, rel=1e-15)
    # Overflow where e^|x| does; the infinities give NaN, as in PyTorch.
    assert same(tm.i0(f64(710.0, -710.0, inf, -inf, nan)), [inf, inf, nan, nan, nan])


def test_erfc_tail_and_limits():
    assert tm.erfc(f64(0.0, inf, -inf)).tolist() == [1.0, 0.0, 2.0]
    assert tm.erfc(f64(26.0)).item() == pytest.approx(5.663192408856143e-296, rel=1e-14)


def test_inverse_hyperbolics():
    assert tm.asinh(f64(0.0, 1.0)).tolist() == [0.0, math.asinh(1.0)]
    assert same(tm.acosh(f64(1.0, 0.5)), [0.0, nan])
    assert same(tm.atanh(f64(1.0, -1.0, 2.0)), [inf, -inf, nan])
    assert tm.asinh(tm.tensor([1j])).dtype == tm.complex64


def test_logit_with_and_without_eps():
    assert same(tm.logit(f64(0.5, 0.0, 1.0, 2.0, -1.0)), [0.0, -inf, inf, nan, nan])
    clamped = tm.logit(f64(0.0, 0.1, 1.0), eps=0.25)
    assert clamped.tolist() == pytest.approx([-math.log(3), -math.log(3), math.log(3)], rel=1e-15)
    assert same(tm.logit(f64(0.0, 2.0), -1.0), [-inf, nan])  # a negative eps clamps nothing
    assert tm.logit(tm.tensor([0, 1])).dtype == tm.float32


def test_xlogy_treats_zero_times_log_as_zero():
    assert same(tm.xlogy(f64(0.0, 0.0, 0.0, 1.0, 2.0), f64(0.0, -1.0, nan, 0.0, math.e)), [0.0, 0.0, nan, -inf, 2.0])
    assert tm.xlogy(3, f64(1.0)).tolist() == [0.0]
    assert tm.xlogy(tm.tensor([2]), 1.0).dtype == tm.float32
    with pytest.raises(TypeError):
        tm.xlogy(2, 3)


def test_angle_conversions_sinc_and_copysign():
    assert tm.deg2rad(f64(180.0, -90.0)).tolist() == [math.pi, -math.pi / 2]
    assert tm.rad2deg(f64(math.pi)).tolist() == [180.0]
    assert tm.rad2deg(tm.tensor([True])).dtype == tm.float32
    assert tm.sinc(f64(0.0, 0.5)).tolist() == [1.0, 2 / math.pi]
    assert same(tm.copysign(f64(1.0, 2.0, 3.0), f64(-0.0, 0.0, -5.0)), [-1.0, 2.0, -3.0])
    assert tm.copysign(tm.tensor([1, 2]), -1).tolist() == [-1.0, -2.0]
    with pytest.raises(RuntimeError, match="^deg2rad is not supported for complex tensors.$"):
        tm.deg2rad(tm.tensor([1j]))


def test_float_power_computes_in_double_precision():
    assert tm.float_power(tm.tensor([2, 3]), 2).dtype == tm.float64
    assert tm.float_power(tm.tensor([2.0], dtype=tm.float16), tm.tensor([0.5])).dtype == tm.float64
    assert tm.float_power(tm.tensor([4.0]), 1j).dtype == tm.complex128
    assert tm.float_power(2, tm.tensor([10])).tolist() == [1024.0]
    assert tm.tensor([3], dtype=tm.int8).float_power(2).tolist() == [9.0]


def test_negative_fmax_fmin_and_heaviside():
    assert tm.negative(tm.tensor([1, -2])).tolist() == [-1, 2]
    assert same(tm.fmax(f64(nan, 1.0, nan), f64(2.0, nan, nan)), [2.0, 1.0, nan])
    assert same(tm.fmin(f64(nan, 1.0, -0.0), f64(2.0, nan, 3.0)), [2.0, 1.0, -0.0])
    assert tm.heaviside(f64(-1.5, 0.0, -0.0, 2.0, nan), f64(0.5)).tolist() == [0.0, 0.5, 0.5, 1.0, 0.0]
    with pytest.raises(RuntimeError, match="^heaviside is not yet implemented for tensors with different dtypes.$"):
        tm.heaviside(tm.tensor([1.0]), f64(0.5))
    with pytest.raises(RuntimeError, match="^fmax not implemented for complex tensors.$"):
        tm.fmax(tm.tensor([1j]), tm.tensor([1j]))


def test_heaviside_is_recorded_but_has_no_derivative():
    x = tm.tensor([0.5, -1.0], requires_grad=True)
    result = tm.heaviside(x, tm.tensor([0.5]))
    assert result.requires_grad
    with pytest.raises(RuntimeError, match="^derivative for aten::heaviside is not implemented$"):
        result.sum().backward()


def test_gcd_and_lcm():
    assert tm.gcd(tm.tensor([-4, 0, 6, 7]), tm.tensor([6, 0, -9, 0])).tolist() == [2, 0, 3, 7]
    assert tm.lcm(tm.tensor([-4, 0, 6]), tm.tensor([6, 5, -9])).tolist() == [12, 0, 18]
    assert tm.gcd(tm.tensor([12], dtype=tm.uint8), tm.tensor([18], dtype=tm.int32)).dtype == tm.int32
    with pytest.raises(NotImplementedError, match="\"gcd_cpu\" not implemented for 'Float'"):
        tm.gcd(tm.tensor([1.0]), tm.tensor([2]))
    with pytest.raises(NotImplementedError, match="\"lcm_cpu\" not implemented for 'Bool'"):
        tm.lcm(tm.tensor([True]), tm.tensor([True]))
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        tm.gcd(tm.tensor([1, 2]), tm.tensor([1, 2, 3]))


def test_predicates():
    assert tm.signbit(f64(-1.0, -0.0, 0.0, 2.0, -inf)).tolist() == [True, True, False, False, True]
    assert tm.signbit(tm.tensor([-3, 0, 3])).tolist() == [True, False, False]
    assert tm.isposinf(f64(inf, -inf, nan, 1.0)).tolist() == [True, False, False, False]
    assert tm.isneginf(f64(inf, -inf, nan, 1.0)).tolist() == [False, True, False, False]
    assert tm.isneginf(tm.tensor([1, 2])).tolist() == [False, False]
    assert tm.isreal(tm.tensor([1 + 0j, 1j, nan + 0j])).tolist() == [True, False, True]
    assert tm.isreal(tm.tensor([nan])).tolist() == [True]
    with pytest.raises(NotImplementedError, match="^signbit is not implemented for complex tensors.$"):
        tm.signbit(tm.tensor([1j]))
    with pytest.raises(RuntimeError, match="^isposinf does not support complex inputs.$"):
        tm.isposinf(tm.tensor([1j]))


def test_gradients_of_special_functions():
    x = tm.tensor([0.7, 2.5, -1.5], dtype=tm.float64, requires_grad=True)
    (g,) = tm.autograd.grad(tm.lgamma(x).sum(), x)
    assert g.tolist() == tm.digamma(x.detach()).tolist()
    (g,) = tm.autograd.grad(tm.digamma(x).sum(), x)
    assert g.tolist() == tm.polygamma(1, x.detach()).tolist()
    (g,) = tm.autograd.grad(tm.polygamma(2, x).sum(), x)
    assert g.tolist() == tm.polygamma(3, x.detach()).tolist()
    y = tm.tensor([0.0, 0.5, -0.9], dtype=tm.float64, requires_grad=True)
    (g,) = tm.autograd.grad(tm.erfinv(y).sum(), y)
    expected = math.sqrt(math.pi) / 2 * np.exp(tm.erfinv(y.detach()).numpy() ** 2)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-15)
    z = tm.tensor([0.0, 1e-9, 1.0, -3.0, 100.0], dtype=tm.float64, requires_grad=True)
    (g,) = tm.autograd.grad(tm.i0(z).sum(), z)
    # I1 at those points.
    np.testing.assert_allclose(g.numpy(), [0.0, 5e-10, 0.5651591039924851, -3.953370217402609,
                                           1.068369390338162e42], rtol=1e-14)


# -- against PyTorch -------------------------------------------------------------------------

UNARY = ("asinh acosh atanh erfc logit deg2rad rad2deg sinc negative signbit isposinf isneginf isreal lgamma "
         "digamma erfinv i0").split()
BINARY = "xlogy logaddexp2 copysign float_power fmax fmin heaviside gcd lcm".split()
_HAS_INPLACE = {"asinh", "acosh", "atanh", "erfc", "logit", "deg2rad", "rad2deg", "sinc", "negative", "lgamma",
                "digamma", "erfinv", "i0", "xlogy", "copysign", "heaviside", "gcd", "lcm"}


def _known_difference(problem: str) -> bool:
    """Disagreements that are not the kernels': PyTorch checks an in-place or out= result's
    cast before running the kernel (tensormodes after, so the kernel's own error may come
    first); its float32 -> bfloat16 conversion, which the comparison uses to build bfloat16
    inputs, sets the sign bit of NaN (signbit / copysign then see a negative NaN)."""
    return "can't be cast" in problem or ("bfloat16" in problem and ("signbit" in problem or "copysign" in problem))


# signbit, isposinf and isneginf refuse a non-bool out= tensor (their written_check), and
# also get a bool one; isreal has no out=.
_BOOL_RESULTS = {"signbit", "isposinf", "isneginf", "isreal"}


@pytest.mark.torch
@pytest.mark.parametrize("op", UNARY)
def test_unary_matches_torch(op):
    problems = Problems()
    for name in DTYPE_NAMES:
        a = values(name)
        problems.check(f"{op}({name})", op, a)
        problems.check(f"{op}(0-dim {name})", op, a[4])
        problems.check(f"Tensor.{op}({name})", f".{op}", a)
        if op in _HAS_INPLACE:
            problems.check(f"{op}_({name})", f".{op}_", a)
        if op != "isreal":
            problems.check(f"{op}({name}, out=)", op, a, out=values(name))
        if op in _BOOL_RESULTS - {"isreal"}:
            problems.check(f"{op}({name}, out=bool)", op, a, out=values("bool"))
        if op == "logit":
            for eps in (0.25, 0.0, -1.0, 0.6):
                problems.check(f"logit({name}, {eps})", "logit", a, eps)
    assert not [p for p in problems if not _known_difference(p)], problems.report()


@pytest.mark.torch
@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_polygamma_matches_torch(n):
    problems = Problems()
    for name in DTYPE_NAMES:
        a = values(name)
        if n == 1 and name != "bool" and not name.startswith("complex"):
            # PyTorch's trigamma is finite at its poles (6.6e32 at -1.0, 1.3e15 at -1 in float32): not compared.
            a = a[np.asarray(np.modf(a.astype(np.float64))[0] != 0) | (a.astype(np.float64) > 0)
                  | np.isnan(a.astype(np.float64))]
        problems.check(f"polygamma({n}, {name})", "polygamma", n, a)
        problems.check(f"Tensor.polygamma({name}, {n})", ".polygamma", a, n)
        problems.check(f"polygamma_({name}, {n})", ".polygamma_", a, n)
    assert not problems, problems.report()


@pytest.mark.torch
@pytest.mark.parametrize("op", BINARY)
def test_binary_matches_torch(op):
    problems = Problems()
    for x, y in DTYPE_PAIRS:
        a, b = values(x), reversed_values(y)
        if op in ("gcd", "lcm") and "int8" in (x, y):
            # PyTorch's abs(-128) wraps in int8, which makes its gcd(127, -128) -1: not compared.
            a, b = a[(a != -128) & (b != -128)], b[(a != -128) & (b != -128)]
        problems.check(f"{op}({x}, {y})", op, a, b)
        problems.check(f"{op}({x}, 0-dim {y})", op, a, b[3])
        if op in _HAS_INPLACE:
            problems.check(f"{op}_({x}, {y})", f".{op}_", a, b)
        if op != "float_power":  # see test_float_power_out_must_be_float64
            problems.check(f"{op}({x}, {y}, out=)", op, a, b, out=values(x))
    for x in DTYPE_NAMES:
        a = values(x)
        for s in SCALARS:
            if x == "float16" and isinstance(s, complex):
                continue  # PyTorch's complex32
            problems.check(f"{op}({x}, {s!r})", op, a, s)
            problems.check(f"{op}({s!r}, {x})", op, s, a)
    problems.check(f"{op}(broadcast)", op, values("float32").reshape(3, 1, 4), values("float32")[:4].copy())
    problems.check(f"{op}(mismatch)", op, values("int64")[:3].copy(), values("int64")[:4].copy())
    assert not [p for p in problems if not _known_difference(p)], problems.report()


def _sweep(op: str, data: np.ndarray, *, rtol: float, atol: float = 0.0, n: int | None = None) -> None:
    import torch

    prefix = () if n is None else (n,)
    ours = getattr(tm, op)(*prefix, tm.tensor(data)).numpy()
    theirs = getattr(torch, op)(*prefix, torch.tensor(data)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{op} {prefix}")


_RNG = np.random.default_rng(7)
_POSITIVE = np.concatenate([_RNG.uniform(0, 3, 2000), _RNG.uniform(3, 40, 1000), np.exp(_RNG.uniform(-30, 200, 500))])
_NEGATIVE = -np.concatenate([_RNG.uniform(0, 3, 1000), _RNG.uniform(3, 60, 1000)])
_NEGATIVE = _NEGATIVE[np.abs(_NEGATIVE - np.round(_NEGATIVE)) > 1e-6]


@pytest.mark.torch
def test_accuracy_against_torch_in_float64():
    # Measured against mpmath (40 digits) on these kinds of points: lgamma within 6 ulp above 0
    # (1e-15 absolute next to its roots below 0, where PyTorch is within 1 ulp); digamma 3 ulp above
    # 0 and 73 below (PyTorch: 1300 next to the root 1.46, 244); polygamma within 8 ulp (PyTorch's
    # trigamma: 5e-10 relative, its polygamma(2) 164 ulp below 0); erfinv 1, erfc 2, i0 8 ulp, and
    # i0's gradient i1 8 ulp. The tolerances below are PyTorch's errors, not ours.
    _sweep("lgamma", _POSITIVE, rtol=1e-14, atol=1e-16)
    _sweep("lgamma", _NEGATIVE, rtol=1e-13, atol=3e-15)  # near lgamma's roots on the negative axis
    _sweep("digamma", _POSITIVE, rtol=1e-13, atol=1e-15)
    _sweep("digamma", _NEGATIVE, rtol=1e-12, atol=1e-13)
    # PyTorch's trigamma is accurate to about 5e-10 only (ours to a few ulp, checked below).
    _sweep("polygamma", _POSITIVE[_POSITIVE < 1e30], n=1, rtol=1e-9)
    _sweep("polygamma", _NEGATIVE, n=1, rtol=1e-9)
    for n in (2, 3, 6):
        _sweep("polygamma", _POSITIVE[_POSITIVE < 1e30], n=n, rtol=1e-13)
        _sweep("polygamma", _NEGATIVE, n=n, rtol=1e-12, atol=1e-12)
    unit = np.concatenate([_RNG.uniform(-1, 1, 3000), 1 - np.exp(_RNG.uniform(-36.7, -1, 1000)),
                           _RNG.uniform(-1e-8, 1e-8, 100)])
    _sweep("erfinv", unit, rtol=1e-15)
    _sweep("erfc", _RNG.uniform(-7, 27, 3000), rtol=1e-15, atol=1e-322)  # 1e-322: subnormal results
    _sweep("i0", np.concatenate([_RNG.uniform(-30, 30, 2000), _RNG.uniform(-709, 709, 1000)]), rtol=3e-15)


def test_polygamma_far_below_zero_reflects_instead_of_summing():
    # psi_n(x) = (-1)^n psi_n(1 - x) - pi d^n/dx^n cot(pi x); at half-integers the cot term of
    # odd n is pi^(n+1) |P_n(0)| (P_1(0) = -1, P_3(0) = -2).
    x, mirror = f64(-1e9 - 0.5), f64(1e9 + 1.5)
    assert tm.polygamma(1, x).item() == pytest.approx(math.pi ** 2 - tm.polygamma(1, mirror).item(), rel=1e-15)
    assert tm.polygamma(3, x).item() == pytest.approx(2 * math.pi ** 4 - tm.polygamma(3, mirror).item(), rel=1e-15)
    assert tm.polygamma(2, f64(-0.5, -7.5)).tolist() == pytest.approx(
        tm.polygamma(2, f64(1.5, 8.5)).tolist(), rel=1e-15)


def test_trigamma_is_accurate_to_a_few_ulp():
    # Exact values: psi1(n) = pi^2/6 - sum of 1/k^2 for k < n, and psi1(1/4) = pi^2 + 8 G.
    catalan = 0.915965594177219015
    for n in (1, 2, 5, 30):
        exact = math.pi ** 2 / 6 - math.fsum(1 / k ** 2 for k in range(1, n))
        assert tm.polygamma(1, f64(float(n))).item() == pytest.approx(exact, rel=4e-16)
    assert tm.polygamma(1, f64(0.25)).item() == pytest.approx(math.pi ** 2 + 8 * catalan, rel=4e-16)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.fmax(L.tensor([1., 2., 3.], requires_grad=True), L.tensor([1., nan, 4.]))",
    "L.lgamma(L.tensor([0., -0., -1., -3., inf, -inf, nan], dtype=L.float64))",
    "L.digamma(L.tensor([0., -0., -3., 1e-300], dtype=L.float64))",
    "L.erfinv(L.tensor([-1., 1., 1.5, -0.], dtype=L.float64))",
    "L.i0(L.tensor([709., 710., -inf]))",
    "L.polygamma(2, L.tensor([0., -2., inf, -inf], dtype=L.float64))",
    "L.logit(L.tensor([0.1, 0.9]), eps=1.0)",
    "L.float_power(L.tensor([2.]), L.tensor([3.], dtype=L.float16))",
    "L.tensor([2.]).float_power(L.tensor([1j]))",
    "L.heaviside(L.tensor([1.]), L.tensor([1j]))",
    "L.heaviside(L.tensor([1, 0]), L.tensor([5, 6]))",
    "L.copysign(L.tensor([1.]), 2)",
    "L.isreal(L.tensor([1., 2.]))",
])
def test_special_points_match_torch(expression):
    assert_same_outcome(expression)


@pytest.mark.torch
@pytest.mark.parametrize("case", [
    # fmax / fmin: the chosen operand takes the whole gradient, input on ties and where other is NaN.
    ("fmax", [1.0, 2.0, nan, 3.0, nan], [1.0, nan, 4.0, 1.0, nan]),
    ("fmin", [1.0, 2.0, nan, 3.0, nan], [1.0, nan, 4.0, 1.0, nan]),
    # xlogy: 0 * log(y) is 0 for y <= 0, and so is the gradient in x there.
    ("xlogy", [0.0, 0.0, 0.0, 2.0, 1.0], [0.0, -1.0, 2.0, 0.5, nan]),
    ("copysign", [0.0, -0.0, 1.5, -2.0], [1.0, -1.0, -1.0, 0.0]),
    ("logaddexp2", [1.0, -500.0, 3.0], [1.0, 500.0, -2.0]),
    ("float_power", [0.0, 2.0, 3.0, 0.5], [2.0, 0.0, -1.0, 1.5]),
])
def test_binary_gradients_at_special_points_match_torch(case):
    import torch

    op, first, second = case
    ours_a, ours_b = (tm.tensor(v, dtype=tm.float64, requires_grad=True) for v in (first, second))
    theirs_a, theirs_b = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (first, second))
    ours = tm.autograd.grad(getattr(tm, op)(ours_a, ours_b).sum(), (ours_a, ours_b))
    theirs = torch.autograd.grad(getattr(torch, op)(theirs_a, theirs_b).sum(), (theirs_a, theirs_b))
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-15, equal_nan=True)


@pytest.mark.torch
@pytest.mark.parametrize("op, data, kwargs", [
    ("logit", [0.05, 0.1, 0.5, 0.9, 0.95, -0.5, 1.5], {}),
    ("logit", [0.05, 0.1, 0.5, 0.9, 0.95, -0.5, 1.5], {"eps": 0.1}),
    ("sinc", [0.0, 0.5, -1.5, 2.0], {}),
    ("erfinv", [0.0, 0.5, -0.999999, 1.0], {}),
    ("i0", [0.0, 1e-8, -2.0, 50.0, 700.0], {}),
    ("lgamma", [0.5, -2.5, 1e5, 1e-10], {}),
    ("acosh", [1.5, 4.0, 1e10], {}),
    ("atanh", [0.0, -0.5, 0.99], {}),
])
def test_unary_gradients_at_special_points_match_torch(op, data, kwargs):
    import torch

    ours_x = tm.tensor(data, dtype=tm.float64, requires_grad=True)
    theirs_x = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    (ours,) = tm.autograd.grad(getattr(tm, op)(ours_x, **kwargs).sum(), ours_x)
    (theirs,) = torch.autograd.grad(getattr(torch, op)(theirs_x, **kwargs).sum(), theirs_x)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-13, equal_nan=True)


def test_float_power_in_place_requires_a_float64_self():
    x = tm.tensor([2.0], dtype=tm.float64)
    assert x.float_power_(2) is x and x.tolist() == [4.0]
    with pytest.raises(RuntimeError, match="^the base given to float_power_ has dtype Float but the operation's "
                                           "result requires dtype Double$"):
        tm.tensor([2.0]).float_power_(2)


def test_float_power_out_must_be_float64():
    with pytest.raises(RuntimeError, match="^the output given to float_power has dtype Float but the operation's "
                                           "result requires dtype Double$"):
        tm.float_power(tm.tensor([3.0]), 2, out=tm.empty(1))


def test_signbit_out_must_be_bool():
    with pytest.raises(RuntimeError, match="^signbit does not support non-boolean outputs.$"):
        tm.signbit(tm.tensor([-1.0]), out=tm.empty(1))
    with pytest.raises(RuntimeError, match="^isneginf does not support non-boolean outputs.$"):
        tm.isneginf(tm.tensor([-1.0]), out=tm.empty(1, dtype=tm.int64))
    out = tm.empty(1, dtype=tm.bool)
    assert tm.isposinf(tm.tensor([float("inf")]), out=out) is out and out.tolist() == [True]


# -- identities over all inputs ------------------------------------------------------------------

def _on_grid(x: float) -> float:
    """``x`` rounded to a multiple of 2**-40, so that ``x + 1`` is exact (|x| < 2**12) and a
    recurrence compares values at exactly the arguments it is about."""
    return round(x * 2.0 ** 40) / 2.0 ** 40


_ARGUMENTS = st.floats(min_value=-60, max_value=60, allow_nan=False).map(_on_grid).filter(
    lambda v: abs(v) > 1e-3 and abs(v - round(v)) > 1e-3)


@settings(max_examples=200, deadline=None)
@given(_ARGUMENTS)
def test_digamma_recurrence(x):
    # psi(x + 1) = psi(x) + 1 / x; a relative tolerance on the larger terms, as cancellation
    # near psi's roots leaves an absolute error of a few ulp of them.
    left, right = tm.digamma(f64(x + 1, x)).tolist()
    assert left == pytest.approx(right + 1 / x, rel=1e-13, abs=1e-13 * (abs(right) + abs(1 / x)))


@settings(max_examples=200, deadline=None)
@given(_ARGUMENTS, st.integers(1, 5))
def test_polygamma_recurrence(x, n):
    # psi_n(x + 1) = psi_n(x) + (-1)^n n! / x^(n + 1)
    left, right = tm.polygamma(n, f64(x + 1, x)).tolist()
    step = (-1) ** n * math.factorial(n) / x ** (n + 1)
    assert left == pytest.approx(right + step, rel=1e-12, abs=1e-12 * (abs(right) + abs(step)))


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e3).map(_on_grid))
def test_lgamma_recurrence(x):
    # lgamma(x + 1) = lgamma(x) + log(x)
    left, right = tm.lgamma(f64(x + 1, x)).tolist()
    assert left == pytest.approx(right + math.log(x), rel=1e-13, abs=1e-13 * (abs(right) + abs(math.log(x))))


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-1, max_value=1, exclude_min=True, exclude_max=True))
def test_erf_inverts_erfinv(y):
    assert tm.erf(tm.erfinv(f64(y))).item() == pytest.approx(y, rel=1e-14, abs=1e-300)


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=-700, max_value=700))
def test_i0_is_even_and_at_least_one(x):
    plus, minus = tm.i0(f64(x, -x)).tolist()
    assert plus == minus >= 1.0 - 1e-15  # (Cephes' fit, PyTorch's, dips 2 ulp below 1 near 0)


def test_erf_blocked_series_matches_the_standard_library_across_blocks():
    # _erf evaluates its series a block of elements at a time, in place: every element (in every
    # block, the last partial one included, and 0-dim or empty inputs) gets math.erf's value.
    import math

    from tensormodes._ops.special import _BLOCK, _erf

    rng = np.random.default_rng(3)
    values = rng.standard_normal(2 * _BLOCK + 17) * 3
    values[:9] = [0.0, -0.0, 2.0, -2.0, 6.0, -6.0, 1e-300, 1.9999999, 5.9999999]
    expected = np.array([math.erf(v) for v in values])
    got = _erf(values.reshape(-1, 1))
    assert got.shape == (values.size, 1)
    np.testing.assert_allclose(got[:, 0], expected, rtol=2.5e-15, atol=0)  # the fits: ~10 ulp
    assert np.array_equal(np.signbit(got[:, 0]), np.signbit(expected))  # erf(-0.0) is -0.0
    assert _erf(np.array(0.5)).shape == () and _erf(np.array(0.5)) == math.erf(0.5)
    assert _erf(np.zeros((0, 3))).shape == (0, 3)
    special = _erf(np.array([np.inf, -np.inf, np.nan]))
    assert special[0] == 1.0 and special[1] == -1.0 and np.isnan(special[2])


def test_erf_float32_leading_terms_round_as_the_whole_series():
    # _erf_rounded decides most float32 values from the series' leading terms and leaves those
    # near a rounding midpoint to the whole series: bit for bit _erf(x).astype(float32) on every
    # float32 of [0.5, 1) (the near-zero polynomial's far end), [1.5, 2) (the inner series' far
    # end) and [3.5, 4) (the tail, where erf rounds to 1), on a few values beyond 2, on random
    # values of both signs, and at the special points.
    # (All of [0, 6] is checked by scripts/check_erf_float32.py: a few minutes.)
    from tensormodes._ops.special import _FEW_BEYOND, _erf, _erf_rounded

    def bits(start, stop):
        return np.arange(*np.array([start, stop], np.float32).view(np.uint32), dtype=np.uint32).view(np.float32)

    rng = np.random.default_rng(5)
    special = np.array([0.0, -0.0, 1e-45, -1e-40, 2.0 ** -126, 1e-38, 2.0, -2.0, 6.0, 3.4e38, np.inf, -np.inf,
                        np.nan, -np.nan], np.float32)
    few_beyond = bits(2.0, 6.5)[::200_000]  # fewer than _FEW_BEYOND: the standard library's erf decides
    assert few_beyond.size < _FEW_BEYOND
    for x in (bits(0.5, 1.0), bits(1.5, 2.0), bits(3.5, 4.0), few_beyond,
              (rng.standard_normal(100_000) * 2).astype(np.float32), rng.uniform(-7, 7, 100_000).astype(np.float32),
              special):
        expected = _erf(x).astype(np.float32)
        got = _erf_rounded(x)
        assert got.dtype == np.float32 and got.shape == x.shape
        assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))
        # written into its own operand: the same bits (values apart and undecided read before)
        if x.size:
            into = x.copy()
            assert _erf_rounded(into, in_place=True) is into and np.array_equal(into.view(np.uint32),
                                                                                expected.view(np.uint32))
    strided = rng.standard_normal((4, 6)).astype(np.float32).T  # not contiguous: computed apart, copied in
    expected = _erf(strided).astype(np.float32)
    assert _erf_rounded(strided, in_place=True) is strided and np.array_equal(strided, expected)
    # other dtypes and shapes go through the whole series
    assert _erf_rounded(np.float32(0.5)).shape == () and _erf_rounded(np.zeros((0, 3), np.float32)).shape == (0, 3)
    x64 = rng.standard_normal((3, 4))
    assert np.array_equal(_erf_rounded(x64), _erf(x64))
    x16 = rng.standard_normal(50).astype(np.float16)
    assert np.array_equal(_erf_rounded(x16), _erf(x16).astype(np.float16))
    # the op on a float32 tensor: the same values as rounding the float64 evaluation
    values = rng.standard_normal(1000).astype(np.float32) * 3
    assert np.array_equal(tm.erf(tm.tensor(values)).numpy(), _erf(values.astype(np.float64)).astype(np.float32))
    assert tm.erf(tm.tensor([0.5, -2.5])).tolist() == [0.5204998850822449, -0.9995930194854736]


def test_erf_of_few_undecided_elements_replays_the_series_in_python_floats():
    # the elements the float32 fast path leaves undecided (about one a call) take the whole series
    # on Python floats when they are few and below 2: the same float64 values as NumPy's _erf, sign
    # of zero included; more of them, or NaN / 2 and beyond, go to _erf itself
    from tensormodes._ops.special import _FEW_UNDECIDED, _erf, _erf_few

    rng = np.random.default_rng(11)
    for scale in (1e-30, 1e-3, 0.3, 1.0, 1.4):
        x = (rng.standard_normal(_FEW_UNDECIDED) * scale).astype(np.float32)
        assert np.array_equal(_erf_few(x).view(np.int64), _erf(x).view(np.int64))
    edges = np.array([0.0, -0.0, 1e-45, -1e-40, 1.9999999, -1.9999999], np.float32)
    assert np.array_equal(_erf_few(edges).view(np.int64), _erf(edges).view(np.int64))
    assert _erf_few(np.array([0.5], np.float32)).tolist() == [0.5204998778130465]
    for x in (np.array([0.5, np.nan], np.float32), np.array([0.5, 2.0], np.float32),
              rng.standard_normal(_FEW_UNDECIDED + 1).astype(np.float32)):
        assert np.array_equal(_erf_few(x), _erf(x), equal_nan=True)


def test_float32_sqrt_rounds_as_the_float64_one():
    # sqrt of float32 runs float32's own square root: bit for bit the float64 one rounded to
    # float32 (double rounding cannot change a square root), on whole binades, subnormals,
    # negatives, zeros, infinities and NaN payloads; 0-dim inputs stay tensors.
    parts = [np.arange(*np.array([1.0, 4.0], np.float32).view(np.uint32), dtype=np.uint32)]
    parts += [np.arange(0, 1 << 20, dtype=np.uint32), np.array([0x80000000, 0x80000001, 0xBF800000, 0x7F800000,
                                                                  0xFF800000, 0x7FC00001, 0xFFC12345, 0x7F7FFFFF],
                                                                 np.uint32)]
    x = np.concatenate(parts).view(np.float32)
    with np.errstate(invalid="ignore"):
        expected = np.sqrt(x.astype(np.float64)).astype(np.float32)
    got = tm.sqrt(tm.tensor(x)).numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
    assert tm.sqrt(tm.tensor(2.0)).shape == () and tm.tensor([4.0]).sqrt_().tolist() == [2.0]
    assert tm.sqrt(tm.tensor([-0.0, 0.25])).tolist() == [-0.0, 0.5]
    assert math.copysign(1, tm.tensor(-0.0).sqrt().item()) == -1

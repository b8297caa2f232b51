"""``torch.special``'s Bessel functions (``i0``, ``special.i1``, ``i0e``, ``i1e``,
``modified_bessel_i0`` / ``i1``) and ``spherical_bessel_j0``: PyTorch's bits on random inputs of
every range and dtype (``@pytest.mark.torch``), literal values, dtypes, errors and gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensormodes as tm

from .torch_oracle import assert_same_outcome

inf, nan = math.inf, math.nan

_BESSEL = ("i0", "special.i1", "special.i0e", "special.i1e", "special.modified_bessel_i0",
           "special.modified_bessel_i1", "special.modified_bessel_k0", "special.modified_bessel_k1",
           "special.scaled_modified_bessel_k0", "special.scaled_modified_bessel_k1")
_EDGES = [0.0, -0.0, inf, -inf, nan, 8.0, -8.0, 1e-30, 1e-45, 1e-310, 88.0, 89.0, 90.0, 700.0, 709.9, 710.0,
          1000.0, 3e38, -3e38]


def _function(library, name: str):  # "special.i1" -> library.special.i1
    for part in name.split("."):
        library = getattr(library, part)
    return library


def _bits(values: np.ndarray) -> np.ndarray:
    """Bit patterns, every NaN one pattern (PyTorch's NaN signs are not compared)."""
    values = np.where(np.isnan(values), np.float64(nan).astype(values.dtype), values)
    return values.view(np.uint64 if values.dtype == np.float64 else np.uint32)


@pytest.mark.torch
@pytest.mark.parametrize("name", _BESSEL)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bessel_functions_are_torchs_bit_for_bit(name, dtype):
    # Cephes' series in the tensor's type with fused steps, and glibc's exp / expf / log / logf: every
    # element PyTorch's (the series in float64 rounded to float32 missed on ~55 % of float32 inputs).
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.uniform(-8, 8, 20000), rng.uniform(-100, 100, 10000), rng.uniform(0, 2, 10000),
                             rng.uniform(-800, 800, 5000), rng.uniform(-1e-3, 1e-3, 2000), _EDGES]).astype(dtype)
    ours = _function(tm, name)(tm.tensor(values)).numpy()
    theirs = _function(torch, name)(torch.tensor(values)).numpy()
    different = np.flatnonzero(_bits(ours) != _bits(theirs))
    assert different.size == 0, (values[different[:5]], ours[different[:5]], theirs[different[:5]])


@pytest.mark.torch
@pytest.mark.parametrize("name", _BESSEL + ("special.spherical_bessel_j0", "special.bessel_j0", "special.bessel_y1",
                                  "special.airy_ai"))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int64", "bool", "complex64", "float32"])
def test_bessel_dtypes_and_errors_match_torch(name, dtype):
    # Half types compute in float and round (or raise, for the modified_bessel family), integers
    # give float32, complex raises PyTorch's NotImplementedError naming its kernel.
    assert_same_outcome(f"L.{name}(L.tensor([0.0, 1.0, -2.5, 9.0]).to(L.{dtype}))")


@pytest.mark.torch
@pytest.mark.parametrize("name", _BESSEL + ("special.spherical_bessel_j0",))
def test_bessel_shapes_scalars_and_out_match_torch(name):
    assert_same_outcome(f"L.{name}(L.tensor(2.5, dtype=L.float64))")
    assert_same_outcome(f"L.{name}(L.ones(0, 3))")
    assert_same_outcome(f"L.{name}(L.tensor([[1.0, -3.0]]), out=L.empty(1, 2))")


@pytest.mark.torch
@pytest.mark.parametrize("name", ["special.i0e", "special.i1e", "special.modified_bessel_i0",
                                  "special.spherical_bessel_j0", "special.scaled_modified_bessel_k1"])
def test_bessel_gradients_match_torch(name):
    # i0e and i1e have PyTorch's formulas (i1e's limit 0.5 at 0); the others record no gradient.
    x = "(x := L.tensor([0.0, 1e-20, -0.5, 3.0, -12.0], dtype=L.float64, requires_grad=True))"
    assert_same_outcome(f"L.{name}({x}).requires_grad")
    if name.endswith("e"):
        assert_same_outcome(f"L.autograd.grad(L.{name}({x}).sum(), x)[0]")


@pytest.mark.torch
@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"])
def test_bessel_j_and_y_are_torchs_bit_for_bit(name):
    # float64 everywhere; float32 below 5 (beyond, PyTorch's sinf / cosf round as ours but now and then;
    # Airy's Ai calls them below -2.09 only)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    for dtype, high in (("float64", 80.0), ("float32", 5.0)):
        values = np.concatenate([rng.uniform(-high, high, 20000), rng.uniform(0, 1e-4, 1000), _EDGES]).astype(dtype)
        if dtype == "float32":
            values = values[(values >= -2.09) if name == "airy_ai" else (np.absolute(values) <= 5)]
        ours = getattr(tm.special, name)(tm.tensor(values)).numpy()
        theirs = getattr(torch.special, name)(torch.tensor(values)).numpy()
        different = np.flatnonzero(_bits(ours) != _bits(theirs))
        assert different.size == 0, (dtype, values[different[:5]], ours[different[:5]], theirs[different[:5]])


def test_bessel_j_and_y_values():
    x = tm.tensor([0.0, 1.0, -1.0, 6.0], dtype=tm.float64)
    assert tm.special.bessel_j0(x).tolist() == [1.0, 0.7651976865579665, 0.7651976865579665, 0.15064520026735478]
    y1 = tm.special.bessel_y1(x).tolist()
    assert y1[0] == -inf and math.isnan(y1[2]) and y1[1] == -0.7812128213002888


def test_i0_and_i1_values_are_cephes():
    # Literal PyTorch values (the power series gives I0(1) = ...082 too, but I1(1) = ...850).
    x = tm.tensor([0.0, 1.0, -1.0, 8.0, 20.0], dtype=tm.float64)
    assert tm.i0(x).tolist() == [1.0, 1.2660658777520082, 1.2660658777520082, 427.56411572180474,
                                 43558282.559553534]
    assert tm.special.i1(x).tolist() == [0.0, 0.5651591039924851, -0.5651591039924851, 399.8731367825599,
                                         42454973.385127775]
    assert tm.i0(tm.tensor([1e-8], dtype=tm.float64)).item() == 1 - 2 ** -52  # the fit's, not 1


def test_float32_evaluates_in_float():
    # Float coefficients and float arithmetic: 1 ulp from the float64 value rounded.
    assert tm.i0(tm.tensor([1.5])).item() == 1.6467232704162598
    assert tm.special.i1e(tm.tensor([-3.0])).item() == -0.1968267261981964
    assert tm.special.i0e(tm.tensor([1, 2])).dtype == tm.float32


def test_scaled_bessel_limits():
    x = tm.tensor([inf, -inf, nan, 0.0, -0.0], dtype=tm.float64)
    assert tm.special.i0e(x)[:2].tolist() == [0.0, 0.0]
    assert math.isnan(tm.special.i0e(x)[2].item())
    i1e = tm.special.i1e(x).tolist()
    assert i1e[:2] == [0.0, -0.0] and math.isnan(i1e[2])
    assert [math.copysign(1, v) for v in i1e[3:]] == [1.0, 1.0]  # +0 at -0, as PyTorch


def test_modified_bessel_has_no_half_types_and_no_gradient():
    with pytest.raises(NotImplementedError, match="\"modified_bessel_i0_cpu\" not implemented for 'Half'"):
        tm.special.modified_bessel_i0(tm.ones(2, dtype=tm.float16))
    x = tm.tensor([1.0], requires_grad=True)
    assert not tm.special.modified_bessel_i1(x).requires_grad
    assert not tm.special.spherical_bessel_j0(x).requires_grad


def test_i1e_gradient_at_zero_is_one_half():
    x = tm.tensor([0.0, 2.0], dtype=tm.float64, requires_grad=True)
    (g,) = tm.autograd.grad(tm.special.i1e(x).sum(), x)
    assert g[0].item() == 0.5
    assert g[1].item() == pytest.approx(-0.014395611319735546, rel=1e-15)  # i0e(2) - i1e(2) (1 + 1/2)


def test_spherical_bessel_j0_values():
    x = tm.tensor([0.0, 0.25, -3.0, inf, nan], dtype=tm.float64)
    got = tm.special.spherical_bessel_j0(x).tolist()
    assert got[:4] == [1.0, math.sin(0.25) / 0.25, math.sin(3.0) / 3.0, 0.0] and math.isnan(got[4])


def test_bessel_k_values():
    x = tm.tensor([0.0, -1.0, 1.0, 2.0, 3.0, 800.0], dtype=tm.float64)
    assert tm.special.modified_bessel_k0(x).tolist()[:2] == [inf, pytest.approx(nan, nan_ok=True)]
    assert tm.special.modified_bessel_k0(x).tolist()[2:] == [0.4210244382407082, 0.1138938727495334,
                                                             0.03473950438627925, 0.0]
    assert tm.special.scaled_modified_bessel_k1(x).tolist()[2:] == [1.636153486263258, 1.0334768470686888,
                                                                    0.806563480128787, 0.04433210911141211]
    assert tm.special.modified_bessel_k1(tm.tensor([1.0])).item() == 0.6019073128700256  # float's steps, logf


def test_log_of_float_is_glibcs():
    from tensormodes._ops._cephes import log_of
    x = np.array([0.1, 3.0, 1e-40, 1.0, 0.0, -1.0, 3e38], np.float32)
    got = log_of(x)
    assert got[:5].tolist() == [-2.3025851249694824, 1.0986123085021973, -92.10340881347656, 0.0, -inf]
    assert math.isnan(got[5]) and got[6] == np.float32(88.59684753417969)


def test_expf_is_glibcs():
    # glibc's expf on values where NumPy's float32 exp (or float32(exp(double))) differs.
    from tensormodes._ops._cephes import exp_of
    x = np.array([1.0, 0.5, 88.0, 88.8, -103.0, -104.0, 20.25], np.float32)
    assert exp_of(x).tolist() == [2.7182817459106445, 1.6487212181091309, 1.6516362661361307e+38, inf,
                                  1.401298464324817e-45, 0.0, 622964416.0]


# -- orthogonal polynomials -----------------------------------------------------------------------

_POLYNOMIALS = tuple(f"{shift}chebyshev_polynomial_{kind}" for shift in ("", "shifted_") for kind in "tuvw") + (
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")


def _polynomial_operands(dtype: str, trigonometric: bool):
    """x and n of every kind (NaN x aside: PyTorch's loops return an uninitialised value for it)."""
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-1.2, 1.2, 6000), rng.uniform(-5, 5, 2000),
                        [0.0, -0.0, 1.0, -1.0, 0.5, inf, -inf, 1e-20] * 4]).astype(dtype)
    n = rng.integers(-2, 30 if trigonometric else 5, x.size).astype(dtype)
    n[-32:] = [0, 1, 2, 3, 7, 9, 10, 100] * 4 if trigonometric else [0, 1, 2, 3, 4, -1, 3, 2] * 4
    n[:100] = [nan, inf, -inf, 2.0 ** 70] * 25  # static_cast<int64_t>: the lowest int64, degree < 0
    if trigonometric:
        n[100:1000] = rng.integers(0, 200, 900)  # Chebyshev's closed forms in acos(t) beyond degree 4 ... 8
    return x, n


@pytest.mark.torch
@pytest.mark.parametrize("name", _POLYNOMIALS)
def test_polynomials_are_torchs_bit_for_bit(name):
    # float64 everywhere (the recurrences fused as PyTorch's build fuses them; the closed forms with
    # glibc's acos / cos / sin); float32 on the recurrences (Hermite's always: it has no closed form).
    torch = pytest.importorskip("torch")
    for dtype in ("float64", "float32"):
        closed_forms = name.startswith(("chebyshev", "shifted"))
        x, n = _polynomial_operands(dtype, trigonometric=dtype == "float64" or not closed_forms)
        ours = getattr(tm.special, name)(tm.tensor(x), tm.tensor(n)).numpy()
        theirs = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
        different = np.flatnonzero(_bits(ours) != _bits(theirs))
        assert different.size == 0, (dtype, x[different[:5]], n[different[:5]], ours[different[:5]],
                                     theirs[different[:5]])


@pytest.mark.torch
def test_float32_closed_forms_are_within_glibcs_acosf():
    # PyTorch's float kernels call acosf, cosf, sinf: ours take float's rounding of the double functions,
    # which differs from glibc's acosf in the last bit now and then; n * acos(x) carries it n-fold.
    torch = pytest.importorskip("torch")
    x = np.linspace(-0.99, 0.99, 2001, dtype=np.float32)
    ours = tm.special.chebyshev_polynomial_t(tm.tensor(x), 150).numpy()
    theirs = torch.special.chebyshev_polynomial_t(torch.tensor(x), 150).numpy()
    np.testing.assert_allclose(ours, theirs, atol=2e-4)


@pytest.mark.torch
@pytest.mark.parametrize("name", _POLYNOMIALS)
@pytest.mark.parametrize("call", [
    "(L.tensor([0.5, -1.5, 2.0]), 3)", "(0.5, L.tensor([0, 3, 11]))", "(L.tensor([1, 2]), 3.5)",
    "(L.tensor([[0.25], [0.75]], dtype=L.float64), L.tensor([1, 4, 9]))", "(L.ones(2, dtype=L.float16), 2)",
    "(L.ones(2, dtype=L.complex64), 2)", "(2.0, 3)", "(L.ones(2, 3), L.ones(3, 2))", "(L.ones(0), 3)",
    "(L.tensor([0.3]), L.tensor([2.0]), out=L.empty(1))", "(L.tensor(0.3, requires_grad=True), 4).requires_grad",
])
def test_polynomial_overloads_dtypes_and_errors_match_torch(name, call):
    assert_same_outcome(f"L.special.{name}{call}")


def test_polynomial_values():
    x = tm.tensor([0.5, 2.0, -1.0, 1.0], dtype=tm.float64)
    assert tm.special.chebyshev_polynomial_t(x, 3).tolist() == [-1.0, 26.0, -1.0, 1.0]
    assert tm.special.chebyshev_polynomial_u(x, 2).tolist() == [0.0, 15.0, 3.0, 3.0]
    assert tm.special.hermite_polynomial_h(x, 3).tolist() == [-5.0, 40.0, 4.0, -4.0]
    assert tm.special.hermite_polynomial_he(x, 3).tolist() == [-1.375, 2.0, 2.0, -2.0]
    assert tm.special.legendre_polynomial_p(x, 2).tolist() == [-0.125, 5.5, 1.0, 1.0]
    assert tm.special.laguerre_polynomial_l(x, 2).tolist() == [0.125, -1.0, 3.5, -0.5]
    assert tm.special.shifted_chebyshev_polynomial_t(tm.tensor([0.0, 1.0, 0.75]), 2).tolist() == [1.0, 1.0, -0.5]
    assert tm.special.hermite_polynomial_h(tm.tensor([0.5]), 129).isnan().item()  # beyond float's limit, 128
    assert tm.special.legendre_polynomial_p(x, -1).tolist() == [0.0] * 4
    assert tm.special.chebyshev_polynomial_t(x, float("nan")).tolist() == [0.0] * 4


# -- entr, ndtr, xlog1py, multigammaln, round ---------------------------------------------------

@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.special.entr(L.tensor([0.0, -0.0, 0.5, 2.0, -1.0, inf, -inf, nan, 1e-30], dtype=L.float64))",
    "L.special.entr(L.tensor([0.0, 0.5, 2.0, -1.0, 3.0]).to(L.float16))",
    "L.special.entr(L.tensor([0.0, 0.5, 2.0, -1.0, 3.0]).to(L.bfloat16))",
    "L.special.entr(L.tensor([0, 1, 2]))", "L.special.entr(L.tensor([1j]))",
    "L.autograd.grad(L.special.entr(x := L.tensor([0.5, 2.0], requires_grad=True)).sum(), x)[0]",
    "L.special.entr(L.tensor([0.5], requires_grad=True)).grad_fn.name()",
    "L.special.ndtr(L.tensor([0.0, 1.0, -3.0, 40.0, -40.0, inf, -inf, nan], dtype=L.float64))",
    "L.special.ndtr(L.tensor([0.0, 1.0, -3.0, 4.5]))", "L.special.ndtr(L.tensor([0, 1, -2]))",
    "L.special.ndtr(L.tensor([0.0, 1.0, -3.0]).to(L.float16))", "L.special.ndtr(L.tensor([1j]))",
    "L.autograd.grad(L.special.ndtr(x := L.tensor([0.5, -2.0], requires_grad=True)).sum(), x)[0]",
    "L.special.ndtr(L.tensor([0.5], requires_grad=True)).grad_fn.name()",
    "L.special.xlog1py(L.tensor([0.0, 0.0, 2.0, 3.0, 0.0]), L.tensor([-1.0, nan, 0.5, -2.0, -3.0]))",
    "L.special.xlog1py(2.0, L.tensor([0.5, 1.0]))", "L.special.xlog1py(L.tensor([0.5, 1.0]), 3)",
    "L.special.xlog1py(L.tensor([1, 2]), L.tensor([3, 4]))", "L.special.xlog1py(2.0, 3.0)",
    "L.special.xlog1py(L.tensor([1.0, 0.0], dtype=L.float16), L.tensor([3.0, -2.0], dtype=L.float16))",
    "L.autograd.grad(L.special.xlog1py(x := L.tensor([0.0, 2.0], requires_grad=True), "
    "y := L.tensor([-1.0, 0.5], requires_grad=True)).sum(), (x, y))",
    "L.special.multigammaln(L.tensor([2.5, 3.0, 7.25]), 3)", "L.special.multigammaln(L.tensor([3, 4]), 2)",
    "L.special.multigammaln(L.tensor([True]), 2)", "L.special.multigammaln(L.tensor([3.0]), 0)",
    "L.autograd.grad(L.special.multigammaln(x := L.tensor([2.5, 3.0], requires_grad=True), 2).sum(), x)[0]",
    "L.special.multigammaln(L.tensor([2.5], requires_grad=True), 2).grad_fn.name()",
    "L.tensor([3.0, 4.0]).mvlgamma_(2)", "L.tensor([3, 4]).mvlgamma_(2)",
    "L.mvlgamma(L.tensor([3.0, 4.0]), 2, out=L.empty(2, dtype=L.long))",
    "L.special.round(L.tensor([2.5, -0.25, 1.26]), decimals=1)", "L.special.round(L.tensor([3]))",
    "L.special.round(L.tensor([2.5], requires_grad=True)).grad_fn.name()",
])
def test_elementwise_functions_match_torch(expression):
    assert_same_outcome(expression, rtol=1.3e-6 if "multigammaln" in expression else 0.0)


def test_elementwise_function_values():
    assert tm.special.entr(tm.tensor([0.0, 0.5, -1.0], dtype=tm.float64)).tolist() == [0.0, 0.34657359027997264, -inf]
    assert tm.special.ndtr(tm.tensor([0.0, 1.0], dtype=tm.float64)).tolist() == [0.5, 0.841344746068543]
    assert tm.special.xlog1py(tm.tensor([0.0, 2.0]), tm.tensor([-1.0, 0.5])).tolist() == [0.0, 0.8109301924705505]
    assert tm.special.multigammaln(tm.tensor([2.5, 3.0]), 2).tolist() == [0.8570477962493896, 1.5501949787139893]
    with pytest.raises(NotImplementedError, match="\"round_vml_cpu\" not implemented for 'Long'"):
        tm.special.round(tm.tensor([3]))


@pytest.mark.torch
def test_zeta_is_torchs_bit_for_bit_in_float64():
    # Cephes' sum and Euler-Maclaurin tail in double with the C library's pow (float32: its first
    # term is float's powf, which ours rounds from double: ~3 in 10,000 differ in the last bit).
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(0.5, 10, 5000), rng.integers(1, 6, 1000), [1, 2, inf, nan, 2]])
    q = np.concatenate([rng.uniform(-5, 20, 5000), rng.uniform(-4, 4, 1000), [1, -1, 2, 3, inf]])
    ours = tm.special.zeta(tm.tensor(x), tm.tensor(q)).numpy()
    theirs = torch.special.zeta(torch.tensor(x), torch.tensor(q)).numpy()
    assert np.flatnonzero(_bits(ours) != _bits(theirs)).size == 0


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.special.zeta(L.tensor([2.0, 1.0, 0.5, 3.0, 2.0]), L.tensor([1.0, 1.0, 1.0, -2.0, -1.5]))",
    "L.special.zeta(2.0, L.tensor([1.0, 2.5]))", "L.special.zeta(L.tensor([2, 3]), 1)", "L.special.zeta(2.0, 3.0)",
    "L.special.zeta(L.ones(2, dtype=L.float16), L.ones(2, dtype=L.float16))", "L.special.zeta(L.ones(0), 2.0)",
    "L.autograd.grad(L.special.zeta(L.tensor([2.0, 3.0]), q := L.tensor([1.5, 2.0], requires_grad=True)).sum(), q)[0]",
    "L.autograd.grad(L.special.zeta(x := L.tensor([2.0, 3.0], requires_grad=True), 1.5).sum(), x)[0]",
    "L.special.zeta(L.tensor([2.0], requires_grad=True), 1.5).grad_fn.name()",
])
def test_zeta_matches_torch(expression):
    assert_same_outcome(expression, rtol=1.3e-6)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["special.xlog1py", "special.zeta"])
@pytest.mark.parametrize("args", ["x, 1.5", "1.5, x", "x, x"])
def test_scalar_overloads_name_their_nodes(name, args):
    # self_scalar / other_scalar: SpecialZetaBackward1 / 2, as PyTorch numbers its overloads' nodes
    assert_same_outcome(f"(lambda x: L.{name}({args}))(L.tensor([2.0], requires_grad=True)).grad_fn.name()")


@pytest.mark.torch
@pytest.mark.parametrize("name", ["ndtri", "erfcx", "log_ndtr"])
def test_normal_functions_are_torchs_bit_for_bit_in_float64(name):
    # and ndtri in float32 too (C's double log inside its float kernel); float32's erfcx beyond 50 and
    # log_ndtr above -1 call glibc's erfcf / log1pf: within an ulp (checked in the next test)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(17)
    if name == "ndtri":
        data = np.concatenate([rng.uniform(0, 1, 20000), np.exp(rng.uniform(-700, 0, 5000)), [0, 1, -0.1, 1.5, nan]])
    else:
        data = np.concatenate([rng.uniform(-30, 60, 20000), rng.uniform(-8, 8, 5000), rng.uniform(40, 1e9, 1000),
                               [0, -0.0, inf, -inf, nan, 50, -6.1, -26.7, 5e7, 6e7, -1.0]])
    for dtype in ("float64", "float32") if name == "ndtri" else ("float64",):
        values = data.astype(dtype)
        ours = getattr(tm.special, name)(tm.tensor(values)).numpy()
        theirs = getattr(torch.special, name)(torch.tensor(values)).numpy()
        different = np.flatnonzero(_bits(ours) != _bits(theirs))
        assert different.size == 0, (dtype, values[different[:5]], ours[different[:5]], theirs[different[:5]])


@pytest.mark.torch
@pytest.mark.parametrize("name", ["erfcx", "log_ndtr"])
@pytest.mark.parametrize("call", [
    "(L.tensor([-30.0, -3.0, -0.5, 0.0, 2.0, 55.0, 1e8, inf, -inf, nan]))", "(L.tensor([0, 1, -2]))",
    "(L.ones(2, dtype=L.float16))", "(L.ones(2, dtype=L.complex64))", "(L.tensor(0.5, dtype=L.float64))",
    "(L.tensor([0.5, -2.0]), out=L.empty(2))",
    "(L.tensor([0.5, -2.0], dtype=L.float64, requires_grad=True)).grad_fn.name()",
])
def test_normal_functions_match_torch(name, call):
    assert_same_outcome(f"L.special.{name}{call}", rtol=1.3e-6)


@pytest.mark.torch
@pytest.mark.parametrize("name,values", [("erfcx", [0.5, -2.0, 60.0]), ("ndtri", [0.3, 0.01, 0.999]),
                                         ("log_ndtr", [-3.0, 0.5, -40.0])])
def test_normal_function_gradients_match_torch(name, values):
    # PyTorch's formulas (their exp is the tensor op's: an ulp apart from time to time)
    assert_same_outcome(f"L.autograd.grad(L.special.{name}(x := L.tensor({values}, dtype=L.float64, "
                        "requires_grad=True)).sum(), x)[0]", rtol=1e-15)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_is_near_torchs(name):
    # double series / continued fraction against Cephes' (asymptotic for large arguments): within 2e-9
    # relative where the arguments reach the hundreds (the prefactor's logarithms), and PyTorch's edges
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(19)
    a = np.concatenate([rng.uniform(0, 10, 4000), np.exp(rng.uniform(-5, 7, 1000)),
                        [0.0, 1.0, 2.0, -1.0, inf, 3.0, 0.5, 1e-3, 100.0, 0.0, 0.0, inf, 2.0]])
    x = np.concatenate([rng.uniform(0, 20, 4000), np.exp(rng.uniform(-5, 7, 1000)),
                        [1.0, 0.0, inf, 1.0, 1.0, nan, 0.25, 1e-5, 101.0, 0.0, -1.0, inf, -inf]])
    ours = getattr(tm.special, name)(tm.tensor(a), tm.tensor(x)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=2e-9, atol=1e-300, equal_nan=True)
    small = (a < 20) & (x < 20)
    np.testing.assert_allclose(ours[small], theirs[small], rtol=1e-12, atol=2e-15, equal_nan=True)  # (1 - P: absolute)


@pytest.mark.torch
def test_incomplete_gamma_of_huge_arguments_is_near_torchs():
    # Temme's uniform expansion from a = 1e6 on (the sums' logarithms would lose ~a ulps), as Cephes'
    torch = pytest.importorskip("torch")
    a = np.array([1e5, 1e6, 1e7, 1e8, 1e9, 5e9, 1e6, 1e7, 1e12, 1e30])
    x = a + np.sqrt(a) * np.array([0.7] * 6 + [-3, 5, 1, 0])
    for name in ("igamma", "igammac"):
        ours = getattr(tm, name)(tm.tensor(a), tm.tensor(x)).numpy()
        np.testing.assert_allclose(ours, getattr(torch, name)(torch.tensor(a), torch.tensor(x)).numpy(), rtol=3e-11)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.special.gammainc(L.tensor([1, 2]), L.tensor([1, 2]))", "L.special.gammainc(L.tensor([1.]), 2.0)",
    "L.special.gammaincc(L.tensor([1.5], dtype=L.float16), L.tensor([2.], dtype=L.float16))",
    "L.special.gammainc(L.tensor([1.]), L.tensor([2], dtype=L.int64))", "L.tensor([2.0]).igamma_(L.tensor([1.0]))",
    "L.tensor([2.0]).igammac(L.tensor([1.0]))", "L.special.gammainc(L.ones(2, dtype=L.complex64), L.ones(2))",
    "L.special.gammainc(L.tensor([2.0], requires_grad=True), L.tensor([1.0])).grad_fn.name()",
    "L.special.gammaincc(L.tensor([2.0], requires_grad=True), L.tensor([1.0])).grad_fn.name()",
    "L.autograd.grad(L.special.gammaincc(L.tensor([2.0, 3.0]), y := L.tensor([1.5, 4.0], requires_grad=True)).sum(),"
    " y)",
    "L.autograd.grad(L.special.gammainc(x := L.tensor([2.0], requires_grad=True), L.tensor([1.0])).sum(), x)",
])
def test_incomplete_gamma_matches_torch(expression):
    assert_same_outcome(expression, rtol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [  # the fuzzer's cases
    "L.special.entr(L.tensor(1.0345937013626099, dtype=L.float32))", "L.special.log_ndtr(L.tensor(0, dtype=L.uint8))",
    "L.special.i0e(L.tensor(2.0))", "L.special.multigammaln(L.tensor([1 + 0j]), 2)",
    "L.special.ndtr(L.tensor([1.7294921875, -1.3876953125, -1.0439453125, 0.77880859375], dtype=L.float16))",
    "L.special.xlog1py(L.tensor(5), L.tensor([[-9223372036854775808, 0, 5], [-1, 1, 3]]))",
    "L.special.zeta(L.tensor([0.5, 1e+30, 2.4278130406603573], dtype=L.float64), "
    "L.tensor([[1.144031513077966, -3.2947793854472485, 65504.0], [1.48, 3.95, -0.1399626011203936]], "
    "dtype=L.float64))",
])
def test_fuzzed_cases_match_torch(expression):
    assert_same_outcome(expression)


@pytest.mark.torch
@pytest.mark.parametrize("extra", [
    "L.special.gammaincc(L.tensor(nan, dtype=L.float64), L.tensor([[False, True, False]]))",
    "L.special.zeta(L.tensor([-1e30, 5.14, 2.04, 1e-40, -1e30]), L.tensor([-inf, -1.0, 1.43, 1.49, -2.0]))",
    "L.igamma(L.tensor([0., 0., 0., 1., inf, inf, 2., nan, 1., nan], dtype=L.float64), "
    "L.tensor([1., 0., nan, 0., 1., inf, inf, 0., nan, inf], dtype=L.float64))",
    "L.igammac(L.tensor([0., 0., 0., 1., inf, inf, 2., nan, 1., nan], dtype=L.float64), "
    "L.tensor([1., 0., nan, 0., 1., inf, inf, 0., nan, inf], dtype=L.float64))",
])
def test_fuzzed_edge_orders_match_torch(extra):
    # PyTorch's tests in its kernels' order (x = 0 before a NaN a; x < 1 before a pole of q)
    assert_same_outcome(extra)

"""float16 and bfloat16 arithmetic as PyTorch 2.13 computes it, bit for bit (issue 27, section 2).

PyTorch reads a Python number (or any 0-dim tensor) operand of a half-type op in one of two ways:
rounded to the tensor's dtype, as its TensorIterator casts every operand to the common dtype
(``+ - rsub alpha fmod remainder pow xlogy`` and comparisons), or straight in float32, where the
kernel reads it itself (``x * s``, ``x / s``, ``x // s``, ``lerp``'s weight). ``s / x`` is Python
code of its own, ``x.reciprocal() * s``. It computes in float32 ("opmath") and rounds once -- in
its 32-element vector steps: the elements left at the end of each innermost run go through the
kernel's scalar code, whose half-type arithmetic rounds every step (``add`` with ``alpha``,
``rsqrt``). The expected results are PyTorch's, as bit patterns (``view(int16)``), so these tests
run without torch; the ``torch``-marked sweeps compare random inputs with PyTorch itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensormodes as tm

X6 = [-2.5, -0.3, 0.1, 1.7, 3.3, 40.2]
P6 = [0.3, 0.9, 1.7, 2.6, 3.3, 7.9]
# 40 elements: a vector step of 32 and a scalar tail of 8
X40 = [15.819, -14.895, -30.304, -14.113, 34.497, 23.173, -39.198, -24.085, -16.551, 35.473, -7.725, -25.455,
    28.831, 32.566, -15.86, -11.584, 20.284, -18.533, 23.154, -3.933, 11.765, 31.613, -37.655, -12.407,
    21.63, 8.097, -31.095, 31.213, 37.606, -38.895, -5.146, -12.093, 31.996, -36.68, 28.403, -22.123,
    -32.849, -2.834, -16.47, 4.76]
Y40 = [-39.561, 39.574, -7.752, 11.784, -15.086, 23.428, 27.154, 36.028, 9.801, -25.795, -28.777, -35.505,
    11.683, 33.574, -38.374, -4.437, 32.441, 22.892, -32.385, 3.428, 39.295, -8.627, 14.708, -16.648, -3.609,
    -35.78, 8.89, 19.004, -6.972, -29.193, 9.797, 20.844, 4.496, 8.458, 17.888, -21.801, 13.064, 1.425, 5.52,
    1.462]
P40 = [6.28, 2.057, 8.396, 4.569, 6.654, 7.693, 0.338, 8.761, 0.123, 5.883, 2.494, 6.04, 8.816, 1.777, 8.981,
    7.028, 3.462, 7.709, 1.94, 4.587, 4.159, 2.173, 8.757, 6.482, 8.005, 4.058, 6.677, 5.042, 7.242, 4.907,
    2.64, 2.159, 1.82, 5.722, 0.476, 4.983, 2.023, 4.128, 6.045, 7.377]


def bits(t) -> str:
    """A half-type tensor's elements as 16-bit patterns, in hex."""
    return " ".join(f"{v & 0xffff:04x}" for v in t.view(tm.int16).flatten().tolist())


def _operands(library, dtype_name: str, size: int) -> dict:
    xs, ys, ps = (X6, P6, P6) if size == 6 else (X40, Y40, P40)
    dtype = getattr(library, dtype_name)
    return {"L": library, "x": library.tensor(xs, dtype=dtype), "y": library.tensor(ys, dtype=dtype),
            "p": library.tensor(ps, dtype=dtype)}


# (dtype, expression over L, x, y (any) and p (positive), size of the operands, PyTorch's bits)
PYTORCH_BITS = [
    ('float16', 'x + 0.7', 6, 'bf33 3667 3a67 40cd 4400 511c'),
    ('float16', '0.7 + x', 6, 'bf33 3667 3a67 40cd 4400 511c'),
    ('float16', 'x - 100.3', 6, 'd66d d64a d643 d62a d610 d384'),
    ('float16', '100.3 - x', 6, '566d 564a 5643 562a 5610 5384'),
    ('float16', 'L.rsub(x, -2.055)', 6, '3720 bf05 c04f c382 c55b d148'),
    ('float16', 'x * 0.7', 6, 'bf00 b2b9 2c7b 3cc3 409f 4f08'),
    ('float16', '0.7 * x', 6, 'bf00 b2b9 2c7b 3cc3 409f 4f08'),
    ('float16', 'L.mul(0.7, x)', 6, 'bf00 b2b9 2c7b 3cc3 409f 4f09'),
    ('float16', 'x / 0.7', 6, 'c325 b6dc 3092 40dc 44b7 532d'),
    ('float16', '0.7 / x', 6, 'b47b c0aa 4700 3697 32c9 2476'),
    ('float16', 'L.div(0.7, x)', 6, 'b47b c0ab 4701 3697 32ca 2476'),
    ('float16', 'x // 0.7', 6, 'c400 bc00 0000 4000 4400 5320'),
    ('float16', '100.3 // x', 6, 'd120 dd3c 63d4 5360 4f80 4000'),
    ('float16', 'x % 0.7', 6, '34d0 3667 2e66 34cc 3800 346c'),
    ('float16', '0.7 % x', 6, 'bf33 b266 0e00 399a 399a 399a'),
    ('float16', 'L.fmod(x, -2.055)', 6, 'b720 b4cd 2e66 3ecd 3cfc 3c98'),
    ('float16', 'L.remainder(x, -2.055)', 6, 'b720 b4cd bfd2 b5ac ba78 bb40'),
    ('float16', 'p ** 0.7', 6, '36e3 3b6e 3dcd 3fcf 409d 4440'),
    ('float16', '0.7 ** x', 6, '40e0 3c74 3bb8 385d 34ef 000a'),
    ('float16', 'p ** -2.055', 6, '49ef 3cf8 3560 307e 2d81 2354'),
    ('float16', 'p ** 3', 6, '26ea 39d5 44ea 4c64 507f 5fb3'),
    ('float16', 'p ** -2', 6, '498e 3cf0 3589 30bc 2de0 241b'),
    ('float16', 'L.xlogy(x, p)', 6, '4205 280d 2acb 3e80 43e2 5531'),
    ('float16', 'L.xlogy(x, 2.5)', 6, 'c095 b466 2ddd 3e3c 420d 509b'),
    ('float16', 'L.xlogy(2.5, p)', 6, 'c205 b438 3d4f 40c7 41f9 452a'),
    ('float16', 'x * L.tensor(0.7)', 6, 'bf00 b2b9 2c7b 3cc3 409f 4f08'),
    ('float16', 'x / L.tensor(0.7, dtype=L.float64)', 6, 'c325 b6dc 3092 40dc 44b7 532d'),
    ('float16', "L.div(x, 0.7, rounding_mode='floor')", 6, 'c400 bc00 0000 4000 4400 5320'),
    ('float16', "L.div(x, 0.7, rounding_mode='trunc')", 6, 'c200 8000 0000 4000 4400 5320'),
    ('float16', 'L.lerp(x, p, 0.3)', 6, 'bea4 2bac 38a4 3fe1 429a 4fa0'),
    ('float16', 'L.add(x, y, alpha=0.7)', 40,
     'c9f1 4a67 d077 c5dc 4dfc 50f2 cd0b 3c9a c8d7 4c5a cef8 d24a 50a0 5302 d157 cb59 5160 c102 37cc be22 '
     '50e9 4e64 ced7 ce04 4cc6 cc3d ce38 5191 5017 d36b 3edc 4100 5065 cfb1 511e d0ac cdec bf58 ca4d 45c9'),
    ('float16', 'L.sub(x, 1.3, alpha=-2.055)', 40,
     '4c9f ca1d cee8 c9b8 50a5 4e76 d091 cd5a caf0 50c4 c50e cdb2 4fe0 5067 ca98 c875 4dbd cbee 4e75 bd0d '
     '4b38 5049 d060 c8de 4e13 4962 cf1b 503c 5108 d088 c0f3 c8b6 5055 d041 4fc5 ccdd cf8b b140 cae6 476e'),
    ('float16', 'L.rsub(x, y, alpha=3)', 40,
     'd570 5544 5532 52c4 d769 d1c3 5886 56c4 536e d822 c59a 511c d4ad d402 489a 4f94 cf1a 54e8 d65e 4b9d '
     '43f8 d677 57fb 4d25 d448 d382 5663 d4aa d77c 5578 4e4f 5324 d5b8 5768 d436 5192 56f9 48f6 52de ca69'),
    ('float16', 'L.rsqrt(p)', 40,
     '3662 3994 3585 377c 3634 35c5 3ee2 3568 41b4 3699 3911 3683 3564 3a00 3557 3609 384d 35c3 39be 3779 '
     '37d8 396d 3568 3649 35a7 37f1 3631 3720 35f2 3739 38ec 3972 39ed 36b0 3dcc 372b 399f 37e0 3682 35e4'),
    ('float16', 'p ** -0.5', 40,
     '3662 3994 3585 377c 3634 35c5 3ee2 3568 41b4 3699 3911 3683 3564 3a00 3557 3609 384d 35c3 39be 3779 '
     '37d8 396d 3568 3649 35a7 37f1 3631 3720 35f2 3739 38ec 3972 39ee 36b0 3dcc 372b 39a0 37e0 3682 35e4'),
    ('bfloat16', 'x + 0.7', 6, 'bfe6 3ecc 3f4d 401a 4080 4224'),
    ('bfloat16', '0.7 + x', 6, 'bfe6 3ecc 3f4d 401a 4080 4224'),
    ('bfloat16', 'x - 100.3', 6, 'c2ce c2ca c2c9 c2c6 c2c2 c271'),
    ('bfloat16', '100.3 - x', 6, '42ce 42ca 42c9 42c6 42c2 4271'),
    ('bfloat16', 'L.rsub(x, -2.055)', 6, '3ee0 bfe2 c00a c071 c0ac c229'),
    ('bfloat16', 'x * 0.7', 6, 'bfe0 be58 3d90 3f99 4014 41e1'),
    ('bfloat16', '0.7 * x', 6, 'bfe0 be58 3d90 3f99 4014 41e1'),
    ('bfloat16', 'L.mul(0.7, x)', 6, 'bfe0 be57 3d8f 3f98 4014 41e1'),
    ('bfloat16', 'x / 0.7', 6, 'c065 bedc 3e12 401c 4097 4266'),
    ('bfloat16', '0.7 / x', 6, 'be90 c015 40e0 3ed2 3e59 3c8f'),
    ('bfloat16', 'L.div(0.7, x)', 6, 'be8f c015 40e0 3ed2 3e59 3c8e'),
    ('bfloat16', 'x // 0.7', 6, 'c080 bf80 0000 4000 4080 4264'),
    ('bfloat16', '100.3 // x', 6, 'c224 c3a8 447b 426c 41f0 4000'),
    ('bfloat16', 'x % 0.7', 6, '3e98 3ecc 3dcd 3e9c 3f00 3eca'),
    ('bfloat16', '0.7 % x', 6, 'bfe6 be50 3dca 3f33 3f33 3f33'),
    ('bfloat16', 'L.fmod(x, -2.055)', 6, 'bee0 be9a 3dcd 3fda 3f9e 3f88'),
    ('bfloat16', 'L.remainder(x, -2.055)', 6, 'bee0 be9a bffb beb8 bf54 bf80'),
    ('bfloat16', 'p ** 0.7', 6, '3edd 3f6e 3fba 3ff9 4013 4088'),
    ('bfloat16', '0.7 ** x', 6, '401d 3f8f 3f77 3f0b 3e9d 3515'),
    ('bfloat16', 'p ** -2.055', 6, '413f 3fa0 3eab 3e0f 3daf 3c66'),
    ('bfloat16', 'p ** 3', 6, '3cdf 3f3a 409e 418b 420f 43f7'),
    ('bfloat16', 'p ** -2', 6, '4131 3f9e 3eb0 3e18 3dbc 3c83'),
    ('bfloat16', 'L.xlogy(x, p)', 6, '4040 3d04 3d5a 3fd0 407c 42a6'),
    ('bfloat16', 'L.xlogy(x, 2.5)', 6, 'c013 be8d 3dbc 3fc8 4042 4214'),
    ('bfloat16', 'L.xlogy(2.5, p)', 6, 'c040 be89 3faa 4018 403f 40a5'),
    ('bfloat16', 'x * L.tensor(0.7)', 6, 'bfe0 be58 3d90 3f99 4014 41e1'),
    ('bfloat16', 'x / L.tensor(0.7, dtype=L.float64)', 6, 'c065 bedc 3e12 401c 4097 4266'),
    ('bfloat16', "L.div(x, 0.7, rounding_mode='floor')", 6, 'c080 bf80 0000 4000 4080 4264'),
    ('bfloat16', "L.div(x, 0.7, rounding_mode='trunc')", 6, 'c040 8000 0000 4000 4080 4264'),
    ('bfloat16', 'L.lerp(x, p, 0.3)', 6, 'bfd4 3d72 3f15 3ffc 4053 41f4'),
    ('bfloat16', 'L.add(x, y, alpha=0.7)', 40,
     'c13d 414c c20f c0bc 41c0 421e c1a2 3f86 c11a 418c c1df c249 4214 4260 c22a c16b 422c c020 3ecd bfc6 '
     '421d 41cd c1dc c1c0 4199 c187 c1c7 4232 4203 c26e 3fda 4022 420d c1f7 4224 c215 c1bd bfea c14a 40b9'),
    ('bfloat16', 'L.sub(x, 1.3, alpha=-2.055)', 40,
     '4194 c143 c1dd c137 4215 41ce c212 c1ac c15d 4219 c0a1 c1b7 41fc 420d c153 c10e 41b7 c17d 41ce bfa2 '
     '4167 4209 c20c c11c 41c2 412d c1e4 4208 4221 c211 c01f c116 420b c208 41f8 c19c c1f1 be20 c15d 40ee'),
    ('bfloat16', 'L.rsub(x, y, alpha=3)', 40,
     'c2ae 42a8 42a6 4259 c2ed c238 4311 42d9 426d c304 c0b3 4224 c296 c280 4116 41f2 c1e2 429d c2cc 4174 '
     '4080 c2cf 4300 41a6 c289 c270 42cc c296 c2ef 42b0 41ca 4264 c2b7 42ed c286 4233 42de 411f 425c c14d'),
    ('bfloat16', 'L.rsqrt(p)', 40,
     '3ecc 3f32 3eb1 3ef0 3ec6 3eb9 3fdc 3ead 4036 3ed3 3f22 3ed0 3eac 3f40 3eab 3ec1 3f09 3eb8 3f38 3eef '
     '3efb 3f2e 3ead 3ec9 3eb5 3efe 3ec6 3ee4 3ebe 3ee7 3f1e 3f2e 3f3d 3ed6 3fb9 3ee5 3f34 3efc 3ed1 3ebc'),
]


def _cases():
    # (float16 times a Python number: the generated fast path leaves float16 to the kernel, which
    # reads the number in float32 as PyTorch does)
    for dtype, expression, size, expected in PYTORCH_BITS:
        yield pytest.param(dtype, expression, size, expected, id=f"{dtype}-{expression}-{size}")


@pytest.mark.parametrize("dtype, expression, size, expected", list(_cases()))
def test_half_arithmetic_rounds_as_pytorch(dtype, expression, size, expected):
    result = eval(expression, _operands(tm, dtype, size))
    assert result.dtype == getattr(tm, dtype)
    assert bits(result) == expected


def test_a_number_compares_with_a_half_tensor_after_rounding():
    # 0.7 rounds to bfloat16's 0.69921875 before the comparison, as in PyTorch
    x = tm.tensor([0.7], dtype=tm.bfloat16)
    assert (x == 0.7).item() and not (x < 0.7).item() and not (x > 0.7).item()
    assert tm.eq(tm.tensor([0.7], dtype=tm.float16), 0.7).item()


def test_a_number_beyond_the_half_range_becomes_an_infinity():
    y = tm.tensor([1.0], dtype=tm.float16)
    assert (y + 100000).item() == float("inf") and (1e6 - y).item() == float("inf")
    assert (y % 1e6).item() == 1.0 and (y // 1e6).item() == 0.0
    assert tm.isnan(1e6 % y).item() and tm.isnan(1e6 // y).item()  # inf % 1, inf // 1
    assert (tm.tensor([1.0], dtype=tm.bfloat16) + 100000).item() == 99840.0


def test_number_division_of_a_half_tensor_records_pytorchs_operations():
    x = tm.tensor([2.0], dtype=tm.bfloat16, requires_grad=True)
    y = 3 / x
    assert type(y.grad_fn).__name__ == "MulBackward0"
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "ReciprocalBackward0"
    # also in float32: 0.7 / x rounds as x.reciprocal() * 0.7, not as div(0.7, x)
    assert (0.7 / tm.tensor([2.9])).item() == 0.2413792908191681
    assert tm.div(0.7, tm.tensor([2.9])).item() == 0.24137930572032928


def test_the_kernel_reads_a_float16_operands_number_factor_in_float32():
    # the kernel itself (reached by in-place and autograd-free paths the fast path does not take)
    x = tm.tensor(X6, dtype=tm.float16)
    assert bits(x.clone().mul_(0.7)) == "bf00 b2b9 2c7b 3cc3 409f 4f08"
    assert bits(x.clone().div_(0.7)) == "c325 b6dc 3092 40dc 44b7 532d"


def test_formerly_open_half_type_bugs():
    # fmod / remainder round the number divisor to bfloat16 (0.69921875), as PyTorch
    assert tm.tensor([65536.0], dtype=tm.bfloat16).fmod(0.7).item() == 0.32421875
    assert tm.tensor([65536.0], dtype=tm.bfloat16).remainder(0.7).item() == 0.32421875
    # the divisor's gradient: a 0-dim float32 divisor is read in float32 by the half-type division
    y = tm.tensor(2.800405502319336, requires_grad=True)
    x = tm.tensor([1.609375, -1.791015625, 1.001953125], dtype=tm.float16)
    assert tm.autograd.grad(tm.div(x, y).sum(), y)[0].item() == -0.1046142578125



@pytest.mark.parametrize("dtype, expected", [
    ("float16", ("d7a0 5a80 d100 5490 5878 bc00", "d7b0 5a80 d120 5490 5878 c000",
                 "d7b0 d8c8 d950 4c40 5ba0 4700", "d7a0 d8c0 d948 4c40 5ba0 4700")),
    ("bfloat16", ("c2f4 4350 c220 4292 4310 bf80", "c2f6 434f c224 4292 430f c000",
                  "c2f6 c319 c32a 4188 4374 40e0", "c2f4 c318 c329 4188 4374 40e0"))])
def test_half_rounding_divisions_as_pytorch(dtype, expected):
    # tensor by tensor: trunc rounds the quotient first, floor runs c10's half-type steps (here all
    # in the scalar tail); by a number: both in float32
    d = getattr(tm, dtype)
    x = tm.tensor([-50.25, -62.5, -69.5, 7.3, 100.3, 2.9], dtype=d)
    y = tm.tensor([0.411, -0.3, 1.7, 0.1, 0.7, -2.055], dtype=d)
    results = (tm.div(x, y, rounding_mode="trunc"), tm.div(x, y, rounding_mode="floor"),
               tm.div(x, 0.411, rounding_mode="floor"), tm.div(x, 0.411, rounding_mode="trunc"))
    assert tuple(bits(r) for r in results) == expected


def test_the_gradient_of_a_number_divided_by_a_half_tensor():
    # DivBackward0 divides the (rounded) number by the divisor twice, as div does: not reciprocal * number
    x = tm.tensor([2.291015625, 1.5048828125, 1.720703125], dtype=tm.float16, requires_grad=True)
    tm.div(3, x).backward(tm.ones(3, dtype=tm.float16))
    assert bits(x.grad) == "b893 bd4c bc0d"


@pytest.mark.parametrize("dtype, expected", [
    ("float16", ("b35d c44b 585c 5d16", "bae0 c3e1 59a6 5ea3", "4e56", "4350 d3a7")),
    ("bfloat16", ("be71 c08a 430c 43a3", "bf5d c07c 4335 43d5", "41cc", "406b c276"))])
def test_half_products_round_as_pytorch(dtype, expected):
    # addmm scales and adds the float32 product, rounding once (not the rounded product); einsum
    # contracts pairwise from the left, rounding each pair's result, and sums out a dimension only
    # one operand has first
    d = getattr(tm, dtype)
    x = tm.tensor([[-2.5, -0.3, 0.1], [1.7, 3.3, 40.2]], dtype=d)
    w = tm.tensor([[0.3, 0.9], [1.7, 2.6], [3.3, 7.9]], dtype=d)
    bias = tm.tensor([0.7, -2.055], dtype=d)
    results = (tm.addmm(bias, x, w), tm.addmm(bias, x, w, beta=0.5, alpha=1.3),
               tm.einsum("i,i,i->", x[1], x[0], w[:, 1]), tm.einsum("ij,k->i", x, bias))
    assert tuple(bits(r) for r in results) == expected
    assert results[2].shape == ()


@pytest.mark.parametrize("dtype, expected", [
    ("float16", ("b513 a54e 409e bd79 3ba5 3a7c", "4200 c000 4167 be48 3ba5 3a7c")),
    ("bfloat16", ("bea5 bc9b 4014 bfaf 3f74 3f4f", "4040 c000 402d bfc9 3f74 3f4f"))])
def test_half_attention_computes_as_pytorchs_kernels(dtype, expected):
    # 4-D: the flash kernel (values times the rounded unnormalised weights, divided by their float32
    # sum); 3-D: the math path in float32, rounded once
    d = getattr(tm, dtype)
    q = tm.tensor([[[[0.5, -1.25], [2.0, 0.75], [-0.3, 1.1]]]], dtype=d)
    k = tm.tensor([[[[1.5, 0.25], [-0.5, 2.0], [0.8, -1.7]]]], dtype=d)
    v = tm.tensor([[[[3.0, -2.0], [0.7, 1.3], [-1.1, 0.4]]]], dtype=d)
    attention = tm.nn.functional.scaled_dot_product_attention
    results = attention(q, k, v), attention(q[0], k[0], v[0], is_causal=True)
    assert tuple(bits(r) for r in results) == expected
    assert all(r.dtype == d for r in results)


@pytest.mark.parametrize("dtype, expected", [("float16", ("33fa c6f8 44c8 9500 bd3a 3e10", "33fa 44c8 bd3a")),
                                             ("bfloat16", ("3e82 c0df 4099 bb80 bfa7 3fc2", "3e82 4099 bfa7"))])
def test_a_shared_matrix_gets_its_gradient_from_one_folded_product(dtype, expected):
    # PyTorch folds a batch times a matrix (or vector) into one product when the matrix requires grad:
    # its gradient sums the batch inside one float32 product, not a sum of rounded per-batch products
    d = getattr(tm, dtype)
    x = tm.tensor([[[0.53369140625, 1.8115234375, 1.1123046875], [-1.6845703125, -0.51025390625, -0.6767578125]],
                   [[1.9921875, 0.56884765625, -1.8603515625], [-1.759765625, 1.93359375, -0.95458984375]]], dtype=d)
    w = tm.tensor([[0.5, 1.1], [-1.2, 0.8], [-1.75, 0.3]], dtype=d, requires_grad=True)
    v = tm.tensor([0.5, -1.2, 1.7], dtype=d, requires_grad=True)
    g = tm.tensor([[[1.0, 0.5], [-0.25, 2.0]], [[0.75, -1.5], [1.25, 0.5]]], dtype=d)
    (x @ w).backward(g)
    (x @ v).backward(g[..., 0])
    assert (bits(w.grad), bits(v.grad)) == expected


@pytest.mark.parametrize("dtype, expected", [
    ("float16", ("545a 4f99 46b5 4ffa 4c35 4385 469c 481b 531b cf15 4ece cf1a",
                 "4dcd 4911 4079 4951 4c35 4385 469c 481b 49af c5aa 4572 c5ae",
                 "4c35 4385 469c 481b 4c35 4385 469c 481b 4537 ca66 4837 c97c")),
    ("bfloat16", ("428c 41f3 40d8 41ff 4187 4071 40d4 4103 4264 c1e2 41da c1e4",
                  "41bb 4122 4010 412a 4187 4071 40d4 4103 4136 c0b5 40ae c0b6",
                  "4187 4071 40d4 4103 4187 4071 40d4 4103 40a7 c14c 4107 c130"))])
def test_half_embedding_bags_round_as_pytorch(dtype, expected):
    # a mean divides the bag's sum rounded to the half type; bfloat16 bags without a padding_idx
    # run fbgemm, which rounds ties away from zero
    d = getattr(tm, dtype)
    weight = tm.tensor([[3.78, -10.45, -8.26, -48.83], [35.99, 22.88, -6.51, 15.48], [5.62, -11.08, 19.55, -6.21],
                        [-6.58, -15.84, 9.1, -1.98], [10.91, -12.14, 2.54, -17.85], [16.83, 3.76, 6.61, 8.21]], dtype=d)
    indices, offsets = tm.tensor([5, 1, 5, 5, 1, 2, 3, 4, 4]), tm.tensor([0, 3, 4])
    bag = tm.nn.functional.embedding_bag
    results = (bag(indices, weight, offsets, mode="sum"), bag(indices, weight, offsets, mode="mean"),
               bag(indices, weight, offsets, mode="mean", padding_idx=1))
    assert tuple(bits(r) for r in results) == expected


_IMAGES = [
    [[[-26.07, -6.99], [66.55, 26.37]], [[-65.66, -0.21], [-24.94, 5.95]]],
    [[[-64.33, 9.67], [9.42, 63.03]], [[12.67, 20.42], [-59.72, 90.11]]],
    [[[-76.63, 44.07], [-13.2, -35.23]], [[-26.25, -26.88], [15.21, -4.4]]],
]


@pytest.mark.parametrize("dtype, expected", [
    ("float16", "d53a d4c8 d220 d401 d6ce d0b7 d409 cfc1 d61f d465 d466 d24b "
                "cded cba5 d666 538f d669 d32e d4ed d571 d420 d42b cd3d d148"),
    ("bfloat16", "c2a7 c299 c244 c280 c2d9 c217 c281 c1f8 c2c4 c28d c28d c24a "
                 "c1be c176 c2cd 4271 c2cd c266 c29e c2ae c284 c285 c1a8 c229")])
def test_half_batch_norm_normalises_with_pytorchs_rounded_statistics(dtype, expected):
    # the batch's mean and 1 / std are kept in the half type (bfloat16: the sum of squared deviations
    # and the variance rounded too); then x * (invstd * weight) + (bias - mean * invstd * weight)
    d = getattr(tm, dtype)
    result = tm._native_batch_norm(tm.tensor(_IMAGES, dtype=d), tm.tensor([16.5, 42.75], dtype=d),
                                   tm.tensor([-74.0, -43.25], dtype=d), None, None, True, 0.1, 1e-5)
    assert bits(result) == expected


# -- losses: PyTorch's half-type kernels (each rounds its own steps) and nll_loss's cascaded sums ----

LOSS_A = [-1.486, -0.003, 0.406, -1.885, -1.408, 1.713]
LOSS_B = [-1.718, -1.481, 1.793, 0.488, -0.524, 0.046]
LOGITS = [
    [1.3, -1.8, -2.9], [2.3, 1.36, 0.1], [2.53, 0.39, 3.85], [-2.36, 0.43, -0.13], [-1.17, 0.73, -2.12],
    [2.42, 2.94, -2.97], [-0.26, -1.78, -3.34], [3.17, -0.56, -2.82], [1.39, -2.38, 3.21], [-2.26, -3.74, -2.39],
    [-1.23, -0.25, 3.25], [1.58, -1.29, -3.86], [-2.72, 3.97, -0.32], [1.53, -3.56, -3.73], [2.77, 0.7, -1.53],
    [-1.46, -3.29, -2.62], [-3.8, 2.71, -0.27], [-2.98, 1.91, -2.43], [-3.5, 0.79, 3.17], [-3.78, 2.44, -2.48],
    [-3.26, -3.86, -1.66], [1.82, -0.05, 2.82], [-2.26, -1.48, -1.93], [3.83, 3.53, -1.27], [-0.51, -1.49, 1.97],
    [-3.68, -3.46, -0.77], [-2.04, 2.76, 1.93], [0.37, 1.29, 1.54], [2.25, 3.42, -2.8], [1.01, -2.85, -0.45],
    [2.29, 3.16, 2.07], [-3.72, -1.12, -2.7], [3.99, -2.85, -2.05], [-1.14, -3.51, 2.96], [1.09, -2.72, -0.01],
    [-3.37, 0.89, -2.15], [-3.69, -3.08, 0.44], [1.1, -1.4, 1.15], [-1.18, -2.95, -1.48], [-0.84, 3.3, -3.07],
]
TARGET = [0, 0, 2, 1, 2, 2, 1, 2, 1, 2, 2, 0, 2, 2, 2, 2, 1, 0, 2, 1,
          2, 0, 1, 2, 1, 2, 1, 2, 2, 2, 1, 0, 0, 2, 1, 0, 0, 0, 0, 1]
TARGET_IGNORING = [t if i % 7 else -100 for i, t in enumerate(TARGET)]

LOSS_BITS = [
    ('float16', "F.mse_loss(a, b, reduction='none')", '2adb 405f 3fb1 45a2 3a41 418f'),
    ('float16', 'F.mse_loss(a, b)', '4074'),
    ('float16', "F.smooth_l1_loss(a, b, reduction='none', beta=0.685)", '2901 3c8b 3c2d 4010 3856 3d4c'),
    ('float16', 'F.smooth_l1_loss(a, b, beta=0.685)', '3c14'),
    ('float16', "F.huber_loss(a, b, reduction='none', delta=0.685)", '26db 3a3a 39b9 3d90 35f0 3b42'),
    ('float16', "F.huber_loss(a, b, reduction='sum', delta=0.685)", '4430'),
    ('float16', "F.soft_margin_loss(a, b, reduction='none')", '2ccd 3987 364e 3d06 3641 393d'),
    ('float16', 'F.soft_margin_loss(a, b)', '389e'),
    ('float16', 'F.nll_loss(logits, target)', '32dd'),
    ('float16', "F.nll_loss(logits, target_ignoring, weight, reduction='sum')", '4198'),
    ('float16', 'F.nll_loss(logits, target_ignoring, weight)', '2af8'),
    ('float16', 'F.cross_entropy(logits, target)', '4036'),
    ('float16', 'F.cross_entropy(logits, target_ignoring, weight)', '3f77'),
    ('bfloat16', "F.mse_loss(a, b, reduction='none')", '3d61 400d 3ff8 40b4 3f48 4031'),
    ('bfloat16', 'F.mse_loss(a, b)', '400f'),
    ('bfloat16', "F.smooth_l1_loss(a, b, reduction='none', beta=0.685)", '3d24 3f92 3f86 4002 3f0a 3fa9'),
    ('bfloat16', 'F.smooth_l1_loss(a, b, beta=0.685)', '3f83'),
    ('bfloat16', "F.huber_loss(a, b, reduction='none', delta=0.685)", '3ce1 3f48 3f37 3fb2 3ebd 3f67'),
    ('bfloat16', "F.huber_loss(a, b, reduction='sum', delta=0.685)", '4086'),
    ('bfloat16', "F.soft_margin_loss(a, b, reduction='none')", '3d9a 3f31 3eca 3fa0 3ec9 3f28'),
    ('bfloat16', 'F.soft_margin_loss(a, b)', '3f14'),
    ('bfloat16', 'F.nll_loss(logits, target)', '3e5d'),
    ('bfloat16', "F.nll_loss(logits, target_ignoring, weight, reduction='sum')", '4032'),
    ('bfloat16', 'F.nll_loss(logits, target_ignoring, weight)', '3d5e'),
    ('bfloat16', 'F.cross_entropy(logits, target)', '4006'),
    ('bfloat16', 'F.cross_entropy(logits, target_ignoring, weight)', '3fed'),
]


@pytest.mark.parametrize("dtype, expression, expected", LOSS_BITS, ids=[f"{d}-{e}" for d, e, _ in LOSS_BITS])
def test_half_losses_round_as_pytorch(dtype, expression, expected):
    d = getattr(tm, dtype)
    names = {"F": tm.nn.functional, "a": tm.tensor(LOSS_A, dtype=d), "b": tm.tensor(LOSS_B, dtype=d),
             "logits": tm.tensor(LOGITS, dtype=d), "target": tm.tensor(TARGET),
             "target_ignoring": tm.tensor(TARGET_IGNORING), "weight": tm.tensor([0.7, 1.3, 2.1], dtype=d)}
    result = eval(expression, names)
    assert result.dtype == d
    assert bits(result) == expected


# -- against PyTorch -------------------------------------------------------------------------

SWEEP = ["x + s", "s - x", "x * s", "x / s", "s / x", "x // s", "s // x", "x % s", "s % x", "L.fmod(x, s)",
         "x.abs() ** s", "abs(s) ** x", "L.xlogy(x, y.abs())", "L.xlogy(x, abs(s))", "L.add(x, y, alpha=s)",
         "L.sub(x, y, alpha=s)", "L.rsub(x, y, alpha=s)", "L.rsqrt(x.abs())", "x.abs() ** 3", "x.abs() ** -2",
         "x == s", "x < s", "x * L.tensor(s)", "x + L.tensor(s, dtype=L.float64)", "L.lerp(x, y, s)"]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_arithmetic_sweep_matches_torch(dtype):
    import torch

    rng = np.random.default_rng(5)
    problems = []
    for size in (7, 45, 100):
        xs, ys = rng.normal(0, 30, size), rng.normal(0, 30, size)
        for s in (0.7, -2.055, 100.3, 3):
            for expression in SWEEP:
                results = []
                for library in (tm, torch):
                    dt = getattr(library, dtype)
                    names = {"L": library, "s": s, "x": library.tensor(xs, dtype=library.float32).to(dt),
                             "y": library.tensor(ys, dtype=library.float32).to(dt)}
                    result = eval(expression, names)
                    results.append(result.view(library.int16).tolist() if result.dtype == dt
                                   else result.tolist())
                if results[0] != results[1] and not (dtype == "float16" and expression in ("x * s", "s / x")):
                    problems.append(f"{expression} (s={s}, {size} elements)")
    assert not problems, problems



_OPTIMIZERS = {"SGD": {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}, "Adam": {"lr": 0.01}}


@pytest.mark.parametrize("dtype, name, expected", [
    ('float16', 'SGD', '3775 40b2 c0b6 463b 484a c44b 44a2 c8ec 3cac 44b9 4822 c9a4 c464 493b '
                       'c2ec c62e 44e6 46e9 c50b c240 402c c077 3886 c5f2 44d8 447e c954 c332 '
                       '48d4 c024 c861 414b 4864 4576 c120 c91e 2400 46c2 3f4c c269'),
    ('float16', 'Adam', '3e48 bde9 c20b bd99 42eb 409d c3d2 c0d6 be93 431d ba18 c11c 41bf 4288 '
                       'be64 bcae 4014 bf5e 409c b678 3cc1 424e c383 bd02 4058 3a90 c23d 4239 '
                       '438a c3c2 b834 bcca 426b c351 41a9 c072 c28d b45c be8b 3771'),
    ('bfloat16', 'SGD', '3eef 4017 c017 40c9 4109 c089 4092 c11f 3f94 4098 4105 c134 c08e 4127 '
                       'c05e c0c6 409e 40dc c0a1 c048 4006 c00f 3f11 c0be 409b 4090 c12b c064 '
                       '411c c005 c10e 4029 410e 40ae c022 c124 3d00 40d8 3fe9 c04e'),
    ('bfloat16', 'Adam', '3fc8 bfbd c041 bfb3 405e 4013 c07a c01b bfd2 4064 bf43 c024 4038 4051 '
                       'bfcd bf96 4003 bfeb 4013 bece 3f99 4049 c070 bfa1 400b 3f52 c048 4047 '
                       '4072 c078 bf07 bf99 404e c06a 4035 c00f c051 be8c bfd1 3eef'),
])
def test_half_parameters_step_as_pytorchs(dtype, name, expected):
    # three steps on 40 parameters (a vector step and a scalar tail): add with alpha, lerp, addcdiv
    # ... as PyTorch's loops round them
    d = getattr(tm, dtype)
    p = tm.nn.Parameter(tm.tensor([v / 10 for v in X40], dtype=d))
    optimizer = getattr(tm.optim, name)([p], **_OPTIMIZERS[name])
    for s in (0.7, -1.3, 2.9):
        p.grad = tm.tensor([v * s for v in X40[::-1]], dtype=d)
        optimizer.step()
    assert bits(p.detach()) == expected

# -- bfloat16 models train ------------------------------------------------------------------------

def _models(library):
    nn = library.nn
    return {
        "mlp": (nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4)), (6, 8)),
        "cnn": (nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.BatchNorm2d(4), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(16, 4)), (2, 3, 4, 4)),
        "lstm": (nn.LSTM(5, 4, num_layers=2, batch_first=True), (3, 4, 5)),
        "transformer": (nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True), (2, 4, 8)),
    }


def _step(library, model, data, optimize: bool = True):
    """One training step: the loss (cross entropy on the first 4 features) and the gradients
    (``optimize=False``: no optimizer step; PyTorch's first optimizer costs seconds to import)."""
    output = model(data)
    if isinstance(output, tuple):  # LSTM
        output = output[0]
    logits = output.reshape(-1, output.shape[-1])[:, :4]
    target = library.arange(logits.shape[0]) % 4
    loss = library.nn.functional.cross_entropy(logits, target)
    loss.backward()
    if optimize:
        library.optim.SGD(model.parameters(), lr=0.1, momentum=0.9).step()
    return loss, {name: p.grad for name, p in model.named_parameters()}


@pytest.mark.parametrize("name", ["mlp", "cnn", "lstm", "transformer"])
def test_a_bfloat16_model_trains_a_step(name):
    tm.manual_seed(0)
    model, shape = _models(tm)[name]
    model = model.to(tm.bfloat16)
    loss, grads = _step(tm, model, tm.randn(*shape).to(tm.bfloat16))
    assert loss.dtype == tm.bfloat16 and math.isfinite(loss.item())
    assert all(g is not None and g.dtype == tm.bfloat16 for g in grads.values())
    assert all(p.dtype == tm.bfloat16 for p in model.parameters())


@pytest.mark.torch
@pytest.mark.parametrize("name", ["mlp", "cnn", "lstm", "transformer"])
def test_a_bfloat16_models_step_is_close_to_pytorchs(name):
    import torch

    torch.manual_seed(0)
    theirs, shape = _models(torch)[name]
    theirs = theirs.to(torch.bfloat16)
    ours = _models(tm)[name][0].to(tm.bfloat16)
    ours.load_state_dict({k: tm.tensor(v.float().numpy()).to(tm.bfloat16) for k, v in theirs.state_dict().items()})
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    our_loss, our_grads = _step(tm, ours, tm.tensor(data).to(tm.bfloat16), optimize=False)
    their_loss, their_grads = _step(torch, theirs, torch.tensor(data).to(torch.bfloat16), optimize=False)
    assert our_loss.item() == pytest.approx(their_loss.item(), rel=2e-2)
    for key, theirs_grad in their_grads.items():
        expected = theirs_grad.float().numpy()
        got = np.asarray(our_grads[key].float().tolist(), np.float32).reshape(expected.shape)
        scale = float(np.abs(expected).max()) + 1e-3
        assert np.abs(got - expected).max() <= 0.05 * scale, key


@pytest.mark.parametrize("dtype, name", [(tm.float16, "Half"), (tm.bfloat16, "BFloat16")])
def test_a_half_matrix_has_no_negative_power(dtype, name):
    for matrix in (tm.ones(2, 2, dtype=dtype), tm.zeros(0, 2, 2, dtype=dtype)):
        with pytest.raises(RuntimeError, match=f"^linalg.inv: Low precision dtypes not supported. Got {name}$"):
            tm.matrix_power(matrix, -2)
    assert tm.matrix_power(tm.ones(2, 2, dtype=dtype), 2).tolist() == [[2.0, 2.0], [2.0, 2.0]]


@pytest.mark.parametrize("dtype", [tm.float32, tm.float64, tm.float16, tm.bfloat16])
def test_a_zero_remainder_keeps_the_dividends_sign(dtype):
    # PyTorch's remainder is fmod moved by the divisor: a zero keeps fmod's sign, the dividend's
    x = tm.tensor([-24.0, 24.0, -3.0, 0.0, -0.0], dtype=dtype)
    signs = [math.copysign(1, v) for v in (x % 3).tolist()]
    assert signs == [-1, 1, -1, 1, -1]
    assert [math.copysign(1, v) for v in (x % -3).tolist()] == [-1, 1, -1, 1, -1]
    assert [math.copysign(1, v) for v in (-6.0 % tm.tensor([3.0, -3.0], dtype=dtype)).tolist()] == [-1, -1]
    assert (tm.tensor([-1.0, 1.0], dtype=dtype) % 3).tolist() == [2.0, 1.0]


def test_complex_reciprocal_rounds_as_pytorchs_fused_division():
    # c10::complex's division, compiled with fused multiply-adds: 1 / z rounds so (the values
    # are PyTorch 2.13's; plain multiply-then-add differs in the last bit for these)
    z = tm.tensor([-0.7187071815648651 + 1.1048495839003873j, 2.950329040834669 + 2.7101137288139974j],
                  dtype=tm.complex128)
    assert z.reciprocal().tolist() == [(-0.4137080866408464 - 0.6359825240456589j),
                                       (0.1838307694590663 - 0.16886329802336605j)]

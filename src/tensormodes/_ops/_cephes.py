"""The Cephes evaluations PyTorch's CPU kernels use for its Bessel functions (``i0``, ``i1``,
``i0e``, ``i1e``), step for step, so their results are PyTorch's bit for bit.

PyTorch evaluates them in the tensor's own type: float64 for double tensors, float32 (with
coefficients rounded to float) for float tensors and the half types (whose inputs it widens to
float and whose results it rounds back). Its kernels are compiled with fused multiply-adds,
which Clenshaw's recurrence here reproduces (``fma64`` / ``fma32``), and call the C library's
``exp`` (``libm``) and ``expf`` (``_expf``: glibc's table-driven algorithm, reproduced).

>>> import numpy as np
>>> float(bessel_i0(np.array(1.0)))  # (the series gives ...082; Cephes' fit ...079)
1.2660658777520082
"""

from __future__ import annotations

import functools
from decimal import Decimal, localcontext

import numpy as np

from .. import _dtype as dt
from ._random_math import fma32, fma64, libm
from .common import HALF_TYPES, dtype_of, floating, not_implemented, quiet

__all__ = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "bessel_k0", "bessel_k1", "cephes_unary",
           "chebyshev_series", "compute_dtype", "exp_of", "fused_of", "log_of", "modified_bessel_i0",
           "modified_bessel_i1", "polevl"]

# Cephes' Chebyshev coefficients (highest order first), exp(-x) I0(x) on [0, 8] in x / 2 - 2 ...
_I0E_NEAR = (
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
# ... and exp(-x) sqrt(x) I0(x) beyond 8, in 32 / x - 2
_I0E_FAR = (
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1)
# exp(-x) I1(x) / x on [0, 8]; PyTorch's float kernels drop the first 12 (below float's precision)
_I1E_NEAR = (
    2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
    3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
    9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
    -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
    4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
    -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
    2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
    -1.76416518357834055153E-1, 2.52587186443633654823E-1)
# exp(-x) sqrt(x) I1(x) beyond 8; the float kernels keep the last 7
_I1E_FAR = (
    7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
    4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
    3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
    -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
    7.78576235018280120474E-1)
_FLOAT_I1E_TERMS = (17, 7)  # (near, far): the lengths of PyTorch's float tables


def cephes_unary(kernel, kernel_name: str, input: np.ndarray, *, halves: bool = True) -> np.ndarray:
    """``kernel`` (float32 or float64 arrays in, the same out) of ``input`` as PyTorch's CPU
    kernels compute it: double for float64 results, float for the rest (integers and bool give
    the default dtype; the half types, where ``halves``, are widened to float and rounded
    back); complex inputs, and half types without ``halves``, raise PyTorch's error."""
    if input.dtype.kind == "c" or (not halves and input.dtype in HALF_TYPES):
        raise not_implemented(kernel_name, dtype_of(input))
    result = floating(dtype_of(input))
    compute = np.float64 if result is dt.float64 else np.float32
    with quiet():  # (flat: a 0-dim array's arithmetic gives NumPy scalars, which the kernels index)
        return np.asarray(kernel(np.asarray(input, compute).reshape(-1)), result._np).reshape(input.shape)


def compute_dtype(array: np.ndarray) -> type:
    """The type PyTorch's kernel computes in for ``array``'s dtype: double for float64, float
    for everything else (float32, and the half types it widens)."""
    return np.float64 if array.dtype == np.float64 else np.float32


def chebyshev_series(y: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    """Cephes' ``chbevl``: Clenshaw's recurrence ``b0 = y * b1 - b2 + c`` in ``y``'s type, with
    the coefficients rounded to it, and the product and subtraction fused (as PyTorch's build
    contracts them; its first step, where b2 is 0, becomes ``y * c0 + c1`` fused), then half of
    ``b0 - b2``."""
    kind = y.dtype.type
    fused = fma64 if kind is np.float64 else fma32
    previous = np.full_like(y, kind(coefficients[0]))
    current = fused(y, previous, np.full_like(y, kind(coefficients[1])))
    before = np.zeros_like(y)
    for c in coefficients[2:]:
        before, previous = previous, current
        current = fused(y, previous, -before)
        current += kind(c)
    return kind(0.5) * (current - before)


_EXPF_BITS = 5  # glibc's expf: a table of 2**(i / 32) and a cubic for the rest
_EXPF_STEPS = 1 << _EXPF_BITS
_EXPF_SCALE = float.fromhex("0x1.71547652b82fep+0") * _EXPF_STEPS  # 32 / log(2)
_EXPF_SHIFT = float.fromhex("0x1.8p+52")  # adding it rounds to an integer
_EXPF_CUBIC = (float.fromhex("0x1.c6af84b912394p-5") / _EXPF_STEPS ** 3,
               float.fromhex("0x1.ebfce50fac4f3p-3") / _EXPF_STEPS ** 2,
               float.fromhex("0x1.62e42ff0c52d6p-1") / _EXPF_STEPS)
_EXPF_OVERFLOW = float.fromhex("0x1.62e42ep6")  # above: inf
_EXPF_UNDERFLOW = -float.fromhex("0x1.9fe368p6")  # below: 0


@functools.cache
def _expf_table() -> np.ndarray:
    """2**(i / 32) for i < 32, correctly rounded doubles (glibc's table)."""
    with localcontext() as context:
        context.prec = 50
        return np.array([float(Decimal(2) ** (Decimal(i) / _EXPF_STEPS)) for i in range(_EXPF_STEPS)])


def _expf(x: np.ndarray) -> np.ndarray:
    """glibc's ``expf`` of float32 ``x`` (NumPy's float32 exp differs in the last bit on about
    a third of inputs, float32(exp(double)) on 1 in 2,000): x * 32 / log(2) = k + r, 2**(k / 32)
    from the table, a cubic in r, in double, rounded once to float."""
    wide = x.astype(np.float64)
    with quiet():
        z = _EXPF_SCALE * wide
        k = z + _EXPF_SHIFT
        k -= _EXPF_SHIFT
        k[~np.isfinite(k)] = 0  # inf and NaN: replaced below
        r = z - k
        steps = k.astype(np.int64)
        scale = np.ldexp(_expf_table()[steps % _EXPF_STEPS], steps >> _EXPF_BITS)
        cubic, linear, _ = _EXPF_CUBIC
        y = (cubic * r + linear) * (r * r) + (_EXPF_CUBIC[2] * r + 1)
        result = (y * scale).astype(np.float32)
    result[wide > _EXPF_OVERFLOW] = np.inf
    result[wide < _EXPF_UNDERFLOW] = 0
    nan = np.isnan(x)
    result[nan] = x[nan]
    return result


def exp_of(x: np.ndarray) -> np.ndarray:
    """The C library's ``exp`` (double) or ``expf`` (float) of each element, in ``x``'s type."""
    return libm("exp", x) if x.dtype == np.float64 else _expf(x)


def _coefficients(table: tuple[float, ...], kind: type, float_terms: int | None = None) -> tuple[float, ...]:
    return table[-float_terms:] if float_terms and kind is not np.float64 else table


def _split_at_eight(x: np.ndarray, near, far) -> np.ndarray:
    """``near(m)`` where ``|x| <= 8``, ``far(m)`` elsewhere (NaN included), of ``m = |x|``, in
    ``x``'s type (float32 or float64); each evaluated on its own elements only."""
    magnitude = np.absolute(x)
    result = np.empty_like(magnitude)
    inside = magnitude <= 8
    with quiet():
        if inside.any():
            result[inside] = near(magnitude[inside])
        outside = ~inside
        if outside.any():
            result[outside] = far(magnitude[outside])
    return result


def _near_point(m: np.ndarray) -> np.ndarray:
    kind = m.dtype.type
    return m / kind(2) - kind(2)


def _far_point(m: np.ndarray) -> np.ndarray:
    kind = m.dtype.type
    point = kind(32) / m - kind(2)
    point[np.isnan(point)] = 0  # NaN's value is NaN anyway; keeps the fused steps on their fast path
    return point


def bessel_i0e(x: np.ndarray) -> np.ndarray:
    """``exp(-|x|) I0(x)`` as PyTorch's ``calc_i0e`` (float32 or float64 ``x``)."""
    def near(m):
        return chebyshev_series(_near_point(m), _I0E_NEAR)

    def far(m):
        return chebyshev_series(_far_point(m), _I0E_FAR) / np.sqrt(m)
    return _split_at_eight(x, near, far)


def bessel_i0(x: np.ndarray) -> np.ndarray:
    """``I0(x)`` as PyTorch's ``calc_i0``: ``exp(|x|)`` times ``i0e``'s series."""
    def near(m):
        return exp_of(m) * chebyshev_series(_near_point(m), _I0E_NEAR)

    def far(m):
        return exp_of(m) * chebyshev_series(_far_point(m), _I0E_FAR) / np.sqrt(m)
    return _split_at_eight(x, near, far)


def _odd(x: np.ndarray, magnitude_result: np.ndarray) -> np.ndarray:
    """PyTorch's ``(x < 0) ? -out : out``: odd, and +0 at -0."""
    return np.where(x < 0, -magnitude_result, magnitude_result)


def bessel_i1(x: np.ndarray) -> np.ndarray:
    """``I1(x)`` as PyTorch's ``calc_i1`` (float kernels: the shorter float tables)."""
    kind = x.dtype.type
    near_terms = _coefficients(_I1E_NEAR, kind, _FLOAT_I1E_TERMS[0])
    far_terms = _coefficients(_I1E_FAR, kind, _FLOAT_I1E_TERMS[1])

    def near(m):
        return exp_of(m) * m * chebyshev_series(_near_point(m), near_terms)

    def far(m):
        return exp_of(m) * chebyshev_series(_far_point(m), far_terms) / np.sqrt(m)
    return _odd(x, _split_at_eight(x, near, far))


def bessel_i1e(x: np.ndarray) -> np.ndarray:
    """``exp(-|x|) I1(x)`` as PyTorch's ``calc_i1e``."""
    kind = x.dtype.type
    near_terms = _coefficients(_I1E_NEAR, kind, _FLOAT_I1E_TERMS[0])
    far_terms = _coefficients(_I1E_FAR, kind, _FLOAT_I1E_TERMS[1])

    def near(m):
        return chebyshev_series(_near_point(m), near_terms) * m

    def far(m):
        return chebyshev_series(_far_point(m), far_terms) / np.sqrt(m)
    return _odd(x, _split_at_eight(x, near, far))


def modified_bessel_i0(x: np.ndarray) -> np.ndarray:
    """``I0(x)`` as PyTorch's ``modified_bessel_i0_forward``: ``i0``'s series (whole tables in
    float too), ``exp(|x|) * series``."""
    def near(m):
        return exp_of(m) * chebyshev_series(_near_point(m), _I0E_NEAR)

    def far(m):
        return exp_of(m) * chebyshev_series(_far_point(m), _I0E_FAR) / np.sqrt(m)
    return _split_at_eight(x, near, far)


def modified_bessel_i1(x: np.ndarray) -> np.ndarray:
    """``I1(x)`` as PyTorch's ``modified_bessel_i1_forward``: the whole tables in float too, and
    near 0 the product ``series * |x| * exp(|x|)`` in that order."""
    def near(m):
        return chebyshev_series(_near_point(m), _I1E_NEAR) * m * exp_of(m)

    def far(m):
        return exp_of(m) * chebyshev_series(_far_point(m), _I1E_FAR) / np.sqrt(m)
    return _odd(x, _split_at_eight(x, near, far))


def half_step_i0e(x: np.ndarray) -> np.ndarray:
    """``i0e`` of a float16 / bfloat16 array as PyTorch's scalar loop computes it: its
    ``calc_i0e`` has no half-type overload, so every step (coefficients too) rounds to the half
    type; the square root is float's. Returned widened to float32."""
    half = x.dtype

    def rounded(values):
        return np.asarray(values, np.float32).astype(half).astype(np.float32)

    def series(y, coefficients):
        current, previous = np.full_like(y, rounded(coefficients[0])), np.zeros_like(y)
        before = previous
        for c in coefficients[1:]:
            before, previous = previous, current
            current = rounded(rounded(rounded(y * previous) - before) + rounded(c))
        return rounded(np.float32(0.5) * rounded(current - before))

    magnitude = np.absolute(x.astype(np.float32))
    with quiet():
        near = series(rounded(rounded(magnitude / 2) - 2), _I0E_NEAR)
        far = series(rounded(rounded(32 / magnitude) - 2), _I0E_FAR) / np.sqrt(magnitude)
    return np.where(magnitude <= 8, near, far)


# glibc's logf: 1/c and log(c) for 16 subintervals of [0x3f330000, ...), ln 2, and a cubic in r = z/c - 1
_LOGF_INVERSES = tuple(float.fromhex(v) for v in (
    "0x1.661ec79f8f3bep+0", "0x1.571ed4aaf883dp+0", "0x1.49539f0f010bp+0", "0x1.3c995b0b80385p+0",
    "0x1.30d190c8864a5p+0", "0x1.25e227b0b8eap+0", "0x1.1bb4a4a1a343fp+0", "0x1.12358f08ae5bap+0",
    "0x1.0953f419900a7p+0", "0x1p+0", "0x1.e608cfd9a47acp-1", "0x1.ca4b31f026aap-1", "0x1.b2036576afce6p-1",
    "0x1.9c2d163a1aa2dp-1", "0x1.886e6037841edp-1", "0x1.767dcf5534862p-1"))
_LOGF_LOGS = tuple(float.fromhex(v) for v in (
    "-0x1.57bf7808caadep-2", "-0x1.2bef0a7c06ddbp-2", "-0x1.01eae7f513a67p-2", "-0x1.b31d8a68224e9p-3",
    "-0x1.6574f0ac07758p-3", "-0x1.1aa2bc79c81p-3", "-0x1.a4e76ce8c0e5ep-4", "-0x1.1973c5a611cccp-4",
    "-0x1.252f438e10c1ep-5", "0x0p+0", "0x1.aa5aa5df25984p-5", "0x1.c5e53aa362eb4p-4", "0x1.526e57720db08p-3",
    "0x1.bc2860d22477p-3", "0x1.1058bc8a07ee1p-2", "0x1.4043057b6ee09p-2"))
_LOGF_LN2 = float.fromhex("0x1.62e42fefa39efp-1")
_LOGF_CUBIC = tuple(float.fromhex(v) for v in ("-0x1.00ea348b88334p-2", "0x1.5575b0be00b6ap-2",
                                                "-0x1.ffffef20a4123p-2"))
_LOGF_OFFSET = 0x3f330000  # the subintervals start at this bit pattern (about 0.7)


def _logf(x: np.ndarray) -> np.ndarray:
    """glibc's ``logf`` of float32 ``x``: x = 2**k z, log(z) = log(c) + log1p(z / c - 1) with c from
    a 16-entry table chosen by z's leading mantissa bits, in double, rounded once to float."""
    bits = x.view(np.uint32).astype(np.int64)
    subnormal = (bits > 0) & (bits < 0x00800000)
    if subnormal.any():  # scaled into the normal range, the exponent corrected
        bits[subnormal] = (x[subnormal] * np.float32(2 ** 23)).view(np.uint32).astype(np.int64) - (23 << 23)
    offset = (bits - _LOGF_OFFSET) & 0xFFFFFFFF
    index = (offset >> 19) % 16
    exponent = ((offset ^ 0x80000000) - 0x80000000) >> 23  # the signed shift of the 32-bit offset
    z = ((bits - (offset & 0xFF800000)) & 0xFFFFFFFF).astype(np.uint32).view(np.float32).astype(np.float64)
    r = z * np.array(_LOGF_INVERSES)[index] - 1
    base = np.array(_LOGF_LOGS)[index] + exponent * _LOGF_LN2
    square = r * r
    cubic, quadratic, linear = _LOGF_CUBIC
    y = (cubic * square + (quadratic * r + linear)) * square + (base + r)
    with quiet():
        result = y.astype(np.float32)
    result[x == 1] = 0
    result[x == 0] = -np.inf
    result[np.isposinf(x)] = np.inf
    result[(x < 0) | np.isnan(x)] = np.nan
    return result


def log_of(x: np.ndarray) -> np.ndarray:
    """The C library's ``log`` (double) or ``logf`` (float) of each element, in ``x``'s type."""
    return libm("log", x) if x.dtype == np.float64 else _logf(x)


# K0(x) + log(x / 2) I0(x) on [0, 2], in x**2 - 2 ...
_K0_NEAR = (1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
    1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05, 1.26461541144692592338e-03,
    3.59799365153615016266e-02, 3.44289899924628486886e-01, -5.35327393233902768720e-01)
# ... and exp(x) sqrt(x) K0(x) beyond 2, in 8 / x - 2
_K0_FAR = (5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
    -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15, 6.34007647740507060557e-15,
    -2.22751332699166985548e-14, 8.03289077536357521100e-14, -2.98009692317273043925e-13, 1.14034058820847496303e-12,
    -4.51459788337394416547e-12, 1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
    -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08, 2.76681363944501510342e-07,
    -1.83175552271911948767e-06, 1.39498137188764993662e-05, -1.28495495816278026384e-04, 1.56988388573005337491e-03,
    -3.14481013119645005427e-02, 2.44030308206595545468e+00)
# x (K1(x) - log(x / 2) I1(x)) on [0, 2] ...
_K1_NEAR = (-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
    -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
    -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
    -3.53155960776544875667e-01, 1.52530022733894777053e+00)
# ... and exp(x) sqrt(x) K1(x) beyond 2
_K1_FAR = (-5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
    1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15, -7.01983709041831346144e-15,
    2.47715442448130437068e-14, -8.97670518232499435011e-14, 3.34841966607842919884e-13, -1.28917396095102890680e-12,
    5.13963967348173025100e-12, -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
    2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08, -3.50196060308781257119e-07,
    2.40648494783721712015e-06, -1.93619797416608296024e-05, 1.95215518471351631108e-04, -2.85781685962277938680e-03,
    1.03923736576817238437e-01, 2.72062619048444266945e+00)


def _bessel_k(x: np.ndarray, near, far) -> np.ndarray:
    """PyTorch's K family's frame: inf at 0, NaN below (and for NaN), ``near`` on (0, 2],
    ``far`` beyond; each on its own elements."""
    result = np.full_like(x, np.nan)
    result[x == 0] = np.inf
    with quiet():
        inside = (x > 0) & (x <= 2)
        if inside.any():
            result[inside] = near(x[inside])
        beyond = x > 2
        if beyond.any():
            result[beyond] = far(x[beyond])
    return result


def _k_near_series(x: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    kind = x.dtype.type
    point = fused_of(x)(x, x, np.full_like(x, kind(-2)))  # x * x - 2, fused
    return chebyshev_series(point, coefficients)


def _k_far_series(x: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    kind = x.dtype.type
    return chebyshev_series(kind(8) / x - kind(2), coefficients)


def fused_of(x: np.ndarray):
    """``a * b + c`` with one rounding in ``x``'s type."""
    return fma64 if x.dtype == np.float64 else fma32


def polevl(x: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    """Cephes' ``polevl``: Horner's rule from the highest coefficient (trailing zeros of a padded
    table included, as PyTorch's), each step fused in ``x``'s type."""
    kind = x.dtype.type
    fused = fused_of(x)
    value = np.full_like(x, kind(coefficients[0]))
    for c in coefficients[1:]:
        value = fused(value, x, np.full_like(x, kind(c)))
    return value


def bessel_k0(x: np.ndarray, *, scaled: bool = False) -> np.ndarray:
    """``K0(x)`` (``exp(x) K0(x)`` if ``scaled``) as PyTorch's ``modified_bessel_k0_forward`` (and
    ``scaled_...``): near 0 the series minus ``log(x / 2) I0(x)``, fused, where the plain float
    kernel takes the logarithm of the double ``0.5 * x`` (C's 0.5 is a double) and so subtracts
    in double."""
    def near(m):
        series = _k_near_series(m, _K0_NEAR)
        if scaled:
            return fused_of(m)(-log_of(m.dtype.type(0.5) * m), modified_bessel_i0(m), series) * exp_of(m)
        logarithm = libm("log", 0.5 * m.astype(np.float64))
        return fma64(-logarithm, modified_bessel_i0(m).astype(np.float64), series.astype(np.float64))

    def far(m):
        series = _k_far_series(m, _K0_FAR)
        if scaled:
            return series / np.sqrt(m)
        return exp_of(-m) * series / np.sqrt(m)
    return _bessel_k(x, near, far)


def bessel_k1(x: np.ndarray, *, scaled: bool = False) -> np.ndarray:
    """``K1(x)`` (``exp(x) K1(x)`` if ``scaled``) as PyTorch's ``modified_bessel_k1_forward``."""
    kind = x.dtype.type

    def near(m):
        value = fused_of(m)(log_of(kind(0.5) * m), modified_bessel_i1(m), _k_near_series(m, _K1_NEAR) / m)
        return value * exp_of(m) if scaled else value

    def far(m):
        series = _k_far_series(m, _K1_FAR)
        if scaled:
            return series / np.sqrt(m)
        return exp_of(-m) * series / np.sqrt(m)
    return _bessel_k(x, near, far)

"""The differential fuzzer: random calls of every op in the table, run by tensormodes and by
PyTorch on the same inputs, compared on outcome, dtype, shape, values and gradients.

A case starts from one of an op's declared ``Sample``s and mutates each of its tensors: another
dtype (bool, integers, float16, bfloat16, float32/64, complex), another shape (a zero-size
dimension, 0-dim, a broadcasting prefix), edge values (NaN, ±Inf, ±0, huge, tiny, the dtype's
extremes), or a Python scalar in its place where the parameter takes a number. Both libraries
get the same data. A mismatch is classified by ``(op, kind)``; ``KNOWN`` lists the classes kept
different on purpose, each with its reason (README, "Differences from PyTorch"), ``OPEN_BUGS``
the ones found and not fixed yet.

The choices are made either by hypothesis (``cases()``, a strategy for property tests, shrinkable)
or by a generator seeded with the case's number (``seeded_case(i)``): the suite's fuzz test and
the surveys use the numbered cases, so case 1234 is the same in every process whatever ran
before it. Survey the mismatch classes of more cases than the suite's budget::

    python -m tests.differential --examples 20000 --seed 3
"""

from __future__ import annotations

import argparse
import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

import tensormodes as tm
from tensormodes._ops import OPS, RANDOM_MODULES
from tensormodes._ops.registry import TensorSpec

from .op_samples import all_samples, callable_for

DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
               "float64", "complex64", "complex128")
_TM_DTYPES = {name: getattr(tm, name) for name in DTYPE_NAMES}

# The tolerances of torch.testing.assert_close per result dtype; reduced precision gets one unit
# in the last place more, since a result rounded twice (to float32, then to half) may differ by it.
TOLERANCES = {"float16": (2e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
              "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}

# Results compared by dtype and shape only.
_VALUELESS = {name for name, opdef in OPS.items() if opdef.random or opdef.kernel.__module__ in RANDOM_MODULES}

@dataclass(frozen=True)
class Difference:
    """A listed difference: why (deliberate) or a repro over ``L`` (an open bug), and which
    cases of its class it covers (all by default)."""

    text: str
    applies: Callable[[Case], bool] = lambda case: True


def _arrays(case) -> list[np.ndarray]:
    found = []
    for value in list(case.args) + list(case.kwargs.values()):
        for leaf in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(leaf, np.ndarray):
                found.append(leaf)
    return found


def _with_values(test) -> Callable[[Case], bool]:
    """A case some of whose numeric arrays hold a value ``test`` picks."""
    def applies(case) -> bool:
        for array in _arrays(case):
            if array.dtype.kind in "fciuV" and array.size:
                with np.errstate(all="ignore"):
                    if array.dtype.kind == "c":
                        values = np.asarray(array, np.complex128)
                        if np.any(test(values.real)) or np.any(test(values.imag)):
                            return True
                    elif np.any(test(np.asarray(array, np.float64))):
                        return True
        return False
    return applies


def _with_dtypes(kinds: str) -> Callable[[Case], bool]:
    """A case with an array whose NumPy kind letter is one of ``kinds`` (``"iub"``: integers, bools)."""
    return lambda case: any(array.dtype.kind in kinds for array in _arrays(case))


_EXTREME = _with_values(lambda v: ~np.isfinite(v) | (np.abs(v) >= 1e30))  # inf, NaN, 1e30
_NAN = _with_values(np.isnan)

def _repeated_singular_values(array: np.ndarray) -> bool:
    with np.errstate(all="ignore"):
        try:
            values = np.linalg.svd(np.asarray(array, np.complex128 if array.dtype.kind == "c" else np.float64),
                                   compute_uv=False)
        except np.linalg.LinAlgError:
            return True
    gaps = np.abs(np.diff(values, axis=-1))
    return bool(np.any(gaps <= 1e-6 * np.maximum(np.abs(values[..., :1]), 1e-300)))


def _ill_conditioned_single(case, limit: float = 1e3) -> bool:
    for a in _arrays(case)[:1]:
        if a.dtype in (np.float32, np.complex64) and a.ndim >= 2 and a.size and np.isfinite(a).all():
            return bool(np.any(np.linalg.cond(a.astype(np.complex128)) > limit))
    return False


def _operand_shapes_differ(case) -> bool:
    arrays = _arrays(case)
    return len(arrays) >= 2 and arrays[0].shape != arrays[1].shape


def _either(*tests) -> Callable[[Case], bool]:
    return lambda case: any(test(case) for test in tests)


_POLE = _with_values(lambda v: ((v <= 0) & (v == np.round(v))) | (np.abs(v) > 1e15))
_UNBROADCAST = ("called directly with operands of different shapes, PyTorch's private loss op scales the "
                "gradient by the input's size; nn.functional broadcasts them first (as PyTorch's does), where "
                "both agree")
_LAPACK = ("LAPACK's results for matrices holding infinities, NaN or values near the float range's limits are "
           "unspecified: PyTorch's and NumPy's builds give different meaningless numbers")
_COMPLEX_REAL_BACKWARD = ("PyTorch's backward refuses a real input's gradient when the op's result is complex "
                          "(an internal check); tensormodes gives its real part, as for the other ops")

# (op, kind) -> the deliberate difference (op "*": every op). Keep in step with README's
# "Differences from PyTorch".
KNOWN: dict[tuple[str, str], Difference] = {
    ("*", "complex32"): Difference("tensormodes has no complex32 (ComplexHalf) dtype: a float16 tensor meeting a "
                                   "complex number gives complex64"),
    **{(name, "gradient values"): Difference(_UNBROADCAST, _operand_shapes_differ)
       for name in ("_mse_loss", "_huber_loss", "_smooth_l1_loss")},
    ("_soft_margin_loss", "gradient values"): Difference(
        _UNBROADCAST + "; with a uint8 target PyTorch negates it in uint8 (255 becomes 1)",
        _either(_operand_shapes_differ, _with_dtypes("u"))),
    ("_cross_entropy_loss", "exception class"): Difference(
        "an out-of-range uint8 target makes PyTorch raise UnicodeDecodeError (a bug of its message); tensormodes "
        "raises IndexError naming the target", _with_dtypes("u")),
    ("_huber_loss", "backward computes"): Difference(
        "PyTorch's backward of huber_loss fails when input and target have different dtypes "
        "('Found dtype Double but expected Float'); tensormodes computes it"),
    ("addcdiv", "backward computes"): Difference(
        "PyTorch's backward fails to cast the float gradient into an integer operand's dtype even though that "
        "operand needs none; tensormodes computes the float operands' gradients", _with_dtypes("iub")),
    **{(name, "backward computes"): Difference(
        "PyTorch's forward broadcasts the bounds beyond the input's shape, then its backward cannot reduce the "
        "gradient ('output with shape ... doesn't match the broadcast shape'); tensormodes sums it back")
       for name in ("clamp", "clip")},
    **{(name, "backward computes"): Difference(_COMPLEX_REAL_BACKWARD, _with_dtypes("c"))
       for name in ("where", "where_method", "logaddexp", "lerp", "masked_fill")},
    ("vander", "backward computes"): Difference(
        "PyTorch's vander backward fails its own in-place check for some dtypes (a version-counter error); "
        "tensormodes computes it"),
    **{(name, kind): Difference("no complex32: a float16 tensor's complex counterpart (PyTorch's ComplexHalf)",
                                lambda case: any(a.dtype == np.float16 for a in _arrays(case)))
       for name, kind in (("view_as_complex", "raises"), ("true_divide", "computes"), ("div", "computes"),
                          ("dist", "result dtype"))},
    **{(name, kind): Difference(
        "at negative integers (poles) and beyond 1e15, tensormodes gives the pole's infinity; PyTorch's reflection "
        "formula gives a large finite number there (sin(pi x) rounds to a tiny non-zero)", _POLE)
       for name in ("polygamma", "special_polygamma", "polygamma_method", "digamma", "special_digamma",
                    "special_psi") for kind in ("result values", "gradient values")},
    **{(name, kind): Difference(
        "at infinite, NaN or near-overflow inputs, whether a sum of products comes out NaN or infinite depends on "
        "the order of its additions and fused multiply-adds (and on oneDNN skipping padded positions)", _EXTREME)
       for name in ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "convolution", "matmul", "addmm",
                    "dot", "mm", "bmm", "mv", "einsum", "tensordot", "linear", "avg_pool1d", "avg_pool2d",
                    "avg_pool3d", "_adaptive_avg_pool2d", "adaptive_avg_pool1d", "cdist", "baddbmm", "addbmm",
                    "_upsample_bilinear2d", "trapezoid")
       for kind in ("result values", "gradient values")},
    **{(name, "result values"): Difference(
        "complex products: whether PyTorch rounds each of a*c and b*d or fuses them depends on its build and on "
        "the element's position in its vector loops; tensormodes rounds as NumPy does (fused)", _with_dtypes("c"))
       for name in ("mul", "square", "prod", "cumprod")},
    **{("index_put", kind): Difference(
        "PyTorch fails an internal assert (ntensor >= 3) when the indices are only 0-dim masks or none at all; "
        "tensormodes writes the whole tensor, as PyTorch does for 0-dim masks beside other indices",
        lambda case: all(isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype == bool for i in case.args[1]))
       for kind in ("raises", "computes", "backward computes")},
    **{(name, "exception class"): Difference(
        "PyTorch's autograd reads weight.size(0) of a 0-dim weight before the op checks its rank",
        lambda case: isinstance(case.args[0], np.ndarray) and case.args[0].ndim == 0)
       for name in ("embedding", "_embedding_bag")},
    ("index_fill", "exception class"): Difference(
        "PyTorch raises an internal 'setStorage' error for an empty input with a 0-dim index",
        lambda case: case.args[0].size == 0),
    ("scatter_add", "backward computes"): Difference(
        "PyTorch's backward returns a wrongly shaped src gradient for an index with a size-0 dimension",
        lambda case: any(isinstance(a, np.ndarray) and a.size == 0 for a in case.args)),
    ("_binary_cross_entropy_with_logits", "backward computes"): Difference(
        "PyTorch's forward broadcasts the input beyond the target, then its backward cannot reduce the gradient",
        _operand_shapes_differ),
    **{(name, "result values"): Difference(
        "boundaries that are not sorted (or hold NaN) give unspecified positions",
        lambda case, name=name: any(isinstance(a, np.ndarray) and a.ndim and a.size > 1 and not (
            np.all(np.diff(a.astype(np.float64), axis=-1) >= 0))
            for a in (case.args[:1] if name == "searchsorted" else case.args[1:2])))  # (the boundaries)
       for name in ("searchsorted", "bucketize")},
    ("nll_loss", "exception class"): Difference(
        "PyTorch's reshape of a 3-D input with no classes fails with its own 'size mismatch' message",
        lambda case: case.args[0].ndim >= 3 and case.args[0].shape[1] == 0),
    ("_upsample_linear1d", "raises"): Difference(
        "bfloat16 linear upsampling stays refused until the half-type linear kernels round as PyTorch's",
        _with_dtypes("V")),
    ("_upsample_bicubic2d", "raises"): Difference(
        "PyTorch's separate uint8 bicubic kernel (its own rounding) is not implemented", _with_dtypes("u")),
    ("_gelu", "gradient values"): Difference(
        "half-type gelu gradients far in the negative tail cancel to a few ulps that depend on PyTorch's float32 "
        "erf/exp", lambda case: case.args[0].dtype in (np.float16, tm.bfloat16._np)),
    ("copysign", "result values"): Difference(
        "a NaN's sign bit is unspecified: PyTorch's float-to-bfloat16 conversion of NaN sets it, ml_dtypes' "
        "does not, so the fuzzer's inputs themselves differ there", _NAN),
    **{(name, kind): Difference(_LAPACK, _EXTREME)
       for name in ("det", "logdet", "slogdet", "linalg_det", "linalg_slogdet", "linalg_solve", "linalg_inv",
                    "inverse", "linalg_qr", "linalg_matrix_norm", "linalg_norm", "linalg_svd", "linalg_svdvals",
                    "linalg_eigh", "linalg_eigvalsh", "linalg_cholesky", "linalg_eig", "linalg_eigvals",
                    "cholesky_inverse", "linalg_solve_triangular")
       for kind in ("result values", "gradient values")},
    **{(name, "computes"): Difference(
        "tensormodes has no complex32: a float16 operand meeting a complex number computes in complex64, where "
        "PyTorch's complex32 has no kernel for the op",
        lambda case: _with_dtypes("f")(case) and (_with_dtypes("c")(case) or any(
            isinstance(a, complex) for a in case.args)))
       for name in ("logaddexp", "addcdiv", "pow")},
    ("index_copy", "exception class"): Difference(
        "copying into an empty dimension: PyTorch raises an internal setStorage RuntimeError, tensormodes an "
        "IndexError naming the index", lambda case: any(0 in a.shape for a in _arrays(case))),
    ("linalg_slogdet", "backward raises"): Difference(
        "the gradient of slogdet at a singular matrix: PyTorch returns infinities, tensormodes raises (documented "
        "in its docstring)"),
    ("linalg_svd", "computes"): Difference(
        "matrices where PyTorch's LAPACK build fails to converge and NumPy's converges: " + _LAPACK, _EXTREME),
    **{(name, "gradient values"): Difference(
        "tied values at the ranks around q: PyTorch's unstable sort picks which tied element gets the gradient",
        lambda case: any(a.size != np.unique(a).size for a in _arrays(case) if a.dtype.kind in "fiu"))
       for name in ("quantile", "nanquantile")},
    ("sum", "result values"): Difference(
        "float32 cancellation of huge values beside small ones: PyTorch's vectorised accumulators add in another "
        "order than NumPy's pairwise sum", _EXTREME),
    **{(name, "result values"): Difference(
        "complex64 with subnormal parts: PyTorch's log1p flushes them and gives NaN",
        lambda case: _with_dtypes("c")(case) and _with_values(lambda v: (v != 0) & (np.abs(v) < 1.2e-38))(case))
       for name in ("log1p", "special_log1p")},
    **{("matmul", kind): Difference(
        "PyTorch folds a batch into mm also when the smaller operand requires grad, which changes which mixed-dtype "
        "or empty products it refuses; the kernel cannot see requires_grad",
        lambda case: len({a.dtype for a in _arrays(case)}) > 1 or any(a.size == 0 for a in _arrays(case)))
       for kind in ("raises", "computes")},
    ("cdist", "gradient values"): Difference(
        "on the matrix-product route (p=2, more than 25 rows, or use_mm_for_euclid_dist) PyTorch differentiates "
        "its composite; tensormodes uses cdist's exact formula; and at infinite or NaN coordinates which gradients "
        "come out NaN depends on the order of the differences' sums",
        lambda case: case.kwargs.get("compute_mode") == "use_mm_for_euclid_dist" or _EXTREME(case)
        or any(a.ndim >= 2 and a.shape[-2] > 25 for a in _arrays(case))),
    ("_upsample_bilinear2d", "raises"): Difference(
        "uint8 bilinear upsampling (PyTorch's fixed-point kernel) is refused", _with_dtypes("u")),
    **{(name, "computes"): Difference(
        "matrices holding NaN or Inf, or gelsd with a B of no columns: PyTorch's lstsq fails an internal assert "
        "(MKL rejects the call's arguments); " + _LAPACK, _either(_EXTREME, lambda case: _no_columns(case)))
       for name in ("_linalg_lstsq", "_linalg_lstsq_rank")},
    ("_linalg_lstsq", "result values"): Difference(
        "matrices holding NaN, Inf or values near the float range's limits: PyTorch's MKL gelsd returns NaN "
        "throughout; " + _LAPACK, _EXTREME),
    ("_multilabel_margin_loss", "raises"): Difference(
        "an empty input with a target that is not int64: PyTorch reads the target's dtype only when there are "
        "elements; tensormodes refuses the dtype either way", lambda case: any(a.size == 0 for a in _arrays(case))),
    ("mkldnn_rnn_layer", "exception class"): Difference(
        "arguments nn.LSTM never sends (an empty feature dimension, states of other dtypes): PyTorch's oneDNN "
        "op indexes them unchecked (an IndexError, or a crash), tensormodes checks the shapes and names them"),
    ("mkldnn_rnn_layer", "computes"): Difference(
        "states of another dtype (an int8 cell state): PyTorch's oneDNN view refuses them, tensormodes computes "
        "in the input's dtype", lambda case: len({a.dtype for a in _arrays(case)}) > 1),
    **{(name, "backward computes"): Difference(
        "an index smaller than src (here empty): PyTorch's formula returns src's gradient in the index's shape and "
        "its engine rejects it; tensormodes gives src its gradient in src's shape (zeros where nothing was "
        "scattered)", lambda case: len(case.args) > 3 and isinstance(case.args[3], np.ndarray)
        and isinstance(case.args[2], np.ndarray) and case.args[2].shape != case.args[3].shape)
       for name in ("scatter", "scatter_reduce")},
    ("pdist", "gradient values"): Difference(
        "an infinite coordinate with p=inf: PyTorch's gradient is NaN for every pair through that row, "
        "tensormodes' stays finite there", _EXTREME),
    ("pdist", "raises"): Difference(
        "float16 rows with no columns: PyTorch returns the empty distances without reaching its kernel's dtype "
        "check; tensormodes refuses float16 (PyTorch's CPU pdist has no half kernel)",
        lambda case: any(a.size == 0 for a in _arrays(case))),
    ("_fft_c2c", "exception class"): Difference(
        "dims beyond a 0-dim input: PyTorch's reshape fails (RuntimeError) before its dim check; tensormodes' "
        "kernel fails first (IndexError: tuple index out of range)", lambda case: isinstance(case.args[0], np.ndarray)
        and case.args[0].ndim == 0),
    ("ldexp", "backward computes"): Difference(
        "a complex input with a real exponent: PyTorch's formula hands the real exponent a complex gradient and "
        "its engine rejects it; tensormodes gives the exponent its real gradient",
        lambda case: len({a.dtype.kind == "c" for a in _arrays(case)}) > 1),
    ("pixel_shuffle", "backward computes"): Difference(
        "an empty channel dimension: PyTorch's own backward fails its gradient shape check (its formula's "
        "bug); tensormodes gives the empty gradient", lambda case: any(0 in a.shape for a in _arrays(case))),
    ("pow", "result values"): Difference(
        "complex powers at infinities and NaN: PyTorch's result depends on the element's position in its vector "
        "loop (pow(1e30+inf j, 2) is -inf+inf j alone or in a scalar tail, nan+inf j inside a vector step: only "
        "its scalar code recovers infinities as C's Annex G does; tensormodes gives the vector steps' value), and "
        "C's cexp/clog special cases at infinite or NaN parts differ from NumPy's",
        lambda case: _EXTREME(case) and (_with_dtypes("c")(case) or any(isinstance(a, complex) for a in case.args))),
    **{(name, kind): Difference(
        "a matrix exponential of a matrix holding infinities, NaN or values near the float range's limits: its "
        "scaling and squaring overflows at different steps in PyTorch's and tensormodes' orders", _EXTREME)
       for name in ("linalg_matrix_exp", "matrix_exp") for kind in ("result values", "gradient values")},
    ("_scaled_dot_product_flash_attention_for_cpu", "result values"): Difference(
        "infinite or NaN scores: PyTorch's flash kernel rescales its running softmax block by block (an all -inf "
        "or NaN block gives 0 where the plain softmax gives NaN)", _EXTREME),
    ("mean", "result values"): Difference(
        "int64 values near the type's limits converted to float64 cancel: the sum depends on PyTorch's vectorised "
        "addition order", _with_values(lambda v: np.abs(v) >= 2.0**62)),
    **{(name, "result values"): Difference(
        "a repeated singular value: any rotation of its singular vectors is a valid answer, and PyTorch's MKL and "
        "NumPy's LAPACK pick different ones; " + _LAPACK,
        _either(_EXTREME, lambda case: any(a.ndim >= 2 and a.size and a.dtype.kind in "fc"
                                           and _repeated_singular_values(a) for a in _arrays(case))))
       for name in ("svd", "linalg_svd")},
    **{(name, kind): Difference(_LAPACK, _EXTREME)
       for name in ("pinverse", "linalg_pinv", "_linalg_lstsq_rank", "svd")
       for kind in ("result values", "gradient values")},
    ("_ctc_loss", "result values"): Difference(
        "infinite or NaN log-probabilities: whether a path's log-sum comes out -inf or NaN depends on the order "
        "of its log-space additions", _EXTREME),
    ("grid_sampler", "result values"): Difference(
        "infinite or NaN input values or coordinates: PyTorch's vectorised kernel multiplies them by zero "
        "interpolation weights (NaN) in other places than the scalar formula", _EXTREME),
    ("index", "computes"): Difference(
        "only 0-dim boolean masks as indices: PyTorch's aten.index fails an internal assert (ntensor >= 3) for "
        "an input with elements; tensormodes drops the masks (no positions, no dimension), as ATen does beside "
        "other indices or for an empty input",
        lambda case: len(case.args) > 1 and isinstance(case.args[1], list) and case.args[0].ndim > 0 and all(
            i is None or isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype in (bool, np.uint8)
            for i in case.args[1])),
    ("_multi_margin_loss", "raises"): Difference(
        "an empty input: PyTorch checks neither the input's nor the target's dtype when there are no elements; "
        "tensormodes refuses them either way", lambda case: any(a.size == 0 for a in _arrays(case))),
    ("pixel_unshuffle", "backward computes"): Difference(
        "an empty channel dimension: PyTorch's own backward fails its gradient shape check; tensormodes gives the "
        "empty gradient", lambda case: any(0 in a.shape for a in _arrays(case))),
    ("_upsample_bicubic2d", "result values"): Difference(
        "values near the float range's limits cancel in the cubic weights: float32 last-bit differences of the "
        "weights become large", _EXTREME),
}

KNOWN.update({
    ("unique", "result values"): Difference(
        "unique rows (dim=) holding NaN: their order is what PyTorch's sort makes of NaN comparisons (false both "
        "ways), unspecified", _NAN),
    ("linalg_eigvals", "result values"): Difference(
        _LAPACK + "; single-precision eigenvalues differ in their last bits relative to the matrix's norm between "
        "the builds",
        _either(_EXTREME, lambda case: any(a.dtype in (np.float32, np.complex64) for a in _arrays(case)))),
    **{("linalg_householder_product", kind): Difference(_LAPACK, _EXTREME)
       for kind in ("result values", "gradient values")},
    ("_linalg_lstsq", "gradient values"): Difference(
        "single precision with an ill-conditioned A (condition number beyond 1e3): the rounding of PyTorch's and "
        "tensormodes' formulas, in different orders, is amplified by it", _ill_conditioned_single),
    ("linalg_matrix_exp", "gradient values"): Difference(
        "half types: PyTorch's gradient exponentiates a doubled block matrix in float16/bfloat16, which overflows "
        "(NaN) where the result itself does not; tensormodes' stays finite; and " + KNOWN[(
            "linalg_matrix_exp", "gradient values")].text,
        _either(KNOWN[("linalg_matrix_exp", "gradient values")].applies,
                lambda case: any(a.dtype in (np.float16, tm.bfloat16._np) for a in _arrays(case)))),
    ("prod", "gradient values"): Difference(
        "complex products at infinities: which parts come out NaN depends on the order of the multiplications",
        lambda case: _EXTREME(case) and _with_dtypes("c")(case)),
    ("_cross_entropy_loss", "exception class"): Difference(
        KNOWN[("_cross_entropy_loss", "exception class")].text + "; a complex input that requires grad beside a "
        "target of another batch size (or an empty one beside class indices): PyTorch's composite runs log_softmax "
        "first, whose autograd refuses complex results; tensormodes' fused op checks the batch (and nll_loss's "
        "dtype) first",
        _either(KNOWN[("_cross_entropy_loss", "exception class")].applies, _with_dtypes("c"))),
    ("result_type", "result value"): Difference(
        "no complex32: a float16 tensor meeting a complex number gives complex64",
        lambda case: _with_dtypes("f")(case) and any(isinstance(a, complex) for a in case.args)),
    ("ldexp", "gradient values"): Difference(
        "an integer exponent: PyTorch's formula takes 2 ** other in other's integer dtype (0 for a negative or "
        "overflowing exponent); tensormodes gives the derivative, input's gradient 2 ** other",
        lambda case: len(case.args) > 1 and isinstance(case.args[1], np.ndarray) and case.args[1].dtype.kind in "iu"),
})

# index_put's backward: the 0-dim masks above, and a real values tensor written into a complex input
_MASKS = KNOWN[("index_put", "backward computes")]
KNOWN[("norm", "gradient values")] = Difference(
    "a 0-dim input's 2-norm along dim 0: PyTorch's torch.norm with a dim squares in float32 (inf beyond 1.8e19, so "
    "the gradient is x / inf = -0) while its own path without a dim, and tensormodes', give |x|",
    lambda case: isinstance(case.args[0], np.ndarray) and case.args[0].ndim == 0 and _EXTREME(case))
KNOWN[("norm", "gradient values")] = Difference(
    KNOWN[("norm", "gradient values")].text + " (and below 1e-19 the square underflows to 0: a gradient of 0)",
    lambda case: isinstance(case.args[0], np.ndarray) and case.args[0].ndim == 0 and _either(
        _EXTREME, _with_values(lambda v: (v != 0) & (np.abs(v) < 1e-19)))(case))
_NORM_0DIM = KNOWN[("norm", "gradient values")]
KNOWN[("norm", "gradient values")] = Difference(
    _NORM_0DIM.text + "; the nuclear and spectral (2, -2) norms of matrices holding infinities or NaN go through "
    "SVD: " + _LAPACK, _either(_NORM_0DIM.applies, lambda case: len(case.args) > 1 and isinstance(case.args[1], (
        str, int)) and case.args[1] in ("nuc", 2, -2) and _EXTREME(case) and (len(case.args) < 3 or isinstance(
            case.args[2], (tuple, list)) and len(case.args[2]) == 2)))
KNOWN[("linalg_householder_product", "gradient presence")] = Difference(
    "empty inputs: PyTorch's formula returns undefined gradients (None), tensormodes' empty zeros",
    lambda case: any(isinstance(a, np.ndarray) and a.size == 0 for a in case.args[:2]))
KNOWN[("index_put", "backward computes")] = Difference(
    _MASKS.text + "; and " + _COMPLEX_REAL_BACKWARD, _either(_MASKS.applies, _with_dtypes("c")))

# float32 eigenvectors: LAPACK builds (PyTorch's MKL, NumPy's OpenBLAS) round their last bits differently.
KNOWN[("linalg_eigh", "result values")] = Difference(
    _LAPACK + "; float32 eigenvectors also differ in their last bits between the builds",
    _either(_EXTREME, lambda case: any(a.dtype == np.float32 for a in _arrays(case))))

_TRANSFORMS = [name for name, opdef in OPS.items()
               if opdef.namespace == "tensormodes.fft" and "freq" not in name and "shift" not in name] + [
    "_fft_r2c", "_fft_c2r"]
KNOWN.update({(name, kind): Difference(
    "an FFT's rounding error scales with the whole signal's size, not with each output's: in single precision "
    "NumPy's pocketfft and PyTorch's FFT differ in the last bits of the largest outputs, which is far above the "
    "tolerance of the small ones; with infinite or NaN inputs, which outputs come out NaN depends on the order of "
    "the butterflies", _either(_EXTREME, lambda case: not any(a.dtype in (np.float64, np.complex128)
                                                              for a in _arrays(case))))
    for name in _TRANSFORMS for kind in ("result values", "gradient values")})
KNOWN.update({(name, "computes"): Difference(
    "PyTorch's MKL FFT fails on an empty batch (a zero-size dim not transformed: 'Intel oneMKL DFTI ERROR: "
    "Inconsistent configuration parameters'); tensormodes returns the empty result",
    lambda case: any(a.size == 0 for a in _arrays(case))) for name in _TRANSFORMS})

_POLYNOMIALS = [name for name in OPS if name.startswith(("special_chebyshev", "special_shifted_chebyshev",
                                                           "special_laguerre", "special_legendre"))]
KNOWN.update({(name, "result values"): Difference(
    "at a NaN x of degree 2 and up PyTorch's loop never runs and returns an uninitialised variable (whatever the "
    "register held: another element's value); tensormodes gives NaN. In float32, its closed forms for degrees above "
    "4 to 8 within (-1, 1) call glibc's acosf, cosf, sinf, whose last bits (times the degree) ours round apart "
    "(README, Differences)", _either(_NAN, lambda case: any(a.dtype == np.float32 for a in _arrays(case))))
    for name in _POLYNOMIALS})

KNOWN.update({(name, "exception class"): Difference(
    KNOWN[("_fft_c2c", "exception class")].text, KNOWN[("_fft_c2c", "exception class")].applies)
    for name in ("_fft_r2c", "_fft_c2r")})
KNOWN[("_fft_c2r", "raises")] = Difference(
    "more frequencies along the last dim than a signal of last_dim_size points has (last_dim_size // 2 + 1): "
    "PyTorch's kernel computes from them, and its values are not those of the cropped input; tensormodes refuses "
    "with the expected count", lambda case: True)
KNOWN[("einsum", "exception class")] = Difference(
    "operands of different dtypes: PyTorch's error comes from the bmm its contraction path calls, and which "
    "operand that passes first depends on the equation (a bool or integer one first: NotImplementedError "
    "'\"bmm\" not implemented'); tensormodes always reports the dtype mismatch (RuntimeError)",
    lambda case: len({a.dtype for a in _arrays(case)}) > 1)
KNOWN[("linalg_qr", "gradient values")] = Difference(
    KNOWN[("linalg_qr", "gradient values")].text + "; single precision with an ill-conditioned matrix (condition "
    "number beyond 1e3): the rounding of the two formulas, in different orders, is amplified by it",
    _either(KNOWN[("linalg_qr", "gradient values")].applies, _ill_conditioned_single))

KNOWN.update({(name, "raises"): Difference(
    _LAPACK + "; whether LAPACK's eigensolver converges on such a matrix also differs between the builds (and "
    "PyTorch's own runs), so either side may raise PyTorch's LinAlgError", _EXTREME)
    for name in ("linalg_eigh", "linalg_eigvalsh")})
KNOWN[("special_log_softmax", "gradient values")] = Difference(
    "float32: PyTorch's vectorised exp and log (Sleef) and NumPy's round differently in the last bit; the gradient "
    "grad - exp(output) * sum(grad) cancels, which magnifies that bit in its small outputs",
    lambda case: case.kwargs.get("dtype", None) is tm.float32 or any(a.dtype == np.float32 for a in _arrays(case)))
KNOWN.update({(name, "result values"): Difference(
    KNOWN[(name, "result values")].text + "; half types: PyTorch's float16 matrix_exp squares in float16, which "
    "overflows (inf, NaN) where tensormodes, computing in float32 and rounding once, does not",
    _either(KNOWN[(name, "result values")].applies,
            lambda case: any(a.dtype in (np.float16, tm.bfloat16._np) for a in _arrays(case))))
    for name in ("linalg_matrix_exp", "matrix_exp")})
KNOWN[("grid_sampler", "result values")] = Difference(
    KNOWN[("grid_sampler", "result values")].text + "; half types: PyTorch's CPU grid_sampler runs its scalar fallback "
    "for float16/bfloat16, every step of the coordinate and weight arithmetic rounded to the type (a coordinate of "
    "65504 overflows to NaN); tensormodes computes in float32 and rounds once (issue 27's half-type sweep lists it)",
    _either(KNOWN[("grid_sampler", "result values")].applies,
            lambda case: any(a.dtype in (np.float16, tm.bfloat16._np) for a in _arrays(case))))
KNOWN[("affine_grid_generator", "result values")] = Difference(
    "half types: the order in which PyTorch's bmm of the base grid and theta rounds in bfloat16 is not modelled "
    "(tensormodes computes in float32 and rounds once; issue 27's half-type sweep lists it)",
    lambda case: any(a.dtype in (np.float16, tm.bfloat16._np) for a in _arrays(case)))
KNOWN[("linalg_svd", "gradient values")] = Difference(
    KNOWN[("linalg_svd", "gradient values")].text + "; single precision: the formula's 1 / (s_i^2 - s_j^2) terms "
    "amplify the last-bit differences of the two LAPACK builds' singular vectors",
    _either(KNOWN[("linalg_svd", "gradient values")].applies,
            lambda case: any(a.dtype in (np.float32, np.complex64) for a in _arrays(case))))

KNOWN[("linalg_qr", "result values")] = Difference(
    KNOWN[("linalg_qr", "result values")].text + "; single precision with an ill-conditioned matrix: the two LAPACK "
    "builds' Householder steps round differently and the condition number amplifies it",
    _either(KNOWN[("linalg_qr", "result values")].applies, _ill_conditioned_single))
KNOWN.update({
    ("_fft_c2c", "computes"): KNOWN[("_fft_r2c", "computes")],
    ("index_fill", "backward computes"): Difference(_COMPLEX_REAL_BACKWARD, _with_dtypes("c")),
    ("matrix_exp", "gradient values"): KNOWN[("linalg_matrix_exp", "gradient values")],
    ("linalg_svdvals", "computes"): KNOWN[("linalg_svd", "computes")],
    ("ldexp", "result values"): Difference(
        "a complex exponent with an infinite or NaN part: C's cexp special cases (PyTorch's 2 ** other) differ from "
        "NumPy's (as for pow)", lambda case: _EXTREME(case) and _with_dtypes("c")(case)),
    ("_native_layer_norm", "result values"): Difference(
        "float32 rows holding values beyond 1.8e19: PyTorch's float32 moments overflow (inf - inf, NaN for the whole "
        "row); tensormodes accumulates them in float64 and normalises the row",
        lambda case: _with_dtypes("f")(case) and _with_values(lambda v: np.abs(v) >= 1.8e19)(case)),
    ("_native_group_norm", "gradient values"): Difference(
        "half types: PyTorch's backward rounds its per-group sums to float16/bfloat16 before combining them (errors of "
        "a few percent where they cancel); tensormodes computes them in float32 and rounds once (closer to the exact "
        "gradient)", lambda case: any(a.dtype in (np.float16, tm.bfloat16._np) for a in _arrays(case))),
    **{(name, "raises"): Difference(_LAPACK + "; NumPy's SVD refuses non-finite values where PyTorch's gelsd "
                                     "returns garbage", _EXTREME) for name in ("_linalg_lstsq", "_linalg_lstsq_rank")},
    **{(name, kind): KNOWN[("matmul", "result values")] for name in ("matrix_power", "linalg_matrix_power")
       for kind in ("result values", "gradient values")},
    ("diagonal_scatter", "backward computes"): Difference(_COMPLEX_REAL_BACKWARD, _with_dtypes("c")),
    ("svd", "gradient values"): Difference(
        KNOWN[("svd", "gradient values")].text + "; single precision: the formula's 1 / (s_i^2 - s_j^2) terms amplify "
        "the last-bit differences of the two LAPACK builds' singular vectors",
        _either(KNOWN[("svd", "gradient values")].applies, lambda case: any(
            a.dtype in (np.float32, np.complex64) for a in _arrays(case)))),
    ("complex", "raises"): Difference(
        "no complex32: float16 parts make PyTorch's ComplexHalf tensor, which tensormodes refuses with a "
        "NotImplementedError naming it", lambda case: any(a.dtype == np.float16 for a in _arrays(case))),
    ("linalg_solve", "result values"): Difference(
        KNOWN[("linalg_solve", "result values")].text + "; single precision: the two builds' LAPACK solutions differ "
        "by about cond(A) x eps x the solution's norm, which small entries beside large ones exceed elementwise (and "
        "with subnormal pivots which entries come out infinite or NaN depends on the builds' pivoting)",
        _either(KNOWN[("linalg_solve", "result values")].applies, lambda case: _ill_conditioned_single(case, 2.0))),
    ("log_softmax", "gradient values"): KNOWN[("special_log_softmax", "gradient values")],
    ("special_sinc", "result values"): Difference(
        "complex64 with subnormal parts: PyTorch flushes pi * x to zero and divides by it (inf, NaN); tensormodes "
        "gives the limit 1", lambda case: _with_dtypes("c")(case) and _with_values(
            lambda v: (v != 0) & (np.abs(v) < 1.2e-38))(case)),
    **{(name, "result values"): Difference(
        KNOWN[(name, "result values")].text + "; float32 at negative inputs: PyTorch's single-precision reflection "
        "loses digits near the poles, tensormodes computes in float64 and rounds once",
        _either(KNOWN[(name, "result values")].applies, lambda case: any(
            a.dtype == np.float32 and a.size and (a < 0).any() for a in _arrays(case))))
       for name in ("polygamma", "special_polygamma", "polygamma_method", "digamma", "special_digamma",
                    "special_psi")},
    **{(name, "gradient values"): Difference(
        KNOWN[(name, "gradient values")].text + "; single precision: the gradient's products of the pseudo-inverse "
        "with itself amplify the two LAPACK builds' last-bit differences by the condition number squared",
        _either(KNOWN[(name, "gradient values")].applies, lambda case: _ill_conditioned_single(case, 10.0)))
       for name in ("linalg_pinv", "pinverse")},
})
KNOWN.update({
    ("hardshrink", "gradient values"): Difference(
        "at NaN inputs PyTorch's hardshrink_backward depends on the element's position: its vectorised float32/64 loop "
        "gives 0, its scalar tail (and the bfloat16 kernel) passes the gradient; tensormodes always passes it", _NAN),
    **{(name, "backward computes"): Difference(_COMPLEX_REAL_BACKWARD, _with_dtypes("c"))
       for name in ("addbmm", "baddbmm")},
    ("_cross_entropy_loss", "exception class"): Difference(
        KNOWN[("_cross_entropy_loss", "exception class")].text + "; an input with no classes: PyTorch's reshape fails "
        "with its own 'size mismatch' message (as nll_loss's), tensormodes names the out-of-range target",
        _either(KNOWN[("_cross_entropy_loss", "exception class")].applies,
                lambda case: case.args[0].ndim >= 2 and case.args[0].shape[1] == 0)),
    ("_cross_entropy_loss", "gradient values"): Difference(
        "half types with class probabilities: PyTorch's composite rounds log_softmax and each product to bfloat16/"
        "float16; tensormodes' fused gradient computes in float32 and rounds once (issue 27's half-type sweep)",
        lambda case: any(a.dtype in (np.float16, tm.bfloat16._np) for a in _arrays(case))),
    ("_scaled_dot_product_flash_attention_for_cpu", "raises"): Difference(
        "an empty attn_mask: PyTorch's flash kernel reads it without checking that it broadcasts to the scores; "
        "tensormodes refuses it", lambda case: isinstance(case.kwargs.get("attn_mask"), np.ndarray)
        and case.kwargs["attn_mask"].size == 0),
    **{(name, "gradient values"): Difference(
        KNOWN[(name, "gradient values")].text + "; single precision with subnormal entries: the determinant's "
        "gradient det * inv(A)^T overflows (1 / 1e-40) in tensormodes' formula where PyTorch's LU solve stays finite",
        _either(KNOWN[(name, "gradient values")].applies, lambda case: any(
            a.dtype in (np.float32, np.complex64) for a in _arrays(case))
            and _with_values(lambda v: (v != 0) & (np.abs(v) < 1.2e-38))(case))) for name in ("linalg_det", "det")},
    ("linalg_qr", "gradient values"): Difference(
        KNOWN[("linalg_qr", "gradient values")].text + " (its gradient by 10 already)",
        _either(KNOWN[("linalg_qr", "gradient values")].applies, lambda case: _ill_conditioned_single(case, 10.0))),
})
KNOWN[("_hardtanh", "gradient values")] = Difference(
    "at NaN inputs PyTorch's hardtanh_backward depends on the element's position: its vectorised loop gives 0, "
    "its scalar tail (and the bfloat16 kernel) passes the gradient; tensormodes always passes it (the scalar rule)",
    _NAN)

# (op, kind) -> a bug found and not fixed yet: its text is an expression over ``L`` that still
# differs from PyTorch. tests/test_differential_fuzz.py checks each still does, so a fixed bug must
# leave this table.
OPEN_BUGS: dict[tuple[str, str], Difference] = {
}


def is_listed(case, mismatch) -> bool:
    """True when a deliberate difference or an open bug of the mismatch's class covers the case."""
    name, kind = mismatch.key(case)
    return any(key in table and table[key].applies(case)
               for table in (KNOWN, OPEN_BUGS) for key in ((name, kind), ("*", kind)))


@functools.cache
def drawable():
    """The samples of ops PyTorch has a callable for. Not drawn: in-place ops (their samples
    compare an argument), random ops (their streams are compared on their own) and the private
    backward ops (reached through the gradient comparison, with the arguments autograd hands them)."""
    import torch

    drawable = []
    for case_id, opdef, sample in all_samples():
        if opdef.mutates or opdef.random or "_backward" in opdef.name:
            continue
        try:
            callable_for(opdef, torch)
        except AttributeError:
            continue
        drawable.append((case_id, opdef, sample))
    return drawable


class Case:
    """One call: an op's sample with its tensors replaced by concrete arrays (or scalars)."""

    def __init__(self, case_id: str, opdef, args: tuple, kwargs: dict):
        self.case_id, self.opdef, self.args, self.kwargs = case_id, opdef, args, kwargs

    def expression(self) -> str | None:
        """The call as an expression over ``L`` (see tests/torch_oracle.py), or None for the
        private ops PyTorch spells differently."""
        from .op_samples import TORCH_EQUIVALENTS

        opdef = self.opdef
        if opdef.name in TORCH_EQUIVALENTS:
            return None
        target = ("L." + ".".join(opdef.namespace.split(".")[1:] + [opdef.function]) if opdef.function
                  else f"L.Tensor.{opdef.method}")
        parts = [_source(a) for a in self.args] + [f"{k}={_source(v)}" for k, v in self.kwargs.items()]
        return f"{target}({', '.join(parts)})"

    def _repr_pretty_(self, printer, cycle):  # hypothesis prints falsifying cases with this
        printer.text(repr(self))

    def __repr__(self) -> str:
        return f"{self.case_id}({_show(self.args)}, {_show(self.kwargs)})"


class _Shown(str):
    __repr__ = str.__str__


def _show(value):
    if isinstance(value, np.ndarray):
        name = _dtype_name(value.dtype)
        return _Shown(f"array({value.tolist()!r}, {name})" if value.size <= 8 else
                      f"array(<{value.shape}>, {name})")
    if isinstance(value, (list, tuple)):
        return type(value)(_show(v) for v in value)
    if isinstance(value, dict):
        return {k: _show(v) for k, v in value.items()}
    return value


def _source(value) -> str:
    """``value`` (an argument of a case) as source over ``L``."""
    if isinstance(value, np.ndarray):
        dtype = f"L.{_dtype_name(value.dtype)}"
        if value.size == 0:
            return f"L.zeros({value.shape}, dtype={dtype})"
        data = value.astype(np.float32) if value.dtype == tm.bfloat16._np else value
        return f"L.tensor({data.tolist()!r}, dtype={dtype})"
    if isinstance(value, list):
        return "[" + ", ".join(_source(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(_source(v) + ", " for v in value) + ")"
    if isinstance(value, tm.dtype):
        return "L." + repr(value).split(".")[1]
    return repr(value)


def _dtype_name(np_dtype) -> str:
    for name, d in _TM_DTYPES.items():
        if d._np == np_dtype:
            return name
    raise AssertionError(np_dtype)


_FLOAT_EDGES = (float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e30, -1e30, 1e-40, 65504.0, 1.0, -1.0, 0.5)


class _Drawn:
    """The choices of a case drawn by hypothesis (``cases()``: shrinkable, for property tests)."""

    def __init__(self, draw):
        self.draw = draw

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))


class _Seeded:
    """The choices of case number ``index`` (``seeded_case``): the same case in every process,
    whatever ran before, so that the suite's run and a survey are reproducible case by case."""

    def __init__(self, index: int):
        self.rng = np.random.default_rng(index)

    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def integer(self, low: int, high: int) -> int:
        return int(self.rng.integers(low, high + 1))


def _build_case(choose) -> Case:
    """A random call: an op sample, its tensors mutated in dtype, shape and values."""
    case_id, opdef, sample = choose.pick(drawable())
    rng = np.random.default_rng(choose.integer(0, 2**32 - 1))
    scalar_params = {name for name, kind in opdef.tensor_params.items() if "Number" in kind}
    names = list(opdef.signature.parameters)

    def mutate(value, param):
        if isinstance(value, TensorSpec):
            return _mutate_tensor(choose, rng, value, param in scalar_params)
        if isinstance(value, list):
            return [mutate(v, None) for v in value]
        if isinstance(value, tuple) and any(isinstance(v, TensorSpec) for v in value):
            return tuple(mutate(v, None) for v in value)
        return value

    args = tuple(mutate(a, names[i] if i < len(names) else None) for i, a in enumerate(sample.args))
    kwargs = {k: mutate(v, k) for k, v in sample.kwargs.items()}
    return Case(case_id, opdef, args, kwargs)


@st.composite
def cases(draw) -> Case:
    """A random call (a hypothesis strategy): an op sample, its tensors mutated in dtype, shape and values."""
    return _build_case(_Drawn(draw))


def seeded_case(index: int) -> Case:
    """Case number ``index`` of the seeded sequence (the suite's fuzz test and the surveys)."""
    return _build_case(_Seeded(index))


def _mutate_tensor(choose, rng, spec: TensorSpec, takes_number: bool):
    if takes_number and choose.integer(0, 5) == 0:
        kind = choose.pick(("bool", "int", "float", "complex"))
        value = {"bool": True, "int": int(rng.integers(-3, 4)), "float": choose.pick(_FLOAT_EDGES + (2.5,)),
                 "complex": complex(1.5, -0.5)}[kind]
        return value
    dtype = spec.dtype
    if choose.integer(0, 2) == 0:
        dtype = choose.pick(DTYPE_NAMES)
    shape = tuple(spec.shape)
    how = choose.pick(("keep", "keep", "keep", "zero", "scalar", "prefix"))
    if how == "zero" and shape:
        dim = choose.integer(0, len(shape) - 1)
        shape = shape[:dim] + (0,) + shape[dim + 1:]
    elif how == "scalar":
        shape = ()
    elif how == "prefix":
        shape = (2,) + shape
    return _values(rng, dtype, shape, spec, edges=bool(choose.integer(0, 1)))


def _values(rng, dtype: str, shape: tuple, spec: TensorSpec, edges: bool) -> np.ndarray:
    np_dtype = _TM_DTYPES[dtype]._np
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.startswith(("int", "uint")):
        low, high = max(int(spec.low), -2**63), min(int(spec.high), 2**63 - 1)  # (float specs' 1e30)
        if dtype == "uint8":
            low, high = max(low, 0), max(high, 1)
        # (endpoint= only where high + 1 leaves int64, so that the other cases' streams stay as they were)
        values = rng.integers(low, high + 1, shape) if high < 2**63 - 1 else rng.integers(low, high, shape,
                                                                                            endpoint=True)
        if edges and values.size:
            info = np.iinfo(np_dtype)
            picks = rng.random(shape) < 0.3
            values = np.where(picks, rng.choice([info.min, info.max, 0, -1 if info.min < 0 else 1], shape), values)
        return values.astype(np_dtype)
    values = rng.uniform(spec.low, spec.high, shape)
    if dtype.startswith("complex"):
        values = values + 1j * rng.uniform(spec.low, spec.high, shape)
    with np.errstate(all="ignore"):
        if edges and values.size:
            picks = rng.random(shape) < 0.3
            values = np.where(picks, rng.choice(_FLOAT_EDGES, shape), values)
            if dtype.startswith("complex"):
                imaginary = np.where(rng.random(shape) < 0.2, rng.choice(_FLOAT_EDGES, shape), 0.0)
                values = values.real + 1j * (values.imag + imaginary)
        return np.asarray(values).astype(np_dtype)


# ---------------------------------------------------------------- running both libraries

def _to_library(value, library):
    if isinstance(value, np.ndarray):
        if library is tm:
            return tm.tensor(value)
        import torch
        if value.dtype == tm.bfloat16._np:
            return torch.tensor(value.astype(np.float32)).to(torch.bfloat16)
        return torch.tensor(value)
    if isinstance(value, list):
        return [_to_library(v, library) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_library(v, library) for v in value)
    if isinstance(value, tm.dtype) and library is not tm:
        return getattr(library, repr(value).split(".")[1])
    return value


def _float_leaves(values):
    """The tensors among ``values`` (args, lists) that can require grad."""
    for value in values:
        if isinstance(value, (list, tuple)):
            yield from _float_leaves(value)
        elif hasattr(value, "requires_grad") and (value.dtype.is_floating_point or value.dtype.is_complex):
            yield value


def _outputs(result):
    if isinstance(result, (tuple, list)) and type(result).__name__ != "Size":
        for r in result:
            yield from _outputs(r)
    else:
        yield result


def run_case(case: Case, library, *, grads: bool):
    """``("ok", outputs, gradients)`` or ``("error", exception, None)`` for ``library``."""
    args = _to_library(case.args, library)
    kwargs = {k: _to_library(v, library) for k, v in case.kwargs.items()}
    leaves = list(_float_leaves(list(args) + list(kwargs.values()))) if grads else []
    for leaf in leaves:
        leaf.requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = callable_for(case.opdef, library)(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - the exception is what is compared
            return "error", error, None
        outputs = list(_outputs(result))
        gradients = None
        differentiable = [o for o in outputs if hasattr(o, "requires_grad") and o.requires_grad]
        if leaves and differentiable:
            try:
                # seeded weights, not ones: the gradient of a sum is zero for some ops (softmax)
                weights = [_to_library(_weights(o.shape, o.dtype), library) for o in differentiable]
                gradients = library.autograd.grad(differentiable, leaves, weights, allow_unused=True)
            except Exception as error:  # noqa: BLE001
                gradients = error
        return "ok", [o.detach() if hasattr(o, "detach") else o for o in outputs], gradients


def _weights(shape, dtype) -> np.ndarray:
    name = str(dtype).split(".")[1]
    values = np.random.default_rng(len(shape)).uniform(0.5, 1.5, tuple(shape))
    if name.startswith("complex"):
        values = values - 0.25j
    return values.astype(_TM_DTYPES[name]._np)


@dataclass
class Mismatch:
    kind: str
    detail: str

    def key(self, case: Case) -> tuple[str, str]:
        return case.opdef.name, self.kind


def _as_numpy(value):
    """(array, dtype name) of a tensor of either library, (None, None) for other values."""
    if isinstance(value, tm.Tensor):
        name = repr(value.dtype).split(".")[1]
        data = np.asarray(value._data)
        return (data.astype(np.float32) if name == "bfloat16" else data), name
    if type(value).__module__.startswith("torch") and hasattr(value, "numpy"):
        name = str(value.dtype).split(".")[1]
        widened = {"bfloat16": "float", "complex32": "cfloat"}.get(name)  # types NumPy lacks
        return (getattr(value, widened)() if widened else value).numpy(force=True), name
    return None, None


def _compare_values(ours, theirs, what: str, with_values: bool, scaled: bool = False) -> Mismatch | None:
    ours_array, ours_dtype = _as_numpy(ours)
    theirs_array, theirs_dtype = _as_numpy(theirs)
    if ours_dtype is None or theirs_dtype is None:
        if (ours_dtype is None) != (theirs_dtype is None):
            return Mismatch(f"{what} type", f"{type(ours).__name__} != torch's {type(theirs).__name__}")
        same = str(ours).replace("tensormodes.", "torch.") == str(theirs) or _same_number(ours, theirs)
        return None if same else Mismatch(f"{what} value", f"{ours!r} != torch's {theirs!r}")
    if theirs_dtype == "complex32":
        return Mismatch("complex32", f"{ours_dtype} where torch's is complex32")
    if ours_dtype != theirs_dtype:
        return Mismatch(f"{what} dtype", f"{ours_dtype} != torch's {theirs_dtype}")
    if ours_array.shape != theirs_array.shape:
        return Mismatch(f"{what} shape", f"{ours_array.shape} != torch's {theirs_array.shape}")
    if not with_values:
        return None
    rtol, atol = TOLERANCES.get(ours_dtype, (0.0, 0.0))
    if scaled and theirs_array.size:
        # a gradient sums many rounded terms: its error scales with its largest entry
        finite = np.abs(theirs_array[np.isfinite(theirs_array)])
        atol += rtol * float(finite.max()) if finite.size else 0.0
    if not _close(ours_array, theirs_array, rtol, atol):
        return Mismatch(f"{what} values", f"{_excerpt(ours_array)} != torch's {_excerpt(theirs_array)}")
    return None


def _same_number(a, b) -> bool:
    try:
        return a == b or (math.isnan(a) and math.isnan(b))
    except TypeError:
        return False


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    if a.dtype.kind in "biu" or b.dtype.kind in "biu":
        return np.array_equal(a, b)
    with np.errstate(all="ignore"):
        parts = ((a.real, b.real), (a.imag, b.imag)) if a.dtype.kind == "c" else ((a, b),)
        for x, y in parts:
            x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
            same_special = (np.isnan(x) & np.isnan(y)) | (x == y)
            close = np.abs(x - y) <= atol + rtol * np.abs(y)
            if not np.all(same_special | close):
                return False
    return True


def _excerpt(array: np.ndarray) -> str:
    flat = array.reshape(-1)
    return np.array2string(flat[:6], precision=6) + ("..." if flat.size > 6 else "")


def _batch_norm_statistics_misfit(case) -> bool:
    input, *parameters = case.args[:5]
    channels = input.shape[1] if input.ndim > 1 else None
    return any(isinstance(p, np.ndarray) and (p.ndim != 1 or p.shape[0] != channels) for p in parameters)


def _bag_offsets_empty(case) -> bool:
    indices, offsets = case.args[1:3] if len(case.args) >= 3 else (None, None)
    return isinstance(offsets, np.ndarray) and offsets.size == 0 and isinstance(indices, np.ndarray) \
        and indices.size > 0


def _attention_batches_differ(case) -> bool:
    query, key, value = case.args[:3]
    if any(isinstance(a, np.ndarray) and a.size == 0 for a in (query, key, value)):
        return True  # an empty query, key or value beside others: seen to crash as well
    return all(isinstance(a, np.ndarray) and a.ndim == 4 for a in (query, key, value)) and not (
        query.shape[:2] == key.shape[:2] == value.shape[:2] and key.shape[2] == value.shape[2])


def _ctc_labels_outside_classes(case) -> bool:
    log_probs, targets = case.args[:2]
    classes = log_probs.shape[-1] if isinstance(log_probs, np.ndarray) and log_probs.ndim else 0
    return isinstance(targets, np.ndarray) and targets.size > 0 and targets.dtype.kind in "iu" \
        and bool(((targets < 0) | (targets >= classes)).any())


def _fft_of_nothing(case) -> bool:
    tensor, dims = case.args[0], case.args[1] if len(case.args) > 1 else []
    return isinstance(tensor, np.ndarray) and any(tensor.shape[d] == 0 for d in dims if -tensor.ndim <= d < tensor.ndim)


def _no_columns(case) -> bool:
    """A least-squares B (a matrix, or a batch of them, as A is) with no columns."""
    a, b = case.args[:2]
    return isinstance(b, np.ndarray) and b.ndim >= 1 and b.ndim == np.ndim(a) and b.shape[-1] == 0


def _integer_minimum(case) -> bool:
    return any(isinstance(a, np.ndarray) and a.dtype.kind == "i" and a.size and a.min() == np.iinfo(a.dtype).min
               for a in case.args)


# Calls that crash PyTorch's process (it reads memory it never checked): not run.
_CRASH_TORCH: dict[str, Callable[[Case], bool]] = {
    # an empty value batch beside a query's, or keys and values of different lengths: a segmentation fault
    "_scaled_dot_product_flash_attention_for_cpu": _attention_batches_differ,
    "_ctc_loss": _ctc_labels_outside_classes,  # a label beyond the classes: a heap corruption (munmap_chunk)
    "lcm": _integer_minimum,  # the minimum divided by -1 inside: a floating point exception (SIGFPE)
    # the same in an integer division with a rounding mode
    **dict.fromkeys(("div", "divide", "floor_divide"), _integer_minimum),
    "gcd": _integer_minimum,
    "_fft_c2c": _fft_of_nothing,  # a transform of zero points: a floating point exception (SIGFPE)
    # no rows: an integer division by zero in PyTorch's CPU kernel (SIGFPE) for p other than 0, 1, 2, inf
    "pdist": lambda case: isinstance(case.args[0], np.ndarray) and case.args[0].ndim == 2
    and case.args[0].shape[0] == 0,
    # reflection padding of an infinite or huge grid coordinate: an index far outside the input in its backward
    **dict.fromkeys(("grid_sampler", "grid_sampler_3d"), lambda case: len(case.args) > 3 and case.args[3] == 2
                    and isinstance(case.args[1], np.ndarray) and bool((~np.isfinite(case.args[1])
                                                                        | (np.abs(case.args[1]) >= 1e30)).any())),
    # gelss with a B of no columns: a segmentation fault in MKL (also behind lstsq's rank)
    **dict.fromkeys(("_linalg_lstsq", "_linalg_lstsq_rank"),
                    lambda case: case.kwargs.get("driver") == "gelss" and _no_columns(case)),
    # an empty input-to-hidden or hidden-to-hidden weight, or an empty state: read past (a segmentation fault)
    "mkldnn_rnn_layer": lambda case: any(isinstance(a, np.ndarray) and a.size == 0
                                         for a in case.args[1:3] + case.args[5:7]),
    "_native_batch_norm": _batch_norm_statistics_misfit,  # weights or statistics not of the channels' size
    "_embedding_bag": _bag_offsets_empty,  # no offsets for the indices: a segfault or a heap corruption
}


def compare(case: Case, *, grads: bool = True) -> Mismatch | None:
    """The first difference between the two libraries' runs of ``case``, or None (also for the
    calls that would crash PyTorch)."""
    import torch

    if case.opdef.name in _CRASH_TORCH and _CRASH_TORCH[case.opdef.name](case):
        return None

    ours = run_case(case, tm, grads=grads)
    # PyTorch warns some things once per process: warning always leaves that once-flag unused, so
    # the tests that compare warnings with PyTorch's see them whatever the fuzzer ran before
    warned_always = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        theirs = run_case(case, torch, grads=grads)
    finally:
        torch.set_warn_always(warned_always)
    if grads and theirs[0] == "error" and "is not differentiable with respect to argument" in str(theirs[1]):
        # PyTorch refuses a target or weight that requires grad; tensormodes lets it through with
        # no gradient (README, "Differences"): compare the call without gradients instead.
        return compare(case, grads=False)
    if ours[0] != theirs[0]:
        if ours[0] == "error":
            return Mismatch("raises", f"{type(ours[1]).__name__}: {str(ours[1])[:160]}; torch computes")
        return Mismatch("computes", f"torch raises {type(theirs[1]).__name__}: {str(theirs[1])[:160]}")
    if ours[0] == "error":
        ours_class, theirs_class = type(ours[1]).__name__, type(theirs[1]).__name__.lstrip("_")
        if ours_class != theirs_class and not isinstance(ours[1], type(theirs[1])):
            return Mismatch("exception class", f"{ours_class}: {str(ours[1])[:120]} != torch's "
                                               f"{theirs_class}: {str(theirs[1])[:120]}")
        return None
    with_values = case.opdef.name not in _VALUELESS
    if len(ours[1]) != len(theirs[1]):
        return Mismatch("outputs", f"{len(ours[1])} outputs != torch's {len(theirs[1])}")
    for o, t in zip(ours[1], theirs[1]):
        mismatch = _compare_values(o, t, "result", with_values)
        if mismatch:
            return mismatch
    return _compare_gradients(ours[2], theirs[2])


def _compare_gradients(ours, theirs) -> Mismatch | None:
    if isinstance(ours, Exception) or isinstance(theirs, Exception):
        if isinstance(ours, Exception) and isinstance(theirs, Exception):
            return None
        if isinstance(ours, Exception):
            return Mismatch("backward raises", f"{type(ours).__name__}: {str(ours)[:160]}")
        return Mismatch("backward computes", f"torch raises {type(theirs).__name__}: {str(theirs)[:160]}")
    if (ours is None) != (theirs is None):
        return Mismatch("requires_grad", f"result requires grad: {ours is not None}, torch's: {theirs is not None}")
    if ours is None:
        return None
    for o, t in zip(ours, theirs):
        if (o is None) != (t is None):
            return Mismatch("gradient presence", f"gradient {'None' if o is None else 'given'}, torch's "
                                                 f"{'None' if t is None else 'given'}")
        if o is not None:
            mismatch = _compare_values(o, t, "gradient", True, scaled=True)
            if mismatch:
                return mismatch
    return None


def survey(examples: int, *, seed: int = 0) -> dict[tuple[str, str], tuple[Case, Mismatch]]:
    """Every mismatch class found in ``examples`` seeded cases (numbers ``seed * 10**6`` on),
    with its first case, except the listed ones (``is_listed``)."""
    found: dict = {}
    for index in range(seed * 10**6, seed * 10**6 + examples):
        case = seeded_case(index)
        mismatch = compare(case)
        if mismatch is not None and not is_listed(case, mismatch):
            found.setdefault(mismatch.key(case), (case, mismatch))
    return found


def unlisted_mismatches(found) -> list[str]:
    """One line per class in ``found`` that is neither deliberate nor an open bug, with its case."""
    return [f"{name} / {kind}: {mismatch.detail[:200]}\n    {(case.expression() or repr(case))[:500]}"
            for (name, kind), (case, mismatch) in sorted(found.items())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0, help="0: the fuzz test's own cases (its first ones)")
    options = parser.parse_args(argv)
    found = survey(options.examples, seed=options.seed)
    unlisted = unlisted_mismatches(found)
    print("\n".join(unlisted))
    print(f"{len(unlisted)} unlisted mismatch classes in {options.examples} cases")
    return 1 if unlisted else 0


if __name__ == "__main__":
    raise SystemExit(main())

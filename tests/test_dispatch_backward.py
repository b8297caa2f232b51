"""What a ``TorchDispatchMode`` sees during backward: the ops of PyTorch's gradient formulas.

The pinned lists are PyTorch 2.13's, logged for the same programs (``autograd.grad`` with a given
output gradient: no seed, no accumulation), compared as multisets with ``X.Scalar`` counted as
``X.Tensor`` (PyTorch's C++ formulas take Python numbers as Scalars; see issue 24). The torch test
runs ``tests/dispatch_backward_survey.py`` over the op table; the ops still differing are listed in
``KNOWN`` with the reason.
"""

from collections import Counter
from importlib import import_module

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes._ops import OPS
from tensormodes.utils._python_dispatch import TorchDispatchMode

from . import dispatch_backward_survey as survey
from .recording import aten_op_log


class Log(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []
        self.on = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.on:
            self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def backward_ops(expression: str, *shapes):
    """The ops logged by ``autograd.grad`` of ``expression`` (over leaves x, y, z of ``shapes``), and
    the gradients, which must equal the same program's without a mode bit for bit."""
    def run(mode):
        rng = np.random.default_rng(0)
        leaves = [tm.tensor(rng.uniform(-1, 1, s).astype(np.float32), requires_grad=True) for s in shapes]
        names = {"L": tm, "F": F, **dict(zip("xyz", leaves))}
        with mode:
            out = eval(expression, names)
        seed = tm.ones(tuple(out.shape))
        mode.on = True
        with mode:
            grads = tm.autograd.grad(out, leaves, seed)
        return mode.ops, [g.numpy() for g in grads]

    ops, grads = run(Log())
    _, plain = run(survey._Silent())
    for ours, eager in zip(grads, plain, strict=True):
        assert ours.tobytes() == eager.tobytes()
    return ops


# PyTorch 2.13's backward ops for each program (logged with torch's TorchDispatchMode).
PYTORCH_BACKWARD_OPS = {
    "x + y": ([(2, 3), (3,)], ["aten.sum.dim_IntList", "aten.view.default"]),
    "x - y": ([(2, 3), (2, 3)], ["aten.neg.default"]),
    "x * y": ([(2, 3), (2, 3)], ["aten.mul.Tensor", "aten.mul.Tensor"]),
    "x * 2": ([(2, 3)], ["aten.mul.Tensor"]),
    "x / y": ([(2, 3), (2, 3)], ["aten.div.Tensor", "aten.div.Tensor", "aten.neg.default", "aten.mul.Tensor",
                                 "aten.div.Tensor"]),
    "x @ y": ([(2, 3), (3, 4)], ["aten.t.default", "aten.mm.default", "aten.t.default", "aten.mm.default"]),
    "F.linear(x, y, z)": ([(2, 3), (4, 3), (4,)], [
        "aten.t.default", "aten.mm.default", "aten.t.default", "aten.mm.default", "aten.t.default",
        "aten.sum.dim_IntList", "aten.view.default", "aten.t.default"]),
    "F.relu(x)": ([(2, 3)], ["aten.detach.default", "aten.threshold_backward.default"]),
    "x.tanh()": ([(2, 3)], ["aten.detach.default", "aten.tanh_backward.default"]),
    "x.exp()": ([(2, 3)], ["aten.detach.default", "aten.mul.Tensor"]),
    "x.abs().log()": ([(2, 3)], ["aten.div.Tensor", "aten.sgn.default", "aten.mul.Tensor"]),
    "x.abs().sqrt()": ([(2, 3)], ["aten.detach.default", "aten.mul.Scalar", "aten.div.Tensor", "aten.sgn.default",
                                  "aten.mul.Tensor"]),
    "x.pow(3)": ([(2, 3)], ["aten.pow.Tensor_Scalar", "aten.mul.Scalar", "aten.mul.Tensor"]),
    "x.sum(1)": ([(2, 3)], ["aten.unsqueeze.default", "aten.expand.default"]),
    "x.mean()": ([(2, 3)], ["aten.expand.default", "aten.div.Scalar"]),
    "F.softmax(x, 1)": ([(2, 3)], ["aten.detach.default", "aten._softmax_backward_data.default"]),
    "F.log_softmax(x, 1)": ([(2, 3)], ["aten.detach.default", "aten._log_softmax_backward_data.default"]),
    "L.cat([x, y], 1)": ([(2, 3), (2, 2)], ["aten.slice.Tensor", "aten.slice.Tensor"]),
    "L.stack([x, y])": ([(2, 3), (2, 3)], ["aten.select.int", "aten.select.int"]),
    "L.cat([p * 2 for p in x.split(2, 1)], 1)": ([(2, 3)], [
        "aten.slice.Tensor", "aten.slice.Tensor", "aten.mul.Tensor", "aten.mul.Tensor", "aten.cat.default"]),
    "x.transpose(0, 1)": ([(2, 3)], ["aten.transpose.int"]),
    "x.view(3, 2)": ([(2, 3)], ["aten.view.default"]),
    "x.squeeze()": ([(1, 3, 1)], ["aten.unsqueeze.default", "aten.unsqueeze.default"]),
    "x.unsqueeze(1)": ([(2, 3)], ["aten.squeeze.dim"]),
    "x.clamp(-0.5, 0.5)": ([(2, 3)], ["aten.scalar_tensor.default", "aten.ge.Scalar", "aten.le.Scalar",
                                      "aten.logical_and_.default", "aten.where.self"]),
    "L.maximum(x, y)": ([(2, 3), (2, 3)], [
        "aten.div.Scalar", "aten.eq.Tensor", "aten.where.self", "aten.gt.Tensor", "aten.masked_fill_.Scalar",
        "aten.div.Scalar", "aten.eq.Tensor", "aten.where.self", "aten.lt.Tensor", "aten.masked_fill_.Scalar"]),
    "x.var(1)": ([(2, 3)], ["aten.unsqueeze.default", "aten.mean.dim", "aten.sub.Tensor", "aten.mul.Scalar",
                            "aten.mul.Tensor"]),
    "x.amax(1)": ([(2, 3)], ["aten.detach.default", "aten.view.default", "aten.eq.Tensor", "aten.view.default",
                             "aten.sum.dim_IntList", "aten.div.Tensor", "aten.mul.Tensor"]),
    "L.mv(x, y)": ([(2, 3), (3,)], ["aten.view.default", "aten.mul.Tensor", "aten.t.default", "aten.mv.default"]),
    "x.movedim(0, 2)": ([(2, 3, 4)], ["aten.permute.default"]),
    "x.erf()": ([(2, 3)], ["aten.pow.Tensor_Scalar", "aten.neg.default", "aten.exp.default", "aten.mul.Scalar",
                           "aten.mul.Tensor"]),
    "L.linalg.inv(x + 3 * L.eye(3))": ([(3, 3)], [
        "aten.detach.default", "aten.transpose.int", "aten.mm.default", "aten.transpose.int", "aten.mm.default",
        "aten.neg.default"]),
}


@pytest.mark.parametrize("expression", list(PYTORCH_BACKWARD_OPS))
def test_backward_ops_are_pytorchs(expression):
    shapes, expected = PYTORCH_BACKWARD_OPS[expression]
    ours = backward_ops(expression, *shapes)
    assert Counter(map(survey.normalise, ours)) == Counter(map(survey.normalise, expected))


def test_a_leafs_gradients_are_summed_then_accumulated_once():
    # PyTorch's engine sums a leaf's incoming gradients (add) and runs its AccumulateGrad once (detach).
    w = tm.ones(3, requires_grad=True)
    with Log() as log:
        loss = (w * 2).sum() + (w * 3).sum()
        log.on = True
        loss.backward()
    assert log.ops == ["aten.ones_like.default", "aten.expand.default", "aten.mul.Tensor", "aten.expand.default",
                       "aten.mul.Tensor", "aten.add.Tensor", "aten.detach.default"]
    assert w.grad.tolist() == [5.0, 5.0, 5.0]


# PyTorch 2.13's backward logs: AccumulateGrad keeps a first gradient itself (detach) only when nothing else
# holds it and it is laid out as its leaf; else it copies it into the leaf's strides (new_empty_strided, copy_),
# or clones it contiguous for a leaf that is not dense (x: a (2, 3) leaf, z: a transposed one, w: an expanded one)
_SEED_OPS = ["aten.ones_like.default", "aten.expand.default"]
_COPY = ["aten.new_empty_strided.default", "aten.copy_.default"]
ACCUMULATIONS = {
    "x.sum()": _SEED_OPS + _COPY,  # an expanded gradient
    "(x * 2).sum()": _SEED_OPS + ["aten.mul.Tensor", "aten.detach.default"],
    "(x + y).sum()": _SEED_OPS + _COPY + _COPY,
    "((x + y) * 2).sum()": _SEED_OPS + ["aten.mul.Tensor"] + _COPY + ["aten.detach.default"],  # shared, then not
    "(x.t() * 2).sum()": _SEED_OPS + ["aten.mul.Tensor", "aten.t.default"] + _COPY,  # transposed
    "(z * 2).sum()": _SEED_OPS + ["aten.mul.Tensor"] + _COPY,  # contiguous, the leaf is not: its strides
    "(w * 2).sum()": _SEED_OPS + ["aten.mul.Tensor", "aten.detach.default"],  # a leaf not dense: contiguous is kept
    "x.expand(3, 2, 3).sum()": _SEED_OPS + ["aten.sum.dim_IntList", "aten.view.default", "aten.detach.default"],
    # the edges of the row-major shortcut (first_grad_below): a size-1 dimension (v: (1, 3)), a 0-d leaf (s)
    "(v * 2).sum()": _SEED_OPS + ["aten.mul.Tensor", "aten.detach.default"],
    "(v.t() * 2).sum()": _SEED_OPS + ["aten.mul.Tensor", "aten.t.default", "aten.detach.default"],
    "(s * 2).sum()": _SEED_OPS + ["aten.mul.Tensor", "aten.detach.default"],
    # an empty leaf (e: (0, 3)) is dense, with a contiguous tensor's strides (NumPy gives it zeros)
    "(e * 2).sum()": _SEED_OPS + ["aten.mul.Tensor", "aten.detach.default"],
    "(e + e).sum()": _SEED_OPS + ["aten.add.Tensor", "aten.detach.default"],
}


@pytest.mark.parametrize("expression", list(ACCUMULATIONS))
def test_a_first_gradient_is_kept_or_copied_as_pytorchs_accumulate_grad_does(expression):
    def run(library):
        x, y = library.ones(2, 3, requires_grad=True), library.ones(2, 3, requires_grad=True)
        z = library.ones(3, 2).t().detach().requires_grad_()
        w = library.ones(2, 3).expand(4, 2, 3).detach().requires_grad_()
        v, s = library.ones(1, 3, requires_grad=True), library.ones((), requires_grad=True)
        e = library.ones(0, 3, requires_grad=True)
        leaves = {"x": x, "y": y, "z": z, "w": w, "v": v, "s": s, "e": e}
        out = eval(expression, leaves)
        with aten_op_log(library) as log:
            out.backward()
        leaf = leaves[expression[1]] if expression[1] in "zwvse" else x
        return log.ops, leaf.grad.stride(), leaf.grad.tolist()

    ours = run(tm)
    assert ours[0] == ACCUMULATIONS[expression]
    # the leaf's layout (a transposed (1, 3) gradient is laid out as its leaf too: a size-1 dimension's stride
    # is not looked at)
    strides = {"z": (1, 2), "w": (6, 3, 1), "s": (), "v": (1, 1) if "v.t()" in expression else (3, 1)}
    assert ours[1] == strides.get(expression[1], (3, 1))
    try:
        import torch
    except ImportError:
        return
    assert run(torch) == ours


def test_atan2_gradient_at_the_origin_is_zero():
    # PyTorch masks the infinite reciprocal of x**2 + y**2 at (0, 0): the gradient there is 0, not NaN.
    a = tm.tensor([0.0, 1.0, 0.0], requires_grad=True)
    b = tm.tensor([0.0, 0.0, -0.0], requires_grad=True)
    tm.atan2(a, b).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0] and b.grad.tolist() == [0.0, -1.0, 0.0]


def test_pow_with_exponent_zero_has_zero_gradient_everywhere():
    x = tm.tensor([0.0, 2.0], requires_grad=True)
    (x ** 0).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]  # was NaN at 0 (0 * 0 ** -1)


def test_pow_saves_its_output_only_for_the_exponents_gradient():
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    with Log() as log:
        log.on = True
        y = x ** 2
    assert log.ops == ["aten.pow.Tensor_Scalar"]  # no detach of a saved output
    e = tm.tensor([2.0, 3.0], requires_grad=True)
    with Log() as log:
        log.on = True
        z = x ** e
    assert log.ops == ["aten.pow.Tensor_Tensor", "aten.detach.default"]
    tm.autograd.grad(y.sum() + z.sum(), [x, e])


def test_sort_saves_only_its_indices():
    x = tm.tensor([[3.0, 1.0, 2.0]], requires_grad=True)
    with Log() as log:
        log.on = True
        values, _ = x.sort(1)
        cumulative, _ = x.cummax(1)
    assert log.ops == ["aten.sort.default", "aten.cummax.default"]  # no detach of a saved values output
    gx, = tm.autograd.grad([values * tm.tensor([1.0, 2.0, 3.0]), cumulative], [x], [tm.ones(1, 3), tm.ones(1, 3)])
    assert gx.tolist() == [[6.0, 1.0, 2.0]]


# (forward ops, backward ops) PyTorch 2.13 logs: each overload saves what its formula reads
SELECTING_REDUCTIONS = {
    "x.max(1).values": (["aten.max.dim"], ["aten.ones.default", "aten.unsqueeze.default", "aten.unsqueeze.default",
                                           "aten.new_zeros.default", "aten.scatter.src"]),
    "x.min(0, keepdim=True)[0]": (["aten.min.dim"], ["aten.ones.default", "aten.new_zeros.default",
                                                     "aten.scatter.src"]),
    "x.nanmedian(0).values": (["aten.nanmedian.dim"], [
        "aten.ones.default", "aten.unsqueeze.default", "aten.unsqueeze.default", "aten.new_zeros.default",
        "aten.scatter.src"]),
    "L.max(x, x * 2)": (["aten.mul.Tensor", "aten.maximum.default"], [
        "aten.ones.default", "aten.div.Scalar", "aten.eq.Tensor", "aten.where.self", "aten.gt.Tensor",
        "aten.masked_fill_.Scalar", "aten.div.Scalar", "aten.eq.Tensor", "aten.where.self", "aten.lt.Tensor",
        "aten.masked_fill_.Scalar", "aten.mul.Tensor", "aten.add.Tensor"]),
}


@pytest.mark.parametrize("expression", list(SELECTING_REDUCTIONS))
def test_max_of_a_dim_saves_only_its_indices(expression):
    # max(dim) / min(dim) / median(dim) save their indices alone, max(other) nothing of its result
    # (they saved the whole (values, indices) result: a detach when backward unpacked the values)
    def run(library):
        x = library.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.5]], requires_grad=True)
        with aten_op_log(library) as log:
            y = eval(expression, {"x": x, "L": library})
            count = len(log.ops)
            gx, = library.autograd.grad(y, x, library.ones(tuple(y.shape)))
        return log.ops[:count], log.ops[count:], gx.tolist()

    ours = run(tm)
    assert ours[:2] == SELECTING_REDUCTIONS[expression]
    assert ours[2] == run(tm)[2]
    try:
        import torch
    except ImportError:
        return
    assert run(torch) == ours


def test_cummax_of_a_zero_dimensional_tensor_scatters_back():
    x, seed = tm.tensor(2.0, requires_grad=True), tm.tensor(3.0)
    with Log() as log:
        values, _ = x.cummax(0)
        log.on = True
        gx, = tm.autograd.grad(values, [x], seed)
    assert gx.item() == 3.0 and log.ops == ["aten.zeros.default", "aten.scatter_add.default"]


@pytest.mark.parametrize("norm", ["L.linalg.vector_norm(x, dim=1)", "x.std(1)"])
def test_masked_denominators_keep_a_finite_second_derivative(norm):
    # Under a mode the first derivative takes PyTorch's ops (x / 0 masked afterwards); with create_graph the
    # denominators are masked before dividing, so a second derivative at a zero norm is finite, as eagerly.
    x = tm.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
    with Log():
        y = eval(norm, {"L": tm, "x": x}).sum()
        g, = tm.autograd.grad(y, x, create_graph=True)
        gg, = tm.autograd.grad(g.sum(), x)
    assert bool(tm.isfinite(g).all()) and bool(tm.isfinite(gg).all())
    assert g[0].tolist() == [0.0, 0.0]


def test_split_and_unbind_gradients_are_joined():
    x = tm.arange(6.0).reshape(2, 3).requires_grad_()
    a, b = x.split([1, 2], 1)
    c, d = x.unbind(0)
    gx, = tm.autograd.grad([a.sum() * 2 + b.sum(), (c * 3).sum() + d.sum()], [x])
    assert gx.tolist() == [[5.0, 4.0, 4.0], [3.0, 2.0, 2.0]]


_NO_OP = ("PyTorch's formula calls an ATen op tensormodes has no op for yet (as_strided_backward's "
          "as_strided/copy_), or its composite decomposes "
          "differently (quantile: sort, lerp ...); cumprod's and prod's formulas take their zero-safe paths under "
          "a dispatch mode in PyTorch (cumsum, flip, cat ...): the formula here computes the same values")
_NUMBER = ("PyTorch's formula passes a Python number where a tensor goes (where(c, 0, g), 1 - x, value / t): its "
           "dispatch level sees scalar_tensor / the composite's ops; tensormodes' public calls with numbers do not")
_COMPOSITE = ("PyTorch implements the op (or its backward) as a composite whose pieces record the gradient "
              "(einsum/tensordot/inner -> bmm/mm, matrix_power, kron, block_diag, square -> pow, x.real -> "
              "view_as_real + select ...): a "
              "decomposition at the dispatch level, not a formula")
_VALUES = ("kept different on purpose: PyTorch's form would change tensormodes' eager values (mask * g gives NaN "
           "for an infinite g and -0.0 where g < 0; pow(3) rounds differently from r * r * r)")
_SPEED = ("PyTorch's formula computes erfinv again from the input; tensormodes keeps the result (saved, a detach) "
          "as its erfinv kernel costs more than the saving")
_DOUBLE = ("a backward op's own gradient (double backward): PyTorch's formula differs in form, same values")
_LINALG = ("linear-algebra gradients: PyTorch's formulas go through LU solves, diag_embed and batched bmm; "
           "tensormodes' use inverses and matmul (same values up to rounding, deliberately unchanged here)")

_NOT_ALIGNED_YET = ("declared in the eighth session with PyTorch's gradient values (their differential tests "
                    "compare them), but formulas not yet written op for op as derivatives.yaml's: 2-D transposes "
                    "as t where PyTorch's mT/mH give transpose.int, solves or products where PyTorch calls "
                    "solve_triangular / its own backward op, full where it makes scalar_tensor, an out-of-place "
                    "digamma where it runs digamma_")

KNOWN = {
    **dict.fromkeys(["as_strided_copy", "cholesky", "cholesky_inverse", "cholesky_solve", "dist", "fill",
                     "linalg_cholesky_ex", "linalg_lu", "linalg_lu_factor", "linalg_lu_factor_ex", "linalg_lu_solve",
                     "linalg_solve_ex", "linalg_solve_triangular", "lu", "lu_solve", "mvlgamma", "orgqr", "ormqr",
                     "renorm", "special_i1e", "special_multigammaln", "triangular_solve"], _NOT_ALIGNED_YET),
    **dict.fromkeys(["as_strided", "cumprod", "prod", "quantile", "nanquantile"], _NO_OP),
    **dict.fromkeys(["where", "where_method", "logcumsumexp", "atanh", "arctanh", "addcdiv",
                     "float_power", "logaddexp2", "sgn"], _NUMBER),
    **dict.fromkeys(["einsum", "inner", "tensordot", "kron", "block_diag", "matrix_power", "complex",
                     "polar"], _COMPOSITE),
    **dict.fromkeys(["max", "min", "median", "nanmedian", "nansum", "nanmean"], _VALUES),
    **dict.fromkeys(["erfinv", "special_erfinv"], _SPEED),
    "_native_group_norm": ("PyTorch saves the mean and rstd as the op's outputs (two detaches when its backward "
                           "unpacks them); tensormodes saves them as the kernel's intermediates: the backward op "
                           "(native_group_norm_backward) is the same"),
    "binary_cross_entropy": ("the input's gradient is PyTorch's binary_cross_entropy_backward; the target's keeps "
                             "tensormodes' -log(x / (1 - x)) (PyTorch's composite: logit, neg_, mul, div_; other "
                             "rounding)"),
    "_binary_cross_entropy_with_logits": ("the target's gradient divides the output gradient by the count before "
                                          "the product (tensormodes' rounding, kept); PyTorch divides the product "
                                          "in place (div_)"),
    **dict.fromkeys(["_softmax_backward_data", "_log_softmax_backward_data", "_convolution_backward",
                     "_cross_entropy_loss_backward", "_sigmoid_backward", "max_pool2d_with_indices_backward",
                     "gelu_backward", "elu_backward", "hardswish_backward", "mse_loss_backward",
                     "softplus_backward", "glu_backward", "_prelu_kernel_backward", "smooth_l1_loss_backward",
                     "huber_loss_backward", "binary_cross_entropy_backward"],
                    _DOUBLE),
    # Ops added after the survey's alignment (everyday layers, fft): their formulas keep their own ops
    **dict.fromkeys(["_linalg_lstsq", "_max_pool3d_with_indices", "_multi_margin_loss", "_multilabel_margin_loss",
                     "addbmm", "affine_grid_generator", "avg_pool3d", "frexp", "ldexp", "grid_sampler", "hardshrink",
                     "grid_sampler_3d", "index_reduce", "linalg_eigvals", "linalg_householder_product",
                     "linalg_matrix_exp",
                     "linalg_matrix_power", "linalg_pinv", "masked_scatter", "matrix_exp", "max_pool3d",
                     "pdist", "pinverse", "rms_norm", "softshrink", "svd"],
                    "added after the alignment: the formula's own ops (values equal PyTorch's); PyTorch's "
                    "backward ops (``*_backward``, its composites' pieces) not yet"),
    **dict.fromkeys(["fft_hfft", "fft_ifft", "fft_ihfft"],
                    "PyTorch conjugates lazily (_conj: a view with a conjugate bit, resolved by clone); tensormodes "
                    "has no conjugate bit, its conj is a copy (conj.default): the transforms' ops are PyTorch's"),
    "mkldnn_rnn_layer": ("the oracle (PyTorch's lstm on the same arguments, op_samples._torch_lstm_layer) takes its "
                         "states as hx[None] and returns hy[0]: those selects and their backward are the oracle's"),
    "mkldnn_rnn_layer_backward": ("a backward op's own gradient (double backward), through the layer's steps of "
                                  "public ops and autograd.grad; the oracle differentiates PyTorch's lstm"),
    **dict.fromkeys(["linalg_svd", "linalg_svdvals", "linalg_det", "linalg_slogdet", "det", "slogdet", "logdet",
                     "linalg_solve", "linalg_cholesky", "linalg_qr", "linalg_eigh", "linalg_eigvalsh"], _LINALG),
}


def test_known_names_ops_of_the_table():
    assert set(KNOWN) <= set(OPS)


# Ops whose formulas must compute only the gradients wanted (PyTorch's nodes compute no other).
_ONE_OPERAND = ["atan2", "rsub", "sub", "dot", "vdot", "scatter", "scatter_add", "index_add", "index_copy",
                "masked_fill", "logaddexp", "copysign", "clamp", "clamp_min", "maximum", "fmax", "_threshold_backward",
                "copy_", "fill_", "mul", "div", "mm", "mv", "outer", "addmm"]


@pytest.mark.torch
@pytest.mark.parametrize("leaf", [0, 1])
def test_only_wanted_gradients_are_computed(leaf):
    pytest.importorskip("torch")
    differing = survey.survey(_ONE_OPERAND, first_only=True, leaves_wanted=slice(leaf, leaf + 1))
    assert {name: (dict(ours), dict(theirs)) for name, (ours, theirs) in differing.items()} == {}


@pytest.mark.torch
def test_known_differences_are_current():
    # An op fixed (here or by a change elsewhere: new_zeros at the dispatch level, a new backward op) leaves KNOWN.
    pytest.importorskip("torch")
    assert sorted(set(KNOWN) - set(survey.survey(KNOWN, first_only=True))) == []


@pytest.mark.torch
def test_backward_ops_match_pytorch_across_the_op_table():
    pytest.importorskip("torch")
    differing = survey.survey(first_only=True)
    unexplained = {name: (dict(ours), dict(theirs)) for name, (ours, theirs) in differing.items()
                   if name not in KNOWN}
    assert unexplained == {}


def _forward_backward_ops(L, program: str) -> list[str]:
    """The aten ops a logging dispatch mode sees while ``program`` (a loss over common model
    pieces) runs forward and ``autograd.grad`` runs its backward, in library ``L``."""
    F = L.nn.functional
    rng = np.random.default_rng(0)

    def tensor(*shape, grad=False):
        return L.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=grad)

    x, images = tensor(8, 16), tensor(2, 3, 8, 8)
    w1, b1, w2, b2 = tensor(32, 16, grad=True), tensor(32, grad=True), tensor(4, 32, grad=True), tensor(4, grad=True)
    kernel, gamma, table = tensor(4, 3, 3, 3, grad=True), tensor(16, grad=True), tensor(10, 16, grad=True)
    y = L.tensor(rng.integers(0, 4, 8))
    programs = {
        "mlp": lambda: F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), y),
        "mean": lambda: F.linear(x, w1, b1).tanh().mean(),
        "mse": lambda: F.mse_loss(F.linear(x, w1, b1), L.zeros(8, 32)),
        "cnn": lambda: F.max_pool2d(F.relu(F.conv2d(images, kernel, padding=1)), 2).sum(),
        "layer_norm_gelu": lambda: F.gelu(F.layer_norm(x, (16,), gamma)).pow(2).sum(),
        "softmax": lambda: (F.softmax(x @ w1.t(), -1) * 2).sum(),
        "embedding": lambda: F.embedding(L.tensor([1, 2, 3, 1]), table).sigmoid().sum() / 3,
        "sdpa": lambda: F.scaled_dot_product_attention(x.view(1, 2, 4, 16) * gamma, x.view(1, 2, 4, 16),
                                                       x.view(1, 2, 4, 16), is_causal=True).sum(),
    }
    leaves = [w1, b1, w2, b2, kernel, gamma, table]

    with aten_op_log(L) as log:
        L.autograd.grad(programs[program](), leaves, allow_unused=True)
    return log.ops


@pytest.mark.torch
@pytest.mark.parametrize("program", ["mlp", "mean", "mse", "cnn", "layer_norm_gelu", "softmax", "embedding", "sdpa"])
def test_forward_and_backward_of_common_model_pieces_send_pytorchs_ops_in_its_order(program):
    # What make_fx's joint graphs, DebugMode and FLOP counting see: the backward ops PyTorch's
    # formulas call (threshold_backward, nll_loss_backward, mse_loss_backward, convolution_backward,
    # max_pool2d_with_indices_backward, gelu_backward, native_layer_norm_backward, sigmoid_backward,
    # embedding_dense_backward, the flash attention's backward), their Scalar overloads, no detach
    # of nll_loss_forward's total_weight.
    torch = pytest.importorskip("torch")
    assert _forward_backward_ops(tm, program) == _forward_backward_ops(torch, program)


def _normalisation_ops(L, program: str) -> list[str]:
    """The aten ops (forward and backward) a logging dispatch mode sees for a normalisation layer
    in library ``L``, and its running statistics after the step."""
    rng = np.random.default_rng(0)
    x = L.tensor(rng.standard_normal((4, 3, 5)).astype(np.float32), requires_grad=True)
    layer = {"batch_norm_train": L.nn.BatchNorm1d(3), "batch_norm_eval": L.nn.BatchNorm1d(3).eval(),
             "instance_norm": L.nn.InstanceNorm1d(3, affine=True, track_running_stats=True)}[program]

    with aten_op_log(L) as log:
        loss = (layer(x) * 2).sum()
        forward = len(log.ops)
        L.autograd.grad(loss, [x, layer.weight, layer.bias])
    # the backward's order of independent nodes is the engine's: compared as a multiset
    return log.ops[:forward], sorted(log.ops[forward:]), [layer.running_mean.tolist(), layer.running_var.tolist()]


@pytest.mark.torch
@pytest.mark.parametrize("program", ["batch_norm_train", "batch_norm_eval", "instance_norm"])
def test_normalisation_layers_send_pytorchs_ops(program):
    # native_batch_norm updates the running statistics itself (no ops of ours around it), and its
    # backward is native_batch_norm_backward, in training and evaluation.
    torch = pytest.importorskip("torch")
    ours, theirs = _normalisation_ops(tm, program), _normalisation_ops(torch, program)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)


# -- new_* at the dispatch level, the seed, mm's order (issue 24) ---------------------------------

def _full_backward_log(library, mode_class, expression: str, *shapes):
    """Every op a dispatch mode sees while ``expression(...).sum().backward()`` runs, in order."""
    class Logged(mode_class):
        def __init__(self):
            super().__init__()
            self.ops, self.on = [], False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if self.on:
                self.ops.append(f"{func} {sorted((kwargs or {}).items(), key=str)}".replace("torch.", "tensormodes."))
            return func(*args, **(kwargs or {}))

    leaves = [library.tensor(np.arange(np.prod(s), dtype=np.float32).reshape(s) * 0.37 % 1, requires_grad=True)
              for s in shapes]
    mode = Logged()
    with mode:
        out = eval(expression, {"L": library, **dict(zip("xyz", leaves))})
        mode.on = True
        out.sum().backward()
    return [entry.removesuffix(" []") for entry in mode.ops]


_SEED = ["aten.sum.default", "aten.ones_like.default [('memory_format', tensormodes.preserve_format), "
         "('pin_memory', False)]", "aten.expand.default"]
# PyTorch 2.13's, in order, with the keyword arguments (``torch`` read ``tensormodes``): the seed passes
# ``memory_format``; a formula's ``grad.new_zeros(shape)`` (C++) none of the Python binding's options.
# (index_select's formula passes ``grad.options()``, dtype, layout and device, which tensormodes, without
# layout objects, does not: its op names match, checked by the survey.)
FULL_BACKWARD_LOGS = {
    "x.gather(1, L.tensor([[0], [2]]))": ([(2, 3)], _SEED + [
        "aten.new_zeros.default", "aten.scatter_add.default", "aten.detach.default"]),
    "x.sort(1).values": ([(2, 3)], _SEED + [
        "aten.new_zeros.default", "aten.scatter.src", "aten.detach.default"]),
    "x @ y": ([(3,), (3, 4)], _SEED + [
        "aten.unsqueeze.default", "aten.t.default", "aten.mm.default", "aten.t.default", "aten.mm.default",
        "aten.detach.default", "aten.squeeze.dim", "aten.detach.default"]),
    "x @ y.t()": ([(2, 3), (4, 3)], _SEED + [
        "aten.t.default", "aten.mm.default", "aten.t.default", "aten.t.default", "aten.mm.default",
        "aten.detach.default", "aten.t.default", "aten.detach.default"]),
}


@pytest.mark.parametrize("expression", list(FULL_BACKWARD_LOGS))
def test_backward_logs_are_pytorchs_in_order(expression):
    shapes, expected = FULL_BACKWARD_LOGS[expression]
    assert _full_backward_log(tm, TorchDispatchMode, expression, *shapes) == expected
    try:
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode as TorchMode
    except ImportError:
        return
    assert _full_backward_log(torch, TorchMode, expression, *shapes) == expected


def test_new_factories_are_ops_with_pytorchs_schemas():
    aten = tm.ops.aten
    assert [str(getattr(aten, name).default._schema) for name in ("new_zeros", "new_full")] == [
        "aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor",
        "aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, "
        "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"]
    x = tm.ones(2, dtype=tm.int32)
    with Log() as log:
        log.on = True
        made = [x.new_zeros(2, 3), x.new_ones((1,), dtype=tm.float64), x.new_empty([0]), x.new_full((2,), 7)]
    assert log.ops == ["aten.new_zeros.default", "aten.new_ones.default", "aten.new_empty.default",
                       "aten.new_full.default"]
    assert [(t.dtype, tuple(t.shape)) for t in made] == [(tm.int32, (2, 3)), (tm.float64, (1,)), (tm.int32, (0,)),
                                                         (tm.int32, (2,))]
    assert made[3].tolist() == [7, 7] and not tm.ones(2, requires_grad=True).new_zeros(2).requires_grad
    assert tm.ones(2, device="meta").new_zeros(3).is_meta
    with pytest.raises(TypeError, match=r"^new_full\(\): argument 'size' \(position 1\) must be tuple of ints"):
        x.new_full(2, 1)


# -- composites decomposed as PyTorch's (issue 24 §3 leftovers) -------------------------------------

def _forward_and_backward(library, expression: str, *shapes):
    """``(forward ops, backward ops)`` a logging dispatch mode of ``library`` sees for ``expression``
    over float leaves x, y of ``shapes`` (backward: ``autograd.grad`` with ones), and the gradients."""
    mode = aten_op_log(library)
    leaves = [library.tensor(np.arange(np.prod(s), dtype=np.float32).reshape(s) * 0.37 % 1 - 0.5, requires_grad=True)
              for s in shapes]
    with mode:
        out = eval(expression, {"L": library, **dict(zip("xyz", leaves))})
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        forward = list(mode.ops)
        grads = library.autograd.grad(outs, leaves, [library.ones(tuple(o.shape), dtype=o.dtype) for o in outs])
    return forward, mode.ops[len(forward):], [g.detach().numpy() for g in grads] + [
        o.detach().numpy() for o in outs if not o.is_complex()]


_SLICE, _SLICE_BACKWARD = "aten.slice.Tensor", "aten.slice_backward.default"
COMPOSITE_LOGS = {
    "x.tensor_split(3, 1)": ([(2, 7)], [_SLICE] * 3, ["aten.ones.default"] * 3 + [
        _SLICE_BACKWARD, _SLICE_BACKWARD, "aten.add.Tensor", _SLICE_BACKWARD, "aten.add.Tensor"]),
    "L.tensor_split(x, [1, 9], 1)": ([(2, 7)], [_SLICE] * 3, ["aten.ones.default"] * 3 + [
        _SLICE_BACKWARD, _SLICE_BACKWARD, "aten.add.Tensor", _SLICE_BACKWARD, "aten.add.Tensor"]),
    "L.vsplit(x, [1])": ([(2, 3)], [_SLICE] * 2, ["aten.ones.default"] * 2 + [
        _SLICE_BACKWARD, _SLICE_BACKWARD, "aten.add.Tensor"]),
    "x.diff(dim=1)": ([(2, 4)], [_SLICE, _SLICE, "aten.sub.Tensor"], [
        "aten.ones.default", "aten.neg.default", _SLICE_BACKWARD, _SLICE_BACKWARD, "aten.add.Tensor"]),
    "x.diff(n=2, dim=0, prepend=y)": ([(3, 2), (1, 2)], [
        "aten.cat.default", _SLICE, _SLICE, "aten.sub.Tensor", _SLICE, _SLICE, "aten.sub.Tensor"], [
        "aten.ones.default", "aten.neg.default", _SLICE_BACKWARD, _SLICE_BACKWARD, "aten.add.Tensor",
        "aten.neg.default", _SLICE_BACKWARD, _SLICE_BACKWARD, "aten.add.Tensor", _SLICE, _SLICE]),
}
COMPOSITE_LOGS.update({
    "x.repeat_interleave(2, 1)": ([(2, 3)], [
        "aten.unsqueeze.default", "aten.expand.default", "aten.clone.default", "aten.view.default"], [
        "aten.ones.default", "aten.view.default", "aten.sum.dim_IntList", "aten.squeeze.dim"]),
    "x.t().repeat_interleave(9)": ([(2, 3)], [
        "aten.t.default", "aten.clone.default", "aten._unsafe_view.default", "aten.unsqueeze.default",
        "aten.expand.default", "aten.clone.default", "aten.view.default"], [
        "aten.ones.default", "aten.view.default", "aten.sum.dim_IntList", "aten.squeeze.dim", "aten.view.default",
        "aten.t.default"]),
})
COMPOSITE_LOGS.update({
    "L.take_along_dim(x[:1], L.tensor([[0, 2, -1], [1, 1, 1]]), 1)": ([(2, 3)], [
        _SLICE, "aten.lift_fresh.default", "aten.expand.default", "aten.expand.default", "aten.remainder.Scalar",
        "aten.gather.default"], [
        "aten.ones.default", "aten.new_zeros.default", "aten.scatter_add.default", "aten.sum.dim_IntList",
        _SLICE_BACKWARD]),
    "L.take_along_dim(x, L.tensor([0, 5]))": ([(2, 3)], [
        "aten.lift_fresh.default", "aten.view.default", "aten.view.default", "aten.gather.default"], [
        "aten.ones.default", "aten.new_zeros.default", "aten.scatter_add.default", "aten.view.default"]),
})
COMPOSITE_LOGS.update({
    "L.trapezoid(x, dx=0.3, dim=0)": ([(3, 5)], [
        "aten.select.int", "aten.select.int", "aten.add.Tensor", "aten.mul.Scalar", "aten.sum.dim_IntList",
        "aten.sub.Tensor", "aten.mul.Scalar"], [
        "aten.ones.default", "aten.mul.Scalar", "aten.neg.default", "aten.unsqueeze.default", "aten.expand.default",
        "aten.mul.Scalar", "aten.select_backward.default", "aten.add.Tensor", "aten.select_backward.default",
        "aten.add.Tensor"]),
})
# torch.fft's transforms: the input resized (slice to shrink, one constant_pad_nd to grow), then ATen's
# _fft_r2c / _fft_c2r / _fft_c2c; their formulas' ops backward (fft_r2c_backward, fft_c2r_backward)
_R2C_BACKWARD = ["aten.new_zeros.default", _SLICE, "aten.copy_.default", "aten._fft_c2c.default",
                 "aten.view_as_real.default", "aten.select.int"]
_C2R_BACKWARD = ["aten._fft_r2c.default", _SLICE, "aten.mul_.Scalar"]
_TO_COMPLEX, _REAL_PART = ["aten._to_copy.default"], ["aten.view_as_real.default", "aten.select.int"]
_PAD = "aten.constant_pad_nd.default"
COMPOSITE_LOGS.update({
    "L.fft.rfft(x)": ([(2, 6)], ["aten._fft_r2c.default"], ["aten.ones.default", *_R2C_BACKWARD]),
    "L.fft.rfft(x, n=8, norm='ortho')": ([(2, 6)], [_PAD, "aten._fft_r2c.default"],
                                         ["aten.ones.default", *_R2C_BACKWARD, _PAD]),
    "L.fft.rfft(x, n=4)": ([(2, 6)], [_SLICE, "aten._fft_r2c.default"],
                           ["aten.ones.default", *_R2C_BACKWARD, _SLICE_BACKWARD]),
    "L.fft.rfftn(x, s=(3, 4))": ([(2, 6)], [_SLICE, _PAD, "aten._fft_r2c.default"],
                                 ["aten.ones.default", *_R2C_BACKWARD, _PAD, _SLICE_BACKWARD]),
    "L.fft.fft(x)": ([(2, 6)], ["aten._fft_r2c.default"], ["aten.ones.default", "aten._fft_c2c.default", *_REAL_PART]),
    "L.fft.fft2(x, s=(1, 9))": ([(2, 6)], [*_TO_COMPLEX, _SLICE, _PAD, "aten._fft_c2c.default"], [
        "aten.ones.default", "aten._fft_c2c.default", _PAD, _SLICE_BACKWARD, *_REAL_PART]),
    "L.fft.irfft(x.to(L.complex64), n=9)": ([(2, 4)], [*_TO_COMPLEX, _PAD, "aten._fft_c2r.default"],
                                            ["aten.ones.default", *_C2R_BACKWARD, _PAD, *_REAL_PART]),
    "L.fft.irfftn(x.to(L.complex64), s=(3, 5))": ([(2, 4)], [*_TO_COMPLEX, _SLICE, _PAD, "aten._fft_c2r.default"], [
        "aten.ones.default", *_C2R_BACKWARD, _PAD, _SLICE_BACKWARD, *_REAL_PART]),
    "L.fft.ihfftn(x, s=(3, 5))": ([(2, 4)], [_PAD, "aten._fft_r2c.default", "aten._conj_physical.default",
                                             "aten._fft_c2c.default"], [
        "aten.ones.default", "aten._fft_c2c.default", "aten._conj_physical.default", *_R2C_BACKWARD, _PAD]),
    "L.fft.fft(x.to(L.complex64), n=3)": ([(2, 4)], [*_TO_COMPLEX, _SLICE, "aten._fft_c2c.default"],
                                          ["aten.ones.default", "aten._fft_c2c.default", _SLICE_BACKWARD, *_REAL_PART]),
    "x.to(L.complex64).imag * 2": ([(2, 3)], [*_TO_COMPLEX, "aten.view_as_real.default", "aten.select.int",
                                              "aten.mul.Tensor"], [
        "aten.ones.default", "aten.mul.Tensor", "aten.select_backward.default", "aten.view_as_complex.default",
        *_REAL_PART]),
})


@pytest.mark.parametrize("expression", list(COMPOSITE_LOGS))
def test_composites_reach_the_dispatch_level_as_pytorchs(expression):
    shapes, forward, backward = COMPOSITE_LOGS[expression]
    ours = _forward_and_backward(tm, expression, *shapes)
    normalised = [survey.normalise(op) for op in ours[0]] == [survey.normalise(op) for op in forward]
    assert normalised and Counter(map(survey.normalise, ours[1])) == Counter(map(survey.normalise, backward))
    plain = [tm.tensor(np.arange(np.prod(s), dtype=np.float32).reshape(s) * 0.37 % 1 - 0.5, requires_grad=True)
             for s in shapes]
    out = eval(expression, {"L": tm, **dict(zip("xyz", plain))})
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    eager = tm.autograd.grad(outs, plain, [tm.ones(tuple(o.shape), dtype=o.dtype) for o in outs])
    eager = [g.numpy() for g in eager] + [o.detach().numpy() for o in outs if not o.is_complex()]
    assert [a.tobytes() for a in eager] == [a.tobytes() for a in ours[2]]  # a mode changes no bit
    try:
        import torch
    except ImportError:
        return
    theirs = _forward_and_backward(torch, expression, *shapes)
    assert theirs[0] == forward and Counter(theirs[1]) == Counter(backward)  # PyTorch's (mul_.Scalar)
    for a, b in zip(ours[2], theirs[2], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_diff_of_order_zero_copies_the_input_alone():
    # PyTorch's diff(n=0) ignores prepend and append: a copy of the input (it joined them before)
    x = tm.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = tm.tensor([[9.0], [9.0]], requires_grad=True)
    out = tm.diff(x, n=0, prepend=y)
    assert out.tolist() == [[1.0, 2.0], [3.0, 4.0]] and out.data_ptr() != x.data_ptr()
    assert tm.diff(x.to("meta"), n=0, prepend=y.to("meta")).shape == (2, 2)
    gx, gy = tm.autograd.grad(out.sum(), [x, y], allow_unused=True)
    assert gx.tolist() == [[1.0, 1.0], [1.0, 1.0]] and gy is None


def test_real_transform_ops_have_pytorchs_schemas():
    aten = tm.ops.aten
    assert [str(op._schema) for op in (aten._fft_r2c.default, aten._fft_c2r.default, aten._conj_physical.default)] == [
        "aten::_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
        "aten::_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor",
        "aten::_conj_physical(Tensor self) -> Tensor"]
    assert tm.Tag.core in aten._fft_r2c.default.tags and tm.Tag.core in aten._fft_c2r.default.tags
    x = tm.tensor([1.0, 2.0, 3.0, 4.0])
    assert aten._fft_r2c.default(x, [0], 2, False).tolist() == [2.5 + 0j, -0.5 + 0.5j, -0.5 + 0j, -0.5 - 0.5j]
    assert aten._fft_c2r.default(tm.tensor([4.0 + 0j, 0j, 0j]), [0], 0, 4).tolist() == [4.0, 4.0, 4.0, 4.0]
    with pytest.raises(RuntimeError, match="^Only supports floating-point dtypes, but found: ComplexFloat$"):
        aten._fft_r2c.default(x.to(tm.complex64), [0], 0, True)
    with pytest.raises(RuntimeError, match="^Only supports complex dtypes, but found: Float$"):
        aten._fft_c2r.default(x, [0], 0, 6)
    with pytest.raises(RuntimeError, match=r"expected 5 frequencies \(last_dim_size // 2 \+ 1\)"):
        aten._fft_c2r.default(tm.ones(3, dtype=tm.complex64), [0], 0, 9)
    assert aten._fft_c2r.default(tm.ones(2, 3, device="meta", dtype=tm.complex128), [0, 1], 0, 5).shape == (2, 5)


@pytest.mark.parametrize("expression", ["L.fft.hfftn(x.to(L.complex64), s=(3, 5))", "L.fft.ihfftn(x, dim=(0, 1))",
                                        "L.fft.hfft2(x.to(L.complex128), norm='ortho')"])
def test_multi_dimensional_hermitian_transforms_compute_as_pytorch(expression):
    # hfftn / ihfftn: a _fft_c2c over the leading dims and the real transform of the last, as PyTorch (they
    # were one NumPy irfftn / rfftn of all dims: other rounding); a mode sees those ops, changing no bit
    x = tm.tensor(np.arange(8, dtype=np.float32).reshape(2, 4) * 0.37 % 1, requires_grad=True)
    plain = eval(expression, {"L": tm, "x": x})
    with aten_op_log(tm) as log:
        logged = eval(expression, {"L": tm, "x": x})
    assert plain.detach().numpy().tobytes() == logged.detach().numpy().tobytes()
    assert "aten._fft_c2c.default" in log.ops
    torch = pytest.importorskip("torch")
    theirs = eval(expression, {"L": torch, "x": torch.tensor(x.detach().numpy())}).resolve_conj().numpy()
    np.testing.assert_allclose(plain.detach().numpy(), theirs, rtol=1e-6, atol=1e-6)


def test_nan_to_num_gradient_is_pytorchs_product_with_the_finite_mask():
    # grad * isfinite(x), PyTorch's formula: an infinite gradient where x is not finite gives NaN, a negative one
    # -0.0 (a where() gave 0 for both); a mode sees isfinite as PyTorch's composite (abs, ne, eq, mul)
    x = tm.tensor([1.0, float("inf"), float("nan")], requires_grad=True)
    seed = tm.tensor([1.0, float("inf"), -2.0])
    with aten_op_log(tm) as log:
        gx, = tm.autograd.grad(x.nan_to_num(), x, seed)
    values = gx.numpy()
    assert values[0] == 1.0 and np.isnan(values[1]) and values[2] == 0.0 and np.signbit(values[2])
    assert log.ops[1:] == ["aten.abs.default", "aten.ne.Scalar", "aten.eq.Tensor", "aten.mul.Tensor",
                           "aten.mul.Tensor"]
    assert tm.isfinite(tm.tensor([1, 2])).tolist() == [True, True]
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.0, float("inf"), float("nan")], requires_grad=True)
    expected, = torch.autograd.grad(t.nan_to_num(), t, torch.tensor([1.0, float("inf"), -2.0]))
    assert values.tobytes() == expected.numpy().tobytes()


def test_put_writes_or_adds_at_flat_positions_and_takes_gradients_back():
    # tm.put / Tensor.put / Tensor.put_ (new, PyTorch's): take's gradient is PyTorch's take_backward,
    # zeros_like(input).put(index, grad, accumulate=True)
    x = tm.zeros(2, 3)
    assert x.put(tm.tensor([1, -1]), tm.tensor([5.0, 6.0])).tolist() == [[0.0, 5.0, 0.0], [0.0, 0.0, 6.0]]
    assert tm.put(x, tm.tensor([1, 1]), tm.tensor([5.0, 6.0]), accumulate=True).tolist()[0] == [0.0, 11.0, 0.0]
    y = x.clone()
    assert y.put_(tm.tensor([0]), tm.tensor([1.0])) is y and y.tolist()[0] == [1.0, 0.0, 0.0] and y._version == 1
    with pytest.raises(IndexError, match=r"^out of range: tried to access index 9 on a tensor of 6 elements\.$"):
        x.put(tm.tensor([1, 9]), tm.tensor([5.0, 6.0]))
    with pytest.raises(RuntimeError, match=r"^put_\(\): Expected a long tensor for index, but got Int$"):
        x.put(tm.tensor([1, 2], dtype=tm.int32), tm.tensor([5.0, 6.0]))
    with pytest.raises(IndexError, match=r"source.numel\(\) = 3, index.numel\(\) = 2$"):
        x.put(tm.tensor([1, 2]), tm.tensor([5.0, 6.0, 7.0]))
    assert str(tm.ops.aten.put_.default._schema) == (
        "aten::put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> Tensor(a!)")
    w = tm.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    source = tm.tensor([7.0, 8.0], requires_grad=True)
    with aten_op_log(tm) as log:
        gw, gs = tm.autograd.grad(w.put(tm.tensor([0, -1]), source), [w, source], tm.tensor([[1.0, 2.0], [3.0, 4.0]]))
        taken, = tm.autograd.grad(w.take(tm.tensor([3, 3, 0])), w, tm.tensor([1.0, 2.0, 4.0]))
    assert gw.tolist() == [[0.0, 2.0], [3.0, 0.0]] and gs.tolist() == [1.0, 4.0]
    assert taken.tolist() == [[4.0, 0.0], [0.0, 3.0]]
    assert log.ops[-2:] == ["aten.zeros_like.default", "aten.put.default"]


def _scalar_tensor_calls(library, program: str) -> list:
    python_dispatch = import_module(f"{library.__name__}.utils._python_dispatch")

    class Log(python_dispatch.TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if str(func) == "aten.scalar_tensor.default":
                self.calls.append((args, sorted((k, str(v).replace("torch", "tensormodes"))
                                                for k, v in (kwargs or {}).items())))
            return func(*args, **(kwargs or {}))

    x = library.tensor([[1.0, -2.0], [0.5, 3.0]])
    with Log() as log:
        eval(program, {"L": library, "x": x})
    return log.calls


_OPTIONS = [("device", "cpu"), ("dtype", "tensormodes.int64"), ("layout", "tensormodes.strided")]
SCALAR_TENSORS = {
    # ATen's composites pass their tensor options (dtype, layout, device), not pin_memory=False
    "L.where(x > 0, x, 0.0)": [((0.0,), [("device", "cpu"), ("dtype", "tensormodes.float32"),
                                         ("layout", "tensormodes.strided")])],
    "L.cov(x)": [((2,), _OPTIONS), ((1,), _OPTIONS)],
    # the Python binding's own call does pass it
    "L.scalar_tensor(3.0)": [((3.0,), [("device", "cpu"), ("pin_memory", "False")])],
}


@pytest.mark.parametrize("program", list(SCALAR_TENSORS))
def test_composites_make_scalar_tensors_with_pytorchs_keywords(program):
    assert _scalar_tensor_calls(tm, program) == SCALAR_TENSORS[program]
    try:
        import torch
    except ImportError:
        return
    assert _scalar_tensor_calls(torch, program) == SCALAR_TENSORS[program]


# Backward ops PyTorch's formulas call, which tensormodes declares with PyTorch's schemas (issue 24 §3)
BACKWARD_OP_PROGRAMS = {
    "L.i0(x)": ["aten.special_i1.default", "aten.mul.Tensor"],
    "L.cdist(x, y)": ["aten.detach.default", "aten._cdist_backward.default", "aten.transpose.int",
                      "aten.clone.default", "aten.transpose.int", "aten.clone.default", "aten._cdist_backward.default"],
    "L.nn.functional.embedding_bag(L.tensor([0, 2, 1, 2]), x, L.tensor([0, 1]), mode='sum', per_sample_weights=z)": [
        "aten._embedding_bag_backward.default", "aten._embedding_bag_per_sample_weights_backward.default"],
    "L.nn.functional.embedding_bag(L.tensor([0, 2, 1, 2]), x, L.tensor([0, 3]), mode='max')": [
        "aten._embedding_bag_backward.default"],
}


@pytest.mark.parametrize("program", list(BACKWARD_OP_PROGRAMS))
def test_formulas_call_pytorchs_backward_ops(program):
    def run(library):
        rng = np.random.default_rng(0)
        x, y, z = (library.tensor(rng.uniform(0.5, 1.5, shape).astype(np.float32), requires_grad=True)
                   for shape in ((3, 2), (4, 2), (4,)))
        with aten_op_log(library):  # (saved outputs are kept as detached aliases while a mode listens)
            out = eval(program, {"L": library, "x": x, "y": y, "z": z})
        reached = _leaves_of(out)
        leaves = [t for t in (x, y, z) if any(t is leaf for leaf in reached)]
        seed = library.ones(tuple(out.shape))
        with aten_op_log(library) as log:
            grads = library.autograd.grad(out, leaves, seed)
        return log.ops, [g.numpy() for g in grads]

    ours = run(tm)
    assert sorted(ours[0]) == sorted(BACKWARD_OP_PROGRAMS[program])
    try:
        import torch
    except ImportError:
        return
    theirs = run(torch)
    assert sorted(theirs[0]) == sorted(BACKWARD_OP_PROGRAMS[program])
    for a, b in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _leaves_of(out) -> list:
    """The leaf tensors ``out``'s graph reaches."""
    found, stack, seen = [], [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "variable"):
            found.append(node.variable)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return found

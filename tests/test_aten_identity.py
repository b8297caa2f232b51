"""Every op's identity at the dispatch level (``tensormodes.ops.aten``) is PyTorch's: which
overload a public call reaches, the arguments a ``__torch_dispatch__`` handler receives for it,
the overload's schema string and its tags — all derived from the op's one declaration.

With torch installed, every op's declared samples run on both libraries under a logging
``TorchDispatchMode`` and every overload's schema and tags are compared with torch's; the
torch-free tests pin literal schemas and handler arguments, so the suite means something
without torch.
"""

from __future__ import annotations

import functools

import pytest

import tensormodes as tm
from tensormodes._ops import OPS
from tensormodes.utils._python_dispatch import TorchDispatchMode

from .op_samples import callable_for, materialize, tm_maker, torch_maker

aten = tm.ops.aten

# Ops PyTorch decomposes before the dispatch level (its public call reaches other aten ops, or
# one with other arguments): the decompositions, not the identity, make them agree.
DECOMPOSED = {
    "tensor": "lift_fresh of the converted data", "from_numpy": "lift_fresh", "view_as": "view(other.size())",
    "expand_as": "expand(other.size())", "reshape": "view / _unsafe_view", "reshape_method": "view / _unsafe_view",
    "ravel": "view", "unflatten": "view", "movedim": "permute", "moveaxis": "permute", "narrow": "slice.Tensor",
    "diag": "diag_embed / diagonal_copy", "chunk": "split.Tensor with the chunk size", "atleast_2d": "view / unsqueeze",
    "tile": "repeat", "fliplr": "flip", "flipud": "flip", "msort": "sort", "argsort": "sort",
    "square": "pow.Tensor_Scalar(x, 2)", "cross": "linalg_cross with the dim found", "cdist": "_cdist_forward",
    "is_nonzero": "_local_scalar_dense", "linalg_det": "_linalg_det", "det": "_linalg_det",
    "linalg_slogdet": "_linalg_slogdet", "slogdet": "_linalg_slogdet", "linalg_svdvals": "_linalg_svd",
    "linalg_eigvalsh": "_linalg_eigh", "_embedding_bag": "_embedding_bag_forward_only, all arguments",
    "_norm_dim": "linalg_vector_norm (torch.norm's composite)",
    # the reduction string becomes ATen's int enum in PyTorch's Python composite
    "_mse_loss": "reduction as an int", "_smooth_l1_loss": "reduction as an int", "_huber_loss": "reduction as an int",
    "_soft_margin_loss": "reduction as an int", "_binary_cross_entropy_with_logits": "reduction as an int",
    "_multilabel_margin_loss": "multilabel_margin_loss_forward, reduction as an int",
    # ... and p and margin always passed (margin as a float)
    "_multi_margin_loss": "multi_margin_loss(self, target, p, margin[, weight, reduction as an int])",
    # PyTorch's linalg.lstsq is one op with four results; it runs as two here (the differentiable
    # solution and residuals, then rank and singular values)
    "_linalg_lstsq": "linalg_lstsq (solution, residuals, rank, singular_values)",
    "_linalg_lstsq_rank": "linalg_lstsq (solution, residuals, rank, singular_values)",
    # PyTorch's linalg.solve_ex reaches _linalg_solve_ex, which returns the LU factors too
    "linalg_solve_ex": "_linalg_solve_ex (result, LU, pivots, info)",
    # PyTorch's binding turns ``unbiased`` into ``correction``, always passed
    "var": "correction from unbiased", "std": "correction from unbiased", "var_mean": "correction from unbiased",
    "std_mean": "correction from unbiased",
}

# Differences of the identity itself, with why they stay.
KNOWN = {
    "randint": "randint(0, 2, (3,)): an explicit low=0 picks randint.low in PyTorch; a default cannot be told apart",
    "randperm": "an explicit generator=None picks randperm.generator in PyTorch; a default cannot be told apart",
    "special_round": "PyTorch's special.round always passes decimals (round.decimals); here decimals=0 is the "
                     "default, which cannot be told apart (round.default)",
    "_grid_sampler_2d_backward": "PyTorch's grid_sampler_2d_backward takes bool[2] output_mask; ours always "
                                 "computes both gradients",
    "_grid_sampler_3d_backward": "PyTorch's grid_sampler_3d_backward takes bool[2] output_mask; ours always "
                                 "computes both gradients",
}


def _describe(value, library):
    if isinstance(value, library.Tensor):
        return "T"
    if isinstance(value, (list, tuple)):
        return [_describe(v, library) for v in value]
    if isinstance(value, library.dtype):
        return "dtype:" + str(value).rpartition(".")[2]
    if isinstance(value, library.device):
        return f"device:{value}"
    if isinstance(value, (bool, int, float, str, type(None), complex)):
        return value
    return type(value).__name__


def _record(library, mode_class, call):
    """What a logging dispatch mode sees for ``call()``: (overload, args, kwargs, schema, tags)."""

    class Log(mode_class):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            self.seen.append((str(func), _describe(list(args), library),
                              {k: _describe(v, library) for k, v in kwargs.items()}, str(func._schema),
                              sorted(t.name for t in func.tags)))
            return func(*args, **kwargs)

    log = Log()
    log.seen = []
    with log:
        call()
    return log.seen


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(OPS))
def test_public_call_reaches_pytorchs_overload(name):
    """Each sample's public call: the overload, the handler's arguments, the schema and the tags
    a dispatch mode sees equal PyTorch's, wherever PyTorch reaches one aten op for it."""
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    opdef = OPS[name]
    recorded = []
    for sample in opdef.samples:
        args, kwargs = materialize(sample, torch_maker)
        try:
            call = functools.partial(callable_for(opdef, torch), *args, **kwargs)
            recorded.append((sample, _record(torch, TorchMode, call)))
        except Exception:  # noqa: BLE001 - a sample PyTorch rejects says nothing about identities
            continue
    if any(len(theirs) != 1 for _, theirs in recorded):
        return  # a composite PyTorch decomposes (for some arguments): the decomposition's business
    mismatches = []
    for sample, theirs in recorded:
        args, kwargs = materialize(sample, tm_maker)
        ours = _record(tm, TorchDispatchMode, functools.partial(callable_for(opdef, tm), *args, **kwargs))
        if ours != theirs:
            mismatches.append(f"{sample}: ours {ours} != torch's {theirs}")
    if name in DECOMPOSED or name in KNOWN:
        return
    assert not mismatches, "\n".join(mismatches)


# Overloads whose schema or tags differ from PyTorch's same-named one, with why.
KNOWN_SCHEMAS = {
    "arange.start_out": "ours has step (arange.start's out= form takes it here)",
    "bernoulli.float_out": "PyTorch's out form has p=0.5, its functional bernoulli.p no default",
    "as_tensor.default": "a composite (lift_fresh / _to_copy); its Python data argument is not a Tensor",
    "tensor.default": "a composite (lift_fresh)", "cdist.default": "compute_mode is a str here, an int there",
    "atleast_2d.default": "ours takes *tensors", "norm.out": "a composite over several norm overloads",
    "tensordot.default": "ours takes dims", "tensordot.out": "ours takes dims",
    "_embedding_bag.default": "padding_idx is None when not given here, -1 there",
    "linalg_eigvalsh.out": "linalg_eigvalsh itself decomposes into _linalg_eigh",
    "msort.out": "msort decomposes into sort",
}


@pytest.mark.torch
def test_every_overload_has_pytorchs_schema_and_tags():
    torch = pytest.importorskip("torch")
    wrong = []
    for packet_name in dir(aten):
        packet = getattr(aten, packet_name)
        torch_packet = getattr(torch.ops.aten, packet_name, None)
        for overload_name in packet.overloads():
            key = f"{packet_name}.{overload_name}"
            if torch_packet is None or overload_name not in torch_packet.overloads() or key in KNOWN_SCHEMAS:
                continue
            ours, theirs = getattr(packet, overload_name), getattr(torch_packet, overload_name)
            if str(ours._schema) != str(theirs._schema):
                wrong.append(f"{key}: {ours._schema} != torch's {theirs._schema}")
            if [t.name for t in ours.tags] != sorted((t.name for t in theirs.tags), key=lambda n: tm.Tag[n].value):
                wrong.append(f"{key}: tags {ours.tags} != torch's {theirs.tags}")
    assert not wrong, "\n".join(wrong)


# -- without torch: literal schemas and handler arguments (checked against PyTorch 2.13) ----

SCHEMAS = {
    "add.Tensor": "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add.out": "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "add_.Tensor": "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "gt.Scalar": "aten::gt.Scalar(Tensor self, Scalar other) -> Tensor",
    "gt.Scalar_out": "aten::gt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
    "pow.Scalar": "aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
    "pow_.Tensor": "aten::pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
    "div.Tensor_mode": "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "div.out_mode": "aten::div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out) "
                    "-> Tensor(a!)",
    "sum.default": "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "sum.dim_IntList": "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"
                       " -> Tensor",
    "sum.IntList_out": "aten::sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
                       "Tensor(a!) out) -> Tensor(a!)",
    "var.correction": "aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                      "bool keepdim=False) -> Tensor",
    "max.dim": "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "sort.stable": "aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
                   "(Tensor values, Tensor indices)",
    "sort.values": "aten::sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values, "
                   "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
    "clamp.default": "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "clamp.Tensor": "aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
    "transpose.int": "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "index_put_.default": "aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, "
                          "bool accumulate=False) -> Tensor(a!)",
    "split.Tensor": "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "view.default": "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "squeeze.dims": "aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
    "zeros.default": "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
                     "bool? pin_memory=None) -> Tensor",
    "zeros_like.default": "aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
                          "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "randperm.generator": "aten::randperm.generator(SymInt n, *, Generator? generator, ScalarType? dtype=4, "
                          "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "randperm.default": "aten::randperm(SymInt n, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, "
                        "bool? pin_memory=None) -> Tensor",
    "uniform_.default": "aten::uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) "
                        "-> Tensor(a!)",
    "arange.start_step": "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, "
                         "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "native_layer_norm.default": "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, "
                                 "Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
    "conv2d.default": "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], "
                      "SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor",
    "max_pool2d_with_indices.default": "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, "
                                       "int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) "
                                       "-> (Tensor, Tensor)",
    "allclose.default": "aten::allclose(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, "
                        "float atol=1e-08, bool equal_nan=False) -> bool",
    "fill_.Scalar": "aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
    "elu.default": "aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
    "polygamma.default": "aten::polygamma(int n, Tensor self) -> Tensor",
    "repeat_interleave.Tensor": "aten::repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor",
    "isin.Tensor_Scalar": "aten::isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, "
                          "bool invert=False) -> Tensor",
    "isin.Scalar_Tensor": "aten::isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, "
                          "bool invert=False) -> Tensor",
    "scatter_reduce_.two": "aten::scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, "
                           "str reduce, *, bool include_self=True) -> Tensor(a!)",
    "_pdist_forward.default": "aten::_pdist_forward(Tensor self, float p=2.) -> Tensor",
    "grid_sampler_2d.default": "aten::grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, "
                               "int padding_mode, bool align_corners) -> Tensor",
    "max_pool3d_with_indices.default": "aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, "
                                       "int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) "
                                       "-> (Tensor, Tensor)",
    "linalg_pinv.atol_rtol_tensor": "aten::linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, "
                                    "Tensor? rtol=None, bool hermitian=False) -> Tensor",
    "multi_margin_loss.default": "aten::multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, "
                                 "Tensor? weight=None, int reduction=1) -> Tensor",
    "multilabel_margin_loss_forward.default": "aten::multilabel_margin_loss_forward(Tensor self, Tensor target, "
                                              "int reduction) -> (Tensor output, Tensor is_target)",
    "avg_pool3d.default": "aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
                          "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
    "rrelu.default": "aten::rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.33333333333333331, "
                     "bool training=False, Generator? generator=None) -> Tensor",
    "_ctc_loss_backward.default": "aten::_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, "
                                  "int[] input_lengths, int[] target_lengths, Tensor neg_log_likelihood, "
                                  "Tensor log_alpha, int blank, bool zero_infinity=False) -> Tensor",
    "linalg_eig.default": "aten::linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)",
    "linalg_householder_product.default": "aten::linalg_householder_product(Tensor input, Tensor tau) -> Tensor",
    "rms_norm.default": "aten::rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                        "float? eps=None) -> Tensor",
    "combinations.default": "aten::combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor",
}


@pytest.mark.parametrize("key", sorted(SCHEMAS))
def test_schema_string(key):
    packet, _, overload = key.partition(".")
    assert str(getattr(getattr(aten, packet), overload)._schema) == SCHEMAS[key]


TAGS = {
    "add.Tensor": ["core", "pointwise", "pt2_compliant_tag"],
    "add_.Tensor": ["inplace", "pointwise", "pt2_compliant_tag"],
    "gt_.Scalar": ["inplace", "pt2_compliant_tag"],
    "sum.dim_IntList": ["core", "pt2_compliant_tag", "reduction"],
    "sum.out": ["generated", "out", "pt2_compliant_tag"],
    "randperm.generator": ["nondeterministic_seeded", "pt2_compliant_tag"],
    "sqrt_.default": ["inplace", "pointwise", "pt2_compliant_tag"],
    "nonzero.default": ["core", "dynamic_output_shape", "pt2_compliant_tag"],
    "allclose.default": ["data_dependent_output", "pt2_compliant_tag"],
    "scatter_reduce.two": ["core", "pt2_compliant_tag"], "scatter_reduce_.two": ["inplace", "pt2_compliant_tag"],
    "hardshrink.default": ["pointwise", "pt2_compliant_tag"], "hardshrink.out": ["out", "pt2_compliant_tag"],
    "softshrink.out": ["out", "pt2_compliant_tag"], "masked_scatter.default": ["core", "pt2_compliant_tag"],
    "fill_diagonal_.default": ["inplace", "pt2_compliant_tag"], "_pdist_forward.default": ["core", "pt2_compliant_tag"],
    "_ctc_loss.default": ["dynamic_output_shape", "pt2_compliant_tag"],
    "rrelu.default": ["nondeterministic_seeded", "pointwise", "pt2_compliant_tag"],
    "max_pool3d_with_indices.default": ["core", "pt2_compliant_tag"],
    "avg_pool3d.default": ["core", "pt2_compliant_tag"],
}


@pytest.mark.parametrize("key", sorted(TAGS))
def test_tags(key):
    packet, _, overload = key.partition(".")
    assert sorted(t.name for t in getattr(getattr(aten, packet), overload).tags) == TAGS[key]


# What a dispatch-level handler sees for a public call (PyTorch 2.13's, recorded with it).
HANDLER_ARGS = {
    "x > 0": [("aten.gt.Scalar", ["T", 0], {})],
    "x + 2": [("aten.add.Tensor", ["T", 2], {})],
    "x.add(y, alpha=2)": [("aten.add.Tensor", ["T", "T"], {"alpha": 2})],
    "L.sum(x)": [("aten.sum.default", ["T"], {})],
    "x.sum(1)": [("aten.sum.dim_IntList", ["T", [1]], {})],
    "x.sum((0, 1), keepdim=True)": [("aten.sum.dim_IntList", ["T", [0, 1], True], {})],
    "L.div(x, y, rounding_mode='floor')": [("aten.div.Tensor_mode", ["T", "T"], {"rounding_mode": "floor"})],
    "L.div(x, y)": [("aten.div.Tensor", ["T", "T"], {})],
    "L.clip(x, 0.0, 1.0)": [("aten.clamp.default", ["T", 0.0, 1.0], {})],
    "L.clamp(x, min=y)": [("aten.clamp.Tensor", ["T", "T"], {})],
    "L.zeros(2, 3)": [("aten.zeros.default", [[2, 3]], {"device": "device:cpu", "pin_memory": False})],
    "L.ones((2,), dtype=L.float64)": [("aten.ones.default", [[2]], {"dtype": "dtype:float64", "device": "device:cpu",
                                                                     "pin_memory": False})],
    "x.permute(1, 0)": [("aten.permute.default", ["T", [1, 0]], {})],
    "x.view(-1)": [("aten.view.default", ["T", [-1]], {})],
    "L.max(x, 1)": [("aten.max.dim", ["T", 1], {})],
    "L.max(x, y)": [("aten.maximum.default", ["T", "T"], {})],
    "L.max(x)": [("aten.max.default", ["T"], {})],
    "L.swapaxes(x, 0, 1)": [("aten.transpose.int", ["T", 0, 1], {})],
    "L.arange(5)": [("aten.arange.default", [5], {"device": "device:cpu", "pin_memory": False})],
    "L.arange(1, 4)": [("aten.arange.start", [1, 4], {"device": "device:cpu", "pin_memory": False})],
    "L.arange(1, 4, 0.5)": [("aten.arange.start_step", [1, 4, 0.5], {"device": "device:cpu", "pin_memory": False})],
    "x.squeeze(0)": [("aten.squeeze.dim", ["T", 0], {})],
    "x.all(1)": [("aten.all.dim", ["T", 1], {})],
    "x.split(1)": [("aten.split.Tensor", ["T", 1], {})],
    "x.split([1, 1])": [("aten.split_with_sizes.default", ["T", [1, 1]], {})],
    "L.pow(2, x)": [("aten.pow.Scalar", [2, "T"], {})],
    "L.pow(x, 2)": [("aten.pow.Tensor_Scalar", ["T", 2], {})],
    "L.remainder(2, x)": [("aten.remainder.Scalar_Tensor", [2, "T"], {})],
    "x.fill_(2)": [("aten.fill_.Scalar", ["T", 2], {})],
    "x.add_(y)": [("aten.add_.Tensor", ["T", "T"], {})],
    "L.add(x, y, out=z)": [("aten.add.out", ["T", "T"], {"out": "T"})],
    "L.sort(x, stable=True)": [("aten.sort.stable", ["T"], {"stable": True})],
    "L.searchsorted(s, 2.0)": [("aten.searchsorted.Scalar", ["T", 2.0], {})],
    "L.nn.functional.max_pool2d(w, 2)": [("aten.max_pool2d_with_indices.default", ["T", [2, 2]], {})],
    "L.nn.functional.avg_pool2d(w, 2, stride=1)": [("aten.avg_pool2d.default", ["T", [2, 2], [1, 1]], {})],
    "L.mean(x, 0)": [("aten.mean.dim", ["T", [0]], {})],
    "L.std(x, 1, correction=0)": [("aten.std.correction", ["T", [1]], {"correction": 0})],
    "L.var(x, 0)": [("aten.var.correction", ["T", [0]], {"correction": 1})],  # the dim overload's unbiased
    "L.std(x, 1, keepdim=True)": [("aten.std.correction", ["T", [1]], {"correction": 1, "keepdim": True})],
    "L.var_mean(x, 1)": [("aten.var_mean.correction", ["T", [1]], {"correction": 1})],
    "L.var(x)": [("aten.var.correction", ["T"], {})],
    "L.cat([x, y], 1)": [("aten.cat.default", [["T", "T"], 1], {})],
    "L.nn.functional.leaky_relu(x, 0.2)": [("aten.leaky_relu.default", ["T", 0.2], {})],
    "L.prod(x, 1)": [("aten.prod.dim_int", ["T", 1], {})],
    "L.xlogy(2.0, x)": [("aten.xlogy.Scalar_Self", [2.0, "T"], {})],
    "L.normal(0.0, 1.0, (2,))": [("aten.normal.float_float", [0.0, 1.0, [2]], {"device": "device:cpu",
                                                                                "pin_memory": False})],
    "L.zeros_like(x)": [("aten.zeros_like.default", ["T"], {"pin_memory": False})],
    "x.pow_(2)": [("aten.pow_.Scalar", ["T", 2], {})],
    "x.clamp_(min=y)": [("aten.clamp_.Tensor", ["T", "T"], {})],
    "x.gt_(0)": [("aten.gt_.Scalar", ["T", 0], {})],
    "x.div_(y, rounding_mode='trunc')": [("aten.div_.Tensor_mode", ["T", "T"], {"rounding_mode": "trunc"})],
    "L.sum(x, 1, out=s2)": [("aten.sum.IntList_out", ["T", [1]], {"out": "T"})],
    "L.gt(x, 0, out=b)": [("aten.gt.Scalar_out", ["T", 0], {"out": "T"})],
    "L.sort(x, 1, out=(z, i))": [("aten.sort.values", ["T", 1], {"values": "T", "indices": "T"})],
    "L.max(x, 1, out=(s2, i2))": [("aten.max.dim_max", ["T", 1], {"max": "T", "max_values": "T"})],
    "L.mean(x, out=e)": [("aten.mean.dtype_out", ["T"], {"out": "T"})],
    "x.random_(5)": [("aten.random_.to", ["T", 5], {})],
    "x.random_(1, 5)": [("aten.random_.from", ["T", 1, 5], {})],
    "L.randint(5, (3,))": [("aten.randint.default", [5, [3]], {"device": "device:cpu", "pin_memory": False})],
    "L.randint(5, size=(3,))": [("aten.randint.default", [5, [3]], {"device": "device:cpu", "pin_memory": False})],
    "L.scatter(x, 1, i, 2.0)": [("aten.scatter.value", ["T", 1, "T", 2.0], {})],
    "L.scatter(x, 1, i, value=2.0)": [("aten.scatter.value", ["T", 1, "T", 2.0], {})],
    "L.randint_like(x, 5)": [("aten.randint_like.default", ["T", 5], {"pin_memory": False})],
    "L.isin(x, 2.0)": [("aten.isin.Tensor_Scalar", ["T", 2.0], {})],
    "L.isin(2.0, x, invert=True)": [("aten.isin.Scalar_Tensor", [2.0, "T"], {"invert": True})],
    "L.isin(x, y)": [("aten.isin.Tensor_Tensor", ["T", "T"], {})],
    "x.scatter_reduce(1, i, y, 'amax', include_self=False)": [
        ("aten.scatter_reduce.two", ["T", 1, "T", "T", "amax"], {"include_self": False})],
    "L.pdist(x, 1.0)": [("aten._pdist_forward.default", ["T", 1.0], {})],
    "L.nn.functional.max_pool3d(w, (1, 2, 2), 1)": [
        ("aten.max_pool3d_with_indices.default", ["T", [1, 2, 2], [1, 1, 1]], {})],
    "L.linalg.eigvals(w[0, 0])": [("aten.select.int", ["T", 0, 0], {}), ("aten.select.int", ["T", 0, 0], {}),
                                  ("aten.linalg_eig.default", ["T"], {})],
    "L.linalg.pinv(x, atol=L.tensor(0.5))": [("aten.lift_fresh.default", ["T"], {}),
                                             ("aten.linalg_pinv.atol_rtol_tensor", ["T"], {"atol": "T"})],
}


def _handler_args(library, mode_class, call):
    namespace = {"L": library}
    exec("x = L.tensor([[1.0, -2.0, 3.0], [0.5, 2.0, -1.0]]); y = L.tensor([[2.0, 1.0, 3.0], [1.0, 4.0, 2.0]]); "
         "z = L.empty(2, 3); s = L.tensor([1.0, 2.0, 3.0]); w = L.ones(1, 1, 4, 4); s2 = L.empty(2); "
         "b = L.empty(2, 3, dtype=L.bool); i = L.zeros(2, 3, dtype=L.int64); i2 = L.empty(2, dtype=L.int64); "
         "e = L.empty(())", namespace)
    return [entry[:3] for entry in _record(library, mode_class, lambda: eval(call, namespace))]


@pytest.mark.parametrize("call", sorted(HANDLER_ARGS))
def test_handler_arguments(call):
    assert _handler_args(tm, TorchDispatchMode, call) == HANDLER_ARGS[call]


@pytest.mark.torch
@pytest.mark.parametrize("call", sorted(HANDLER_ARGS))
def test_handler_arguments_are_pytorchs(call):
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    assert _handler_args(torch, TorchMode, call) == HANDLER_ARGS[call]


def test_handler_can_call_func_with_what_it_received():
    """The schema form goes back to the public implementation: the results are eager's."""
    x, y = tm.tensor([[1.0, -2.0, 3.0]]), tm.tensor([[2.0, 1.0, 3.0]])
    with _Passthrough():
        got = (x.sum(1), tm.div(x, y, rounding_mode="floor"), tm.zeros(2, 3).shape, x.permute(1, 0).shape,
               tm.max(x, 1).values, tm.clip(x, 0.0, 1.0), tm.arange(1, 4, 0.5), x.view(3).shape)
    assert got[0].tolist() == [2.0] and got[1].tolist() == [[0.0, -2.0, 1.0]] and got[2] == (2, 3)
    assert got[3] == (3, 1) and got[4].tolist() == [3.0] and got[5].tolist() == [[1.0, 0.0, 1.0]]
    assert got[6].tolist() == [1.0, 1.5, 2.0, 2.5, 3.0, 3.5] and got[7] == (3,)


class _Passthrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


# -- calling packets and overloads ------------------------------------------------------------

def test_packet_resolves_the_overload_like_pytorch():
    x = tm.ones(2)
    seen = []

    class Names(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Names():
        aten.gt(x, 0)
        aten.gt(x, x)
        aten.add(x, 2)
        aten.sum(x, [0])
        aten.sum(x)
        aten.clamp(x, 0.0)
        aten.clamp(x, x)
    assert seen == ["aten.gt.Scalar", "aten.gt.Tensor", "aten.add.Tensor", "aten.sum.dim_IntList", "aten.sum.default",
                    "aten.clamp.default", "aten.clamp.Tensor"]


def test_overload_call_errors_are_pytorchs():
    x = tm.ones(2)
    add = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    with pytest.raises(RuntimeError) as missing:
        aten.add.Tensor(x)
    assert str(missing.value) == f"aten::add() is missing value for argument 'other'. Declaration: {add}"
    with pytest.raises(RuntimeError) as unknown:
        aten.add.Tensor(x, x, foo=1)
    assert str(unknown.value) == f"Unknown keyword argument 'foo' for operator 'aten::add'. Schema: {add}"
    with pytest.raises(RuntimeError) as wrong:
        aten.add.Tensor(x, "a")
    assert str(wrong.value) == ("aten::add() Expected a value of type 'Tensor' for argument 'other' but instead found "
                                f"type 'str'.\nPosition: 1\nValue: 'a'\nDeclaration: {add}")
    with pytest.raises(RuntimeError) as number:
        aten.gt.Scalar(x, x)
    assert str(number.value) == (
        "aten::gt() Expected a value of type 'number' for argument 'other' but instead found type 'Tensor'.\n"
        "Position: 1\nValue: tensor([1., 1.])\nDeclaration: aten::gt.Scalar(Tensor self, Scalar other) -> Tensor\n"
        "Cast error details: Cannot cast tensor([1., 1.]) to number")
    with pytest.raises(RuntimeError, match="^Overloaded torch operator invoked from Python failed to match any "
                                           "schema:\naten::exp\\(\\) expected at most 1 argument"):
        aten.exp(x, x)
    with pytest.raises(AttributeError):
        aten.no_such_op  # noqa: B018
    with pytest.raises(AttributeError, match="has no overload name 'Nope'"):
        aten.add.Nope  # noqa: B018


def test_declaration_spellings():
    """The declaration grammar: a spelled type, a renamed argument, no default, keyword-only."""
    from tensormodes._dispatch.aten import _parse_overload, _parse_spelling

    spelled = _parse_spelling("*int[1]? dim=")
    assert (spelled.type, spelled.name, spelled.kwarg_only, spelled.default.__class__.__name__) == \
        ("int[1]?", "dim", True, "type")
    assert _parse_spelling("Scalar end=1.").default == "1."
    spec = _parse_overload(("dim", "keepdim", "dim2: ~int other", "+core", "-pointwise", "out=IntList_out",
                            "inplace=", "out+generated"))
    assert spec.dropped == {"dim", "keepdim"} and spec.tags_added == {"core"} and spec.tags_removed == {"pointwise"}
    assert (spec.out_name, spec.inplace_name, spec.kind_tags) == ("IntList_out", "", (("out", "+", "generated"),))
    assert spec.spelled[0][1].kwarg_only is False and spec.spelled[0][1].name == "other"


def test_overloads_take_schema_names_as_keywords():
    x = tm.tensor([1.0, 2.0])
    assert aten.add.Tensor(self=x, other=x, alpha=2).tolist() == [3.0, 6.0]
    assert aten.sum.dim_IntList(x, dim=[0]).item() == 3.0
    assert aten.uniform_.default(tm.zeros(3), 1.0, to=1.0).tolist() == [1.0, 1.0, 1.0]  # "from" is from_ there
    values, indices = tm.empty(2), tm.empty(2, dtype=tm.int64)
    aten.sort.values(tm.tensor([2.0, 1.0]), values=values, indices=indices)
    assert values.tolist() == [1.0, 2.0] and indices.tolist() == [1, 0]

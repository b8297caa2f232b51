"""Turning the op table's ``Sample`` declarations into real arguments, for
tensormodes and (when installed) PyTorch alike."""

from __future__ import annotations

import numpy as np

import tensormodes as tm
from tensormodes._ops import OPS
from tensormodes._ops.registry import Sample, TensorSpec

_DTYPES = {repr(d).split(".")[1]: d for d in (tm.bool, tm.uint8, tm.int8, tm.int16, tm.int32, tm.int64,
                                             tm.float16, tm.bfloat16, tm.float32, tm.float64,
                                             tm.complex64, tm.complex128)}


def make_array(spec: TensorSpec, rng: np.random.Generator) -> np.ndarray:
    d = _DTYPES[spec.dtype]
    if d is tm.bool:
        return rng.random(spec.shape) < 0.5
    if not d.is_floating_point and not d.is_complex:
        return rng.integers(int(spec.low), int(spec.high) + 1, spec.shape).astype(d._np)
    values = rng.uniform(spec.low, spec.high, spec.shape)
    if d.is_complex:
        values = values + 1j * rng.uniform(spec.low, spec.high, spec.shape)
    return values.astype(d._np)


def materialize(sample: Sample, make_tensor, seed: int = 0):
    """``(args, kwargs)`` with each TensorSpec replaced by ``make_tensor(ndarray)``;
    dtype objects are translated by ``make_tensor`` too when given a dtype."""
    rng = np.random.default_rng(seed)

    def convert(value):
        if isinstance(value, TensorSpec):
            return make_tensor(make_array(value, rng))
        if isinstance(value, list):
            return [convert(v) for v in value]
        if isinstance(value, tuple) and any(isinstance(v, TensorSpec) for v in value):
            return tuple(convert(v) for v in value)
        if isinstance(value, tm.dtype):
            return make_tensor(value)
        return value

    args = tuple(convert(a) for a in sample.args)
    kwargs = {k: convert(v) for k, v in sample.kwargs.items()}
    return args, kwargs


def tm_maker(value):
    if isinstance(value, tm.dtype):
        return value
    return tm.tensor(value)


def torch_maker(value):
    import torch
    if isinstance(value, tm.dtype):
        return getattr(torch, repr(value).split(".")[1])
    if value.dtype == tm.bfloat16._np:
        return torch.tensor(value.astype(np.float32)).to(torch.bfloat16)
    return torch.tensor(value)


def _torch_nll_loss_backward(torch):
    def nll_loss_backward(grad_output, input, target, weight=None, reduction="mean", ignore_index=-100):
        x = input.detach().requires_grad_()
        with torch.enable_grad():
            loss = torch.nn.functional.nll_loss(x, target, weight, ignore_index=ignore_index, reduction=reduction)
            # create_graph: the result stays differentiable in grad_output (and weight), as ours is.
            return torch.autograd.grad(loss, x, grad_output, create_graph=True)[0]

    return nll_loss_backward


def _torch_cross_entropy_loss(torch):
    def cross_entropy_loss(input, target, weight=None, reduction="mean", ignore_index=-100):
        return torch.nn.functional.cross_entropy(input, target, weight, ignore_index=ignore_index,
                                                 reduction=reduction)

    return cross_entropy_loss


def _torch_cross_entropy_loss_backward(torch):
    def cross_entropy_loss_backward(grad_output, log_probs, target, weight=None, reduction="mean",
                                    ignore_index=-100):
        # PyTorch's composite backward from log_softmax's output: nll_loss's gradient N (differentiable in
        # grad_output and weight; free of log_probs' values, so taken on a copy), then log_softmax's
        # backward from log_probs itself, which keeps the graph connected to log_probs where it requires grad.
        x = log_probs.detach().requires_grad_()
        with torch.enable_grad():
            loss = torch.nn.functional.nll_loss(x, target, weight, ignore_index=ignore_index, reduction=reduction)
            scales = torch.autograd.grad(loss, x, grad_output, create_graph=True)[0]
            return torch._log_softmax_backward_data(scales, log_probs, 1 if log_probs.dim() >= 2 else 0,
                                                    log_probs.dtype)

    return cross_entropy_loss_backward


def _torch_svd(torch):
    def svd(A, full_matrices=True, *, driver=None):
        # Singular vectors are unique only up to sign (phase), which LAPACK builds choose
        # differently: fixed as tensormodes fixes them (largest entry of each column of U real
        # and positive, Vh's matching row turned back; Vh's other rows alone). The phases are
        # constants, so the gradient is that of the same function as ours.
        U, S, Vh = torch.linalg.svd(A, full_matrices, driver=driver)
        if U.numel() == 0 or Vh.numel() == 0:
            return U, S, Vh
        with torch.no_grad():
            def phases(vectors, dim):
                largest = vectors.gather(dim, vectors.abs().argmax(dim, keepdim=True))
                size = largest.abs()
                return torch.where(size > 0, largest / torch.where(size > 0, size, 1), 1).to(vectors.dtype)

            column_phases, row_turns = phases(U, -2), phases(Vh, -1).conj()
            row_turns[..., :S.shape[-1], :] = column_phases[..., :S.shape[-1]].mT
        return torch.return_types.linalg_svd((U * column_phases.conj(), S, Vh * row_turns))

    return svd


def _torch_legacy_svd(torch):
    def svd(input, some=True, compute_uv=True):
        # torch.svd is linalg.svd with V = Vh^H: the same signs fixed (see _torch_svd)
        U, S, Vh = _torch_svd(torch)(input, not some)
        return torch.return_types.svd((U, S, Vh.mH))

    return svd


def _torch_eig(torch):
    def eig(A):
        # Eigenvectors are unique only up to a phase: fixed as tensormodes fixes them (the largest
        # entry of each real and positive), by constant phases.
        L, V = torch.linalg.eig(A)
        if V.numel() == 0:
            return L, V
        with torch.no_grad():
            largest = V.gather(-2, V.abs().argmax(-2, keepdim=True))
            size = largest.abs()
            phases = torch.where(size > 0, largest / torch.where(size > 0, size, 1), 1).to(V.dtype)
        return torch.return_types.linalg_eig((L, V * phases.conj()))

    return eig


def _torch_eigh(torch):
    def eigh(A, UPLO="L"):
        # Eigenvectors are unique only up to sign (phase): fixed as tensormodes fixes them (the
        # largest entry of each column real and positive), by constant phases.
        L, V = torch.linalg.eigh(A, UPLO)
        if V.numel() == 0:
            return L, V
        with torch.no_grad():
            largest = V.gather(-2, V.abs().argmax(-2, keepdim=True))
            size = largest.abs()
            phases = torch.where(size > 0, largest / torch.where(size > 0, size, 1), 1).to(V.dtype)
        return torch.return_types.linalg_eigh((L, V * phases.conj()))

    return eigh


# Private tensormodes ops that PyTorch has only as ATen operators (``torch.ops.aten``), outside
# its Python namespace, with these equivalents written with PyTorch's API: the cross-reference
# tests compare with them (``callable_for(opdef, torch)``) instead of looking the name up.
_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}


def _torch_losses(torch):
    """PyTorch's native pointwise losses, taking the reduction as a string (as tensormodes' private
    loss ops do) instead of its enum."""
    native, enum = torch._C._nn, _REDUCTION_ENUM
    return {
        "_mse_loss": lambda x, target, reduction="mean": native.mse_loss(x, target, enum[reduction]),
        "_smooth_l1_loss": lambda x, target, reduction="mean", beta=1.0: native.smooth_l1_loss(
            x, target, enum[reduction], beta),
        "_huber_loss": lambda x, target, reduction="mean", delta=1.0: native.huber_loss(
            x, target, enum[reduction], delta),
        "_soft_margin_loss": lambda x, target, reduction="mean": native.soft_margin_loss(x, target, enum[reduction]),
        "_binary_cross_entropy_with_logits": lambda x, target, weight=None, pos_weight=None, reduction="mean":
            torch.binary_cross_entropy_with_logits(x, target, weight, pos_weight, enum[reduction]),
        "_multi_margin_loss": lambda x, target, p=1, margin=1.0, weight=None, reduction="mean":
            native.multi_margin_loss(x, target, p, margin, weight, enum[reduction]),
        "_multilabel_margin_loss": lambda x, target, reduction="mean": native.multilabel_margin_loss(
            x, target, enum[reduction]),
    }


TORCH_EQUIVALENTS = {
    "_nll_loss_backward": _torch_nll_loss_backward,  # aten::nll_loss_backward takes total_weight
    "_threshold_backward": lambda torch: torch.ops.aten.threshold_backward,
    "_tanh_backward": lambda torch: torch.ops.aten.tanh_backward,
    "_sigmoid_backward": lambda torch: torch.ops.aten.sigmoid_backward,
    # torch._C._nn.cross_entropy_loss takes the reduction as an enum, and label_smoothing
    "_cross_entropy_loss": _torch_cross_entropy_loss,
    "_cross_entropy_loss_backward": _torch_cross_entropy_loss_backward,  # no ATen op: autograd's gradient
    "_to_copy": lambda torch: torch.ops.aten._to_copy,
    "_convolution_backward": lambda torch: torch.ops.aten.convolution_backward,
    "_grid_sampler_2d_backward": lambda torch: lambda *args: torch.ops.aten.grid_sampler_2d_backward(
        *args, [True, True]),
    "_grid_sampler_3d_backward": lambda torch: lambda *args: torch.ops.aten.grid_sampler_3d_backward(
        *args, [True, True]),
    # torch._C._nn's functions behind nn.functional's Python-level ones
    "_max_pool2d_with_indices": lambda torch: torch._C._nn.max_pool2d_with_indices,
    "_max_pool3d_with_indices": lambda torch: torch._C._nn.max_pool3d_with_indices,
    "_adaptive_max_pool2d": lambda torch: torch._C._nn.adaptive_max_pool2d,
    "_max_unpool2d": lambda torch: torch._C._nn.max_unpool2d,
    "_adaptive_max_pool3d": lambda torch: torch._C._nn.adaptive_max_pool3d,
    "_max_unpool3d": lambda torch: torch._C._nn.max_unpool3d,
    "_mse_loss": lambda torch: _torch_losses(torch)["_mse_loss"],
    "_smooth_l1_loss": lambda torch: _torch_losses(torch)["_smooth_l1_loss"],
    "_huber_loss": lambda torch: _torch_losses(torch)["_huber_loss"],
    "_soft_margin_loss": lambda torch: _torch_losses(torch)["_soft_margin_loss"],
    "_binary_cross_entropy_with_logits": lambda torch: _torch_losses(torch)["_binary_cross_entropy_with_logits"],
    "_multi_margin_loss": lambda torch: _torch_losses(torch)["_multi_margin_loss"],
    "_multilabel_margin_loss": lambda torch: _torch_losses(torch)["_multilabel_margin_loss"],
    **{name: (lambda torch, name=name: getattr(torch._C._nn, name[1:], None) or getattr(torch, name[1:]))
       for name in ("_gelu", "_silu", "_mish", "_elu", "_celu", "_leaky_relu", "_hardtanh", "_softplus",
                    "_log_sigmoid", "_glu", "_hardswish", "_hardsigmoid", "_threshold", "_reflection_pad1d",
                    "_reflection_pad2d", "_reflection_pad3d", "_replication_pad1d", "_replication_pad2d",
                    "_replication_pad3d", "_upsample_nearest1d", "_upsample_nearest2d", "_upsample_linear1d",
                    "_upsample_bilinear2d", "_upsample_bicubic2d")},
    # the output of PyTorch's native normalisations (their statistics are handed to our formulas)
    "_native_layer_norm": lambda torch: lambda *args: torch.native_layer_norm(*args)[0],
    "_native_group_norm": lambda torch: lambda *args: torch.native_group_norm(*args)[0],
    "_native_batch_norm": lambda torch: lambda *args: torch.native_batch_norm(*args)[0],
    "_norm_dim": lambda torch: torch.norm,
    "_ctc_loss": lambda torch: lambda *args, **kwargs: torch._ctc_loss(*args, **kwargs)[0],
    "_ctc_loss_backward": lambda torch: torch.ops.aten._ctc_loss_backward,
    "_linalg_lstsq": lambda torch: lambda *args, **kwargs: tuple(torch.linalg.lstsq(*args, **kwargs)[:2]),
    "_linalg_lstsq_rank": lambda torch: lambda *args, **kwargs: tuple(torch.linalg.lstsq(*args, **kwargs)[2:]),
    "_embedding_bag": lambda torch: _torch_embedding_bag(torch),
    "mkldnn_rnn_layer": lambda torch: _torch_lstm_layer(torch),
    "mkldnn_rnn_layer_backward": lambda torch: _torch_lstm_layer_backward(torch),
    "linalg_svd": _torch_svd,  # a public op, compared with singular vectors' signs fixed
    "svd": _torch_legacy_svd,
    "linalg_eig": _torch_eig,
    "linalg_eigh": _torch_eigh,  # likewise, eigenvectors' signs fixed
}


def _torch_lstm_layer(torch):
    """PyTorch's LSTM layer through its ``lstm`` (which runs its oneDNN op for float32 and its own
    steps for float64, which that op refuses); the workspace, oneDNN's own buffer, is compared by
    dtype only (``OPAQUE_OUTPUTS``)."""
    def layer(input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse, batch_sizes, mode, hidden_size, num_layers,
              has_biases, bidirectional, batch_first, train):
        if input.dtype not in (torch.float32, torch.float64):  # as its oneDNN op (its own steps take more)
            raise RuntimeError("get_mkldnn_dtype: unsupported data type")
        params = [w_ih, w_hh, b_ih, b_hh] if has_biases else [w_ih, w_hh]
        sequence = input.flip(0) if reverse else input
        output, hy, cy = torch._VF.lstm(sequence, (hx[None], cx[None]), params, has_biases, 1, 0.0, False, False,
                                        False)
        return output.flip(0) if reverse else output, hy[0], cy[0], torch.empty(0, dtype=torch.uint8)
    return layer


def _torch_lstm_layer_backward(torch):
    """The gradients of ``_torch_lstm_layer`` by PyTorch's autograd (its backward op reads its own
    workspace, which ours is not), requiring grad where an argument does, as its op's do."""
    forward = _torch_lstm_layer(torch)

    def backward(input, w_ih, w_hh, b_ih, b_hh, hx, cx, output, hy, cy, grad_output, grad_hy, grad_cy, reverse, mode,
                 hidden_size, num_layers, has_biases, train, bidirectional, batch_sizes, batch_first, workspace):
        leaves = [t.detach().requires_grad_(True) for t in (input, w_ih, w_hh, b_ih, b_hh, hx, cx)]
        results = forward(*leaves, reverse, batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional,
                          batch_first, train)[:3]
        pairs = [(r, g) for r, g in zip(results, (grad_output, grad_hy, grad_cy)) if g is not None]
        arguments = (input, w_ih, w_hh, b_ih, b_hh, hx, cx, grad_output, grad_hy, grad_cy)
        tracked = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in arguments)
        grads = torch.autograd.grad([r for r, _ in pairs], leaves, [g for _, g in pairs], allow_unused=True)
        return tuple((torch.zeros_like(leaf) if g is None else g.detach()).requires_grad_(tracked)
                     for leaf, g in zip(leaves, grads))
    return backward


# Outputs whose contents are each library's own (PyTorch's oneDNN workspace): compared by dtype only.
OPAQUE_OUTPUTS = {"mkldnn_rnn_layer": {3}}


def _torch_embedding_bag(torch):
    def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                      per_sample_weights=None, include_last_offset=False, padding_idx=None):
        # torch.embedding_bag takes its arguments positionally only, and returns four tensors
        return torch.embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                                   include_last_offset, padding_idx)[0]
    return embedding_bag


def callable_for(opdef, library):
    """The public callable exercising ``opdef`` in ``library`` (tensormodes or torch)."""
    if library is not tm and opdef.name in TORCH_EQUIVALENTS:
        return TORCH_EQUIVALENTS[opdef.name](library)
    if not opdef.function and not opdef.method:  # an ATen-only op (``_ops/dispatch_forms.py``)
        return _aten_overload(opdef, library)
    if opdef.function:
        module = library
        for part in opdef.namespace.split(".")[1:]:
            module = getattr(module, part)
        return getattr(module, opdef.function)
    tensor_type = library.Tensor
    return getattr(tensor_type, opdef.method)


def _aten_overload(opdef, library):
    """``library.ops.aten.<name>.<overload>``: the op as both libraries reach it."""
    spec = opdef.aten if isinstance(opdef.aten, str) else next(iter(opdef.aten))
    name, _, overload = spec.rpartition(".")
    return getattr(getattr(library.ops.aten, name or opdef.name), overload)


def all_samples():
    for name, opdef in OPS.items():
        for i, sample in enumerate(opdef.samples):
            yield f"{name}-{i}", opdef, sample

"""Recurrent layers: PyTorch's one-layer LSTM op (``mkldnn_rnn_layer``, which its CPU ``lstm``
runs for float32 in place of a dozen small ops per time step) and its backward.

Both are ATen-only ops (``tm.ops.aten.mkldnn_rnn_layer.default``), reached by ``nn.LSTM`` where
PyTorch reaches them. Each time step computes exactly what ``nn.LSTM``'s step of public ops
computes, kernel for kernel (``F.linear``, ``sigmoid``, ``tanh``, products and sums in its order),
so the two give the same bits; the backward repeats, step by step from the last, what autograd
runs through those ops, and sums the weights' gradients over the steps in the engine's order.

>>> import tensormodes as tm
>>> x, h, c = tm.zeros(3, 1, 2), tm.zeros(1, 1), tm.zeros(1, 1)
>>> w_ih, w_hh, b = tm.ones(4, 2), tm.ones(4, 1), tm.ones(4)
>>> out, hy, cy, workspace = tm.ops.aten.mkldnn_rnn_layer.default(x, w_ih, w_hh, b, b, h, c, False, [], 2, 1, 1,
...                                                               True, False, False, True)
>>> [round(v, 4) for v in out.flatten().tolist()], round(cy.item(), 4)
([0.6083, 0.8726, 0.9353], 2.561)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._meta_array import MetaArray
from .common import ops, output_differentiability
from .meta_rules import rule
from .nn import linear
from .products import transposed_product_alike
from .reduction import sum as _sum
from .registry import Sample, Tensor, TensorSpec, op
from .unary_math import _logistic

_LSTM = 2  # PyTorch's (cuDNN's) number for the LSTM mode: RNN_RELU 0, RNN_TANH 1, LSTM 2, GRU 3
_STATES = 6  # per time step, kept for backward: the four gates' activations, the cell, its tanh
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _check(input, weight0, weight1, hx_, cx_, mode: int, hidden_size: int) -> None:
    if mode != _LSTM:
        raise RuntimeError(f"mkldnn_rnn_layer: only the LSTM mode ({_LSTM}) is supported, got mode {mode}")
    if input.dtype not in _FLOATS:  # PyTorch's oneDNN kernel takes float32 (and float64 here: gradient checks)
        raise RuntimeError("get_mkldnn_dtype: unsupported data type")
    if input.ndim != 3 or weight0.shape != (4 * hidden_size, input.shape[2]) or \
            weight1.shape != (4 * hidden_size, hidden_size) or hx_.shape != (input.shape[1], hidden_size) or \
            cx_.shape != hx_.shape:
        raise RuntimeError(f"mkldnn_rnn_layer: shapes do not fit an LSTM layer of hidden size {hidden_size}: input "
                           f"{list(input.shape)}, weights {list(weight0.shape)} and {list(weight1.shape)}, states "
                           f"{list(hx_.shape)} and {list(cx_.shape)}")


def lstm_step(input_gates, state: tuple, w_hh, b_hh, w_hr=None) -> tuple:
    """One LSTM time step of public ops: the projected input ``input_gates`` (B, 4H) and the
    state ``(h, c)`` to the next state (``h`` projected by ``w_hr`` when given). ``nn.LSTM`` and
    ``nn.LSTMCell`` run it where they take no fused op, and the fused op's double backward
    differentiates it; ``mkldnn_rnn_layer``'s kernel computes the same values.

    >>> import tensormodes as tm
    >>> h, c = lstm_step(tm.zeros(1, 4), (tm.zeros(1, 1), tm.ones(1, 1)), tm.zeros(4, 1), None)
    >>> round(h.item(), 4), c.item()
    (0.2311, 0.5)
    """
    hidden, cell = state
    # Gates in PyTorch's order: input, forget, cell candidate, output.
    gates = input_gates + ops.nn.functional.linear(hidden, w_hh, b_hh)
    in_gate, forget_gate, candidate, out_gate = gates.chunk(4, -1)
    cell = forget_gate.sigmoid() * cell + in_gate.sigmoid() * candidate.tanh()
    hidden = out_gate.sigmoid() * cell.tanh()
    # With proj_size, the hidden state carried on (and output) is projected by w_hr; the cell is not.
    return (hidden if w_hr is None else ops.nn.functional.linear(hidden, w_hr)), cell


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # sigmoid's kernel (_float_unary(_logistic, x)) for a float32 or float64 array, without its
    # dtype dispatch: computed in float64, rounded once (exp(-|x|) never overflows)
    return _logistic(x.astype(np.float64)).astype(x.dtype, copy=False)


def _tanh(x: np.ndarray) -> np.ndarray:
    return np.tanh(x.astype(np.float64)).astype(x.dtype, copy=False)  # tanh's kernel, likewise


def _sigmoid_backward(grad: np.ndarray, output: np.ndarray) -> np.ndarray:
    return grad * (1 - output) * output  # sigmoid_backward's kernel for two arrays of one float dtype


def _tanh_backward(grad: np.ndarray, output: np.ndarray) -> np.ndarray:
    return grad * (1 - output * output)  # tanh_backward's kernel, likewise


def _lstm_forward(input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse: bool, has_biases: bool):
    """``(output, hy, cy, states)``: ``states`` (T, 6, B, H) holds each step's input, forget,
    candidate and output gate activations, its cell and the cell's tanh."""
    length, hidden = input.shape[0], hx.shape[-1]
    # One product for every step's input, as nn.LSTM's F.linear over the sequence.
    projected = linear(input, w_ih, b_ih if has_biases else None)
    output = np.empty((length, *hx.shape), input.dtype)
    states = np.empty((length, _STATES, *hx.shape), input.dtype)
    h, c = hx, cx
    transposed_product = transposed_product_alike(hx, w_hh)
    for t in range(length - 1, -1, -1) if reverse else range(length):
        # F.linear(h, w_hh, b_hh) as linear's kernel computes it, h @ w_hh.T (see transposed_product_alike)
        product = np.matmul(w_hh, h.T).T if transposed_product else np.matmul(h, w_hh.T)
        if has_biases:
            product += b_hh
        gates = np.add(projected[t], product)
        # The sigmoid of the input, forget and output gates in one call (and of the candidate,
        # unused): element by element the same values as one call per gate, for a third of the calls.
        activations = _sigmoid(gates)
        step = states[t]
        step[0], step[1], step[3] = (activations[:, k * hidden:(k + 1) * hidden] for k in (0, 1, 3))
        entering, forget = step[0], step[1]
        kept = np.multiply(forget, c)
        step[2] = new = _tanh(gates[:, 2 * hidden:3 * hidden])
        np.add(kept, np.multiply(entering, new), out=step[4])
        step[5] = _tanh(step[4])
        h = np.multiply(step[3], step[5], out=output[t])
        c = step[4]
    return output, h.copy(), c.copy(), states.reshape(-1).view(np.uint8)


def _forward_meta(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes, mode, hidden_size,
                  num_layers, has_biases, bidirectional, batch_first, train):
    _check(input, weight0, weight1, hx_, cx_, mode, hidden_size)
    workspace = input.shape[0] * _STATES * hx_.shape[0] * hidden_size * input.dtype.itemsize
    return (MetaArray((input.shape[0], *hx_.shape), input.dtype), MetaArray(hx_.shape, input.dtype),
            MetaArray(hx_.shape, input.dtype), MetaArray((workspace,), np.dtype(np.uint8)))


@output_differentiability(True, True, True, False)  # the workspace has no history, as in PyTorch
def _mkldnn_rnn_layer_grad(grad, input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes, mode,
                           hidden_size, num_layers, has_biases, bidirectional, batch_first, train, result0, result1,
                           result2, result3):
    backward = ops.ops.aten.mkldnn_rnn_layer_backward.default
    return backward(input, weight0, weight1, weight2, weight3, hx_, cx_, result0, result1, result2, grad[0], grad[1],
                    grad[2], reverse, mode, hidden_size, num_layers, has_biases, train, bidirectional, batch_sizes,
                    batch_first, result3)


def _layer_sample(length: int, batch: int, features: int, hidden: int, *rest, dtype: str = "float32") -> Sample:
    gates = 4 * hidden
    tensors = tuple(TensorSpec(shape, dtype) for shape in (
        (length, batch, features), (gates, features), (gates, hidden), (gates,), (gates,), (batch, hidden),
        (batch, hidden)))
    return Sample(tensors + rest)


_FORWARD_SAMPLES = (
    _layer_sample(4, 2, 3, 5, False, [], _LSTM, 5, 1, True, False, False, True),
    _layer_sample(3, 1, 2, 2, True, [], _LSTM, 2, 2, True, True, False, True),  # backward in time
    _layer_sample(2, 2, 2, 3, False, [], _LSTM, 3, 1, False, False, True, False),  # no biases
    _layer_sample(3, 2, 2, 2, True, [], _LSTM, 2, 1, True, False, False, True, dtype="float64"),
)


@op(function=False, aten="default", grad=_mkldnn_rnn_layer_grad, meta=rule(_forward_meta),
    samples=_FORWARD_SAMPLES, errors=(Sample(_FORWARD_SAMPLES[0].args[:9] + (1,) + _FORWARD_SAMPLES[0].args[10:]),
                                      Sample(_FORWARD_SAMPLES[0].args[:10] + (4,) + _FORWARD_SAMPLES[0].args[11:])),
    schema={"input": "Tensor input", "hx_": "Tensor hx_", "cx_": "Tensor cx_",
            "(returns)": "Tensor, Tensor, Tensor, Tensor"})
def mkldnn_rnn_layer(input: Tensor, weight0: Tensor, weight1: Tensor, weight2: Tensor, weight3: Tensor, hx_: Tensor,
                     cx_: Tensor, reverse: bool, batch_sizes: Sequence[int], mode: int, hidden_size: int,
                     num_layers: int, has_biases: bool, bidirectional: bool, batch_first: bool,
                     train: bool) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """One LSTM layer in one direction over a time-major ``input`` (T, B, I): weights ``weight0``
    (4H, I) and ``weight1`` (4H, H), biases ``weight2`` and ``weight3`` (4H) used when
    ``has_biases``, initial states ``hx_`` and ``cx_`` (B, H); ``reverse`` runs from the last
    step to the first. Returns ``(output, hy, cy, workspace)``: the hidden states (T, B, H) in
    time order, the final states, and bytes (uint8) the backward op reads. ``mode`` must be 2
    (LSTM); ``batch_sizes``, ``num_layers``, ``bidirectional``, ``batch_first`` and ``train`` do
    not change the result, as in PyTorch. What ``nn.LSTM`` reaches for float32 where PyTorch's
    CPU path runs this op. (PyTorch's workspace is oneDNN's own buffer: ours holds each step's
    gates and cell, and has another size.)

    >>> import tensormodes as tm
    >>> out, hy, cy, _ = tm.ops.aten.mkldnn_rnn_layer.default(
    ...     tm.ones(2, 1, 1), tm.ones(4, 1), tm.zeros(4, 1), tm.zeros(4), tm.zeros(4), tm.zeros(1, 1),
    ...     tm.zeros(1, 1), False, [], 2, 1, 1, True, False, False, True)
    >>> [round(v, 4) for v in out.flatten().tolist()]
    [0.3696, 0.5453]
    """
    _check(input, weight0, weight1, hx_, cx_, mode, hidden_size)
    return _lstm_forward(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, has_biases)


# -- backward ----------------------------------------------------------------------------------

def _received(grad) -> np.ndarray | None:
    """A gradient the backward adds, or None where there is none to add: autograd hands zeros
    for an output that received nothing, which the public ops' backward never adds."""
    return grad if grad is not None and grad.any() else None


# long: the backward of one step of nn.LSTM's public ops, formula by formula, in the engine's order
def _lstm_backward(input, w_ih, w_hh, hx, cx, output, grad_output, grad_hy, grad_cy, reverse: bool,
                   has_biases: bool, states) -> tuple:
    length, batch, hidden = output.shape
    grad_output, grad_h, grad_c = _received(grad_output), _received(grad_hy), _received(grad_cy)
    grad_gates = np.zeros((length, batch, 4 * hidden), output.dtype)
    grad_w_hh = grad_b_hh = None
    steps = range(length) if reverse else range(length - 1, -1, -1)  # the forward's steps, last first
    for t in steps:
        entering, forget, new, leaving, cell, cell_tanh = states[t]
        first = t == (length - 1 if reverse else 0)
        h_before, c_before = (hx, cx) if first else (output[t + 1], states[t + 1, 4]) if reverse else \
            (output[t - 1], states[t - 1, 4])
        # the hidden state's gradient: from the output and from the next step's product
        if grad_output is not None:
            grad_h = grad_output[t] if grad_h is None else np.add(grad_h, grad_output[t])
        if grad_h is None and grad_c is None:
            continue  # nothing reaches this step (nor any earlier one)
        row = grad_gates[t]
        if grad_h is not None:  # h = leaving * tanh(cell)
            row[:, 3 * hidden:] = _sigmoid_backward(np.multiply(grad_h, cell_tanh), leaving)
            through_tanh = _tanh_backward(np.multiply(grad_h, leaving), cell_tanh)
            grad_c = through_tanh if grad_c is None else np.add(grad_c, through_tanh)
        # cell = forget * c_before + entering * new
        row[:, hidden:2 * hidden] = _sigmoid_backward(np.multiply(grad_c, c_before), forget)
        row[:, :hidden] = _sigmoid_backward(np.multiply(grad_c, new), entering)
        row[:, 2 * hidden:3 * hidden] = _tanh_backward(np.multiply(grad_c, entering), new)
        grad_c = np.multiply(grad_c, forget)
        # gates = projected input + F.linear(h_before, w_hh, b_hh): linear's formula, summed over steps
        grad_h = np.matmul(row, w_hh)
        # (added in place, into the first step's product: the engine's sums, without a new
        # weight-sized array per step)
        if grad_w_hh is None:
            grad_w_hh, grad_b_hh = np.matmul(row.T, h_before), np.add.reduce(row, axis=0)
            step_weight = np.empty_like(grad_w_hh)
        else:
            np.add(grad_w_hh, np.matmul(row.T, h_before, out=step_weight), out=grad_w_hh)
            np.add(grad_b_hh, np.add.reduce(row, axis=0), out=grad_b_hh)
    count = length * batch
    grad_input = np.matmul(grad_gates, w_ih)
    grad_w_ih = np.matmul(grad_gates.reshape(count, 4 * hidden).T, input.reshape(count, input.shape[2]))
    grad_b_ih = _sum(grad_gates, [0, 1])
    zeros = np.zeros(4 * hidden, output.dtype)
    if grad_w_hh is None:  # no gradient reached any step
        grad_w_hh, grad_b_hh = np.zeros_like(w_hh), zeros
    if not has_biases:
        grad_b_ih = grad_b_hh = zeros
    grad_hx = np.zeros_like(hx) if grad_h is None else grad_h
    grad_cx = np.zeros_like(cx) if grad_c is None else grad_c
    return grad_input, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh, grad_hx, grad_cx


def _layer_of_steps(input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse: bool, has_biases: bool) -> tuple:
    """``mkldnn_rnn_layer``'s output, hy and cy computed by ``lstm_step`` (public ops: differentiable)."""
    projected = ops.nn.functional.linear(input, w_ih, b_ih if has_biases else None).unbind(0)
    state, hiddens = (hx, cx), [None] * len(projected)
    for t in range(len(projected) - 1, -1, -1) if reverse else range(len(projected)):
        state = lstm_step(projected[t], state, w_hh, b_hh if has_biases else None)
        hiddens[t] = state[0]
    output = ops.stack(hiddens) if hiddens else input.new_zeros((0, *hx.shape))
    return output, state[0], state[1]


def _mkldnn_rnn_layer_backward_grad(grad, input, weight1, weight2, weight3, weight4, hx_, cx_tmp, grad_output,
                                    grad_hy, grad_cy, reverse, has_biases):
    # Double backward (create_graph=True through an LSTM), which PyTorch differentiates through a
    # composite of its steps: the layer recomputed with public ops, its gradients taken with a
    # graph, and those differentiated.
    create_graph = ops.is_grad_enabled()
    with ops.enable_grad():
        originals = (input, weight1, weight2, weight3, weight4, hx_, cx_tmp, grad_output, grad_hy, grad_cy)
        leaves = [None if t is None else t.detach().requires_grad_() for t in originals]
        results = _layer_of_steps(*leaves[:7], reverse, has_biases)
        pairs = [(r, g) for r, g in zip(results, leaves[7:]) if g is not None]
        first = ops.autograd.grad([r for r, _ in pairs], leaves[:7], [g for _, g in pairs], create_graph=True,
                                  allow_unused=True)
        pairs = [(f, g) for f, g in zip(first, grad) if f is not None and g is not None and f.requires_grad]
        wanted = [leaf for leaf in leaves if leaf is not None]
        found = iter(ops.autograd.grad([f for f, _ in pairs], wanted, [g for _, g in pairs],
                                       create_graph=create_graph, allow_unused=True) if pairs else [None] * 10)
    by_leaf = [None if leaf is None else next(found) for leaf in leaves]
    # in the backward op's order: input, the four weights, hx_, cx_tmp, output, hy_, cy_, the three
    # gradients, workspace
    return (*by_leaf[:7], None, None, None, *by_leaf[7:], None)


def _backward_meta(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, output, hy_, cy_, grad_output, grad_hy,
                   grad_cy, reverse, mode, hidden_size, num_layers, has_biases, train, bidirectional, batch_sizes,
                   batch_first, workspace):
    _check(input, weight1, weight2, hx_, cx_tmp, mode, hidden_size)
    return tuple(MetaArray(t.shape, input.dtype) for t in (input, weight1, weight2, weight3, weight4, hx_, cx_tmp))


def _backward_sample(length: int, batch: int, features: int, hidden: int, reverse: bool, has_biases: bool,
                     dtype: str = "float32") -> Sample:
    gates = 4 * hidden
    sequence, state = (length, batch, hidden), (batch, hidden)
    tensors = tuple(TensorSpec(shape, dtype) for shape in (
        (length, batch, features), (gates, features), (gates, hidden), (gates,), (gates,), state, state,
        sequence, state, state, sequence, state, state))
    # A workspace that is not the forward's (random bytes, another size): the backward recomputes it.
    return Sample(tensors + (reverse, _LSTM, hidden, 1, has_biases, True, False, [], False,
                             TensorSpec((8,), "uint8")))


@op(function=False, aten="default", meta=rule(_backward_meta), grad=_mkldnn_rnn_layer_backward_grad,
    samples=(_backward_sample(3, 2, 3, 2, False, True), _backward_sample(2, 1, 2, 3, True, True),
             _backward_sample(2, 2, 2, 2, False, False), _backward_sample(3, 2, 2, 2, True, True, "float64")),
    schema={"input": "Tensor input", "hx_": "Tensor hx_", "hy_": "Tensor hy_", "cy_": "Tensor cy_",
            "(returns)": "Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor"})
def mkldnn_rnn_layer_backward(input: Tensor, weight1: Tensor, weight2: Tensor, weight3: Tensor, weight4: Tensor,
                              hx_: Tensor, cx_tmp: Tensor, output: Tensor, hy_: Tensor, cy_: Tensor,
                              grad_output: Tensor | None, grad_hy: Tensor | None, grad_cy: Tensor | None,
                              reverse: bool, mode: int, hidden_size: int, num_layers: int, has_biases: bool,
                              train: bool, bidirectional: bool, batch_sizes: Sequence[int], batch_first: bool,
                              workspace: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """The gradients of ``mkldnn_rnn_layer`` with respect to its input, weights, biases and initial
    states, given its results and the gradients of ``output``, ``hy`` and ``cy`` (None for none).
    ``workspace`` is the forward's; with any other (PyTorch's) the forward is recomputed from the
    inputs.

    >>> import tensormodes as tm
    >>> aten = tm.ops.aten
    >>> args = (tm.ones(2, 1, 1), tm.ones(4, 1), tm.zeros(4, 1), tm.zeros(4), tm.zeros(4))
    >>> h0, c0 = tm.zeros(1, 1), tm.zeros(1, 1)
    >>> out, hy, cy, ws = aten.mkldnn_rnn_layer.default(*args, h0, c0, False, [], 2, 1, 1, True, False, False, True)
    >>> grads = aten.mkldnn_rnn_layer_backward.default(*args, h0, c0, out, hy, cy, tm.ones_like(out), None, None,
    ...                                                False, 2, 1, 1, True, True, False, [], False, ws)
    >>> round(grads[0].flatten()[1].item(), 4)
    0.3303
    """
    _check(input, weight1, weight2, hx_, cx_tmp, mode, hidden_size)
    states_shape = (input.shape[0], _STATES, *hx_.shape)
    if workspace.dtype == np.uint8 and workspace.size == np.prod(states_shape) * input.dtype.itemsize \
            and workspace.flags.c_contiguous:
        states = workspace.view(input.dtype).reshape(states_shape)
    else:  # not our forward's: its results recomputed
        output, _, _, recomputed = _lstm_forward(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, reverse,
                                                 has_biases)
        states = recomputed.view(input.dtype).reshape(states_shape)
    return _lstm_backward(input, weight1, weight2, hx_, cx_tmp, output, grad_output, grad_hy, grad_cy, reverse,
                          has_biases, states)

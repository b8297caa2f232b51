"""Recurrent layers: ``RNN`` (tanh or ReLU), ``LSTM`` and ``GRU`` over whole sequences, and their
one-step cells ``RNNCell``, ``LSTMCell`` and ``GRUCell``.

Everything is built from public ops (``F.linear``, ``sigmoid``, ``tanh`` ...), so autograd, modes
and tracers see an ordinary program. A layer projects the whole input sequence with one matmul,
then takes each time step with one matmul for all the gates of the hidden state.

>>> import tensormodes as tm
>>> lstm = tm.nn.LSTM(3, 5, num_layers=2)
>>> output, (h, c) = lstm(tm.randn(7, 2, 3))
>>> output.shape, h.shape, c.shape
(tensormodes.Size([7, 2, 5]), tensormodes.Size([2, 2, 5]), tensormodes.Size([2, 2, 5]))
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable

from ..._api import namespace as tm
from ..._ops.recurrent import lstm_step
from ...ops import aten
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


# -- one time step per mode: (input projection with its bias, state, w_hh, b_hh) -> new state ----

def _tanh_step(input_gates: tm.Tensor, hidden: tm.Tensor, w_hh: tm.Tensor, b_hh: tm.Tensor | None) -> tm.Tensor:
    return (input_gates + F.linear(hidden, w_hh, b_hh)).tanh()


def _relu_step(input_gates: tm.Tensor, hidden: tm.Tensor, w_hh: tm.Tensor, b_hh: tm.Tensor | None) -> tm.Tensor:
    return (input_gates + F.linear(hidden, w_hh, b_hh)).relu()


def _gru_step(input_gates: tm.Tensor, hidden: tm.Tensor, w_hh: tm.Tensor, b_hh: tm.Tensor | None) -> tm.Tensor:
    # Gates in PyTorch's order: reset, update, new. The reset gate scales the hidden part of the
    # new gate *with* its bias, so the hidden projection stays separate from the input's.
    input_reset, input_update, input_new = input_gates.chunk(3, -1)
    hidden_reset, hidden_update, hidden_new = F.linear(hidden, w_hh, b_hh).chunk(3, -1)
    reset = (input_reset + hidden_reset).sigmoid()
    update = (input_update + hidden_update).sigmoid()
    new = (input_new + reset * hidden_new).tanh()
    return new + update * (hidden - new)  # (1 - update) * new + update * hidden


_STEPS: dict[str, Callable] = {"RNN_TANH": _tanh_step, "RNN_RELU": _relu_step, "LSTM": lstm_step,
                               "GRU": _gru_step}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_LSTM_MODE = 2  # the mode number PyTorch's fused layer op takes for an LSTM
_LSTM_LAYER = aten.mkldnn_rnn_layer.default


def _fused_lstm(module: RNNBase, input: tm.Tensor) -> bool:
    """Whether PyTorch's CPU ``lstm`` runs its fused layer op (oneDNN's) for this LSTM and input:
    float32, no projections, some elements (packed sequences never)."""
    return module.mode == "LSTM" and input.dtype == tm.float32 and module.proj_size == 0 and input.numel() != 0


def _reject_projection(kwargs: dict) -> None:
    """PyTorch's ``RNN`` and ``GRU`` take ``**kwargs`` for ``RNNBase``, and refuse ``proj_size``."""
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"RNNBase.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")


def _check_type(name: str, value, kind: type) -> None:
    if not isinstance(value, kind):
        raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")


# -- whole-sequence layers ------------------------------------------------------------------------

class RNNBase(Module):
    """Base class for RNN modules (RNN, LSTM, GRU).

    Holds, per layer ``k`` and direction, ``weight_ih_l{k}`` (gates * hidden_size, input size),
    ``weight_hh_l{k}`` (gates * hidden_size, hidden_size) and with ``bias`` ``bias_ih_l{k}`` and
    ``bias_hh_l{k}`` (the reverse direction's names end in ``_reverse``), all initialised from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)). An LSTM with ``proj_size`` > 0 also holds
    ``weight_hr_l{k}`` (proj_size, hidden_size), and its hidden states have proj_size features
    (so ``weight_hh_l{k}`` is (gates * hidden_size, proj_size), as are the later layers' inputs).

    >>> import tensormodes as tm
    >>> [name for name, _ in tm.nn.GRU(2, 3, bidirectional=True, bias=False).named_parameters()]
    ['weight_ih_l0', 'weight_hh_l0', 'weight_ih_l0_reverse', 'weight_hh_l0_reverse']
    """

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=3)
        _check_type("bias", bias, bool)
        _check_type("batch_first", batch_first, bool)
        _check_type("input_size", input_size, int)
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        _check_type("hidden_size", hidden_size, int)
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * directions
            for direction in range(directions):
                suffix = "_reverse" if direction == 1 else ""
                names = [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
                shapes = [(gate_size, layer_input_size), (gate_size, real_hidden_size)]
                if bias:
                    names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
                    shapes += [(gate_size,), (gate_size,)]
                if proj_size > 0:
                    names.append(f"weight_hr_l{layer}{suffix}")
                    shapes.append((proj_size, hidden_size))
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(tm.empty(shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def flatten_parameters(self) -> None:
        """Does nothing: PyTorch packs the weights for cuDNN here, and there is no cuDNN on NumPy."""

    @property
    def _flat_weights(self) -> list[tm.Tensor]:
        # Looked up on each use, so load_state_dict and reassigned parameters are always seen.
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction, in order (``weight_ih``, ``weight_hh``, biases,
        ``weight_hr``)."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        """``input_size, hidden_size`` and the options that differ from their defaults."""
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text

    # -- forward ------------------------------------------------------------------------------

    def _batched(self, input: tm.Tensor) -> tuple[tm.Tensor, bool]:
        """``input`` with a batch dimension, and whether it had one; checks its rank."""
        if input.dim() not in (2, 3):
            name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
            got = f"{input.dim()}D tensor instead" if name == "RNN" else f"{input.dim()}D instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {got}")
        if input.dim() == 3:
            return input, True
        return input.unsqueeze(0 if self.batch_first else 1), False

    def _check_input(self, input: tm.Tensor) -> None:
        weight_dtype = self.weight_ih_l0.dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). Convert "
                             f"input: input.to({weight_dtype}), or convert model: model.to({input.dtype})")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")

    def _expected_hidden_size(self, input: tm.Tensor, *, cell: bool = False) -> tuple[int, int, int]:
        """The initial hidden state's shape (the LSTM's cell state's with ``cell``: it is not projected)."""
        batch = input.size(0) if self.batch_first else input.size(1)
        features = self.proj_size if self.proj_size > 0 and not cell else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), batch, features)

    @staticmethod
    def _check_hidden_size(hidden: tm.Tensor, expected: tuple[int, int, int],
                           message: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hidden.shape) != expected:
            raise RuntimeError(message.format(expected, list(hidden.shape)))

    def _zeros(self, input: tm.Tensor, *, cell: bool = False) -> tm.Tensor:
        return tm.zeros(self._expected_hidden_size(input, cell=cell), dtype=input.dtype, device=input.device)

    def _run(self, input: tm.Tensor, state: tm.Tensor | tuple[tm.Tensor, tm.Tensor]):
        """The stacked layers over a batched ``input``; ``state`` holds every layer's and direction's
        initial state along dim 0 (a pair of them for the LSTM). Returns the last layer's outputs and
        the final states in the same layout."""
        if _fused_lstm(self, input):
            return self._run_fused_lstm(input, state)
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        sequence = input.transpose(0, 1) if self.batch_first else input  # time first
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                weights = self.all_weights[index]
                w_ih, w_hh = weights[0], weights[1]
                b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
                projection = (weights[-1],) if self.proj_size > 0 else ()
                carry = (state[0][index], state[1][index]) if lstm else state[index]
                # One matmul projects every time step's input; the loop only adds the hidden part.
                projected = F.linear(sequence, w_ih, b_ih).unbind(0)
                if direction == 1:
                    projected = projected[::-1]
                hiddens = []
                for input_gates in projected:
                    carry = step(input_gates, carry, w_hh, b_hh, *projection)
                    hiddens.append(carry[0] if lstm else carry)
                if direction == 1:
                    hiddens.reverse()
                outputs.append(tm.stack(hiddens) if hiddens else sequence.new_zeros(
                    (0, sequence.shape[1], self.proj_size or self.hidden_size)))
                finals.append(carry)
            sequence = outputs[0] if directions == 1 else tm.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                sequence = F.dropout(sequence, self.dropout, True)
        output = sequence.transpose(0, 1) if self.batch_first else sequence
        if lstm:
            return output, (tm.stack([h for h, _ in finals]), tm.stack([c for _, c in finals]))
        return output, tm.stack(finals)

    def _run_fused_lstm(self, input: tm.Tensor, state: tuple[tm.Tensor, tm.Tensor]):
        """``_run`` of an LSTM as PyTorch's CPU path runs a float32 one without projections: one
        fused op per layer and direction (``mkldnn_rnn_layer``, same values as the steps of
        public ops), over the time-major input."""
        directions = 2 if self.bidirectional else 1
        sequence = input.transpose(0, 1).contiguous() if self.batch_first else input
        hiddens, cells = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                weights = self.all_weights[index]
                hidden, cell = state[0][index], state[1][index]
                if self.bias:
                    biases = weights[2], weights[3]
                else:  # PyTorch hands the op zeros (of the weights' shapes), which it does not read
                    biases = tuple(tm.zeros(w.shape, dtype=w.dtype, device=w.device) for w in weights[1::-1])
                output, hidden, cell, _ = _LSTM_LAYER(
                    sequence, weights[0], weights[1], *biases, hidden, cell, direction == 1, [], _LSTM_MODE,
                    self.hidden_size, self.num_layers, self.bias, self.bidirectional, self.batch_first,
                    self.training)
                outputs.append(output)
                hiddens.append(hidden)
                cells.append(cell)
            sequence = outputs[0] if directions == 1 else tm.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                sequence = F.dropout(sequence, self.dropout, True)
        output = sequence.transpose(0, 1) if self.batch_first else sequence
        return output, (tm.stack(hiddens), tm.stack(cells))

    def _run_packed(self, data: tm.Tensor, sizes: list[int], state):
        """The stacked layers over a packed sequence's ``data`` (``sizes``: its batch sizes);
        ``state`` as ``_run``'s, rows sorted as the packed batch. Returns the output data and
        the final states."""
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        sequence, finals = data, []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                weights = self.all_weights[index]
                b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
                projection = (weights[-1],) if self.proj_size > 0 else ()
                initial = (state[0][index], state[1][index]) if lstm else state[index]
                projected = F.linear(sequence, weights[0], b_ih).split(sizes)
                hiddens, final = _run_packed_direction(step, projected, sizes, initial, direction == 1,
                                                       (weights[1], b_hh, *projection))
                outputs.append(tm.cat(hiddens))
                finals.append(final)
            sequence = outputs[0] if directions == 1 else tm.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                sequence = F.dropout(sequence, self.dropout, True)
        if lstm:
            return sequence, (tm.stack([h for h, _ in finals]), tm.stack([c for _, c in finals]))
        return sequence, tm.stack(finals)

    def _forward_packed(self, packed: PackedSequence, hx):
        """``forward`` for a PackedSequence: the output packed the same way, and the final
        states in the batch's original order."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        sizes = [int(n) for n in batch_sizes.tolist()]
        lstm = self.mode == "LSTM"
        expected = (self.num_layers * (2 if self.bidirectional else 1), sizes[0],
                    self.proj_size if self.proj_size > 0 else self.hidden_size)
        expected_cell = expected[:2] + (self.hidden_size,)
        if hx is None:
            hx = tm.zeros(expected, dtype=data.dtype, device=data.device)
            if lstm:
                hx = (hx, tm.zeros(expected_cell, dtype=data.dtype, device=data.device))
        elif sorted_indices is not None:
            hx = tuple(h.index_select(1, sorted_indices) for h in hx) if lstm else hx.index_select(1, sorted_indices)
        if data.dim() != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.dim()}")
        self._check_input(data)
        if lstm:
            self._check_hidden_size(hx[0], expected, "Expected hidden[0] size {}, got {}")
            self._check_hidden_size(hx[1], expected_cell, "Expected hidden[1] size {}, got {}")
        else:
            self._check_hidden_size(hx, expected)
        output, hidden = self._run_packed(data, sizes, hx)
        if unsorted_indices is not None:
            hidden = (tuple(h.index_select(1, unsorted_indices) for h in hidden) if lstm
                      else hidden.index_select(1, unsorted_indices))
        return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), hidden


def _rows(carry, start: int, stop: int):
    """Rows ``start:stop`` of a state (both parts of an LSTM's)."""
    if isinstance(carry, tuple):
        return tuple(part[start:stop] for part in carry)
    return carry[start:stop]


def _cat_rows(pieces: list):
    """States stacked by rows (part by part for an LSTM's)."""
    if isinstance(pieces[0], tuple):
        return tuple(tm.cat(parts) for parts in zip(*pieces))
    return tm.cat(pieces)


def _run_packed_direction(step: Callable, projected: list, sizes: list[int], initial, reverse: bool,
                          weights: tuple) -> tuple[list, object]:
    """One direction of one layer over a packed sequence: step ``t`` takes the ``sizes[t]``
    sequences still running (longest first). Returns each step's hidden output, in time order,
    and the final state of every sequence (the state each had at its own last step)."""
    lstm = isinstance(initial, tuple)
    hiddens = []
    if not reverse:
        carry, finished = initial, []
        for gates, running in zip(projected, sizes):
            rows = (carry[0] if lstm else carry).shape[0]
            if running < rows:  # the shortest sequences ended at the previous step
                finished.append(_rows(carry, running, rows))
                carry = _rows(carry, 0, running)
            carry = step(gates, carry, *weights)
            hiddens.append(carry[0] if lstm else carry)
        return hiddens, _cat_rows([carry, *reversed(finished)])
    carry = _rows(initial, 0, sizes[-1])
    for t in range(len(sizes) - 1, -1, -1):
        rows = (carry[0] if lstm else carry).shape[0]
        if sizes[t] > rows:  # longer sequences start (from the end) here, from their initial state
            carry = _cat_rows([carry, _rows(initial, rows, sizes[t])])
        carry = step(projected[t], carry, *weights)
        hiddens.append(carry[0] if lstm else carry)
    hiddens.reverse()
    return hiddens, carry


class RNN(RNNBase):
    """Apply a multi-layer Elman RNN with tanh or ReLU non-linearity to an input sequence.

    h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) for each layer (``relu`` with
    ``nonlinearity='relu'``). Input (L, N, H_in), (N, L, H_in) with ``batch_first`` or
    unbatched (L, H_in); returns the last layer's outputs and the final hidden states
    (num_layers * num_directions, N, H_out). Dropout is applied between layers in training.

    >>> import tensormodes as tm
    >>> rnn = tm.nn.RNN(10, 20, 2)
    >>> output, hn = rnn(tm.randn(5, 3, 10), tm.randn(2, 3, 20))
    >>> output.shape, hn.shape
    (tensormodes.Size([5, 3, 20]), tensormodes.Size([2, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None, **kwargs) -> None:
        _reject_projection(kwargs)
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: tm.Tensor, hx: tm.Tensor | None = None) -> tuple[tm.Tensor, tm.Tensor]:
        """``(output, h_n)`` for ``input`` from the initial hidden state ``hx`` (zeros by default);
        for a PackedSequence ``input``, ``output`` is packed the same way."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        input, batched = self._batched(input)
        if hx is not None:
            if batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if not batched:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        else:
            hx = self._zeros(input)
        self._check_input(input)
        self._check_hidden_size(hx, self._expected_hidden_size(input))
        output, hidden = self._run(input, hx)
        if not batched:
            return output.squeeze(0 if self.batch_first else 1), hidden.squeeze(1)
        return output, hidden


class GRU(RNNBase):
    """Apply a multi-layer gated recurrent unit (GRU) RNN to an input sequence.

    r = sigmoid(W_ir x + b_ir + W_hr h + b_hr), z = sigmoid(W_iz x + b_iz + W_hz h + b_hz),
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h; the gates are
    stacked in that order in ``weight_ih_l{k}`` and ``weight_hh_l{k}``. Shapes as ``RNN``.

    >>> import tensormodes as tm
    >>> gru = tm.nn.GRU(10, 20, batch_first=True)
    >>> output, hn = gru(tm.randn(3, 5, 10))
    >>> output.shape, hn.shape
    (tensormodes.Size([3, 5, 20]), tensormodes.Size([1, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None, **kwargs) -> None:
        _reject_projection(kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    forward = RNN.forward


class LSTM(RNNBase):
    """Apply a multi-layer long short-term memory (LSTM) RNN to an input sequence.

    i, f, g, o = split(x W_ih^T + b_ih + h W_hh^T + b_hh) (gates stacked in that order);
    c' = sigmoid(f) * c + sigmoid(i) * tanh(g), h' = sigmoid(o) * tanh(c'). Returns
    ``(output, (h_n, c_n))``; shapes as ``RNN``. With ``proj_size`` > 0 each new hidden state is
    projected, h' = W_hr (sigmoid(o) * tanh(c')), so ``output`` and ``h_n`` have ``proj_size``
    features (c_n keeps ``hidden_size``).

    >>> import tensormodes as tm
    >>> lstm = tm.nn.LSTM(10, 20, 2, bidirectional=True)
    >>> output, (hn, cn) = lstm(tm.randn(5, 3, 10))
    >>> output.shape, hn.shape
    (tensormodes.Size([5, 3, 40]), tensormodes.Size([4, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)

    def forward(self, input: tm.Tensor, hx: tuple[tm.Tensor, tm.Tensor] | None = None
                ) -> tuple[tm.Tensor, tuple[tm.Tensor, tm.Tensor]]:
        """``(output, (h_n, c_n))`` for ``input`` from the initial states ``hx = (h_0, c_0)`` (zeros by
        default); for a PackedSequence ``input``, ``output`` is packed the same way."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        input, batched = self._batched(input)
        if hx is None:
            hx = (self._zeros(input), self._zeros(input, cell=True))
        else:
            hidden, cell = hx
            rank = 3 if batched else 2
            if hidden.dim() != rank or cell.dim() != rank:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {rank}-D but got ({hidden.dim()}-D, "
                                   f"{cell.dim()}-D) tensors")
            if not batched:
                hx = (hidden.unsqueeze(1), cell.unsqueeze(1))
        self._check_input(input)
        self._check_hidden_size(hx[0], self._expected_hidden_size(input), "Expected hidden[0] size {}, got {}")
        self._check_hidden_size(hx[1], self._expected_hidden_size(input, cell=True),
                                "Expected hidden[1] size {}, got {}")
        output, (hidden, cell) = self._run(input, hx)
        if not batched:
            return output.squeeze(0 if self.batch_first else 1), (hidden.squeeze(1), cell.squeeze(1))
        return output, (hidden, cell)


# -- cells ----------------------------------------------------------------------------------------

class RNNCellBase(Module):
    """Base class for the one-step cells: ``weight_ih`` (chunks * hidden_size, input_size),
    ``weight_hh`` (chunks * hidden_size, hidden_size), and with ``bias`` ``bias_ih`` and
    ``bias_hh``, all initialised from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

    >>> import tensormodes as tm
    >>> tm.nn.LSTMCell(3, 4).weight_hh.shape
    tensormodes.Size([16, 4])
    """

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(tm.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(tm.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(tm.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(tm.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        """``input_size, hidden_size`` and the options that differ from their defaults."""
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text

    def reset_parameters(self) -> None:
        """Draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def _batched(self, input: tm.Tensor, name: str) -> tuple[tm.Tensor, bool]:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        return (input, True) if input.dim() == 2 else (input.unsqueeze(0), False)

    def _check_hidden(self, input: tm.Tensor, hidden: tm.Tensor, which: int) -> None:
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        if input.size(0) != hidden.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{which} batch size "
                               f"{hidden.size(0)}")
        if hidden.size(1) != self.hidden_size:
            raise RuntimeError(f"hidden{which} has inconsistent hidden_size: got {hidden.size(1)}, expected "
                               f"{self.hidden_size}")

    def _hidden(self, input: tm.Tensor, hx: tm.Tensor | None, batched: bool, name: str) -> tm.Tensor:
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        if hx is None:
            hx = tm.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
        elif not batched:
            hx = hx.unsqueeze(0)
        self._check_hidden(input, hx, 0)
        return hx


class RNNCell(RNNCellBase):
    """An Elman RNN cell with tanh or ReLU non-linearity: h' = tanh(W_ih x + b_ih + W_hh h + b_hh).

    >>> import tensormodes as tm
    >>> cell = tm.nn.RNNCell(10, 20, nonlinearity='relu')
    >>> cell
    RNNCell(10, 20, nonlinearity=relu)
    >>> cell(tm.randn(3, 10)).shape
    tensormodes.Size([3, 20])
    """

    __constants__ = [*RNNCellBase.__constants__, "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: tm.Tensor, hx: tm.Tensor | None = None) -> tm.Tensor:
        """The next hidden state from ``input`` (N, H_in) or (H_in) and ``hx`` (zeros by default)."""
        input, batched = self._batched(input, "RNNCell")
        hx = self._hidden(input, hx, batched, "RNNCell")
        if self.nonlinearity == "tanh":
            step = _tanh_step
        elif self.nonlinearity == "relu":
            step = _relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        result = step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return result if batched else result.squeeze(0)


class LSTMCell(RNNCellBase):
    """A long short-term memory (LSTM) cell: one step of ``LSTM``, returning ``(h', c')``.

    >>> import tensormodes as tm
    >>> h, c = tm.nn.LSTMCell(10, 20)(tm.randn(3, 10))
    >>> h.shape, c.shape
    (tensormodes.Size([3, 20]), tensormodes.Size([3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: tm.Tensor, hx: tuple[tm.Tensor, tm.Tensor] | None = None
                ) -> tuple[tm.Tensor, tm.Tensor]:
        """``(h', c')`` from ``input`` (N, H_in) or (H_in) and ``hx = (h, c)`` (zeros by default)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for index, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{index}] to be 1D or 2D, got {value.dim()}D instead")
        input, batched = self._batched(input, "LSTMCell")
        if hx is None:
            zeros = tm.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (zeros, zeros)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check_hidden(input, hx[0], 0)
        self._check_hidden(input, hx[1], 1)
        hidden, cell = lstm_step(F.linear(input, self.weight_ih, self.bias_ih), tuple(hx), self.weight_hh,
                                  self.bias_hh)
        return (hidden, cell) if batched else (hidden.squeeze(0), cell.squeeze(0))


class GRUCell(RNNCellBase):
    """A gated recurrent unit (GRU) cell: one step of ``GRU``.

    >>> import tensormodes as tm
    >>> tm.nn.GRUCell(10, 20, bias=False)(tm.randn(10)).shape
    tensormodes.Size([20])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: tm.Tensor, hx: tm.Tensor | None = None) -> tm.Tensor:
        """The next hidden state from ``input`` (N, H_in) or (H_in) and ``hx`` (zeros by default)."""
        input, batched = self._batched(input, "GRUCell")
        hx = self._hidden(input, hx, batched, "GRUCell")
        result = _gru_step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return result if batched else result.squeeze(0)

"""``RNN``, ``LSTM``, ``GRU`` and their cells against PyTorch's with the same weights: outputs and
final states, gradients of inputs, initial states and every weight, state-dict names, ``repr``,
initialisation and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tests.torch_oracle import assert_raises_like_torch

from .nn_oracle import check_layer

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(99)


def _floats(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


CASES = [
    ("L.nn.RNN(3, 4)", [_floats(5, 2, 3)]),
    ("L.nn.RNN(3, 4, nonlinearity='relu')", [_floats(5, 2, 3), _floats(1, 2, 4)]),
    ("L.nn.RNN(3, 4, 2, bias=False, bidirectional=True)", [_floats(4, 3, 3), _floats(4, 3, 4)]),
    ("L.nn.RNN(3, 4, batch_first=True)", [_floats(2, 6, 3)]),
    ("L.nn.RNN(3, 4, 2)", [_floats(6, 3), _floats(2, 4)]),
    ("L.nn.LSTM(3, 4)", [_floats(5, 2, 3)]),
    ("L.nn.LSTM(3, 4, num_layers=2)", [_floats(5, 2, 3), (_floats(2, 2, 4), _floats(2, 2, 4))]),
    ("L.nn.LSTM(3, 5, bidirectional=True, batch_first=True)", [_floats(2, 4, 3)]),
    ("L.nn.LSTM(3, 4, 3, bias=False, bidirectional=True)", [_floats(4, 2, 3), (_floats(6, 2, 4), _floats(6, 2, 4))]),
    ("L.nn.LSTM(3, 4, batch_first=True)", [_floats(6, 3), (_floats(1, 4), _floats(1, 4))]),
    ("L.nn.LSTM(3, 4, 2, dropout=0.5)", [_floats(5, 2, 3)]),
    ("L.nn.LSTM(3, 5, proj_size=2)", [_floats(5, 2, 3)]),
    ("L.nn.LSTM(3, 5, proj_size=2)", [_floats(5, 2, 3), (_floats(1, 2, 2), _floats(1, 2, 5))]),
    ("L.nn.LSTM(3, 5, 2, proj_size=3, bidirectional=True)", [_floats(4, 2, 3), (_floats(4, 2, 3), _floats(4, 2, 5))]),
    ("L.nn.LSTM(3, 6, 2, bias=False, batch_first=True, proj_size=1)", [_floats(2, 4, 3)]),
    ("L.nn.LSTM(3, 5, proj_size=4, batch_first=True, bidirectional=True)", [_floats(6, 3), (_floats(2, 4),
                                                                                           _floats(2, 5))]),
    ("L.nn.GRU(3, 4)", [_floats(5, 2, 3)]),
    ("L.nn.GRU(3, 4, 2, bidirectional=True)", [_floats(5, 2, 3), _floats(4, 2, 4)]),
    ("L.nn.GRU(3, 4, bias=False, batch_first=True)", [_floats(3, 5, 3)]),
    ("L.nn.GRU(3, 4, 2, batch_first=True, bidirectional=True)", [_floats(5, 3)]),
    ("L.nn.RNNCell(3, 4)", [_floats(2, 3), _floats(2, 4)]),
    ("L.nn.RNNCell(3, 4, bias=False, nonlinearity='relu')", [_floats(2, 3)]),
    ("L.nn.RNNCell(3, 4)", [_floats(3), _floats(4)]),
    ("L.nn.LSTMCell(3, 4)", [_floats(2, 3), (_floats(2, 4), _floats(2, 4))]),
    ("L.nn.LSTMCell(3, 4, bias=False)", [_floats(3)]),
    ("L.nn.LSTMCell(3, 4)", [_floats(3), (_floats(4), _floats(4))]),
    ("L.nn.GRUCell(3, 4)", [_floats(2, 3), _floats(2, 4)]),
    ("L.nn.GRUCell(3, 4, bias=False)", [_floats(3)]),
]


@pytest.mark.torch
@pytest.mark.parametrize("expression, inputs", CASES, ids=[c[0].removeprefix("L.nn.") for c in CASES])
def test_recurrent_layer_matches_torch(expression, inputs):
    """Evaluation mode (no inter-layer dropout); float32 values within 1e-5, gradients within 1e-4."""
    check_layer(torch, expression, inputs)


@pytest.mark.torch
def test_lstm_over_a_long_sequence_matches_torch():
    """60 steps of a 2-layer bidirectional LSTM: the rounding of each step does not build up."""
    check_layer(torch, "L.nn.LSTM(8, 16, 2, bidirectional=True)", [_floats(60, 4, 8)], atol=2e-5)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.RNN(3, 4)", "L.nn.RNN(3, 4, 2, nonlinearity='relu', bias=False, batch_first=True, dropout=0.5, "
    "bidirectional=True)", "L.nn.LSTM(3, 4, num_layers=3)", "L.nn.GRU(3, 4, dropout=0.25, num_layers=2)",
    "L.nn.RNNCell(3, 4)", "L.nn.RNNCell(3, 4, nonlinearity='relu', bias=False)", "L.nn.LSTMCell(3, 4)",
    "L.nn.GRUCell(3, 4, bias=False)", "L.nn.LSTM(3, 5, proj_size=2)",
    "L.nn.LSTM(3, 5, 3, bias=False, bidirectional=True, proj_size=4)",
])
def test_repr_and_state_dict_names_match_torch(expression):
    ours = eval(expression, {"L": tm})
    theirs = eval(expression, {"L": torch})
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.RNN(3, 4, nonlinearity='sigmoid')",
    "L.nn.RNN(3, 4, dropout=2)",
    "L.nn.RNN(3, 4, dropout=True)",
    "L.nn.RNN(3, 0)",
    "L.nn.RNN(0, 3)",
    "L.nn.RNN(3, 4, num_layers=0)",
    "L.nn.RNN(3.0, 4)",
    "L.nn.GRU(3, 4, bias=1)",
    "L.nn.LSTM(3, 4, batch_first=None)",
    "L.nn.LSTM(3, 4, proj_size=4)",
    "L.nn.LSTM(3, 4, proj_size=-1)",
    "L.nn.LSTM(3, 4, proj_size=5)",
    "L.nn.RNN(3, 4, proj_size=2)",
    "L.nn.RNN(3, 4, proj_size=0)",
    "L.nn.GRU(3, 4, 2, proj_size=1)",
    "L.nn.GRU(3, 4, projection=1)",
    "L.nn.LSTM(3, 4, proj_size=2)(L.ones(2, 5, 3), (L.ones(1, 5, 4), L.ones(1, 5, 4)))",
    "L.nn.LSTM(3, 4, proj_size=2)(L.ones(2, 5, 3), (L.ones(1, 5, 2), L.ones(1, 5, 2)))",
    "L.nn.LSTM(3, 4, proj_size=2, bidirectional=True)(L.ones(2, 5, 3), (L.ones(1, 5, 2), L.ones(1, 5, 4)))",
    "L.nn.LSTM(3, 4, 2, proj_size=2)(L.ones(2, 5, 4))",
    "L.nn.RNN(3, 4)(L.ones(1, 2, 3, 4))",
    "L.nn.LSTM(3, 4)(L.ones(5))",
    "L.nn.GRU(3, 4)(L.ones(1, 2, 3, 4))",
    "L.nn.LSTM(3, 4)(L.ones(2, 5, 4))",
    "L.nn.LSTM(3, 4)(L.ones(2, 5, 3), (L.ones(1, 5, 4), L.ones(1, 4, 4)))",
    "L.nn.LSTM(3, 4)(L.ones(2, 5, 3), (L.ones(1, 4, 4), L.ones(1, 5, 4)))",
    "L.nn.LSTM(3, 4)(L.ones(2, 5, 3), (L.ones(5, 4), L.ones(1, 5, 4)))",
    "L.nn.LSTM(3, 4)(L.ones(5, 3), (L.ones(1, 1, 4), L.ones(1, 4)))",
    "L.nn.GRU(3, 4)(L.ones(2, 5, 3), L.ones(2, 5, 4))",
    "L.nn.GRU(3, 4)(L.ones(2, 5, 3, dtype=L.float64))",
    "L.nn.GRU(3, 4)(L.ones(5, 3), L.ones(1, 1, 4))",
    "L.nn.RNN(3, 4)(L.ones(5, 2, 3), L.ones(1, 4))",
    "L.nn.RNNCell(3, 4)(L.ones(2, 5))",
    "L.nn.RNNCell(3, 4)(L.ones(2, 3), L.ones(3, 4))",
    "L.nn.RNNCell(3, 4)(L.ones(2, 3), L.ones(2, 5))",
    "L.nn.RNNCell(3, 4)(L.ones(2, 3), L.ones(1, 2, 4))",
    "L.nn.LSTMCell(3, 4)(L.ones(2, 3), (L.ones(2, 4), L.ones(2, 5)))",
    "L.nn.LSTMCell(3, 4)(L.ones(2, 3), (L.ones(2, 4), L.ones(1, 2, 4)))",
    "L.nn.GRUCell(3, 4)(L.ones(2, 3, 1))",
    "L.nn.RNNCell(3, 4, nonlinearity='sigmoid')(L.ones(3))",
])
def test_construction_and_call_errors_match_torch(expression):
    assert_raises_like_torch(expression)


def test_projected_lstm_shapes_and_parameters():
    lstm = tm.nn.LSTM(3, 6, 2, proj_size=2, bidirectional=True)
    shapes = {name: tuple(p.shape) for name, p in lstm.named_parameters()}
    # Later layers read both directions' projected states; every weight_hh reads a projected state.
    assert shapes["weight_ih_l1"] == (24, 4) and shapes["weight_hh_l0_reverse"] == (24, 2)
    assert shapes["weight_hr_l0"] == shapes["weight_hr_l1_reverse"] == (2, 6)
    assert [name for name in shapes if name.endswith("l0")] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0",
                                                               "bias_hh_l0", "weight_hr_l0"]
    assert [len(weights) for weights in lstm.all_weights] == [5, 5, 5, 5]
    output, (h, c) = lstm(tm.randn(7, 3, 3))
    assert output.shape == (7, 3, 4) and h.shape == (4, 3, 2) and c.shape == (4, 3, 6)
    assert lstm(tm.randn(0, 3, 3))[0].shape == (0, 3, 4)  # an empty sequence keeps the output's width
    # The last layer's final projected states are the ends of the output: forward's last step, reverse's first.
    assert h[2].tolist() == output[-1, :, :2].tolist() and h[3].tolist() == output[0, :, 2:].tolist()


def test_projected_lstm_initialisation_is_uniform_in_hidden_size_bound():
    """Every parameter, ``weight_hr`` included, is drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    tm.manual_seed(0)
    lstm = tm.nn.LSTM(4, 16, proj_size=8)
    projection = lstm.weight_hr_l0.detach().numpy()
    assert projection.shape == (8, 16)
    assert np.abs(projection).max() <= 0.25 and np.abs(projection).max() > 0.2
    assert len({tuple(p.detach().numpy().ravel()[:3]) for p in lstm.parameters()}) == 5


def test_dropout_with_one_layer_warns_like_torch():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1, but got "
                                         "dropout=0.5 and num_layers=1"):
        tm.nn.GRU(3, 4, dropout=0.5)


def test_dropout_between_layers_only_in_training():
    """With p=1 every layer after the first sees zeros in training, so the output is the second
    layer run on zero inputs: the same for any input. In evaluation mode it depends on the input."""
    tm.manual_seed(0)
    rnn = tm.nn.RNN(3, 4, num_layers=2, dropout=1.0)
    first, second = rnn(tm.randn(5, 2, 3))[0], rnn(tm.randn(5, 2, 3))[0]
    assert first.tolist() == second.tolist()
    rnn.eval()
    assert rnn(tm.randn(5, 2, 3))[0].tolist() != rnn(tm.randn(5, 2, 3))[0].tolist()


@pytest.mark.parametrize("expression", ["tm.nn.LSTM(64, 96, 2, bidirectional=True)", "tm.nn.GRUCell(50, 300)",
                                        "tm.nn.RNN(10, 400)"])
def test_initialisation_is_uniform_within_one_over_sqrt_hidden(expression):
    """U(-b, b) with b = 1/sqrt(hidden_size) for every weight and bias: all within the bound, and over
    all the values (at least 15,000, seeded) the std is b/sqrt(3) within 3% and the max reaches 99% of b."""
    tm.manual_seed(0)
    layer = eval(expression, {"tm": tm})
    bound = 1 / np.sqrt(layer.hidden_size)
    values = np.concatenate([p.detach().numpy().ravel() for p in layer.parameters()])
    assert values.size >= 15000 and np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.99 * bound
    assert abs(values.std() / (bound / np.sqrt(3)) - 1) < 0.03


def test_all_weights_and_flatten_parameters():
    lstm = tm.nn.LSTM(2, 3, num_layers=2, bidirectional=True, bias=False)
    lstm.flatten_parameters()
    assert [[tuple(w.shape) for w in layer] for layer in lstm.all_weights] == \
        [[(12, 2), (12, 3)], [(12, 2), (12, 3)], [(12, 6), (12, 3)], [(12, 6), (12, 3)]]
    assert lstm.all_weights[1][0] is lstm.weight_ih_l0_reverse


def test_lstm_step_is_a_handful_of_ops():
    """One matmul for all the gates of a time step: the op count per step stays small and fixed."""
    from tensormodes.modes import OpCounterMode

    lstm = tm.nn.LSTM(4, 8)
    counts = []
    for steps in (3, 6):
        with OpCounterMode() as counter:
            lstm(tm.randn(steps, 2, 4))
        counts.append(sum(counter.counts.values()))
    per_step = (counts[1] - counts[0]) / 3
    assert per_step <= 12, per_step


# -- the fused layer op (PyTorch's CPU path for float32 LSTMs) ------------------------------------

def _lstm_run(monkeypatch, module, x, state, fused: bool):
    """Outputs, final states and every gradient of a loss over them, with the fused op or the steps."""
    from tensormodes.nn.modules import rnn

    monkeypatch.setattr(rnn, "_fused_lstm", rnn._fused_lstm if fused else lambda module, data: False)
    module.zero_grad()
    x = x.detach().requires_grad_()
    state = None if state is None else tuple(s.detach().requires_grad_() for s in state)
    output, (h, c) = module(x, state)
    (output * output.detach().cos()).sum().add(h.sum() * 1.5).add(c.sin().sum()).backward()
    leaves = [*module.parameters(), x, *(state or ())]
    return [output._data, h._data, c._data] + [leaf.grad._data for leaf in leaves]


@pytest.mark.parametrize(("expression", "shape", "with_state"), [
    ("L.nn.LSTM(6, 8, batch_first=True)", (3, 7, 6), False),
    ("L.nn.LSTM(3, 5, 2, bidirectional=True)", (6, 2, 3), True),
    ("L.nn.LSTM(3, 4, 3, bias=False, bidirectional=True, batch_first=True)", (2, 5, 3), False),
])
def test_fused_lstm_layer_gives_the_steps_bits(monkeypatch, expression, shape, with_state):
    """A float32 LSTM runs one fused op per layer and direction: outputs, final states and every
    gradient are bit for bit those of the time steps of public ops (float64 still runs those)."""
    tm.manual_seed(3)
    module = eval(expression.replace("L.", "tm."))  # noqa: S307 - the test's own expressions
    x = tm.randn(*shape)
    layers = module.num_layers * (2 if module.bidirectional else 1)
    batch = shape[0] if module.batch_first else shape[1]
    state = (tm.randn(layers, batch, 5), tm.randn(layers, batch, 5)) if with_state else None
    fused, steps = _lstm_run(monkeypatch, module, x, state, True), _lstm_run(monkeypatch, module, x, state, False)
    for ours, reference in zip(fused, steps, strict=True):
        assert ours.dtype == reference.dtype and np.array_equal(ours, reference)


def _dispatched(L, run) -> list[str]:
    """The ops ``run`` sends to the dispatch level of library ``L``."""
    class Log(L.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    seen: list[str] = []
    with Log():
        run()
    return seen


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstm_reaches_pytorchs_fused_layer_op_at_the_dispatch_level(dtype):
    """Where PyTorch's CPU lstm runs ``mkldnn_rnn_layer`` (float32: once per layer and direction,
    and its backward op), ours does; float64 runs the steps in both."""
    def names(L):
        lstm = L.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True).to(getattr(L, dtype))
        x = L.randn(2, 5, 3, dtype=getattr(L, dtype), requires_grad=True)
        return [name.removeprefix("aten.") for name in _dispatched(L, lambda: lstm(x)[0].sum().backward())
                if "mkldnn" in name]

    assert names(tm) == names(torch)
    assert names(tm) == ([] if dtype == "float64" else ["mkldnn_rnn_layer.default"] * 4
                         + ["mkldnn_rnn_layer_backward.default"] * 4)


@pytest.mark.torch
def test_double_backward_through_a_fused_lstm_matches_torch():
    """create_graph=True through the fused op: its backward op is differentiated through the
    layer's steps, as PyTorch differentiates its LSTM."""
    results = []
    for L in (tm, torch):
        L.manual_seed(0)
        lstm = L.nn.LSTM(3, 4)
        weights = [torch.tensor(w.detach().numpy()) for w in results[0][0]] if results else None
        if weights:
            with torch.no_grad():
                for p, w in zip(lstm.parameters(), weights):
                    p.copy_(w)
        x = L.tensor(RNG.standard_normal((4, 2, 3)).astype(np.float32) if not results else results[0][1],
                     requires_grad=True)
        output, _ = lstm(x)
        grad_x, = L.autograd.grad(output.pow(2).sum(), x, create_graph=True)
        second, = L.autograd.grad(grad_x.pow(2).sum(), x)
        results.append((list(lstm.parameters()), x.detach().numpy().copy(), grad_x.detach().numpy(),
                        second.numpy()))
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(results[0][3], results[1][3], rtol=1e-4, atol=1e-5)

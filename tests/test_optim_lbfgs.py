"""LBFGS (with and without the strong-Wolfe line search) and SparseAdam: iterates, state and
errors, against literal values recorded from PyTorch 2.13 and against PyTorch where installed."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.overrides import TorchFunctionMode


@pytest.fixture
def torch():
    import torch

    return torch


# (options, [(loss returned by step, parameters after it, state func_evals, state n_iter)] * 3),
# on Rosenbrock's function from (-1.2, 1), float64
LITERAL = [
    ({'max_iter': 4}, [
        (24.199999999999996, [-0.9253632377854821, 1.0207786998275232], 4, 4),
        (6.412442546983449, [-0.988348906307429, 0.988272746663466], 8, 8),
        (3.9666168709954874, [-0.15316577185606484, -0.38063995611619095], 12, 12),
    ]),
    ({'max_iter': 4, 'line_search_fn': 'strong_wolfe'}, [
        (24.199999999999996, [-1.0288795348319695, 1.0655029516848564], 5, 3),
        (4.121126775765638, [-0.9431278012083242, 0.8529662725410918], 10, 7),
        (3.9091442795206377, [-0.5160277728852024, 0.2265458257902353], 15, 11),
    ]),
    ({'lr': 0.5, 'max_iter': 3, 'history_size': 2}, [
        (24.199999999999996, [-0.9150600556261775, 1.108328200214387], 3, 2),
        (11.011191599950664, [-1.0100090315076558, 1.0687387798872126], 6, 4),
        (4.276531960392678, [-1.0218616419684197, 1.061755111061051], 9, 6),
    ]),
    ({'line_search_fn': 'strong_wolfe', 'max_iter': 6, 'max_eval': 7, 'history_size': 3}, [
        (24.199999999999996, [-1.0202985244456986, 1.0352565141554502], 7, 5),
        (4.084915328090515, [-0.5378302256216367, 0.2961099017321947], 15, 11),
        (2.369612066737468, [0.018827210061785463, -0.010779896381125434], 22, 16),
    ]),
]


def _rosenbrock_run(lib, options, steps=3, dtype="float64"):
    w = lib.nn.Parameter(lib.tensor([-1.2, 1.0], dtype=getattr(lib, dtype)))
    opt = lib.optim.LBFGS([w], **options)

    def closure():
        opt.zero_grad()
        loss = 100 * (w[1] - w[0] ** 2) ** 2 + (1 - w[0]) ** 2
        loss.backward()
        return loss

    rows = []
    for _ in range(steps):
        loss = opt.step(closure).item()
        rows.append((loss, w.tolist(), opt.state[w]["func_evals"], opt.state[w]["n_iter"]))
    return rows, opt


@pytest.mark.parametrize("options,expected", LITERAL, ids=[str(o) for o, _ in LITERAL])
def test_literal_iterates(options, expected):
    rows, _ = _rosenbrock_run(tm, options)
    for (loss, params, evals, n_iter), (want_loss, want_params, want_evals, want_iter) in zip(rows, expected):
        assert (evals, n_iter) == (want_evals, want_iter)
        assert loss == pytest.approx(want_loss, rel=1e-13)
        # PyTorch fuses some multiply-adds: rounding differences, grown over up to 16 iterations
        np.testing.assert_allclose(params, want_params, rtol=1e-10, atol=1e-12)


def test_a_quadratic_is_solved_in_one_step_with_the_line_search():
    target = tm.tensor([3.0, -2.0, 0.5], dtype=tm.float64)
    w = tm.nn.Parameter(tm.zeros(3, dtype=tm.float64))
    opt = tm.optim.LBFGS([w], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((w - target) ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == pytest.approx(13.25)
    np.testing.assert_allclose(w.tolist(), [3.0, -2.0, 0.5], atol=1e-12)
    assert opt.step(closure).item() == pytest.approx(0.0, abs=1e-20)


def test_state_keys_and_types():
    _, opt = _rosenbrock_run(tm, {"max_iter": 3, "history_size": 2})
    state = opt.state[opt.param_groups[0]["params"][0]]
    assert list(state) == ["func_evals", "n_iter", "al", "d", "t", "old_dirs", "old_stps", "ro", "H_diag",
                           "prev_flat_grad", "prev_loss"]
    assert len(state["old_dirs"]) == len(state["old_stps"]) == len(state["ro"]) == 2
    assert len(state["al"]) == 2 and isinstance(state["prev_loss"], float)
    assert isinstance(state["H_diag"], tm.Tensor) and state["H_diag"].shape == ()


def test_closure_runs_with_grad_enabled_and_the_step_without():
    w = tm.nn.Parameter(tm.tensor([1.0, 2.0]))
    seen = []
    opt = tm.optim.LBFGS([w], max_iter=2, line_search_fn="strong_wolfe")

    def closure():
        seen.append(tm.is_grad_enabled())
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with tm.no_grad():
        opt.step(closure)
    assert seen and all(seen)
    assert not w.grad.requires_grad


def test_stops_at_once_when_the_gradient_is_small():
    w = tm.nn.Parameter(tm.tensor([0.0]))
    opt = tm.optim.LBFGS([w])

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    opt.step(closure)
    assert dict(opt.state[w]) == {"func_evals": 1, "n_iter": 0}


def test_parameters_without_gradients_count_as_zero():
    a, b = tm.nn.Parameter(tm.tensor([1.0])), tm.nn.Parameter(tm.tensor([5.0]))
    opt = tm.optim.LBFGS([a, b], max_iter=1)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    opt.step(closure)
    assert b.item() == 5.0 and a.item() == 0.0


def test_errors():
    w = tm.nn.Parameter(tm.ones(1))
    with pytest.raises(ValueError, match="^Invalid learning rate: -1$"):
        tm.optim.LBFGS([w], lr=-1)
    with pytest.raises(ValueError, match=r"^LBFGS doesn't support per-parameter options \(parameter groups\)$"):
        tm.optim.LBFGS([{"params": [w]}, {"params": [tm.nn.Parameter(tm.ones(1))]}])
    opt = tm.optim.LBFGS([w], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="^only 'strong_wolfe' is supported$"):
        opt.step(closure)
    with pytest.raises(TypeError):
        opt.step()


def test_defaults():
    opt = tm.optim.LBFGS([tm.nn.Parameter(tm.ones(1))], max_iter=8)
    assert opt.defaults == {"lr": 1, "max_iter": 8, "max_eval": 10, "tolerance_grad": 1e-7,
                            "tolerance_change": 1e-9, "history_size": 100, "line_search_fn": None}


def test_state_dict_round_trip_continues_identically():
    options = {"max_iter": 3, "line_search_fn": "strong_wolfe"}
    uninterrupted, _ = _rosenbrock_run(tm, options, steps=3)
    _, opt = _rosenbrock_run(tm, options, steps=2)
    w = tm.nn.Parameter(opt.param_groups[0]["params"][0].detach().clone())
    resumed = tm.optim.LBFGS([w], **options)
    resumed.load_state_dict(opt.state_dict())

    def closure():
        resumed.zero_grad()
        loss = 100 * (w[1] - w[0] ** 2) ** 2 + (1 - w[0]) ** 2
        loss.backward()
        return loss

    resumed.step(closure)
    assert w.tolist() == uninterrupted[-1][1]
    assert resumed.state[w]["n_iter"] == uninterrupted[-1][3]


# -- against PyTorch ----------------------------------------------------------------------------

LBFGS_CASES = [{}, {"line_search_fn": "strong_wolfe"}, {"lr": 0.5, "max_iter": 5, "history_size": 3},
               {"line_search_fn": "strong_wolfe", "history_size": 2, "max_iter": 7, "max_eval": 9},
               {"tolerance_change": 1e-3, "tolerance_grad": 1e-3}]


def _least_squares_run(lib, options, dtype, steps=4):
    """A least-squares fit plus a Rosenbrock term, over two parameters (one of them complex
    when ``dtype`` is complex)."""
    real = lib.float64 if dtype in ("float64", "complex128") else lib.float32
    rng = np.random.default_rng(0)
    a = lib.tensor(rng.standard_normal((6, 3)), dtype=real)
    b = lib.tensor(rng.standard_normal(6), dtype=real)
    w = lib.nn.Parameter(lib.tensor([-1.2, 1.0, 0.5], dtype=real))
    c_start = [0.3 + 0.2j] if dtype == "complex128" else [0.3]
    c = lib.nn.Parameter(lib.tensor(c_start, dtype=getattr(lib, dtype) if dtype == "complex128" else real))
    opt = lib.optim.LBFGS([w, c], **options)

    def closure():
        opt.zero_grad()
        r = a @ w - b
        loss = (r * r).sum() + 100 * (w[1] - w[0] ** 2) ** 2 + (1 - w[0]) ** 2 + (c.abs() ** 4).sum()
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure).item()
        out.append((loss, w.detach().numpy().copy(), c.detach().numpy().copy()))
    state = opt.state[w]
    return out, {k: state[k] for k in ("func_evals", "n_iter")}, list(state)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("options", LBFGS_CASES, ids=[str(o) for o in LBFGS_CASES])
def test_iterates_match_torch(torch, options, dtype):
    ours, our_counts, our_keys = _least_squares_run(tm, options, dtype)
    theirs, their_counts, their_keys = _least_squares_run(torch, options, dtype)
    assert our_counts == their_counts and our_keys == their_keys
    for (la, wa, ca), (lb, wb, cb) in zip(ours, theirs):
        assert la == pytest.approx(lb, rel=1e-12)
        # |c|**4 is flat near its minimum: rounding differences there grow to ~1e-11 over 4 steps.
        # complex128: LBFGS's ``1 / ys`` is ``ys.reciprocal() * 1`` in both libraries, and a complex
        # reciprocal's last bit differs from PyTorch's for about 6% of numbers (its c10::complex
        # division); through the line search that grows to ~3e-9
        tight = dtype == "float64"
        np.testing.assert_allclose(wa, wb, rtol=1e-10 if tight else 1e-7, atol=1e-11 if tight else 1e-9)
        np.testing.assert_allclose(ca, cb, rtol=1e-9 if tight else 1e-7, atol=1e-10 if tight else 1e-9)


@pytest.mark.torch
@pytest.mark.parametrize("options", LBFGS_CASES[:2], ids=[str(o) for o in LBFGS_CASES[:2]])
def test_float32_iterates_follow_torch_closely(torch, options):
    # float32 dot products and sums round differently from PyTorch's kernels (an ulp here and
    # there), which an ill-conditioned problem amplifies: a short run, compared loosely.
    ours, _, _ = _least_squares_run(tm, options, "float32", steps=1)
    theirs, _, _ = _least_squares_run(torch, options, "float32", steps=1)
    np.testing.assert_allclose(ours[0][1], theirs[0][1], rtol=1e-3, atol=1e-4)


def _logged_calls(lib, mode_base, options):
    calls = []

    class Log(mode_base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            label = getattr(func, "__name__", "")
            if label in {"add_", "dot", "neg", "mul", "sub", "copy_", "cat", "view", "view_as", "max", "abs",
                         "sum", "clone", "sqrt"}:
                calls.append(label)
            return func(*args, **(kwargs or {}))

    w = lib.nn.Parameter(lib.tensor([-1.2, 1.0], dtype=lib.float64))
    opt = lib.optim.LBFGS([w], max_iter=4, **options)

    def closure():
        opt.zero_grad()
        loss = 100 * (w[1] - w[0] ** 2) ** 2 + (1 - w[0]) ** 2
        loss.backward()
        return loss

    for _ in range(2):
        with Log():
            opt.step(closure)
    return calls


@pytest.mark.torch
@pytest.mark.parametrize("options", [{}, {"line_search_fn": "strong_wolfe"}])
def test_a_mode_sees_the_same_tensor_operations_as_in_torch(torch, options):
    from torch.overrides import TorchFunctionMode as TorchMode

    assert _logged_calls(tm, TorchFunctionMode, options) == _logged_calls(torch, TorchMode, options)


@pytest.mark.torch
def test_errors_match_torch(torch):
    def outcome(lib, make):
        try:
            make(lib)
        except Exception as error:
            return type(error).__name__, str(error)
        return None

    for make in (lambda L: L.optim.LBFGS([L.nn.Parameter(L.ones(1))], lr=-0.5),
                 lambda L: L.optim.LBFGS([{"params": [L.nn.Parameter(L.ones(1))]},
                                          {"params": [L.nn.Parameter(L.ones(1))]}]),
                 lambda L: L.optim.SparseAdam([L.nn.Parameter(L.ones(1))], lr=0.0),
                 lambda L: L.optim.SparseAdam([L.nn.Parameter(L.ones(1))], eps=0.0),
                 lambda L: L.optim.SparseAdam([L.nn.Parameter(L.ones(1))], betas=(1.0, 0.5)),
                 lambda L: L.optim.SparseAdam([L.nn.Parameter(L.ones(1))], betas=(0.5, -0.5)),
                 lambda L: L.optim.SparseAdam([L.nn.Parameter(L.ones(1)), L.nn.Parameter(L.ones(1, dtype=L.cfloat))]),
                 ):
        ours, theirs = outcome(tm, make), outcome(torch, make)
        assert ours == theirs and ours is not None


# -- SparseAdam ---------------------------------------------------------------------------------

def _sparse_adam_step_outcome(lib):
    a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(1))
    opt = lib.optim.SparseAdam([a, b], lr=0.1)
    b.grad = lib.ones(1)
    try:
        opt.step()
    except Exception as error:
        return type(error).__name__, str(error), dict(opt.state), a.tolist(), b.tolist()
    return None


def test_sparse_adam_refuses_dense_gradients_and_changes_nothing():
    outcome = _sparse_adam_step_outcome(tm)
    assert outcome == ("RuntimeError", "SparseAdam does not support dense gradients, please consider Adam instead",
                       {}, [1.0, 1.0], [1.0])


@pytest.mark.torch
def test_sparse_adam_refuses_dense_gradients_as_torch_does(torch):
    assert _sparse_adam_step_outcome(tm) == _sparse_adam_step_outcome(torch)


def test_sparse_adam_construction():
    w = tm.nn.Parameter(tm.ones(1))
    opt = tm.optim.SparseAdam([w])
    assert opt.defaults == {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "maximize": False}
    with pytest.raises(ValueError, match=r"^Complex params at indices \[\[0, 1\]\]: SparseAdam does not support"):
        tm.optim.SparseAdam([w, tm.nn.Parameter(tm.ones(1, dtype=tm.complex64))])
    with pytest.raises(ValueError, match="^Invalid learning rate: 0.0$"):
        tm.optim.SparseAdam([w], lr=0.0)
    assert opt.step(lambda: 3.0) == 3.0  # no gradient: the closure's loss, nothing else

"""tensormodes.optim: optimizers' trajectories, state, state_dict and errors, against PyTorch's
(where installed) and against values worked out by hand."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensormodes as tm
from tensormodes.overrides import TorchFunctionMode


@pytest.fixture
def torch():
    import torch

    return torch


def _params(lib, arrays, dtype="float32"):
    return [lib.nn.Parameter(lib.tensor(np.array(a), dtype=getattr(lib, dtype))) for a in arrays]


def _numpy(t):
    return t.detach().numpy() if hasattr(t, "detach") else t.numpy()


# -- trajectories against PyTorch --------------------------------------------------------------

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.2, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-3}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "maximize": True, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.02, "weight_decay": 0.3, "amsgrad": True}),
    ("AdamW", {"lr": 0.02, "maximize": True, "betas": (0.5, 0.9)}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-4, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-3, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"lr": 0.01, "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 2, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 0, "maximize": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-20, 1e-2), "d": 2.0, "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.02, "maximize": True}),
]

# Muon takes matrices only: its own trajectory test (bfloat16 Newton-Schulz steps; the float32 steps
# around them round as the other optimizers' do, within an ulp of PyTorch's fused multiply-adds)
MUON_CASES = [{}, {"lr": 0.02, "nesterov": False, "momentum": 0.5}, {"lr": 0.01, "adjust_lr_fn": "match_rms_adamw"},
              {"lr": 0.01, "weight_decay": 0.0, "ns_steps": 3, "ns_coefficients": (2.0, -1.5, 0.5)}]

SHAPES = [(5, 3), (3,), (4,)]
STEPS = 6


def _trajectory(lib, name, options, dtype):
    """Parameters and state after each of STEPS steps, with two groups (the second at a
    tenth of the lr) and the last parameter left without a gradient on the third step."""
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s) for s in SHAPES]
    gradients = [[rng.standard_normal(s) for s in SHAPES] for _ in range(STEPS)]
    params = _params(lib, arrays, dtype)
    second = {"params": params[2:]}
    if "lr" in options:
        second["lr"] = options["lr"] / 10
    opt = getattr(lib.optim, name)([{"params": params[:2]}, second], **options)
    history = []
    for step, grads in enumerate(gradients):
        for p, g in zip(params, grads):
            p.grad = lib.tensor(g, dtype=getattr(lib, dtype))
        if step == 2:
            params[-1].grad = None
        opt.step()
        history.append([_numpy(p).copy() for p in params])
    state = {i: {k: (_numpy(v).copy() if isinstance(v, (tm.Tensor,)) or hasattr(v, "detach") else v)
                 for k, v in s.items()}
             for i, s in opt.state_dict()["state"].items()}
    return history, state


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,options", CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_trajectory_matches_torch(torch, name, options, dtype):
    ours, our_state = _trajectory(tm, name, options, dtype)
    theirs, their_state = _trajectory(torch, name, options, dtype)
    # PyTorch's CPU kernels fuse multiply-adds (add(alpha=), lerp, and addcmul where the
    # compiler contracts it: one rounding); ours round twice, so results differ by about an
    # ulp per step.
    tolerance = {"rtol": 1e-12, "atol": 1e-13} if dtype == "float64" else {"rtol": 2e-6, "atol": 2e-6}
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype
            np.testing.assert_allclose(x, y, **tolerance, err_msg=f"step {step + 1}")
    assert our_state.keys() == their_state.keys()
    for index in their_state:
        assert our_state[index].keys() == their_state[index].keys()
        for key, value in their_state[index].items():
            np.testing.assert_allclose(our_state[index][key], value, **tolerance, err_msg=key)
            assert our_state[index][key].dtype == value.dtype, key


@pytest.mark.torch
@pytest.mark.parametrize("name,options", [("Adam", {"lr": 0.1, "amsgrad": True}), ("AdamW", {"lr": 0.1}),
                                          ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}),
                                          ("RMSprop", {"lr": 0.1, "centered": True, "momentum": 0.5}),
                                          ("Adagrad", {"lr": 0.1, "weight_decay": 0.1}),
                                          ("Rprop", {"lr": 0.1}), ("ASGD", {"lr": 0.1, "t0": 1})])
def test_complex_parameters_match_torch(torch, name, options):
    rng = np.random.default_rng(3)
    start = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    grads = [rng.standard_normal(4) + 1j * rng.standard_normal(4) for _ in range(3)]
    results = []
    for lib in (tm, torch):
        p = lib.nn.Parameter(lib.tensor(start, dtype=lib.complex128))
        opt = getattr(lib.optim, name)([p], **options)
        for g in grads:
            p.grad = lib.tensor(g, dtype=lib.complex128)
            opt.step()
        results.append(_numpy(p))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-13)


def _logged_calls(lib, mode_base, name, options):
    calls = []

    class Log(mode_base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            label = getattr(func, "__name__", "")
            if label in {"add_", "mul_", "lerp_", "addcmul_", "addcdiv_", "addcmul", "sqrt", "sqrt_", "div", "item",
                         "add", "neg", "clone", "detach", "maximum"}:
                calls.append(label)
            return func(*args, **(kwargs or {}))

    p = lib.nn.Parameter(lib.ones(3))
    opt = getattr(lib.optim, name)([p], **options)
    for _ in range(2):
        p.grad = lib.full((3,), 0.5)
        with Log():
            opt.step()
    return calls


@pytest.mark.torch
@pytest.mark.parametrize("name,options", [("AdamW", {"amsgrad": True}), ("Adam", {"weight_decay": 0.1}),
                                          ("SGD", {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
                                          ("RMSprop", {"centered": True, "momentum": 0.5}), ("Adagrad", {}),
                                          ("Adam", {"maximize": True}), ("SGD", {"maximize": True, "momentum": 0.5}),
                                          ("RMSprop", {"maximize": True}), ("Adagrad", {"maximize": True}),
                                          ("Rprop", {}), ("ASGD", {"t0": 1}), ("ASGD", {"weight_decay": 0.1}),
                                          ("Adafactor", {}), ("Adafactor", {"weight_decay": 0.1})])
def test_a_mode_sees_the_same_tensor_operations_as_in_torch(torch, name, options):
    from torch.overrides import TorchFunctionMode as TorchMode

    assert _logged_calls(tm, TorchFunctionMode, name, options) == _logged_calls(torch, TorchMode, name, options)


_rates = st.floats(0.0, 0.5)
_OPTIONS = st.one_of(
    st.tuples(st.just("SGD"), st.fixed_dictionaries(
        {"lr": _rates, "momentum": st.floats(0.0, 0.99), "dampening": st.floats(0.0, 1.0), "weight_decay": _rates,
         "maximize": st.booleans()})),
    st.tuples(st.just("SGD"), st.fixed_dictionaries(
        {"lr": _rates, "momentum": st.floats(0.01, 0.99), "nesterov": st.just(True), "weight_decay": _rates})),
    st.tuples(st.sampled_from(["Adam", "AdamW"]), st.fixed_dictionaries(
        {"lr": _rates, "betas": st.tuples(st.floats(0.0, 0.99), st.floats(0.0, 0.999)),
         "eps": st.floats(1e-8, 1e-2), "weight_decay": _rates, "amsgrad": st.booleans(), "maximize": st.booleans()})),
    st.tuples(st.just("RMSprop"), st.fixed_dictionaries(
        # alpha near 0 makes centered RMSprop subtract nearly equal numbers (square_avg - grad_avg**2):
        # PyTorch's kernels fuse the multiply-add there, and the difference of its rounding can turn
        # into a NaN (the square root of a tiny negative number) on one side only.
        {"lr": _rates, "alpha": st.floats(0.1, 0.99), "eps": st.floats(1e-8, 1e-2), "weight_decay": _rates,
         "momentum": st.floats(0.0, 0.9), "centered": st.booleans(), "maximize": st.booleans()})),
    st.tuples(st.just("Adagrad"), st.fixed_dictionaries(
        {"lr": _rates, "lr_decay": _rates, "weight_decay": _rates, "initial_accumulator_value": st.floats(0.0, 1.0),
         "eps": st.floats(1e-10, 1e-2), "maximize": st.booleans()})),
)


@pytest.mark.torch
@settings(max_examples=50, deadline=None)
@given(case=_OPTIONS, seed=st.integers(0, 2**16))
def test_random_options_follow_torch(case, seed):
    import torch

    name, options = case
    rng = np.random.default_rng(seed)
    start, grads = rng.standard_normal(5), [rng.standard_normal(5) for _ in range(4)]
    results = []
    for lib in (tm, torch):
        p = lib.nn.Parameter(lib.tensor(start))
        opt = getattr(lib.optim, name)([p], **options)
        trajectory = []
        for g in grads:
            p.grad = lib.tensor(g)
            opt.step()
            trajectory.append(_numpy(p).copy())
        results.append(np.array(trajectory))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-11, atol=1e-12)


# -- values worked out by hand (no PyTorch needed) ------------------------------------------------

def _run(optimizer_factory, grads, start=(1.0, -2.0)):
    p = tm.nn.Parameter(tm.tensor(list(start), dtype=tm.float64))
    opt = optimizer_factory([p])
    out = []
    for g in grads:
        p.grad = tm.tensor(g, dtype=tm.float64)
        opt.step()
        out.append(p.tolist())
    return out, opt


def test_sgd_momentum_dampening_by_hand():
    out, opt = _run(lambda ps: tm.optim.SGD(ps, lr=0.5, momentum=0.5, dampening=0.5), [[1.0, 2.0], [2.0, 2.0]])
    # step 1: buf = g = (1, 2) (no dampening on the first step); p = (1, -2) - 0.5 * buf
    assert out[0] == [0.5, -3.0]
    # step 2: buf = 0.5 * (1, 2) + 0.5 * (2, 2) = (1.5, 2); p -= 0.5 * buf
    assert out[1] == [-0.25, -4.0]
    assert opt.state_dict()["state"][0]["momentum_buffer"].tolist() == [1.5, 2.0]


def test_sgd_nesterov_weight_decay_maximize_by_hand():
    out, _ = _run(lambda ps: tm.optim.SGD(ps, lr=0.1, momentum=0.5, nesterov=True, weight_decay=1.0,
                                          maximize=True), [[1.0, 1.0]])
    # g = -(1, 1) + (1, -2) = (0, -3); buf = g; g + 0.5 * buf = (0, -4.5); p -= 0.1 * g
    assert out[0] == pytest.approx([1.0, -1.55], abs=1e-15)


def test_adam_two_steps_by_hand():
    grads = [[0.5, -1.0], [1.5, 1.0]]
    out, opt = _run(lambda ps: tm.optim.Adam(ps, lr=0.1, betas=(0.5, 0.75), eps=0.0), grads)
    m = v = np.zeros(2)
    p = np.array([1.0, -2.0])
    for t, g in enumerate(grads, 1):
        g = np.array(g)
        m = 0.5 * m + 0.5 * g
        v = 0.75 * v + 0.25 * g * g
        p = p - 0.1 / (1 - 0.5**t) * m / (np.sqrt(v) / math.sqrt(1 - 0.75**t))
        assert out[t - 1] == pytest.approx(p.tolist(), rel=1e-14)
    state = opt.state_dict()["state"][0]
    assert state["step"].item() == 2.0 and state["step"].dtype is tm.float32  # whatever the parameters' dtype
    assert state["exp_avg"].tolist() == pytest.approx(m.tolist(), rel=1e-15)


def test_adamw_amsgrad_keeps_the_maximum_by_hand():
    out, opt = _run(lambda ps: tm.optim.AdamW(ps, lr=0.1, betas=(0.0, 0.5), weight_decay=0.5, eps=0.0,
                                              amsgrad=True), [[2.0, 2.0], [1.0, 1.0]])
    # step 1: p *= 1 - 0.05; m = g, v = 0.5 g^2 -> v_hat = g^2: update lr * sign(g)
    assert out[0] == pytest.approx([0.95 - 0.1, -1.9 - 0.1], rel=1e-15)
    # step 2: v = 0.5 * 2 + 0.5 * 1 = 1.5 < v_max = 2: the maximum stays; v_hat = 2 / 0.75
    expected = [0.85 * 0.95 - 0.1 / math.sqrt(2 / 0.75), -2.0 * 0.95 - 0.1 / math.sqrt(2 / 0.75)]
    assert out[1] == pytest.approx(expected, rel=1e-14)
    assert opt.state[opt.param_groups[0]["params"][0]]["max_exp_avg_sq"].tolist() == [2.0, 2.0]


def test_rmsprop_centered_momentum_by_hand():
    out, _ = _run(lambda ps: tm.optim.RMSprop(ps, lr=0.1, alpha=0.5, eps=0.0, centered=True, momentum=0.5),
                  [[2.0, -2.0], [2.0, 2.0]])
    # step 1: v = 0.5 * 4 = 2, g_avg = 1 (resp. -1): avg = sqrt(2 - 1) = 1; buf = g; p -= 0.1 g
    assert out[0] == pytest.approx([0.8, -1.8], rel=1e-15)
    # step 2: v = 1 + 2 = 3; g_avg = (1.5, 0.5): avg = sqrt(3 - g_avg^2); buf = 0.5 * buf + g / avg
    avg = [math.sqrt(3 - 2.25), math.sqrt(3 - 0.25)]
    buf = [0.5 * 2 + 2 / avg[0], 0.5 * -2 + 2 / avg[1]]
    assert out[1] == pytest.approx([0.8 - 0.1 * buf[0], -1.8 - 0.1 * buf[1]], rel=1e-14)


def test_adagrad_lr_decay_by_hand():
    out, opt = _run(lambda ps: tm.optim.Adagrad(ps, lr=1.0, lr_decay=1.0, initial_accumulator_value=1.0, eps=0.0),
                    [[3.0, 0.0], [4.0, 1.0]])
    # step 1: sum = 1 + 9 = 10, clr = 1: p -= 3 / sqrt(10)
    assert out[0] == pytest.approx([1 - 3 / math.sqrt(10), -2.0], rel=1e-15)
    # step 2: sum = (26, 2), clr = 1 / (1 + 1) = 0.5
    assert out[1] == pytest.approx([1 - 3 / math.sqrt(10) - 0.5 * 4 / math.sqrt(26), -2 - 0.5 / math.sqrt(2)],
                                   rel=1e-15)
    assert opt.state_dict()["state"][0]["sum"].tolist() == [26.0, 2.0]


def test_step_is_a_float32_tensor_or_float64_under_a_float64_default():
    p = tm.nn.Parameter(tm.ones(2, dtype=tm.float64))
    opt = tm.optim.Adam([p])
    p.grad = tm.ones(2, dtype=tm.float64)
    opt.step()
    step = opt.state[p]["step"]
    assert step.dtype is tm.float32 and step.shape == () and step.item() == 1.0
    tm.set_default_dtype(tm.float64)
    try:
        q = tm.nn.Parameter(tm.ones(2))
        opt = tm.optim.RMSprop([q])
        q.grad = tm.ones(2)
        opt.step()
        assert opt.state[q]["step"].dtype is tm.float64
    finally:
        tm.set_default_dtype(tm.float32)


def test_parameters_without_gradients_are_skipped_and_get_no_state():
    a, b = tm.nn.Parameter(tm.ones(2)), tm.nn.Parameter(tm.ones(2))
    opt = tm.optim.Adam([a, b], lr=0.1)
    a.grad = tm.ones(2)
    opt.step()
    assert b.tolist() == [1.0, 1.0] and b not in opt.state
    assert list(opt.state_dict()["state"]) == [0]


def test_updates_do_not_record_history_and_bump_versions():
    p = tm.nn.Parameter(tm.ones(2))
    opt = tm.optim.SGD([p], lr=0.1)
    p.grad = tm.ones(2)
    version = p._version
    opt.step()
    assert p.grad_fn is None and p.requires_grad and p.is_leaf
    assert p._version > version


def test_closure_runs_with_grad_enabled_and_its_loss_is_returned():
    p = tm.nn.Parameter(tm.tensor([3.0]))
    opt = tm.optim.SGD([p], lr=0.5)
    seen = []

    def closure():
        seen.append(tm.is_grad_enabled())
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with tm.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and loss.item() == 9.0 and p.tolist() == [0.0]


def test_zero_grad():
    p = tm.nn.Parameter(tm.ones(2))
    (p * 2).sum().backward()
    grad = p.grad
    opt = tm.optim.SGD([p])
    opt.zero_grad(set_to_none=False)
    assert p.grad is grad and grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None
    opt.zero_grad()  # no gradient: nothing to do


def test_zero_grad_detaches_a_gradient_with_history():
    p = tm.nn.Parameter(tm.ones(2))
    x = tm.ones(2, requires_grad=True)
    p.grad = x * 2
    tm.optim.SGD([p]).zero_grad(set_to_none=False)
    assert p.grad.grad_fn is None and not p.grad.requires_grad and p.grad.tolist() == [0.0, 0.0]


# -- parameter groups and their errors -------------------------------------------------------------

def test_param_groups_fill_in_defaults_and_keep_their_own_options():
    a, b = tm.nn.Parameter(tm.ones(1)), tm.nn.Parameter(tm.ones(1))
    opt = tm.optim.SGD([{"params": a}, {"params": (b,), "lr": 1.0, "momentum": 0.5}], lr=0.1)
    assert opt.param_groups[0]["params"] == [a] and opt.param_groups[1]["params"] == [b]
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    assert [g["momentum"] for g in opt.param_groups] == [0, 0.5]
    a.grad, b.grad = tm.ones(1), tm.ones(1)
    opt.step()
    assert a.tolist() == pytest.approx([0.9]) and b.tolist() == [0.0]


def test_named_parameters_record_their_names():
    a, b = tm.nn.Parameter(tm.ones(1)), tm.nn.Parameter(tm.ones(1))
    opt = tm.optim.Adam([("a", a), ("b", b)])
    assert opt.param_groups[0]["params"] == [a, b] and opt.param_groups[0]["param_names"] == ["a", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["a", "b"]


def test_a_generator_of_parameters_is_accepted():
    a = tm.nn.Parameter(tm.ones(1))
    assert tm.optim.SGD(p for p in [a]).param_groups[0]["params"] == [a]


def _outcome(make):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make()
    except Exception as error:  # the test compares the exception with PyTorch's
        return type(error).__name__, str(error).replace("torch.", "tensormodes.")
    return "ok", None


GROUP_ERRORS = {
    "empty": lambda L, ps: L.optim.SGD([]),
    "tensor": lambda L, ps: L.optim.SGD(ps[0]),
    "set": lambda L, ps: L.optim.SGD([{"params": {ps[0]}}]),
    "not a tensor": lambda L, ps: L.optim.SGD([ps[0], 1.5]),
    "non-leaf": lambda L, ps: L.optim.SGD([ps[0] * 2]),
    "two groups": lambda L, ps: L.optim.SGD([{"params": [ps[0]]}, {"params": [ps[1], ps[0]]}]),
    "group not a dict": lambda L, ps: L.optim.SGD([ps[0]]).add_param_group([ps[1]]),
    "names missing": lambda L, ps: L.optim.SGD([("a", ps[0]), ps[1]]),
    "names mixed across groups": lambda L, ps: L.optim.SGD([{"params": [("a", ps[0])]}, {"params": [ps[1]]}]),
}


@pytest.mark.torch
@pytest.mark.parametrize("case", GROUP_ERRORS)
def test_param_group_errors_match_torch(torch, case):
    ours = _outcome(lambda: GROUP_ERRORS[case](tm, _params(tm, [[1.0], [2.0]])))
    theirs = _outcome(lambda: GROUP_ERRORS[case](torch, _params(torch, [[1.0], [2.0]])))
    assert ours == theirs
    assert ours[0] != "ok"


def test_param_group_errors_without_torch():
    p = tm.nn.Parameter(tm.ones(1))
    with pytest.raises(ValueError, match="^optimizer got an empty parameter list$"):
        tm.optim.Adam([])
    with pytest.raises(TypeError, match="but got tensormodes.FloatTensor$"):
        tm.optim.Adam(p)
    with pytest.raises(ValueError, match="^some parameters appear in more than one parameter group$"):
        tm.optim.Adam([{"params": [p]}, {"params": [p]}])
    with pytest.raises(ValueError, match="^can't optimize a non-leaf Tensor$"):
        tm.optim.Adam([p + 1])
    with pytest.raises(TypeError, match="^optimizer can only optimize Tensors, but one of the params is str$"):
        tm.optim.Adam([p, "x"])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        tm.optim.Adam([p, p])


def test_a_required_hyperparameter_must_be_given():
    class Custom(tm.optim.Optimizer):
        def __init__(self, params, lr=tm.optim.optimizer.required):
            super().__init__(params, {"lr": lr})

    p = tm.nn.Parameter(tm.ones(1))
    with pytest.raises(ValueError, match="^parameter group didn't specify a value of required optimization "
                                         "parameter lr$"):
        Custom([p])
    assert Custom([{"params": [p], "lr": 0.5}]).param_groups[0]["lr"] == 0.5
    assert repr(tm.optim.optimizer.required) == "<required parameter>"
    with pytest.raises(NotImplementedError):
        Custom([p], lr=1.0).step()


ARGUMENT_ERRORS = [
    ("SGD", {"lr": -1.0}), ("SGD", {"momentum": -0.5}), ("SGD", {"weight_decay": -1e-3}),
    ("SGD", {"nesterov": True}), ("SGD", {"nesterov": True, "momentum": 0.9, "dampening": 0.1}),
    ("Adam", {"lr": -1.0}), ("Adam", {"eps": -1.0}), ("Adam", {"betas": (1.0, 0.9)}),
    ("Adam", {"betas": (0.9, -0.1)}), ("Adam", {"weight_decay": -1.0}), ("Adam", {"betas": (0, 0.9)}),
    ("AdamW", {"betas": (0.9, 1.5)}), ("AdamW", {"lr": -0.1}),
    ("RMSprop", {"lr": -1.0}), ("RMSprop", {"eps": -1.0}), ("RMSprop", {"momentum": -1.0}),
    ("RMSprop", {"weight_decay": -1.0}), ("RMSprop", {"alpha": -1.0}),
    ("Adagrad", {"lr": -1.0}), ("Adagrad", {"lr_decay": -1.0}), ("Adagrad", {"weight_decay": -1.0}),
    ("Adagrad", {"initial_accumulator_value": -1.0}), ("Adagrad", {"eps": -1.0}),
]


@pytest.mark.torch
@pytest.mark.parametrize("name,options", ARGUMENT_ERRORS, ids=[f"{n}-{o}" for n, o in ARGUMENT_ERRORS])
def test_argument_errors_match_torch(torch, name, options):
    ours = _outcome(lambda: getattr(tm.optim, name)(_params(tm, [[1.0]]), **options))
    theirs = _outcome(lambda: getattr(torch.optim, name)(_params(torch, [[1.0]]), **options))
    assert ours == theirs and ours[0] == "ValueError"


def test_argument_errors_without_torch():
    p = [tm.nn.Parameter(tm.ones(1))]
    with pytest.raises(ValueError, match="^Invalid learning rate: -1.0$"):
        tm.optim.SGD(p, lr=-1.0)
    with pytest.raises(ValueError, match="^Nesterov momentum requires a momentum and zero dampening$"):
        tm.optim.SGD(p, nesterov=True)
    with pytest.raises(ValueError, match=r"^Invalid beta parameter at index 1: 1.0$"):
        tm.optim.Adam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="^betas must be either both floats or both Tensors$"):
        tm.optim.AdamW(p, betas=(0.9, 0))


@pytest.mark.parametrize("make", [
    lambda p: tm.optim.Adam(p, fused=True), lambda p: tm.optim.AdamW(p, capturable=True),
    lambda p: tm.optim.SGD(p, differentiable=True), lambda p: tm.optim.RMSprop(p, capturable=True),
    lambda p: tm.optim.Adagrad(p, fused=True), lambda p: tm.optim.SGD(p, lr=tm.tensor(0.1)),
    lambda p: tm.optim.Adam(p, betas=(tm.tensor(0.9), tm.tensor(0.99))),
])
def test_unsupported_implementation_options_raise(make):
    with pytest.raises(NotImplementedError, match="not supported|does not have"):
        make([tm.nn.Parameter(tm.ones(1))])


def test_foreach_is_accepted_and_computes_the_same():
    results = []
    for foreach in (None, False, True):
        p = tm.nn.Parameter(tm.tensor([1.0, 2.0]))
        opt = tm.optim.Adam([p], lr=0.1, foreach=foreach)
        p.grad = tm.tensor([0.3, -0.2])
        opt.step()
        results.append(p.tolist())
        assert opt.param_groups[0]["foreach"] is foreach
    assert results[0] == results[1] == results[2]


# -- state_dict, load_state_dict, repr ----------------------------------------------------------

def _plain(value):
    """State-dict values with tensors replaced by (type name, dtype name, shape)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return ("Tensor", str(value.dtype).split(".")[-1], tuple(value.shape))
    return value


@pytest.mark.torch
@pytest.mark.parametrize("name,options", [("SGD", {"momentum": 0.9}), ("SGD", {}), ("Adam", {"amsgrad": True}),
                                          ("AdamW", {}), ("RMSprop", {"centered": True, "momentum": 0.1}),
                                          ("Adagrad", {}), ("Rprop", {}), ("ASGD", {}), ("Adafactor", {})])
def test_state_dict_layout_matches_torch(torch, name, options):
    layouts, reprs = [], []
    for lib in (tm, torch):
        a, b, c = _params(lib, [[1.0, 2.0], [3.0], [[4.0]]])
        opt = getattr(lib.optim, name)([{"params": [a, b]}, {"params": [c], "lr": 0.5}], **options)
        a.grad, c.grad = lib.ones(2), lib.ones(1, 1)
        opt.step()
        layouts.append(_plain(opt.state_dict()))
        reprs.append(repr(opt))
    assert layouts[0] == layouts[1]
    assert reprs[0] == reprs[1]


def test_state_dict_holds_the_state_tensors_and_indices():
    a, b = tm.nn.Parameter(tm.ones(2)), tm.nn.Parameter(tm.ones(3))
    opt = tm.optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}])
    a.grad, b.grad = tm.ones(2), tm.ones(3)
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["state"][1]["exp_avg"] is opt.state[b]["exp_avg"]
    assert sd["param_groups"][1]["lr"] == 0.5 and "params" in sd["param_groups"][0]
    assert opt.param_groups[0]["params"] == [a]  # packing left the groups alone


def test_repr():
    opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1, momentum=0.9)
    assert repr(opt) == ("SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n"
                         "    fused: None\n    lr: 0.1\n    maximize: False\n    momentum: 0.9\n    nesterov: False\n"
                         "    weight_decay: 0\n)")


@pytest.mark.parametrize("name,options", [("SGD", {"momentum": 0.9, "nesterov": True}), ("Adam", {"amsgrad": True}),
                                          ("AdamW", {}), ("RMSprop", {"centered": True, "momentum": 0.5}),
                                          ("Adagrad", {"lr_decay": 0.1})])
def test_load_state_dict_resumes_exactly(name, options):
    rng = np.random.default_rng(0)
    start = rng.standard_normal((2, 3))
    grads = [rng.standard_normal((2, 3)) for _ in range(4)]

    def make():
        params = [tm.nn.Parameter(tm.tensor(start[0])), tm.nn.Parameter(tm.tensor(start[1]))]
        return params, getattr(tm.optim, name)([{"params": params[:1]}, {"params": params[1:], "lr": 0.05}],
                                               lr=0.1, **options)

    def train(params, opt, steps):
        for rows in steps:  # one row of gradients per parameter
            for p, row in zip(params, rows):
                p.grad = tm.tensor(row)
            opt.step()

    params, opt = make()
    train(params, opt, grads[:2])
    saved = pickle.loads(pickle.dumps(opt.state_dict()))
    resumed_params, resumed = make()
    with tm.no_grad():
        for p, q in zip(resumed_params, params):
            p.copy_(q)
    resumed.load_state_dict(saved)
    assert resumed.param_groups[1]["params"] == resumed_params[1:]
    train(params, opt, grads[2:])
    train(resumed_params, resumed, grads[2:])
    for p, q in zip(params, resumed_params):
        assert p.tolist() == q.tolist()


@pytest.mark.torch
def test_load_state_dict_casts_like_torch(torch):
    """Floating state follows the parameter's dtype; ``step`` keeps its own."""
    kinds = []
    for lib in (tm, torch):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.Adam([p])
        p.grad = lib.ones(2)
        opt.step()
        sd = opt.state_dict()
        q = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        other = lib.optim.Adam([q])
        other.load_state_dict(sd)
        state = other.state[q]
        kinds.append({k: str(v.dtype).split(".")[-1] for k, v in state.items()})
        assert state["step"] is sd["state"][0]["step"]
    assert kinds[0] == kinds[1] == {"step": "float32", "exp_avg": "float64", "exp_avg_sq": "float64"}


LOAD_ERRORS = {
    "group count": lambda L, a, b: L.optim.SGD([a]).load_state_dict(
        L.optim.SGD([{"params": [a]}, {"params": [b]}]).state_dict()),
    "group size": lambda L, a, b: L.optim.SGD([a]).load_state_dict(L.optim.SGD([a, b]).state_dict()),
}


@pytest.mark.torch
@pytest.mark.parametrize("case", LOAD_ERRORS)
def test_load_state_dict_errors_match_torch(torch, case):
    ours = _outcome(lambda: LOAD_ERRORS[case](tm, *_params(tm, [[1.0], [2.0]])))
    theirs = _outcome(lambda: LOAD_ERRORS[case](torch, *_params(torch, [[1.0], [2.0]])))
    assert ours == theirs and ours[0] == "ValueError"


def test_load_state_dict_errors_without_torch():
    a, b = tm.nn.Parameter(tm.ones(1)), tm.nn.Parameter(tm.ones(1))
    with pytest.raises(ValueError, match="^loaded state dict has a different number of parameter groups$"):
        tm.optim.SGD([a]).load_state_dict(tm.optim.SGD([{"params": [a]}, {"params": [b]}]).state_dict())
    with pytest.raises(ValueError, match="^loaded state dict contains a parameter group that doesn't match the "
                                         "size of optimizer's group$"):
        tm.optim.SGD([a]).load_state_dict(tm.optim.SGD([a, b]).state_dict())


@pytest.mark.torch
def test_load_a_torch_state_dict_and_continue_like_torch(torch):
    """A state dict saved by PyTorch (tensors converted) resumes to PyTorch's values."""
    rng = np.random.default_rng(5)
    start, grads = rng.standard_normal(4), [rng.standard_normal(4) for _ in range(4)]
    tp = torch.nn.Parameter(torch.tensor(start))
    topt = torch.optim.AdamW([tp], lr=0.05, amsgrad=True)
    for g in grads[:2]:
        tp.grad = torch.tensor(g)
        topt.step()
    sd = topt.state_dict()
    converted = {"state": {i: {k: tm.tensor(v.numpy()) for k, v in s.items()} for i, s in sd["state"].items()},
                 "param_groups": sd["param_groups"]}
    p = tm.nn.Parameter(tm.tensor(tp.detach().numpy()))
    opt = tm.optim.AdamW([p])
    opt.load_state_dict(converted)
    assert opt.param_groups[0]["lr"] == 0.05 and opt.param_groups[0]["amsgrad"] is True
    for g in grads[2:]:
        tp.grad, p.grad = torch.tensor(g), tm.tensor(g)
        topt.step()
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-13)


def test_setstate_turns_a_numeric_step_into_a_tensor():
    p = tm.nn.Parameter(tm.ones(2))
    opt = tm.optim.Adam([p])
    p.grad = tm.ones(2)
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["step"] = 3
    opt.load_state_dict(sd)
    assert isinstance(opt.state[p]["step"], tm.Tensor) and opt.state[p]["step"].item() == 3.0


def test_optimizer_pickles():
    p = tm.nn.Parameter(tm.ones(2))
    opt = tm.optim.SGD([p], lr=0.3, momentum=0.5)
    p.grad = tm.ones(2)
    opt.step()
    copy = pickle.loads(pickle.dumps(opt))
    assert copy.param_groups[0]["lr"] == 0.3 and len(copy.state) == 1
    copy.step()  # hooks lists were restored


# -- hooks ------------------------------------------------------------------------------------

def test_step_hooks_run_in_order_and_can_replace_arguments():
    p = tm.nn.Parameter(tm.tensor([1.0]))
    opt = tm.optim.SGD([p], lr=1.0)
    events = []

    def replace_closure(optimizer, args, kwargs):
        events.append(("pre", args, kwargs))
        return (), {"closure": lambda: "replaced"}

    pre = opt.register_step_pre_hook(replace_closure)
    post = opt.register_step_post_hook(lambda optimizer, args, kwargs: events.append(("post", args, kwargs)))
    assert opt.step() == "replaced"
    assert events[0] == ("pre", (), {}) and events[1][0] == "post" and list(events[1][2]) == ["closure"]
    pre.remove()
    post.remove()
    events.clear()
    assert opt.step() is None and events == []


def test_a_pre_hook_returning_something_else_raises():
    opt = tm.optim.Adam([tm.nn.Parameter(tm.ones(1))])
    opt.register_step_pre_hook(lambda optimizer, args, kwargs: 5)
    with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\), but got 5\."):
        opt.step()


def test_global_step_hooks_run_for_every_optimizer_around_the_instance_hooks():
    order = []
    handles = [tm.optim.register_optimizer_step_pre_hook(lambda o, a, k: order.append("global pre")),
               tm.optim.register_optimizer_step_post_hook(lambda o, a, k: order.append("global post"))]
    try:
        opt = tm.optim.AdamW([tm.nn.Parameter(tm.ones(1))])
        opt.register_step_pre_hook(lambda o, a, k: order.append("pre"))
        opt.register_step_post_hook(lambda o, a, k: order.append("post"))
        opt.step()
    finally:
        for handle in handles:
            handle.remove()
    assert order == ["global pre", "pre", "post", "global post"]


def _state_dict_hook_events(lib):
    p = lib.nn.Parameter(lib.ones(1))
    opt = lib.optim.SGD([p], lr=0.1)
    events = []
    opt.register_state_dict_pre_hook(lambda o: events.append("pre"))
    opt.register_state_dict_pre_hook(lambda o: events.append("pre first"), prepend=True)
    opt.register_state_dict_post_hook(lambda o, sd: events.append(("post", sorted(sd))))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1}, prepend=True)
    saved = opt.state_dict()
    events.append(("saved", sorted(saved)))

    def load_pre(o, sd):
        events.append(("load pre", sorted(sd)))
        sd["param_groups"] = [{**g, "lr": 0.5} for g in sd["param_groups"]]

    handle = opt.register_load_state_dict_pre_hook(load_pre)
    opt.register_load_state_dict_post_hook(lambda o: events.append(("load post", o.param_groups[0]["lr"])))
    opt.load_state_dict(saved)
    events.append(("caller's dict untouched", saved["param_groups"][0]["lr"]))
    handle.remove()
    opt.load_state_dict(saved)
    events.append(("after remove", opt.param_groups[0]["lr"]))
    return events


def test_state_dict_hooks():
    assert _state_dict_hook_events(tm) == [
        "pre first", "pre", ("post", ["extra", "param_groups", "state"]), ("saved", ["extra", "param_groups", "state"]),
        ("load pre", ["extra", "param_groups", "state"]), ("load post", 0.5), ("caller's dict untouched", 0.1),
        ("load post", 0.1), ("after remove", 0.1)]


@pytest.mark.torch
def test_state_dict_hooks_match_torch(torch):
    assert _state_dict_hook_events(tm) == _state_dict_hook_events(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, options", [("Adam", {"lr": 0.01}), ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
                                           ("AdamW", {"lr": 0.01}), ("AdamW", {"lr": 0.02, "betas": (0.8, 0.9)}),
                                           # lerp's other branch (weight 1 - beta1 >= 0.5), a large decay
                                           ("AdamW", {"lr": 0.01, "betas": (0.3, 0.5), "weight_decay": 0.5}),
                                           ("Adam", {"lr": 0.01, "betas": (0.5, 0.7), "eps": 1e-3})])
def test_adam_without_modes_runs_on_arrays_with_the_ops_values(name, options, dtype):
    # With no mode active, Adam's step runs its ops' kernels on the arrays (optim/_array_steps.py):
    # the same values bit for bit as the public ops (run under a mode that passes every call
    # through), the same state, and the same version counters (one bump per in-place op)
    class Through(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((4, 3)), rng.standard_normal(5)]
    results = []
    for mode in (None, Through):
        params = _params(tm, arrays, dtype)
        opt = getattr(tm.optim, name)(params, **options)
        for step in range(4):
            for p, a in zip(params, arrays):
                p.grad = tm.tensor(np.sin(a * (step + 1)), dtype=getattr(tm, dtype))
            if mode is None:
                opt.step()
            else:
                with mode():
                    opt.step()
        state = opt.state[params[0]]
        results.append(([p.detach().numpy().copy() for p in params], state["exp_avg"].numpy().copy(),
                        state["exp_avg_sq"].numpy().copy(), state["step"].item(),
                        [p._version for p in params], state["exp_avg_sq"]._version, state["step"]._version))
    (fused, *fused_rest), (ops, *ops_rest) = results
    assert all(np.array_equal(a.view(np.uint8), b.view(np.uint8)) for a, b in zip(fused, ops))
    assert all(np.array_equal(a, b) for a, b in zip(fused_rest[:2], ops_rest[:2]))
    assert fused_rest[2:] == ops_rest[2:]
    assert fused[0].dtype == np.dtype(dtype) and fused_rest[2] == 4.0


@pytest.mark.parametrize("lr, betas", [(1e300, (0.9, 0.999)), (0.1, (-1e300, 0.9))])
def test_adam_on_arrays_keeps_the_ops_overflow_errors(lr, betas):
    # A number the kernels cannot convert to float32 (addcdiv's step size, lerp's weight) raises
    # their error on the arrays' path too (optim/_array_steps.py checks before its fused steps)
    p = tm.nn.Parameter(tm.ones(3))
    p.grad = tm.ones(3)
    opt = tm.optim.AdamW([p], lr=lr)
    opt.param_groups[0]["betas"] = betas  # (the constructor refuses such betas)
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        opt.step()


def _muon_trajectory(lib, options):
    rng = np.random.default_rng(11)
    params = _params(lib, [rng.standard_normal(shape) for shape in ((5, 3), (3, 5), (4, 4))])
    opt = lib.optim.Muon(params, **options)
    history = []
    for _ in range(4):
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float32)
        opt.step()
        history.append([_numpy(p).copy() for p in params])
    return history, [_numpy(opt.state[p]["momentum_buffer"]).copy() for p in params]


@pytest.mark.torch
@pytest.mark.parametrize("options", MUON_CASES, ids=str)
def test_muon_matches_torch(torch, options):
    ours, theirs = _muon_trajectory(tm, options), _muon_trajectory(torch, options)
    for a, b in zip(ours[0] + [ours[1]], theirs[0] + [theirs[1]]):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=2e-6, atol=2e-6)


def test_muon_refuses_what_pytorchs_refuses():
    with pytest.raises(ValueError, match=r"Muon only supports 2D parameters whereas we found a parameter with size: "
                                         r"tensormodes.Size\(\[3\]\)"):
        tm.optim.Muon([tm.nn.Parameter(tm.zeros(3))])
    with pytest.raises(ValueError, match="Adjust learning rate function other is not supported"):
        tm.optim.Muon([tm.nn.Parameter(tm.zeros(2, 2))], adjust_lr_fn="other")
    w = tm.nn.Parameter(tm.zeros(2, 2))
    w.grad = tm.ones(2, 2)
    with pytest.raises(ValueError, match="Number of steps must be less than 100 for computational efficiency"):
        tm.optim.Muon([w], ns_steps=100).step()

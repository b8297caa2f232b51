"""NAdam, RAdam, Adamax, Adadelta, LBFGS and SparseAdam: trajectories, state, state_dict and
errors, against PyTorch's (where installed) and against literal trajectories recorded from it."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.overrides import TorchFunctionMode


@pytest.fixture
def torch():
    import torch

    return torch


def _numpy(t):
    return t.detach().numpy()


# -- literal trajectories (recorded from PyTorch 2.13, float64): no PyTorch needed ---------------

GRADS = [[0.5, -1.0], [0.25, 2.0], [-1.0, 0.5], [2.0, 0.0], [0.75, -0.5], [-0.5, 0.25], [1.0, 1.0]]

BY_HAND = [
    ('NAdam', {'lr': 0.1, 'weight_decay': 0.1}, [
        [0.894354822627274, -1.8943548217468975],
        [0.8373923931538477, -1.9779886447122124],
        [0.9219927749765564, -1.9959893910927666],
        [0.8138964817095059, -1.9883623569800348],
        [0.762205708282008, -1.950023248700364],
        [0.7763213707612677, -1.9530834183865782],
        [0.7076623881322285, -2.0048755383015435],
    ]),
    ('NAdam', {'lr': 0.1, 'decoupled_weight_decay': True, 'weight_decay': 0.2, 'maximize': True}, [
        [1.0856451770205755, -2.0656451780770273],
        [1.1163246023616706, -1.9336765255008355],
        [0.9999367692206664, -1.8668465644356396],
        [1.0859990420156522, -1.824136909258808],
        [1.1124356791107508, -1.8113010609636295],
        [1.0695927986511253, -1.7565104128027522],
        [1.1134756641013424, -1.6559969497470792],
    ]),
    ('RAdam', {'lr': 0.1, 'betas': (0.5, 0.9)}, [
        [0.95, -1.9],
        [0.9166666666666666, -2.0],
        [0.9595238095238094, -2.0714285714285716],
        [0.8728571428571428, -2.104761904761905],
        [0.7922119815668202, -2.095084485407066],
        [0.7886522842115458, -2.0973682706200325],
        [0.7700405781147771, -2.1170862431800277],
    ]),
    ('RAdam', {'lr': 0.1, 'betas': (0.9, 0.8), 'weight_decay': 0.1, 'decoupled_weight_decay': True}, [
        [0.94, -1.88],
        [0.8937578947368421, -1.9190947368421052],
        [0.898473452320839, -1.9548853392891823],
        [0.8410153243693085, -1.9743303794700038],
        [0.7776541320789498, -1.9718491693970688],
        [0.737325233424292, -1.9710441976653652],
        [0.7097274246470519, -1.969606731714616],
    ]),
    ('Adamax', {'lr': 0.1, 'weight_decay': 0.1}, [
        [0.9000000016666666, -1.9000000008333333],
        [0.8227297502310204, -1.9212271016160354],
        [0.8277850372968149, -1.9409176915653659],
        [0.8002865943757933, -1.9517721961850432],
        [0.7697409405544369, -1.950577200238171],
        [0.750033686417297, -1.950286731724117],
        [0.7241648828766644, -1.9586191432599458],
    ]),
    ('Adamax', {'lr': 0.1, 'betas': (0.5, 0.5), 'maximize': True}, [
        [1.099999998, -2.099999999],
        [1.2333333260000001, -2.04999999925],
        [1.1904761835714286, -1.9785714281785716],
        [1.2338095166880954, -1.9119047618452383],
        [1.3144546775751922, -1.9312596001678188],
        [1.3430261055751922, -1.8995135696916283],
        [1.4005064199610189, -1.8451828615735182],
    ]),
    ('Adadelta', {'lr': 1.0, 'rho': 0.5, 'eps': 0.01, 'maximize': True}, [
        [1.1360827634879542, -2.140028008402801],
        [1.24379517414333, -1.9528083817152133],
        [1.0522541433399704, -1.8725959219044361],
        [1.2947150953793263, -1.8725959219044361],
        [1.436693936954996, -1.970664984476488],
        [1.3269408762271977, -1.9041290092773802],
        [1.5108571444161598, -1.7433153651423303],
    ]),
    ('Adadelta', {'weight_decay': 0.5}, [
        [0.9968377381511013, -1.9968377262926713],
        [0.994067856127574, -1.9989254457117058],
        [0.9961428606160215, -1.9977736406885596],
        [0.9912533548055766, -1.995604373071564],
        [0.9881822841222497, -1.9926130548250436],
        [0.9881984146536908, -1.9909174960201494],
        [0.9846226307354954, -1.9909284472813573],
    ]),
]


@pytest.mark.parametrize("name,options,expected", BY_HAND, ids=[f"{n}-{o}" for n, o, _ in BY_HAND])
def test_literal_trajectories(name, options, expected):
    p = tm.nn.Parameter(tm.tensor([1.0, -2.0], dtype=tm.float64))
    opt = getattr(tm.optim, name)([p], **options)
    for step, (g, want) in enumerate(zip(GRADS, expected)):
        p.grad = tm.tensor(g, dtype=tm.float64)
        opt.step()
        # PyTorch fuses some multiply-adds (one rounding where we round twice): the last bit may differ.
        np.testing.assert_allclose(p.tolist(), want, rtol=2e-16 * 8, atol=0, err_msg=f"step {step + 1}")


def test_radam_switches_to_the_rectified_step_when_rho_exceeds_5():
    # betas (0.5, 0.9): rho_t = 19 - 2t 0.9^t / (1 - 0.9^t) passes 5 at t = 6; before, a plain momentum step.
    p = tm.nn.Parameter(tm.tensor([0.0], dtype=tm.float64))
    opt = tm.optim.RAdam([p], lr=1.0, betas=(0.5, 0.9))
    for _ in range(5):
        p.grad = tm.tensor([1.0], dtype=tm.float64)
        before = p.item()
        opt.step()
        assert p.item() == pytest.approx(before - 1.0, rel=1e-15)  # m / (1 - 0.5**t) == 1
    p.grad = tm.tensor([1.0], dtype=tm.float64)
    before = p.item()
    opt.step()
    rho_inf, b2t = 19.0, 0.9 ** 6
    rho_t = rho_inf - 2 * 6 * b2t / (1 - b2t)
    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
    # v = 1 - 0.9**6 (every gradient was 1), so the adaptive lr is sqrt(1 - b2t) / (sqrt(v) + eps)
    assert p.item() == pytest.approx(before - rect * (1 - b2t) ** 0.5 / ((1 - b2t) ** 0.5 + 1e-8), rel=1e-14)


def test_nadam_keeps_mu_product_as_a_float32_tensor():
    p = tm.nn.Parameter(tm.tensor([1.0], dtype=tm.float64))
    opt = tm.optim.NAdam([p])
    p.grad = tm.tensor([1.0], dtype=tm.float64)
    opt.step()
    mu_product = opt.state[p]["mu_product"]
    assert mu_product.dtype is tm.float32 and mu_product.shape == ()
    mu = 0.9 * (1.0 - 0.5 * 0.96 ** 0.004)
    assert mu_product.item() == float(np.float32(mu))
    assert opt.state[p]["step"].dtype is tm.float32


def test_adadelta_state_and_step_by_hand():
    p = tm.nn.Parameter(tm.tensor([1.0], dtype=tm.float64))
    opt = tm.optim.Adadelta([p], lr=0.5, rho=0.5, eps=1.0)
    p.grad = tm.tensor([2.0], dtype=tm.float64)
    opt.step()
    delta = (1.0 / 3.0) ** 0.5 * 2.0  # sqrt(0 + 1) / sqrt(0.5 * 4 + 1) * g
    assert opt.state[p]["square_avg"].item() == 2.0
    assert opt.state[p]["acc_delta"].item() == pytest.approx(0.5 * delta * delta, rel=1e-15)
    assert p.item() == pytest.approx(1.0 - 0.5 * delta, rel=1e-15)
    assert opt.state[p]["step"].item() == 1.0


def test_adamax_exp_inf_is_a_running_maximum():
    p = tm.nn.Parameter(tm.tensor([0.0, 0.0], dtype=tm.float64))
    opt = tm.optim.Adamax([p], betas=(0.9, 0.5), eps=0.0)
    for g in ([4.0, -1.0], [1.0, 3.0]):
        p.grad = tm.tensor(g, dtype=tm.float64)
        opt.step()
    assert opt.state[p]["exp_inf"].tolist() == [2.0, 3.0]


# -- against PyTorch ----------------------------------------------------------------------------

CASES = [
    ("NAdam", {}), ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {}), ("RAdam", {"lr": 0.05, "betas": (0.5, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.9), "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}),
    ("Adamax", {}), ("Adamax", {"lr": 0.05, "betas": (0.5, 0.7), "weight_decay": 0.1, "maximize": True}),
    ("Adadelta", {}), ("Adadelta", {"lr": 0.5, "rho": 0.5, "weight_decay": 0.1, "maximize": True, "eps": 1e-3}),
]
SHAPES = [(4, 3), (3,), (2,)]
STEPS = 8


def _trajectory(lib, name, options, dtype):
    """Parameters after each step and the final state, with two groups (the second at its own
    lr) and the last parameter without a gradient on the third step."""
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal(s) for s in SHAPES]
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(STEPS)]
    dt = getattr(lib, dtype)
    params = [lib.nn.Parameter(lib.tensor(a, dtype=dt)) for a in arrays]
    opt = getattr(lib.optim, name)([{"params": params[:2]}, {"params": params[2:], "lr": 0.03}], **options)
    history = []
    for step, gs in enumerate(grads):
        for p, g in zip(params, gs):
            p.grad = lib.tensor(g, dtype=dt)
        if step == 2:
            params[-1].grad = None
        opt.step()
        history.append([_numpy(p).copy() for p in params])
    state = {i: {k: _numpy(v).copy() for k, v in s.items()} for i, s in opt.state_dict()["state"].items()}
    return history, state


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,options", CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_trajectory_matches_torch(torch, name, options, dtype):
    ours, our_state = _trajectory(tm, name, options, dtype)
    theirs, their_state = _trajectory(torch, name, options, dtype)
    tolerance = {"rtol": 1e-13, "atol": 1e-14} if dtype == "float64" else {"rtol": 2e-6, "atol": 2e-6}
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype
            np.testing.assert_allclose(x, y, **tolerance, err_msg=f"step {step + 1}")
    assert our_state.keys() == their_state.keys()
    for index in their_state:
        assert our_state[index].keys() == their_state[index].keys()
        for key, value in their_state[index].items():
            assert our_state[index][key].dtype == value.dtype, key
            np.testing.assert_allclose(our_state[index][key], value, **tolerance, err_msg=key)


@pytest.mark.torch
@pytest.mark.parametrize("name,options", [("NAdam", {"lr": 0.1, "weight_decay": 0.1}), ("RAdam", {"lr": 0.1}),
                                          ("Adamax", {"lr": 0.1, "weight_decay": 0.1}),
                                          ("Adadelta", {"weight_decay": 0.1})])
def test_complex_parameters_match_torch(torch, name, options):
    rng = np.random.default_rng(3)
    start = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    grads = [rng.standard_normal(4) + 1j * rng.standard_normal(4) for _ in range(7)]
    results = []
    for lib in (tm, torch):
        p = lib.nn.Parameter(lib.tensor(start, dtype=lib.complex128))
        opt = getattr(lib.optim, name)([p], **options)
        for g in grads:
            p.grad = lib.tensor(g, dtype=lib.complex128)
            opt.step()
        results.append(_numpy(p))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-13, atol=1e-14)


def _logged_calls(lib, mode_base, name, options):
    calls = []

    class Log(mode_base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            label = getattr(func, "__name__", "")
            # PyTorch names ``float / tensor`` after the alias its Tensor binds (``__rdiv__``); tensormodes
            # after the operator (``__rtruediv__``): the same operation, a difference outside optim.
            label = "__rtruediv__" if label == "__rdiv__" else label
            if label in {"add_", "mul_", "lerp_", "addcmul_", "addcdiv_", "addcmul", "sqrt", "sqrt_", "div", "div_",
                         "item", "add", "neg", "maximum", "abs", "__imul__", "__iadd__", "__truediv__", "__mul__",
                         "__rtruediv__", "view_as_real", "view_as_complex"}:
                calls.append(label)
            return func(*args, **(kwargs or {}))

    p = lib.nn.Parameter(lib.ones(3))
    opt = getattr(lib.optim, name)([p], **options)
    for _ in range(7):
        p.grad = lib.full((3,), 0.5)
        with Log():
            opt.step()
    return calls


@pytest.mark.torch
@pytest.mark.parametrize("name,options", [("NAdam", {"weight_decay": 0.1}), ("NAdam", {"maximize": True}),
                                          ("RAdam", {"weight_decay": 0.1, "betas": (0.5, 0.9)}),
                                          ("RAdam", {"decoupled_weight_decay": True, "weight_decay": 0.1}),
                                          ("Adamax", {"weight_decay": 0.1, "maximize": True}),
                                          ("Adadelta", {"weight_decay": 0.1, "maximize": True})])
def test_a_mode_sees_the_same_tensor_operations_as_in_torch(torch, name, options):
    from torch.overrides import TorchFunctionMode as TorchMode

    assert _logged_calls(tm, TorchFunctionMode, name, options) == _logged_calls(torch, TorchMode, name, options)


def _outcome(make):
    try:
        make()
    except Exception as error:
        return type(error).__name__, str(error).replace("torch.", "tensormodes.")
    return None


ARGUMENT_ERRORS = [
    ("NAdam", {"lr": -1.0}), ("NAdam", {"eps": -1.0}), ("NAdam", {"betas": (1.0, 0.9)}),
    ("NAdam", {"betas": (0.9, -0.1)}), ("NAdam", {"weight_decay": -1.0}), ("NAdam", {"momentum_decay": -1.0}),
    ("RAdam", {"lr": -1.0}), ("RAdam", {"eps": -1.0}), ("RAdam", {"betas": (0.9, 1.0)}),
    ("RAdam", {"weight_decay": -0.5}),
    ("Adamax", {"lr": -1.0}), ("Adamax", {"eps": -1.0}), ("Adamax", {"betas": (-0.1, 0.9)}),
    ("Adamax", {"weight_decay": -1.0}),
    ("Adadelta", {"lr": -1.0}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"rho": -0.1}),
    ("Adadelta", {"eps": -1.0}), ("Adadelta", {"weight_decay": -1.0}),
]


@pytest.mark.torch
@pytest.mark.parametrize("name,options", ARGUMENT_ERRORS, ids=[f"{n}-{o}" for n, o in ARGUMENT_ERRORS])
def test_argument_errors_match_torch(torch, name, options):
    ours = _outcome(lambda: getattr(tm.optim, name)([tm.nn.Parameter(tm.ones(1))], **options))
    theirs = _outcome(lambda: getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], **options))
    assert ours == theirs and ours[0] == "ValueError"


def test_argument_errors_without_torch():
    p = [tm.nn.Parameter(tm.ones(1))]
    with pytest.raises(ValueError, match="^Invalid momentum_decay value: -1.0$"):
        tm.optim.NAdam(p, momentum_decay=-1.0)
    with pytest.raises(ValueError, match=r"^Invalid beta parameter at index 1: 1.0$"):
        tm.optim.RAdam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="^Invalid epsilon value: -1.0$"):
        tm.optim.Adamax(p, eps=-1.0)
    with pytest.raises(ValueError, match="^Invalid rho value: 1.5$"):
        tm.optim.Adadelta(p, rho=1.5)
    # unlike Adam's, these accept mixed int and float betas, as PyTorch's do
    tm.optim.NAdam(p, betas=(0, 0.9))


@pytest.mark.parametrize("make", [
    lambda p: tm.optim.NAdam(p, capturable=True), lambda p: tm.optim.RAdam(p, differentiable=True),
    lambda p: tm.optim.Adamax(p, capturable=True), lambda p: tm.optim.Adadelta(p, differentiable=True),
    lambda p: tm.optim.NAdam(p, lr=tm.tensor(0.1)),
])
def test_unsupported_implementation_options_raise(make):
    with pytest.raises(NotImplementedError, match="not supported|does not have"):
        make([tm.nn.Parameter(tm.ones(1))])


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return ("Tensor", str(value.dtype).split(".")[-1], tuple(value.shape))
    return value


@pytest.mark.torch
@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax", "Adadelta"])
def test_state_dict_layout_and_repr_match_torch(torch, name):
    layouts, reprs = [], []
    for lib in (tm, torch):
        a, b, c = (lib.nn.Parameter(lib.tensor(v)) for v in ([1.0, 2.0], [3.0], [[4.0]]))
        opt = getattr(lib.optim, name)([{"params": [a, b]}, {"params": [c], "lr": 0.5}])
        a.grad, c.grad = lib.ones(2), lib.ones(1, 1)
        opt.step()
        layouts.append(_plain(opt.state_dict()))
        reprs.append(repr(opt))
    assert layouts[0] == layouts[1]
    assert reprs[0] == reprs[1]


@pytest.mark.parametrize("name,options", [("NAdam", {"lr": 0.1}), ("RAdam", {"betas": (0.5, 0.9)}),
                                          ("Adamax", {}), ("Adadelta", {"weight_decay": 0.1})])
def test_load_state_dict_resumes_exactly(name, options):
    # float32 parameters: loading casts floating state to the parameter's dtype (NAdam's float32
    # mu_product too, as PyTorch does), which changes nothing here.
    def run(steps, resume_after=None):
        p = tm.nn.Parameter(tm.tensor([1.0, -2.0]))
        opt = getattr(tm.optim, name)([p], **options)
        for i, g in enumerate(GRADS[:steps]):
            if i == resume_after:
                saved = opt.state_dict()
                p = tm.nn.Parameter(p.detach().clone())
                opt = getattr(tm.optim, name)([p], **options)
                opt.load_state_dict(saved)
            p.grad = tm.tensor(g)
            opt.step()
        return p.tolist()

    assert run(7) == run(7, resume_after=4)


def _resumed_nadam(lib):
    p = lib.nn.Parameter(lib.tensor([1.0, -2.0], dtype=lib.float64))
    opt = lib.optim.NAdam([p], lr=0.1)
    for g in GRADS[:3]:
        p.grad = lib.tensor(g, dtype=lib.float64)
        opt.step()
    opt2 = lib.optim.NAdam([p], lr=0.1)
    opt2.load_state_dict(opt.state_dict())
    for g in GRADS[3:]:
        p.grad = lib.tensor(g, dtype=lib.float64)
        opt2.step()
    return opt2.state[p]["mu_product"], opt2.state[p]["step"], p.tolist()


def test_loading_casts_nadam_mu_product_to_the_parameter_dtype_but_not_step():
    mu_product, step, _ = _resumed_nadam(tm)
    assert mu_product.dtype is tm.float64 and step.dtype is tm.float32


@pytest.mark.torch
def test_resumed_nadam_matches_torch(torch):
    ours, theirs = _resumed_nadam(tm), _resumed_nadam(torch)
    assert ours[0].item() == theirs[0].item() and ours[1].item() == theirs[1].item()
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-15)


def test_setstate_turns_numbers_into_tensors():
    p = tm.nn.Parameter(tm.ones(1))
    opt = tm.optim.NAdam([p])
    opt.__setstate__({"state": {p: {"step": 3, "mu_product": 0.5, "exp_avg": tm.zeros(1), "exp_avg_sq": tm.zeros(1)}},
                      "param_groups": opt.param_groups})
    assert opt.state[p]["step"].dtype is tm.float32 and opt.state[p]["step"].item() == 3.0
    assert opt.state[p]["mu_product"].dtype is tm.float32 and opt.state[p]["mu_product"].item() == 0.5


def test_closure_loss_is_returned():
    p = tm.nn.Parameter(tm.tensor([1.0]))
    opt = tm.optim.Adamax([p])

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 1.0
    assert p.item() < 1.0

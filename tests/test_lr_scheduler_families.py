"""MultiplicativeLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR and ChainedScheduler:
learning-rate (and momentum) sequences, state dicts and errors, against literal sequences
recorded from PyTorch 2.13 and against PyTorch where installed."""

from __future__ import annotations

import math
import warnings

import pytest

import tensormodes as tm


@pytest.fixture
def torch():
    import torch

    return torch


def _schedulers(L):
    """Scheduler factories over a library ``L``, as ``name -> (optimizer -> scheduler)``."""
    S = L.optim.lr_scheduler
    return {
        "MultiplicativeLR": lambda o: S.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.5),
        "PolynomialLR": lambda o: S.PolynomialLR(o, total_iters=6, power=2.0),
        "CosineAnnealingWarmRestarts": lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01),
        "CyclicLR-triangular2": lambda o: S.CyclicLR(o, base_lr=0.1, max_lr=1.0, step_size_up=2, step_size_down=3,
                                                     mode="triangular2"),
        "CyclicLR-exp_range": lambda o: S.CyclicLR(o, base_lr=0.1, max_lr=1.0, step_size_up=3, mode="exp_range",
                                                   gamma=0.8),
        "ChainedScheduler": lambda o: S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=3),
                                                          S.ExponentialLR(o, gamma=0.5)]),
    }


def _more_schedulers(L):
    """Further cases, checked against PyTorch only (two groups, list arguments, other modes)."""
    S = L.optim.lr_scheduler
    return {
        "MultiplicativeLR-list": lambda o: S.MultiplicativeLR(o, [lambda e: 0.95, lambda e: 1.0 + e / 100]),
        "PolynomialLR-default": lambda o: S.PolynomialLR(o),
        "PolynomialLR-sqrt": lambda o: S.PolynomialLR(o, total_iters=9, power=0.5),
        "CosineAnnealingWarmRestarts-T_mult1": lambda o: S.CosineAnnealingWarmRestarts(o, T_0=4),
        "CyclicLR-triangular": lambda o: S.CyclicLR(o, base_lr=[0.01, 0.001], max_lr=[0.1, 0.05], step_size_up=4),
        "CyclicLR-scale_fn": lambda o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, scale_fn=lambda x: 1 / x,
                                                  base_momentum=[0.7, 0.6], max_momentum=0.95),
        "CyclicLR-scale_fn-iterations": lambda o: S.CyclicLR(o, 0.01, 0.1, step_size_up=2, step_size_down=5,
                                                             scale_fn=lambda x: 0.99 ** x, scale_mode="iterations",
                                                             cycle_momentum=False),
        "ChainedScheduler-three": lambda o: S.ChainedScheduler([S.LinearLR(o, start_factor=0.2, total_iters=4),
                                                                S.CosineAnnealingLR(o, T_max=6),
                                                                S.StepLR(o, step_size=3, gamma=0.5)]),
    }


LITERAL = {
    'MultiplicativeLR': (
        [1.0, 0.9, 0.45, 0.405, 0.2025, 0.18225000000000002, 0.09112500000000001, 0.08201250000000002,
         0.04100625000000001],
        [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9],
    ),
    'PolynomialLR': (
        [1.0, 0.6944444444444445, 0.4444444444444446, 0.25000000000000006, 0.11111111111111116,
         0.027777777777777773, 0.0, 0.0, 0.0],
        [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9],
    ),
    'CosineAnnealingWarmRestarts': (
        [1.0, 0.7525, 0.2575000000000001, 1.0, 0.9336825748732972, 0.7525, 0.505, 0.2575000000000001,
         0.07631742512670284],
        [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9],
    ),
    'CyclicLR-triangular2': (
        [0.1, 0.5499999999999999, 0.9999999999999998, 0.6999999999999998, 0.3999999999999999, 0.1,
         0.3250000000000002, 0.5499999999999999, 0.3999999999999999],
        [0.9, 0.8500000000000001, 0.8, 0.8333333333333334, 0.8666666666666667, 0.9, 0.875, 0.8500000000000001,
         0.8666666666666667],
    ),
    'CyclicLR-exp_range': (
        [0.1, 0.34000000000000014, 0.484, 0.5608000000000001, 0.3457600000000002, 0.19830399999999995, 0.1,
         0.16291456000000015, 0.200663296],
        [0.9, 0.8733333333333333, 0.8573333333333334, 0.8488, 0.8726933333333333, 0.8890773333333334, 0.9,
         0.8930094933333333, 0.8888151893333334],
    ),
    'ChainedScheduler': (
        [0.5, 0.25, 0.125, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625],
        [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9],
    ),
}


def _lr_sequence(lib, factory, optimizer="SGD", steps=8, lrs=(1.0,)):
    groups = [{"params": [lib.nn.Parameter(lib.ones(1))], "lr": lr} for lr in lrs]
    opt = (lib.optim.SGD(groups, lr=lrs[0], momentum=0.9) if optimizer == "SGD"
           else getattr(lib.optim, optimizer)(groups, lr=lrs[0]))
    scheduler = factory(opt)

    def seen():
        return (scheduler.get_last_lr(), [g["lr"] for g in opt.param_groups],
                [g.get("momentum", g.get("betas")) for g in opt.param_groups])

    sequence = [seen()]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        sequence.append(seen())
    return sequence


@pytest.mark.parametrize("name", list(LITERAL))
def test_literal_sequences(name):
    sequence = _lr_sequence(tm, _schedulers(tm)[name])
    lrs, momenta = LITERAL[name]
    assert [last[0] for last, _, _ in sequence] == lrs
    assert [group[0] for _, group, _ in sequence] == lrs
    assert [m[0] for _, _, m in sequence] == momenta


@pytest.mark.torch
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("name", [*_schedulers(tm), *_more_schedulers(tm)])
def test_sequences_match_torch_exactly(torch, name, optimizer):
    def factory(lib):
        return {**_schedulers(lib), **_more_schedulers(lib)}[name]

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # stepping in the right order warns about nothing
        ours = _lr_sequence(tm, factory(tm), optimizer, steps=25, lrs=(0.1, 0.02))
        theirs = _lr_sequence(torch, factory(torch), optimizer, steps=25, lrs=(0.1, 0.02))
    assert ours == theirs


@pytest.mark.torch
@pytest.mark.parametrize("name", ["PolynomialLR", "PolynomialLR-sqrt", "MultiplicativeLR"])
def test_step_with_an_epoch_like_torch(torch, name):
    results = []
    for lib in (tm, torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.5)
        scheduler = {**_schedulers(lib), **_more_schedulers(lib)}[name](opt)
        values = []
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
            for epoch in [3, 9, 4, 2, 2, 0]:
                opt.step()
                scheduler.step(epoch)
                values.append(scheduler.get_last_lr())
        results.append(values)
    assert results[0] == results[1]


def _warm_restarts_at(lib, epochs, T_mult):
    opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=1.0)
    scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=T_mult, eta_min=0.1)
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fractional epoch is this scheduler's per-batch stepping: no warning
        for epoch in epochs:
            opt.step()
            scheduler.step(epoch)
            values.append((scheduler.get_last_lr(), scheduler.T_cur, scheduler.T_i, scheduler.last_epoch))
    return values


EPOCHS = [0.5, 1.0, 1.75, 2.0, 5.5, 13.25, 0, 3]


def test_warm_restarts_fractional_epochs_by_hand():
    values = _warm_restarts_at(tm, EPOCHS, T_mult=2)
    # epoch 5.5 with T_0 = 2, T_mult = 2: cycles of 2, 4, 8 -> 5.5 is 3.5 into the second (T_i = 4)
    lrs, t_cur, t_i, last_epoch = values[4]
    assert (t_cur, t_i, last_epoch) == (3.5, 4, 5)
    assert lrs[0] == pytest.approx(0.1 + 0.9 * (1 + math.cos(math.pi * 3.5 / 4)) / 2)
    assert values[6][1:] == (0, 2, 0)


@pytest.mark.torch
@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_fractional_epochs_match_torch(torch, T_mult):
    assert _warm_restarts_at(tm, EPOCHS, T_mult) == _warm_restarts_at(torch, EPOCHS, T_mult)


def _state_keys(scheduler):
    return sorted(scheduler.state_dict())


@pytest.mark.torch
@pytest.mark.parametrize("name", [*_schedulers(tm), *_more_schedulers(tm)])
def test_state_dict_matches_torch(torch, name):
    def make(lib):
        groups = [{"params": [lib.nn.Parameter(lib.ones(1))], "lr": lr} for lr in (0.1, 0.02)]
        opt = lib.optim.SGD(groups, lr=0.1, momentum=0.9)
        scheduler = {**_schedulers(lib), **_more_schedulers(lib)}[name](opt)
        for _ in range(3):
            opt.step()
            scheduler.step()
        return scheduler.state_dict()

    def plain(state):
        drop = ("lr_lambdas", "_scale_fn_custom", "_schedulers")
        return {k: v for k, v in state.items() if k not in drop}

    ours, theirs = make(tm), make(torch)
    assert sorted(ours) == sorted(theirs)
    assert plain(ours) == plain(theirs)
    if "_schedulers" in ours:
        assert [plain(s) for s in ours["_schedulers"]] == [plain(s) for s in theirs["_schedulers"]]


@pytest.mark.parametrize("name", list(_schedulers(tm)))
def test_state_dict_round_trip_resumes_the_sequence(name):
    factory = _schedulers(tm)[name]
    reference = _lr_sequence(tm, factory, steps=14)
    opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0, momentum=0.9)
    scheduler = factory(opt)
    for _ in range(5):
        opt.step()
        scheduler.step()
    saved_optimizer, saved = opt.state_dict(), scheduler.state_dict()
    resumed_opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0, momentum=0.9)
    resumed = factory(resumed_opt)
    resumed_opt.load_state_dict(saved_optimizer)
    resumed.load_state_dict(saved)
    seen = []
    for _ in range(9):
        resumed_opt.step()
        resumed.step()
        seen.append(resumed.get_last_lr())
    assert seen == [lrs for lrs, _, _ in reference[6:]]


class _Halving:
    """A callable object: its ``__dict__`` is saved in a state dict (a plain function is not)."""

    def __init__(self):
        self.base = 0.5

    def __call__(self, x):
        return self.base ** x


def test_callable_objects_are_saved_and_restored():
    opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0, momentum=0.9)
    fn = _Halving()
    cyclic = tm.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, scale_fn=fn)
    saved = cyclic.state_dict()
    assert saved["_scale_fn_custom"] == {"base": 0.5} and "_scale_fn_ref" not in saved
    fn.base = 0.25
    cyclic.load_state_dict(saved)
    assert fn.base == 0.5
    multiplicative = tm.optim.lr_scheduler.MultiplicativeLR(opt, fn)
    assert multiplicative.state_dict()["lr_lambdas"] == [{"base": 0.5}]


def _outcome(make):
    try:
        make()
    except Exception as error:
        return type(error).__name__, str(error).replace("torch.", "tensormodes.")
    return None


def _errors(L):
    S = L.optim.lr_scheduler

    def opt(**kwargs):
        return L.optim.SGD([L.nn.Parameter(L.ones(1))], lr=0.1, **kwargs)

    other = opt()
    return [
        lambda: S.MultiplicativeLR(opt(), [lambda e: 1.0, lambda e: 1.0]),
        lambda: S.MultiplicativeLR(opt(), 0.5),
        lambda: S.CosineAnnealingWarmRestarts(opt(), T_0=0),
        lambda: S.CosineAnnealingWarmRestarts(opt(), T_0=2.0),
        lambda: S.CosineAnnealingWarmRestarts(opt(), T_0=2, T_mult=0),
        lambda: S.CosineAnnealingWarmRestarts(opt(), T_0=2, T_mult=1.5),
        lambda: S.CosineAnnealingWarmRestarts(opt(), T_0=2, eta_min="0"),
        lambda: S.CosineAnnealingWarmRestarts(opt(), T_0=2).step(-1),
        lambda: S.CyclicLR(opt(), 0.1, 1.0, mode="sine"),
        lambda: S.CyclicLR(L.optim.Adagrad([L.nn.Parameter(L.ones(1))]), 0.1, 1.0),
        lambda: S.CyclicLR(opt(), [0.1, 0.2], 1.0),
        lambda: S.CyclicLR(opt(momentum=0.9), 0.1, [1.0, 2.0]),
        lambda: S.CyclicLR(object(), 0.1, 1.0),
        lambda: S.ChainedScheduler([]),
        lambda: S.ChainedScheduler([S.StepLR(other, 2), object()]),
        lambda: S.ChainedScheduler([S.ReduceLROnPlateau(other)]),
        lambda: S.ChainedScheduler([S.StepLR(other, 2)], optimizer=opt()),
    ]


def test_errors_without_torch():
    outcomes = [_outcome(make) for make in _errors(tm)]
    assert outcomes[0] == ("ValueError", "Expected 1 lr_lambdas, but got 2")
    assert outcomes[1] == ("TypeError", "lr_lambda should be a function, but got float")
    assert outcomes[2] == ("ValueError", "Expected positive integer T_0, but got 0")
    assert outcomes[5] == ("ValueError", "Expected integer T_mult >= 1, but got 1.5")
    assert outcomes[7] == ("ValueError", "Expected non-negative epoch, but got -1")
    assert outcomes[8] == ("ValueError", "mode is invalid and scale_fn is None")
    assert outcomes[9] == ("ValueError",
                           "optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    assert outcomes[13] == ("ValueError", "ChainedScheduler expects at least one scheduler to be chained, but got no "
                                          "scheduler.")
    assert outcomes[14] == ("TypeError", "ChainedScheduler at index 1 should have `optimizer` as its attribute.")
    assert all(outcome is not None for outcome in outcomes)


@pytest.mark.torch
def test_errors_match_torch(torch):
    ours = [_outcome(make) for make in _errors(tm)]
    theirs = [_outcome(make) for make in _errors(torch)]
    # the optimizer's repr is in one message (identical text, library name aside)
    assert ours[:-1] == theirs[:-1]
    assert ours[-1][0] == theirs[-1][0] == "ValueError"


def test_cyclic_sets_the_lower_bound_and_momentum_at_construction():
    opt = tm.optim.Adam([tm.nn.Parameter(tm.ones(1))], lr=5.0)
    scheduler = tm.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4,
                                               base_momentum=0.8, max_momentum=0.95)
    group = opt.param_groups[0]
    # the lower bound is set before the base class records initial_lr (as in PyTorch)
    assert group["lr"] == 0.01 and group["initial_lr"] == 0.01 and scheduler.base_lrs == [0.01]
    assert group["betas"] == (0.95, 0.999) and group["max_momentum"] == 0.95 and group["base_momentum"] == 0.8


def test_chained_scheduler_does_not_step_at_construction():
    opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    S = tm.optim.lr_scheduler
    exponential = S.ExponentialLR(opt, gamma=0.5)
    chained = S.ChainedScheduler([exponential])
    assert exponential.last_epoch == 0 and chained.get_last_lr() == [1.0] and chained.optimizer is opt
    assert sorted(chained.state_dict()) == ["_last_lr", "_schedulers"]

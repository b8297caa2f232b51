"""optim.swa_utils: AveragedModel (SWA and EMA averaging), SWALR and update_bn, against values
worked out by hand and against PyTorch where installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm


@pytest.fixture
def torch():
    import torch

    return torch


def _model(lib, seed=0):
    rng = np.random.default_rng(seed)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float32))
    return model


def _averaging_run(lib, kind, use_buffers=False, steps=6):
    """Train a small model with SGD and average it each step; return the averaged weights,
    buffers and n_averaged."""
    S = lib.optim.swa_utils
    model = _model(lib)
    options = {"swa": {}, "ema": {"multi_avg_fn": S.get_ema_multi_avg_fn(0.9)},
               "ema-one": {"avg_fn": S.get_ema_avg_fn(0.8)}, "swa-multi": {"multi_avg_fn": S.get_swa_multi_avg_fn()},
               "swa-one": {"avg_fn": S.get_swa_avg_fn()}}[kind]
    averaged = S.AveragedModel(model, use_buffers=use_buffers, **options)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        x = lib.tensor(rng.standard_normal((5, 3)), dtype=lib.float32)
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        averaged.update_parameters(model)
    return ([p.detach().numpy().copy() for p in averaged.module.parameters()],
            [b.detach().numpy().copy() for b in averaged.module.buffers()], int(averaged.n_averaged))


@pytest.mark.torch
@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", ["swa", "ema", "ema-one", "swa-multi", "swa-one"])
def test_averaged_model_matches_torch(torch, kind, use_buffers):
    if kind == "swa-multi" and use_buffers:
        # the long num_batches_tracked buffer goes through addcdiv with integers: PyTorch raises, so do we
        for lib in (tm, torch):
            with pytest.raises(RuntimeError, match="^Integer division with addcdiv is no longer supported"):
                _averaging_run(lib, kind, use_buffers)
        return
    ours = _averaging_run(tm, kind, use_buffers)
    theirs = _averaging_run(torch, kind, use_buffers)
    assert ours[2] == theirs[2] == 6
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_swa_is_the_running_mean_and_ema_the_moving_average():
    model = tm.nn.Linear(1, 1, bias=False)
    swa = tm.optim.swa_utils.AveragedModel(model)
    ema = tm.optim.swa_utils.AveragedModel(model, multi_avg_fn=tm.optim.swa_utils.get_ema_multi_avg_fn(0.5))
    ema_one = tm.optim.swa_utils.AveragedModel(model, avg_fn=tm.optim.swa_utils.get_ema_avg_fn(0.5))
    for value in (1.0, 2.0, 6.0, 3.0):
        with tm.no_grad():
            model.weight.fill_(value)
        for averaged in (swa, ema, ema_one):
            averaged.update_parameters(model)
    assert swa.module.weight.item() == 3.0  # (1 + 2 + 6 + 3) / 4
    assert ema.module.weight.item() == ema_one.module.weight.item() == 3.375  # 1 -> 1.5 -> 3.75 -> 3.375
    assert swa.n_averaged.dtype is tm.long and int(swa.n_averaged) == 4
    assert "n_averaged" in dict(swa.named_buffers())
    assert swa(tm.tensor([[2.0]])).item() == 6.0  # forward runs the averaged copy


def test_buffers_are_copied_unless_averaged():
    model = tm.nn.BatchNorm1d(1)
    copied = tm.optim.swa_utils.AveragedModel(model)
    averaged = tm.optim.swa_utils.AveragedModel(model, use_buffers=True)
    for value in (2.0, 4.0):
        with tm.no_grad():
            model.running_mean.fill_(value)
        copied.update_parameters(model)
        averaged.update_parameters(model)
    assert copied.module.running_mean.item() == 4.0
    assert averaged.module.running_mean.item() == 3.0


def test_the_averaged_model_is_a_copy_and_errors():
    model = tm.nn.Linear(2, 2)
    averaged = tm.optim.swa_utils.AveragedModel(model)
    assert averaged.module is not model and averaged.module.weight is not model.weight
    with pytest.raises(AssertionError, match="^Only one of avg_fn and multi_avg_fn should be provided$"):
        tm.optim.swa_utils.AveragedModel(model, avg_fn=lambda *a: a[0], multi_avg_fn=lambda *a: None)
    for make in (tm.optim.swa_utils.get_ema_multi_avg_fn, tm.optim.swa_utils.get_ema_avg_fn):
        with pytest.raises(ValueError, match=r"^Invalid decay value 1.5 provided. Please provide a value in \[0,1\]"):
            make(1.5)


def test_update_bn_recomputes_the_statistics_as_a_cumulative_average():
    model = tm.nn.Sequential(tm.nn.Linear(1, 1, bias=False), tm.nn.BatchNorm1d(1, momentum=0.3))
    with tm.no_grad():
        model[0].weight.fill_(2.0)
        model[1].running_mean.fill_(100.0)
    model.eval()
    loader = [(tm.tensor([[1.0], [3.0]]), 0), [tm.tensor([[5.0], [7.0]]), 1]]
    tm.optim.swa_utils.update_bn(loader, model)
    bn = model[1]
    assert bn.running_mean.item() == 8.0  # mean of the batch means 4 and 12
    assert bn.momentum == 0.3 and not model.training and int(bn.num_batches_tracked) == 2
    tm.optim.swa_utils.update_bn([tm.ones(2, 1)], tm.nn.Linear(1, 1))  # no batch norm: nothing to do


@pytest.mark.torch
def test_update_bn_matches_torch(torch):
    results = []
    for lib in (tm, torch):
        model = _model(lib)
        rng = np.random.default_rng(4)
        loader = [lib.tensor(rng.standard_normal((6, 3)), dtype=lib.float32) for _ in range(3)]
        lib.optim.swa_utils.update_bn(loader, model)
        results.append([b.detach().numpy().copy() for b in model[1].buffers()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _swalr_sequence(lib, anneal_strategy, anneal_epochs, swa_lr=0.05, steps=12, lrs=(1.0, 0.2)):
    groups = [{"params": [lib.nn.Parameter(lib.ones(1))], "lr": lr} for lr in lrs]
    opt = lib.optim.SGD(groups, lr=lrs[0])
    scheduler = lib.optim.swa_utils.SWALR(opt, swa_lr=swa_lr, anneal_epochs=anneal_epochs,
                                          anneal_strategy=anneal_strategy)
    sequence = [scheduler.get_last_lr()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(steps):
            opt.step()
            scheduler.step()
            sequence.append(scheduler.get_last_lr())
    return sequence, scheduler


def test_swalr_linear_by_hand():
    sequence, scheduler = _swalr_sequence(tm, "linear", 4, swa_lr=0.2, steps=6, lrs=(1.0,))
    assert [round(lrs[0], 12) for lrs in sequence] == [1.0, 0.8, 0.6, 0.4, 0.2, 0.2, 0.2]
    assert scheduler.optimizer.param_groups[0]["swa_lr"] == 0.2


@pytest.mark.torch
@pytest.mark.parametrize("anneal_epochs", [0, 1, 5])
@pytest.mark.parametrize("anneal_strategy", ["cos", "linear"])
def test_swalr_matches_torch(torch, anneal_strategy, anneal_epochs):
    ours, scheduler = _swalr_sequence(tm, anneal_strategy, anneal_epochs)
    theirs, their_scheduler = _swalr_sequence(torch, anneal_strategy, anneal_epochs)
    assert ours == theirs
    assert sorted(scheduler.state_dict()) == sorted(their_scheduler.state_dict())


@pytest.mark.torch
def test_swalr_errors_match_torch(torch):
    def outcome(lib, **kwargs):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=1.0)
        try:
            lib.optim.swa_utils.SWALR(opt, **kwargs)
        except Exception as error:
            return type(error).__name__, str(error)
        return None

    for kwargs in ({"swa_lr": 0.1, "anneal_strategy": "step"}, {"swa_lr": 0.1, "anneal_epochs": -1},
                   {"swa_lr": 0.1, "anneal_epochs": 2.0}, {"swa_lr": [0.1, 0.2]}):
        assert outcome(tm, **kwargs) == outcome(torch, **kwargs) is not None


def test_swalr_state_dict_round_trip():
    sequence, _ = _swalr_sequence(tm, "cos", 5, steps=9)
    _, scheduler = _swalr_sequence(tm, "cos", 5, steps=4)
    opt = tm.optim.SGD([{"params": [tm.nn.Parameter(tm.ones(1))], "lr": lr} for lr in (1.0, 0.2)], lr=1.0)
    resumed = tm.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_strategy="linear")
    resumed.load_state_dict(scheduler.state_dict())
    assert resumed.anneal_func(0.5) == pytest.approx(0.5)  # cos annealing restored: (1 - cos(pi / 2)) / 2
    for group, lr in zip(opt.param_groups, scheduler.get_last_lr()):
        group["lr"] = lr
        group["swa_lr"] = 0.05
    seen = []
    for _ in range(5):
        opt.step()
        resumed.step()
        seen.append(resumed.get_last_lr())
    assert seen == sequence[5:]

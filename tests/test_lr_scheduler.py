"""tensormodes.optim.lr_scheduler: learning-rate sequences, state dicts, warnings and errors,
against PyTorch's (where installed) and against values worked out by hand."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensormodes as tm


@pytest.fixture
def torch():
    import torch

    return torch


def _optimizer(lib, name="SGD", lrs=(0.1, 0.02)):
    groups = [{"params": [lib.nn.Parameter(lib.ones(1))], "lr": lr} for lr in lrs]
    if name == "SGD":
        return lib.optim.SGD(groups, lr=lrs[0], momentum=0.9)
    return getattr(lib.optim, name)(groups, lr=lrs[0])


def _schedulers(L):
    """Scheduler factories over a library ``L``, as ``name -> (optimizer -> scheduler)``."""
    S = L.optim.lr_scheduler
    return {
        "StepLR": lambda o: S.StepLR(o, step_size=4, gamma=0.5),
        "StepLR-gamma3": lambda o: S.StepLR(o, step_size=1, gamma=0.3),
        "MultiStepLR": lambda o: S.MultiStepLR(o, milestones=[3, 7, 7, 20], gamma=0.3),
        "ConstantLR": lambda o: S.ConstantLR(o, factor=0.25, total_iters=6),
        "LinearLR": lambda o: S.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=12),
        "LinearLR-default": lambda o: S.LinearLR(o),
        "ExponentialLR": lambda o: S.ExponentialLR(o, gamma=0.93),
        "CosineAnnealingLR": lambda o: S.CosineAnnealingLR(o, T_max=10),
        "CosineAnnealingLR-eta_min": lambda o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
        "LambdaLR": lambda o: S.LambdaLR(o, lambda epoch: 0.95 ** epoch / (1 + epoch % 3)),
        "LambdaLR-list": lambda o: S.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: e * 0.1]),
        "OneCycleLR": lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=31),
        "OneCycleLR-linear-3phase": lambda o: S.OneCycleLR(o, max_lr=[0.4, 0.2], epochs=4, steps_per_epoch=8,
                                                           anneal_strategy="linear", three_phase=True,
                                                           pct_start=0.25, div_factor=10.0),
        "OneCycleLR-no-momentum": lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=40, cycle_momentum=False),
        "SequentialLR": lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.2, total_iters=5),
                                                     S.ExponentialLR(o, gamma=0.9)], milestones=[5]),
        "SequentialLR-three": lambda o: S.SequentialLR(
            o, [S.ConstantLR(o, factor=0.5, total_iters=3), S.CosineAnnealingLR(o, T_max=8),
                S.StepLR(o, step_size=3, gamma=0.5)], milestones=[4, 12]),
    }


def _lr_sequence(lib, factory, optimizer="SGD", steps=30):
    opt = _optimizer(lib, optimizer)
    scheduler = factory(opt)
    seen = [(scheduler.get_last_lr(), [g["lr"] for g in opt.param_groups],
             [g.get("momentum", g.get("betas")) for g in opt.param_groups])]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        seen.append((scheduler.get_last_lr(), [g["lr"] for g in opt.param_groups],
                     [g.get("momentum", g.get("betas")) for g in opt.param_groups]))
    return seen


@pytest.mark.torch
@pytest.mark.parametrize("name", list(_schedulers(tm)))
def test_lr_sequence_matches_torch_exactly(torch, name):
    steps = 30 if "OneCycle" not in name else {"OneCycleLR": 30, "OneCycleLR-linear-3phase": 31}.get(name, 39)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # stepping in the right order warns about nothing
        ours = _lr_sequence(tm, _schedulers(tm)[name], steps=steps)
        theirs = _lr_sequence(torch, _schedulers(torch)[name], steps=steps)
    assert ours == theirs


@pytest.mark.torch
def test_one_cycle_cycles_adams_beta1_like_torch(torch):
    factory = {lib: (lambda o, lib=lib: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=12))
               for lib in (tm, torch)}
    assert _lr_sequence(tm, factory[tm], "Adam", steps=11) == _lr_sequence(torch, factory[torch], "Adam", steps=11)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
                                  "CosineAnnealingLR-eta_min", "LambdaLR"])
def test_step_with_an_epoch_uses_the_closed_form_like_torch(torch, name):
    results = []
    for lib in (tm, torch):
        opt = _optimizer(lib)
        scheduler = _schedulers(lib)[name](opt)
        values = []
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
            for epoch in [3, 9, 4, 17, 17, 0]:
                opt.step()
                scheduler.step(epoch)
                values.append(scheduler.get_last_lr())
        results.append(values)
    assert results[0] == results[1]


@pytest.mark.torch
@pytest.mark.parametrize("mode,threshold_mode", [("min", "rel"), ("min", "abs"), ("max", "rel"), ("max", "abs")])
def test_reduce_lr_on_plateau_matches_torch(torch, mode, threshold_mode):
    metrics = [5.0, 4.0, 4.0, 3.9999, 4.1, 4.2, 3.0, 3.0, 3.5, 3.5, 3.5, 3.5, 2.0, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5]
    results = []
    for lib in (tm, torch):
        opt = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(
            opt, mode=mode, factor=0.5, patience=1, threshold=0.01, threshold_mode=threshold_mode, cooldown=2,
            min_lr=[0.02, 0.005])
        values = []
        for metric in metrics:
            scheduler.step(lib.tensor(metric) if metric == 3.0 else metric)
            values.append((scheduler.get_last_lr(), scheduler.num_bad_epochs, scheduler.cooldown_counter,
                           scheduler.best, scheduler.last_epoch))
        results.append(values)
    assert results[0] == results[1]


def _state_keys(scheduler):
    return sorted(scheduler.state_dict())


@pytest.mark.torch
@pytest.mark.parametrize("name", list(_schedulers(tm)))
def test_state_dict_keys_match_torch(torch, name):
    ours = _schedulers(tm)[name](_optimizer(tm))
    theirs = _schedulers(torch)[name](_optimizer(torch))
    assert _state_keys(ours) == _state_keys(theirs)
    if name.startswith("SequentialLR"):
        assert [sorted(s) for s in ours.state_dict()["_schedulers"]] == \
            [sorted(s) for s in theirs.state_dict()["_schedulers"]]


@pytest.mark.torch
def test_reduce_lr_on_plateau_state_dict_keys_match_torch(torch):
    keys = [_state_keys(lib.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(lib))) for lib in (tm, torch)]
    assert keys[0] == keys[1]


@pytest.mark.parametrize("name", list(_schedulers(tm)))
def test_state_dict_round_trip_resumes_the_sequence(name):
    factory = _schedulers(tm)[name]
    reference = _lr_sequence(tm, factory, steps=20)
    opt = _optimizer(tm)
    scheduler = factory(opt)
    for _ in range(8):
        opt.step()
        scheduler.step()
    saved_optimizer, saved = opt.state_dict(), scheduler.state_dict()
    resumed_opt = _optimizer(tm)
    resumed = factory(resumed_opt)  # constructed first: it resets the groups' lr
    resumed_opt.load_state_dict(saved_optimizer)
    resumed.load_state_dict(saved)
    seen = []
    for _ in range(12):
        resumed_opt.step()
        resumed.step()
        seen.append(resumed.get_last_lr())
    assert seen == [lrs for lrs, _, _ in reference[9:]]


# -- warnings ---------------------------------------------------------------------------------

def _warnings_of(lib, actions):
    opt = _optimizer(lib)
    scheduler = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for action in actions:
            if action == "opt":
                opt.step()
            elif action == "sched":
                scheduler.step()
            elif action == "override":
                opt.step = lambda closure=None: None
            elif action == "get_lr":
                scheduler.get_lr()
    return [(w.category.__name__, str(w.message)) for w in caught]


WARNING_CASES = [["sched", "opt"], ["opt", "sched", "sched"], ["override", "sched"], ["sched", "sched"],
                 ["get_lr"], ["opt", "sched", "get_lr"]]


@pytest.mark.torch
@pytest.mark.parametrize("actions", WARNING_CASES, ids=["-".join(a) for a in WARNING_CASES])
def test_warnings_match_torch(torch, actions):
    assert _warnings_of(tm, actions) == _warnings_of(torch, actions)


def test_stepping_the_scheduler_first_warns():
    assert _warnings_of(tm, ["opt", "sched"]) == []
    [(category, message)] = _warnings_of(tm, ["sched", "opt"])
    assert category == "UserWarning" and message.startswith(
        "Detected call of `lr_scheduler.step()` before `optimizer.step()`.")
    [(_, message)] = _warnings_of(tm, ["override", "sched"])
    assert message.startswith("Seems like `optimizer.step()` has been overridden after learning rate scheduler")
    [(_, message)] = _warnings_of(tm, ["get_lr"])
    assert message == "To get the last learning rate computed by the scheduler, please use `get_last_lr()`."


def test_the_optimizer_step_is_wrapped_once_and_still_runs_hooks():
    opt = _optimizer(tm)
    first = tm.optim.lr_scheduler.StepLR(opt, step_size=2)
    wrapped = opt.step
    tm.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    assert opt.step is wrapped and first.optimizer is opt
    events = []
    opt.register_step_post_hook(lambda o, a, k: events.append("post"))
    opt.step()
    assert events == ["post"] and opt._opt_called is True


# -- errors -------------------------------------------------------------------------------------

def _outcome(make):
    try:
        make()
    except Exception as error:  # the test compares the exception with PyTorch's
        return type(error).__name__, str(error).replace("torch.", "tensormodes.")
    return "ok", None


def _step_times(scheduler, times):
    for _ in range(times):
        scheduler.optimizer.step()
        scheduler.step()


ERRORS = {
    "not an optimizer": lambda S, o: S.StepLR("sgd", step_size=2),
    "constant factor": lambda S, o: S.ConstantLR(o, factor=1.5),
    "linear start": lambda S, o: S.LinearLR(o, start_factor=0.0),
    "linear end": lambda S, o: S.LinearLR(o, end_factor=1.5),
    "lambda count": lambda S, o: S.LambdaLR(o, [lambda e: 1.0]),
    "resume without initial_lr": lambda S, o: S.StepLR(o, step_size=2, last_epoch=3),
    "sequential empty": lambda S, o: S.SequentialLR(o, [], milestones=[]),
    "sequential milestones": lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2), S.StepLR(o, 3)], milestones=[]),
    "sequential plateau": lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2), S.ReduceLROnPlateau(o)], milestones=[2]),
    "sequential no optimizer": lambda S, o: S.SequentialLR(o, [object()], milestones=[]),
    "plateau factor": lambda S, o: S.ReduceLROnPlateau(o, factor=1.0),
    "plateau mode": lambda S, o: S.ReduceLROnPlateau(o, mode="lowest"),
    "plateau threshold mode": lambda S, o: S.ReduceLROnPlateau(o, threshold_mode="ratio"),
    "plateau min_lr count": lambda S, o: S.ReduceLROnPlateau(o, min_lr=[0.1]),
    "one cycle no steps": lambda S, o: S.OneCycleLR(o, max_lr=0.1),
    "one cycle total_steps": lambda S, o: S.OneCycleLR(o, max_lr=0.1, total_steps=0),
    "one cycle epochs": lambda S, o: S.OneCycleLR(o, max_lr=0.1, epochs=-1, steps_per_epoch=3),
    "one cycle steps_per_epoch": lambda S, o: S.OneCycleLR(o, max_lr=0.1, epochs=2, steps_per_epoch=2.5),
    "one cycle pct_start": lambda S, o: S.OneCycleLR(o, max_lr=0.1, total_steps=5, pct_start=1),
    "one cycle anneal": lambda S, o: S.OneCycleLR(o, max_lr=0.1, total_steps=5, anneal_strategy="exp"),
    "one cycle max_lr count": lambda S, o: S.OneCycleLR(o, max_lr=[0.1], total_steps=5),
    "one cycle stepped too far": lambda S, o: _step_times(S.OneCycleLR(o, max_lr=0.1, total_steps=2), 3),
}


@pytest.mark.torch
@pytest.mark.parametrize("case", ERRORS)
def test_errors_match_torch(torch, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _outcome(lambda: ERRORS[case](tm.optim.lr_scheduler, _optimizer(tm)))
        theirs = _outcome(lambda: ERRORS[case](torch.optim.lr_scheduler, _optimizer(torch)))
    assert ours == theirs and ours[0] != "ok"


@pytest.mark.torch
def test_errors_about_optimizers_match_torch(torch):
    outcomes = []
    for lib in (tm, torch):
        S = lib.optim.lr_scheduler
        outcomes.append([
            _outcome(lambda S=S, lib=lib: S.OneCycleLR(_optimizer(lib, "Adagrad"), max_lr=0.1, total_steps=5)),
            _outcome(lambda S=S, lib=lib: S.SequentialLR(_optimizer(lib), [S.StepLR(_optimizer(lib), 2)],
                                                         milestones=[])),
        ])
    # the second message names the other optimizer's repr, which differs between the libraries
    assert outcomes[0][0] == outcomes[1][0]
    assert outcomes[0][1][0] == outcomes[1][1][0] == "ValueError"
    assert outcomes[0][1][1].startswith("SequentialLR expects all schedulers to belong to the same optimizer, but "
                                        "got scheduler StepLR at index 0 has SGD (")


def test_errors_without_torch():
    S = tm.optim.lr_scheduler
    with pytest.raises(TypeError, match="^str is not an Optimizer$"):
        S.ExponentialLR("sgd", gamma=0.5)
    with pytest.raises(ValueError, match="^Constant multiplicative factor expected to be between 0 and 1.$"):
        S.ConstantLR(_optimizer(tm), factor=-0.1)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        S.CosineAnnealingLR(_optimizer(tm), T_max=3, last_epoch=0)
    with pytest.raises(ValueError, match="^Tried to step 3 times. The specified number of total steps is 2$"):
        _step_times(S.OneCycleLR(_optimizer(tm), max_lr=0.1, total_steps=2), 3)
    with pytest.raises(NotImplementedError):
        S.LRScheduler(_optimizer(tm))


# -- values worked out by hand (no PyTorch needed) ----------------------------------------------------

def _hand_sequence(make, steps, lr=1.0):
    opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=lr, momentum=0.5)
    scheduler = make(opt)
    lrs = [scheduler.get_last_lr()[0]]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    return lrs, opt


def test_step_multistep_exponential_by_hand():
    S = tm.optim.lr_scheduler
    assert _hand_sequence(lambda o: S.StepLR(o, step_size=2, gamma=0.5), 5)[0] == [1, 1, 0.5, 0.5, 0.25, 0.25]
    assert _hand_sequence(lambda o: S.MultiStepLR(o, milestones=[1, 3, 3], gamma=0.5), 4)[0] == \
        [1, 0.5, 0.5, 0.125, 0.125]
    assert _hand_sequence(lambda o: S.ExponentialLR(o, gamma=0.5), 3)[0] == [1, 0.5, 0.25, 0.125]


def test_constant_linear_lambda_by_hand():
    S = tm.optim.lr_scheduler
    assert _hand_sequence(lambda o: S.ConstantLR(o, factor=0.5, total_iters=2), 3)[0] == [0.5, 0.5, 1.0, 1.0]
    assert _hand_sequence(lambda o: S.LinearLR(o, start_factor=0.25, total_iters=3), 4)[0] == \
        pytest.approx([0.25, 0.5, 0.75, 1.0, 1.0], rel=1e-15)
    assert _hand_sequence(lambda o: S.LambdaLR(o, lambda e: e + 1), 2)[0] == [1, 2, 3]


def test_cosine_annealing_follows_the_closed_form_by_hand():
    lrs, _ = _hand_sequence(lambda o: tm.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.2), 8)
    closed = [0.2 + 0.8 * (1 + math.cos(math.pi * t / 4)) / 2 for t in range(9)]
    assert lrs == pytest.approx(closed, rel=1e-12, abs=1e-15)  # back up after T_max: no restart, it rises again


def test_sequential_by_hand():
    S = tm.optim.lr_scheduler
    lrs, _ = _hand_sequence(lambda o: S.SequentialLR(o, [S.ConstantLR(o, factor=0.1, total_iters=2),
                                                         S.ExponentialLR(o, gamma=0.5)], milestones=[2]), 4)
    assert lrs == [0.1, 0.1, 1.0, 0.5, 0.25]


def test_one_cycle_by_hand():
    lrs, opt = _hand_sequence(lambda o: tm.optim.lr_scheduler.OneCycleLR(
        o, max_lr=1.0, total_steps=5, pct_start=0.5, anneal_strategy="linear", div_factor=4.0,
        final_div_factor=5.0), 4)
    # up from 0.25 to 1.0 over steps 0..1.5, then down to 0.05 at step 4
    assert lrs == pytest.approx([0.25, 0.25 + 0.75 / 1.5, 1.0 - 0.95 * 0.5 / 2.5, 1.0 - 0.95 * 1.5 / 2.5, 0.05])
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)  # down to 0.85 at the peak, back up at the end
    assert opt.param_groups[0]["initial_lr"] == 0.25 and opt.param_groups[0]["max_lr"] == 1.0


def test_reduce_lr_on_plateau_by_hand():
    opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    scheduler = tm.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5, cooldown=1, min_lr=0.3)
    lrs = []
    for metric in [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5]:
        scheduler.step(metric)
        lrs.append(scheduler.get_last_lr()[0])
    # two bad epochs reduce; one cooldown epoch; then floor at min_lr 0.3
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.5, 0.3, 0.3, 0.3]
    assert scheduler.best == 0.5 and scheduler.in_cooldown is False


def test_reduce_lr_on_plateau_state_dict_round_trip():
    opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    scheduler = tm.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", patience=0)
    scheduler.step(2.0)
    scheduler.step(1.0)
    other = tm.optim.lr_scheduler.ReduceLROnPlateau(tm.optim.SGD([tm.nn.Parameter(tm.ones(1))]), mode="min")
    other.load_state_dict(scheduler.state_dict())
    assert (other.mode, other.best, other.mode_worse, other.last_epoch) == ("max", 2.0, -math.inf, 2)


def test_lambda_state_dict_keeps_callable_objects():
    class Factor:
        def __init__(self):
            self.scale = 1.0

        def __call__(self, epoch):
            return self.scale

    factor = Factor()
    opt = _optimizer(tm)
    scheduler = tm.optim.lr_scheduler.LambdaLR(opt, [factor, lambda e: 1.0])
    factor.scale = 0.5
    saved = scheduler.state_dict()
    assert saved["lr_lambdas"] == [{"scale": 0.5}, None]
    fresh = Factor()
    other = tm.optim.lr_scheduler.LambdaLR(_optimizer(tm), [fresh, lambda e: 1.0])
    other.load_state_dict(saved)
    assert fresh.scale == 0.5 and "lr_lambdas" in saved


# -- random schedules (hypothesis) ------------------------------------------------------------------

_fractions = st.floats(0.01, 1.0)
_SCHEDULES = st.one_of(
    st.tuples(st.just("StepLR"), st.fixed_dictionaries({"step_size": st.integers(1, 6), "gamma": _fractions})),
    st.tuples(st.just("MultiStepLR"), st.fixed_dictionaries(
        {"milestones": st.lists(st.integers(0, 25), max_size=5), "gamma": _fractions})),
    st.tuples(st.just("ExponentialLR"), st.fixed_dictionaries({"gamma": st.floats(0.5, 1.0)})),
    st.tuples(st.just("CosineAnnealingLR"), st.fixed_dictionaries(
        {"T_max": st.integers(1, 20), "eta_min": st.floats(0.0, 0.01)})),
    st.tuples(st.just("LinearLR"), st.fixed_dictionaries(
        {"start_factor": _fractions, "end_factor": st.floats(0.0, 1.0), "total_iters": st.integers(1, 10)})),
    st.tuples(st.just("ConstantLR"), st.fixed_dictionaries({"factor": _fractions, "total_iters": st.integers(0, 10)})),
    st.tuples(st.just("OneCycleLR"), st.fixed_dictionaries(
        {"max_lr": st.floats(0.01, 1.0), "total_steps": st.integers(25, 40), "pct_start": st.floats(0.05, 0.95),
         "anneal_strategy": st.sampled_from(["cos", "linear"]), "three_phase": st.booleans(),
         "div_factor": st.floats(1.0, 100.0), "final_div_factor": st.floats(1.0, 1e4)})),
)


def _random_run(lib, name, options, epochs):
    opt = _optimizer(lib)
    try:
        scheduler = getattr(lib.optim.lr_scheduler, name)(opt, **options)
        seen = [scheduler.get_last_lr()]
        for epoch in epochs:
            opt.step()
            scheduler.step() if epoch is None else scheduler.step(epoch)
            seen.append((scheduler.get_last_lr(), [g.get("momentum") for g in opt.param_groups]))
    except Exception as error:  # both libraries must fail alike
        return type(error).__name__, str(error)
    return seen


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(schedule=_SCHEDULES, epochs=st.lists(st.one_of(st.none(), st.none(), st.integers(0, 30)), min_size=1,
                                            max_size=24))
def test_random_schedules_match_torch_exactly(schedule, epochs):
    import torch

    name, options = schedule
    if name == "OneCycleLR":
        epochs = [None] * min(len(epochs), options["total_steps"])  # no closed form; at most total_steps steps
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # step(epoch) is deprecated in both
        assert _random_run(tm, name, options, epochs) == _random_run(torch, name, options, epochs)

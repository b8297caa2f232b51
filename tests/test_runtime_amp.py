"""Autocast (a TorchFunctionMode over PyTorch's CPU autocast lists), GradScaler on the CPU,
and the profiler built on TimingMode (issue 26 item 1)."""

from __future__ import annotations

import warnings

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.profiler import profile, record_function

# Each case: an expression over L (the library), F (its nn.functional) and g (a maker of
# tensors of one floating dtype), and its result dtype under CPU autocast with float32 and
# with bfloat16 inputs: the lists of PyTorch 2.13 seen from its behaviour.
LOW, FP32, KEEP = "low", "fp32", "keep"
CASES = {
    "L.mm(g(2, 2), g(2, 2))": LOW, "L.matmul(g(2, 2), g(2, 2))": LOW, "g(2, 2) @ g(2, 2)": LOW,
    "g(2, 2).mm(g(2, 2))": LOW, "L.bmm(g(1, 2, 2), g(1, 2, 2))": LOW,
    "L.addmm(g(2, 2), g(2, 2), g(2, 2))": LOW, "L.einsum('ij,jk->ik', g(2, 2), g(2, 2))": LOW,
    "F.conv1d(g(1, 1, 3), g(1, 1, 2))": LOW, "F.conv2d(g(1, 1, 3, 3), g(1, 1, 2, 2))": LOW,
    "F.conv_transpose2d(g(1, 1, 3, 3), g(1, 1, 2, 2))": LOW, "F.prelu(g(1, 2), g(1))": LOW,
    "F.scaled_dot_product_attention(g(1, 2, 2), g(1, 2, 2), g(1, 2, 2))": LOW,
    "L.mv(g(2, 2), g(2))": KEEP, "L.dot(g(2), g(2))": KEEP, "L.outer(g(2), g(2))": KEEP,
    "L.tensordot(g(2, 2), g(2, 2))": KEEP, "F.softmax(g(2), 0)": KEEP, "F.log_softmax(g(2), 0)": KEEP,
    "L.sum(g(2))": KEEP, "L.exp(g(2))": KEEP, "F.layer_norm(g(2, 2), (2,))": KEEP, "F.gelu(g(2))": KEEP,
    "F.max_pool2d(g(1, 1, 2, 2), 2)": KEEP, "F.pad(g(1, 1, 3), (1, 1))": KEEP,
    "L.prod(g(2))": FP32, "F.cross_entropy(g(2, 3), L.tensor([0, 1]))": FP32,
    "F.nll_loss(g(2, 3), L.tensor([0, 1]))": FP32, "F.mse_loss(g(2), g(2))": FP32, "F.l1_loss(g(2), g(2))": FP32,
    "F.binary_cross_entropy_with_logits(g(2), g(2))": FP32, "F.smooth_l1_loss(g(2), g(2))": FP32,
    "L.cdist(g(2, 2), g(2, 2))": FP32, "L.trace(g(2, 2))": FP32, "L.linalg.svd(g(2, 2))[0]": FP32,
    "F.pad(g(1, 1, 3), (1, 1), mode='reflect')": FP32, "F.pad(g(1, 1, 3, 3), (1, 1, 1, 1), mode='replicate')": FP32,
    "L.quantile(g(3), 0.5)": FP32,
}


def _result_dtypes(library, expression: str) -> tuple[str, str]:
    functional = library.nn.functional
    names = []
    for make in (lambda *s: library.ones(*s), lambda *s: library.ones(*s).bfloat16()):
        with library.autocast("cpu"):
            result = eval(expression, {"L": library, "F": functional, "g": make})
        names.append(str(result.dtype).split(".")[-1])
    return tuple(names)


EXPECTED = {LOW: ("bfloat16", "bfloat16"), FP32: ("float32", "float32"), KEEP: ("float32", "bfloat16")}


@pytest.mark.parametrize("expression", sorted(CASES))
def test_autocast_casts_as_pytorchs_cpu_lists(expression):
    assert _result_dtypes(tm, expression) == EXPECTED[CASES[expression]]


@pytest.mark.torch
@pytest.mark.parametrize("expression", sorted(CASES))
def test_autocast_lists_agree_with_torch(expression):
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _result_dtypes(torch, expression) == EXPECTED[CASES[expression]]


def test_autocast_linear_gives_bfloat16():
    with tm.autocast("cpu"):
        assert F.linear(tm.ones(1, 2), tm.ones(3, 2)).dtype is tm.bfloat16


def test_autocast_reaches_the_calls_composites_make():
    q = tm.ones(1, 2, 2)
    with tm.autocast("cpu"):
        # F.multi_head_attention_forward is a composite: its bmm is cast, as PyTorch's dispatcher casts it
        attention = F.multi_head_attention_forward(
            q, q, q, 2, 1, tm.ones(6, 2), tm.zeros(6), None, None, False, 0.0, tm.ones(2, 2), tm.zeros(2),
            need_weights=True)[1]
    assert attention.dtype is tm.bfloat16


def test_autocast_state_nesting_and_disabling():
    assert (tm.is_autocast_enabled("cpu"), tm.get_autocast_dtype("cpu"), tm.get_autocast_dtype("cuda")) == \
        (False, tm.bfloat16, tm.float16)
    a = tm.ones(2, 2)
    with tm.autocast("cpu", dtype=tm.float16):
        assert (tm.is_autocast_enabled("cpu"), tm.is_autocast_enabled(), tm.get_autocast_dtype("cpu")) == \
            (True, False, tm.float16)
        with tm.autocast("cpu", enabled=False):
            assert tm.is_autocast_enabled("cpu") is False and (a @ a).dtype is tm.float32
        with tm.autocast("cpu"):  # without dtype: the enclosing region's
            assert (a @ a).dtype is tm.float16
        assert (a @ a).dtype is tm.float16
    assert tm.is_autocast_enabled("cpu") is False and (a @ a).dtype is tm.float32


def test_autocast_keeps_float64_out_and_integers_and_flows_gradients():
    w = tm.ones(2, 2, requires_grad=True)
    with tm.autocast("cpu"):
        assert tm.mm(a := tm.ones(2, 2, dtype=tm.float64), a).dtype is tm.float64
        assert tm.mm(i := tm.ones(2, 2, dtype=tm.int64), i).dtype is tm.int64
        assert tm.mm(a32 := tm.ones(2, 2), a32, out=tm.empty(2, 2)).dtype is tm.float32
        y = tm.mm(w, w)
    assert y.dtype is tm.bfloat16
    y.float().sum().backward()
    assert w.grad.dtype is tm.float32 and w.grad.tolist() == [[4.0, 4.0], [4.0, 4.0]]


def test_autocast_decorator_and_warnings():
    @tm.autocast("cpu")
    def product(x):
        return x @ x

    assert product(tm.ones(1, 1)).dtype is tm.bfloat16
    with pytest.warns(UserWarning, match="^In CPU autocast, but the target dtype is not supported"):
        disabled = tm.autocast("cpu", dtype=tm.float32)
    with disabled:
        assert tm.is_autocast_enabled("cpu") is False
    with pytest.warns(UserWarning, match="^CUDA is not available or torch_xla is imported. Disabling autocast.$"):
        tm.autocast("cuda")
    with pytest.raises(ValueError, match="^Expected `device_type` of type `str`, got: `<class 'int'>`$"):
        tm.autocast(1)
    with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast"), tm.cpu.amp.autocast():
        assert tm.is_autocast_enabled("cpu") is True


def _linear_step(scaler, loss_factor: float = 1.0):
    layer = tm.nn.Linear(2, 1)
    with tm.no_grad():
        layer.weight.fill_(0.5)
        layer.bias.fill_(0.0)
    opt = tm.optim.SGD(layer.parameters(), lr=0.1)
    scaled = scaler.scale(layer(tm.ones(1, 2)).sum() * loss_factor)
    scaled.backward()
    return layer, opt, scaled


def test_grad_scaler_on_cpu_scales_unscales_and_steps():
    scaler = tm.amp.GradScaler("cpu")
    assert scaler.is_enabled() and scaler.get_scale() == 65536.0
    layer, opt, scaled = _linear_step(scaler)
    assert scaled.item() == 65536.0 and layer.weight.grad.tolist() == [[65536.0, 65536.0]]
    scaler.unscale_(opt)
    assert layer.weight.grad.tolist() == [[1.0, 1.0]]
    with pytest.raises(RuntimeError, match=r"^unscale_\(\) has already been called on this optimizer since the "
                                           r"last update\(\).$"):
        scaler.unscale_(opt)
    assert scaler.step(opt) is None
    assert layer.weight.tolist()[0] == pytest.approx([0.4, 0.4])
    scaler.update()
    assert scaler.get_scale() == 65536.0 and scaler.state_dict() == {
        "scale": 65536.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000, "_growth_tracker": 1}


def test_grad_scaler_skips_non_finite_steps_and_backs_off():
    scaler = tm.amp.GradScaler("cpu", growth_interval=1)
    layer, opt, _ = _linear_step(scaler, float("inf"))
    before = layer.weight.tolist()
    scaler.step(opt)
    assert layer.weight.tolist() == before
    scaler.update()
    assert scaler.get_scale() == 32768.0
    _, opt, _ = _linear_step(scaler)
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 65536.0  # grown after growth_interval=1 finite step
    scaler.update(new_scale=3.0)
    assert scaler.get_scale() == 3.0


def test_grad_scaler_default_is_disabled_without_cuda():
    with pytest.warns(UserWarning, match="^torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                                         "Disabling.$"):
        scaler = tm.amp.GradScaler()
    loss = tm.ones(())
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    with pytest.raises(AssertionError, match=r"^The growth factor must be > 1.0.$"):
        tm.amp.GradScaler("cpu", growth_factor=0.5)
    with pytest.raises(AssertionError, match="^Attempted update but _scale is None."):
        tm.amp.GradScaler("cpu").update()
    with pytest.raises(RuntimeError, match="^The source state dict is empty"):
        tm.amp.GradScaler("cpu").load_state_dict({})
    with pytest.raises(ValueError, match="^outputs must be a Tensor or an iterable of Tensors$"):
        tm.amp.GradScaler("cpu").scale(1.0)


@pytest.mark.torch
def test_grad_scaler_trajectory_matches_torch():
    import torch

    def run(library):
        library.manual_seed(0)
        layer = library.nn.Linear(3, 1)
        with library.no_grad():
            layer.weight.copy_(library.tensor([[0.1, -0.2, 0.3]]))
            layer.bias.fill_(0.05)
        opt = library.optim.SGD(layer.parameters(), lr=0.1)
        scaler = library.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
        scales = []
        for factor in (1.0, float("inf"), 1.0, 1.0, 1.0):
            opt.zero_grad()
            scaler.scale(layer(library.ones(2, 3)).sum() * factor).backward()
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
        return scales, layer.weight.detach().tolist(), scaler.state_dict()

    ours, theirs = run(tm), run(torch)
    assert ours[0] == theirs[0] and ours[2] == theirs[2]
    assert ours[1][0] == pytest.approx(theirs[1][0], abs=1e-6)


def test_profiler_rows_and_table():
    with profile() as prof:
        with record_function("forward"):
            y = tm.ones(2, 2) @ tm.ones(2, 2)
        y.sum()
        prof.step()
    events = {event.key: event for event in prof.key_averages()}
    assert sorted(events) == ["forward", "tensormodes.Tensor.matmul", "tensormodes.Tensor.sum", "tensormodes.ones"]
    assert (events["tensormodes.ones"].count, events["forward"].count, prof.step_num) == (2, 1, 1)
    assert events["forward"].cpu_time_total >= events["tensormodes.Tensor.matmul"].cpu_time_total
    assert events["forward"].self_cpu_time_total <= events["forward"].cpu_time_total
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    lines = table.splitlines()
    assert lines[0].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                "CPU", "time", "avg", "#", "of", "Calls"]
    assert lines[2].split()[0] == "forward" and lines[-1].startswith("Self CPU time total: ")
    with record_function("outside"):  # no profiler: nothing recorded, nothing raised
        pass

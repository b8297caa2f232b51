"""The showcase tools (meta execution, ``FlopCounterMode``, ``tensormodes trace``) on the patterns
real models use (issue 29): causal attention, factories without ``device=``, closures holding
submodules, ``ModuleList`` blocks, tied weights, tuple states. The models are in
``tests/real_models.py``; PyTorch is the oracle where it counts the same thing."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F

from .real_models import GPT_SOURCE, LSTM_SOURCE, define, script

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None


# -- 1. meta execution: composites make their tensors on the inputs' device ------------------

def test_causal_sdpa_runs_on_meta_inputs():
    q = tm.empty(2, 3, 5, 8, device="meta")
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert out.is_meta and out.shape == (2, 3, 5, 8)


def test_causal_sdpa_runs_under_the_meta_device_context():
    with tm.device("meta"):
        q = tm.empty(2, 3, 5, 8)
        out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert out.is_meta and out.shape == (2, 3, 5, 8)


META_COMPOSITES = [
    ("one_hot", lambda: F.one_hot(tm.zeros(3, dtype=tm.long, device="meta"), 5), (3, 5)),
    ("circular pad", lambda: F.pad(tm.empty(1, 2, 5, device="meta"), (2, 1), mode="circular"), (1, 2, 8)),
    ("init.eye_", lambda: tm.nn.init.eye_(tm.empty(2, 3, device="meta")), (2, 3)),
    ("init.dirac_", lambda: tm.nn.init.dirac_(tm.empty(2, 2, 3, device="meta")), (2, 2, 3)),
    ("embedding max_norm", lambda: F.embedding(tm.zeros(3, dtype=tm.long, device="meta"),
                                                tm.empty(5, 4, device="meta"), max_norm=1.0), (3, 4)),
    ("causal encoder", lambda: tm.nn.TransformerEncoder(
        tm.nn.TransformerEncoderLayer(8, 2, 16, device="meta"), 2, enable_nested_tensor=False)(
        tm.empty(3, 2, 8, device="meta"), is_causal=True,
        mask=tm.nn.Transformer.generate_square_subsequent_mask(3, device="meta")), (3, 2, 8)),
    ("dropout2d", lambda: F.dropout2d(tm.empty(2, 3, 4, 4, device="meta"), 0.5), (2, 3, 4, 4)),
    ("dropout1d", lambda: F.dropout1d(tm.empty(2, 3, 4, device="meta"), 0.5), (2, 3, 4)),
    ("unfold", lambda: F.unfold(tm.empty(2, 3, 8, 8, device="meta"), 2), (2, 12, 49)),
    ("fold", lambda: F.fold(tm.empty(2, 12, 49, device="meta"), (8, 8), 2), (2, 3, 8, 8)),
]


@pytest.mark.parametrize(("name", "call", "shape"), META_COMPOSITES, ids=[c[0] for c in META_COMPOSITES])
def test_composites_make_their_tensors_on_the_inputs_device(name, call, shape):
    out = call()
    assert out.is_meta and tuple(out.shape) == shape


def test_a_gpt_runs_on_meta_under_the_device_context():
    GPT = define(GPT_SOURCE, tm)["GPT"]
    with tm.device("meta"):
        model = GPT()
        idx = tm.zeros(2, 8, dtype=tm.long)
        logits, loss = model(idx, idx)
    loss.backward()
    assert logits.is_meta and logits.shape == (2, 8, 32) and loss.shape == ()
    assert model.tok.weight.grad.is_meta and model.tok.weight.grad.shape == (32, 16)


# -- tensormodes trace, through subprocess -------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]

GPT_TRAINING = """
    L.manual_seed(0)
    model = GPT()
    opt = L.optim.AdamW(model.parameters(), lr=1e-3)
    idx = L.randint(0, 32, (2, 8))
    for step in range(2):
        logits, loss = model(idx, targets=idx)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", round(loss.item(), 3))
"""

LSTM_TRAINING = """
    L.manual_seed(0)
    model = LanguageModel()
    opt = L.optim.SGD(model.parameters(), lr=0.1)
    idx = L.randint(0, 20, (3, 5))
    state = (L.zeros(2, 3, 12), L.zeros(2, 3, 12))
    for step in range(2):
        logits, state = model(idx, state)
        state = tuple(s.detach() for s in state)
        loss = L.nn.functional.cross_entropy(logits.reshape(-1, 20), idx.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", round(loss.item(), 3))
"""


def trace(tmp_path: Path, text: str, *argv: str, name: str = "script.py") -> subprocess.CompletedProcess:
    """``tensormodes trace`` on ``text`` written to ``tmp_path / name``."""
    path = tmp_path / name
    path.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "tensormodes", "trace", str(path), *argv], capture_output=True,
                          text=True, timeout=300, env=env, cwd=tmp_path)


def traced_report(tmp_path: Path, text: str, *flags: str) -> dict:
    """The ``--report`` document of a quiet run with ``flags`` (which must succeed)."""
    result = trace(tmp_path, text, *flags, "--quiet", "--report", str(tmp_path / "report.json"))
    assert result.returncode == 0, result.stderr
    return json.loads((tmp_path / "report.json").read_text())


# -- 2. --shapes on real models ---------------------------------------------------------------

def test_shapes_of_a_gpt_with_arange_positions_a_closure_a_module_list_and_keyword_arguments(tmp_path):
    rows = traced_report(tmp_path, script(GPT_SOURCE, GPT_TRAINING), "--shapes")["modes"]["shapes"]
    assert rows["error"] is None
    found = {row["module"]: (row["type"], row["output_shapes"], row["parameters"]) for row in rows["rows"]}
    assert found["(model)"] == ("GPT", [[2, 8, 32], []], 7232)  # the loss: targets came as a keyword
    assert found["pos"] == ("Embedding", [[8, 16]], 128)  # its input made by tm.arange(T), no device=
    assert found["blocks.1.fc"] == ("Linear", [[2, 8, 64]], 1088)  # called from the block's lambda
    assert found["blocks.0.attn"] == ("CausalSelfAttention", [[2, 8, 16]], 0)
    assert list(found)[:4] == ["(model)", "tok", "pos", "blocks.0"]


def test_shapes_of_an_lstm_language_model_called_with_a_tuple_state(tmp_path):
    result = trace(tmp_path, script(LSTM_SOURCE, LSTM_TRAINING), "--shapes")
    assert result.returncode == 0, result.stderr
    table = result.stderr[result.stderr.index("== shapes"):]
    assert table.splitlines()[:6] == [
        "== shapes of LanguageModel for inputs [3, 5], [2, 3, 12], [2, 3, 12] (computed on the meta device)",
        "module   type           output shape                        parameters",
        "-------  -------------  ----------------------------------  ----------",
        "(model)  LanguageModel  [3, 5, 20], [2, 3, 12], [2, 3, 12]       2,724",
        "embed    Embedding      [3, 5, 8]                                  160",
        "rnn      LSTM           [3, 5, 12], [2, 3, 12], [2, 3, 12]       2,304",
    ]


# -- 3. the --shapes probe changes no count ------------------------------------------------------

def test_the_shapes_probe_adds_nothing_to_flops_or_counts(tmp_path):
    text = script(GPT_SOURCE, GPT_TRAINING)
    alone = traced_report(tmp_path, text, "--flops", "--count")["modes"]
    probed = traced_report(tmp_path, text, "--flops", "--count", "--shapes")["modes"]
    assert probed["flops"] == alone["flops"] and probed["count"] == alone["count"]
    assert alone["flops"]["total"] == 1_277_952  # two steps; the flash attention counts 0, as PyTorch's


# -- 4. --nan stops only what is wrong ----------------------------------------------------------

NAN_CORRECT = """
    import math
    F = L.nn.functional
    q = L.randn(1, 2, 4, 8)
    mask = L.ones(4, 4, dtype=L.bool).tril()
    scores = (q @ q.transpose(-2, -1)).masked_fill(~mask, float("-inf"))  # the attention idiom
    weights = scores.softmax(-1)
    square = L.nn.Transformer.generate_square_subsequent_mask(4)
    attended = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    added = F.scaled_dot_product_attention(q, q, q, attn_mask=square)
    filled = L.full((2,), -math.inf) + L.tensor([1.0, 2.0])  # an Inf brought in stays
    print("ok", bool(L.isfinite(weights).all()), bool(L.allclose(attended, added)))
"""


@pytest.mark.parametrize("flags", [("--nan",), ("--nan", "--time"), ("--nan", "--count", "--flops")])
def test_nan_check_lets_correct_masking_code_run_with_any_other_flags(tmp_path, flags):
    result = trace(tmp_path, "import tensormodes as L\n" + textwrap.dedent(NAN_CORRECT), *flags)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok True True\n"


@pytest.mark.parametrize(("code", "message"), [
    ("L.tensor([1.0, 0.0]).div(L.tensor([0.0, 1.0]))", "tensormodes.Tensor.div produced Inf in its result"),
    ("L.tensor([1000.0]).exp()", "tensormodes.Tensor.exp produced Inf in its result"),
    ("L.tensor([0.0, 1.0]) / 0", "tensormodes.Tensor.div produced NaN and Inf in its result"),
    ("L.tensor([float('inf')]) - float('inf')", "tensormodes.Tensor.sub produced NaN in its result"),
])
def test_nan_check_flags_nan_always_and_inf_made_from_finite_inputs(tmp_path, code, message):
    result = trace(tmp_path, f"import tensormodes as L\nx = {code}\n", "--nan")
    assert result.returncode == 1
    assert f"FloatingPointError: {message} at " in result.stderr


def test_nan_check_lets_an_inf_in_through_an_argument():
    from tensormodes.modes import NanCheckMode

    with NanCheckMode():
        mask = tm.full((2, 2), float("-inf")).triu(diagonal=1)
        shifted = tm.tensor([float("inf"), 1.0]) + 1
    assert mask[0, 1].item() == float("-inf") and shifted[0].item() == float("inf")
    with pytest.raises(FloatingPointError, match="tensormodes.Tensor.exp produced Inf"):
        with NanCheckMode():
            tm.tensor([1000.0]).exp()


# -- 5. FLOPs per module: PyTorch's paths and totals ---------------------------------------------

GPT_MODULE_FLOPS = {
    "Global": 688_128, "GPT": 688_128, "GPT.head": 49_152,
    **{f"GPT.blocks.{i}{path}": flops for i in (0, 1) for path, flops in (
        ("", 319_488), (".attn", 122_880), (".attn.qkv", 73_728), (".attn.proj", 24_576), (".fc", 98_304),
        (".out", 98_304))},
}


def gpt_step_module_flops(library, counter_type, attention=None) -> dict:
    """FLOPs per module path of one GPT training step (forward and backward)."""
    library.manual_seed(0)
    model = define(GPT_SOURCE, library)["GPT"]()
    idx = library.randint(0, 32, (2, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with attention if attention is not None else contextlib.nullcontext(), counter_type(display=False) as counter:
            model(idx, targets=idx)[1].backward()
    return {path: sum(per_op.values()) for path, per_op in counter.get_flop_counts().items()}


# With the default attention backends both libraries run the CPU flash kernel, which PyTorch's
# counter does not count: the attention's two products drop out of each block.
GPT_MODULE_FLOPS_FLASH = {**GPT_MODULE_FLOPS, "Global": 638_976, "GPT": 638_976,
                          **{f"GPT.blocks.{i}{path}": flops for i in (0, 1)
                             for path, flops in (("", 294_912), (".attn", 98_304))}}


def test_flops_per_module_follow_module_list_paths():
    from tensormodes.nn.attention import SDPBackend, sdpa_kernel
    from tensormodes.utils.flop_counter import FlopCounterMode

    assert gpt_step_module_flops(tm, FlopCounterMode, sdpa_kernel(SDPBackend.MATH)) == GPT_MODULE_FLOPS
    assert gpt_step_module_flops(tm, FlopCounterMode) == GPT_MODULE_FLOPS_FLASH


@pytest.mark.torch
def test_flops_per_module_equal_pytorchs_with_the_default_attention_path():
    from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode

    assert gpt_step_module_flops(torch, TorchFlopCounterMode) == GPT_MODULE_FLOPS_FLASH


@pytest.mark.torch
def test_flops_per_module_equal_pytorchs_with_the_math_attention_path():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode

    theirs = gpt_step_module_flops(torch, TorchFlopCounterMode, sdpa_kernel(SDPBackend.MATH))
    assert theirs == GPT_MODULE_FLOPS


def test_the_flops_table_nests_blocks_under_the_model(tmp_path):
    result = trace(tmp_path, script(GPT_SOURCE, GPT_TRAINING), "--flops")
    assert result.returncode == 0, result.stderr
    modules = [line.split()[0] for line in result.stderr.splitlines() if line.lstrip().startswith("GPT")]
    assert modules == ["GPT", "GPT.blocks.0", "GPT.blocks.1", "GPT.head"]


# -- 6. FLOPs PyTorch does not count ----------------------------------------------------------------

def pooled_cnn_step_flops(library, counter_type) -> int:
    """A ResNet-style head: convolution, adaptive average pooling to 1 x 1 and to 2 x 2, linear."""
    library.manual_seed(0)
    conv, fc = library.nn.Conv2d(3, 4, 3), library.nn.Linear(4 * 5, 10)
    x = library.randn(2, 3, 8, 8)
    functional = library.nn.functional
    with counter_type(display=False) as counter:
        features = conv(x)
        pooled = functional.adaptive_avg_pool2d(features, (1, 1)).flatten(1)
        grid = functional.adaptive_avg_pool2d(features, (2, 2)).flatten(1)
        fc(library.cat([pooled, grid], 1)).sum().backward()
    return counter.get_total_flops()


_NOT_PYTORCHS_OPS_YET = (
    "PyTorch runs im2col/col2im here (no FLOP formula: 0); the dispatch level still sees this library's forms (a "
    "convolution with one-hot kernels), which count, until those ops are declared in _ops")


# PyTorch runs _adaptive_avg_pool2d_backward here (no FLOP formula: 0), as this library now does
def test_adaptive_average_pooling_counts_no_flops_forward_or_backward():
    from tensormodes.utils.flop_counter import FlopCounterMode

    # the convolution's forward and weight gradient (x needs none), the linear's three products
    assert pooled_cnn_step_flops(tm, FlopCounterMode) == 2 * (2 * 2 * 108 * 36) + 3 * (2 * 2 * 20 * 10) == 33_504


@pytest.mark.torch
def test_adaptive_average_pooling_flops_equal_pytorchs():
    from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode

    assert pooled_cnn_step_flops(torch, TorchFlopCounterMode) == 33_504


@pytest.mark.xfail(strict=True, reason=_NOT_PYTORCHS_OPS_YET)
@pytest.mark.parametrize("call", [lambda x: F.unfold(x, 2), lambda x: F.fold(F.unfold(x, 2), (8, 8), 2)],
                         ids=["unfold", "fold"])
def test_unfold_and_fold_count_no_flops_as_in_pytorch(call):
    from tensormodes.utils.flop_counter import FlopCounterMode

    x = tm.randn(2, 3, 8, 8, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        call(x).sum().backward()
    assert counter.get_total_flops() == 0 and x.grad.shape == x.shape


def test_the_table_says_what_is_counted_beyond_pytorchs_cpu_counter():
    from tensormodes.utils.flop_counter import FlopCounterMode

    lstm, q = tm.nn.LSTM(4, 3), tm.randn(1, 2, 3, 4)
    with FlopCounterMode(display=False) as counter:
        lstm(tm.randn(5, 2, 4))
    # The LSTM runs PyTorch's fused layer op (mkldnn_rnn_layer), uncounted by both counters.
    assert counter.get_total_flops() == 0 and counter.counted_beyond_pytorch() == []
    with FlopCounterMode(display=False) as counter:
        F.scaled_dot_product_attention(q, q, q)
    # Attention reaches the dispatch level as PyTorch's CPU flash kernel, which both counters count
    # as 0, and nothing is counted beyond PyTorch.
    assert counter.counted_beyond_pytorch() == [] and counter.get_total_flops() == 0
    with FlopCounterMode(display=False) as plain:
        tm.randn(2, 3) @ tm.randn(3, 2)
    assert plain.counted_beyond_pytorch() == [] and "fused" not in plain.get_table()


# -- 9. the command's robustness --------------------------------------------------------------------

def test_ops_in_threads_the_script_starts_are_traced(tmp_path):
    text = """\
        import threading
        import tensormodes as tm
        x = tm.ones(2)

        def work():
            for _ in range(200):
                x + 1

        class Worker(threading.Thread):  # run() overridden: still traced
            def run(self):
                work()

        threads = [threading.Thread(target=work), Worker()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        x + 1
    """
    counts = traced_report(tmp_path, textwrap.dedent(text), "--count")["modes"]["count"]
    assert counts["tensormodes.Tensor.add"] == 401


def test_a_mode_the_script_never_exits_ends_with_it(tmp_path):
    text = "import tensormodes as tm\nfrom tensormodes.modes import LoggingMode\nLoggingMode().__enter__()\n" \
           "x = tm.ones(2) + 1\nprint('done')\n"
    result = trace(tmp_path, text, "--count")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n" and "Traceback" not in result.stderr
    assert "tensormodes.Tensor.add      1" in result.stderr


def test_an_unwritable_report_path_is_refused_before_the_script_runs(tmp_path):
    result = trace(tmp_path, "print('ran')\n", "--count", "--report", str(tmp_path / "missing" / "report.json"))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"tensormodes trace: can't write the report to '{tmp_path / 'missing' / 'report.json'}':"
                             " No such file or directory\n")
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("change", ["sys.stderr = None", "sys.stderr.close()"])
def test_reports_reach_standard_error_whatever_the_script_did_to_it(tmp_path, change):
    result = trace(tmp_path, f"import sys\nimport tensormodes as tm\ntm.ones(1)\n{change}\nprint('out')\n", "--count")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "out\n"
    assert "== calls per function" in result.stderr and "tensormodes.ones" in result.stderr


def test_a_directory_with_a_main_module_runs_as_python_runs_it(tmp_path):
    package = tmp_path / "app"
    package.mkdir()
    (package / "helper.py").write_text("VALUE = 5\n")
    (package / "__main__.py").write_text("import sys, helper\nimport tensormodes as tm\n"
                                         "print(helper.VALUE, tm.ones(2).sum().item(), sys.argv[1:])\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-m", "tensormodes", "trace", str(package), "--count", "--", "-v"],
                            capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "5 2.0 ['-v']\n" and "tensormodes.ones" in result.stderr


def test_version():
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-m", "tensormodes", "--version"], capture_output=True, text=True,
                            timeout=300, env=env)
    assert result.returncode == 0 and result.stdout == f"tensormodes {tm.__version__}\n"


@pytest.mark.torch
def test_a_script_importing_torch_gets_a_hint(tmp_path):
    result = trace(tmp_path, "import torch\nprint(torch.ones(2).sum().item())\n", "--count", "--flops")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[-1].startswith(
        "tensormodes trace: no tensormodes calls were seen; the script imports torch")
    with_ours = trace(tmp_path, "import torch\nimport tensormodes as tm\ntm.ones(1)\n", "--count")
    assert "no tensormodes calls were seen" not in with_ours.stderr


# -- 7. readable get_flop_counts() keys ------------------------------------------------------------

def test_flop_count_keys_are_aten_packets_as_pytorchs():
    from tensormodes.utils.flop_counter import FlopCounterMode

    x, w = tm.ones(8, 4), tm.ones(3, 4, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        F.linear(x, w).sum().backward()
    counts = counter.get_flop_counts()
    # F.linear without a bias is t and mm; the weight's gradient another mm
    assert repr(counts) == "{'Global': {aten.mm: 384}}"
    assert counts["Global"][tm.ops.aten.mm] == 384
    key = next(iter(counts["Global"]))
    assert key is tm.ops.aten.mm and str(key) == "aten.mm" and key(x, w.t()).shape == (8, 3)


# -- 8. --count readability, and README's sample output from a real run ------------------------------

def _sample_lines(text: str) -> list[str]:
    """Lines with the times (which vary from run to run) blanked."""
    return [re.sub(r"\(\d+\.\d s\)", "(_ s)", line) for line in text.splitlines()]


def test_readmes_trace_sample_is_what_a_run_prints(tmp_path):
    pytest.importorskip("sklearn")  # the example's data (the [examples] extra)
    readme = (ROOT / "README.md").read_text()
    command = "$ tensormodes trace examples/train_digits.py --flops --count -- --epochs 3\n"
    start = readme.index(command) + len(command)
    sample = _sample_lines(readme[start:readme.index("```", start)])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    run = subprocess.run([sys.executable, "-m", "tensormodes", "trace", str(ROOT / "examples" / "train_digits.py"),
                          "--flops", "--count", "--", "--epochs", "3"], capture_output=True, text=True, timeout=300,
                         env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    printed = _sample_lines(run.stdout + run.stderr)
    position = 0
    for line in sample:  # each shown line is printed, in this order; "..." stands for lines left out
        if line.strip() == "...":
            continue
        prefix = line[:-3] if line.endswith(", ...") else None  # a list cut short
        found = next((i for i in range(position, len(printed))
                      if (printed[i].startswith(prefix) if prefix is not None else printed[i] == line)), None)
        assert found is not None, f"README's sample line not printed (in order): {line!r}"
        position = found + 1


def test_count_puts_property_reads_in_their_own_section(tmp_path):
    text = """\
        import tensormodes as tm
        w = tm.ones(3, requires_grad=True)
        for _ in range(5):
            loss = (w * 2).sum()
            loss.backward()
            with tm.no_grad():
                w -= 0.1 * w.grad
            w.grad = None
    """
    result = trace(tmp_path, textwrap.dedent(text), "--count")
    assert result.returncode == 0, result.stderr
    calls, reads = result.stderr.split("== calls per function\n")[1].split("\n\n")
    assert "__get__" not in calls and "__set__" not in calls and "tensormodes.Tensor.mul" in calls
    assert reads.splitlines()[0].startswith("tensor attribute read or set")
    assert "tensormodes.Tensor.grad.__set__" in reads


# -- done when: every flag at once on a GPT and on an LSTM language model ---------------------------

# FLOPs of two training steps (the LSTM's: its decoder's only, as PyTorch's counter gives, whose CPU
# LSTM runs a fused layer op without a formula)
@pytest.mark.parametrize(("source", "body", "model", "flops"), [
    (GPT_SOURCE, GPT_TRAINING, "GPT", 1_277_952), (LSTM_SOURCE, LSTM_TRAINING, "LanguageModel", 43_200)],
    ids=["gpt", "lstm"])
def test_every_flag_at_once_on_real_models(tmp_path, source, body, model, flops):
    report = traced_report(tmp_path, script(source, body), "--flops", "--count", "--nan", "--shapes", "--graph",
                           str(tmp_path / "graph.dot"))
    modes = report["modes"]
    assert report["status"] == "finished"
    assert modes["flops"]["total"] == flops
    assert modes["graph"] == {"path": str(tmp_path / "graph.dot"), "model": model, "error": None}
    assert modes["shapes"]["model"] == model and modes["shapes"]["error"] is None
    assert (tmp_path / "graph.dot").read_text().startswith("digraph")

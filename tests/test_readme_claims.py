"""The README says only what is true: its "Not supported" list against the real namespace, and
each sentence claiming "every" / "all" backed by a named test."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import tensormodes as tm

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.S | re.M)
    assert match, f"README has no section {title!r}"
    return match.group(1)


NOT_SUPPORTED = _section("Not supported")

# How the list spells names: a prefix and the object it stands for.
_PREFIXES = {"tm": tm, "Tensor": tm.Tensor, "nn": tm.nn, "F": tm.nn.functional, "optim": tm.optim,
             "linalg": tm.linalg, "distributions": tm.distributions, "special": tm.special,
             "utils.data": tm.utils.data}
_NAME = re.compile(r"`((?:tm|Tensor|nn|F|optim|linalg|distributions|special|utils\.data)\.[A-Za-z_][\w.]*)"
                   r"(?:\([^`]*\))?`")  # a call's arguments are not part of the name


def _expect_raises(kind, call):
    def check():
        with pytest.raises(kind):
            call()
        return True
    return check


# Names the list mentions that do exist: stubs (with what they do) and the alternatives it points to.
PRESENT = {
    "tm.compile": lambda: tm.compile(tm.nn.Linear(1, 1)).__class__ is tm.nn.Linear,
    "tm.jit.script": _expect_raises(NotImplementedError, lambda: tm.jit.script(tm.nn.Linear(1, 1))),
    "tm.jit.trace": _expect_raises(NotImplementedError, lambda: tm.jit.trace(tm.nn.Linear(1, 1), tm.ones(1))),
    "tm.onnx.export": _expect_raises(NotImplementedError, lambda: tm.onnx.export(tm.nn.Linear(1, 1), tm.ones(1),
                                                                                  "m.onnx")),
    "tm.distributed.init_process_group": _expect_raises(RuntimeError,
                                                        lambda: tm.distributed.init_process_group("gloo")),
    "nn.parallel.DistributedDataParallel": _expect_raises(
        ValueError, lambda: tm.nn.parallel.DistributedDataParallel(tm.nn.Linear(1, 1))),
}


def _listed_names() -> list[str]:
    names = _NAME.findall(NOT_SUPPORTED)
    assert len(names) > 40  # (the section is parsed: the lists shrink as gaps are filled)
    return names


def _resolve(name: str):
    """The object ``name`` stands for, or None when some part of it does not exist."""
    prefix = "utils.data" if name.startswith("utils.data.") else name.split(".")[0]
    obj = _PREFIXES[prefix]
    for part in name[len(prefix) + 1:].split("."):
        try:
            obj = getattr(obj, part)
        except (AttributeError, ImportError):
            return None
    return obj


def test_every_name_listed_as_missing_is_missing():
    present = [name for name in _listed_names() if name not in PRESENT and _resolve(name) is not None]
    assert not present, f"README's 'Not supported' lists names that exist now: {present}"


@pytest.mark.parametrize("name", sorted(PRESENT))
def test_the_stubs_it_names_behave_as_it_says(name):
    assert name in _listed_names()
    assert PRESENT[name]()


def test_devices_other_than_cpu_and_meta_raise():
    for device in ("cuda", "mps"):
        with pytest.raises(NotImplementedError):
            tm.ones(1, device=device)


def test_the_distributions_it_names_are_all_there_are():
    bullet = re.search(r"\*\*Distributions:\*\* only (.*?); no", NOT_SUPPORTED, re.S).group(1)
    listed = set(re.findall(r"`(\w+)`", bullet))
    classes = {name for name in dir(tm.distributions)
               if isinstance(getattr(tm.distributions, name), type)
               and issubclass(getattr(tm.distributions, name), tm.distributions.Distribution)}
    assert classes - {"Distribution", "ExponentialFamily"} == listed


# -- against PyTorch: the names are PyTorch's, and the lists that say so are complete -------------

def _torch_object(torch, name):
    prefix = "utils.data" if name.startswith("utils.data.") else name.split(".")[0]
    obj = {"tm": torch, "Tensor": torch.Tensor, "nn": torch.nn, "F": torch.nn.functional, "optim": torch.optim,
           "linalg": torch.linalg, "distributions": torch.distributions, "special": torch.special,
           "utils.data": torch.utils.data}[prefix]
    for part in name[len(prefix) + 1:].split("."):
        obj = getattr(obj, part, None)
    return obj


@pytest.mark.torch
def test_every_listed_name_is_pytorchs():
    torch = pytest.importorskip("torch")
    importlib.import_module("torch.distributions.transforms")  # submodules the list names
    importlib.import_module("torch.nn.utils.prune")

    unknown = [name for name in _listed_names() if _torch_object(torch, name) is None]
    assert not unknown, f"not PyTorch 2.13 names: {unknown}"


def _missing_names(torch_names, ours) -> set[str]:
    return {name for name in torch_names if not hasattr(ours, name)}


@pytest.mark.torch
def test_the_lists_of_missing_layers_optimizers_and_linalg_functions_are_complete():
    torch = pytest.importorskip("torch")
    listed = set(_listed_names())
    layers = _missing_names(torch.nn.modules.__all__, tm.nn)
    assert {f"nn.{name}" for name in layers} <= listed, sorted(layers)
    optimizers = {name for name in dir(torch.optim) if isinstance(getattr(torch.optim, name), type)
                  and issubclass(getattr(torch.optim, name), torch.optim.Optimizer)}
    assert {f"optim.{name}" for name in _missing_names(optimizers, tm.optim)} <= listed
    linalg = {name for name in dir(torch.linalg) if not name.startswith("_") and callable(getattr(torch.linalg, name))
              and name != "Tensor"}
    assert {f"linalg.{name}" for name in _missing_names(linalg, tm.linalg)} <= listed
    for name in ("IterDataPipe", "MapDataPipe"):
        assert hasattr(torch.utils.data, name) and not hasattr(tm.utils.data, name)


@pytest.mark.torch
def test_the_count_of_missing_top_level_functions_is_about_right():
    torch = pytest.importorskip("torch")
    claim = re.search(r"about (\d+) of PyTorch's (\d+) public top-level functions are absent", NOT_SUPPORTED)
    about, total = int(claim.group(1)), int(claim.group(2))
    functions = [name for name in dir(torch) if not name.startswith("_")
                 and type(getattr(torch, name, None)).__name__ in ("builtin_function_or_method", "function")]
    missing = [name for name in functions if not hasattr(tm, name)]
    assert len(functions) == total
    assert abs(len(missing) - about) <= about // 10, f"{len(missing)} missing now: update the README"


# -- "every" and "all" ---------------------------------------------------------------------------------

# A sentence of the README saying "every" or "all" either is not a claim about coverage (PLAIN) or
# names the test that enforces it (a fragment of its line -> "file::test").
BACKED = {
    "`DebugMode` | every aten call below autograd":
        "test_cli.py::test_dispatch_log_shows_aten_calls_under_the_users_line_and_backward_under_the_forward_line",
    "`record_hash=True` hashes every output": "test_debug_mode.py::test_output_hashes_are_stable_values",
    "objects that intercept *every* public API": "test_overrides.py::test_tensor_like_overrides_every_function",
    "a meta rule for every op, proven": "test_meta_validation.py::test_every_meta_rule_agrees_with_recorded_executions",
    "checks that every": "test_readme_claims.py::test_every_name_listed_as_missing_is_missing",
    "`LoggingMode(dedupe=True)` | every call": "test_ready_modes.py::test_logging_an_mlp_step_forward_and_backward",
    "Every public function, method, operator and property":
        "test_overrides.py::test_tensor_like_overrides_every_property_accessor",
    "A mode intercepts every call": "test_overrides.py::test_factories_are_overridable_through_modes",
    "Every op declares its gradient formula": "test_gradients.py::test_gradient_matches_finite_differences",
    "on every differentiable op's samples": "test_gradients.py::test_gradient_matches_finite_differences",
    "against torch for every op": "test_saved_tensors.py::"
                                  "test_backward_after_an_input_is_modified_in_place_matches_torch",
    "every MiB of data carries a checksum": "test_serialization.py::test_every_single_byte_corruption_is_detected",
    "time every public call with `TimingMode`": "test_overrides.py::test_tensor_like_overrides_every_function",
    "Recorded: every call with a Proxy": "test_fx.py::test_factories_random_ops_and_leaves_are_call_function_nodes",
    "Generated code is valid whatever the names: every name":
        "test_fx.py::test_adversarial_placeholder_and_node_names",
    "strides but no data; every op has a": "test_meta_rules.py::test_meta_rule_coverage",
    "`tests/test_meta_rules.py`: every op's samples": "test_meta_rules.py::test_meta_rule_matches_real_execution",
    "every call reaches PyTorch's *dispatch level*": "test_aten_identity.py::"
                                                     "test_every_overload_has_pytorchs_schema_and_tags",
    "see every op *after* autograd": "test_dispatch_level.py::"
                                     "test_every_sampled_op_gives_eager_results_under_a_pass_through_dispatch_mode",
    "every op's aten name, overload": "test_aten_identity.py::test_every_overload_has_pytorchs_schema_and_tags",
    "every sampled op gives eager's results": "test_dispatch_level.py::"
                                              "test_every_sampled_op_gives_eager_results_under_a_pass_through_dispatch_mode",
    "every op runs its meta rule": "test_fake_tensor.py::"
                                   "test_the_op_tables_first_samples_under_the_mode_match_real_runs",
    "runs `fn` fake and lists every aten": "test_fake_tensor.py::test_missing_ops_of_a_mode_forward_and_backward",
    "declines — all of them in one run": "test_fake_tensor.py::test_missing_ops_of_a_mode_forward_and_backward",
    "runs random calls of every op": "test_differential_fuzz.py::test_random_calls_agree_with_torch",
    "lists every mismatch class it meets": "test_differential_fuzz.py::test_compare_reports_each_kind_of_difference",
    "profilers and debuggers see every op": "test_generated_source.py::test_profilers_give_each_op_its_own_row",
}
PLAIN = [
    "hold no input element at all",  # "at all": an idiom
]


def test_every_every_and_all_is_backed_by_a_test_or_plain():
    unbacked = [line for line in README.splitlines() if re.search(r"\b(every\w*|all)\b", line, re.I)
                and not any(fragment in line for fragment in (*BACKED, *PLAIN))]
    assert not unbacked, "README lines claiming every/all without a test in BACKED:\n" + "\n".join(unbacked)
    unused = [fragment for fragment in (*BACKED, *PLAIN) if fragment not in README]
    assert not unused, f"fragments no longer in the README: {unused}"


@pytest.mark.parametrize("fragment", sorted(BACKED))
def test_the_backing_tests_exist(fragment):
    file, _, name = BACKED[fragment].partition("::")
    tree = ast.parse((ROOT / "tests" / file).read_text())
    assert name in {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}, BACKED[fragment]


def test_the_op_counts_in_the_readme_are_the_tables():
    from tensormodes._ops import OPS

    public = [opdef for opdef in OPS.values() if opdef.function or opdef.method]
    special = sum(1 for opdef in public if opdef.namespace == "tensormodes.special")
    claim = (f"{len(public)} public ops ({special} of them `torch.special`'s names, and {len(OPS) - len(public)} "
             f"more ATen-only ones the dispatch level reaches)")
    assert claim in " ".join(README.split())

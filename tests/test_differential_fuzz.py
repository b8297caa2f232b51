"""The differential fuzzer (tests/differential.py) in the suite: random calls of every op, run by
tensormodes and PyTorch, must agree — or differ in a class listed as deliberate (``KNOWN``) or
as an open bug (``OPEN_BUGS``: none are left; an entry must still differ from PyTorch, and fails
the suite until it is fixed or justified).

The budget is small by default (numbered cases, so CI sees the same ones every run); set
``TENSORMODES_FUZZ_EXAMPLES`` for a larger run, or survey every class with
``python -m tests.differential --examples N --seed S``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import tensormodes as tm

from . import differential
from .differential import OPEN_BUGS, Case, cases, compare, drawable, survey, unlisted_mismatches
from .torch_oracle import assert_same_outcome

EXAMPLES = int(os.environ.get("TENSORMODES_FUZZ_EXAMPLES", "1000"))

pytestmark = pytest.mark.torch


def test_random_calls_agree_with_torch():
    # One run over the whole budget, reporting every unlisted class at once (with its first case)
    # instead of stopping at the first.
    unlisted = unlisted_mismatches(survey(EXAMPLES))
    assert not unlisted, f"{len(unlisted)} unlisted mismatch classes:\n" + "\n".join(unlisted)


def test_open_bugs_still_differ():
    """Each open bug's repro still differs from PyTorch: a fixed bug fails here until it is removed
    from OPEN_BUGS (kept as data so that the fuzz test can skip its class)."""
    for key, bug in sorted(OPEN_BUGS.items()):
        try:
            assert_same_outcome(bug.text, rtol=None, atol=None)
        except AssertionError:
            continue
        pytest.fail(f"{key} no longer differs from PyTorch: remove it from OPEN_BUGS")


def test_no_open_bugs_are_left():
    # Every class the fuzzer has found is fixed (each with a literal test, tests/test_fuzz_sweep*.py)
    # or kept on purpose with its reason in KNOWN: an entry here is work left, not a listing.
    assert not OPEN_BUGS, f"open bugs left: {sorted(OPEN_BUGS)}"


def test_listed_differences_name_real_ops():
    from tensormodes._ops import OPS

    from .differential import KNOWN

    for name, _ in list(KNOWN) + list(OPEN_BUGS):
        assert name == "*" or name in OPS, name


def test_cases_cover_the_edges():
    # The strategy really draws what the fuzzer promises: zero-size and 0-dim tensors, reduced
    # precision, complex, booleans and Python scalars.
    seen = set()

    @settings(max_examples=400, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(cases())
    def look(case):
        for value in _leaves(case.args) + _leaves(list(case.kwargs.values())):
            if isinstance(value, np.ndarray):
                seen.add(str(value.dtype))
                seen.add("0-size" if value.size == 0 else "0-dim" if value.ndim == 0 else "n-dim")
                if value.dtype.kind == "f" and np.isnan(value.astype(np.float32)).any():
                    seen.add("nan")
            elif isinstance(value, (bool, int, float, complex)):
                seen.add(f"python {type(value).__name__}")

    look()
    for index in range(400):  # the numbered cases the fuzz test runs come from the same builder
        look.hypothesis.inner_test(differential.seeded_case(index))
    expected = {"bool", "int8", "uint8", "int64", "float16", "bfloat16", "float32", "float64", "complex64",
                "complex128", "0-size", "0-dim", "n-dim", "nan", "python float", "python int"}
    assert expected <= seen, expected - seen


def _leaves(values):
    out = []
    for value in values:
        if isinstance(value, (list, tuple)):
            out.extend(_leaves(value))
        else:
            out.append(value)
    return out


@pytest.mark.parametrize("kind", ["values", "dtype", "shape", "raises", "gradient", "computes"])
def test_compare_reports_each_kind_of_difference(kind, monkeypatch):
    # A planted difference of each kind is found: the comparison itself cannot pass everything.
    opdef = {op.name: op for _, op, _ in drawable()}["neg"]
    x = np.array([1.0, 2.0], np.float32)
    case = Case("neg-planted", opdef, (x.astype(bool) if kind == "computes" else x,), {})
    original = tm.neg
    planted = {
        "values": lambda x: original(x) + 1,
        "dtype": lambda x: original(x).double(),
        "shape": lambda x: original(x).reshape(2, 1),
        "raises": lambda x: (_ for _ in ()).throw(RuntimeError("planted")),
        "gradient": lambda x: original(x) + (x - x.detach()),  # same values, gradient 0 instead of -1
        "computes": lambda x: original(x.float()),  # torch refuses to negate a bool tensor
    }[kind]
    real = differential.callable_for
    monkeypatch.setattr(differential, "callable_for",
                        lambda op, library: planted if library is tm else real(op, library))
    mismatch = compare(case)
    assert mismatch is not None
    expected = {"values": "result values", "dtype": "result dtype", "shape": "result shape", "raises": "raises",
                "gradient": "gradient values", "computes": "computes"}[kind]
    assert mismatch.kind == expected, mismatch


def test_listed_differences_cover_only_their_cases():
    from .differential import KNOWN, Mismatch, is_listed

    polygamma = {op.name: op for _, op, _ in drawable()}["polygamma"]
    at_pole = Case("polygamma-0", polygamma, (1, np.array([-2.0, 0.5])), {})
    regular = Case("polygamma-0", polygamma, (1, np.array([0.25, 0.5])), {})
    values = Mismatch("result values", "planted")
    assert KNOWN[("polygamma", "result values")].applies(at_pole)
    assert is_listed(at_pole, values) and not is_listed(regular, values)
    assert not is_listed(at_pole, Mismatch("result dtype", "planted"))
    assert is_listed(regular, Mismatch("complex32", "planted"))  # listed for every op

"""The second harness of the meta rules (issue 14, item 7): RecordingMode records real
executions of every op sample and error sample of the op table, and ``validate`` replays the
records on meta tensors rebuilt from their metadata (exact strides and storage offsets, where
tests/test_meta_rules.py moves its inputs with ``.to("meta")``).

Every op's own call must agree with its meta rule; ops without a rule are counted as not
covered (tests/test_meta_rules.py::test_meta_rule_coverage fails on them). The calls those
ops' bodies make are validated too and printed in the coverage line.
"""

from __future__ import annotations

import tensormodes as tm
from tensormodes._ops import OPS
from tensormodes.meta import OUTCOMES, RecordingMode, validate

from .op_samples import callable_for, materialize, tm_maker
from .test_meta_rules import meta_applicable


def _record_samples():
    """``(records, op_of)``: the records of every sample, and the op each top-level record samples."""
    records, op_of = [], {}
    for name, opdef in sorted(OPS.items()):
        if not meta_applicable(opdef):
            continue
        function = callable_for(opdef, tm)
        for sample in (*opdef.samples, *opdef.errors):
            args, kwargs = materialize(sample, tm_maker)
            start = len(records)
            with RecordingMode() as rec:
                try:
                    function(*args, **kwargs)
                except Exception:  # noqa: BLE001 - error samples are recorded too
                    pass
            if rec.records:
                op_of[start] = name
            records.extend(rec.records)
    return records, op_of


def _public_names(opdef) -> set[str]:
    names = {f"tensormodes.Tensor.{name}" for name in (opdef.method, opdef.inplace, *(d.name for d in opdef.dunders))
             if name}
    if opdef.function:
        names.add(f"{opdef.namespace}.{opdef.function}")
    return names


def test_every_meta_rule_agrees_with_recorded_executions():
    records, op_of = _record_samples()
    report = validate(records)
    applicable = {name for name, opdef in OPS.items() if meta_applicable(opdef)}
    with_rule = {name for name in applicable if OPS[name].meta is not None}
    # A record is an op's own call (its sample's top-level record) or a call of a public name of an op.
    op_by_name = {public: name for name in applicable for public in _public_names(OPS[name])}
    failing = [m for m in report.mismatches if op_of.get(m.index, op_by_name.get(m.op)) in with_rule]
    others = [m for m in report.mismatches if m not in failing]
    print(f"\nmeta validation: {len(records)} records of {len(applicable)} ops, {len(with_rule)} with a meta rule "
          f"({len(applicable) - len(with_rule)} not covered); "
          + ", ".join(f"{outcome} {report.total(outcome)}" for outcome in OUTCOMES))
    for mismatch in others:
        print(f"not covered: {mismatch.text()}")
    assert not failing, "\n".join(m.text() for m in failing)


def test_records_of_every_sampled_op_are_made():
    records, op_of = _record_samples()
    sampled = set(op_of.values())
    # ATen-only ops (``_ops/dispatch_forms.py``) have no public callable for RecordingMode to record:
    # test_meta_rules checks their rules against their samples.
    missing = sorted(name for name, opdef in OPS.items()
                     if meta_applicable(opdef) and (opdef.samples or opdef.errors) and name not in sampled
                     and (opdef.function or opdef.method))
    assert not missing

"""The ``out=`` overloads of decomposed ops (issue 25 §1): derived from the functional
decomposition as PyTorch's ``out_wrapper`` (compute, resize ``out``, copy), so that the tables
hold PyTorch's keys for the overloads the op table declares. Literal expectations (PyTorch
2.13's) and, when torch is installed, its tables and traces."""

from __future__ import annotations

import functools
import warnings

import pytest

import tensormodes as tm
from tensormodes._decomp import core_aten_decompositions, decomposition_table, get_decompositions
from tensormodes.fx.experimental.proxy_tensor import make_fx

from .test_make_fx import SAMPLES, _targets

aten = tm.ops.aten

# Overloads of decomposed packets that PyTorch's table holds (its packet registration gives them
# the same function) and this one does not: the functional decompositions here do not cover them.
ABSENT_FROM_OUR_TABLE = {"aten.arange.start_step", "aten.count_nonzero.dim_IntList", "aten.squeeze.dims",
                         "aten.sum.IntList_out", "aten.sum.dim_IntList", "aten.xlogy.OutScalar_Other",
                         "aten.xlogy.OutScalar_Self", "aten.xlogy.Scalar_Other", "aten.xlogy.Scalar_Self"}


def _out_overloads():
    return sorted((op for op in decomposition_table if op._kind == "out"), key=str)


def test_tables_hold_out_overloads():
    table = get_decompositions([aten.addmm, aten.dot, aten.stack])
    assert sorted(str(k) for k in table) == ["aten.addmm.default", "aten.addmm.out", "aten.dot.default",
                                             "aten.dot.out", "aten.stack.default", "aten.stack.out"]
    core = core_aten_decompositions()
    # PyTorch's core set names addmm's and arange's functional overloads only; ones is registered alone
    assert aten.dot.out in core and aten.addmm.out not in core and aten.arange.out not in core
    assert aten.arange.out in decomposition_table and aten.ones.out not in decomposition_table


def test_an_out_decomposition_traces_as_pytorchs():
    def f(a, b, c, o):
        return aten.addmm.out(a, b, c, out=o)

    gm = make_fx(f, decomposition_table=get_decompositions([aten.addmm]))(
        tm.ones(3), tm.ones(2, 4), tm.ones(4, 3), tm.empty(2, 3))
    assert _targets(gm) == ["aten.mm.default", "aten.mul.Tensor", "aten.mul.Tensor", "aten.add.Tensor",
                            "aten.copy_.default"]
    # an out to resize: PyTorch records aten.resize_.default before the copy; resize_ is a method here
    gm = make_fx(f, decomposition_table=get_decompositions([aten.addmm]))(
        tm.ones(3), tm.ones(2, 4), tm.ones(4, 3), tm.empty(0))
    assert _targets(gm)[-1] == "aten.copy_.default" and "aten.resize_.default" not in _targets(gm)
    gm = make_fx(lambda a, o: aten.sum.out(a, out=o), decomposition_table=get_decompositions([aten.sum]))(
        tm.ones(3, 3), tm.empty(()))
    assert _targets(gm) == ["aten.sum.IntList_out"]  # PyTorch's own sum.out decomposition


@pytest.mark.parametrize("overload", _out_overloads(), ids=str)
def test_out_decomposition_matches_the_out_kernel(overload):
    functional = getattr(overload.overloadpacket, overload._functional_name)
    decomposition = decomposition_table[overload]
    names = {a.name for a in overload._schema.arguments}
    for args, kwargs in SAMPLES[str(functional)]:
        kwargs = {k: v for k, v in kwargs.items() if k in names}  # (a factory's out= takes no dtype)
        expected = functional(*args, **kwargs)
        for start in (tm.empty(0, dtype=expected.dtype), tm.zeros(expected.shape, dtype=expected.dtype)):
            out = start.clone()
            got = decomposition(*args, **kwargs, out=out)
            if got is NotImplemented:
                continue
            assert got is out
            kernel_out = overload(*args, **kwargs, out=start.clone())
            tm.testing.assert_close(out, kernel_out, equal_nan=True)


def test_out_decomposition_resizes_warns_and_refuses_unsafe_casts():
    decomposition = decomposition_table[aten.dot.out]
    out = tm.zeros(2)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized since it had shape"):
        decomposition(tm.ones(3), tm.ones(3), out=out)
    assert out.shape == () and out.item() == 3.0
    out = tm.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out is resized silently
        decomposition(tm.ones(3), tm.ones(3), out=out)
    with pytest.raises(RuntimeError, match="Attempting to cast from tensormodes.float32 to out tensor with dtype "
                                           "tensormodes.int64, but this can't be cast because it is not safe!"):
        decomposition(tm.ones(3), tm.ones(3), out=tm.empty(0, dtype=tm.int64))


@pytest.mark.torch
def test_table_keys_are_pytorchs_for_the_declared_overloads():
    from torch._decomp import core_aten_decompositions as torch_core
    from torch._decomp import decomposition_table as torch_table

    theirs, their_core = {str(k) for k in torch_table}, {str(k) for k in torch_core()}
    declared = {str(getattr(op.overloadpacket, name)) for op in decomposition_table
                for name in op.overloadpacket.overloads()}
    ours = {str(k) for k in decomposition_table}
    assert {name for name in declared & theirs if name not in ours} == ABSENT_FROM_OUR_TABLE
    outs = {str(op) for op in _out_overloads()}
    assert outs <= theirs
    assert {name for name in outs if name in their_core} == {str(k) for k in core_aten_decompositions()} & outs


@pytest.mark.torch
@pytest.mark.parametrize("name", ["aten.addmm.out", "aten.dot.out", "aten.stack.out", "aten.sum.out",
                                  "aten.nan_to_num.out"])
def test_out_decompositions_record_pytorchs_ops(name):
    import numpy as np
    import torch
    from torch._decomp import decomposition_table as torch_table
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    overload = next(op for op in decomposition_table if str(op) == name)
    functional = getattr(overload.overloadpacket, overload._functional_name)
    theirs_op = getattr(getattr(torch.ops.aten, overload.overloadpacket.__name__), overload._overloadname)

    def to_torch(value):
        if isinstance(value, tm.Tensor):
            return torch.from_numpy(np.array(value.numpy()))
        if isinstance(value, (list, tuple)):
            return type(value)(to_torch(v) for v in value)
        return value

    args, kwargs = SAMPLES[str(functional)][0]
    ours = make_fx(functools.partial(decomposition_table[overload], *args, **kwargs, out=tm.empty(0,
                                                                                              dtype=tm.float64)))()
    theirs = torch_make_fx(functools.partial(torch_table[theirs_op], *to_torch(args), **kwargs,
                                             out=torch.empty(0, dtype=torch.float64)))()
    # (their out of no elements is resized by aten.resize_, not an aten op here: a tensor method)
    assert _targets(ours) == [t for t in _targets(theirs) if not t.startswith("<class") and t != "aten.resize_.default"]

"""Table-driven tests: every op declares samples, runs them, and (with torch
installed) agrees with PyTorch on values, dtype and shape."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes._ops import OPS

from .op_samples import OPAQUE_OUTPUTS, all_samples, callable_for, materialize, tm_maker, torch_maker

SAMPLES = list(all_samples())
# Ops whose results are random (declared random=True): compared by shape and dtype only.
RANDOM_OPS = {name for name, opdef in OPS.items() if opdef.random}


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_declares_samples(name):
    assert OPS[name].samples, f"op {name!r} declares no samples: add some to its @op declaration"


@pytest.mark.parametrize("case, opdef, sample", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_sample_runs(case, opdef, sample):
    args, kwargs = materialize(sample, tm_maker)
    result = callable_for(opdef, tm)(*args, **kwargs)
    for r in _flatten(result):
        if isinstance(r, tm.Tensor):
            assert r.dtype in (tm.bool, tm.uint8, tm.int8, tm.int16, tm.int32, tm.int64, tm.float16,
                               tm.bfloat16, tm.float32, tm.float64, tm.complex64, tm.complex128)


def _flatten(result):
    if isinstance(result, (tuple, list)):
        for r in result:
            yield from _flatten(r)
    else:
        yield result


def _to_numpy(value):
    import torch
    if isinstance(value, torch.Tensor):
        value = value.detach()
        if value.dtype == torch.bfloat16:
            return value.float().numpy(force=True), "bfloat16"
        return value.numpy(force=True), str(value.dtype).split(".")[1]
    if isinstance(value, tm.Tensor):
        name = repr(value.dtype).split(".")[1]
        data = value._data
        return (data.astype(np.float32) if name == "bfloat16" else data), name
    return value, None


@pytest.mark.torch
@pytest.mark.parametrize("case, opdef, sample", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_matches_torch(case, opdef, sample):
    import torch
    tm_args, tm_kwargs = materialize(sample, tm_maker)
    torch_args, torch_kwargs = materialize(sample, torch_maker)
    ours = callable_for(opdef, tm)(*tm_args, **tm_kwargs)
    theirs = callable_for(opdef, torch)(*torch_args, **torch_kwargs)
    if opdef.name == "setitem":
        ours, theirs = tm_args[0], torch_args[0]
    ours_flat, theirs_flat = list(_flatten(ours)), list(_flatten(theirs))
    assert len(ours_flat) == len(theirs_flat)
    opaque = OPAQUE_OUTPUTS.get(opdef.name, ())
    for index, (o, t) in enumerate(zip(ours_flat, theirs_flat)):
        o_value, o_dtype = _to_numpy(o)
        t_value, t_dtype = _to_numpy(t)
        assert o_dtype == t_dtype, f"dtype {o_dtype} != torch's {t_dtype}"
        if index in opaque:
            continue
        if o_dtype is None:
            if isinstance(t, (torch.dtype,)):
                assert repr(o).split(".")[1] == str(t).split(".")[1]
            else:
                assert o == t
            continue
        assert o_value.shape == t_value.shape
        if opdef.name not in RANDOM_OPS:
            tol = 1e-2 if o_dtype in ("float16", "bfloat16") else 1e-5
            np.testing.assert_allclose(o_value, t_value, rtol=tol, atol=tol, equal_nan=True)


def test_methods_are_generated_on_first_access_without_a_getattr():
    # CPython only specialises attribute reads (t._data, on every call) on classes without
    # __getattr__, so methods not generated yet are placeholders in the class instead.
    assert "__getattr__" not in vars(tm.Tensor) and "__getattr__" not in vars(type(tm.Tensor))
    fresh = ("import tensormodes as tm; before = type(vars(tm.Tensor)['cosh']).__name__; tm.ones(1).cosh(); "
             "print(before, type(vars(tm.Tensor)['cosh']).__name__)")
    shown = subprocess.run([sys.executable, "-c", fresh], capture_output=True, text=True, check=True).stdout
    assert shown.split() == ["_LazyAttribute", "function"]
    t = tm.ones(2)
    assert "cosh" in dir(t) and t.cosh().tolist() == tm.cosh(t).tolist()
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'cosine'"):
        getattr(t, "cosine")  # noqa: B009 - the attribute read under test
    with pytest.raises(AttributeError, match="type object 'Tensor' has no attribute 'cosine'"):
        getattr(tm.Tensor, "cosine")  # noqa: B009


def test_threads_generating_one_callable_at_once_register_it_once():
    # Fresh interpreter: a method, a function and a linalg function nobody has used yet (nor
    # introspection, which builds everything), reached by many threads together.
    code = """
import sys, threading, tensormodes as tm
sys.setswitchinterval(1e-6)  # switch threads as often as possible: builds overlap
from tensormodes._overrides import dispatch as _dispatch
t, start = tm.ones(2), threading.Barrier(8)
def use(i):
    start.wait()
    t.sinh()
    tm.cosh(t)
    if i % 2:
        _dispatch.build_everything()
threads = [threading.Thread(target=use, args=(i,)) for i in range(8)]
for thread in threads: thread.start()
for thread in threads: thread.join()
for namespace, name in ((tm.Tensor, 'sinh'), (tm, 'cosh'), (tm.Tensor, 'tanh'), (tm, 'tan')):
    print(sum(1 for f in _dispatch.OVERRIDABLE[namespace] if f.__name__ == name))
"""
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert shown.split() == ["1", "1", "1", "1"]


PACKAGE = Path(tm.__file__).resolve().parent
# The namespaces a gradient formula reaches through ``common.ops``, by the attributes before the name.
_NAMESPACES = {(): "tensormodes", ("linalg",): "tensormodes.linalg", ("nn", "functional"): "tensormodes.nn.functional",
               ("fft",): "tensormodes.fft", ("autograd",): "tensormodes.autograd",
               ("special",): "tensormodes.special"}


def _public_names(namespace: str) -> set[str]:
    """The public functions of ``namespace``: those the op table declares there, and the rest of
    its public API (``tm.is_grad_enabled``, ``F``'s composites)."""
    declared = {opdef.function for opdef in OPS.values() if opdef.namespace == namespace and opdef.function}
    module = {"tensormodes": tm, "tensormodes.linalg": tm.linalg, "tensormodes.nn.functional": F,
              "tensormodes.fft": tm.fft, "tensormodes.autograd": tm.autograd,
              "tensormodes.special": tm.special}[namespace]
    return declared | set(module.__all__)


def unknown_public_ops(source: str) -> list[str]:
    """``ops.<...>.<name>`` uses in ``source`` (a module importing ``ops`` from ``_ops.common``)
    that name no public function of their namespace."""
    tree = ast.parse(source)
    if not any(isinstance(node, ast.ImportFrom) and (node.module or "").endswith("common")
               and any(alias.name == "ops" for alias in node.names) for node in ast.walk(tree)):
        return []
    problems = []

    def chain_of(node) -> list[str] | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        return parts[::-1] if isinstance(node, ast.Name) and node.id == "ops" else None

    def visit(node) -> None:
        chain = chain_of(node) if isinstance(node, ast.Attribute) else None
        if chain is None:
            for child in ast.iter_child_nodes(node):
                visit(child)
            return
        if chain == ["ops", "aten"]:  # the namespace itself, bound to a name (``aten = ops.ops.aten``)
            return
        *path, name = chain
        if path[:2] == ["ops", "aten"]:  # an ATen overload (``ops.ops.aten.slice.Tensor``), checked as such
            if len(path) != 3 or not hasattr(getattr(tm.ops.aten, path[2], None), name):
                problems.append(f"line {node.lineno}: ops.{'.'.join(chain)}")
            return
        if path == ["_C"]:
            if not hasattr(tm._C, name):
                problems.append(f"line {node.lineno}: ops.{'.'.join(chain)}")
            return
        namespace = _NAMESPACES.get(tuple(path))
        if namespace is None or name not in _public_names(namespace):
            problems.append(f"line {node.lineno}: ops.{'.'.join(chain)}")

    visit(tree)
    return problems


def test_checked_public_op_lookups_name_public_functions():
    # Gradient formulas call public functions through ``common.ops`` (generated above the kernels,
    # looked up at call time): a misspelt name would fail only when its backward ran.
    sources = {str(path.relative_to(PACKAGE)): path.read_text() for path in sorted(PACKAGE.rglob("*.py"))}
    assert "ops.linalg.svd(" in sources["_ops/linalg.py"]  # the scan sees the formulas' lookups
    problems = {path: unknown_public_ops(source) for path, source in sources.items()}
    assert {path: found for path, found in problems.items() if found} == {}


def test_unknown_public_op_lookups_are_found():
    source = ("from .common import ops\n\n"
              "def _grad(grad):\n    return ops.catt([grad]), ops.linalg.inverse(grad), ops.cat\n")
    assert unknown_public_ops(source) == ["line 4: ops.catt", "line 4: ops.linalg.inverse"]
    aten = ("from .common import ops\n\n"
            "ops.ops.aten.slice.Tensor, ops.ops.aten.slice.Tenser, ops._C._DisableTorchDispatch\n")
    assert unknown_public_ops(aten) == ["line 3: ops.ops.aten.slice.Tenser"]
    assert unknown_public_ops(source.replace("from .common import ops", "ops = object()")) == []

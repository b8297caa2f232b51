"""Public namespaces hold what they declare (``__all__``, derived from the op table and the
modules' own declarations) and their submodules: no import leftovers (``tm.annotations``,
``F.math``) a user could mistake for API."""

from __future__ import annotations

import types

import pytest

import tensormodes as tm
import tensormodes.fx
import tensormodes.linalg
import tensormodes.modes
import tensormodes.nn
import tensormodes.nn.functional as F
import tensormodes.optim
import tensormodes.special
import tensormodes.utils.data

NAMESPACES = [tm, F, tm.linalg, tm.special, tm.fft, tm.nn, tm.optim, tm.fx, tm.modes, tm.utils, tm.utils.data]


@pytest.mark.parametrize("namespace", NAMESPACES, ids=lambda m: m.__name__)
def test_no_stray_public_names(namespace):
    declared = set(namespace.__all__)
    strays = sorted(name for name, value in vars(namespace).items()
                    if not name.startswith("_") and name not in declared
                    and not (isinstance(value, types.ModuleType) and value.__name__.startswith(namespace.__name__)))
    assert strays == []


def test_every_declared_name_exists():
    for namespace in NAMESPACES:
        missing = [name for name in namespace.__all__ if not hasattr(namespace, name)]
        assert missing == [], namespace.__name__


def test_op_table_functions_are_declared_in_their_namespace():
    from tensormodes._ops import OPS

    for opdef in OPS.values():
        if opdef.function and not opdef.function.startswith("_") and opdef.namespace in (
                "tensormodes", "tensormodes.linalg", "tensormodes.special", "tensormodes.nn.functional",
                "tensormodes.fft"):
            module = {"tensormodes": tm, "tensormodes.linalg": tm.linalg, "tensormodes.special": tm.special,
                      "tensormodes.nn.functional": F, "tensormodes.fft": tm.fft}
            assert opdef.function in module[opdef.namespace].__all__, (opdef.namespace, opdef.function)

"""Shared fixtures: every test must leave the protocol's state as it found it."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tensormodes._overrides import dispatch as _dispatch

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None


@pytest.fixture(autouse=True)
def no_leaked_state():
    """Fail a test that leaves a mode, a disabled flag, a changed default dtype or grad mode off behind."""
    assert _dispatch.get_state() is None, "a test started with leaked dispatch state"
    assert tm.get_default_dtype() is tm.float32
    assert tm.is_grad_enabled() and not tm.is_inference_mode_enabled()
    yield
    leaked = _dispatch.get_state()
    _dispatch.set_state(None)
    default = tm.get_default_dtype()
    tm.set_default_dtype(tm.float32)
    grad, inference = tm.is_grad_enabled(), tm.is_inference_mode_enabled()
    tm.set_grad_enabled(True)
    assert leaked is None, f"test leaked dispatch state: modes={leaked.modes}, scopes={leaked.scopes}"
    assert default is tm.float32, f"test leaked default dtype {default}"
    assert grad and not inference, f"test leaked grad mode: grad enabled {grad}, inference mode {inference}"


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    doctest_namespace["tm"] = tm
    doctest_namespace["np"] = np


def pytest_collection_modifyitems(config, items):
    skip_torch = pytest.mark.skip(reason="torch is not installed (optional cross-reference oracle)")
    for item in items:
        if "torch" in item.keywords and torch is None:
            item.add_marker(skip_torch)

"""Anomaly detection (``torch.autograd.detect_anomaly`` / ``set_detect_anomaly``): PyTorch's NaN check
of each backward node's gradients, the forward traceback of a failing node, the process-wide state
and its restoration."""

from __future__ import annotations

import sys
import warnings

import pytest

import tensormodes as tm
from tensormodes._autograd import anomaly_mode, nodes

NAN_MESSAGE = "Function 'MulBackward0' returned nan values in its 0th output."
ENABLED_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                   "enabled for debugging.")


def _nan_backward(library):
    """A backward whose ``MulBackward0`` makes NaN (0 * inf), from a forward on this function's line."""
    x = library.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt() * 0  # the forward line the traceback shows
    (y / y.detach()).sum().backward()


def _run_recording(library, body):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            body()
        except Exception as error:  # noqa: BLE001 - the error is the result
            return error, [str(w.message) for w in caught if w.category is UserWarning]
    return None, [str(w.message) for w in caught if w.category is UserWarning]


def test_a_nan_gradient_is_reported_with_the_forward_call_that_made_the_node():
    def body():
        with tm.autograd.detect_anomaly():
            _nan_backward(tm)

    error, messages = _run_recording(tm, body)
    assert type(error) is RuntimeError and str(error) == NAN_MESSAGE
    assert messages[0] == ENABLED_WARNING
    assert messages[1].startswith("Error detected in MulBackward0. Traceback of forward call that caused the error:\n")
    assert "y = x.sqrt() * 0  # the forward line the traceback shows" in messages[1]
    assert "in _nan_backward" in messages[1] and "tensormodes" not in messages[1].split("\n", 1)[1]
    assert not tm.is_anomaly_enabled()


def test_check_nan_false_lets_nan_through_and_off_checks_nothing():
    with tm.autograd.set_detect_anomaly(True, check_nan=False):
        assert tm.is_anomaly_enabled() and not tm.is_anomaly_check_nan_enabled()
        _nan_backward(tm)
    assert not tm.is_anomaly_enabled() and tm.is_anomaly_check_nan_enabled()
    _nan_backward(tm)


def test_an_error_in_a_backward_is_reported_and_propagates_unchanged():
    class Failing(tm.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("boom")

    x = tm.ones(2, requires_grad=True)

    def body():
        with tm.autograd.detect_anomaly():
            out = Failing.apply(x).sum()
            tm.autograd.grad(out, x)

    error, messages = _run_recording(tm, body)
    assert type(error) is ValueError and str(error) == "boom"
    assert messages[1].startswith("Error detected in FailingBackward. Traceback of forward call")
    assert "out = Failing.apply(x).sum()" in messages[1]
    assert x.grad is None and not tm.is_anomaly_enabled()


def test_a_node_made_before_detection_has_no_forward_information():
    x = tm.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt() * 0
    loss = (y / y.detach()).sum()

    def body():
        with tm.autograd.set_detect_anomaly(True):
            loss.backward()

    error, messages = _run_recording(tm, body)
    assert str(error) == NAN_MESSAGE
    assert messages == ["Error detected in MulBackward0. No forward pass information available. Enable detect "
                        "anomaly during forward pass for more information."]


def test_set_detect_anomaly_acts_at_once_and_restores_as_a_context_manager():
    tm.autograd.set_detect_anomaly(True)
    try:
        assert tm.is_anomaly_enabled()
        with tm.autograd.set_detect_anomaly(False):
            assert not tm.is_anomaly_enabled()
        assert tm.is_anomaly_enabled()
    finally:
        tm.autograd.set_detect_anomaly(False)
    assert not tm.is_anomaly_enabled()
    with pytest.raises(KeyError), tm.autograd.set_detect_anomaly(True):
        raise KeyError("inside")
    assert not tm.is_anomaly_enabled()


def test_off_costs_nothing_the_node_numbering_is_the_plain_counter_again():
    counter = nodes.next_sequence_nr
    with tm.autograd.set_detect_anomaly(True):
        x = tm.ones(2, requires_grad=True)
        (x * 2).sum()
        numbering = [m for name, m in sys.modules.items() if name.startswith("tensormodes.")
                     and getattr(m, "next_sequence_nr", None) is not None]
        assert all(m.next_sequence_nr is not counter for m in numbering)
        assert anomaly_mode._FORWARD_TRACES
    assert all(m.next_sequence_nr is counter for m in numbering)
    assert not anomaly_mode._FORWARD_TRACES


def test_set_anomaly_enabled_takes_bools_only():
    with pytest.raises(TypeError, match=r"set_anomaly_enabled\(\): argument 'enabled' \(position 1\) must be bool, "
                                        "not int"):
        tm.set_anomaly_enabled(1)
    assert not tm.is_anomaly_enabled()


@pytest.mark.torch
def test_reports_are_pytorchs():
    import torch

    def run(library):
        def body():
            with library.autograd.detect_anomaly():
                _nan_backward(library)

        error, messages = _run_recording(library, body)
        # PyTorch's warning ends with the C++ source it came from; the Python part is compared
        return type(error), str(error), [m.split(" (Triggered internally")[0].rstrip() for m in messages]

    ours, theirs = run(tm), run(torch)
    assert ours[:2] == theirs[:2]
    assert ours[2][0] == theirs[2][0]
    assert ours[2][1] == theirs[2][1]

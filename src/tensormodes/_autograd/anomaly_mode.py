"""Anomaly detection for the backward pass (PyTorch's ``torch.autograd.detect_anomaly``).

While it is on, every backward node remembers where the forward call that made it came from
(the user's frames), and the engine checks each node's gradients for NaN. When a node fails,
or returns NaN, a warning names the node and shows that forward traceback, then the error goes
on. The state is process-wide, as PyTorch's.

Nothing is paid while it is off: the node constructors' sequence-number function is swapped
for one that also records the stack only while it is on (see ``_swap_sequence_numbers``), and
the engine reads one flag per node.

>>> import tensormodes as tm
>>> x = tm.tensor([0.0, 1.0], requires_grad=True)
>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     with tm.autograd.detect_anomaly():
...         y = x.sqrt() * 0
...         try:
...             (y / y.detach()).sum().backward()
...         except RuntimeError as error:
...             print(error)
Function 'MulBackward0' returned nan values in its 0th output.
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from collections.abc import Callable

import numpy as np

from . import nodes

__all__ = ["ANOMALY", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
           "report_failed_node", "check_gradients"]


class _AnomalyState:
    __slots__ = ("enabled", "check_nan")

    def __init__(self) -> None:
        self.enabled = False
        self.check_nan = True


ANOMALY = _AnomalyState()

_count = nodes.next_sequence_nr  # the one counter every node constructor numbers from
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_KEPT = 1 << 16  # forward traces kept: the newest nodes' (the ones a failing backward runs)
_FORWARD_TRACES: dict[int, traceback.StackSummary] = {}


def _traced_sequence_nr() -> int:
    """A node's sequence number, its creator's stack remembered (frames of this library left out:
    the innermost frame shown is the user's call, as in PyTorch's traceback)."""
    number = _count()
    frames = [frame for frame in traceback.extract_stack(sys._getframe(1))
              if not frame.filename.startswith((_PACKAGE, "<tensormodes"))]
    _FORWARD_TRACES[number] = traceback.StackSummary.from_list(frames)
    if len(_FORWARD_TRACES) > _KEPT:
        del _FORWARD_TRACES[next(iter(_FORWARD_TRACES))]
    return number


def _swap_sequence_numbers(old: Callable, new: Callable) -> None:
    """Point every module of the package that numbers nodes (``from .nodes import
    next_sequence_nr``) at ``new``."""
    for name, module in list(sys.modules.items()):
        if (name == "tensormodes" or name.startswith("tensormodes.")) and \
                getattr(module, "next_sequence_nr", None) is old:
            module.next_sequence_nr = new


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for the whole process (``torch.set_anomaly_enabled``).

    >>> import tensormodes as tm
    >>> tm.set_anomaly_enabled(True); tm.is_anomaly_enabled()
    True
    >>> tm.set_anomaly_enabled(False); tm.is_anomaly_enabled()
    False
    """
    for position, (name, value) in enumerate((("enabled", enabled), ("check_nan", check_nan)), 1):
        if not isinstance(value, bool):
            raise TypeError(f"set_anomaly_enabled(): argument '{name}' (position {position}) must be bool, not "
                            f"{type(value).__name__}")
    if enabled and not ANOMALY.enabled:
        _swap_sequence_numbers(_count, _traced_sequence_nr)
    elif not enabled and ANOMALY.enabled:
        _swap_sequence_numbers(_traced_sequence_nr, _count)
        _FORWARD_TRACES.clear()
    ANOMALY.enabled, ANOMALY.check_nan = enabled, check_nan


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (``torch.is_anomaly_enabled``).

    >>> import tensormodes as tm
    >>> tm.is_anomaly_enabled()
    False
    """
    return ANOMALY.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks gradients for NaN (``torch.is_anomaly_check_nan_enabled``;
    True by default, also while detection is off).

    >>> import tensormodes as tm
    >>> tm.is_anomaly_check_nan_enabled()
    True
    """
    return ANOMALY.check_nan


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the innermost caller outside this library (the user's ``backward()``)."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith((_PACKAGE, "<tensormodes")):
        frame, level = frame.f_back, level + 1
    return level


def report_failed_node(node) -> None:
    """Warn that ``node`` failed in the backward pass, with the forward traceback that made it."""
    trace = _FORWARD_TRACES.get(node._sequence_nr)
    if trace is None:
        message = (f"Error detected in {node.name()}. No forward pass information available. Enable detect "
                   "anomaly during forward pass for more information.")
    else:
        message = f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n" + \
            "".join(trace.format())
    warnings.warn(message, UserWarning, stacklevel=_user_stacklevel())


def check_gradients(node, results) -> None:
    """PyTorch's NaN check of a node's gradients (one per input, None where none flows), when asked for."""
    if not ANOMALY.check_nan:
        return
    for index, grad in enumerate(results or ()):
        data = getattr(grad, "_data", None)
        # (kind V: the half types of ml_dtypes; meta arrays hold no values)
        if type(data) is np.ndarray and data.dtype.kind in "fcV" and np.isnan(data).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {index}th output.")

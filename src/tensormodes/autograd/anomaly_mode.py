"""``torch.autograd.anomaly_mode``: context managers that turn anomaly detection on for the
backward pass (see ``tensormodes._autograd.anomaly_mode`` for what it checks).

>>> import tensormodes as tm
>>> with tm.autograd.set_detect_anomaly(True):
...     tm.is_anomaly_enabled()
True
>>> tm.is_anomaly_enabled()
False
"""

from __future__ import annotations

import warnings

from .._autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class detect_anomaly:  # noqa: N801 - PyTorch's name
    """A context manager that turns anomaly detection on: backward nodes remember the
    forward call that made them, and a node that fails or returns NaN gradients (with ``check_nan``)
    is reported with that call's traceback. Slow: for debugging only.

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with tm.autograd.detect_anomaly():
    ...         tm.is_anomaly_enabled()
    True
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc_info) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Turn anomaly detection on or off (``mode``), right away; used as a context manager, the
    previous state comes back on exit.

    >>> import tensormodes as tm
    >>> _ = tm.autograd.set_detect_anomaly(True); tm.is_anomaly_enabled()
    True
    >>> _ = tm.autograd.set_detect_anomaly(False); tm.is_anomaly_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)

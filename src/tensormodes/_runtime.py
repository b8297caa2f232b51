"""Process-wide runtime settings with PyTorch's names, validation and answers: threads,
deterministic algorithms, float32 matmul precision, and ``compile``.

Settings are recorded and read back as PyTorch does; what they change here:

* ``set_num_threads(n)`` limits NumPy's BLAS thread pools to ``n`` when ``threadpoolctl`` is
  installed (the kernels are NumPy's); without it the number is only recorded (advisory).
  ``set_num_interop_threads`` is recorded only (there is no inter-op pool).
* ``use_deterministic_algorithms``: every kernel here is deterministic already; the flag is
  recorded for ``are_deterministic_algorithms_enabled()``.
* ``set_float32_matmul_precision``: float32 products always compute in full float32 (NumPy);
  the setting is recorded and ``backends.cuda.matmul.allow_tf32`` follows it.
* ``compile(model)`` returns ``model`` itself: nothing is compiled.

>>> import tensormodes as tm
>>> tm.get_float32_matmul_precision(), tm.are_deterministic_algorithms_enabled()
('highest', False)
"""

from __future__ import annotations

import importlib
import warnings

from ._settings import SETTINGS

__all__ = [
    "SETTINGS", "set_num_threads", "get_num_threads", "set_num_interop_threads", "get_num_interop_threads",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode", "get_deterministic_debug_mode",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "compile", "set_warn_always",
    "is_warn_always_enabled",
]

_INT32_MAX = 2 ** 31 - 1


def _checked_thread_count(caller: str, n) -> int:
    if type(n) is bool or not isinstance(n, int):
        raise RuntimeError(f"{caller} expects an int, but got {type(n).__name__}")
    if n > _INT32_MAX or n < -_INT32_MAX - 1:
        raise ValueError("Overflow when unpacking long")
    if n <= 0:
        raise RuntimeError(f"{caller} expects a positive integer")
    return int(n)


def set_num_threads(int) -> None:
    """Sets the number of threads used for intraop parallelism on CPU: NumPy's BLAS pools
    follow it when ``threadpoolctl`` is installed; otherwise it is recorded only.

    >>> import tensormodes as tm
    >>> before = tm.get_num_threads()
    >>> tm.set_num_threads(1); tm.get_num_threads()
    1
    >>> tm.set_num_threads(before)
    """
    n = _checked_thread_count("set_num_threads", int)
    try:
        threadpoolctl = importlib.import_module("threadpoolctl")
    except ImportError:
        threadpoolctl = None  # optional: the number is then advisory
    if threadpoolctl is not None:
        SETTINGS.blas_limits = threadpoolctl.threadpool_limits(limits=n, user_api="blas")
    SETTINGS.num_threads = n


def get_num_threads() -> int:
    """The number of threads used for parallelizing CPU operations (the CPUs available to the
    process until ``set_num_threads`` is called).

    >>> import tensormodes as tm
    >>> tm.get_num_threads() >= 1
    True
    """
    return SETTINGS.num_threads


def set_num_interop_threads(int) -> None:
    """Sets the number of threads used for interop parallelism (recorded only: there is no
    inter-op pool here). As in PyTorch, it may be called once.

    >>> import tensormodes as tm
    >>> tm.set_num_interop_threads(0)
    Traceback (most recent call last):
    RuntimeError: set_num_interop_threads expects a positive integer
    """
    n = _checked_thread_count("set_num_interop_threads", int)
    if SETTINGS.interop_threads_set:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    SETTINGS.num_interop_threads = n
    SETTINGS.interop_threads_set = True


def get_num_interop_threads() -> int:
    """The number of threads used for inter-op parallelism on CPU.

    >>> import tensormodes as tm
    >>> tm.get_num_interop_threads() >= 1
    True
    """
    return SETTINGS.num_interop_threads


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Sets whether operations must use deterministic algorithms. Every kernel here is
    deterministic, so the flag changes no result; it is recorded as PyTorch records it.

    >>> import tensormodes as tm
    >>> tm.use_deterministic_algorithms(True); tm.are_deterministic_algorithms_enabled()
    True
    >>> tm.use_deterministic_algorithms(False)
    """
    for name, position, value in (("mode", " (position 1)", mode), ("warn_only", "", warn_only)):
        if type(value) is not bool:
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}'{position} must be bool, "
                            f"not {type(value).__name__}")
    SETTINGS.deterministic = mode
    SETTINGS.deterministic_warn_only = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """True if ``use_deterministic_algorithms(True)`` is in force.

    >>> import tensormodes as tm
    >>> tm.are_deterministic_algorithms_enabled()
    False
    """
    return SETTINGS.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """True if ``use_deterministic_algorithms(True, warn_only=True)`` is in force.

    >>> import tensormodes as tm
    >>> tm.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return SETTINGS.deterministic_warn_only


def set_warn_always(b: bool) -> None:
    """When ``b`` is True, warnings PyTorch gives once per process are to be given every time
    (recorded as PyTorch records it, for ``is_warn_always_enabled()``).

    >>> import tensormodes as tm
    >>> tm.set_warn_always(True); tm.is_warn_always_enabled()
    True
    >>> tm.set_warn_always(False)
    """
    if type(b) is not bool:
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    SETTINGS.warn_always = b


def is_warn_always_enabled() -> bool:
    """True if ``set_warn_always(True)`` is in force.

    >>> import tensormodes as tm
    >>> tm.is_warn_always_enabled()
    False
    """
    return SETTINGS.warn_always


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """``use_deterministic_algorithms`` by level: ``"default"``/0 off, ``"warn"``/1 warn only,
    ``"error"``/2 on.

    >>> import tensormodes as tm
    >>> tm.set_deterministic_debug_mode("warn"); tm.get_deterministic_debug_mode()
    1
    >>> tm.set_deterministic_debug_mode(0)
    """
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif isinstance(debug_mode, int):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """The level ``set_deterministic_debug_mode`` takes: 0, 1 (warn only) or 2.

    >>> import tensormodes as tm
    >>> tm.get_deterministic_debug_mode()
    0
    """
    if not SETTINGS.deterministic:
        return 0
    return 1 if SETTINGS.deterministic_warn_only else 2


_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    """Sets the internal precision of float32 matrix products: ``"highest"``, ``"high"`` or
    ``"medium"``. Recorded only: products here always compute in full float32.

    >>> import tensormodes as tm
    >>> tm.set_float32_matmul_precision("high"); tm.get_float32_matmul_precision()
    'high'
    >>> tm.set_float32_matmul_precision("highest")
    """
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    SETTINGS.float32_matmul_precision = precision


def get_float32_matmul_precision() -> str:
    """The float32 matrix product precision set last (``"highest"`` by default).

    >>> import tensormodes as tm
    >>> tm.get_float32_matmul_precision()
    'highest'
    """
    return SETTINGS.float32_matmul_precision


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend=None, mode=None, options=None,
            name=None, disable: bool = False, recompile_limit=None, isolate_recompiles: bool = False,
            shapes_spec=None):
    """PyTorch's ``torch.compile``, accepted so that scripts run: it compiles nothing and
    returns ``model`` itself (or, without ``model``, a decorator that does). To see or
    transform a program's graph, use ``tensormodes.fx``.

    >>> import tensormodes as tm
    >>> layer = tm.nn.Linear(2, 2)
    >>> tm.compile(layer) is layer
    True
    """
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           disable=disable)
        return decorate
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    return model

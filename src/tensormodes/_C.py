"""The protocol's core names, where PyTorch users look for them (``torch._C``).

>>> import tensormodes as tm
>>> tm._C._get_torch_function_mode() is None
True
"""

from ._dispatch.python_dispatch import disabled_torch_dispatch_impl as _disabled_torch_dispatch_impl  # noqa: F401
from ._overrides.dispatch import (  # noqa: F401 - re-exported core API
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_function_impl,
    _DisableTorchDispatch,
    _EnableTorchFunction,
    _get_torch_function_mode,
    _is_torch_function_all_disabled,
    _is_torch_function_enabled,
    _is_torch_function_mode_enabled,
    _peek_should_skip_torch_function,
    _set_skip_next_torch_function,
    _skip_one_hop_torch_function,
)
from ._overrides.dispatch import current_dispatch_modes as _current_dispatch_modes
from ._overrides.dispatch import set_modes as _set_modes
from .overrides import (  # noqa: F401 - re-exported: PyTorch's private mode-stack helpers
    _check_mode_class,
    _get_function_stack_at,
    _len_torch_function_stack,
    _pop_torch_function_stack,
    _push_on_torch_function_stack,
    _stack_for,
)


def _len_torch_dispatch_stack() -> int:
    """How many dispatch modes are on the stack."""
    return len(_current_dispatch_modes())


def _get_dispatch_stack_at(index: int):
    """The dispatch mode at ``index`` of the stack (0: the bottom)."""
    return _current_dispatch_modes()[index]


def _set_torch_function_mode(mode) -> None:
    """Make ``mode`` (with its chain of ``inner`` modes) the active stack; None clears it.

    A low-level setter: prefer ``with mode:`` or ``enable_torch_function_mode``,
    which restore the previous stack on exit.
    """
    if mode is None:
        _set_modes(())
        return
    if not isinstance(mode, type):
        _check_mode_class(type(mode))
        _set_modes(_stack_for(mode))
    else:
        _set_modes((mode,))

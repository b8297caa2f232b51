"""``tensormodes.distributed``: honest answers for a library that runs in one process.

There are no process groups here: ``is_available()`` and ``is_initialized()`` are False, the
queries and collectives raise PyTorch's error for a process group that was never initialized,
and ``init_process_group`` says that distributed training is not supported.

>>> import tensormodes as tm
>>> tm.distributed.is_available(), tm.distributed.is_initialized()
(False, False)
>>> tm.distributed.get_rank()
Traceback (most recent call last):
    ...
ValueError: Default process group has not been initialized, please make sure to call init_process_group.
"""

from __future__ import annotations

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "barrier", "all_reduce", "all_gather", "broadcast", "reduce", "is_torchelastic_launched"]

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


def is_available() -> bool:
    """False: this library has no distributed backend."""
    return False


def is_initialized() -> bool:
    """False: no default process group can exist here."""
    return False


def is_torchelastic_launched() -> bool:
    """False: no process here was started by a distributed launcher."""
    return False


def init_process_group(*args, **kwargs) -> None:
    """Always raises: distributed training is not supported."""
    raise RuntimeError("tensormodes.distributed: distributed training is not supported (tensormodes runs in one "
                       "process, without process groups); run the script without init_process_group")


def _not_initialized(*args, **kwargs):
    raise ValueError(_NOT_INITIALIZED)


def destroy_process_group(group=None) -> None:
    """Raises PyTorch's error: there is no process group to destroy."""
    _not_initialized()


def get_rank(group=None) -> int:
    """Raises PyTorch's error for an uninitialized default process group."""
    return _not_initialized()


def get_world_size(group=None) -> int:
    """Raises PyTorch's error for an uninitialized default process group."""
    return _not_initialized()


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Raises PyTorch's error for an uninitialized default process group."""
    return _not_initialized()


def all_reduce(tensor, op=None, group=None, async_op: bool = False):
    """Raises PyTorch's error for an uninitialized default process group."""
    return _not_initialized()


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """Raises PyTorch's error for an uninitialized default process group."""
    return _not_initialized()


def broadcast(tensor, src=None, group=None, async_op: bool = False, group_src=None):
    """Raises PyTorch's error for an uninitialized default process group."""
    return _not_initialized()


def reduce(tensor, dst=None, op=None, group=None, async_op: bool = False, group_dst=None):
    """Raises PyTorch's error for an uninitialized default process group."""
    return _not_initialized()

"""``functionalize`` and ``debug_unwrap``: the transforms that have nothing to remove here.

PyTorch's transforms wrap tensors (``BatchedTensor``, ``GradTrackingTensor``) and
``functionalize`` rewrites mutations as out-of-place ops for compilers; this library's
transforms hand ``func`` ordinary tensors, and runs ``func`` as written, which gives the
values and the input mutations a functionalized call gives.

>>> import tensormodes as tm
>>> functionalize(lambda x: x.add_(1))(tm.zeros(2)).tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import functools
from collections.abc import Callable

__all__ = ["functionalize", "debug_unwrap"]


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` itself, checked and wrapped (see the module's docstring): the same results and the
    same writes to its inputs as PyTorch's functionalized ``func``.

    >>> import tensormodes as tm
    >>> functionalize(lambda x: x * 2, remove="mutations_and_views")(tm.ones(1)).tolist()
    [2.0]
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
                           "will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped


def debug_unwrap(tensor, *, recurse: bool = True):
    """The tensor under a transform's wrappers: ``tensor`` itself, as this library's transforms
    do not wrap tensors.

    >>> import tensormodes as tm
    >>> x = tm.ones(1)
    >>> debug_unwrap(x) is x
    True
    """
    return tensor

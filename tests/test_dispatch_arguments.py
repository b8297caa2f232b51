"""What a ``__torch_dispatch__`` handler receives, argument by argument (issues 24 §2, 25 §1):
list-typed schema arguments as lists, factories' tensor options as PyTorch's C++ formulas pass
them, ``_to_copy``'s ``layout``, ``nonzero_static``. Literal expectations (PyTorch 2.13's, logged
with its TorchDispatchMode), and the same program under torch when it is installed."""

from __future__ import annotations

import pytest

import tensormodes as tm
from tensormodes.utils._python_dispatch import TorchDispatchMode


def _shape(value, lib) -> str:
    """A handler's argument as text that reads the same for both libraries: container types
    kept (``list[T]`` vs ``tuple[T]``), tensors as ``T``, the module name as ``torch``."""
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{','.join(_shape(v, lib) for v in value)}]"
    if isinstance(value, lib.Tensor):
        return "T"
    return repr(value).replace("tensormodes.", "torch.")


def _log(lib, mode_class, program, keep=None) -> list[str]:
    lines = []

    class Log(mode_class):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if keep is None or any(k in str(func) for k in keep):
                shown = {k: _shape(v, lib) for k, v in kwargs.items()}
                lines.append(f"{func} {_shape(tuple(args), lib)} {shown}")
            return func(*args, **kwargs)

    with Log():
        program(lib)
    return lines


def _torch_log(program, keep=None):
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    return _log(torch, TorchMode, program, keep)


# -- 1. list-typed schema arguments reach handlers as lists --------------------------------------

def _lists(lib):
    x = lib.ones(2, 3)
    i = lib.tensor([0])
    x.index_put((i,), lib.ones(3))
    x.index_put_((i,), lib.ones(3), accumulate=True)
    x[i]
    x.view(3, 2)
    x.sum((0,))
    x.permute((1, 0))
    lib.cat((x, x))


LISTS = [
    "aten.index_put.default tuple[T,list[T],T] {}",
    "aten.index_put_.default tuple[T,list[T],T,True] {}",
    "aten.index.Tensor tuple[T,list[T]] {}",
    "aten.view.default tuple[T,list[3,2]] {}",
    "aten.sum.dim_IntList tuple[T,list[0]] {}",
    "aten.permute.default tuple[T,list[1,0]] {}",
    "aten.cat.default tuple[list[T,T]] {}",
]


def test_list_arguments_are_lists():
    assert _log(tm, TorchDispatchMode, _lists, keep=("index", "view", "sum", "permute", "cat")) == LISTS


def test_index_put_backward_indices_are_a_list():
    def program(lib):
        x = lib.ones(2, 3, requires_grad=True)
        x[lib.tensor([0])].sum().backward()

    assert "aten.index_put.default tuple[T,list[T],T,True] {}" in _log(tm, TorchDispatchMode, program)


@pytest.mark.torch
def test_list_arguments_match_torch():
    assert _torch_log(_lists, keep=("index", "view", "sum", "permute", "cat")) == LISTS

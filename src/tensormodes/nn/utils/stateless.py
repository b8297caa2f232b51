"""Calling a module with other parameters and buffers (``torch.nn.utils.stateless``).

``reparametrize_module`` swaps tensors into a module by dotted name for the length of a
``with`` block and swaps the originals back on the way out, exceptions included;
``call_with_tensors`` calls the module inside it. ``tensormodes.func.functional_call`` is
built on them (``functional_call`` here is PyTorch's deprecated spelling of it).

>>> import tensormodes as tm
>>> lin = tm.nn.Linear(2, 1, bias=False)
>>> call_with_tensors(lin, {"weight": tm.ones(1, 2)}, tm.tensor([1.0, 2.0])).tolist()
[3.0]
>>> lin.weight is dict(lin.named_parameters())["weight"]  # the module's own weight is back
True
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

from ..._api import namespace as tm
from ..modules.module import Module
from ..parallel import DataParallel

__all__ = ["functional_call"]

# The value "no such attribute" while a name is swapped in and back out.
_MISSING = object()


def _named_tensors(module: Module) -> list[tuple[str, Any]]:
    """Every parameter and buffer by dotted name, shared ones under each of their names (the
    names of ``named_parameters(remove_duplicate=False)`` and ``named_buffers``), read from the
    modules' slots directly: this runs on every call."""
    found = []
    pending = [("", module)]
    while pending:
        prefix, current = pending.pop()
        for slots in (current._parameters, current._buffers):
            found.extend((prefix + name, tensor) for name, tensor in slots.items() if tensor is not None)
        pending.extend((f"{prefix}{name}.", child) for name, child in current._modules.items() if child is not None)
    return found


def _untie(module: Module, parameters_and_buffers: dict) -> dict:
    """``parameters_and_buffers`` with every name tied to a given one (the same tensor object in
    the module under several names) given the same value; PyTorch's ValueError when tied names
    are given different values."""
    names_of: dict[int, set[str]] = {}
    for name, tensor in _named_tensors(module):
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given_tied = [name for name in parameters_and_buffers if name in tied]
    for name in given_tied:
        given = [other for other in tied[name] if other in parameters_and_buffers]
        if len(given) > 1 and len({id(parameters_and_buffers[other]) for other in given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied[name])}, "
                             f"which are tied. Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = parameters_and_buffers[name]
    return untied


def _owner(module: Module, name: str) -> tuple[Module, str]:
    """The submodule holding the dotted ``name`` and the attribute's own name, with PyTorch's errors."""
    path, _, attribute = name.rpartition(".")
    owner = module
    for part in path.split(".") if path else ():
        try:
            child = getattr(owner, part)
        except AttributeError as error:
            raise AttributeError(f"{owner._get_name()} has no attribute `{part}`") from error
        if not isinstance(child, Module):
            raise TypeError(f"submodule `{part}`: {child} is not an instance of torch.nn.Module")
        owner = child
    return owner, attribute


def _swap(module: Module, name: str, tensor) -> Any:
    """Put ``tensor`` (or ``_MISSING``: remove) at the dotted ``name`` and return what was there,
    writing a parameter's or buffer's slot directly (a plain tensor may stand in for a Parameter)."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, tm.Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    owner, attribute = _owner(module, name)
    if attribute == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for slots in (owner._parameters, owner._buffers):
        if attribute in slots:
            original = slots[attribute]
            if tensor is _MISSING:
                del slots[attribute]
            else:
                slots[attribute] = tensor
            return original
    original = getattr(owner, attribute, _MISSING)
    if original is not _MISSING and original is not None and not isinstance(original, tm.Tensor):
        raise TypeError(f"attribute `{attribute}`: {original} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(owner, attribute, tensor)
    elif hasattr(owner, attribute):
        delattr(owner, attribute)
    return original


def _check_keys(module: Module, names) -> None:
    valid = {name for name, _ in _named_tensors(module)}
    missing, unexpected = sorted(valid - set(names)), sorted(set(names) - valid)
    messages = []
    if unexpected:
        messages.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        messages.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if messages:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                               "\n\t".join(messages)))


@contextlib.contextmanager
def reparametrize_module(module: Module, parameters_and_buffers: dict, tie_weights: bool = False,
                         strict: bool = False):
    """Within the block, ``module``'s tensors at the given dotted names are the given tensors;
    the originals are back afterwards, also after an exception. A tensor the module replaced
    during the block (``self.foo = self.foo + 1``) is written back into ``parameters_and_buffers``,
    as PyTorch does.

    >>> import tensormodes as tm
    >>> lin = tm.nn.Linear(1, 1)
    >>> with reparametrize_module(lin, {"bias": tm.zeros(1)}):
    ...     lin.bias.tolist()
    [0.0]
    >>> isinstance(lin.bias, tm.nn.Parameter)
    True
    """
    tensors = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        _check_keys(module, tensors)
    originals: dict[str, Any] = {}
    try:
        for name, tensor in tensors.items():
            originals[name] = _swap(module, name, tensor)
        yield
    finally:
        current = {name: _swap(module, name, original) for name, original in originals.items()}
        parameters_and_buffers.update({name: current[name] for name in parameters_and_buffers if name in current})


def call_with_tensors(module: Module, parameters_and_buffers: dict, args: Any = None, kwargs: dict | None = None,
                      *, tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the given tensors in place of its parameters and buffers
    (what ``torch.func.functional_call`` runs once its dictionaries are merged). ``args`` that is not
    a tuple is one argument.

    >>> import tensormodes as tm
    >>> call_with_tensors(tm.nn.Linear(1, 1), {"weight": tm.ones(1, 1), "bias": tm.ones(1)}, tm.ones(1)).tolist()
    [2.0]
    """
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module: Module, parameters_and_buffers: dict, args: Any = None, kwargs: dict | None = None,
                    *, tie_weights: bool = True, strict: bool = False) -> Any:
    """Perform a functional call on the module by replacing the module parameters and buffers with
    the provided ones (deprecated in PyTorch 2.0: use ``tensormodes.func.functional_call``).

    >>> import warnings, tensormodes as tm
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     functional_call(tm.nn.Linear(1, 1), {"weight": tm.ones(1, 1), "bias": tm.zeros(1)}, tm.ones(1)).tolist()
    [1.0]
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return call_with_tensors(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)

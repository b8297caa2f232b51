"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``, ``ParameterDict``.

>>> import tensormodes as tm
>>> net = tm.nn.Sequential(tm.nn.Linear(4, 8), tm.nn.ReLU(), tm.nn.Linear(8, 2))
>>> net(tm.ones(3, 4)).shape, len(net), type(net[1]).__name__
(tensormodes.Size([3, 2]), 3, 'ReLU')
"""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from itertools import chain, islice
from typing import Any

from ..._api import namespace as tm
from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _absolute_index(index: int, size: int) -> int:
    index = operator.index(index)
    if not (-size <= index < size):
        raise IndexError(f"index {index} is out of range")
    return index + size if index < 0 else index


class Container(Module):
    """PyTorch's deprecated ``nn.Container``: a module holding the modules given as keywords
    (a ``FutureWarning``: subclass ``Module`` instead).

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     list(tm.nn.Container(a=tm.nn.ReLU()).named_children())
    [('a', ReLU())]
    """

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """A sequential container: modules run in the order they are passed (or the order of an ``OrderedDict``).

    >>> import tensormodes as tm
    >>> from collections import OrderedDict
    >>> tm.nn.Sequential(OrderedDict([("conv", tm.nn.Conv1d(1, 2, 3)), ("act", tm.nn.ReLU())]))
    Sequential(
      (conv): Conv1d(1, 2, kernel_size=(3,), stride=(1,))
      (act): ReLU()
    )
    """

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def _get_item_by_idx(self, iterator: Iterable, idx: int):
        return next(islice(iterator, _absolute_index(idx, len(self)), None))

    def __getitem__(self, idx: slice | int) -> Sequential | Module:
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_item_by_idx(self._modules.keys(), idx), module)

    def __delitem__(self, idx: slice | int) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        # Renumber so that the keys stay 0..n-1.
        self._modules = OrderedDict(zip([str(i) for i in range(len(self._modules))], self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        combined = Sequential()
        for layer in chain(self, other):
            combined.append(layer)
        return combined

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        offset = len(self)
        for index, module in enumerate(other):
            self.add_module(str(index + offset), module)
        return self

    def __mul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        offset = 0
        for _ in range(other):
            for module in self:
                combined.add_module(str(offset), module)
                offset += 1
        return combined

    def __rmul__(self, other: int) -> Sequential:
        return self.__mul__(other)

    def __imul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        original = len(self)
        offset = original
        for _ in range(other - 1):
            for index in range(original):
                self.add_module(str(index + offset), self._modules[str(index)])
            offset += original
        return self

    def pop(self, key: int | slice) -> Module:
        """Remove the module at ``key`` and return it.

        >>> import tensormodes as tm
        >>> seq = tm.nn.Sequential(tm.nn.ReLU(), tm.nn.Tanh())
        >>> seq.pop(0), seq
        (ReLU(), Sequential(
          (0): Tanh()
        ))
        """
        value = self[key]
        del self[key]
        return value

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def forward(self, input: Any) -> Any:
        """Feed ``input`` through each module in turn."""
        for module in self:
            input = module(input)
        return input

    def append(self, module: Module) -> Sequential:
        """Append a given module to the end.

        >>> import tensormodes as tm
        >>> len(tm.nn.Sequential().append(tm.nn.ReLU()))
        1
        """
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert a module into the Sequential container at the specified index.

        >>> import tensormodes as tm
        >>> list(tm.nn.Sequential(tm.nn.ReLU()).insert(0, tm.nn.Tanh()))
        [Tanh(), ReLU()]
        """
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Extend the container with the layers of another Sequential (or any iterable of modules).

        >>> import tensormodes as tm
        >>> len(tm.nn.Sequential(tm.nn.ReLU()).extend([tm.nn.Tanh(), tm.nn.ReLU()]))
        3
        """
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(Module):
    """Holds submodules in a list, registered so that every Module method sees them.

    >>> import tensormodes as tm
    >>> tm.nn.ModuleList([tm.nn.Linear(2, 2) for _ in range(3)] + [tm.nn.ReLU()])
    ModuleList(
      (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
      (3): ReLU()
    )
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx: int | slice) -> Module | ModuleList:
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[str(_absolute_index(idx, len(self)))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_absolute_index(idx, len(self))), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_absolute_index(idx, len(self))))
        self._modules = OrderedDict(zip([str(i) for i in range(len(self._modules))], self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for index, module in enumerate(chain(self, other)):
            combined.add_module(str(index), module)
        return combined

    def __repr__(self) -> str:
        # Runs of identical entries print once, as "(first-last): n x repr".
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        blocks: list[list] = []
        for index, text in enumerate(reprs):
            if blocks and blocks[-1][2] == text:
                blocks[-1][1] = index
            else:
                blocks.append([index, index, text])
        lines = []
        for start, end, text in blocks:
            entry = f"({start}): {text}" if start == end else f"({start}-{end}): {end - start + 1} x {text}"
            lines.append(_addindent(entry, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Insert a given module before a given index in the list.

        >>> import tensormodes as tm
        >>> ml = tm.nn.ModuleList([tm.nn.ReLU()]); ml.insert(0, tm.nn.Tanh()); list(ml)
        [Tanh(), ReLU()]
        """
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        """Append a given module to the end of the list.

        >>> import tensormodes as tm
        >>> len(tm.nn.ModuleList().append(tm.nn.ReLU()))
        1
        """
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice) -> Module:
        """Remove the module at ``key`` and return it.

        >>> import tensormodes as tm
        >>> tm.nn.ModuleList([tm.nn.ReLU()]).pop(0)
        ReLU()
        """
        value = self[key]
        del self[key]
        return value

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append modules from a Python iterable to the end of the list.

        >>> import tensormodes as tm
        >>> len(tm.nn.ModuleList().extend([tm.nn.ReLU(), tm.nn.Tanh()]))
        2
        """
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for index, module in enumerate(modules):
            self.add_module(str(offset + index), module)
        return self


class ModuleDict(Module):
    """Holds submodules in a dictionary (insertion-ordered), registered so that every Module method sees them.

    >>> import tensormodes as tm
    >>> acts = tm.nn.ModuleDict({"relu": tm.nn.ReLU(), "tanh": tm.nn.Tanh()})
    >>> list(acts.keys()), acts["tanh"]
    (['relu', 'tanh'], Tanh())
    """

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove all items from the ModuleDict."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove ``key`` from the ModuleDict and return its module."""
        value = self[key]
        del self[key]
        return value

    def keys(self) -> KeysView[str]:
        """Return an iterable of the ModuleDict keys."""
        return self._modules.keys()

    def items(self) -> ItemsView[str, Module]:
        """Return an iterable of the ModuleDict key/value pairs."""
        return self._modules.items()

    def values(self) -> ValuesView[Module]:
        """Return an iterable of the ModuleDict values."""
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable) -> None:
        """Update the ModuleDict with key-value pairs from a mapping or an iterable of pairs, overwriting keys.

        >>> import tensormodes as tm
        >>> d = tm.nn.ModuleDict(); d.update([("a", tm.nn.ReLU())]); list(d)
        ['a']
        """
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, pair in enumerate(modules):
            if not isinstance(pair, Iterable):
                raise TypeError("ModuleDict update sequence element #" + str(j) + " should be Iterable; is"
                                + type(pair).__name__)
            if not len(pair) == 2:
                raise ValueError("ModuleDict update sequence element #" + str(j) + " has length " + str(len(pair))
                                 + "; 2 is required")
            self[pair[0]] = pair[1]


def _describe(value: Any, type_name: str) -> str:
    if isinstance(value, tm.Tensor):
        size = "x".join(str(s) for s in value.size())
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        return f"{kind} containing: [{type_name} of size {size}]"
    return "Object of type: " + type(value).__name__


class ParameterList(Module):
    """Holds parameters in a list; tensors added to it become ``Parameter``s.

    >>> import tensormodes as tm
    >>> pl = tm.nn.ParameterList([tm.ones(2), tm.zeros(3, 1)])
    >>> pl
    ParameterList(
        (0): Parameter containing: [tensormodes.float32 of size 2]
        (1): Parameter containing: [tensormodes.float32 of size 3x1]
    )
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(_absolute_index(idx, len(self))))

    def __setitem__(self, idx: int, param: Any) -> None:
        # Every entry of the list part arrives here: the one place tensors are wrapped as Parameters.
        idx = str(_absolute_index(idx, len(self)))
        if isinstance(param, tm.Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, idx, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Append a given value at the end of the list.

        >>> import tensormodes as tm
        >>> type(tm.nn.ParameterList().append(tm.ones(1))[0]).__name__
        'Parameter'
        """
        index = len(self)
        self._size += 1
        self[index] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append values from a Python iterable to the end of the list.

        >>> import tensormodes as tm
        >>> len(tm.nn.ParameterList().extend([tm.ones(1), tm.ones(2)]))
        2
        """
        if not isinstance(values, Iterable) or isinstance(values, tm.Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        """One line per entry: its kind, dtype and size."""
        return "\n".join(f"  ({k}): " + _describe(p, str(p.dtype) if isinstance(p, tm.Tensor) else "")
                         for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """Holds parameters in a dictionary (insertion-ordered); tensors added to it become ``Parameter``s.

    >>> import tensormodes as tm
    >>> pd = tm.nn.ParameterDict({"scale": tm.ones(2)})
    >>> pd
    ParameterDict(  (scale): Parameter containing: [tensormodes.FloatTensor of size 2])
    >>> [name for name, _ in pd.named_parameters()]
    ['scale']
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        # Every entry of the dictionary part arrives here: the one place tensors are wrapped as Parameters.
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, tm.Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """Return a copy of this ParameterDict instance (the parameters are shared)."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any | None = None) -> Any:
        """Set ``key`` to ``default`` if absent; return the value of ``key``."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove all items from the ParameterDict."""
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str) -> Any:
        """Remove ``key`` from the ParameterDict and return its parameter."""
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted (key, parameter) pair."""
        key = list(self._keys)[-1]
        value = self[key]
        del self[key]
        return key, value

    def get(self, key: str, default: Any | None = None) -> Any:
        """Return the parameter of ``key`` if present, else ``default``."""
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any | None = None) -> ParameterDict:
        """Return a new ParameterDict with the keys provided, each set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> KeysView[str]:
        """Return an iterable of the ParameterDict keys."""
        return self._keys.keys()

    def items(self) -> Iterator[tuple[str, Any]]:
        """Return an iterable of the ParameterDict key/value pairs."""
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterator[Any]:
        """Return an iterable of the ParameterDict values."""
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Update the ParameterDict with key-value pairs from a mapping or an iterable of pairs, overwriting keys."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, value in parameters.items():
                self[key] = value
        elif isinstance(parameters, Mapping):
            for key, value in sorted(parameters.items()):
                self[key] = value
        else:
            for j, pair in enumerate(parameters):
                if not isinstance(pair, Iterable):
                    raise TypeError("ParameterDict update sequence element #" + str(j) + " should be Iterable; is"
                                    + type(pair).__name__)
                if not len(pair) == 2:
                    raise ValueError("ParameterDict update sequence element #" + str(j) + " has length "
                                     + str(len(pair)) + "; 2 is required")
                self[pair[0]] = pair[1]

    def extra_repr(self) -> str:
        """One line per entry: its kind, type string and size."""
        return "\n".join(f"  ({k}): " + _describe(p, _typename_of(p)) for k, p in self.items())

    def __call__(self, input: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self


def _typename_of(value: Any) -> str:
    return value.type() if isinstance(value, tm.Tensor) else type(value).__name__

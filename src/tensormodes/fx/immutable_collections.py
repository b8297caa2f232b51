"""``immutable_list`` and ``immutable_dict``: a list and a dict that refuse mutation
(torch.fx's ``torch.fx.immutable_collections``), hashable from their contents.

>>> from tensormodes.fx.immutable_collections import immutable_list
>>> values = immutable_list([1, 2])
>>> try:
...     values.append(3)
... except TypeError as error:
...     print(str(error).splitlines()[0][:53])
'immutable_list' object does not support mutation. If
>>> hash(values) == hash((1, 2))
True
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["immutable_list", "immutable_dict"]

_HELP_MUTATION = """If you are attempting to modify the kwargs or args of a torch.fx.Node object,
instead create a new copy of it and assign the copy to the node:

    new_args = ...  # copy and mutate args
    node.args = new_args"""


def _no_mutation(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"{type(self).__name__!r} object does not support mutation. {_HELP_MUTATION}")


class immutable_list(list):
    """A list whose contents cannot change; hashed as the tuple of its items."""

    __delitem__ = __iadd__ = __imul__ = __setitem__ = _no_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _no_mutation

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __reduce__(self):
        return (type(self), (tuple(self),))


class immutable_dict(dict):
    """A dict whose contents cannot change; hashed as the frozenset of its items."""

    __delitem__ = __ior__ = __setitem__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self) -> int:
        return hash(frozenset(self.items()))

    def __reduce__(self):
        return (type(self), (tuple(self.items()),))

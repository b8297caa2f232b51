"""Pytrees: nested containers of values, flattened to a list of leaves and a ``TreeSpec``.

PyTorch's ``torch.utils._pytree`` (the Python implementation), with its names, results and
errors. Nodes are the registered container types — ``tuple``, ``list``, ``dict`` (key order
kept), every named tuple, ``OrderedDict``, ``defaultdict``, ``deque``, ``tensormodes.Size`` and
the ``tensormodes.return_types`` — and whatever ``register_pytree_node`` adds; everything else,
tensors and ``None`` included, is a leaf.

>>> import tensormodes as tm
>>> from tensormodes.utils._pytree import tree_flatten, tree_map, tree_map_only, tree_unflatten
>>> leaves, spec = tree_flatten({"w": tm.ones(2), "opts": (1, None)})
>>> len(leaves), spec.num_leaves
(3, 3)
>>> spec
TreeSpec(dict, ['w', 'opts'], [*,
  TreeSpec(tuple, None, [*,
    *])])
>>> tree_unflatten([0, 1, 2], spec)
{'w': 0, 'opts': (1, 2)}
>>> tree_map_only(tm.Tensor, lambda t: t * 2, {"w": tm.ones(2), "lr": 0.1})["w"].tolist()
[2.0, 2.0]

A ``__torch_dispatch__`` handler typically unwraps every argument with ``tree_map_only`` and
wraps the results back the same way; ``tree_map`` without ``rests`` or ``is_leaf`` rebuilds the
tree directly (one dictionary lookup on ``type(node)`` per node), without a ``TreeSpec``.
"""

from __future__ import annotations

import dataclasses
import threading
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from .. import return_types
from .._api import namespace as tm

__all__ = [
    "PyTree", "Context", "KeyEntry", "KeyPath", "NodeDef", "SUPPORTED_NODES", "TreeSpec", "LeafSpec",
    "SequenceKey", "MappingKey", "GetAttrKey", "register_pytree_node", "register_dataclass",
    "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance", "tree_is_leaf", "tree_flatten",
    "tree_unflatten", "tree_iter", "tree_leaves", "tree_structure", "tree_map", "tree_map_",
    "map_only", "tree_map_only", "tree_map_only_", "tree_all", "tree_any", "tree_all_only",
    "tree_any_only", "treespec_leaf", "treespec_tuple", "treespec_dict", "treespec_pprint",
    "arg_tree_leaves", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
    "keystr", "key_get",
]

PyTree = Any
Context = Any
KeyEntry = Any
KeyPath = tuple
FlattenFn = Callable[[Any], tuple[list, Context]]
UnflattenFn = Callable[[Iterable, Context], Any]

NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"


class NodeDef(NamedTuple):
    """How a registered container type is taken apart and put back together."""

    type: type
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: Callable | None


_NODE_REGISTRY_LOCK = threading.RLock()
# the named tuples of ``tensormodes.return_types``: PyTorch's are structseqs, nodes of their own type
_STRUCT_SEQUENCES = frozenset(getattr(return_types, name) for name in return_types.__all__)
SUPPORTED_NODES: dict[Any, NodeDef] = {}
# What each type seen so far is: its NodeDef, or None for a leaf type. Named tuples resolve to
# the ``namedtuple`` entry (PyTorch's node type for all of them). Cleared on every registration;
# a plain dict read keeps the per-node cost of flattening and mapping at one lookup.
_RESOLVED: dict[type, NodeDef | None] = {}


# --- key entries (for the ``*_with_path`` functions) ------------------------------------------

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The position of a child in a sequence: ``[idx]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence):
        """The child of ``sequence`` at this key."""
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """The key of a child in a mapping: ``[key]``."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping):
        """The child of ``mapping`` at this key."""
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The attribute holding a child: ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj):
        """The child of ``obj`` at this key."""
        return getattr(obj, self.name)


# --- registration -----------------------------------------------------------------------------

def register_pytree_node(cls: type, flatten_fn: FlattenFn, unflatten_fn: UnflattenFn, *,
                         serialized_type_name: str | None = None, to_dumpable_context: Callable | None = None,
                         from_dumpable_context: Callable | None = None,
                         flatten_with_keys_fn: Callable | None = None) -> None:
    """Register a container-like type as pytree node.

    ``flatten_fn(node)`` returns ``(children, context)``; ``unflatten_fn(children, context)``
    rebuilds the node. ``flatten_with_keys_fn`` is like ``flatten_fn`` but returns
    ``[(key_entry, child), ...]``, for the ``*_with_path`` functions. ``serialized_type_name``
    and the dumpable-context pair are accepted and recorded (TreeSpec serialization is not
    implemented here).

    >>> from tensormodes.utils._pytree import register_pytree_node, tree_flatten
    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda xs, _: Pair(*xs))
    >>> tree_flatten(Pair(1, [2, 3]))[0]
    [1, 2, 3]
    >>> register_pytree_node(Pair, lambda p: ([], None), lambda xs, _: Pair())
    Traceback (most recent call last):
        ...
    ValueError: <class 'tensormodes.utils._pytree.Pair'> is already registered as pytree node.
    """
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    _register(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
              to_dumpable_context=to_dumpable_context, from_dumpable_context=from_dumpable_context,
              flatten_with_keys_fn=flatten_with_keys_fn)


def _register(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
              from_dumpable_context=None, flatten_with_keys_fn=None) -> None:
    if (to_dumpable_context is None) != (from_dumpable_context is None):
        raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must "
                         "be None or registered.")
    with _NODE_REGISTRY_LOCK:
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        _SERIALIZED_TYPE_NAMES[cls] = serialized_type_name or NO_SERIALIZED_TYPE_NAME_FOUND
        _RESOLVED.clear()


_SERIALIZED_TYPE_NAMES: dict[Any, str] = {}


def register_dataclass(cls: type, *, field_names: list[str] | None = None,
                       drop_field_names: list[str] | None = None, serialized_type_name: str | None = None) -> None:
    """Register a dataclass (or a class built from keyword fields) as a pytree node.

    Fields holding ``None`` are kept in the context, not as leaves, as PyTorch does.

    >>> import dataclasses
    >>> from tensormodes.utils._pytree import register_dataclass, tree_map
    >>> @dataclasses.dataclass
    ... class Point:
    ...     x: float
    ...     y: float
    >>> register_dataclass(Point)
    >>> tree_map(lambda v: v + 1, Point(1, 2))
    Point(x=2, y=3)
    """
    drop = set(drop_field_names or [])
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError("field_names must be specified with a list of all fields used to "
                             f"initialize {cls}, as it is not a dataclass.")
    elif field_names is None:
        field_names = [f.name for f in dataclasses.fields(cls) if f.init]
    else:
        init_fields = {f.name for f in dataclasses.fields(cls) if f.init} - drop
        if init_fields != set(field_names):
            message = "field_names does not include all dataclass fields.\n"
            if missing := init_fields - set(field_names):
                message += (f"Missing fields in `field_names`: {missing}. If you want to include these "
                            "fields in the pytree, please add them to `field_names`, otherwise please add "
                            "them to `drop_field_names`.\n")
            if unexpected := set(field_names) - init_fields:
                message += (f"Unexpected fields in `field_names`: {unexpected}. Please remove these "
                            "fields, or add them to `drop_field_names`.\n")
            raise ValueError(message)
    names = list(field_names)

    def flatten(obj):
        present = [n for n in names if getattr(obj, n) is not None]
        return [getattr(obj, n) for n in present], [present, [n for n in names if n not in present]]

    def unflatten(values, context):
        present, absent = context
        return cls(**dict(zip(present, values, strict=True)), **dict.fromkeys(absent))

    def flatten_with_keys(obj):
        values, (present, _) = flatten(obj)
        return [(GetAttrKey(n), v) for n, v in zip(present, values, strict=True)], present

    _register(cls, flatten, unflatten, serialized_type_name=serialized_type_name,
              flatten_with_keys_fn=flatten_with_keys)


def is_namedtuple_class(cls: type) -> bool:
    """Whether ``cls`` is a named tuple class (a tuple subclass with ``_fields``, ``_make``, ``_asdict``)."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(field) is str for field in cls._fields)
            and callable(getattr(cls, "_make", None)) and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj) -> bool:
    """Whether ``obj`` is a named tuple instance or class."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj) -> bool:
    """Whether ``obj`` is an instance of a named tuple class."""
    return is_namedtuple_class(type(obj))


def _resolve(cls: type) -> NodeDef | None:
    """The NodeDef of values of type ``cls`` (None: a leaf), cached in ``_RESOLVED``."""
    if cls in _STRUCT_SEQUENCES:
        found = SUPPORTED_NODES.get(cls)
    elif is_namedtuple_class(cls):
        # every named tuple is a node of type ``namedtuple``, registered or not (PyTorch's rule)
        found = SUPPORTED_NODES[namedtuple]
    else:
        found = SUPPORTED_NODES.get(cls)
    if len(_RESOLVED) > 4096:  # bounded: classes made at run time (Parametrized<Module> ...) are not kept forever
        _RESOLVED.clear()
    _RESOLVED[cls] = found
    return found


def _node_def(node) -> NodeDef | None:
    cls = type(node)
    try:
        return _RESOLVED[cls]
    except KeyError:
        return _resolve(cls)


def tree_is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``tree`` is a leaf: ``is_leaf(tree)`` is true, or its type is no registered node.

    >>> from tensormodes.utils._pytree import tree_is_leaf
    >>> tree_is_leaf(1), tree_is_leaf(None), tree_is_leaf([1, 2]), tree_is_leaf((1,), is_leaf=lambda x: True)
    (True, True, False, True)
    """
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_def(tree) is None


# --- TreeSpec ---------------------------------------------------------------------------------

class TreeSpec:
    """The structure of a pytree: the root's node type, its context and its children's specs.

    ``num_leaves``, ``num_nodes`` and ``num_children`` count the leaves, the nodes (leaves
    included) and the root's children. A leaf's spec is ``LeafSpec`` (printed ``*``).

    >>> from tensormodes.utils._pytree import tree_structure
    >>> spec = tree_structure([1, (2, 3)])
    >>> spec.num_leaves, spec.num_nodes, spec.num_children, spec.type, spec.context
    (3, 5, 2, <class 'list'>, None)
    >>> spec.child(1)
    TreeSpec(tuple, None, [*,
      *])
    >>> spec.unflatten("abc")
    ['a', ('b', 'c')]
    """

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type: Any, context: Context, children_specs: list[TreeSpec]) -> None:
        self.type = type
        self._context = context
        self._children = children_specs
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if children_specs:
                raise AssertionError("leaf node should not have children")
            self.num_nodes = self.num_leaves = 1
        else:
            self.num_nodes = 1 + sum(child.num_nodes for child in children_specs)
            self.num_leaves = sum(child.num_leaves for child in children_specs)
        self.num_children = len(children_specs)

    def __repr__(self, indent: int = 0) -> str:
        indent += 2
        children = [self._children[0].__repr__(indent)] if self._children else []
        children += ["\n" + " " * indent + child.__repr__(indent) for child in self._children[1:]]
        return f"TreeSpec({self.type.__name__}, {self._context}, [{','.join(children)}])"

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self) -> int:
        kind = self.type
        if kind is defaultdict:
            context = (self._context[0], tuple(self._context[1]))
        elif kind in (dict, OrderedDict):
            context = tuple(self._context)
        elif kind is None or kind in _BUILTIN_TYPES:
            context = self._context
        else:
            context = None  # a user type's context may be unhashable; equal specs still hash equal
        return hash((kind, context, tuple(self._children)))

    @property
    def context(self) -> Context:
        """What the root's unflatten function needs besides the children (dict keys, the named tuple class ...)."""
        return self._context

    @property
    def children_specs(self) -> list[TreeSpec]:
        """Deprecated spelling of ``children()``."""
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` to access a "
                      "single child, or `treespec.children()` to get all children.", FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self) -> bool:
        """Whether this spec is a leaf's."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> list[TreeSpec]:
        """The root's children's specs (a new list)."""
        return list(self._children)

    def child(self, index: int) -> TreeSpec:
        """The spec of the root's ``index``-th child."""
        return self._children[index]

    def flatten_up_to(self, tree: PyTree) -> list[PyTree]:
        """The subtrees of ``tree`` at this spec's leaves; ``tree`` must have this structure as a prefix."""
        subtrees: list = []
        self._flatten_up_to(tree, subtrees)
        return subtrees

    def _flatten_up_to(self, node, subtrees: list) -> None:
        if self.is_leaf():
            subtrees.append(node)
            return
        node_def = _node_def(node)
        node_type = namedtuple if node_def is not None and node_def.type is namedtuple else type(node)
        if self.type not in _BUILTIN_TYPES:
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = node_def.flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        else:
            # the dict types accept each other; other builtin nodes must match exactly
            both_dicts = self.type in _DICT_TYPES and node_type in _DICT_TYPES
            if not both_dicts and node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {node_type!r}.")
            if len(node) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(node)}.")
            if both_dicts:
                keys = self._context[1] if self.type is defaultdict else self._context
                got, expected = set(node), set(keys)
                if got != expected:
                    message = ""
                    if expected - got:
                        message += f"; missing key(s): {expected - got}"
                    if got - expected:
                        message += f"; extra key(s): {got - expected}"
                    raise ValueError(f"Node keys mismatch{message}.")
                children = [node[key] for key in keys]
            else:
                children, context = node_def.flatten_fn(node)
                if node_type is not deque and context != self._context:  # a deque's maxlen may differ
                    raise ValueError(f"Node context mismatch for node type {self.type!r}; "
                                     f"expected {self._context!r}, but got {context!r}.")
        for child, spec in zip(children, self._children, strict=True):
            spec._flatten_up_to(child, subtrees)

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        """The pytree of this structure holding ``leaves`` in order."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                             f"refers to a pytree that holds {self.num_leaves} items ({self}).")
        return self._build(iter(leaves))

    def _build(self, leaves: Iterator):
        if self.type is None:
            return next(leaves)
        children = [child._build(leaves) for child in self._children]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


class LeafSpec(TreeSpec):
    """The spec of a leaf, printed ``*`` (deprecated in PyTorch: use ``treespec_leaf()`` and ``is_leaf()``)."""

    __slots__ = ()

    def __init__(self) -> None:
        warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use `isinstance(treespec, TreeSpec) "
                      "and treespec.is_leaf()` instead.", FutureWarning, stacklevel=2)
        self._init_leaf()

    def _init_leaf(self) -> None:
        self.type, self._context, self._children = None, None, []
        self.num_nodes = self.num_leaves = 1
        self.num_children = 0

    def __repr__(self, indent: int = 0) -> str:
        return "*"


# all leaves share one spec, as in PyTorch (made without the deprecation warning)
_LEAF_SPEC = LeafSpec.__new__(LeafSpec)
_LEAF_SPEC._init_leaf()


def treespec_leaf() -> LeafSpec:
    """The spec of a leaf.

    >>> from tensormodes.utils._pytree import treespec_leaf
    >>> treespec_leaf(), treespec_leaf().is_leaf()
    (*, True)
    """
    return _LEAF_SPEC


def treespec_tuple(iterable: Iterable[TreeSpec] = (), /) -> TreeSpec:
    """A tuple's spec from its children's specs."""
    children = list(iterable)
    if any(not isinstance(child, TreeSpec) for child in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs: TreeSpec) -> TreeSpec:
    """A dict's spec from its keys and children's specs."""
    entries = dict(mapping, **kwargs)
    if any(not isinstance(child, TreeSpec) for child in entries.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {entries!r}.")
    return TreeSpec(dict, list(entries), list(entries.values()))


# --- flattening -------------------------------------------------------------------------------

def tree_flatten(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> tuple[list[Any], TreeSpec]:
    """Flattens a pytree into a list of values and a TreeSpec that can be used to reconstruct the pytree.

    >>> from tensormodes.utils._pytree import tree_flatten
    >>> tree_flatten([1, (2, 3), {"b": 4, "a": 5}, None])[0]
    [1, 2, 3, 4, 5, None]
    >>> tree_flatten({"a": (1, 2)}, is_leaf=lambda x: isinstance(x, tuple))
    ([(1, 2)], TreeSpec(dict, ['a'], [*]))
    """
    leaves: list = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(node, leaves: list, is_leaf) -> TreeSpec:
    if is_leaf is not None and is_leaf(node):
        leaves.append(node)
        return _LEAF_SPEC
    node_def = _node_def(node)
    if node_def is None:
        leaves.append(node)
        return _LEAF_SPEC
    children, context = node_def.flatten_fn(node)
    return TreeSpec(node_def.type, context, [_flatten(child, leaves, is_leaf) for child in children])


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """Given a list of values and a TreeSpec, builds a pytree (the inverse of ``tree_flatten``).

    >>> from tensormodes.utils._pytree import tree_flatten, tree_unflatten
    >>> _, spec = tree_flatten((1, [2]))
    >>> tree_unflatten([7, 8], spec)
    (7, [8])
    >>> tree_unflatten([7], spec)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: treespec.unflatten(leaves): `leaves` has length 1 but the spec refers to a pytree ...
    """
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                            f"{type(treespec)}.")
        leaves, treespec = treespec, leaves  # PyTorch accepts the two arguments swapped
    return treespec.unflatten(leaves)


def tree_iter(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> Iterator[Any]:
    """An iterator over the leaves of a pytree, in ``tree_flatten``'s order."""
    if is_leaf is not None and is_leaf(tree):
        yield tree
        return
    node_def = _node_def(tree)
    if node_def is None:
        yield tree
        return
    for child in node_def.flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list[Any]:
    """The list of leaves of a pytree.

    >>> from tensormodes.utils._pytree import tree_leaves
    >>> tree_leaves({"a": [1, 2], "b": (3,)})
    [1, 2, 3]
    """
    leaves: list = []
    _flatten_leaves(tree, leaves, is_leaf)
    return leaves


def _flatten_leaves(node, leaves: list, is_leaf) -> None:
    if is_leaf is not None and is_leaf(node):
        leaves.append(node)
        return
    node_def = _node_def(node)
    if node_def is None:
        leaves.append(node)
        return
    for child in node_def.flatten_fn(node)[0]:
        _flatten_leaves(child, leaves, is_leaf)


def arg_tree_leaves(*args: PyTree, **kwargs: PyTree) -> list[Any]:
    """The leaves of ``(args, kwargs)``: ``tree_leaves`` over every positional and keyword value."""
    leaves: list = []
    for value in args:
        _flatten_leaves(value, leaves, None)
    for value in kwargs.values():
        _flatten_leaves(value, leaves, None)
    return leaves


def tree_structure(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> TreeSpec:
    """The TreeSpec of a pytree.

    >>> import collections
    >>> from tensormodes.utils._pytree import tree_structure
    >>> tree_structure(collections.OrderedDict(a=1))
    TreeSpec(OrderedDict, ['a'], [*])
    >>> tree_structure(collections.deque([1, 2], maxlen=3))
    TreeSpec(deque, 3, [*,
      *])
    """
    return _flatten(tree, [], is_leaf)


# --- mapping ----------------------------------------------------------------------------------

def tree_map(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """Map a multi-input function over pytree args to produce a new pytree.

    If several trees are given, the structure is taken from the first; the others need only
    have ``tree`` as a prefix.

    >>> from tensormodes.utils._pytree import tree_map
    >>> tree_map(lambda x: x + 1, {"x": 7, "y": (42, 64)})
    {'x': 8, 'y': (43, 65)}
    >>> tree_map(lambda x: x is None, {"x": 7, "y": (42, 64), "z": None})
    {'x': False, 'y': (False, False), 'z': True}
    >>> tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]])
    [[5, 7, 9], [6, 1, 2]]
    """
    if rests or is_leaf is not None:
        leaves, spec = tree_flatten(tree, is_leaf)
        return spec.unflatten(map(func, leaves, *(spec.flatten_up_to(rest) for rest in rests)))
    return _map(func, tree)


def _map(func, node):
    """``tree_unflatten(map(func, leaves), spec)`` without building either: leaves are called
    in the same order and the nodes rebuilt by the same unflatten functions."""
    cls = type(node)
    if cls is list or cls is tuple:
        # leaves of a known leaf class called here, not one level down (a handler's args are
        # such a tuple: one frame less per argument)
        resolved = _RESOLVED
        mapped = [func(child) if resolved.get(type(child), 0) is None else _map(func, child) for child in node]
        return mapped if cls is list else tuple(mapped)
    if cls is dict:
        return {key: _map(func, value) for key, value in node.items()}
    try:
        node_def = _RESOLVED[cls]
    except KeyError:
        node_def = _resolve(cls)
    if node_def is None:
        return func(node)
    children, context = node_def.flatten_fn(node)
    return node_def.unflatten_fn([_map(func, child) for child in children], context)


def tree_map_(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
              is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """Like ``tree_map``, but calls ``func`` on each leaf for its side effect and returns ``tree`` itself.

    >>> from tensormodes.utils._pytree import tree_map_
    >>> seen = []
    >>> tree_map_(seen.append, [1, (2,)]), seen
    ([1, (2,)], [1, 2])
    """
    leaves, spec = tree_flatten(tree, is_leaf)
    for _ in map(func, leaves, *(spec.flatten_up_to(rest) for rest in rests)):
        pass
    return tree


def map_only(type_or_types_or_pred, /) -> Callable[[Callable], Callable]:
    """Decorator: apply the function to values of the given type(s) (or passing the predicate),
    and return other values unchanged.

    >>> from tensormodes.utils._pytree import map_only
    >>> double = map_only(int)(lambda x: 2 * x)
    >>> double(3), double("a")
    (6, 'a')
    """
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        kinds = type_or_types_or_pred

        def pred(x) -> bool:
            return isinstance(x, kinds)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func: Callable) -> Callable:
        def wrapped(x):
            return func(x) if pred(x) else x
        wrapped.__name__ = getattr(func, "__name__", "wrapped")
        wrapped.__doc__ = getattr(func, "__doc__", None)
        wrapped.__wrapped__ = func
        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred, /, func: Callable, tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree_map`` applying ``func`` only to leaves of the given type(s) (or passing the predicate).

    >>> from tensormodes.utils._pytree import tree_map_only
    >>> tree_map_only((int, float), lambda x: -x, [1, "a", (2.5, None)])
    [-1, 'a', (-2.5, None)]
    """
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func: Callable, tree: PyTree,
                   is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree_map_`` calling ``func`` only on leaves of the given type(s) (or passing the predicate)."""
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``pred`` holds for every leaf (stops at the first that fails).

    >>> from tensormodes.utils._pytree import tree_all, tree_any
    >>> tree_all(lambda x: x > 0, [1, (2, 3)]), tree_any(lambda x: x > 2, [1, (2, 3)])
    (True, True)
    """
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``pred`` holds for some leaf (stops at the first that does)."""
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred: Callable, tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``pred`` holds for every leaf of the given type(s); other leaves are ignored."""
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred: Callable, tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``pred`` holds for some leaf of the given type(s); other leaves are ignored."""
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


class _Asterisk(str):
    """``*`` without quotes, for ``treespec_pprint``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "*"


def treespec_pprint(treespec: TreeSpec) -> str:
    """The spec shown as its tree with ``*`` at each leaf.

    >>> from tensormodes.utils._pytree import tree_structure, treespec_pprint
    >>> treespec_pprint(tree_structure({"a": [1, 2], "b": None}))
    "{'a': [*, *], 'b': *}"
    """
    return repr(treespec.unflatten([_Asterisk("*")] * treespec.num_leaves))


# --- key paths --------------------------------------------------------------------------------

def _key_paths(path: tuple, node, is_leaf, out: list) -> None:
    if is_leaf is not None and is_leaf(node):
        out.append((path, node))
        return
    node_def = _node_def(node)
    if node_def is None:
        out.append((path, node))
        return
    if node_def.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_def.type}. "
                         "Please pass a flatten_with_keys_fn argument to register_pytree_node.")
    for key, child in node_def.flatten_with_keys_fn(node)[0]:
        _key_paths((*path, key), child, is_leaf, out)


def tree_flatten_with_path(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None):
    """Like ``tree_flatten``, with each leaf's key path: ``([(path, leaf), ...], spec)``.

    >>> from tensormodes.utils._pytree import tree_flatten_with_path, keystr
    >>> pairs, _ = tree_flatten_with_path({"a": [1, (2,)]})
    >>> [(keystr(path), leaf) for path, leaf in pairs]
    [("['a'][0]", 1), ("['a'][1][0]", 2)]
    """
    spec = tree_structure(tree, is_leaf)
    return tree_leaves_with_path(tree, is_leaf), spec


def tree_leaves_with_path(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list:
    """Like ``tree_leaves``, with each leaf's key path: ``[(path, leaf), ...]``."""
    out: list = []
    _key_paths((), tree, is_leaf, out)
    return out


def tree_map_with_path(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
                       is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """Like ``tree_map``, but ``func`` gets each leaf's key path first."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    columns = [[path for path, _ in pairs], [leaf for _, leaf in pairs]]
    columns += [spec.flatten_up_to(rest) for rest in rests]
    return spec.unflatten(func(*xs) for xs in zip(*columns, strict=True))


def keystr(kp: KeyPath) -> str:
    """A key path as text: ``"['a'][0].x"``."""
    return "".join(str(k) for k in kp)


def key_get(obj: Any, kp: KeyPath) -> Any:
    """The value at key path ``kp`` in ``obj``."""
    for key in kp:
        obj = key.get(obj)
    return obj


# --- the built-in nodes -----------------------------------------------------------------------

def _sequence_keys(children: list, context) -> tuple[list, Any]:
    return [(SequenceKey(i), child) for i, child in enumerate(children)], context


def _mapping_keys(node) -> tuple[list, Any]:
    return [(MappingKey(k), v) for k, v in node.items()], list(node)


def _defaultdict_unflatten(values, context):
    factory, keys = context
    return defaultdict(factory, zip(keys, values, strict=True))


_register(tuple, lambda t: (list(t), None), lambda values, _: tuple(values), serialized_type_name="builtins.tuple",
          flatten_with_keys_fn=lambda t: _sequence_keys(list(t), None))
_register(list, lambda xs: (xs, None), lambda values, _: list(values), serialized_type_name="builtins.list",
          flatten_with_keys_fn=lambda xs: _sequence_keys(xs, None))
_register(dict, lambda d: (list(d.values()), list(d)), lambda values, keys: dict(zip(keys, values, strict=True)),
          serialized_type_name="builtins.dict", flatten_with_keys_fn=_mapping_keys)
_register(namedtuple, lambda t: (list(t), type(t)), lambda values, cls: cls(*values),
          serialized_type_name="collections.namedtuple",
          flatten_with_keys_fn=lambda t: ([(GetAttrKey(f), v) for f, v in zip(t._fields, t, strict=True)], type(t)))
_register(OrderedDict, lambda d: (list(d.values()), list(d)),
          lambda values, keys: OrderedDict(zip(keys, values, strict=True)),
          serialized_type_name="collections.OrderedDict", flatten_with_keys_fn=_mapping_keys)
_register(defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d)]), _defaultdict_unflatten,
          serialized_type_name="collections.defaultdict",
          flatten_with_keys_fn=lambda d: (_mapping_keys(d)[0], [d.default_factory, list(d)]))
_register(deque, lambda d: (list(d), d.maxlen), lambda values, maxlen: deque(values, maxlen=maxlen),
          serialized_type_name="collections.deque",
          flatten_with_keys_fn=lambda d: _sequence_keys(list(d), d.maxlen))
# PyTorch registers torch.Size and its return types (structseqs there, named tuples here: they
# are nodes of their own type, as in PyTorch, not ``namedtuple`` nodes)
_register(tm.Size, lambda s: (list(s), None), lambda values, _: tm.Size(values), serialized_type_name="torch.Size",
          flatten_with_keys_fn=lambda s: _sequence_keys(list(s), None))
for _cls in _STRUCT_SEQUENCES:
    _register(_cls, lambda t: (list(t), None), lambda values, _, cls=_cls: cls(*values),
              serialized_type_name=f"torch.return_types.{_cls.__name__}",
              flatten_with_keys_fn=lambda t: _sequence_keys(list(t), None))

_BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})
_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})

"""tensormodes.utils._pytree: PyTorch's pytree API, with literal expectations and PyTorch as oracle."""

from __future__ import annotations

import collections
import dataclasses
import warnings

import pytest

import tensormodes as tm
from tensormodes.utils import _pytree as pytree

Point = collections.namedtuple("Point", "x y")

TREES = [
    1, None, [], (), {}, [1, (2, 3), {"b": 4, "a": 5}, None],
    {"z": [1, [2, (3,)]], "a": None},
    collections.OrderedDict([("b", 1), ("a", (2, 3))]),
    collections.defaultdict(list, {"k": [1, 2]}),
    collections.deque([1, (2,)], maxlen=4), collections.deque([1]),
    Point(1, (2, 3)), [Point(None, {"q": 1})],
]


def test_flatten_examples():
    leaves, spec = pytree.tree_flatten([1, (2, 3), {"b": 4, "a": 5}, None])
    assert leaves == [1, 2, 3, 4, 5, None]
    assert repr(spec) == ("TreeSpec(list, None, [*,\n  TreeSpec(tuple, None, [*,\n    *]),\n"
                          "  TreeSpec(dict, ['b', 'a'], [*,\n    *]),\n  *])")
    assert (spec.num_leaves, spec.num_nodes, spec.num_children) == (6, 9, 4)
    assert pytree.tree_flatten(None) == ([None], pytree.treespec_leaf())
    assert repr(pytree.tree_structure({})) == "TreeSpec(dict, [], [])"
    assert repr(pytree.tree_structure(Point(1, 2))) == (
        f"TreeSpec(namedtuple, {Point!r}, [*,\n  *])")
    assert repr(pytree.tree_structure(collections.defaultdict(list, a=1))) == (
        "TreeSpec(defaultdict, [<class 'list'>, ['a']], [*])")


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_round_trip(tree):
    leaves, spec = pytree.tree_flatten(tree)
    rebuilt = pytree.tree_unflatten(leaves, spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert pytree.tree_leaves(tree) == leaves == list(pytree.tree_iter(tree))
    assert pytree.tree_structure(tree) == spec and hash(pytree.tree_structure(tree)) == hash(spec)
    assert pytree.tree_map(lambda x: x, tree) == tree
    if isinstance(tree, collections.deque):
        assert rebuilt.maxlen == tree.maxlen
    if isinstance(tree, collections.defaultdict):
        assert rebuilt.default_factory is list


def test_tensors_are_leaves_and_tree_map_keeps_the_structure():
    t = tm.ones(2)
    tree = {"w": t, "b": [tm.zeros(1), 3], "s": tm.Size([2, 3])}
    leaves = pytree.tree_leaves(tree)
    assert leaves[0] is t and len(leaves) == 5 and leaves[3:] == [2, 3]
    out = pytree.tree_map_only(tm.Tensor, lambda x: x + 1, tree)
    assert out["w"].tolist() == [2.0, 2.0] and out["b"][1] == 3 and out["b"][0].tolist() == [1.0]
    assert type(out["s"]) is tm.Size and out["s"] == (2, 3)
    p = tm.nn.Parameter(tm.ones(1))
    assert pytree.tree_leaves([p])[0] is p


def test_return_types_are_nodes_of_their_own_type():
    result = tm.tensor([[1, 5], [7, 2]]).max(dim=1)
    spec = pytree.tree_structure(result)
    assert repr(spec) == "TreeSpec(max, None, [*,\n  *])"
    again = pytree.tree_map(lambda x: x * 10, result)
    assert type(again) is type(result) and again.values.tolist() == [50, 70]


def test_tree_map_several_trees_and_prefix_errors():
    assert pytree.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == [[5, 7, 9], [6, 1, 2]]
    # a dict tree maps over any standard dict with the same keys, in the first tree's key order
    assert pytree.tree_map(lambda x, y: x + y, {"a": 1, "b": 2},
                           collections.OrderedDict(b=20, a=10)) == {"a": 11, "b": 22}
    with pytest.raises(ValueError, match=r"^Node arity mismatch; expected 2, but got 1\.$"):
        pytree.tree_map(lambda x, y: x, [1, 2], [1])
    with pytest.raises(ValueError, match=r"^Node type mismatch; expected <class 'list'>, but got <class 'tuple'>\.$"):
        pytree.tree_map(lambda x, y: x, [1, 2], (1, 2))
    with pytest.raises(ValueError, match=r"^Node keys mismatch; missing key\(s\): \{'b'\}; extra key\(s\): \{'c'\}\.$"):
        pytree.tree_map(lambda x, y: x, {"a": 1, "b": 2}, {"a": 1, "c": 2})
    with pytest.raises(ValueError, match=r"^Node context mismatch for node type <function namedtuple at .*>; "
                                         r"expected <class .*Point.>, but got <class .*Other.>\.$"):
        pytree.tree_map(lambda x, y: x, Point(1, 2), collections.namedtuple("Other", "x y")(1, 2))


def test_is_leaf_and_map_only_forms():
    tree = {"a": (1, 2), "b": [3.5, "s"]}
    assert pytree.tree_map(lambda x: 0, tree, is_leaf=lambda x: isinstance(x, tuple)) == {"a": 0, "b": [0, 0]}
    assert pytree.tree_map_only((int, float), lambda x: -x, tree) == {"a": (-1, -2), "b": [-3.5, "s"]}
    assert pytree.tree_map_only(lambda x: x == 2, lambda x: 20, tree) == {"a": (1, 20), "b": [3.5, "s"]}
    assert pytree.tree_map_only(int | str, lambda x: 0, tree) == {"a": (0, 0), "b": [3.5, 0]}
    with pytest.raises(TypeError, match="^Argument must be a type, a tuple of types, or a callable.$"):
        pytree.tree_map_only(3, lambda x: x, tree)
    seen = []
    assert pytree.tree_map_only_(str, seen.append, tree) is tree and seen == ["s"]
    assert pytree.tree_all_only(int, lambda x: x > 0, tree) and not pytree.tree_any_only(str, lambda x: x == "t", tree)
    assert pytree.tree_any(lambda x: x == "s", tree) and not pytree.tree_all(lambda x: x == "s", tree)


def test_unflatten_errors():
    spec = pytree.tree_structure((1, [2]))
    with pytest.raises(ValueError, match=r"^treespec.unflatten\(leaves\): `leaves` has length 3 but the spec "
                                         r"refers to a pytree that holds 2 items \(TreeSpec\(tuple"):
        pytree.tree_unflatten([1, 2, 3], spec)
    assert pytree.tree_unflatten(spec, [1, 2]) == (1, [2])  # PyTorch tolerates swapped arguments
    with pytest.raises(TypeError, match="^Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                                        "<class 'int'>.$"):
        pytree.tree_unflatten([1], 3)


def test_register_custom_node_and_dataclass():
    class Box:
        def __init__(self, items, label):
            self.items, self.label = items, label

    pytree.register_pytree_node(Box, lambda b: (b.items, b.label), lambda items, label: Box(list(items), label),
                                serialized_type_name="tests.Box")
    try:
        box = pytree.tree_map(lambda x: x * 2, Box([1, (2,)], "L"))
        assert box.items == [2, (4,)] and box.label == "L"
        assert repr(pytree.tree_structure(Box([1], "L"))) == "TreeSpec(Box, L, [*])"
        with pytest.raises(ValueError, match=r"is already registered as pytree node\.$"):
            pytree.register_pytree_node(Box, lambda b: ([], None), lambda x, c: None)
        with pytest.raises(ValueError, match=r"^Node context mismatch for custom node type"):
            pytree.tree_map(lambda x, y: x, Box([1], "L"), Box([1], "M"))
        with pytest.raises(ValueError, match="^Did not find a flatten_with_keys_fn for type: "):
            pytree.tree_flatten_with_path(Box([1], "L"))
    finally:
        del pytree.SUPPORTED_NODES[Box]
        pytree._RESOLVED.clear()
    assert pytree.tree_leaves(Box([1], "L"))[0].label == "L"  # a leaf again

    with pytest.raises(ValueError, match="^Both to_dumpable_context and from_dumpable_context for"):
        pytree.register_pytree_node(Box, lambda b: ([], None), lambda x, c: None, to_dumpable_context=str)
    assert Box not in pytree.SUPPORTED_NODES

    @dataclasses.dataclass
    class Pair:
        a: object
        b: object = None

    pytree.register_dataclass(Pair)
    try:
        assert pytree.tree_leaves(Pair(1, None)) == [1]
        assert pytree.tree_map(lambda x: x + 1, Pair(1, 2)) == Pair(2, 3)
        assert repr(pytree.tree_structure(Pair(1))) == "TreeSpec(Pair, [['a'], ['b']], [*])"
        assert pytree.keystr(pytree.tree_flatten_with_path(Pair(1, 2))[0][1][0]) == ".b"
    finally:
        del pytree.SUPPORTED_NODES[Pair]
        pytree._RESOLVED.clear()
    with pytest.raises(ValueError, match="^field_names must be specified"):
        pytree.register_dataclass(Box)


def test_paths():
    pairs, spec = pytree.tree_flatten_with_path({"a": [1, (2,)], "p": Point(3, 4)})
    assert [(pytree.keystr(k), v) for k, v in pairs] == [
        ("['a'][0]", 1), ("['a'][1][0]", 2), ("['p'].x", 3), ("['p'].y", 4)]
    tree = {"a": [1, (2,)]}
    assert pytree.key_get(tree, pairs[1][0]) == 2
    assert pytree.tree_map_with_path(lambda k, v: pytree.keystr(k), tree) == {"a": ["['a'][0]", ("['a'][1][0]",)]}
    assert spec.num_leaves == 4


def test_leafspec_and_children():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        leaf = pytree.LeafSpec()
        spec = pytree.tree_structure([1, (2,)])
        _ = spec.children_specs
    assert [w.category for w in caught] == [FutureWarning, FutureWarning]
    assert repr(leaf) == "*" and leaf == pytree.treespec_leaf() and leaf.is_leaf()
    assert isinstance(pytree.tree_structure(1), pytree.LeafSpec)
    assert spec.children() == [pytree.treespec_leaf(), pytree.treespec_tuple([pytree.treespec_leaf()])]
    assert pytree.treespec_dict(a=pytree.treespec_leaf()) == pytree.tree_structure({"a": 0})
    assert pytree.treespec_pprint(spec) == "[*, (*,)]"
    assert pytree.tree_structure([1]) != pytree.tree_structure((1,))


def test_tree_map_calls_func_in_leaf_order_and_uses_no_treespec_fast_path():
    order = []
    pytree.tree_map(order.append, {"b": [1, 2], "a": (3, {"c": 4}), "d": collections.deque([5])})
    assert order == [1, 2, 3, 4, 5]


@pytest.mark.torch
@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_same_as_pytorch(tree):
    import torch.utils._pytree as torch_pytree

    ours_leaves, ours = pytree.tree_flatten(tree)
    theirs_leaves, theirs = torch_pytree.tree_flatten(tree)
    assert ours_leaves == theirs_leaves
    assert repr(ours) == repr(theirs)
    assert (ours.num_leaves, ours.num_nodes, ours.num_children) == (
        theirs.num_leaves, theirs.num_nodes, theirs.num_children)
    assert pytree.treespec_pprint(ours) == torch_pytree.treespec_pprint(theirs)
    ours_paths = [(pytree.keystr(k), v) for k, v in pytree.tree_leaves_with_path(tree)]
    theirs_paths = [(torch_pytree.keystr(k), v) for k, v in torch_pytree.tree_leaves_with_path(tree)]
    assert ours_paths == theirs_paths


@pytest.mark.torch
def test_size_and_return_types_as_pytorch():
    import torch
    import torch.utils._pytree as torch_pytree

    assert repr(pytree.tree_structure(tm.Size([2, 3]))) == repr(torch_pytree.tree_structure(torch.Size([2, 3])))
    ours = pytree.tree_structure(tm.ones(2, 2).sort(0))
    theirs = torch_pytree.tree_structure(torch.ones(2, 2).sort(0))
    assert repr(ours) == repr(theirs)

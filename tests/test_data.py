"""tensormodes.utils.data: datasets, samplers, DataLoader and collation, against PyTorch's behaviour."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)

Point = collections.namedtuple("Point", ["x", "y"])


def _tiny():
    return TensorDataset(tm.arange(10.).reshape(5, 2), tm.arange(5))


def _tolist(batches):
    return [[t.tolist() for t in batch] for batch in batches]


# -- DataLoader order ---------------------------------------------------------------------------------

def test_sequential_batches_are_exact():
    batches = list(DataLoader(_tiny(), batch_size=2))
    assert _tolist(batches) == [[[[0., 1.], [2., 3.]], [0, 1]], [[[4., 5.], [6., 7.]], [2, 3]], [[[8., 9.]], [4]]]
    assert all(type(b) is list for b in batches)
    assert [b[0].dtype for b in batches] == [tm.float32] * 3 and [b[1].dtype for b in batches] == [tm.int64] * 3


def test_shuffle_with_a_seeded_generator_gives_exact_deterministic_batches():
    loader = DataLoader(_tiny(), batch_size=2, shuffle=True, generator=tm.Generator().manual_seed(0))
    first = [b[1].tolist() for b in loader]
    second = [b[1].tolist() for b in loader]
    # PyTorch's orders (a base seed drawn from the generator, then tm.randperm with it),
    # pinned so a change in the draw is noticed.
    assert first == [[3, 1], [0, 4], [2]] and second == [[1, 4], [3, 2], [0]]
    g = tm.Generator().manual_seed(0)
    tm.empty((), dtype=tm.int64).random_(generator=g)
    order = tm.randperm(5, generator=g).tolist()
    assert first == [order[i:i + 2] for i in (0, 2, 4)]
    assert sorted(sum(second, [])) == [0, 1, 2, 3, 4] and second != first  # the generator moved on
    again = DataLoader(_tiny(), batch_size=2, shuffle=True, generator=tm.Generator().manual_seed(0))
    assert [b[1].tolist() for b in again] == first


def test_shuffle_without_generator_follows_manual_seed():
    tm.manual_seed(123)
    a = [b[1].tolist() for b in DataLoader(_tiny(), batch_size=3, shuffle=True)]
    tm.manual_seed(123)
    b = [b[1].tolist() for b in DataLoader(_tiny(), batch_size=3, shuffle=True)]
    assert a == b and sorted(sum(a, [])) == [0, 1, 2, 3, 4]


def test_drop_last_and_len():
    loader = DataLoader(_tiny(), batch_size=2, drop_last=True)
    assert len(loader) == 2 and [b[1].tolist() for b in loader] == [[0, 1], [2, 3]]
    assert len(DataLoader(_tiny(), batch_size=2)) == 3
    assert len(DataLoader(_tiny(), batch_size=None)) == 5
    assert len(iter(DataLoader(_tiny(), batch_size=4))) == 2


def test_tensor_dataset_fast_path_equals_collating_samples():
    x = tm.randn(23, 3, generator=tm.Generator().manual_seed(1))
    y = tm.arange(23, dtype=tm.int32)
    ds = TensorDataset(x, y)
    for options in ("dict(batch_size=5)", "dict(batch_size=4, drop_last=True)", "dict(batch_sampler=[[3, 1], [22]])",
                    "dict(sampler=SubsetRandomSampler([4, 2, 9], generator=tm.Generator().manual_seed(3)))",
                    "dict(batch_size=3, shuffle=True, generator=tm.Generator().manual_seed(3))"):
        namespace = {"tm": tm, "SubsetRandomSampler": SubsetRandomSampler}
        fast = list(DataLoader(ds, **eval(options, namespace)))
        slow = list(DataLoader(ds, collate_fn=lambda b: default_collate(b), **eval(options, namespace)))
        assert len(fast) == len(slow)
        for f, s in zip(fast, slow):
            assert type(f) is type(s) is list
            for ft, st in zip(f, s):
                assert ft.dtype == st.dtype and ft.shape == st.shape and ft.tolist() == st.tolist()
    shuffled = DataLoader(ds, batch_size=5, shuffle=True, generator=tm.Generator().manual_seed(2))
    indices = [b[1].tolist() for b in shuffled]
    g = tm.Generator().manual_seed(2)
    tm.empty((), dtype=tm.int64).random_(generator=g)  # the loader's base seed, drawn first as in PyTorch
    order = list(RandomSampler(ds, generator=g))
    assert sum(indices, []) == order


def test_random_sampler_with_replacement_in_the_loader():
    sampler = RandomSampler(_tiny(), replacement=True, num_samples=7, generator=tm.Generator().manual_seed(0))
    batches = [b[1].tolist() for b in DataLoader(_tiny(), batch_size=3, sampler=sampler)]
    assert [len(b) for b in batches] == [3, 3, 1]
    assert all(0 <= i < 5 for b in batches for i in b)


def test_map_dataset_batches_through_getitem_and_getitems():
    class Squares(Dataset):
        def __getitem__(self, i):
            return {"i": i, "sq": float(i * i)}

        def __len__(self):
            return 5

    batches = list(DataLoader(Squares(), batch_size=2))
    assert [b["i"].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert batches[0]["sq"].dtype == tm.float64

    class Batched(Squares):
        calls = []

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [self[i] for i in indices]

    list(DataLoader(Batched(), batch_size=3))
    assert Batched.calls == [[0, 1, 2], [3, 4]]


def test_no_batching_uses_default_convert():
    ds = [np.array([1, 2], dtype=np.int16), 3]
    out = list(DataLoader(ds, batch_size=None))
    assert out[0].dtype == tm.int16 and out[0].tolist() == [1, 2] and out[1] == 3 and type(out[1]) is int


class _Count(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_iterable_dataset_batches():
    assert [b.tolist() for b in DataLoader(_Count(5), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in DataLoader(_Count(5), batch_size=2, drop_last=True)] == [[0, 1], [2, 3]]
    assert list(DataLoader(_Count(3), batch_size=None)) == [0, 1, 2]
    assert len(DataLoader(_Count(5), batch_size=2)) == 3 and len(DataLoader(_Count(5), batch_size=2,
                                                                           drop_last=True)) == 2
    assert [x for x in _Count(2) + _Count(1)] == [0, 1, 0]
    assert len(ChainDataset([_Count(2), _Count(3)])) == 5


def test_no_worker_info_in_the_main_process():
    assert get_worker_info() is None


@pytest.mark.parametrize("attr", ["batch_size", "sampler", "dataset", "drop_last", "batch_sampler"])
def test_frozen_attributes(attr):
    loader = DataLoader(_tiny())
    with pytest.raises(ValueError, match=f"^{attr} attribute should not be set after DataLoader is initialized$"):
        setattr(loader, attr, None)
    loader.collate_fn = default_collate  # other attributes stay settable


_LOADER_ERRORS = [
    "dict(num_workers=-1)",
    "dict(timeout=-1)",
    "dict(prefetch_factor=2)",
    "dict(persistent_workers=True)",
    "dict(num_workers=2, prefetch_factor=-1)",
    "dict(multiprocessing_context='fork')",
    "dict(num_workers=1, multiprocessing_context='no-such-method')",
    "dict(num_workers=1, multiprocessing_context=3)",
    "dict(sampler=[0, 1], shuffle=True)",
    "dict(batch_sampler=[[0]], batch_size=2)",
    "dict(batch_sampler=[[0]], shuffle=True)",
    "dict(batch_sampler=[[0]], drop_last=True)",
    "dict(batch_sampler=[[0]], sampler=[0])",
    "dict(batch_size=None, drop_last=True)",
    "dict(batch_size=0)",
    "dict(batch_size=2, drop_last=1)",
    "dict(dataset=ITERABLE, shuffle=True)",
    "dict(dataset=ITERABLE, sampler=[0])",
    "dict(dataset=ITERABLE, batch_sampler=[[0]])",
]


def _iterable_for(torch):
    class Count(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))
    return Count()


@pytest.mark.torch
@pytest.mark.parametrize("kwargs", _LOADER_ERRORS)
def test_loader_errors_match_torch(kwargs):
    torch = pytest.importorskip("torch")

    def outcome(lib, iterable):
        options = eval(kwargs, {"ITERABLE": iterable})
        dataset = options.pop("dataset", [1, 2, 3])
        try:
            lib.utils.data.DataLoader(dataset, **options)
        except Exception as e:
            return type(e), str(e).replace("torch.", "tensormodes.")
        return None

    ours = outcome(tm, _Count(3))
    theirs = outcome(torch, _iterable_for(torch))
    assert theirs is not None and ours is not None
    assert ours == theirs


@pytest.mark.torch
@pytest.mark.parametrize("kwargs", [
    {"batch_size": 2}, {"batch_size": 2, "drop_last": True}, {"batch_size": None}, {"batch_size": 7},
    {"batch_sampler": [[0, 1], [2]]}, {"batch_size": 3, "sampler": [4, 0, 2, 1]}])
def test_len_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    data = list(range(5))
    assert len(DataLoader(data, **kwargs)) == len(torch.utils.data.DataLoader(data, **kwargs))


# -- collation --------------------------------------------------------------------------------------------------

def _shape_of(value, lib):
    """A comparable description: type names, dtypes, shapes and values, recursively."""
    if isinstance(value, lib.Tensor):
        return ("tensor", str(value.dtype).split(".")[-1], tuple(value.shape), value.tolist())
    if isinstance(value, dict):
        return (type(value).__name__, {k: _shape_of(v, lib) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_shape_of(v, lib) for v in value])
    return (type(value).__name__, value)


_COLLATE_CASES = {
    "tensors": lambda L: [L.tensor([1., 2.]), L.tensor([3., 4.])],
    "int tensors 0-d": lambda L: [L.tensor(1, dtype=L.int16), L.tensor(2, dtype=L.int16)],
    "ints": lambda L: [1, 2, 3],
    "floats": lambda L: [1.5, 2.0],
    "bools": lambda L: [True, False],
    "strings": lambda L: ["a", "b"],
    "bytes": lambda L: [b"a", b"b"],
    "numpy float32 arrays": lambda L: [np.ones(2, np.float32), np.zeros(2, np.float32)],
    "numpy int16 arrays": lambda L: [np.arange(3, dtype=np.int16)] * 2,
    "numpy float32 scalars": lambda L: [np.float32(1.5), np.float32(2)],
    "numpy int32 scalars": lambda L: [np.int32(1), np.int32(2)],
    "numpy float64 scalars": lambda L: [np.float64(1.5), np.float64(2)],
    "numpy bools": lambda L: [np.bool_(True), np.bool_(False)],
    "tuples": lambda L: [(1, "a", 2.5), (2, "b", 3.5)],
    "lists": lambda L: [[1, 2], [3, 4]],
    "namedtuples": lambda L: [Point(1, L.tensor([1.])), Point(2, L.tensor([2.]))],
    "dicts": lambda L: [{"x": 1, "y": (1.5, "s")}, {"x": 2, "y": (2.5, "t")}],
    "ordered dicts": lambda L: [collections.OrderedDict(b=1, a=2.5), collections.OrderedDict(b=3, a=4.5)],
    "nested": lambda L: [{"img": L.zeros(2, 2), "meta": [{"id": 1}]}, {"img": L.ones(2, 2), "meta": [{"id": 2}]}],
    "unequal lists": lambda L: [[1, 2], [3]],
    "unequal tensors": lambda L: [L.ones(2), L.ones(3)],
    "object arrays": lambda L: [np.array(["a"], dtype=object)] * 2,
    "string arrays": lambda L: [np.array(["a"])] * 2,
    "unsupported": lambda L: [object(), object()],
    "none": lambda L: [None, None],
}


@pytest.mark.torch
@pytest.mark.parametrize("case", list(_COLLATE_CASES))
def test_default_collate_matches_torch(case):
    torch = pytest.importorskip("torch")
    make = _COLLATE_CASES[case]

    def outcome(lib, collate_fn):
        try:
            return "ok", _shape_of(collate_fn(make(lib)), lib)
        except Exception as e:
            text = str(e).replace("torch.", "tensormodes.")
            return "error", type(e), text.split("found <class")[0] if "found <class" in text else text

    ours = outcome(tm, default_collate)
    theirs = outcome(torch, torch.utils.data.default_collate)
    assert ours == theirs


@pytest.mark.torch
@pytest.mark.parametrize("value", [
    "np.arange(3)", "np.float32(2)", "[np.zeros(2), 1]", "(np.zeros(1), 'a')", "{'a': np.ones(1, np.int8)}",
    "Point(np.zeros(1), 2)", "np.array(['x'])", "'text'", "3"])
def test_default_convert_matches_torch(value):
    torch = pytest.importorskip("torch")
    ours = _shape_of(default_convert(eval(value, {"np": np, "Point": Point})), tm)
    theirs = _shape_of(torch.utils.data.default_convert(eval(value, {"np": np, "Point": Point})), torch)
    if value == "np.array(['x'])":
        assert ours[0] == theirs[0] == "ndarray"
    else:
        assert ours == theirs


def test_collate_error_messages():
    with pytest.raises(RuntimeError, match="^each element in list of batch should be of equal size$"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="^default_collate: batch must contain tensors, numpy arrays, numbers, "
                                        "dicts or lists; found <class 'object'>$"):
        default_collate([object()])
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got \[2\] at entry 0 "
                                           r"and \[3\] at entry 1"):
        default_collate([tm.ones(2), tm.ones(3)])


# -- samplers -------------------------------------------------------------------------------------------------

def test_samplers_basic_orders():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3] and len(SequentialSampler(range(4))) == 4
    order = list(RandomSampler(range(6), generator=tm.Generator().manual_seed(5)))
    assert sorted(order) == list(range(6))
    assert order == tm.randperm(6, generator=tm.Generator().manual_seed(5)).tolist()
    more = list(RandomSampler(range(3), num_samples=8, generator=tm.Generator().manual_seed(0)))
    assert len(more) == 8 and sorted(more[:3]) == sorted(more[3:6]) == [0, 1, 2] and set(more[6:]) <= {0, 1, 2}
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=100, generator=tm.Generator().manual_seed(0)))
    assert len(drawn) == 100 and set(drawn) == {0, 1, 2}
    assert len(RandomSampler(range(3), replacement=True, num_samples=10)) == 10
    assert sorted(SubsetRandomSampler([10, 20, 30])) == [10, 20, 30] and len(SubsetRandomSampler([1, 2])) == 2
    weighted = list(WeightedRandomSampler([0., 0.5, 0.5], 50, generator=tm.Generator().manual_seed(0)))
    assert len(weighted) == 50 and set(weighted) == {1, 2}
    assert sorted(WeightedRandomSampler([1., 1., 1.], 3, replacement=False)) == [0, 1, 2]
    assert list(BatchSampler(range(5), 2, True)) == [[0, 1], [2, 3]] and len(BatchSampler(range(5), 2, True)) == 2
    assert len(BatchSampler(range(5), 2, False)) == 3
    with pytest.raises(NotImplementedError):
        iter(Sampler())


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "S.RandomSampler(range(3), replacement=1)",
    "S.RandomSampler(range(3), num_samples=0)",
    "S.RandomSampler(range(3), num_samples=2.5)",
    "S.RandomSampler([], replacement=False)",
    "S.WeightedRandomSampler([1., 2.], 0)",
    "S.WeightedRandomSampler([1., 2.], 2, replacement=0)",
    "S.WeightedRandomSampler([[1., 2.]], 2)",
    "S.BatchSampler(range(3), 0, False)",
    "S.BatchSampler(range(3), True, False)",
    "S.BatchSampler(range(3), 2, None)",
    "S.TensorDataset(L.ones(2), L.ones(3))",
    "S.ConcatDataset([])",
    "S.ConcatDataset([ITERABLE])",
    "S.ConcatDataset([[1, 2]])[-3]",
    "S.random_split(range(5), [2, 2])",
    "S.random_split(range(5), [0.5, 1.5])",
    "S.Dataset()[0]",
    "S.Sampler([1, 2])",
])
def test_sampler_and_dataset_errors_match_torch(expression):
    torch = pytest.importorskip("torch")

    def outcome(lib, iterable):
        try:
            eval(expression, {"S": lib.utils.data, "L": lib, "ITERABLE": iterable})
        except Exception as e:
            return type(e), str(e)
        return None

    ours, theirs = outcome(tm, _Count(3)), outcome(torch, _iterable_for(torch))
    assert theirs is not None and ours == theirs


# -- datasets ---------------------------------------------------------------------------------------------------

def test_datasets():
    ds = _tiny()
    x, y = ds[3]
    assert x.tolist() == [6., 7.] and y.item() == 3 and len(ds) == 5
    cat = ConcatDataset([[1, 2], [3, 4, 5]])
    assert [cat[i] for i in range(5)] == [1, 2, 3, 4, 5] and cat[-1] == 5 and cat.cumulative_sizes == [2, 5]
    assert len(ds + ds) == 10 and (ds + ds)[7][1].item() == 2
    sub = Subset(ds, [4, 0])
    assert len(sub) == 2 and sub[0][1].item() == 4 and sub[[1, 0]][1].tolist() == [0, 4]
    assert [s[1].item() for s in sub.__getitems__([1, 0])] == [0, 4]


@pytest.mark.torch
@pytest.mark.parametrize("lengths", [[0.5, 0.5], [0.33, 0.33, 0.34], [0.1] * 10, [3, 7], [0.7, 0.2, 0.1],
                                     [1.0, 0.0]])
def test_random_split_lengths_match_torch(lengths):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as ours_warnings:
        warnings.simplefilter("always")
        parts = random_split(range(10), lengths, generator=tm.Generator().manual_seed(0))
    with warnings.catch_warnings(record=True) as torch_warnings:
        warnings.simplefilter("always")
        theirs = torch.utils.data.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [len(p) for p in theirs]
    assert sorted(i for p in parts for i in p) == list(range(10))
    assert [str(w.message) for w in ours_warnings] == [str(w.message) for w in torch_warnings]


def test_random_split_is_reproducible_and_uses_the_default_generator():
    a = [list(p) for p in random_split(range(8), [5, 3], generator=tm.Generator().manual_seed(4))]
    b = [list(p) for p in random_split(range(8), [5, 3], generator=tm.Generator().manual_seed(4))]
    assert a == b
    tm.manual_seed(9)
    c = [list(p) for p in random_split(range(8), [5, 3])]
    tm.manual_seed(9)
    assert c == [list(p) for p in random_split(range(8), [5, 3])]

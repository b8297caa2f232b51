"""Differences from PyTorch a differential fuzzer found, pinned: flattening tensors with a
size-0 dimension, ``unique``'s dtypes and methods, ``nanmean``'s dtype check, ``unfold``'s
edge cases, ``binary_cross_entropy``'s range checks, index errors, reflected operators with
unsupported operands, out-of-range fill values and a few values at the edges (``logit``,
float16 products, ``mode`` with NaN, complex NaN/Inf, ``median`` of empty tensors).

Each case asserts exact values (so it runs without PyTorch); the cases marked ``torch``
also run the same expression on PyTorch and compare.
"""

from __future__ import annotations

import warnings

import pytest

import tensormodes as tm

from .torch_oracle import assert_same_outcome


def _error(expression: str, library=tm):
    """(type name, message) of what ``expression`` (over ``L``) raises, or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eval(expression, {"L": library, "nan": float("nan"), "inf": float("inf")})
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error).replace("torch.", "tensormodes.")
    return None


def assert_same_error_up_to_trace(expression: str) -> None:
    """Like PyTorch's error, whose message may go on with a C++ stack trace we do not print."""
    import torch

    ours, theirs = _error(expression), _error(expression, torch)
    assert ours is not None and theirs is not None, (ours, theirs)
    assert ours[0] == theirs[0], (ours, theirs)
    assert theirs[1].split("\nException raised from")[0] == ours[1], (ours, theirs)


# -- 1. flatten / unflatten / view / reshape with size-0 dimensions ----------------------

@pytest.mark.parametrize(("make", "shape"), [
    (lambda: tm.zeros(0, 5).flatten(1), (0, 5)),
    (lambda: tm.zeros(5, 0).flatten(0, 0), (5, 0)),
    (lambda: tm.zeros(5, 0, 3).flatten(-1), (5, 0, 3)),
    (lambda: tm.zeros(2, 3, 0, 4).flatten(0, 1), (6, 0, 4)),
    (lambda: tm.zeros(0, 3, 4).flatten(1), (0, 12)),
    (lambda: tm.zeros(3, 0, 4).flatten(0, 1), (0, 4)),
    (lambda: tm.zeros(0, 5).t().flatten(0, 0), (5, 0)),
    (lambda: tm.nn.Flatten()(tm.zeros(0, 3, 4)), (0, 12)),
    (lambda: tm.zeros(0, 3, 4, device="meta").flatten(1), (0, 12)),
    (lambda: tm.zeros(0, 5, device="meta").flatten(1), (0, 5)),
])
def test_flatten_keeps_the_other_dimensions_of_an_empty_tensor(make, shape):
    assert make().shape == shape


def test_flatten_of_an_empty_batch_feeds_linear():
    out = tm.nn.functional.linear(tm.nn.Flatten()(tm.zeros(0, 3, 4)), tm.zeros(2, 12))
    assert out.shape == (0, 2)
    assert tm.zeros(0, 3, 4).flatten(1).stride() == (12, 1)


@pytest.mark.parametrize(("expression", "message"), [
    ("L.zeros(0, 5).unflatten(0, (0, -1))", "unflatten got an unexpected error:\ncannot reshape tensor of 0 "
     "elements into shape [0, -1] because the unspecified dimension size -1 can be any value and is ambiguous"),
    ("L.zeros(2, 3).unflatten(1, (-1, -1))", "unflatten got an unexpected error:\nonly one dimension can be inferred"),
    ("L.zeros(2, 4).unflatten(1, (2, -3))",
     "unflatten got an unexpected error:\ninvalid shape dimension -3 at index 1 of shape [2, -3]"),
    ("L.zeros(()).unflatten(0, (1,))",
     "unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions"),
    ("L.zeros(2, 3).unflatten(1, (-1, 2))",
     "unflatten: Provided sizes [-1, 2] don't multiply up to the size of dim 1 (3) in the input tensor"),
])
def test_unflatten_errors(expression, message):
    assert _error(expression) == ("RuntimeError", message)


UNFLATTEN_CASES = [
    "L.zeros(0, 5).unflatten(0, (0, -1))", "L.zeros(2, 3).unflatten(1, (-1, -1))",
    "L.zeros(2, 4).unflatten(1, (2, -3))",
    "L.zeros(()).unflatten(0, (1,))", "L.zeros(()).unflatten(-1, (-1,))", "L.zeros(2, 0).unflatten(1, (2, 0, -1))",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", UNFLATTEN_CASES)
def test_unflatten_errors_like_torch(expression):
    assert_same_error_up_to_trace(expression)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.zeros(0, 5).flatten(1)", "L.zeros(5, 0, 3).flatten(0, 0)", "L.zeros(5, 0, 3).flatten(2, 2)",
    "L.zeros(2, 3, 0, 4).flatten(0, 1)", "L.zeros(2, 3, 0, 4).flatten(3)", "L.zeros(0, 5).t().flatten(0, 0)",
    "L.zeros(0, 3, 4).flatten(1).stride()", "L.zeros(3, 0, 4).flatten(1, 2).stride()",
    "L.nn.Flatten()(L.zeros(0, 3, 4))", "L.nn.Unflatten(1, (3, 4))(L.zeros(0, 12))",
    "L.nn.functional.linear(L.nn.Flatten()(L.zeros(0, 3, 4)), L.zeros(2, 12))",
    "L.zeros(0, 5).unflatten(0, (-1, 3))", "L.zeros(0, 5).unflatten(1, (-1, 5))", "L.zeros(4, 0).unflatten(1, (5, -1))",
    "L.zeros(0, 5).view(-1, 5)", "L.zeros(0, 5).view(-1, 0)", "L.zeros(0, 5).view(3, 0, -1)",
    "L.zeros(0, 5).view(0, 7)",
    "L.zeros(0, 5).reshape(5, 0, -1)", "L.zeros(0, 5).reshape(-1, -1)", "L.zeros(3, 0).reshape(0, -1)",
    "L.zeros(0, 5).reshape(0, -2)", "L.reshape(L.zeros(0, 5), (2, -1, 5))",
])
def test_zero_size_reshapes_like_torch(expression):
    assert_same_outcome(expression)


# -- 2. unique keeps the dtype, and is a method -------------------------------------------

@pytest.mark.parametrize("dtype", [tm.bfloat16, tm.float16, tm.float64])
def test_unique_keeps_the_floating_dtype(dtype):
    values, inverse, counts = tm.unique(tm.tensor([3.0, 1.0, 3.0], dtype=dtype), return_inverse=True,
                                        return_counts=True)
    assert values.dtype is dtype and values.tolist() == [1.0, 3.0]
    assert inverse.dtype is tm.int64 and inverse.tolist() == [1, 0, 1] and counts.tolist() == [1, 2]
    assert tm.unique(tm.tensor([[3.0], [3.0]], dtype=dtype), dim=0).dtype is dtype
    assert tm.unique_consecutive(tm.tensor([3.0, 3.0], dtype=dtype)).dtype is dtype


def test_unique_and_unique_consecutive_are_methods():
    x = tm.tensor([3, 3, 1, 3])
    assert x.unique().tolist() == [1, 3]
    values, inverse = x.unique(True, True)
    assert inverse.tolist() == [1, 1, 0, 1]
    assert [t.tolist() for t in x.unique_consecutive(True, True)] == [[3, 1, 3], [0, 0, 1, 2], [2, 1, 1]]
    seen = []

    class Names(tm.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(tm.overrides.resolve_name(func))
            return func(*args, **(kwargs or {}))

    with Names():
        x.unique(return_counts=True)
        x.unique_consecutive()
    assert seen == ["tensormodes.Tensor.unique", "tensormodes.Tensor.unique_consecutive"]


@pytest.mark.parametrize(("expression", "error"), [
    ("L.unique(L.tensor(3), dim=0)", ("IndexError", "Dimension specified as 0 but tensor has no dimensions")),
    ("L.unique(L.zeros(0, 3), dim=1)", ("RuntimeError", "There are 0 sized dimensions, and they aren't selected, "
                                                        "so unique cannot be applied")),
    ("L.unique(L.zeros(0, 0), dim=1)", ("RuntimeError", "Number of zero sized dimensions is more than one, so "
                                                        "unique cannot be applied ")),
    ("L.unique(L.tensor([1j]), dim=0)", ("NotImplementedError", "\"unique_dim\" not implemented for 'ComplexFloat'")),
    ("L.unique_consecutive(L.tensor([1j]))", ("NotImplementedError", "\"unique\" not implemented for 'ComplexFloat'")),
])
def test_unique_errors(expression, error):
    assert _error(expression) == error


def test_unique_along_an_empty_dimension():
    values, inverse, counts = tm.unique(tm.zeros(0, 3), dim=0, return_inverse=True, return_counts=True)
    assert values.shape == (0, 3) and inverse.shape == (0,) and counts.shape == (0,) and counts.dtype is tm.int64
    assert tm.unique_consecutive(tm.zeros(2, 0, 3), dim=1).shape == (2, 0, 3)


UNIQUE_CASES = [
    f"L.unique(L.tensor([3., nan, 1., nan, 3.], dtype=L.{d}), return_inverse=True, return_counts=True)"
    for d in ("bfloat16", "float16", "float32", "float64")
] + [
    f"L.unique(L.tensor([3, 1, 3], dtype=L.{d}), sorted=False, return_inverse=True, return_counts=True)"
    for d in ("uint8", "int8", "int16", "int32", "int64")
] + [
    "L.unique(L.tensor([True, False, True]), return_inverse=True, return_counts=True)",
    "L.unique(L.tensor([[True, False], [True, False]]), dim=0, return_inverse=True, return_counts=True)",
    "L.unique(L.tensor([[3., 1.], [3., 1.]], dtype=L.bfloat16), dim=1, return_inverse=True, return_counts=True)",
    "L.unique(L.tensor(3), return_inverse=True, return_counts=True)", "L.unique(L.tensor(3), dim=-1)",
    "L.unique(L.zeros(0, 3), dim=0, return_inverse=True, return_counts=True)", "L.unique(L.zeros(0, 3), dim=1)",
    "L.unique(L.zeros(0, 0), dim=1)", "L.unique(L.tensor([1j]), dim=0)", "L.unique(L.tensor([1j]))",
    "L.tensor([3, 1, 3]).unique(sorted=False, return_inverse=True, dim=0)",
    "L.tensor([3, 3, 1, 3]).unique_consecutive(return_counts=True, dim=0)",
    "L.unique_consecutive(L.tensor([3., 3., 1.], dtype=L.bfloat16), return_inverse=True, return_counts=True)",
    "L.unique_consecutive(L.tensor([[1, 1], [1, 1], [2, 2]], dtype=L.int8), dim=1, return_inverse=True)",
    "L.unique_consecutive(L.tensor([1j]))", "L.unique_consecutive(L.tensor(3), dim=0)",
    "L.unique_consecutive(L.zeros(0, 2), dim=0, return_inverse=True, return_counts=True)",
    "L.unique_consecutive(L.zeros(2, 0), dim=0)",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", UNIQUE_CASES)
def test_unique_like_torch(expression):
    assert_same_outcome(expression)


# -- 3. nanmean's dtype must be floating point or complex -----------------------------------

@pytest.mark.parametrize(("dtype", "name"), [(tm.int64, "Long"), (tm.int32, "Int"), (tm.bool, "Bool"),
                                             (tm.uint8, "Byte")])
def test_nanmean_refuses_an_integer_dtype(dtype, name):
    message = ("nanmean(): could not infer output dtype. Optional dtype must be either a floating point or complex "
               f"dtype. Got: {name}")
    for x in (tm.tensor([1.0, 2.0]), tm.tensor([1.0, 2.0], device="meta")):
        with pytest.raises(RuntimeError) as caught:
            tm.nanmean(x, dtype=dtype)
        assert str(caught.value) == message
    with pytest.raises(RuntimeError, match="Got: Long"):
        tm.tensor([1.0, 2.0]).nanmean(0, dtype=tm.int64)
    with pytest.raises(RuntimeError, match="expected input to have floating point or complex dtype but got Long"):
        tm.nanmean(tm.tensor([1, 2]), dtype=tm.int64)  # the input's check comes first


def test_nanmean_into_a_complex_or_integer_dtype_has_no_kernel():
    with pytest.raises(NotImplementedError, match="\"nansum_cpu\" not implemented for 'ComplexFloat'"):
        tm.nanmean(tm.tensor([1.0, 2.0]), dtype=tm.complex64)
    with pytest.raises(NotImplementedError, match="\"nansum_cpu\" not implemented for 'Long'"):
        tm.nanmean(tm.tensor([1.0, 2.0]), out=tm.zeros((), dtype=tm.int64))
    assert tm.nansum(tm.tensor([1, 2]), dtype=tm.complex128).item() == 3 + 0j
    assert tm.nanmean(tm.tensor([1.0, 2.0]), dtype=tm.float16).dtype is tm.float16


MEAN_CASES = [
    f"L.{f}(L.tensor([1., 2.]){d}, dtype=L.{t})"
    for f in ("mean", "nanmean") for d in ("", ", 0") for t in ("int64", "int32", "bool", "uint8", "float16",
                                                                "bfloat16", "float64", "complex64")
] + [
    "L.nanmean(L.tensor([1, 2]))", "L.nanmean(L.tensor([True, False]), dtype=L.float32)", "L.mean(L.tensor([1, 2]))",
    "L.mean(L.tensor([1, 2]), 0)", "L.mean(L.tensor([1, 2]), dtype=L.float16)", "L.mean(L.tensor([True]))",
    "L.mean(L.tensor([1, 2]), dtype=L.complex128)", "L.nanmean(L.tensor([1.+1j, 2.]), dtype=L.complex128)",
    "L.nansum(L.tensor([1., 2.]), dtype=L.complex64)", "L.nansum(L.tensor([1, 2]), dtype=L.complex128)",
    "L.nanmean(L.tensor([1., 2.]), out=L.zeros((), dtype=L.int64))",
    "L.nanmean(L.tensor([1., 2.]), 0, out=L.zeros((), dtype=L.complex64))",
    "L.nanmean(L.tensor([1., 2.]), out=L.zeros((), dtype=L.float16))", "L.nanmean(L.zeros(0, dtype=L.int64))",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", MEAN_CASES)
def test_mean_dtypes_like_torch(expression):
    assert_same_outcome(expression)


# -- 4. unfold's edge cases ---------------------------------------------------------------

def test_unfold_of_a_scalar_has_a_window_of_the_given_size():
    assert tm.zeros(()).unfold(0, 0, 1).shape == (0,)
    assert tm.tensor(5.0).unfold(0, 0, 2).tolist() == []
    assert tm.tensor(5.0).unfold(-1, 1, 3).tolist() == [5.0]
    meta = tm.zeros((), device="meta").unfold(0, 0, 1)
    assert meta.shape == (0,) and meta.stride() == (1,)
    x = tm.tensor(5.0)
    x.unfold(0, 1, 1)[0] = 7.0  # still a view
    assert x.item() == 7.0


@pytest.mark.parametrize(("expression", "error"), [
    ("L.zeros(()).unfold(0, 2, 1)", ("RuntimeError", "maximum size for tensor at dimension 0 is 1 but size is 2")),
    ("L.arange(5).unfold(0, 2, 1.5)", ("TypeError", "unfold(): argument 'step' (position 3) must be int, not float")),
    ("L.arange(5).unfold(0, 2.0, 1)", ("TypeError", "unfold(): argument 'size' (position 2) must be int, not float")),
    ("L.arange(5).unfold(0, 2, 0)", ("RuntimeError", "step is 0 but must be > 0")),
])
def test_unfold_errors(expression, error):
    assert _error(expression) == error


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.zeros(()).unfold(0, 0, 1)", "L.zeros(()).unfold(0, 1, 2)", "L.zeros(()).unfold(0, 2, 1)",
    "L.zeros(()).unfold(1, 1, 1)", "L.zeros(()).unfold(0, -1, 1)", "L.zeros(()).unfold(0, 1, 0)",
    "L.zeros(()).unfold(0, 0, 1).stride()", "L.arange(5).unfold(0, 0, 10)", "L.arange(5).unfold(0, 2, 10)",
    "L.arange(5).unfold(0, 5, 10)", "L.arange(5).unfold(0, 6, 1)", "L.arange(5).unfold(0, 2, 3)",
    "L.arange(5).unfold(0, 2, -1)", "L.arange(5).unfold(-2, 1, 1)", "L.zeros(0).unfold(0, 0, 1)",
    "L.zeros(0).unfold(0, 1, 1)", "L.zeros(0, 3).unfold(1, 2, 1)", "L.zeros(2, 0).unfold(1, 0, 3)",
    "L.arange(6).view(2, 3).unfold(1, 0, 1).stride()", "L.arange(6).view(2, 3).t().unfold(0, 2, 1).stride()",
    "L.arange(5).unfold(0, 2, 1.5)", "L.arange(5).unfold(0, 2.0, 1)",
])
def test_unfold_like_torch(expression):
    assert_same_outcome(expression)


# -- 5. binary_cross_entropy checks that probabilities are probabilities ------------------------

BCE = "L.nn.functional.binary_cross_entropy"


@pytest.mark.parametrize(("expression", "which"), [
    (f"{BCE}(L.tensor([0.5, 0.5]), L.tensor([2., 0.]))", "target"),
    (f"{BCE}(L.tensor([0.5, 0.5]), L.tensor([-0.1, 0.]), reduction='none')", "target"),
    (f"{BCE}(L.tensor([0.5, 0.5]), L.tensor([nan, 0.]), reduction='sum')", "target"),
    (f"{BCE}(L.tensor([0.5, 0.5]), L.tensor([2., 0.]), weight=L.tensor([1., 2.]))", "target"),
    (f"{BCE}(L.tensor(0.3), L.tensor(1.5))", "target"),
    (f"{BCE}(L.tensor([nan, 0.5]), L.tensor([1., 0.]))", "input"),
    (f"{BCE}(L.tensor([-0.5, 0.5]), L.tensor([1., 0.]))", "input"),
    (f"{BCE}(L.tensor([1.5, 0.5]), L.tensor([2., 0.]))", "input"),  # element by element, input first
    (f"{BCE}(L.tensor([0.5, 1.5]), L.tensor([2., 0.]))", "target"),
    (f"{BCE}(L.tensor([0.2, 0.7], dtype=L.float16), L.tensor([2., 1.0], dtype=L.float16))", "target"),
    ("L.nn.BCELoss()(L.tensor([0.5, 0.5]), L.tensor([2., 0.]))", "target"),
])
def test_binary_cross_entropy_range_errors(expression, which):
    assert _error(expression) == ("RuntimeError", f"all elements of {which} should be between 0 and 1")


def test_binary_cross_entropy_values():
    F = tm.nn.functional
    x, y = tm.tensor([0.2, 0.7]), tm.tensor([0.3, 0.9])
    assert F.binary_cross_entropy(x, y).item() == 0.5402183532714844  # PyTorch's bits
    assert F.binary_cross_entropy(x, y, reduction="none").tolist() == [0.6390318870544434, 0.4414047598838806]
    assert F.binary_cross_entropy(tm.tensor([0.0, 1.0]), tm.tensor([1.0, 0.0]), reduction="none").tolist() == \
        [100.0, 100.0]
    assert F.binary_cross_entropy(tm.zeros(0), tm.zeros(0)).isnan().item()
    assert F.binary_cross_entropy(tm.zeros(0), tm.zeros(0), reduction="sum").item() == 0.0
    half = F.binary_cross_entropy(tm.tensor([0.2, 0.7], dtype=tm.float16), tm.tensor([0.3, 1.0], dtype=tm.float16),
                                  reduction="none")
    assert half.dtype is tm.float16 and half.tolist() == [0.63916015625, 0.3564453125]  # rounded step by step


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    f"{BCE}(L.tensor([0.5, 0.5]), L.tensor([2., 0.]))", f"{BCE}(L.tensor([nan, 0.5]), L.tensor([1., 0.]))",
    f"{BCE}(L.tensor([1.5, 0.5]), L.tensor([2., 0.]))", f"{BCE}(L.tensor([0.5, 1.5]), L.tensor([2., 0.]))",
    f"{BCE}(L.tensor([0., 1.]), L.tensor([1., 0.]))", f"{BCE}(L.tensor([0., 1.]), L.tensor([0., 1.]))",
    f"{BCE}(L.tensor([0.5, 0.5]), L.tensor([1., 0.]), weight=L.tensor([-1., 2.]))",
    f"{BCE}(L.tensor([0.5, 0.5]), L.tensor([1., 0.]), weight=L.tensor([nan, 2.]), reduction='none')",
    f"{BCE}(L.tensor([0.5, 0.5]), L.tensor([1., 0.]), weight=L.tensor([3.]), reduction='sum')",
    f"{BCE}(L.tensor([0.2, 0.7]), L.tensor([0.3, 0.9]))",
    f"{BCE}(L.tensor([0.2, 0.7], dtype=L.float64), L.tensor([0.3, 1.0], dtype=L.float64), reduction='none')",
    f"{BCE}(L.tensor([0.2, 0.7], dtype=L.float16), L.tensor([0.3, 1.0], dtype=L.float16), reduction='none')",
    f"{BCE}(L.tensor([0.2, 0.7], dtype=L.bfloat16), L.tensor([0.3, 1.0], dtype=L.bfloat16))",
    f"{BCE}(L.tensor([1e-30, 1-1e-8]), L.tensor([1., 0.]), reduction='none')",
    f"{BCE}(L.zeros(0), L.zeros(0))", f"{BCE}(L.zeros(0), L.zeros(0), reduction='sum')",
    f"{BCE}(L.tensor([1.5, 0.5]), L.tensor([1., 0.]), reduction='bad')",
    "L.nn.BCELoss(weight=L.tensor([1., 2.]))(L.tensor([0.5, 0.5]), L.tensor([2., 0.]))",
])
def test_binary_cross_entropy_like_torch(expression):
    assert_same_outcome(expression)


# -- 6. index errors in PyTorch's words, not NumPy's ------------------------------------------

@pytest.mark.parametrize(("expression", "error"), [
    ("L.arange(4.).index_select(0, L.tensor([4]))", ("IndexError", "index out of range in self")),
    ("L.arange(4.).index_select(0, L.tensor([-1]))", ("IndexError", "index out of range in self")),
    ("L.zeros(()).index_select(0, L.tensor([1]))", ("IndexError", "index out of range in self")),
    ("L.zeros(2, 3, 4).index_select(2, L.tensor([-1]))", ("IndexError", "index out of range in self")),
    # PyTorch's kernel for dim 1 (and for empty tensors) words it its own way
    ("L.zeros(2, 3).index_select(1, L.tensor([3]))",
     ("RuntimeError", "INDICES element is out of DATA bounds, id=3 axis_dim=3")),
    ("L.zeros(0, 3).index_select(0, L.tensor([0]))",
     ("RuntimeError", "index_select(): self indexing axis dim should be positive")),
    ("L.zeros(4).index_add(0, L.tensor([4]), L.ones(1))", ("IndexError", "index out of range in self")),
    ("L.zeros(2, 3).index_add(1, L.tensor([-1]), L.ones(2, 1))",
     ("RuntimeError", "index -1 is out of bounds for dimension 1 with size 3")),
    ("L.zeros(2, 3, 4).index_add(1, L.tensor([3]), L.ones(2, 1, 4))", ("IndexError", "index out of range in self")),
    ("L.take(L.zeros(0), L.tensor([0]))", ("IndexError", "take(): tried to take from an empty tensor")),
    ("L.take_along_dim(L.arange(6.).view(2, 3), L.tensor([5, -6]))",
     ("RuntimeError", "index -6 is out of bounds for dimension 0 with size 6")),
    ("L.take_along_dim(L.zeros(()), L.tensor(1), 0)",
     ("IndexError", "Dimension specified as 0 but tensor has no dimensions")),
    ("L.take_along_dim(L.zeros(2, 0), L.tensor([[0]]), 1)", ("RuntimeError", "ZeroDivisionError")),
    ("L.nn.functional.embedding(L.tensor([4]), L.zeros(4, 2))", ("IndexError", "index out of range in self")),
    ("L.nn.functional.embedding(L.tensor([1, 7, 5]), L.zeros(4, 2), max_norm=1.0)",
     ("IndexError", "select(): index 5 out of range for tensor of size [4, 2] at dimension 0")),
    ("L.nn.functional.embedding_bag(L.tensor([1, 5, -1]), L.zeros(4, 2), L.tensor([0]), mode='max')",
     ("RuntimeError", "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 5")),
])
def test_index_errors(expression, error):
    assert _error(expression) == error


def test_index_ops_edge_values():
    x = tm.arange(6.0).view(2, 3) + 1
    # along a dim, PyTorch's take_along_dim takes indices modulo the size
    assert tm.take_along_dim(x, tm.tensor([[-4], [5]]), 1).tolist() == [[3.0], [6.0]]
    assert tm.zeros(0, 3).index_add(0, tm.tensor([0]), tm.ones(1, 3)).shape == (0, 3)


def test_embedding_max_norm_errors_leave_the_weight_alone():
    weight = tm.ones(4, 2) * 3
    with pytest.raises(IndexError, match="index out of range in self"):
        tm.nn.functional.embedding(tm.tensor([-1, 2]), weight, max_norm=1.0)
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        tm.nn.functional.embedding_bag(tm.tensor([1, 2]), weight, tm.tensor([1]), max_norm=1.0)
    assert weight.tolist() == [[3.0, 3.0]] * 4


INDEX_CASES = [line for line in """
L.arange(4.).index_select(0, L.tensor([4]))
L.arange(4.).index_select(0, L.tensor([-5]))
L.zeros(0).index_select(0, L.tensor([0]))
L.zeros(()).index_select(0, L.tensor([-1]))
L.zeros(2, 3).t().index_select(1, L.tensor([3]))
L.zeros(2, 3).t().index_select(0, L.tensor([3]))
L.zeros(3, 0).index_select(0, L.tensor([5]))
L.zeros(2, 0).index_select(1, L.tensor([5]))
L.zeros(2, 3, 4).index_select(1, L.tensor([3]))
L.zeros(2, 3, 4).index_select(0, L.tensor([2]))
L.zeros(2, 3).index_select(1, L.tensor([3, -1]))
L.zeros(2, 3, dtype=L.bool).index_select(0, L.tensor([3]))
L.arange(4.).gather(0, L.tensor([-1]))
L.zeros(2, 3).gather(1, L.tensor([[-4]]))
L.zeros(()).gather(0, L.tensor(1))
L.zeros(2, 3).scatter(1, L.tensor([[3]]), 1.)
L.zeros(2, 3).scatter(1, L.tensor([[-1]]), L.ones(1, 1))
L.zeros(2, 3).scatter_add(1, L.tensor([[3]]), L.ones(1, 1))
L.zeros(()).scatter(0, L.tensor(-1), 1.)
L.zeros(4).index_add(0, L.tensor([-5]), L.ones(1))
L.zeros(4, dtype=L.int64).index_add(0, L.tensor([4]), L.ones(1, dtype=L.int64), alpha=2)
L.zeros(2, 3).index_add(0, L.tensor([-1]), L.ones(1, 3))
L.zeros(2, 3, 4, 5).index_add(2, L.tensor([4]), L.ones(2, 3, 1, 5))
L.zeros(2, 3, 4, 5).index_add(3, L.tensor([5]), L.ones(2, 3, 4, 1))
L.zeros(()).index_add(0, L.tensor([1]), L.ones(()))
L.zeros(0, 3).index_add(0, L.tensor([0]), L.ones(1, 3))
L.zeros(4).index_copy(0, L.tensor([4]), L.ones(1))
L.zeros(2, 3).index_copy(1, L.tensor([-1]), L.ones(2, 1))
L.zeros(4).index_fill(0, L.tensor([-1]), 1.)
L.zeros(4).index_fill(0, L.tensor([-5]), 1.)
L.zeros(2, 4).index_fill(1, L.tensor([4]), 1.)
L.zeros(()).index_fill(0, L.tensor([-2]), 1.)
L.take(L.arange(4.), L.tensor([4]))
L.take(L.arange(4.), L.tensor([-5]))
L.take(L.zeros(0), L.tensor([0]))
L.take(L.zeros(()), L.tensor([-2]))
L.take_along_dim(L.arange(4.), L.tensor([-1]))
L.take_along_dim(L.arange(4.) + 1, L.tensor([-5]), 0)
L.take_along_dim(L.arange(6.).view(2, 3) + 1, L.tensor([[-4], [5]]), 1)
L.take_along_dim(L.zeros(2, 0), L.tensor([[0]]), 1)
L.take_along_dim(L.zeros(0, 3), L.tensor([[1]]), 1)
L.take_along_dim(L.zeros(()), L.tensor(-1))
L.take_along_dim(L.zeros(()), L.tensor(3), 0)
L.nn.functional.embedding(L.tensor([4]), L.zeros(4, 2))
L.nn.functional.embedding(L.tensor([-1]), L.zeros(4, 2))
L.nn.functional.embedding(L.tensor([4]), L.zeros(4, 2), padding_idx=0)
L.nn.functional.embedding(L.tensor([4]), L.zeros(4, 2), max_norm=1.0)
L.nn.functional.embedding(L.tensor([-1, 7]), L.zeros(4, 2), max_norm=1.0)
L.nn.functional.embedding(L.tensor([-5]), L.zeros(4, 2), max_norm=1.0)
L.nn.functional.embedding_bag(L.tensor([4]), L.zeros(4, 2), L.tensor([0]))
L.nn.functional.embedding_bag(L.tensor([-1]), L.zeros(4, 2), L.tensor([0]), mode='max')
L.nn.functional.embedding_bag(L.tensor([[1, 5], [-1, 0]]), L.zeros(4, 2), mode='max')
L.nn.functional.embedding_bag(L.tensor([5]), L.zeros(4, 2), L.tensor([0]), max_norm=1.0)
""".splitlines() if line]


@pytest.mark.torch
@pytest.mark.parametrize("expression", INDEX_CASES)
def test_index_errors_like_torch(expression):
    assert_same_outcome(expression)


# -- 7. reflected operators with operands they do not take ------------------------------------

@pytest.mark.parametrize(("make", "message"), [
    (lambda: 2 @ tm.tensor([1.0, 2.0]), "unsupported operand type(s) for @: 'int' and 'Tensor'"),
    (lambda: 2.5 @ tm.tensor([1.0, 2.0]), "unsupported operand type(s) for @: 'float' and 'Tensor'"),
    (lambda: tm.tensor([1.0, 2.0]) @ 2, "unsupported operand type(s) for @: 'Tensor' and 'int'"),
    (lambda: "a" + tm.tensor([1.0, 2.0]), 'can only concatenate str (not "Tensor") to str'),
    (lambda: None * tm.tensor([1.0, 2.0]), "unsupported operand type(s) for *: 'NoneType' and 'Tensor'"),
])
def test_unsupported_operands_raise_pythons_type_error(make, message):
    with pytest.raises(TypeError) as caught:
        make()
    assert str(caught.value) == message


def test_reflected_matmul_under_a_mode():
    seen = []

    class Names(tm.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(tm.overrides.resolve_name(func))
            return func(*args, **(kwargs or {}))

    x = tm.tensor([1.0, 2.0])
    with Names(), pytest.raises(TypeError, match="unsupported operand type"):
        2 @ x
    assert set(seen) == {"tensormodes.Tensor.__rmatmul__"}
    assert (tm.tensor([[1.0, 2.0]]).__rmatmul__(tm.tensor([[3.0], [4.0]]))).tolist() == [[3.0, 6.0], [4.0, 8.0]]


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "(lambda: 2 @ L.tensor([1., 2.]))()", "(lambda: L.tensor([1., 2.]) @ 2)()", "(lambda: 2.5 @ L.tensor([1., 2.]))()",
    "(lambda: [1., 2.] @ L.tensor([1., 2.]))()", "(lambda: 'a' + L.tensor([1., 2.]))()",
    "(lambda: None * L.tensor([1., 2.]))()", "(lambda: None - L.tensor([1., 2.]))()",
    "(lambda: 'a' / L.tensor([1., 2.]))()", "(lambda: None ** L.tensor([1., 2.]))()",
    "(lambda: None & L.tensor([1, 2]))()", "(lambda: None << L.tensor([1, 2]))()",
    "(lambda: L.tensor([1., 2.]) < None)()", "(lambda: object() - L.tensor([1.]))()",
    "(lambda: divmod(5, L.tensor([2.])))()",
])
def test_unsupported_operands_like_torch(expression):
    assert_same_outcome(expression)


# -- 8. numbers that do not fit the tensor's dtype ------------------------------------------------

_TYPE_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
               "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float"}


def _overflow(name):
    return ("RuntimeError", f"value cannot be converted to type {_TYPE_NAMES[name]} without overflow")


@pytest.mark.parametrize(("dtype", "value"), [
    ("int8", "1000"), ("int8", "128"), ("int8", "-129"), ("int8", "127.9"), ("int8", "nan"), ("int8", "inf"),
    ("int8", "1j"), ("uint8", "256"), ("uint8", "-256"), ("uint8", "-1.5"), ("int16", "32768"),
    ("int32", "2**31"), ("int32", "2.0**31-0.5"), ("int64", "2**63"), ("int64", "1e20"), ("float16", "70000"),
    ("float16", "1j"), ("bfloat16", "1e39"), ("float32", "1e39"),
])
def test_filling_with_a_number_that_does_not_fit(dtype, value):
    for expression in (f"L.zeros(2, dtype=L.{dtype}).fill_({value})", f"L.full((2,), {value}, dtype=L.{dtype})",
                       f"L.zeros(2, dtype=L.{dtype}).masked_fill(L.tensor([True, False]), {value})",
                       f"L.zeros(2, dtype=L.{dtype}).new_full((3,), {value})",
                       f"L.full_like(L.zeros(2, dtype=L.{dtype}), {value})"):
        assert _error(expression) == _overflow(dtype), expression


@pytest.mark.parametrize(("expression", "error"), [
    ("L.zeros(2, dtype=L.int64).fill_(2**70)", ("OverflowError", "int too big to convert")),
    ("L.zeros(2, dtype=L.bool).fill_(2**64)", ("OverflowError", "int too big to convert")),
    ("L.full((2,), -2**63-1)", ("OverflowError", "can't convert negative int to unsigned")),
    ("L.zeros(2, dtype=L.float32).masked_fill(L.tensor([True, False]), 2**70)",
     ("OverflowError", "int too big to convert")),
    ("L.zeros(2, dtype=L.int8).mul(2**70)", ("OverflowError", "int too big to convert")),
    ("L.zeros(2, dtype=L.int8).index_fill(0, L.tensor([0]), L.tensor(1000))", _overflow("int8")),
    ("L.zeros(2, dtype=L.int8).masked_fill(L.tensor([True, False]), L.tensor(1000))", _overflow("int8")),
    ("L.zeros(2, dtype=L.float32).index_fill(0, L.tensor([0]), 1j)",
     ("RuntimeError", "index_fill_(): Converting complex Scalar to non-complex type is not supported")),
    ("L.zeros(1, dtype=L.float16).fill_(1j)", ("RuntimeError", "value cannot be converted to type double without "
                                                               "overflow")),
    ("(lambda t: t.__setitem__(0, 2**63))(L.zeros(2, dtype=L.int8))",
     ("ValueError", "Overflow when unpacking long long")),
    ("L.nn.functional.pad(L.zeros(2, dtype=L.int8), (1, 1), value=1000)", _overflow("int8")),
])
def test_out_of_range_numbers_errors(expression, error):
    assert _error(expression) == error


def test_numbers_that_fit_or_wrap_as_in_pytorch():
    assert tm.zeros(2, dtype=tm.uint8).fill_(-1).tolist() == [255, 255]  # ints wrap into unsigned types
    assert tm.zeros(2, dtype=tm.uint8).fill_(-255).tolist() == [1, 1]
    assert tm.zeros(2, dtype=tm.bool).fill_(2**63).tolist() == [True, True]
    assert tm.zeros(2, dtype=tm.int8).fill_(-128.5 + 1).tolist() == [-127, -127]  # truncated
    assert tm.zeros(1, dtype=tm.int64).fill_(2.0**63).tolist() == [-2**63]
    assert tm.zeros(2, dtype=tm.bfloat16).fill_(2**63).tolist() == [2.0**63] * 2
    # one element goes through double: float16 saturates (and so does t[i] = v)
    assert tm.zeros(1, dtype=tm.float16).fill_(70000).tolist() == [float("inf")]
    assert tm.full((1,), -1e20, dtype=tm.float16).tolist() == [float("-inf")]
    t = tm.zeros(2, dtype=tm.float16)
    t[0] = 1e20
    assert t.tolist() == [float("inf"), 0.0]
    assert tm.zeros(2, dtype=tm.int8).fill_(tm.tensor(1000)).tolist() == [-24, -24]  # a tensor value is cast
    assert tm.zeros(2, dtype=tm.int8).masked_fill(tm.tensor([True, False]), tm.tensor(1.5)).tolist() == [1, 0]


FILL_CASES = [
    f"L.zeros({n}, dtype=L.{d}).fill_({v})"
    for d in ("uint8", "int8", "int16", "int32", "int64", "bool", "float16", "bfloat16", "float32", "complex64")
    for n in ((1, 2) if d in ("float16", "bfloat16") else (2,))
    for v in ("1000", "-129", "2**63", "-2**63-1", "2**70", "-1.5", "1e20", "1e40", "float('nan')", "1j")
] + [
    f"L.{f}" for f in (
        "full((2,), 1000, dtype=L.int8)", "full((1,), 70000, dtype=L.float16)", "full((2,), 70000, dtype=L.float16)",
        "full((1,), 1j, dtype=L.float16)", "full((2,), 1e39j, dtype=L.complex64)", "full((2,), 2**63)",
        "full((2,), 2**70, dtype=L.float32)", "scalar_tensor(1e20, dtype=L.float16)", "scalar_tensor(2**70)",
        "full_like(L.zeros(1, dtype=L.float16), 1e20)", "full_like(L.zeros(2, dtype=L.float16), 1e20)",
        "zeros(2, dtype=L.uint8).masked_fill(L.tensor([True, False]), -1)",
        "zeros(2, dtype=L.int32).masked_fill(L.tensor([True, False]), 2**63)",
        "zeros(2, dtype=L.bool).index_fill(0, L.tensor([0]), 2**63)",
        "zeros(2, dtype=L.int8).index_fill(0, L.tensor([0]), 1+0j)",
        "zeros(2, dtype=L.float32).masked_fill(L.tensor([True, False]), L.tensor(1+1j))",
        "zeros(2, dtype=L.int8).masked_fill(L.tensor([True, False]), L.tensor(float('nan')))",
        "zeros(2, dtype=L.int8).fill_(L.tensor(float('nan')))", "zeros(2, dtype=L.int8).new_full((2,), 1000)",
        "nn.functional.pad(L.zeros(2, dtype=L.float16), (1, 1), value=1e20)",
        "tensor([1000], dtype=L.int8)", "tensor(2**63)", "tensor([-1], dtype=L.uint8)",
        "zeros(2, dtype=L.int8).mul(2**70)", "zeros(2, dtype=L.int16).sub(-2**63-1)", "zeros(2).clamp(max=2**70)",
    )
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", FILL_CASES)
def test_filling_like_torch(expression):
    assert_same_outcome(expression)


# -- 9. values at the edges -------------------------------------------------------------------------

def test_logit_rounds_as_pytorch():
    # the ratio in float32, then its logarithm (PyTorch's bits; in float64 throughout it would
    # be -6.906754493713379)
    assert tm.tensor([1e-3]).logit(eps=1e-6).item() == -6.906754970550537
    assert tm.tensor([1e-3]).logit().item() == -6.906754970550537
    # float16 rounds the clamp and the ratio step by step
    assert tm.tensor([0.63696169], dtype=tm.float16).logit().item() == 0.5615234375
    assert tm.tensor([0.0, 1.0, 0.5]).logit(0.25).tolist() == [-1.0986123085021973, 1.0986123085021973, 0.0]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_logit_like_torch(dtype):
    assert_same_outcome(f"L.linspace(0, 1, 101, dtype=L.{dtype}).logit()")
    assert_same_outcome(f"L.linspace(-0.1, 1.1, 61, dtype=L.{dtype}).logit(0.2)")


def test_a_fresh_empty_tensor_has_contiguous_strides():
    # NumPy allocates empty arrays with zero strides; PyTorch's are those of a contiguous tensor
    # (a size-0 dimension counted as 1), while views of empty tensors keep theirs.
    assert tm.zeros(0, 0).stride() == (1, 1)
    assert tm.empty(0, 3).stride() == (3, 1)
    assert tm.zeros(2, 0, 3).stride() == (3, 3, 1)
    assert tm.ones(0).stride() == (1,)
    assert tm.arange(6).view(2, 3).unfold(1, 0, 1).stride() == (3, 1, 1)

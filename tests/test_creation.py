"""Factories: tensors from data, filled tensors, ranges, ``*_like``.

The cross-reference cases run the same expression on tensormodes and PyTorch
and require the same dtype, shape and values (bit for bit) or the same
exception type and message.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensormodes as tm

from .torch_oracle import assert_same_outcome

# -- tensor / as_tensor / asarray / from_numpy ---------------------------------------------------

DATA_CASES = [
    "L.tensor([[1, 2], [3, 4]])", "L.tensor([1, 2.0])", "L.tensor([True, 2])", "L.tensor([1, 2j])",
    "L.tensor([[], []])", "L.tensor([])", "L.tensor((1, 2))", "L.tensor(range(3))", "L.tensor(2.5)",
    "L.tensor(3, dtype=L.bool)", "L.tensor([0.5, 0], dtype=L.bool)", "L.tensor(2**62)", "L.tensor(-2**63)",
    "L.tensor([[[1]], [[2]]])", "L.tensor([1.5], dtype=L.complex64)", "L.tensor([0.1, 0.2], dtype=L.bfloat16)",
    "L.tensor([[1, 2], [3, 4]], dtype=L.float16)",
    # elements of other kinds: NumPy scalars and arrays keep their dtype, which promotes
    "L.tensor([np.float32(1.5), 2.0])", "L.tensor([np.float16(1.5), 2])", "L.tensor([np.float16(1.5), 2.0])",
    "L.tensor([np.int8(1), True])", "L.tensor([np.uint8(1), np.int8(2)])", "L.tensor([np.bool_(True)])",
    "L.tensor([np.ones(2, np.float32), np.ones(2, np.float32)])", "L.tensor([np.ones(2), [1.0, 2.0]])",
    "L.tensor(np.ones(2, np.int32))", "L.tensor(np.array(1.5))",
    "L.tensor([L.tensor(1.0, dtype=L.float64), 2.0])", "L.tensor([L.tensor(1.0, dtype=L.float16), 2.0])",
    "L.tensor([L.tensor(True), 1])", "L.tensor([L.ones(1), L.ones(1, 1)])",
    # Python numbers into a given dtype are checked; arrays are cast
    "L.tensor([-1], dtype=L.uint8)", "L.tensor([-256], dtype=L.uint8)", "L.tensor([1.7], dtype=L.int64)",
    "L.tensor(nan, dtype=L.int64)", "L.tensor([1j], dtype=L.float32)", "L.tensor([300], dtype=L.int8)",
    "L.tensor([2**63])", "L.tensor(np.ones(2, np.float32), dtype=L.float64)",
    # malformed data
    "L.tensor([L.ones(2), L.ones(2)])", "L.tensor([1, [2]])", "L.tensor([[1, 2], [3]])", "L.tensor([[1, 2], 3])",
    "L.tensor('abc')", "L.tensor([None])", "L.tensor(None)", "L.tensor({1: 2})", "L.tensor(np.ones(2, '>f4'))",
    "L.as_tensor([1, 2], dtype=L.float64)", "L.as_tensor(np.float64(1.5))", "L.as_tensor(np.ones(2, '>f4'))",
    "L.asarray(np.float32(2))", "L.asarray(bytearray(b'ab'))", "L.asarray(bytearray(b'abcd'))",
    "L.asarray(bytearray(b'ab'), dtype=L.uint8)", "L.asarray([1, 2], copy=False)", "L.asarray([1.5, 2])",
    "L.asarray(np.ones(2), copy=False, dtype=L.float32)", "L.asarray(L.ones(2), copy=False, dtype=L.float64)",
    "L.asarray(3)", "L.from_numpy(np.float64(2))", "L.from_numpy(np.ones(2, '>f4'))", "L.from_numpy([1, 2])",
    "L.from_numpy(np.arange(6, dtype=np.int16).reshape(2, 3))",
]

FILL_CASES = [
    "L.zeros(2, 3, dtype=L.int16)", "L.zeros((2, 3))", "L.zeros([2, 3])", "L.zeros(L.Size([2]))",
    "L.zeros(np.int64(2))", "L.zeros(L.tensor(2))", "L.zeros(())", "L.zeros([])", "L.zeros([2, True])",
    "L.ones(2, 3, dtype=L.complex128)", "L.ones((1, 2), dtype=L.int32)", "L.ones(3, dtype=L.bfloat16)",
    "L.zeros(-1)", "L.zeros(2, -1)", "L.ones(-1)", "L.empty(2, -1)", "L.zeros(2.0)", "L.zeros([2, 3.0])",
    "L.zeros(2, (3,))", "L.zeros((2,), 3)", "L.zeros(True)", "L.zeros()", "L.ones(2, 2.5)", "L.empty(2.5)",
    "L.zeros(L.tensor([2, 3]))", "L.zeros(2, None)", "L.zeros('ab')", "L.zeros(np.array([2, 3]))",
    "L.full((2,), True)", "L.full((2,), 3)", "L.full((2,), 3.5)", "L.full((2,), 1j)", "L.full([], 2)",
    "L.full((2,), 3.5, dtype=L.int32)", "L.full((2,), L.tensor(3))", "L.full((2,), np.float32(3))",
    "L.full((2,), np.int32(3))", "L.full((1,), 1e40, dtype=L.float64)", "L.full((1,), 1e40, dtype=L.float16)",
    "L.full((1,), -200, dtype=L.uint8)", "L.full((1,), inf, dtype=L.float32)", "L.full([2, True], 1)",
    "L.full(2, 3)", "L.full((-1,), 1)", "L.full((1,), 2**63)", "L.full((1,), 1e40)",
    "L.full((1,), -256, dtype=L.uint8)",
    "L.full((1,), nan, dtype=L.int32)", "L.full((1,), 1j, dtype=L.bfloat16)", "L.full((1,), 300, dtype=L.int8)",
    "L.full((2, 3.0), 1)", "L.full((2,), 'a')",
    "L.full_like(L.ones(2, dtype=L.int32), 2.7)", "L.full_like(L.ones(2, dtype=L.int32), True)",
    "L.full_like(L.ones(2, dtype=L.bool), 3)", "L.full_like(L.ones(1, dtype=L.uint8), -255)",
    "L.full_like(L.ones(2, dtype=L.int32), 1j)", "L.full_like(L.ones(1, dtype=L.uint8), -256)",
    "L.zeros_like(L.ones(2, dtype=L.int32))", "L.ones_like(L.ones(2, dtype=L.int32), dtype=L.float64)",
    "L.zeros_like([1, 2])", "L.empty_like(L.ones(2, 3, dtype=L.int16)).shape",
    "L.scalar_tensor(3)", "L.scalar_tensor(True)", "L.scalar_tensor(3, dtype=L.int64)", "L.scalar_tensor(1j)",
    "L.scalar_tensor(2**70)", "L.scalar_tensor('a')",
    "L.eye(2)", "L.eye(2, 3, dtype=L.int64)", "L.eye(0)", "L.eye(2, dtype=L.bool)", "L.eye(3, dtype=L.bfloat16)",
    "L.eye(-1)", "L.eye(2, -1)", "L.eye(2.0)",
]

RANGE_CASES = [
    "L.arange(5)", "L.arange(5.)", "L.arange(1, 2.5, 0.5)", "L.arange(True)", "L.arange(L.tensor(3))",
    "L.arange(L.tensor(3.))", "L.arange(np.int32(3))", "L.arange(0, 10, 3, dtype=L.float64)",
    "L.arange(0.5, 3, dtype=L.int64)", "L.arange(5, 0, -1.5)", "L.arange(end=5)", "L.arange(1, end=5)",
    "L.arange(0, 10, 3, dtype=L.int32)", "L.arange(0, 1, 0.3, dtype=L.float16)", "L.arange(0., 1, 0.1)",
    "L.arange(-1., 1, 0.1)", "L.arange(0, 1, 0.1, dtype=L.float64)", "L.arange(0, 2.5, 0.5, dtype=L.int32)",
    "L.arange(-3.5, 7.25, 0.75)", "L.arange(10, -10, -3)", "L.arange(10, -10, -3, dtype=L.int16)",
    "L.arange(0.1, 0.9, 0.1, dtype=L.bfloat16)", "L.arange(-7.3, 50.1, 0.37)", "L.arange(0, 5, 0)",
    "L.arange(0, -5, 1)", "L.arange(0, inf)", "L.arange(0.0, nan)", "L.arange(-inf, 0)",
    "L.arange(0, 5, dtype=L.bool)", "L.arange(5, dtype=L.complex64)", "L.arange(1j)",
    "L.linspace(0, 10, 4, dtype=L.int64)", "L.linspace(0, 1, 5)", "L.linspace(0, 1, 1)", "L.linspace(0, 1, 0)",
    "L.linspace(0, 1j, 3)", "L.linspace(L.tensor(0), L.tensor(1), 3)",
    "L.linspace(L.tensor(0., dtype=L.float64), 1, 3)",
    "L.linspace(L.tensor(0.5), 1, 3, dtype=L.int64)", "L.linspace(0, 1, L.tensor(3))", "L.linspace(-7.3, 11.1, 13)",
    "L.linspace(-7.3, 11.1, 13, dtype=L.float64)", "L.linspace(-7.3, 11.1, 13, dtype=L.float16)",
    "L.linspace(-7.3, 11.1, 13, dtype=L.bfloat16)", "L.linspace(-7.3, 11.1, 13, dtype=L.int32)",
    "L.linspace(2, -2, 7, dtype=L.int8)", "L.linspace(1+1j, -2, 4)", "L.linspace(0, 1, 100)",
    "L.linspace(0, 1, -1)", "L.linspace(L.tensor([0.]), 1, 3)", "L.linspace(0, 10, 4, dtype=L.bool)",
    "L.logspace(0, 2, 3)", "L.logspace(0, 2, 3, base=2)", "L.logspace(0, 2, 3, dtype=L.int64)",
    "L.logspace(0, 3, 4, 2, dtype=L.int32)", "L.logspace(1.5, 1.5, 1)", "L.logspace(1.5, 3, 1, dtype=L.int64)",
    "L.logspace(-2, 2, 9, dtype=L.float64)", "L.logspace(-2, 2, 9, base=3.5)", "L.logspace(0, 1j, 3)",
    "L.logspace(0, 2, 3, dtype=L.bool)", "L.logspace(-3, 4, 50, base=1.7, dtype=L.float16)",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", DATA_CASES + FILL_CASES + RANGE_CASES)
def test_matches_torch(expression):
    assert_same_outcome(expression)


@pytest.mark.torch
@pytest.mark.parametrize("expression", ["L.arange(0, 'a')", "L.linspace(0, 1, 3.0)", "L.zeros(2, 3, dtype=3)"])
def test_argument_type_errors_are_type_errors_like_torch(expression):
    # PyTorch lists its overloads in these messages; the exception type is what matters.
    import torch

    for library in (tm, torch):
        with pytest.raises(TypeError):
            eval(expression, {"L": library})


def test_unsupported_numpy_dtype_message_names_the_numpy_type():
    with pytest.raises(TypeError, match=r"numpy\.object_\."):
        tm.from_numpy(np.ones(2, object))
    with pytest.raises(TypeError, match=r"numpy\.uint16\."):
        tm.tensor(np.ones(2, np.uint16))


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(start=st.floats(-50, 50), step=st.floats(0.01, 3), count=st.integers(1, 120),
       dtype=st.sampled_from(["float32", "float64", "int64", "int32", "float16", "bfloat16"]),
       backwards=st.booleans())
def test_arange_is_bit_identical_to_torch(start, step, count, dtype, backwards):
    step = -step if backwards else step
    end = start + step * (count - 0.5)
    assert_same_outcome(f"L.arange({start!r}, {end!r}, {step!r}, dtype=L.{dtype})")


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(start=st.floats(-50, 50), end=st.floats(-50, 50), steps=st.integers(0, 150),
       dtype=st.sampled_from(["float32", "float64", "int64", "int16", "float16", "bfloat16"]))
def test_linspace_is_bit_identical_to_torch(start, end, steps, dtype):
    assert_same_outcome(f"L.linspace({start!r}, {end!r}, {steps}, dtype=L.{dtype})")


@pytest.mark.torch
@settings(max_examples=40, deadline=None)
@given(start=st.floats(-4, 4), end=st.floats(-4, 4), steps=st.integers(0, 60), base=st.floats(0.5, 12),
       dtype=st.sampled_from(["float32", "float64", "float16", "int64"]))
def test_logspace_is_bit_identical_to_torch(start, end, steps, base, dtype):
    if dtype == "int64":
        start, end = round(start), round(end)
    assert_same_outcome(f"L.logspace({start!r}, {end!r}, {steps}, base={base!r}, dtype=L.{dtype})")


def test_half_ends_are_rounded_through_float_as_in_cpp():
    # 3.8369141564... rounds to float32's 3.8369140625, a tie between two float16 values;
    # PyTorch's double -> half conversion goes through float, so the tie goes to even.
    start = 3.8369141564148146
    assert tm.linspace(start, 5, 1, dtype=tm.float16).item() == 3.8359375
    assert tm.linspace(start, 5.0, 3, dtype=tm.float16).tolist() == [3.8359375, 4.41796875, 5.0]
    assert tm.logspace(start, 0.10684933655730067, 22, base=6.44931690477429, dtype=tm.float16)[0].item() == 1274.0


# -- dtype inference -----------------------------------------------------------------------------

@settings(max_examples=80, deadline=None)
@given(st.recursive(st.one_of(st.booleans(), st.integers(-2**40, 2**40), st.floats(-1e6, 1e6)),
                    lambda inner: st.lists(inner, min_size=1, max_size=3), max_leaves=12))
def test_python_data_round_trips_with_the_widest_category(data):
    try:
        np.array(data, dtype=object).astype(float)
    except ValueError:
        return  # ragged: covered by the error tests
    t = tm.tensor(data)
    leaves = np.array(data, dtype=object).reshape(-1).tolist() if isinstance(data, list) else [data]
    kinds = {type(v) for v in leaves}
    expected = tm.float32 if float in kinds else tm.int64 if int in kinds else tm.bool
    assert t.dtype is expected
    assert t.shape == np.array(data, dtype=object).shape
    assert np.array_equal(np.array(t.tolist(), dtype=np.float64), np.array(data, dtype=np.float64).astype(
        np.float32 if expected is tm.float32 else np.float64))


def test_default_dtype_drives_float_inference():
    tm.set_default_dtype(tm.float64)
    try:
        assert tm.tensor([1.5]).dtype is tm.float64
        assert tm.tensor([1j]).dtype is tm.complex128
        assert tm.zeros(2).dtype is tm.float64
        assert tm.arange(0.0, 1.0, 0.5).dtype is tm.float64
        assert tm.full((1,), 2.5).dtype is tm.float64
        assert tm.linspace(0, 1, 3).dtype is tm.float64
        assert tm.arange(3).dtype is tm.int64
    finally:
        tm.set_default_dtype(tm.float32)


def test_half_default_dtype_fast_path():
    tm.set_default_dtype(tm.float16)
    try:
        assert tm.zeros(3).dtype is tm.float16 and tm.ones(2, 2).dtype is tm.float16
    finally:
        tm.set_default_dtype(tm.float32)


# -- copies and sharing ----------------------------------------------------------------------------

def test_tensor_copies_and_warns_when_given_a_tensor():
    source = tm.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match=r"sourceTensor\.detach\(\)\.clone\(\)"):
        copy = tm.tensor(source)
    copy[0] = 5.0
    assert source.tolist() == [1.0, 2.0]


def test_tensor_copies_ndarrays():
    array = np.zeros(3, np.float32)
    t = tm.tensor(array)
    t[0] = 1.0
    assert array[0] == 0.0 and t.dtype is tm.float32


def test_as_tensor_returns_the_tensor_itself_or_a_converted_copy():
    t = tm.tensor([1, 2])
    assert tm.as_tensor(t) is t and tm.as_tensor(t, dtype=tm.int64) is t
    converted = tm.as_tensor(t, dtype=tm.float64)
    assert converted is not t and converted.dtype is tm.float64


def test_as_tensor_and_asarray_share_ndarray_memory():
    array = np.arange(4, dtype=np.float64)
    for convert in (tm.as_tensor, tm.asarray, tm.from_numpy):
        t = convert(array)
        t[0] = 42.0
        assert array[0] == 42.0
        array[1] = -1.0
        assert t[1].item() == -1.0
        array[:] = np.arange(4)


def test_asarray_copy_and_requires_grad():
    t = tm.tensor([1.0, 2.0])
    assert tm.asarray(t) is t
    copy = tm.asarray(t, copy=True)
    copy[0] = 9.0
    assert t[0].item() == 1.0
    assert tm.asarray([1.0], requires_grad=True).requires_grad
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Float' into dtype 'Double'"):
        tm.asarray(t, dtype=tm.float64, copy=False)


def test_asarray_reads_buffers_in_place():
    buffer = bytearray(np.array([1.0, 2.0], np.float32).tobytes())
    t = tm.asarray(buffer)
    assert t.tolist() == [1.0, 2.0]
    t[0] = 3.0
    assert np.frombuffer(buffer, np.float32)[0] == 3.0


def test_from_numpy_errors_and_read_only_warning():
    with pytest.raises(TypeError, match=r"expected np\.ndarray \(got list\)"):
        tm.from_numpy([1, 2])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.uint16"):
        tm.from_numpy(np.ones(2, np.uint16))
    frozen = np.ones(2)
    frozen.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        tm.from_numpy(frozen)


def test_from_numpy_keeps_bfloat16():
    import ml_dtypes

    t = tm.from_numpy(np.array([1.5], ml_dtypes.bfloat16))
    assert t.dtype is tm.bfloat16 and t.tolist() == [1.5]


# -- filled tensors ------------------------------------------------------------------------------

@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=4))
def test_size_spellings_agree(shape):
    spellings = [tm.zeros(tuple(shape)), tm.zeros(list(shape)), tm.zeros(tm.Size(shape))]
    if shape:
        spellings.append(tm.zeros(*shape))
        spellings.append(tm.zeros(*[np.int64(d) for d in shape]))
    for t in spellings:
        assert t.shape == tuple(shape) and t.dtype is tm.float32 and not t.numpy().any()
    assert (tm.ones(tuple(shape)).numpy() == 1).all()
    assert tm.empty(tuple(shape)).shape == tuple(shape)
    assert (tm.full(tuple(shape), 7).numpy() == 7).all()


def test_factories_take_out_device_and_requires_grad():
    out = tm.empty(0)
    assert tm.zeros(2, 2, out=out) is out and out.shape == (2, 2)
    assert tm.arange(3, out=tm.empty(3, dtype=tm.int64)).tolist() == [0, 1, 2]
    assert tm.ones(2, device="cpu").device == tm.device("cpu")
    assert tm.zeros(2, device=tm.device("cpu")).tolist() == [0.0, 0.0]
    t = tm.zeros(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        tm.zeros(2, dtype=tm.int64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="not supported yet"):
        tm.zeros(2, device="cuda")
    assert tm.zeros(2, device="meta").is_meta


def test_like_factories_keep_shape_and_dtype():
    source = tm.tensor([[1, 2, 3]], dtype=tm.int16)
    for factory in (tm.zeros_like, tm.ones_like, tm.empty_like):
        t = factory(source)
        assert t.shape == (1, 3) and t.dtype is tm.int16
    assert tm.full_like(source, 4).tolist() == [[4, 4, 4]]
    assert tm.zeros_like(source, dtype=tm.float64).dtype is tm.float64


def test_full_checks_the_fill_value_against_the_dtype():
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        tm.full((1,), 128, dtype=tm.int8)
    assert tm.full((1,), -1, dtype=tm.uint8).tolist() == [255]
    assert tm.full((1,), 2.9, dtype=tm.int32).tolist() == [2]


def test_eye_and_scalar_tensor():
    assert tm.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert tm.eye(3, m=1, dtype=tm.bool).tolist() == [[True], [False], [False]]
    s = tm.scalar_tensor(2)
    assert s.dim() == 0 and s.dtype is tm.float32 and s.item() == 2.0


# -- ranges --------------------------------------------------------------------------------------

def test_arange_values_and_dtypes():
    assert tm.arange(5).tolist() == [0, 1, 2, 3, 4] and tm.arange(5).dtype is tm.int64
    assert tm.arange(1, 2.5, 0.5).tolist() == [1.0, 1.5, 2.0]
    assert tm.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert tm.arange(0).shape == (0,)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        tm.arange(0, 1, 0)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        tm.arange(0, 1, -1)
    with pytest.raises(RuntimeError, match=r"unsupported range: 0 -> inf"):
        tm.arange(0, float("inf"))


@settings(max_examples=60, deadline=None)
@given(start=st.integers(-100, 100), end=st.integers(-100, 100), step=st.integers(-7, 7).filter(bool))
def test_integer_arange_agrees_with_python_range(start, end, step):
    if (step > 0 and end < start) or (step < 0 and end > start):
        with pytest.raises(RuntimeError):
            tm.arange(start, end, step)
    else:
        assert tm.arange(start, end, step).tolist() == list(range(start, end, step))


@settings(max_examples=60, deadline=None)
@given(start=st.floats(-1e3, 1e3), end=st.floats(-1e3, 1e3), steps=st.integers(2, 50))
def test_linspace_hits_both_ends_exactly(start, end, steps):
    values = tm.linspace(start, end, steps, dtype=tm.float64).tolist()
    assert len(values) == steps and values[0] == start and values[-1] == end


def test_linspace_and_logspace_errors():
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        tm.linspace(0, 1, -1)
    with pytest.raises(RuntimeError, match="0-dimensional start and end tensors"):
        tm.linspace(tm.zeros(2), 1, 3)
    with pytest.raises(NotImplementedError, match="\"logspace_cpu\" not implemented for 'Bool'"):
        tm.logspace(0, 1, 2, dtype=tm.bool)
    assert tm.logspace(0, 3, 4, base=2).tolist() == [1.0, 2.0, 4.0, 8.0]

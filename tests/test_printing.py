"""Tensor printing: ``repr``/``str`` must match PyTorch 2.13 character for character.

The pinned strings below are the spec (each was checked against PyTorch, with
``torch.`` spelled ``tensormodes.``); the ``torch``-marked tests compare against
PyTorch directly on a broad set of generated tensors and print options.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import tensormodes as tm
from tensormodes._api import tensor_str as _tensor_str
from tensormodes._api.tensor_str import get_printoptions, printoptions, set_printoptions

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None

nan, inf = math.nan, math.inf


@pytest.fixture(autouse=True)
def restore_print_options():
    """Every test starts from, and leaves behind, the default print options."""
    set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")
    if torch is not None:
        torch.set_printoptions(profile="default")


def arange(n, dtype=None):
    return tm.tensor(np.arange(n, dtype=dtype))


# -- pinned expected strings ------------------------------------------------------------------

PINNED = [
    # integer-like floats, fixed notation, alignment
    (lambda: tm.tensor([1., 2.]), "tensor([1., 2.])"),
    (lambda: tm.tensor([1.5, 2.25]), "tensor([1.5000, 2.2500])"),
    (lambda: tm.tensor([-1., 2.5, 300.]), "tensor([ -1.0000,   2.5000, 300.0000])"),
    (lambda: tm.tensor([0.1, 100.]), "tensor([  0.1000, 100.0000])"),
    (lambda: tm.tensor([1000., 1.]), "tensor([1000.,    1.])"),
    (lambda: tm.tensor([100000000.]), "tensor([100000000.])"),
    # scientific notation and its thresholds (ratio > 1000, max > 1e8, min < 1e-4)
    (lambda: tm.tensor([1e8, 1.]), "tensor([1.0000e+08, 1.0000e+00])"),
    (lambda: tm.tensor([1e-5, 1.]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: tm.tensor([1001., 1.]), "tensor([1.0010e+03, 1.0000e+00])"),
    (lambda: tm.tensor([0.1, 100.5]), "tensor([1.0000e-01, 1.0050e+02])"),
    (lambda: tm.tensor([1e10, 1.]), "tensor([1.0000e+10, 1.0000e+00])"),
    (lambda: tm.tensor([1.0, 99999.5]), "tensor([1.0000e+00, 1.0000e+05])"),
    # float32(1e-4) is just below 1e-4; float64(1e-4) is not
    (lambda: tm.tensor([1e-4, 1.]), "tensor([1.0000e-04, 1.0000e+00])"),
    (lambda: tm.tensor([1e-4, 1.], dtype=tm.float64), "tensor([1.0000e-04, 1.0000e+00], dtype=tensormodes.float64)"),
    (lambda: tm.tensor([100000001.], dtype=tm.float64), "tensor([1.0000e+08], dtype=tensormodes.float64)"),
    (lambda: tm.tensor([1e300, 1e-300], dtype=tm.float64),
     "tensor([1.0000e+300, 1.0000e-300], dtype=tensormodes.float64)"),
    # nan / inf / signed zero
    (lambda: tm.tensor([nan, 1.5, inf, -inf]), "tensor([   nan, 1.5000,    inf,   -inf])"),
    (lambda: tm.tensor([0., nan, -inf]), "tensor([0., nan, -inf])"),
    (lambda: tm.tensor([1., nan, 100.]), "tensor([  1.,  nan, 100.])"),
    (lambda: tm.tensor([1e-5, nan]), "tensor([1.0000e-05,        nan])"),
    (lambda: tm.tensor([0., -0.]), "tensor([0., -0.])"),
    # 2-D alignment, ints, bools
    (lambda: tm.tensor([[1., -2.5], [300., 4.]]), "tensor([[  1.0000,  -2.5000],\n        [300.0000,   4.0000]])"),
    (lambda: tm.tensor([[1, -20], [300, 4]]), "tensor([[  1, -20],\n        [300,   4]])"),
    (lambda: tm.tensor([True, False, True]), "tensor([ True, False,  True])"),
    (lambda: tm.tensor([[True], [True]]), "tensor([[True],\n        [True]])"),
    # complex
    (lambda: tm.tensor([1 + 2j, 3 - 4j]), "tensor([1.+2.j, 3.-4.j])"),
    (lambda: tm.tensor([0.5 + 1j, -1.25j]), "tensor([0.5000+1.0000j, -0.0000-1.2500j])"),
    (lambda: tm.tensor([1e-5 + 1j, 2j]), "tensor([1.0000e-05+1.j, 0.0000e+00+2.j])"),
    (lambda: tm.tensor(1 + 2j), "tensor(1.+2.j)"),
    (lambda: tm.tensor(complex(nan, inf)), "tensor(nan+infj)"),
    (lambda: tm.tensor([1 + 1j], dtype=tm.complex128), "tensor([1.+1.j], dtype=tensormodes.complex128)"),
    # 0-dim
    (lambda: tm.tensor(3.5), "tensor(3.5000)"),
    (lambda: tm.tensor(3), "tensor(3)"),
    (lambda: tm.tensor(True), "tensor(True)"),
    (lambda: tm.tensor(-0.), "tensor(-0.)"),
    (lambda: tm.tensor(nan), "tensor(nan)"),
    (lambda: tm.tensor(1e-10), "tensor(1.0000e-10)"),
    (lambda: tm.tensor(1e-10, dtype=tm.float64), "tensor(1.0000e-10, dtype=tensormodes.float64)"),
    # empty: size unless 1-D, dtype unless the default float dtype
    (lambda: tm.tensor([]), "tensor([])"),
    (lambda: tm.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: tm.zeros(0, dtype=tm.int64), "tensor([], dtype=tensormodes.int64)"),
    (lambda: tm.zeros(2, 0, dtype=tm.bool), "tensor([], size=(2, 0), dtype=tensormodes.bool)"),
    (lambda: tm.zeros(0, dtype=tm.complex64), "tensor([], dtype=tensormodes.complex64)"),
    (lambda: tm.zeros(0, dtype=tm.float64), "tensor([], dtype=tensormodes.float64)"),
    # n-D layout: blank lines between blocks
    (lambda: tm.tensor(np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)),
     "tensor([[[ 0.,  1.,  2.,  3.],\n"
     "         [ 4.,  5.,  6.,  7.],\n"
     "         [ 8.,  9., 10., 11.]],\n"
     "\n"
     "        [[12., 13., 14., 15.],\n"
     "         [16., 17., 18., 19.],\n"
     "         [20., 21., 22., 23.]]])"),
    (lambda: tm.tensor(np.arange(16).reshape(2, 2, 2, 2)),
     "tensor([[[[ 0,  1],\n"
     "          [ 2,  3]],\n"
     "\n"
     "         [[ 4,  5],\n"
     "          [ 6,  7]]],\n"
     "\n"
     "\n"
     "        [[[ 8,  9],\n"
     "          [10, 11]],\n"
     "\n"
     "         [[12, 13],\n"
     "          [14, 15]]]])"),
    # wrapping at linewidth 80
    (lambda: tm.tensor(np.arange(30, dtype=np.float32) / np.float32(7)),
     "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
     "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
     "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
     "        3.8571, 4.0000, 4.1429])"),
    # summarization above 1000 elements; widths come from the shown elements only
    (lambda: arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    (lambda: tm.tensor(np.arange(1001).astype(np.int8)),
     "tensor([  0,   1,   2,  ..., -26, -25, -24], dtype=tensormodes.int8)"),
    (lambda: tm.tensor(np.arange(1200, dtype=np.float32).reshape(40, 30)),
     "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 2.7000e+01, 2.8000e+01,\n"
     "         2.9000e+01],\n"
     "        [3.0000e+01, 3.1000e+01, 3.2000e+01,  ..., 5.7000e+01, 5.8000e+01,\n"
     "         5.9000e+01],\n"
     "        [6.0000e+01, 6.1000e+01, 6.2000e+01,  ..., 8.7000e+01, 8.8000e+01,\n"
     "         8.9000e+01],\n"
     "        ...,\n"
     "        [1.1100e+03, 1.1110e+03, 1.1120e+03,  ..., 1.1370e+03, 1.1380e+03,\n"
     "         1.1390e+03],\n"
     "        [1.1400e+03, 1.1410e+03, 1.1420e+03,  ..., 1.1670e+03, 1.1680e+03,\n"
     "         1.1690e+03],\n"
     "        [1.1700e+03, 1.1710e+03, 1.1720e+03,  ..., 1.1970e+03, 1.1980e+03,\n"
     "         1.1990e+03]])"),
    # dtype suffix
    (lambda: tm.tensor([1, 2], dtype=tm.int32), "tensor([1, 2], dtype=tensormodes.int32)"),
    (lambda: tm.tensor([1, 2], dtype=tm.uint8), "tensor([1, 2], dtype=tensormodes.uint8)"),
    (lambda: tm.tensor([1, 2], dtype=tm.int16), "tensor([1, 2], dtype=tensormodes.int16)"),
    (lambda: tm.tensor([1, 2], dtype=tm.int8), "tensor([1, 2], dtype=tensormodes.int8)"),
    (lambda: tm.tensor([1., 2.], dtype=tm.float64), "tensor([1., 2.], dtype=tensormodes.float64)"),
    (lambda: tm.tensor(np.full((3, 7), 3, dtype=np.int32)),
     "tensor([[3, 3, 3, 3, 3, 3, 3],\n"
     "        [3, 3, 3, 3, 3, 3, 3],\n"
     "        [3, 3, 3, 3, 3, 3, 3]], dtype=tensormodes.int32)"),
    # half precision: printed from their exact values
    (lambda: tm.tensor([1.5, 2], dtype=tm.float16), "tensor([1.5000, 2.0000], dtype=tensormodes.float16)"),
    (lambda: tm.tensor([1.5, 2], dtype=tm.bfloat16), "tensor([1.5000, 2.0000], dtype=tensormodes.bfloat16)"),
    (lambda: tm.tensor([0.1, 65504.], dtype=tm.float16), "tensor([9.9976e-02, 6.5504e+04], dtype=tensormodes.float16)"),
    (lambda: tm.tensor([1 / 3, 300.], dtype=tm.bfloat16), "tensor([  0.3340, 300.0000], dtype=tensormodes.bfloat16)"),
    (lambda: tm.tensor(0.1, dtype=tm.float16), "tensor(0.1000, dtype=tensormodes.float16)"),
    # large integers
    (lambda: tm.tensor([2**63 - 1, -2**63]), "tensor([ 9223372036854775807, -9223372036854775808])"),
    (lambda: tm.tensor([123456789012, 5]), "tensor([123456789012,            5])"),
    # autograd suffixes
    (lambda: tm.tensor([1., 2.], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (lambda: tm.tensor([[1., 2.]] * 3, requires_grad=True),
     "tensor([[1., 2.],\n        [1., 2.],\n        [1., 2.]], requires_grad=True)"),
]


@pytest.mark.parametrize("make, expected", PINNED, ids=[e.split("\n")[0][:60] for _, e in PINNED])
def test_pinned_repr(make, expected):
    t = make()
    assert repr(t) == expected
    assert str(t) == expected


def test_dtype_suffix_follows_default_dtype():
    tm.set_default_dtype(tm.float64)
    try:
        assert repr(tm.tensor([1.5, 2.])) == "tensor([1.5000, 2.0000])"
        assert repr(tm.tensor([1.5, 2.], dtype=tm.float32)) == "tensor([1.5000, 2.0000], dtype=tensormodes.float32)"
        assert repr(tm.tensor([1j])) == "tensor([0.+1.j])"
        assert repr(tm.tensor([1j], dtype=tm.complex64)) == "tensor([0.+1.j], dtype=tensormodes.complex64)"
        assert repr(tm.zeros(0)) == "tensor([])"
        assert repr(tm.zeros(0, dtype=tm.float32)) == "tensor([], dtype=tensormodes.float32)"
        assert repr(tm.tensor([1, 2])) == "tensor([1, 2])"
    finally:
        tm.set_default_dtype(tm.float32)


def test_dtype_suffix_wraps_like_pytorch():
    # The decision to wrap counts "tensormodes." as PyTorch's "torch.", so the layout is PyTorch's.
    # PyTorch keeps ", dtype=torch.int32" on the 56-character last line; so do we, even
    # though the longer module name makes that line 86 characters.
    data = np.arange(19, dtype=np.int32) * 1_000_000
    assert repr(tm.tensor(data)) == (
        "tensor([       0,  1000000,  2000000,  3000000,  4000000,  5000000,  6000000,\n"
        "         7000000,  8000000,  9000000, 10000000, 11000000, 12000000, 13000000,\n"
        "        14000000, 15000000, 16000000, 17000000, 18000000], dtype=tensormodes.int32)"
    )
    assert repr(tm.tensor(data[:12] * 10)) == (
        "tensor([        0,  10000000,  20000000,  30000000,  40000000,  50000000,\n"
        "         60000000,  70000000,  80000000,  90000000, 100000000, 110000000],\n"
        "       dtype=tensormodes.int32)"
    )
    set_printoptions(linewidth=20)
    assert repr(tm.tensor([1, 2], dtype=tm.int32)) == "tensor([1, 2],\n       dtype=tensormodes.int32)"


def test_grad_fn_suffix():
    class AddBackward0:
        pass

    class Node:
        def name(self):
            return "MulBackward0"

    t = tm.tensor([1., 2.], requires_grad=True)
    t._grad_fn = AddBackward0()
    assert repr(t) == "tensor([1., 2.], grad_fn=<AddBackward0>)"
    t._grad_fn = Node()
    assert repr(t) == "tensor([1., 2.], grad_fn=<MulBackward0>)"


def test_tensor_contents_replaces_the_data():
    t = tm.tensor([1, 2], dtype=tm.int32)
    assert t.__repr__(tensor_contents="[...]") == "tensor([...], dtype=tensormodes.int32)"
    assert tm.zeros(0, 2).__repr__(tensor_contents="<empty>") == "tensor(<empty>, size=(0, 2))"


def test_subclass_and_parameter_names():
    class Sub(tm.Tensor):
        pass

    assert repr(tm.ones(2).as_subclass(Sub)) == "Sub([1., 1.])"
    nn = pytest.importorskip("tensormodes.nn")

    class MyParam(nn.Parameter):
        pass

    assert repr(nn.Parameter(tm.zeros(2))) == "Parameter containing:\ntensor([0., 0.], requires_grad=True)"
    assert repr(MyParam(tm.zeros(2))) == "Parameter containing:\nParameter(MyParam([0., 0.], requires_grad=True))"


# -- print options -------------------------------------------------------------------------------

def test_default_print_options():
    assert get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
                                  "sci_mode": None}


def test_precision():
    set_printoptions(precision=2)
    assert repr(tm.tensor([1.12345, 10.])) == "tensor([ 1.12, 10.00])"
    set_printoptions(precision=0)
    assert repr(tm.tensor([1.5, 2.25])) == "tensor([2, 2])"


def test_sci_mode():
    set_printoptions(sci_mode=False)
    assert repr(tm.tensor([1e-5, 1.])) == "tensor([0.0000, 1.0000])"
    assert repr(tm.tensor([1e10, 1.])) == "tensor([10000000000.,           1.])"
    set_printoptions(sci_mode=True)
    assert repr(tm.tensor([1.5, 2.])) == "tensor([1.5000e+00, 2.0000e+00])"
    assert repr(tm.tensor([1., 2.])) == "tensor([1.0000e+00, 2.0000e+00])"
    # no finite non-zero element: the formatter keeps its integer-like default
    assert repr(tm.tensor([0., nan])) == "tensor([0., nan])"
    assert repr(tm.tensor([1, 2])) == "tensor([1, 2])"
    # every call sets sci_mode, so leaving it out resets it
    set_printoptions(precision=4)
    assert get_printoptions()["sci_mode"] is None


def test_profiles():
    set_printoptions(profile="short")
    assert get_printoptions() == {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80,
                                  "sci_mode": None}
    assert repr(tm.tensor(np.arange(2000, dtype=np.float32).reshape(40, 50))) == (
        "tensor([[0.00e+00, 1.00e+00,  ..., 4.80e+01, 4.90e+01],\n"
        "        [5.00e+01, 5.10e+01,  ..., 9.80e+01, 9.90e+01],\n"
        "        ...,\n"
        "        [1.90e+03, 1.90e+03,  ..., 1.95e+03, 1.95e+03],\n"
        "        [1.95e+03, 1.95e+03,  ..., 2.00e+03, 2.00e+03]])"
    )
    set_printoptions(profile="full", precision=3)
    assert get_printoptions()["threshold"] == math.inf and get_printoptions()["precision"] == 3
    assert repr(arange(1001)).endswith(",\n         996,  997,  998,  999, 1000])")
    set_printoptions(profile="no-such-profile")  # ignored, like PyTorch
    assert get_printoptions()["threshold"] == math.inf
    set_printoptions(profile="default")
    assert get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
                                  "sci_mode": None}


def test_threshold_edgeitems_linewidth():
    set_printoptions(threshold=5)
    assert repr(arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    set_printoptions(threshold=10)
    assert repr(tm.tensor(np.arange(60).reshape(3, 4, 5))) == (
        "tensor([[[ 0,  1,  2,  3,  4],\n"
        "         [ 5,  6,  7,  8,  9],\n"
        "         [10, 11, 12, 13, 14],\n"
        "         [15, 16, 17, 18, 19]],\n"
        "\n"
        "        [[20, 21, 22, 23, 24],\n"
        "         [25, 26, 27, 28, 29],\n"
        "         [30, 31, 32, 33, 34],\n"
        "         [35, 36, 37, 38, 39]],\n"
        "\n"
        "        [[40, 41, 42, 43, 44],\n"
        "         [45, 46, 47, 48, 49],\n"
        "         [50, 51, 52, 53, 54],\n"
        "         [55, 56, 57, 58, 59]]])"
    )
    set_printoptions(threshold=5, edgeitems=0)
    assert repr(arange(10)) == "tensor([...], size=(10,))"
    assert repr(tm.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4))) == "tensor([...], size=(3, 4))"
    assert repr(tm.tensor([1, 2])) == "tensor([1, 2], size=(2,))"
    set_printoptions(profile="default", linewidth=20)
    assert repr(tm.tensor(np.arange(10.0, dtype=np.float32))) == (
        "tensor([0., 1., 2.,\n        3., 4., 5.,\n        6., 7., 8.,\n        9.])"
    )


def test_printoptions_context_manager_restores():
    with printoptions(precision=1, sci_mode=True):
        assert repr(tm.tensor([1.25])) == "tensor([1.2e+00])"
    assert get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
                                  "sci_mode": None}
    assert repr(tm.tensor([1.25])) == "tensor([1.2500])"


def test_set_printoptions_is_module_global():
    set_printoptions(precision=3)
    assert _tensor_str.PRINT_OPTS.precision == 3


def test_small_repr_is_fast():
    import time

    t = tm.tensor([[1.5, 2.0], [-3.25, 4.0]])
    repr(t)
    start = time.perf_counter()
    for _ in range(200):
        repr(t)
    per_call = (time.perf_counter() - start) / 200
    assert per_call < 500e-6  # typically ~15 us; generous bound for slow CI machines


# -- cross-reference against PyTorch ------------------------------------------------------------

_NP_DTYPES = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
    "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128,
}


def _to_torch(array: np.ndarray, name: str):
    if name == "bfloat16":  # exact through float32
        return torch.from_numpy(np.array(array, dtype=np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.array(array))


def _floats(rng, shape, style):
    with np.errstate(all="ignore"):
        base = rng.standard_normal(shape)
        if style == "small":
            return base * 1e-6
        if style == "large":
            return base * 1e9
        if style == "integral":
            return np.round(base * 100)
        if style == "mixed":
            return base * 10.0 ** rng.integers(-8, 9, size=shape)
        if style == "special":
            pick = rng.random(shape)
            out = np.where(pick < 0.15, np.nan, base)
            out = np.where((pick >= 0.15) & (pick < 0.3), np.inf, out)
            out = np.where((pick >= 0.3) & (pick < 0.4), -np.inf, out)
            return np.where((pick >= 0.4) & (pick < 0.5), 0.0, out)
        if style == "tiny":
            return base * 1e-200
        if style == "huge":
            return base * 1e200
        return base * 10.0 ** rng.integers(-3, 4)


def _cross_cases():
    rng = np.random.default_rng(20240613)
    shapes = [(), (0,), (1,), (5,), (2, 3), (0, 4), (3, 0, 2), (37,), (120,), (4, 5, 6), (2, 3, 2, 2),
              (1001,), (40, 30), (11, 10, 10), (3, 400)]
    cases = []
    for shape in shapes:
        for name in _NP_DTYPES:
            if name in ("float16", "bfloat16", "float32", "float64"):
                styles = ["plain", "integral", "special", "mixed"]
                if name == "float64":
                    styles += ["tiny", "huge"]
                if name in ("float32", "float64"):
                    styles += ["small", "large"]
                for style in styles:
                    values = _floats(rng, shape, style)
                    if name == "float16":
                        values = np.clip(values, -6e4, 6e4)
                    cases.append((f"{name}-{style}-{shape}", values.astype(_NP_DTYPES[name]), name))
            elif name.startswith("complex"):
                for style in ("plain", "integral", "special", "mixed"):
                    values = _floats(rng, shape, style) + 1j * _floats(rng, shape, "plain")
                    cases.append((f"{name}-{style}-{shape}", values.astype(_NP_DTYPES[name]), name))
            elif name == "bool":
                cases.append((f"bool-{shape}", np.asarray(rng.random(shape) < 0.5), name))
            else:
                info = np.iinfo(_NP_DTYPES[name])
                values = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=_NP_DTYPES[name])
                cases.append((f"{name}-full-{shape}", values, name))
                cases.append((f"{name}-small-{shape}", rng.integers(0, 100, size=shape).astype(_NP_DTYPES[name]), name))
    return cases


_CASES = _cross_cases()
_OPTIONS = [
    {},
    {"precision": 2},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"linewidth": 37},
    {"threshold": 20, "edgeitems": 2},
    {"threshold": 5, "edgeitems": 0},
    {"precision": 7, "linewidth": 120},
]


def _compare(cases, options, default_dtype="float32"):
    mismatches = []
    set_printoptions(**options)
    torch.set_printoptions(**options)
    tm.set_default_dtype(getattr(tm, default_dtype))
    old_torch_default = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, default_dtype))
    try:
        for label, array, name in cases:
            ours = repr(tm.tensor(array))
            theirs = repr(_to_torch(array, name)).replace("torch.", "tensormodes.")
            if ours != theirs:
                mismatches.append(f"{label} {options}:\n{ours}\n!=\n{theirs}")
    finally:
        tm.set_default_dtype(tm.float32)
        torch.set_default_dtype(old_torch_default)
    assert not mismatches, f"{len(mismatches)} mismatches, first: " + mismatches[0]


@pytest.mark.torch
@pytest.mark.parametrize("options", _OPTIONS, ids=[str(o) or "default" for o in _OPTIONS])
def test_matches_torch(options):
    # PyTorch's own repr dominates the run time, so non-default options see every other case.
    _compare(_CASES if not options else _CASES[::2], options)


@pytest.mark.torch
def test_matches_torch_with_float64_default():
    _compare(_CASES[::3], {}, default_dtype="float64")


@pytest.mark.torch
def test_matches_torch_edge_values():
    values = [
        ([1e300, -1e-300, 5e-324], "float64"), ([-1e-150, -5.0, 1e-200], "float64"),
        ([9.99995e99, 1.0], "float64"), ([9.99995, 1.0], "float32"), ([0.99995, 100.0], "float32"),
        ([-0.00001, 1.0], "float64"), ([1000.0, 1.0], "float32"), ([1e8, 1.0], "float32"),
        ([1.00001e8], "float64"), ([123456789.0], "float32"), ([inf, -inf, nan], "float32"),
        ([0.0, -0.0], "float32"), ([nan, 1.5], "float32"), ([inf, 1e10, 1.0], "float64"),
        ([65504.0, -65504.0, 6e-8], "float16"), ([3e38, 1e-38], "bfloat16"), (nan, "float32"),
        (-inf, "float64"), (1e-8, "float32"), (2**62, "int64"), (True, "bool"),
        ([2**63 - 1, -2**63], "int64"), ([1 + 1j, complex(nan, 1), complex(1, nan), complex(inf, -inf)], "complex64"),
        ([0j, complex(-0.0, -0.0)], "complex128"), (complex(-0.0, -0.0), "complex64"), (1.5 - 2j, "complex128"),
        ([1e-10 + 1e10j], "complex128"),
    ]
    cases = [(f"{v}-{n}", np.array(v).astype(_NP_DTYPES[n]), n) for v, n in values]
    for options in [{}, {"sci_mode": True}, {"sci_mode": False}, {"precision": 0}, {"precision": 10},
                    {"linewidth": 10}, {"linewidth": 0}]:
        _compare(cases, options)


@pytest.mark.torch
def test_matches_torch_requires_grad_and_suffix_wrapping():
    for shape in [(3,), (2, 13), (40,)]:
        for name in ("float32", "float64", "int32"):
            array = (np.arange(math.prod(shape)).reshape(shape) * 12345).astype(_NP_DTYPES[name])
            ours = tm.tensor(array, requires_grad=name != "int32")
            theirs = torch.tensor(array, requires_grad=name != "int32")
            assert repr(ours) == repr(theirs).replace("torch.", "tensormodes.")

"""DLPack: zero-copy exchange with NumPy (and PyTorch) both ways, as torch.utils.dlpack."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.overrides import TorchFunctionMode, get_ignored_functions
from tensormodes.utils import dlpack

INVALID = "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once"


def test_numpy_imports_a_writable_view_of_a_tensor():
    t = tm.zeros(2, 3)
    array = np.from_dlpack(t)
    assert array.flags.writeable and array.shape == (2, 3) and array.dtype == np.float32
    array[1, 2] = 5.0
    assert t.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 5.0]]
    assert np.shares_memory(array, t.numpy())
    view = tm.arange(6.0)[::2]
    np.from_dlpack(view)[1] = -1.0
    assert view.tolist() == [0.0, -1.0, 4.0]


def test_from_dlpack_shares_memory_with_numpy():
    array = np.arange(4, dtype=np.int16)
    t = tm.from_dlpack(array)
    assert type(t) is tm.Tensor and t.dtype is tm.int16
    t[0] = 9
    assert array.tolist() == [9, 1, 2, 3]
    copied = tm.from_dlpack(array, copy=True)
    copied[1] = 0
    assert array[1] == 1
    assert tm.from_dlpack is dlpack.from_dlpack and tm.from_dlpack in get_ignored_functions()


def test_capsules_round_trip_once():
    t = tm.ones(3)
    capsule = dlpack.to_dlpack(t)
    back = dlpack.from_dlpack(capsule)
    back[0] = 4.0
    assert t.tolist() == [4.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match=INVALID):
        dlpack.from_dlpack(capsule)
    with pytest.raises(RuntimeError, match=INVALID):
        tm.from_dlpack([1, 2])
    with pytest.raises(TypeError, match="argument 'tensor' must be Tensor, not list"):
        dlpack.to_dlpack([1])


def test_export_errors_and_device():
    with pytest.raises(BufferError, match="^Can't export tensors that require gradient, use tensor.detach\\(\\)$"):
        np.from_dlpack(tm.ones(2, requires_grad=True))
    with pytest.raises(AssertionError, match="^stream should be None on cpu.$"):
        tm.ones(1).__dlpack__(stream=1)
    with pytest.raises(TypeError, match="stream must be"):
        tm.ones(1).__dlpack__(stream="default")
    assert tm.ones(1).__dlpack_device__() == (1, 0)
    with pytest.raises(NotImplementedError, match="device 'cuda'"):
        tm.from_dlpack(np.ones(1), device="cuda")


def test_dlpack_goes_through_the_protocol():
    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    t = tm.ones(2)
    with Spy():
        np.from_dlpack(t)
        t.__dlpack_device__()
    assert seen == [tm.Tensor.__dlpack__, tm.Tensor.__dlpack_device__]


@pytest.mark.torch
def test_exchange_with_torch_both_ways():
    import torch

    ours = tm.zeros(2)
    theirs = torch.from_dlpack(ours)
    theirs[0] = 3.0
    assert ours.tolist() == [3.0, 0.0]
    source = torch.zeros(2)
    imported = tm.from_dlpack(source)
    imported[1] = 2.0
    assert source.tolist() == [0.0, 2.0]
    assert tm.from_dlpack(torch.utils.dlpack.to_dlpack(torch.ones(2))).tolist() == [1.0, 1.0]
    assert torch.utils.dlpack.from_dlpack(dlpack.to_dlpack(tm.ones(2))).tolist() == [1.0, 1.0]
    assert tm.ones(1).__dlpack_device__() == torch.ones(1).__dlpack_device__()

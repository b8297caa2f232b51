"""tensormodes.distributed, nn.parallel, onnx and nn.modules.activation.MultiheadAttention: the
answers PyTorch gives without GPUs or a process group, and clear errors where there is nothing."""

from __future__ import annotations

import pytest

import tensormodes as tm


def test_distributed_answers_and_errors():
    assert tm.distributed.is_available() is False and tm.distributed.is_initialized() is False
    message = "^Default process group has not been initialized, please make sure to call init_process_group.$"
    for call in (tm.distributed.get_rank, tm.distributed.get_world_size, tm.distributed.barrier):
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(ValueError, match=message):
        tm.nn.parallel.DistributedDataParallel(tm.nn.Linear(1, 1))
    with pytest.raises(RuntimeError, match="distributed training is not supported"):
        tm.distributed.init_process_group("gloo")


def test_data_parallel_calls_the_module():
    inner = tm.nn.Linear(2, 1)
    model = tm.nn.DataParallel(inner)
    x = tm.ones(3, 2)
    assert tm.equal(model(x), inner(x)) and model.module is inner and tm.nn.parallel.DataParallel is tm.nn.DataParallel
    assert list(model.state_dict()) == ["module.weight", "module.bias"]
    assert repr(model) == "DataParallel(\n  (module): Linear(in_features=2, out_features=1, bias=True)\n)"


def test_onnx_and_import_paths():
    assert tm.onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match="^tensormodes.onnx.export: ONNX export is not supported"):
        tm.onnx.export(tm.nn.Linear(1, 1), (tm.ones(1, 1),), "m.onnx")
    assert tm.nn.modules.activation.MultiheadAttention is tm.nn.MultiheadAttention


@pytest.mark.torch
def test_same_as_pytorch():
    import torch

    for L in (tm, torch):
        with pytest.raises(ValueError) as error:
            L.distributed.get_rank()
        assert str(error.value) == ("Default process group has not been initialized, please make sure to call "
                                    "init_process_group.")
        model = L.nn.DataParallel(L.nn.Linear(2, 1))
        assert list(model.state_dict()) == ["module.weight", "module.bias"]

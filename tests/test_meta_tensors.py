"""Meta tensors themselves: creation, metadata, printing, the errors of everything that needs
values, devices, pickling, parameters and modules on the meta device (the op rules are proven
in test_meta_rules.py)."""

from __future__ import annotations

import copy
import pickle

import pytest

import tensormodes as tm
from tensormodes import nn
from tests.torch_oracle import run


def _same_as_torch(expression: str) -> None:
    """The expression's outcome — an error's type and message, or a result's repr — as PyTorch's."""
    torch = pytest.importorskip("torch")
    ours, theirs = run(tm, expression), run(torch, expression)
    assert ours[0] == theirs[0], f"{expression}: {ours} vs torch's {theirs}"
    if ours[0] == "error":
        assert type(ours[1]).__name__ == type(theirs[1]).__name__, f"{expression}: {ours[1]!r} vs {theirs[1]!r}"
    assert str(ours[1]).replace("tensormodes.", "torch.") == str(theirs[1]), expression


def test_a_meta_tensor_has_metadata_and_no_data():
    t = tm.ones(3, 4).to("meta")
    assert (t.shape, t.dtype, t.stride(), t.device, t.is_meta, t.is_cpu) == (
        (3, 4), tm.float32, (4, 1), tm.device("meta"), True, False)
    assert isinstance(t, tm.Tensor) and type(t).__name__ == "Tensor"
    assert (t.data_ptr(), t.storage_offset(), t.element_size(), t.nbytes, t.is_contiguous()) == (0, 0, 4, 48, True)
    assert not tm.ones(1).is_meta and tm.ones(1).is_cpu


@pytest.mark.parametrize("expression", [
    "repr(L.ones(3, 4).to('meta'))",
    "repr(L.ones(3, dtype=L.int64).to('meta'))",
    "repr(L.ones(3, dtype=L.bool).to('meta'))",
    "repr(L.ones(()).to('meta'))",
    "repr(L.ones(0, 3).to('meta'))",
    "repr(L.ones(2).to('meta').requires_grad_())",
    "repr(L.nn.Parameter(L.ones(2).to('meta')))",
    "str(L.ones(2).to('meta'))",
])
def test_printing_shows_metadata_like_pytorch(expression):
    _same_as_torch(expression)


@pytest.mark.parametrize("expression", [
    "L.ones(3).to('meta').item()", "L.ones(()).to('meta').item()",
    "L.ones(3).to('meta').tolist()", "L.ones(3).to('meta').numpy()",
    "bool(L.ones(3).to('meta'))", "bool(L.ones(()).to('meta'))",
    "float(L.ones(()).to('meta'))", "int(L.ones(()).to('meta'))", "float(L.ones(2).to('meta'))",
    "L.ones(3).to('meta').cpu()", "L.ones(3).to('meta').to('cpu')",
    "[10, 20][L.ones((), dtype=L.int64).to('meta')]",
])
def test_everything_that_needs_values_raises_pytorchs_error(expression):
    _same_as_torch(expression)


def test_value_errors_without_torch():
    t = tm.ones(()).to("meta")
    with pytest.raises(RuntimeError, match="^Tensor.item\\(\\) cannot be called on meta tensors$"):
        t.item()
    with pytest.raises(NotImplementedError) as info:
        t.tolist()
    # PyTorch's message as it is; a note names the operation
    assert str(info.value) == "Cannot copy out of meta tensor; no data!"
    assert info.value.__notes__[0].startswith("Tensor.tolist() needs the tensor's values")
    with pytest.raises(TypeError, match="^can't convert meta device type tensor to numpy"):
        t.numpy()
    with pytest.raises(BufferError, match="meta tensors"):
        t.__dlpack__()


def test_mixing_meta_and_cpu_tensors_raises_pytorchs_error():
    meta = tm.ones(2).to("meta")
    cases = ((lambda: tm.mul(meta, tm.ones(2)), "Tensor on device cpu is not on the expected device meta!"),
             (lambda: tm.mul(tm.ones(2), meta), "Tensor on device meta is not on the expected device cpu!"))
    for run_op, message in cases:
        with pytest.raises(RuntimeError, match=f"^{message}$"):
            run_op()
    assert tm.mul(meta, tm.tensor(2.0)).is_meta  # a cpu scalar tensor mixes, as in PyTorch


def test_legacy_constructor_and_new_methods_keep_the_device():
    t = tm.Tensor(2, 3, device="meta")
    assert t.is_meta and t.shape == (2, 3) and t.dtype == tm.float32
    m = tm.ones(2, dtype=tm.int32).to("meta")
    for made in (m.new_zeros(4, 5), m.new_ones(2), m.new_empty(3), m.new_full((2,), 7), m.new_tensor([1, 2])):
        assert made.is_meta and made.dtype == tm.int32
    assert m.new_zeros(1_000_000, 1_000).shape == (1_000_000, 1_000)  # no data allocated
    assert not m.new_zeros(2, device="cpu").is_meta
    assert tm.ones(1).new_zeros(2, device="meta").is_meta


def test_pickle_and_deepcopy_keep_meta_tensors_meta():
    t = tm.ones(2, 3).to("meta").requires_grad_()
    for copied in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert copied.is_meta and copied.shape == (2, 3) and copied.requires_grad
    p = pickle.loads(pickle.dumps(nn.Parameter(tm.ones(2).to("meta"))))
    assert isinstance(p, nn.Parameter) and p.is_meta


def test_parameters_and_modules_move_to_meta_keeping_their_identity():
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    weight = model[0].weight
    model.to("meta")
    assert model[0].weight is weight and isinstance(weight, nn.Parameter) and weight.is_meta
    assert all(t.is_meta for t in [*model.parameters(), *model.buffers()])
    assert model[1].num_batches_tracked.dtype == tm.int64
    with pytest.raises(NotImplementedError) as info:
        model.to("cpu")
    assert str(info.value) == "Cannot copy out of meta tensor; no data!"


def test_assigning_data_switches_between_meta_and_cpu():
    x = tm.zeros(3)
    x.data = tm.ones(3).to("meta")
    assert x.is_meta and type(x).__name__ == "Tensor"
    x.data = tm.ones(2)
    assert not x.is_meta and type(x) is tm.Tensor

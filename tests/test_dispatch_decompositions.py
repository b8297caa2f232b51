"""Composites at the dispatch level: the ops a TorchDispatchMode sees for softmax, cross_entropy,
nll_loss, indexing, tensor(data), reshape / flatten, meshgrid, tile, movedim, unflatten, circular
padding, conv1d / conv2d / conv3d, conv_transpose3d,
max_pool2d / max_pool3d, linalg.eigvals, matrix_exp, linalg.pinv, pinverse, fill_diagonal_ and
combinations are PyTorch 2.13's (``op(decompose=)``, the ATen-only ops of
``_ops/dispatch_forms.py``); the decomposed calls compute what the eager ops compute, gradients
included."""

from __future__ import annotations

import warnings
from importlib import import_module

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.utils._python_dispatch import TorchDispatchMode

aten = tm.ops.aten
MAX = 9223372036854775807

# Names the concurrent ATen-naming work gives these ops (select.int, squeeze.dim ...): our
# sequences are compared under PyTorch's names; entries are no-ops once the names are PyTorch's.
PENDING_NAMES = {"aten.select.default": "aten.select.int", "aten.transpose.default": "aten.transpose.int",
                 "aten.squeeze.default": "aten.squeeze.dim",
                 "aten._max_pool2d_with_indices.default": "aten.max_pool2d_with_indices.default",
                 "aten.empty.default": "aten.empty.memory_format", "aten.fill_.Tensor": "aten.fill_.Scalar"}


def _as_pytorch_names(func, args) -> tuple[str, list]:
    """(op name, shown arguments) of a call, under PyTorch's names (``PENDING_NAMES``; the dim
    overloads of squeeze and sum, which the ATen-naming work splits off)."""
    name, shown = PENDING_NAMES.get(str(func), str(func)), _shown(list(args))
    if name == "aten.squeeze.dim" and isinstance(shown[1], list):
        shown[1] = shown[1][0]  # squeeze(x, [0]) is squeeze.dim(x, 0) in PyTorch
    if name == "aten.sum.default" and len(shown) > 1:
        name = "aten.sum.dim_IntList"
    return name, shown


def _shown(value):
    """A handler argument as the tests compare it: tensors by shape and dtype name."""
    if hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, np.ndarray):
        return (tuple(value.shape), str(value.dtype).rsplit(".", 1)[-1])
    if isinstance(value, (list, tuple)):
        return [_shown(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)  # fill_(0.0) and fill_(0) alike
    return value


class Seen(TorchDispatchMode):
    """Records (op name, positional arguments) of each call, under PyTorch's names."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append(_as_pytorch_names(func, args))
        return func(*args, **(kwargs or {}))


def seen(program, *inputs):
    with Seen() as mode:
        program(*inputs)
    return mode.calls


F32 = "float32"
X = tm.arange(24.0).reshape(2, 3, 4)
T234 = ((2, 3, 4), F32)
ROWS = tm.tensor([0, 1])


# -- the sequences, as PyTorch 2.13 logs them (torch-free literals) ------------------------------

def test_softmax_and_log_softmax_reach_their_aten_ops():
    assert seen(lambda: X.softmax(1)) == [("aten._softmax.default", [T234, 1, False])]
    assert seen(lambda: tm.log_softmax(X, -1)) == [("aten._log_softmax.default", [T234, -1, False])]
    assert seen(lambda: F.softmax(X, 1, dtype=tm.float64)) == [
        ("aten._to_copy.default", [T234]), ("aten._softmax.default", [((2, 3, 4), "float64"), 1, False])]
    assert seen(lambda: X.log_softmax(0, dtype=tm.float32)) == [("aten._log_softmax.default", [T234, 0, False])]


def test_cross_entropy_and_nll_loss_reach_nll_loss_forward():
    logits, target, weight = tm.zeros(4, 3), tm.tensor([0, 2, 1, 1]), tm.ones(3)
    t4 = ((4,), "int64")
    assert seen(lambda: F.cross_entropy(logits, target)) == [
        ("aten._log_softmax.default", [((4, 3), F32), 1, False]),
        ("aten.nll_loss_forward.default", [((4, 3), F32), t4, None, 1, -100])]
    assert seen(lambda: F.cross_entropy(logits, target, weight, reduction="sum", ignore_index=1)) == [
        ("aten._log_softmax.default", [((4, 3), F32), 1, False]),
        ("aten.nll_loss_forward.default", [((4, 3), F32), t4, ((3,), F32), 2, 1])]
    assert seen(lambda: F.cross_entropy(tm.zeros(3), tm.tensor(1), reduction="none"))[-2:] == [
        ("aten._log_softmax.default", [((3,), F32), 0, False]),
        ("aten.nll_loss_forward.default", [((3,), F32), ((), "int64"), None, 0, -100])]
    assert seen(lambda: F.nll_loss(logits, target)) == [
        ("aten.nll_loss_forward.default", [((4, 3), F32), t4, None, 1, -100])]


def test_spatial_losses_reach_nll_loss2d_forward():
    planes, plane_targets = tm.zeros(2, 3, 4, 5), tm.zeros(2, 4, 5, dtype=tm.int64)
    rows, row_targets = tm.zeros(2, 3, 4), tm.zeros(2, 4, dtype=tm.int64)
    forward2d = "aten.nll_loss2d_forward.default"
    assert seen(lambda: F.cross_entropy(planes, plane_targets)) == [
        ("aten._log_softmax.default", [((2, 3, 4, 5), F32), 1, False]),
        (forward2d, [((2, 3, 4, 5), F32), ((2, 4, 5), "int64"), None, 1, -100])]
    assert seen(lambda: F.nll_loss(rows, row_targets, reduction="none")) == [
        ("aten.view.default", [((2, 3, 4), F32), [2, 3, 1, -1]]),
        ("aten.view.default", [((2, 4), "int64"), [2, 1, -1]]),
        (forward2d, [((2, 3, 1, 4), F32), ((2, 1, 4), "int64"), None, 0, -100]),
        ("aten.view.default", [((2, 1, 4), F32), [2, 4]])]
    output, total = aten.nll_loss2d_forward.default(tm.zeros(1, 2, 1, 2), tm.tensor([[[0, 1]]]), None, 2, -100)
    assert output.item() == 0.0 and total.item() == 2.0
    with pytest.raises(RuntimeError, match="only batches of spatial targets supported \\(3D tensors\\) but got "
                                           "targets of dimension: 2"):
        aten.nll_loss2d_forward.default(tm.zeros(2, 3, 4, 5), tm.zeros(2, 4, dtype=tm.int64), None, 1, -100)


def test_indexing_is_select_slice_unsqueeze_and_index():
    sel, sl, unsq, idx = "aten.select.int", "aten.slice.Tensor", "aten.unsqueeze.default", "aten.index.Tensor"
    rows = ((2,), "int64")
    assert seen(lambda: X[0]) == [(sel, [T234, 0, 0])]
    assert seen(lambda: X[-1, 2]) == [(sel, [T234, 0, -1]), (sel, [((3, 4), F32), 0, 2])]
    assert seen(lambda: X[:, 1:]) == [(sl, [T234, 1, 1, MAX])]  # the whole first dimension: skipped
    assert seen(lambda: X[:]) == [(sl, [T234, 0, 0, MAX])]  # a lone slice is never skipped
    assert seen(lambda: X[-2:, 1:]) == [(sl, [T234, 0, -2, MAX]), (sl, [T234, 1, 1, MAX])]
    assert seen(lambda: X[0:100, ::2]) == [(sl, [T234, 1, 0, MAX, 2])]
    assert seen(lambda: X[1:, None, ..., :, 2]) == [
        (sl, [T234, 0, 1, MAX]), (unsq, [((1, 3, 4), F32), 1]), (sel, [((1, 1, 3, 4), F32), 3, 2])]
    assert seen(lambda: X[...]) == [("aten.alias.default", [T234])]
    assert seen(lambda: X[:, :]) == [("aten.alias.default", [T234])]
    assert seen(lambda: X[None]) == [(unsq, [T234, 0])]
    assert seen(lambda: X[X > 0])[-1] == (idx, [T234, [((2, 3, 4), "bool")]])
    assert seen(lambda: X[ROWS]) == [(idx, [T234, [rows]])]
    assert seen(lambda: X[:, ROWS, None]) == [(unsq, [T234, 2]), (idx, [((2, 3, 1, 4), F32), [None, rows]])]
    assert seen(lambda: X[ROWS, ..., ROWS]) == [(idx, [T234, [rows, None, rows]])]
    assert seen(lambda: X[0, ROWS]) == [(sel, [T234, 0, 0]), (idx, [((3, 4), F32), [rows]])]
    assert seen(lambda: X[[0, 1], 0]) == [("aten.lift_fresh.default", [rows]), (sel, [T234, 1, 0]),
                                          (idx, [((2, 4), F32), [rows]])]
    assert seen(lambda: X[:, False, 1]) == [
        (unsq, [T234, 1]), ("aten.empty.memory_format", [[0]]), (sel, [((2, 1, 3, 4), F32), 2, 1]),
        (idx, [((2, 1, 4), F32), [None, ((0,), "int64")]])]
    assert seen(lambda: X[True]) == [
        (unsq, [T234, 0]), ("aten.empty.memory_format", [[1]]), ("aten.fill_.Scalar", [((1,), "int64"), 0]),
        (idx, [((1, 2, 3, 4), F32), [((1,), "int64")]])]
    mask = X[0] > 5
    assert seen(lambda: X[:, mask]) == [(idx, [T234, [None, ((3, 4), "bool")]])]
    # In index.Tensor's list a mask's entry stands for every dimension it spans.
    plane, cube = X[:, :, 0] > 5, tm.zeros(2, 3, 4, 5)
    first = ROWS[:1]
    assert seen(lambda: X[plane, first]) == [(idx, [T234, [((2, 3), "bool"), ((1,), "int64")]])]
    assert seen(lambda: cube[plane, None, first]) == [
        (unsq, [((2, 3, 4, 5), F32), 2]), (idx, [((2, 3, 1, 4, 5), F32), [((2, 3), "bool"), None, ((1,), "int64")]])]


def test_index_tensors_of_every_dtype_are_read_as_pytorch_reads_them():
    # applySlicing: a 0-dim integer tensor of any width is its value, a bool or uint8 one a scalar
    # bool, uint8 tensors are masks, and index.Tensor itself refuses every other dtype (there is no
    # aten.getitem to fall back to). (The value is read by ``.item()``: ``_local_scalar_dense``.)
    idx = "aten.index.Tensor"
    for dtype in (tm.int8, tm.int16):
        one = tm.tensor(1, dtype=dtype)
        read = ("aten._local_scalar_dense.default", [((), str(dtype).split(".")[1])])
        assert seen(lambda one=one: X[one]) == [read, ("aten.select.int", [T234, 0, 1])]
        assert seen(lambda one=one: X[:, one]) == [read, ("aten.select.int", [T234, 1, 1])]
        rows = tm.tensor([1], dtype=dtype)
        with Seen() as mode, pytest.raises(IndexError, match="^tensors used as indices must be long, int, byte or "
                                                              "bool tensors$"):
            X[rows]  # noqa: B018 - the refusal is the point
        assert mode.calls == [(idx, [T234, [((1,), str(dtype).split(".")[1])]])]
    with Seen() as mode, pytest.raises(IndexError, match="^tensors used as indices must be long, int, byte"):
        X[tm.tensor([1.0])]
    assert [name for name, _ in mode.calls] == ["aten.lift_fresh.default", idx]
    byte_mask = tm.ones(2, 3, 4, dtype=tm.uint8)
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        assert seen(lambda: X[byte_mask]) == [(idx, [T234, [((2, 3, 4), "uint8")]])]
    byte_one = tm.tensor(1, dtype=tm.uint8)  # a scalar bool, without the deprecation warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [name for name, _ in seen(lambda: X[byte_one])] == [
            "aten.unsqueeze.default", "aten._local_scalar_dense.default", "aten.empty.memory_format",
            "aten.fill_.Scalar", idx]
        assert X[byte_one].shape == (1, 2, 3, 4)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "bool", "float32"])
def test_index_tensor_dtypes_log_as_torch(dtype):
    torch = pytest.importorskip("torch")
    programs = [f"x[L.tensor(1, dtype=L.{dtype})]", f"x[L.tensor([1], dtype=L.{dtype})]",
                f"x[:, L.tensor(1, dtype=L.{dtype})]", f"x[0, L.tensor(0, dtype=L.{dtype})]",
                f"x[L.ones(2, 3, dtype=L.{dtype})]", f"x[None, L.tensor([0, 1], dtype=L.{dtype})]"]

    def run(library, base, program):
        log = []

        class Log(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append(str(func))
                return func(*args, **(kwargs or {}))

        x = library.arange(6.0).reshape(2, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Log():
                try:
                    result = eval(program, {"L": library, "x": x})  # noqa: S307 - the test's own programs
                    log.append((tuple(result.shape), result.tolist()))
                except Exception as error:  # noqa: BLE001 - the outcome is compared
                    log.append((type(error).__name__, str(error)))
        return log

    for program in programs:
        assert run(tm, TorchDispatchMode, program) == \
            run(torch, torch.utils._python_dispatch.TorchDispatchMode, program), program


def test_indexing_errors_are_pytorchs():
    with Seen() as mode, pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        X[5]
    assert mode.calls == []
    with Seen() as mode, pytest.raises(IndexError, match="too many indices for tensor of dimension 3"):
        X[0, 0, 0, ROWS]
    assert mode.calls == []
    # The dimension named is the item's position in the index, as PyTorch names it.
    with Seen() as mode, pytest.raises(IndexError, match="index 7 is out of bounds for dimension 2 with size 3"):
        X[None, 0, 7]
    assert [name for name, _ in mode.calls] == ["aten.unsqueeze.default", "aten.select.int"]
    with Seen(), pytest.raises(IndexError, match="index 7 is out of bounds for dimension 1 with size 4"):
        X[..., 7]


def test_slice_and_select_backward_are_pytorchs_ops():
    x = tm.zeros(2, 3, 4, requires_grad=True)
    with Seen() as mode:
        x[::2, :-1].sum().backward()
    backward = [call for call in mode.calls if call[0].endswith("_backward.default")]
    assert backward == [("aten.slice_backward.default", [((1, 2, 4), F32), [1, 3, 4], 1, 0, -1, 1]),
                        ("aten.slice_backward.default", [((1, 3, 4), F32), [2, 3, 4], 0, 0, MAX, 2])]
    assert x.grad[0, :2].tolist() == [[1.0] * 4] * 2 and x.grad[1].sum().item() == 0.0
    with Seen() as mode:
        x[1, -1].sum().backward()
    assert ("aten.select_backward.default", [((3, 4), F32), [2, 3, 4], 0, 1]) in mode.calls
    assert aten.select_backward.default(tm.ones(2), [2, 2], 1, 0).tolist() == [[1.0, 0.0], [1.0, 0.0]]
    with pytest.raises(RuntimeError, match="The size of tensor a \\(2\\) must match the size of tensor b \\(3\\) "
                                           "at non-singleton dimension 1"):
        aten.slice_backward.default(tm.ones(2, 3, 4), [2, 3, 4], 1, 1, 100, 1)


def test_tensor_from_data_is_lifted():
    assert seen(lambda: tm.tensor([1, 2])) == [("aten.lift_fresh.default", [((2,), "int64")])]
    assert seen(lambda: tm.tensor(3.0)) == [("aten.lift_fresh.default", [((), F32)])]
    with Seen():
        made = tm.tensor([1.0, 2.0], requires_grad=True)
    assert made.requires_grad and made.is_leaf and made._base is None and made.tolist() == [1.0, 2.0]


def test_reshape_and_flatten_view_or_copy_as_pytorch():
    strided = X.transpose(1, 2)
    unsafe = "aten._unsafe_view.default"
    assert seen(lambda: X.reshape(-1, 4)) == [("aten.view.default", [T234, [-1, 4]])]
    assert seen(lambda: tm.reshape(X, (4, -1))) == [("aten.view.default", [T234, [4, -1]])]
    assert seen(lambda: strided.reshape(-1)) == [("aten.clone.default", [((2, 4, 3), F32)]),
                                                 (unsafe, [((2, 4, 3), F32), [24]])]
    assert seen(lambda: X.flatten(1)) == [("aten.view.default", [T234, [2, 12]])]
    assert seen(lambda: strided.flatten(0, 1)) == [("aten.clone.default", [((2, 4, 3), F32)]),
                                                   (unsafe, [((2, 4, 3), F32), [8, 3]])]
    scalar = tm.tensor(1.0)
    assert seen(lambda: scalar.flatten()) == [("aten.view.default", [((), F32), [1]])]
    with Seen() as mode:
        same = X.flatten(1, 1)
    assert same is X and mode.calls == []  # PyTorch's flatten returns its input when nothing flattens
    clone_kwargs = []

    class Kwargs(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            clone_kwargs.append(kwargs)
            return func(*args, **(kwargs or {}))

    with Kwargs():
        strided.reshape(-1)
    assert clone_kwargs[0] == {"memory_format": tm.contiguous_format}


def test_conv_and_max_pool_reach_convolution_and_max_pool2d_with_indices():
    image, weight = tm.zeros(1, 2, 5, 5), tm.zeros(3, 2, 3, 3)
    conv, pool = "aten.convolution.default", "aten.max_pool2d_with_indices.default"
    assert seen(lambda: F.conv2d(image, weight)) == [
        (conv, [((1, 2, 5, 5), F32), ((3, 2, 3, 3), F32), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1])]
    assert seen(lambda: F.conv2d(image, weight, padding="same", dilation=1))[0][1][4] == [1, 1]
    signal, taps, bias = tm.zeros(2, 5), tm.zeros(3, 2, 3), tm.zeros(3)
    assert seen(lambda: F.conv1d(signal, taps, bias, stride=2, padding=1)) == [
        ("aten.unsqueeze.default", [((2, 5), F32), 0]),
        (conv, [((1, 2, 5), F32), ((3, 2, 3), F32), ((3,), F32), [2], [1], [1], False, [0], 1]),
        ("aten.squeeze.dim", [((1, 3, 3), F32), 0])]
    assert seen(lambda: F.max_pool2d(image, 2)) == [(pool, [((1, 2, 5, 5), F32), [2, 2]])]
    assert seen(lambda: F.max_pool2d(image, 3, padding=1)) == [(pool, [((1, 2, 5, 5), F32), [3, 3], [], [1, 1]])]
    assert seen(lambda: F.max_pool2d(image, (2, 3), (1, 2), (1, 0), 2, True)) == [
        (pool, [((1, 2, 5, 5), F32), [2, 3], [1, 2], [1, 0], [2, 2], True])]


def test_eigvals_matrix_exp_and_max_pool3d_reach_pytorchs_ops():
    square, volume = tm.zeros(2, 3, 3), tm.zeros(1, 2, 5, 5, 5)
    assert seen(lambda: tm.linalg.eigvals(square)) == [("aten.linalg_eig.default", [((2, 3, 3), F32)])]
    assert seen(lambda: tm.matrix_exp(square)) == [("aten.linalg_matrix_exp.default", [((2, 3, 3), F32)])]
    assert seen(lambda: square.matrix_exp()) == [("aten.linalg_matrix_exp.default", [((2, 3, 3), F32)])]
    pool, shown = "aten.max_pool3d_with_indices.default", ((1, 2, 5, 5, 5), F32)
    assert seen(lambda: F.max_pool3d(volume, 2)) == [(pool, [shown, [2, 2, 2]])]
    assert seen(lambda: F.max_pool3d(volume, 3, padding=1)) == [(pool, [shown, [3, 3, 3], [], [1, 1, 1]])]
    assert seen(lambda: F.max_pool3d(volume, (2, 3, 2), (1, 2, 1), (1, 0, 1), 2, True)) == [
        (pool, [shown, [2, 3, 2], [1, 2, 1], [1, 0, 1], [2, 2, 2], True])]
    assert seen(lambda: tm.max_pool3d(volume, [2], [], 0, 1)) == [(pool, [shown, [2]])]
    assert seen(lambda: F.max_pool3d(volume, 2, return_indices=True)) == [(pool, [shown, [2, 2, 2]])]


def test_conv3d_reaches_convolution():
    volume, weight = tm.zeros(2, 3, 1, 6, 6), tm.zeros(4, 3, 1, 3, 3)
    assert seen(lambda: F.conv3d(volume, weight, padding=(0, 1, 1))) == [
        ("aten.convolution.default", [((2, 3, 1, 6, 6), F32), ((4, 3, 1, 3, 3), F32), None, [1, 1, 1], [0, 1, 1],
                                      [1, 1, 1], False, [0, 0, 0], 1])]
    single = volume[0]
    assert [name for name, _ in seen(lambda: tm.conv3d(single, weight, stride=2))] == [
        "aten.unsqueeze.default", "aten.convolution.default", "aten.squeeze.dim"]
    assert seen(lambda: F.conv_transpose3d(volume, weight.transpose(0, 1), None, (1, 2, 2), 0, 1, 1, 2)) == [
        ("aten.transpose.int", [((4, 3, 1, 3, 3), F32), 0, 1]),
        ("aten.convolution.default", [((2, 3, 1, 6, 6), F32), ((3, 4, 1, 3, 3), F32), None, [1, 2, 2], [0, 0, 0],
                                      [2, 2, 2], True, [1, 1, 1], 1])]


def test_pinv_and_pinverse_reach_linalg_pinv_with_tensor_tolerances():
    a, full, pinv = tm.zeros(3, 2), "aten.full.default", "aten.linalg_pinv.atol_rtol_tensor"
    assert seen(lambda: tm.linalg.pinv(a)) == [(pinv, [((3, 2), F32)])]
    assert seen(lambda: tm.linalg.pinv(a, rtol=1e-4)) == [
        (full, [[], 0.0]), (full, [[], 1e-4]), (pinv, [((3, 2), F32)])]
    # PyTorch's defaults: atol 0, rtol eps * max(m, n) unless atol > 0; numbers as floats
    assert seen(lambda: tm.linalg.pinv(a, atol=0)) == [
        (full, [[], 0.0]), (full, [[], 3.5762786865234375e-07]), (pinv, [((3, 2), F32)])]
    assert seen(lambda: tm.linalg.pinv(a, atol=1)) == [(full, [[], 1.0]), (full, [[], 0.0]), (pinv, [((3, 2), F32)])]
    assert seen(lambda: tm.pinverse(a)) == [(full, [[], 0.0]), (full, [[], 1e-15]), (pinv, [((3, 2), F32)])]
    square = tm.eye(2)
    with KeywordsSeen() as mode:
        tm.linalg.pinv(square, atol=0.5, rtol=0.1, hermitian=True)
    assert mode.kwargs[-1]["hermitian"] is True and mode.kwargs[-1]["atol"].item() == 0.5
    assert mode.kwargs[0]["dtype"] == tm.float64
    with Seen(), pytest.raises(RuntimeError, match=r"^linalg.pinv\(Float\{\[3\]\}\): expected a tensor with 2"):
        tm.pinverse(tm.zeros(3))


def test_fill_diagonal_fills_as_strided_views():
    tall, cube, strided = tm.zeros(9, 2)[1:], tm.zeros(3, 3, 3), "aten.as_strided.default"
    assert seen(lambda: tall.fill_diagonal_(3, wrap=True)) == [
        (strided, [((8, 2), F32), [2], [3], 2]), ("aten.fill_.Scalar", [((2,), F32), 3]),
        (strided, [((8, 2), F32), [4], [3], 8]), ("aten.fill_.Scalar", [((4,), F32), 3])]
    assert seen(lambda: tall.fill_diagonal_(1.5)) == [
        (strided, [((8, 2), F32), [2], [3], 2]), ("aten.fill_.Scalar", [((2,), F32), 1.5])]
    assert seen(lambda: cube.fill_diagonal_(2)) == [
        (strided, [((3, 3, 3), F32), [3], [13], 0]), ("aten.fill_.Scalar", [((3,), F32), 2])]
    assert tall.tolist() == [[1.5, 0.0], [0.0, 1.5], [0.0, 0.0], [3.0, 0.0], [0.0, 3.0], [0.0, 0.0], [3.0, 0.0],
                             [0.0, 3.0]]
    assert cube[1, 1, 1].item() == 2.0 and cube.sum().item() == 6.0
    with Seen(), pytest.raises(RuntimeError, match="^all dimensions of input must be of equal length$"):
        tm.zeros(3, 3, 4).fill_diagonal_(1.0)


def test_combinations_select_from_a_meshgrid():
    v = tm.tensor([1.5, -2.0, 3.0])
    grid = [("aten.view.default", [((3,), F32), [-1, 1]]), ("aten.expand.default", [((3, 1), F32), [3, 3]]),
            ("aten.view.default", [((3,), F32), [1, -1]]), ("aten.expand.default", [((1, 3), F32), [3, 3]])]
    index_grid = [(name, [((3,) if i % 2 == 0 else shown[0][0], "int64"), shown[1]])
                  for i, (name, shown) in enumerate(grid)]
    assert seen(lambda: tm.combinations(v)) == grid + [("aten.arange.default", [3])] + index_grid + [
        ("aten.full.default", [[3, 3], True]), ("aten.lt.Tensor", [((3, 3), "int64"), ((3, 3), "int64")]),
        ("aten.mul_.Tensor", [((3, 3), "bool"), ((3, 3), "bool")]),
        ("aten.masked_select.default", [((3, 3), F32), ((3, 3), "bool")]),
        ("aten.masked_select.default", [((3, 3), F32), ((3, 3), "bool")]),
        ("aten.stack.default", [[((3,), F32), ((3,), F32)], 1])]
    assert [name for name, _ in seen(lambda: tm.combinations(v, 3, with_replacement=True))].count("aten.le.Tensor") == 2
    assert seen(lambda: tm.combinations(v, 0)) == [("aten.empty.memory_format", [[0]])]
    with Seen():
        assert tm.combinations(v, 2, True).tolist() == [[1.5, 1.5], [1.5, -2.0], [1.5, 3.0], [-2.0, -2.0], [-2.0, 3.0],
                                                       [3.0, 3.0]]


def test_meshgrid_tile_movedim_unflatten_and_circular_pad_are_pytorchs_composites():
    v, w = tm.tensor([1.0, 2.0, 3.0]), tm.tensor([4.0, 5.0])
    assert seen(lambda: tm.meshgrid(v, w, indexing="xy")) == [
        ("aten.view.default", [((2,), F32), [-1, 1]]), ("aten.expand.default", [((2, 1), F32), [2, 3]]),
        ("aten.view.default", [((3,), F32), [1, -1]]), ("aten.expand.default", [((1, 3), F32), [2, 3]])]
    assert seen(lambda: X.tile((2,))) == [("aten.repeat.default", [T234, [1, 1, 2]])]
    assert seen(lambda: tm.movedim(X, (0, 1), (2, 0))) == [("aten.permute.default", [T234, [1, 2, 0]])]
    scalar = tm.tensor(1.0)
    assert seen(lambda: tm.movedim(scalar, 0, 0)) == [("aten.alias.default", [((), F32)])]
    assert seen(lambda: X.unflatten(-1, (2, -1))) == [("aten.view.default", [T234, [2, 3, 2, 2]])]
    image = tm.arange(12.0).reshape(1, 1, 3, 4)
    padded_shape = ((1, 1, 5, 5), F32)
    with Seen() as mode:
        padded = F.pad(image, (2, -1, 0, 2), mode="circular")
    assert mode.calls == [
        ("aten.new_empty.default", [((1, 1, 3, 4), F32), [1, 1, 5, 5]]),
        ("aten.slice.Tensor", [padded_shape, 3, 2, 5]), ("aten.slice.Tensor", [((1, 1, 3, 4), F32), 3, 0, 3]),
        ("aten.slice.Tensor", [((1, 1, 5, 3), F32), 2, 0, 3]), ("aten.slice.Tensor", [((1, 1, 3, 3), F32), 2, 0, 3]),
        ("aten.copy_.default", [((1, 1, 3, 3), F32), ((1, 1, 3, 3), F32)]),
        ("aten.slice.Tensor", [padded_shape, 3, 0, 2]), ("aten.slice.Tensor", [padded_shape, 3, 3, 5]),
        ("aten.copy_.default", [((1, 1, 5, 2), F32), ((1, 1, 5, 2), F32)]),
        ("aten.slice.Tensor", [padded_shape, 2, 3, 5]), ("aten.slice.Tensor", [padded_shape, 2, 0, 2]),
        ("aten.copy_.default", [((1, 1, 2, 5), F32), ((1, 1, 2, 5), F32)])]
    assert padded[0, 0].tolist() == [[1.0, 2.0, 0.0, 1.0, 2.0], [5.0, 6.0, 4.0, 5.0, 6.0],
                                     [9.0, 10.0, 8.0, 9.0, 10.0], [1.0, 2.0, 0.0, 1.0, 2.0],
                                     [5.0, 6.0, 4.0, 5.0, 6.0]]
    assert tm.equal(padded, F.pad(image, (2, -1, 0, 2), mode="circular"))  # the same without a mode


def test_repeat_backward_is_pytorchs():
    # PyTorch's repeat_backward: added leading dimensions summed one by one, then one view that
    # splits each repeated dimension and one sum over the copies (no step for a repeat of 1);
    # zeros for a zero repeat
    def backward(repeats):
        leaf = tm.ones(3, 4, requires_grad=True)
        out = leaf.repeat(*repeats)
        seed = tm.ones(out.shape)
        with Seen() as mode:
            out.backward(seed)
        return mode.calls, leaf.grad

    calls, grad = backward((2, 1, 3))
    assert calls == [("aten.sum.dim_IntList", [((2, 3, 12), F32), [0]]),
                     ("aten.view.default", [((3, 12), F32), [3, 3, 4]]),
                     ("aten.sum.dim_IntList", [((3, 3, 4), F32), [1]]), ("aten.detach.default", [((3, 4), F32)])]
    assert grad.tolist() == [[6.0] * 4] * 3
    calls, grad = backward((2, 0))
    assert calls[0] == ("aten.zeros.default", [[3, 4]]) and grad.tolist() == [[0.0] * 4] * 3


class KeywordsSeen(TorchDispatchMode):
    """Records each call's keyword arguments."""

    def __init__(self):
        super().__init__()
        self.kwargs = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.kwargs.append(dict(kwargs or {}))
        return func(*args, **(kwargs or {}))


def test_decompositions_leave_errors_to_the_ops():
    # Where the op raises, the decomposition steps aside: the errors name the public op.
    with Seen(), pytest.raises(RuntimeError, match="^linalg.eigvals: A must be batches of square matrices"):
        tm.linalg.eigvals(tm.zeros(2, 3))
    with Seen(), pytest.raises(RuntimeError, match="^linalg.eigvals: The input tensor A must have at least 2"):
        tm.linalg.eigvals(tm.zeros(3))
    with Seen(), pytest.raises(RuntimeError, match="^max_pool3d: kernel_size must either be a single int, or a tuple"):
        F.max_pool3d(tm.zeros(1, 2, 4, 4, 4), (1, 2))


# -- the decomposed calls compute what the ops compute ---------------------------------------

class PassThrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


_RNG = np.random.default_rng(7)
_LOGITS = _RNG.standard_normal((5, 4)).astype(np.float32)
_IMAGE = _RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
_KERNEL = _RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
_CUBE = _RNG.standard_normal((3, 4, 5)).astype(np.float64)
_TARGET = [0, 3, 1, 1, 2]
_LABELS = _RNG.integers(0, 3, (2, 6, 6))

# (name, function of a leaf tensor (float, requires grad) returning a tensor, the leaf's data)
PROGRAMS = [
    ("softmax", lambda x: x.softmax(1), _LOGITS),
    ("softmax_dtype", lambda x: tm.softmax(x, 0, dtype=tm.float64), _LOGITS),
    ("softmax_half", lambda x: x.softmax(1, dtype=tm.float16), _LOGITS),
    ("log_softmax", lambda x: F.log_softmax(x, -1), _LOGITS),
    ("cross_entropy", lambda x: F.cross_entropy(x, tm.tensor(_TARGET)), _LOGITS),
    ("cross_entropy_weighted", lambda x: F.cross_entropy(
        x, tm.tensor(_TARGET), tm.tensor([1.0, 2.0, 0.5, 3.0]), reduction="sum", ignore_index=1), _LOGITS),
    ("cross_entropy_none", lambda x: F.cross_entropy(x, tm.tensor(_TARGET), reduction="none"), _LOGITS),
    ("nll_loss", lambda x: F.nll_loss(x.log_softmax(1), tm.tensor(_TARGET)), _LOGITS),
    ("cross_entropy_probabilities", lambda x: F.cross_entropy(x, tm.tensor(_LOGITS).softmax(1)), _LOGITS),
    ("cross_entropy_probabilities_weighted", lambda x: F.cross_entropy(
        x, tm.tensor(_LOGITS[::-1].copy()).softmax(1), tm.tensor([1.0, 2.0, 0.5, 3.0]), reduction="none"), _LOGITS),
    ("cross_entropy_3d", lambda x: F.cross_entropy(x[:, :, :3, 0], tm.tensor([[0, 1, 2], [2, 2, 0]]),
                                                   reduction="none"), _IMAGE),
    ("cross_entropy_4d", lambda x: F.cross_entropy(x, tm.tensor(_LABELS)), _IMAGE),
    ("select_slice", lambda x: x[1, :, 1:4:2], _CUBE),
    ("index", lambda x: x[[0, 2], None, 1:], _CUBE),
    ("mask", lambda x: x[x > 0], _CUBE),
    ("positions_apart", lambda x: x[tm.tensor([0, 2]), ..., tm.tensor([1, 1])], _CUBE),
    ("bool", lambda x: x[0, True], _CUBE),
    ("ellipsis", lambda x: x[...] * 2, _CUBE),
    ("reshape_view", lambda x: x.reshape(4, -1), _CUBE),
    ("reshape_copy", lambda x: x.transpose(0, 2).reshape(-1), _CUBE),
    ("flatten", lambda x: x.transpose(0, 1).flatten(1), _CUBE),
    ("conv2d", lambda x: F.conv2d(x, tm.tensor(_KERNEL), tm.tensor([0.1, 0.2, 0.3, 0.4]), padding=1), _IMAGE),
    ("conv2d_unbatched", lambda x: F.conv2d(x[0], tm.tensor(_KERNEL), stride=2), _IMAGE),
    ("conv1d", lambda x: F.conv1d(x[:, :, 0], tm.tensor(_KERNEL[:, :, 0]), padding="same"), _IMAGE),
    ("max_pool2d", lambda x: F.max_pool2d(x, 3, 2, 1), _IMAGE),
    ("max_pool3d", lambda x: F.max_pool3d(x, 3, 2, 1), _IMAGE),
    ("conv3d", lambda x: F.conv3d(x.unsqueeze(2), tm.tensor(_KERNEL).unsqueeze(2), tm.tensor([0.1, 0.2, 0.3, 0.4]),
                                  padding=(0, 1, 1)), _IMAGE),
    ("conv_transpose3d", lambda x: F.conv_transpose3d(x.unsqueeze(2), tm.tensor(_KERNEL).transpose(0, 1).unsqueeze(2),
                                                      tm.tensor([0.1, 0.2, 0.3, 0.4]), (1, 2, 2), (0, 1, 1), (0, 1, 1)),
     _IMAGE),
    ("conv_transpose3d_unbatched", lambda x: F.conv_transpose3d(x, tm.tensor(_KERNEL[:2, :2, None]), dilation=2),
     _IMAGE),
    ("conv3d_unbatched", lambda x: F.conv3d(x, tm.tensor(_KERNEL[:2, :2, None]), stride=2, dilation=(1, 2, 1)),
     _IMAGE),
    ("max_pool3d_dilated", lambda x: F.max_pool3d(x[None], (2, 3, 2), 1, (1, 0, 1), 2, True), _IMAGE),
    ("eigvals", lambda x: tm.linalg.eigvals(x[:, :3, :3]), _CUBE),
    ("pinv", lambda x: tm.linalg.pinv(x, rtol=0.3), _CUBE),
    ("combinations", lambda x: tm.combinations(x[0, 0], 3), _CUBE),
    ("combinations_with_replacement", lambda x: tm.combinations(x[1, :, 2], with_replacement=True), _CUBE),
    ("fill_diagonal", lambda x: (x * 2).fill_diagonal_(0.5, wrap=True), _CUBE.reshape(12, 5)),
    ("fill_diagonal_transposed", lambda x: (x * 2).t().fill_diagonal_(-1.0, wrap=True), _CUBE.reshape(5, 12)),
    ("pinv_atol", lambda x: tm.linalg.pinv(x[0], atol=0.5, hermitian=False), _CUBE),
    ("pinverse", lambda x: x.pinverse(1e-3), _CUBE),
    ("matrix_exp", lambda x: x[:, :3, 1:4].matrix_exp(), _CUBE),
    ("matmul_folded", lambda x: x @ tm.tensor(_CUBE[0]), _CUBE.transpose(0, 2, 1).copy()),
    ("matmul_batched", lambda x: x.transpose(0, 1) @ tm.tensor(_CUBE[:, 0]).t(), _CUBE),
    ("matmul_vector_batch", lambda x: x[0, :, 0] @ x, _CUBE),
    ("matmul_transposed_fold", lambda x: tm.tensor(_CUBE[0]) @ x, _CUBE.transpose(0, 2, 1).copy()),
    ("linear_strided", lambda x: F.linear(x.transpose(0, 1), tm.tensor(_CUBE[0, :3]), tm.tensor(_CUBE[0, 0, :3])),
     _CUBE),
    ("linear_vector", lambda x: F.linear(x[0, 0], tm.tensor(_CUBE[0])), _CUBE),
    ("meshgrid", lambda x: tm.stack(tm.meshgrid(x[0, 0], x[1, :, 2], indexing="xy")), _CUBE),
    ("tile", lambda x: x.tile((2, 1, 1, 3)), _CUBE),
    ("movedim", lambda x: tm.movedim(x, (0, 1), (2, 0)) * 2, _CUBE),
    ("unflatten", lambda x: x.unflatten(1, (2, -1)) * 2, _CUBE),
    ("pad_circular", lambda x: F.pad(x, (2, -1, 0, 3), mode="circular"), _IMAGE),
    ("pad_circular_unbatched", lambda x: F.pad(x[0, 0], (1, 3), mode="circular"), _IMAGE),
]


_FOLDS_FOR_GRAD = {"matmul_vector_batch"}


@pytest.mark.parametrize("name, program, data", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_decomposed_results_and_gradients_equal_eager(name, program, data):
    def run(mode):
        leaf = tm.tensor(data, requires_grad=True)
        if mode is None:
            out = program(leaf)
        else:
            with mode:
                out = program(leaf)
        seed = tm.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), dtype=out.dtype)
        out.backward(seed)
        return out, leaf.grad

    eager, eager_grad = run(None)
    mode = Seen()
    decomposed, decomposed_grad = run(mode)
    assert decomposed.dtype == eager.dtype and decomposed.shape == eager.shape
    if name in _FOLDS_FOR_GRAD:
        # PyTorch folds a vector @ batch into one mv when the vector requires grad (its should_fold),
        # as the decomposition does; the eager kernel, which cannot know, multiplies batch by batch.
        np.testing.assert_allclose(decomposed.detach().numpy(), eager.detach().numpy(), rtol=1e-14)
    else:
        np.testing.assert_array_equal(decomposed.detach().numpy(), eager.detach().numpy())
    # The backward runs the decomposition's formulas (softmax's, nll_loss's ... instead of a fused
    # op's): the same gradients, to rounding.
    np.testing.assert_allclose(decomposed_grad.numpy(), eager_grad.numpy(), rtol=1e-5, atol=1e-6)
    assert mode.calls  # the mode saw the decomposition


def test_meta_tensors_go_through_the_decompositions():
    x = tm.zeros(2, 3, device="meta")
    with Seen() as mode:
        shapes = [tuple(y.shape) for y in (x[True], x[0, None, 1:], x.t().reshape(-1), F.softmax(x, 1),
                                           F.cross_entropy(x, tm.zeros(2, dtype=tm.int64, device="meta")))]
    assert shapes == [(1, 2, 3), (1, 2), (6,), (2, 3), ()]
    vector = tm.zeros(4, device="meta")
    with Seen() as fused:  # (masked_select's size needs values: combinations stays one op)
        assert tm.combinations(vector, 3).shape == (4, 3)
    assert fused.calls == [("aten.combinations.default", [((4,), F32), 3])]
    assert "aten._unsafe_view.default" in [name for name, _ in mode.calls]


def test_aten_only_ops_compute():
    x = tm.arange(6.0).reshape(2, 3)
    assert aten.slice.Tensor(x, 1, 1).tolist() == [[1.0, 2.0], [4.0, 5.0]]
    assert aten.slice.Tensor(x, 1, -100, 100, 2).tolist() == [[0.0, 2.0], [3.0, 5.0]]
    assert aten.slice.Tensor(x, 0, 5, 1).shape == (0, 3)
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        aten.slice.Tensor(x, 0, 0, 2, 0)
    with pytest.raises(IndexError, match="slice\\(\\) cannot be applied to a 0-dim tensor."):
        aten.slice.Tensor(tm.tensor(1.0), 0, 0, 1)
    picked = aten.index.Tensor(x, [tm.tensor(1)])
    assert picked.tolist() == [3.0, 4.0, 5.0] and picked._base is None  # a copy, unlike x[tm.tensor(1)]
    picked[0] = 9.0
    assert x[1, 0].item() == 3.0
    with pytest.raises(IndexError, match="at least one index must be provided"):
        aten.index.Tensor(x, [])
    output, total = aten.nll_loss_forward.default(
        tm.tensor([[-1.0, -2.0], [-3.0, -0.5], [-1.0, -1.0]]), tm.tensor([0, 1, 1]), tm.tensor([2.0, 4.0]), 1, 0)
    assert output.item() == 0.75 and total.item() == 8.0
    output, total = aten.nll_loss_forward.default(tm.zeros(2, 2), tm.tensor([0, 1]), None, 0, -100)
    assert output.tolist() == [0.0, 0.0] and total.item() == 0.0
    with pytest.raises(RuntimeError, match="softmax with half to float conversion is not supported on CPU"):
        aten._softmax.default(x, 1, True)
    with pytest.raises(RuntimeError, match="log_softmax with half to float conversion is not supported on CPU"):
        aten._log_softmax.default(x, 1, True)
    strided = x.t()
    assert aten._unsafe_view.default(strided, [6]).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    fresh = tm.zeros(2)
    assert aten.alias.default(fresh)._base is fresh
    lifted = aten.lift_fresh.default(x)
    lifted[0, 0] = 7.0
    assert x[0, 0].item() == 7.0 and lifted._base is None


def test_total_weight_has_no_history_as_in_pytorch():
    # nll_loss_forward's second output is not differentiable (PyTorch's output_differentiability),
    # so it does not require grad and saving it for backward is no detach at the dispatch level;
    # the weights still get their (beyond-PyTorch) gradient through the loss.
    weight = tm.tensor([1.0, 2.0, 3.0], requires_grad=True)
    log_probs = tm.zeros(4, 3, requires_grad=True)
    loss, total = aten.nll_loss_forward.default(log_probs, tm.tensor([0, 2, 2, 1]), weight, 1, 1)
    assert loss.requires_grad and not total.requires_grad and total.item() == 7.0  # class 1 ignored
    loss.backward()
    seventh = np.float32(1) / np.float32(7)  # PyTorch's values: the weight times 1 / total_weight
    expected = np.array([[-seventh, 0, 0], [0, 0, -3 * seventh], [0, 0, -3 * seventh], [0, 0, 0]], np.float32)
    np.testing.assert_array_equal(log_probs.grad.numpy(), expected)
    assert weight.grad.tolist() == [0.0, 0.0, 0.0]  # every counted log-probability is 0


def test_squeeze_nodes_are_named_per_overload():
    # PyTorch's squeeze overloads name their nodes SqueezeBackward0 (all), 1 (a dim), 2 (dims);
    # an unbatched conv2d's decomposition ends in squeeze(0).
    x = tm.zeros(1, 3, 1, requires_grad=True)
    names = [type(y.grad_fn).__name__ for y in (x.squeeze(), x.squeeze(0), tm.squeeze(x, (0, 2)))]
    assert names == ["SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2"]


def test_a_zero_nll_loss_is_positive_zero():
    # PyTorch's kernel subtracts each picked entry from 0: a zero loss is +0, not -0.
    for reduction in ("sum", "mean"):
        loss = F.nll_loss(tm.zeros(2, 2), tm.tensor([0, 1]), reduction=reduction)
        assert not np.signbit(loss.numpy())
        output, _ = aten.nll_loss_forward.default(tm.zeros(2, 2), tm.tensor([0, 1]), None, 2, -100)
        assert not np.signbit(output.numpy())


def test_softmax_to_a_half_dtype_rounds_the_input_first():
    # PyTorch converts to ``dtype`` before computing (what the decomposition's _to_copy does).
    x = tm.tensor([[0.1, 1.0001, -2.3], [3.14159, 0.0, 2.71828]])
    for name in ("softmax", "log_softmax"):
        for dtype in (tm.float16, tm.bfloat16):
            direct = getattr(x, name)(1, dtype=dtype)
            np.testing.assert_array_equal(direct.float().numpy(), getattr(x.to(dtype), name)(1).float().numpy())


# -- against PyTorch itself ----------------------------------------------------------------------

TORCH_PROGRAMS = [
    "x.softmax(1)", "torch.softmax(x, -1, dtype=torch.float64)", "F.log_softmax(x, 0)",
    "F.cross_entropy(m, target)", "F.cross_entropy(m, target, w, reduction='sum', ignore_index=1)",
    "F.cross_entropy(m[0], target[0])", "F.nll_loss(m, target, reduction='none')",
    "F.cross_entropy(m, m.softmax(1))", "F.cross_entropy(x, x.softmax(1), w, reduction='none')",
    "F.cross_entropy(m[0], m[1].softmax(0), reduction='sum')", "F.cross_entropy(m, m.double().softmax(1), w)",
    "F.cross_entropy(image, labels)", "F.nll_loss(x, x_labels, ignore_index=1)",
    "F.cross_entropy(image.unsqueeze(-1), labels.unsqueeze(-1), reduction='none')",
    "x[0]", "x[:, 1:]", "x[:]", "x[...]", "x[:, :]", "x[None]", "x[0, None, 1:3]", "x[-2:, ..., ::2]",
    "x[1:, None, ..., :, 2]", "x[mask]", "x[[0, 1]]", "x[rows]", "x[:, rows, None]", "x[rows, ..., rows]",
    "x[0, rows]", "x[[0, 1], 0]", "x[:, [0, 1], 1:]", "x[True]", "x[0, False]", "x[mask[:, :, 0], None, 1:]",
    "x[5:]", "x[:-1]", "x[0][1]", "x[mask[:, :, 0], rows[:1]]", "x[mask[:, :, 0], None, rows[:1]]",
    "x[0, mask[0], None]",
    "torch.tensor([1, 2])", "torch.tensor([[1.5], [2.5]])",
    "x.reshape(6, 4)", "x.reshape(-1)", "torch.reshape(x, (4, -1))", "x.transpose(0, 1).reshape(-1)",
    "x[:, 0].reshape(-1)", "x.flatten()", "x.flatten(1)", "x.flatten(1, 1)", "x.transpose(1, 2).flatten(0, 1)",
    "m[0, 0].flatten()",
    "F.conv2d(image, kernel)", "F.conv2d(image[0], kernel, bias, stride=2, padding=1)",
    "F.conv2d(image, kernel, padding='same', dilation=2)", "F.conv1d(image[:, :, 0], kernel[:, :, 0], groups=1)",
    "x @ w_3x4.t()", "x @ m.t()[0]", "m[:, 0] @ x.transpose(1, 2)", "x @ x.transpose(1, 2)",
    "x[:1].unsqueeze(0) @ x.transpose(1, 2)", "x.transpose(0, 1) @ w_3x4.t()", "m[:3, :3] @ x",
    "m[0] @ m.t()", "m[0] @ m[0]", "m.t() @ m[:, 0]",
    "F.linear(x, w_3x4)", "F.linear(x, w_3x4, w)", "F.linear(x.transpose(0, 1), w_3x4, w)",
    "F.linear(x[0, 0], w_3x4, w)", "F.linear(x[0], w_3x4)", "F.linear(x[0, 0], w_3x4)",
    "F.max_pool2d(image, 2)", "F.max_pool2d(image, 3, padding=1)",
    "F.max_pool2d(image, (2, 3), (1, 2), (1, 0), 2, True)",
    "F.max_pool3d(image, 2)", "F.max_pool3d(image, 3, padding=1)",
    "F.max_pool3d(image, (2, 3, 2), (1, 2, 1), (1, 0, 1), 2)",
    "torch.max_pool3d(image, 2, 1, 0, 1)", "F.max_pool3d(image[None], 2, return_indices=True)[1]",
    "torch.linalg.eigvals(x[:, :, :3])", "torch.matrix_exp(m[:3])", "x[:, :, 1:].matrix_exp()",
    "F.conv3d(image.unsqueeze(2), kernel.unsqueeze(2), bias, padding=(0, 1, 1))",
    "F.conv3d(image, kernel[:2, :2].unsqueeze(2), stride=2)",
    "F.conv_transpose3d(image.unsqueeze(2), kernel.transpose(0, 1).unsqueeze(2), bias, (1, 2, 2), (0, 1, 1), "
    "(0, 1, 1))", "F.conv_transpose3d(image, kernel[:2, :2].unsqueeze(2), dilation=(1, 2, 1))",
    "torch.linalg.pinv(x)", "torch.linalg.pinv(x, rtol=0.3)", "torch.linalg.pinv(m, atol=0)", "torch.pinverse(m, 0.1)",
    "torch.linalg.pinv(x, atol=0.5, rtol=0.1)", "x.pinverse()",
    "m.clone().fill_diagonal_(2)", "torch.cat([m, m, m]).fill_diagonal_(0.5, wrap=True)",
    "image[0, 0, 1:].fill_diagonal_(-1.0, True)", "torch.combinations(w)", "torch.combinations(m[0], 3, True)",
    "torch.combinations(rows, 1)", "torch.combinations(w, 0)", "torch.cat([m, m]).t().t().fill_diagonal_(1)",
    "torch.meshgrid(w, m[0], indexing='ij')[1]", "torch.meshgrid(w, w[:2], indexing='xy')[0]",
    "torch.meshgrid(w[0], indexing='ij')[0]", "torch.tile(x, (2,))", "x.tile((2, 1, 1, 3))", "torch.tile(w[0], ())",
    "torch.movedim(x, 0, 2)", "x.movedim((0, 1), (2, 0))", "torch.moveaxis(x, -1, 0)", "torch.movedim(w[0], 0, 0)",
    "x.unflatten(2, (2, 2))", "x.transpose(0, 2).unflatten(1, (3, -1))",
    "F.pad(image, (1, 1, 1, 1), mode='circular')", "F.pad(x, (-1, 2), mode='circular')",
    "F.pad(m, (1, 3), mode='circular')", "F.pad(image, (2, -1, 0, 3), mode='circular')",
]


def _run_logged(library, functional, program: str, requires_grad: bool = False):
    import torch

    from tensormodes.utils._python_dispatch import TorchDispatchMode as OurMode

    base = torch.utils._python_dispatch.TorchDispatchMode if library is torch else OurMode
    rng = np.random.default_rng(3)
    data = {"x": rng.standard_normal((2, 3, 4)).astype(np.float32), "m": rng.standard_normal((4, 3)).astype(np.float32),
            "target": np.array([0, 2, 1, 1]), "w": np.array([1.0, 2.0, 3.0], np.float32), "rows": np.array([0, 1]),
            "image": rng.standard_normal((2, 3, 6, 6)).astype(np.float32),
            "kernel": rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "bias": np.ones(4, np.float32),
            "labels": rng.integers(0, 3, (2, 6, 6)), "x_labels": rng.integers(0, 3, (2, 4)),
            "w_3x4": rng.standard_normal((3, 4)).astype(np.float32)}
    names = {key: library.from_numpy(value.copy()) for key, value in data.items()}
    for key in ("x", "m", "image") if requires_grad else ():
        names[key].requires_grad_()
    names.update(torch=library, F=functional, mask=names["x"].detach() > 0)
    calls = []

    class Log(base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            calls.append(_as_pytorch_names(func, args))
            return func(*args, **(kwargs or {}))

    with Log():
        result = eval(program, names)  # noqa: S307 - the table's own programs
    # A deliberate difference: the mean of cross entropy with class probabilities divides by a Python
    # number, which reaches div.Tensor here (PyTorch's C++ composite calls div.Scalar).
    same = {"aten.div.Scalar": "aten.div.Tensor"}
    return [(same.get(name, name), args) for name, args in calls], result


# Backward ops of indexing's decomposition: slice_backward, select_backward. (The backward ops of the
# other composites are not all PyTorch's yet: index.Tensor's is new_zeros + index_put there,
# max_pool2d's max_pool2d_with_indices_backward, and PyTorch's autograd runs ``detach`` when it
# saves an op's output.)
# (movedim's, unflatten's and circular padding's backward are PyTorch's too but for the backward
# of copy_ into a slice, CopySlices.)
BACKWARD_PROGRAMS = ["x[:, 1:]", "x[0, ::2]", "x[1:, None, ..., 0]", "m[-1]",
                     "torch.meshgrid(m[0], m[1], indexing='xy')[0]", "x.tile((1, 2))", "x.repeat(2, 1, 1, 3)",
                     "x.repeat(1, 0, 2)", "m.repeat(3, 1, 2)"]


NODE_PROGRAMS = ["x.softmax(1)", "F.log_softmax(x, 0, dtype=torch.float64)", "F.cross_entropy(m, target)",
                 "F.cross_entropy(x, x_labels, reduction='none')", "F.nll_loss(image, labels)", "x[0]", "x[:, 1:]",
                 "x[rows]", "x[...]", "x.transpose(1, 2).reshape(-1)", "x.flatten(1)", "F.conv2d(image[0], kernel)",
                 "F.max_pool2d(image, 2)", "x @ x.transpose(1, 2)", "F.linear(x, w_3x4)",
                 "F.max_pool3d(image, 2)", "torch.linalg.eigvals(x[:, :, :3])", "x[:, :, 1:].matrix_exp()",
                 "F.conv3d(image, kernel[:2, :2].unsqueeze(2))", "torch.pinverse(m)",
                 "(m * 2).fill_diagonal_(0.0)", "torch.combinations(m[0])",
                 "torch.meshgrid(m[0], m[1], indexing='xy')[0]", "x.tile((1, 2))", "torch.movedim(x, 0, 2)",
                 "x.unflatten(2, (2, 2))", "F.pad(image, (1, 1, 1, 1), mode='circular')"]


@pytest.mark.torch
@pytest.mark.parametrize("program", NODE_PROGRAMS)
def test_decomposed_nodes_are_named_as_torch(program):
    import torch
    import torch.nn.functional as torch_F

    def node(library, functional):
        _, result = _run_logged(library, functional, program, requires_grad=True)
        return type(result.grad_fn).__name__

    assert node(tm, F) == node(torch, torch_F)


@pytest.mark.torch
@pytest.mark.parametrize("program", BACKWARD_PROGRAMS)
def test_backward_op_names_match_torch(program):
    import torch
    import torch.nn.functional as torch_F

    # The forward and backward ops' names (arguments aside), x, m and image requiring grad.
    backward = f"({program}).sum().backward()"
    theirs, _ = _run_logged(torch, torch_F, backward, requires_grad=True)
    ours, _ = _run_logged(tm, F, backward, requires_grad=True)
    assert [name for name, _ in ours] == [name for name, _ in theirs]


@pytest.mark.torch
@pytest.mark.parametrize("program", TORCH_PROGRAMS)
def test_sequences_match_torch(program):
    import torch
    import torch.nn.functional as torch_F

    theirs, their_result = _run_logged(torch, torch_F, program)
    ours, our_result = _run_logged(tm, F, program)
    assert ours == theirs
    np.testing.assert_allclose(our_result.numpy(), their_result.numpy(), rtol=1e-5, atol=1e-6)
    assert tuple(our_result.shape) == tuple(their_result.shape)


def test_where_of_a_condition_or_with_numbers_is_pytorchs_composite():
    c = tm.tensor([True, False])
    cond = ((2,), "bool")
    assert seen(lambda: tm.where(c)) == [
        ("aten.nonzero.default", [cond]), ("aten.unbind.int", [((1, 1), "int64"), 1])]
    assert seen(lambda: tm.where(tm.tensor(True))) == [
        ("aten.lift_fresh.default", [((), "bool")]), ("aten.unsqueeze.default", [((), "bool"), 0]),
        ("aten.nonzero.default", [((1,), "bool")]), ("aten.unbind.int", [((1, 1), "int64"), 1])]
    # a number becomes a 0-d tensor of the result's dtype, other first; the tensor is cast to it
    assert seen(lambda: tm.where(c, 1.0, 2.0)) == [
        ("aten.scalar_tensor.default", [2]), ("aten.scalar_tensor.default", [1]),
        ("aten.where.self", [cond, ((), F32), ((), F32)])]
    ints = tm.ones(2, dtype=tm.int32)
    assert seen(lambda: tm.where(c, 2.5, ints)) == [
        ("aten.scalar_tensor.default", [2.5]), ("aten._to_copy.default", [((2,), "int32")]),
        ("aten.where.self", [cond, ((), F32), ((2,), F32)])]
    assert tm.where(c, 2.5, ints).tolist() == [2.5, 1.0] and tm.where(c, 3, ints).dtype == tm.int32
    x = tm.ones(2, dtype=tm.float64, requires_grad=True)
    with Seen():
        out = tm.where(c, x, 0)
    assert out.dtype == tm.float64 and tm.autograd.grad(out.sum(), x)[0].tolist() == [1.0, 0.0]


class _Raw(TorchDispatchMode):
    """Records (op name, shown arguments) under this library's own names."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((str(func), _shown(list(args))))
        return func(*args, **(kwargs or {}))


def test_setitem_is_pytorchs_set_item():
    def seen(program):
        with _Raw() as mode:
            program()
        return mode.calls

    x, ints = tm.zeros(2, 3), tm.zeros(2, 3, dtype=tm.int64)
    row, value = ((3,), F32), ((), F32)
    assert seen(lambda: x.__setitem__(0, 5.0)) == [
        ("aten.lift_fresh.default", [value]), ("aten.select.int", [((2, 3), F32), 0, 0]),
        ("aten.fill_.Tensor", [row, value])]
    assert seen(lambda: ints.__setitem__(1, 2.7)) == [
        ("aten.lift_fresh.default", [((), "int64")]), ("aten.select.int", [((2, 3), "int64"), 0, 1]),
        ("aten.fill_.Tensor", [((3,), "int64"), ((), "int64")])]
    assert ints.tolist() == [[0, 0, 0], [2, 2, 2]]
    ones = tm.ones(3)
    assert seen(lambda: x.__setitem__(Ellipsis, ones)) == [  # the whole tensor: no indexing op
        ("aten.view.default", [row, [3]]), ("aten.expand.default", [row, [2, 3]]),
        ("aten.copy_.default", [((2, 3), F32), ((2, 3), F32)])]
    assert seen(lambda: x.__setitem__(slice(None), 1)) == [
        ("aten.lift_fresh.default", [value]), ("aten.fill_.Tensor", [((2, 3), F32), value])]
    assert seen(lambda: x.__setitem__((0, 1), ones[0])) == [
        ("aten.select.int", [row, 0, 0]), ("aten.select.int", [((2, 3), F32), 0, 0]),
        ("aten.select.int", [row, 0, 1]), ("aten.copy_.default", [value, value])]
    mask = x > 1
    assert seen(lambda: x.__setitem__(mask, 0.0)) == [
        ("aten.lift_fresh.default", [value]), ("aten.index_put_.default", [((2, 3), F32), [((2, 3), "bool")], value])]
    assert seen(lambda: x.__setitem__((0, [0, 2]), 3.0)) == [
        ("aten.lift_fresh.default", [value]), ("aten.select.int", [((2, 3), F32), 0, 0]),
        ("aten.lift_fresh.default", [((2,), "int64")]),
        ("aten.index_put_.default", [row, [((2,), "int64")], value])]
    assert x.tolist() == [[3.0, 1.0, 3.0], [1.0, 1.0, 1.0]]
    # a None in index_put_'s list and Python bools: the op itself, as before
    assert [name for name, _ in seen(lambda: x.__setitem__((slice(None), [0, 2]), 1.0))] == ["aten.setitem.Tensor"]


@pytest.mark.torch
@pytest.mark.parametrize("statement", [
    "x[0] = 5.0", "x[:, 1] = L.tensor([7., 8.])", "x[...] = L.ones(3)", "x[:] = 1", "x[0, 1] = 2", "i[1] = 2.7",
    "x[None, 0] = L.ones(1, 3)", "x[0:1] = L.ones(3)", "x[L.tensor([0])] = 1.0", "x[x > 0] = 0.0",
    "x[[0, 1]] = L.ones(3)", "x[0, [0, 2]] = 3.0", "x[1] = L.ones(1, 3)", "x[0] = L.tensor(2.0)", "x[0][1] = 3.0"])
def test_setitem_ops_and_values_are_pytorchs(statement):
    import torch

    logs = []
    for library in (tm, torch):
        library.manual_seed(0)
        x, i = library.randn(2, 3), library.zeros(2, 3, dtype=library.int64)
        mode = import_module(f"{library.__name__}.utils._debug_mode").DebugMode
        with mode() as dm:
            exec(statement, {"L": library, "x": x, "i": i})
        logs.append((dm.debug_string().replace("tensormodes", "torch"), x.tolist(), i.tolist()))
    assert logs[0] == logs[1]

"""In-place view ops (PyTorch's ``inplace_view`` tag): ``squeeze_``, ``unsqueeze_``, ``transpose_``,
``t_``, ``swapdims_``, ``swapaxes_``, ``as_strided_`` change a tensor's own shape and strides, never
its data. The tensor keeps its storage, ``_base`` and views; its version counter moves on; its
history gains the view op's node, numbered as PyTorch numbers in-place views' nodes
(``squeeze_.dim``: SqueezeBackward4). Literal expectations are PyTorch 2.13's; with torch installed,
the same programs run there too."""

import numpy as np
import pytest

import tensormodes as tm

from .recording import aten_op_log

# call -> (shape after, strides after, grad_fn name, aten overload a dispatch mode sees)
CALLS = {
    "squeeze_()": ((2, 3), (3, 1), "SqueezeBackward3", "aten.squeeze_.default"),
    "squeeze_(1)": ((2, 3), (3, 1), "SqueezeBackward4", "aten.squeeze_.dim"),
    "squeeze_((1,))": ((2, 3), (3, 1), "SqueezeBackward5", "aten.squeeze_.dims"),
    "unsqueeze_(0)": ((1, 2, 1, 3), (6, 3, 3, 1), "UnsqueezeBackward1", "aten.unsqueeze_.default"),
    "transpose_(0, 2)": ((3, 1, 2), (1, 3, 3), "TransposeBackward1", "aten.transpose_.default"),
    "swapdims_(0, 2)": ((3, 1, 2), (1, 3, 3), "TransposeBackward1", "aten.transpose_.default"),
    "swapaxes_(0, -1)": ((3, 1, 2), (1, 3, 3), "TransposeBackward1", "aten.transpose_.default"),
    "as_strided_((3,), (1,))": ((3,), (1,), "AsStridedBackward1", "aten.as_strided_.default"),
    "as_strided_((2, 2), (1, 2), 1)": ((2, 2), (1, 2), "AsStridedBackward1", "aten.as_strided_.default"),
}


def _run(library, call: str):
    """The facts of ``(x * 1).<call>`` for a (2, 1, 3) leaf x, and x's gradient of a weighted sum
    (``autograd.grad``: the accumulation into ``.grad`` is another test's subject)."""
    x = library.tensor(np.arange(6, dtype=np.float32).reshape(2, 1, 3) / 7, requires_grad=True)
    y = x * 1
    with aten_op_log(library) as log:
        returned = eval(f"y.{call}")
    weights = library.tensor(np.arange(1, 1 + y.numel(), dtype=np.float32).reshape(tuple(y.shape)))
    with aten_op_log(library) as backward:
        grad, = library.autograd.grad((y * weights).sum(), x)
    return {"same object": returned is y, "shape": tuple(y.shape), "stride": tuple(y.stride()),
            "grad_fn": y.grad_fn.name(), "next": y.grad_fn.next_functions[0][0].name(), "version": y._version,
            "base": y._base is None, "ops": log.ops, "values": y.detach().numpy().tolist(),
            "grad": grad.numpy().tolist(), "backward": backward.ops}


@pytest.mark.parametrize("call", list(CALLS))
def test_inplace_views_change_the_tensor_itself_as_pytorch(call):
    shape, stride, node, overload = CALLS[call]
    ours = _run(tm, call)
    assert ours["same object"] and ours["base"] and ours["version"] == 1
    assert (ours["shape"], ours["stride"], ours["grad_fn"], ours["ops"]) == (shape, stride, node, [overload])
    assert ours["next"] == "MulBackward0"
    try:
        import torch
    except ImportError:
        return
    theirs = _run(torch, call)
    if call.startswith("as_strided_"):  # as_strided's backward ops differ (test_dispatch_backward's KNOWN)
        del ours["backward"], theirs["backward"]
    assert ours == theirs


def test_t_in_place_of_a_matrix_and_a_vector():
    m = tm.arange(6.0).reshape(2, 3)
    assert m.t_() is m and m.shape == (3, 2) and m.stride() == (1, 3) and m[0].tolist() == [0.0, 3.0]
    v = tm.arange(3.0)
    assert v.t_().shape == (3,) and v._version == 1
    y = tm.ones(2, 3, requires_grad=True) * 2
    assert y.t_().grad_fn.name() == "TBackward1"


def test_a_view_changed_in_place_stays_a_view_of_its_base():
    base = tm.arange(6.0).reshape(2, 3).clone()
    row = base[1]
    assert row.unsqueeze_(0) is row and row._base is base and row.shape == (1, 3)
    assert base._version == row._version == 1  # one counter for the storage
    row.mul_(10)  # still writes into the base
    assert base.tolist() == [[0.0, 1.0, 2.0], [30.0, 40.0, 50.0]]


def test_gradients_through_a_view_reshaped_in_place_after_its_base_changed():
    def run(library):
        x = library.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        base = x * 1
        row = base[1]
        row.unsqueeze_(0)
        base.mul_(2)  # the row's history is regenerated from the base's current one
        (row * library.tensor([[1.0, 2.0, 3.0]])).sum().backward()
        return x.grad.tolist()

    assert run(tm) == [[0.0, 0.0, 0.0], [2.0, 4.0, 6.0]]


def test_leaves_that_require_grad_refuse_and_nothing_changes():
    x = tm.ones(2, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place"):
        x.squeeze_()
    assert x.shape == (2, 1) and x._version == 0
    with tm.no_grad():
        x.squeeze_()
    assert x.shape == (2,) and x.requires_grad and x.is_leaf


@pytest.mark.parametrize("call, error, message", [
    ("squeeze_(5)", IndexError, r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)$"),
    ("unsqueeze_(5)", IndexError, r"^Dimension out of range \(expected to be in range of \[-3, 2\], but got 5\)$"),
    ("transpose_(0, 5)", IndexError, r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)$"),
    ("as_strided_((3,), (1,), -1)", RuntimeError, r"^Tensor: invalid storage offset -1$"),
])
def test_bad_arguments_raise_pytorchs_errors_and_leave_the_tensor_alone(call, error, message):
    x = tm.zeros(2, 3)
    with pytest.raises(error, match=message):
        eval(f"x.{call}")
    assert x.shape == (2, 3) and x.stride() == (3, 1) and x._version == 0


def test_meta_and_fake_tensors_change_shape_in_place():
    x = tm.empty(2, 3, 4, device="meta")
    assert x.transpose_(0, 2) is x and x.shape == (4, 3, 2) and x.stride() == (1, 4, 12) and x.is_meta
    assert x.squeeze_().shape == (4, 3, 2) and x.unsqueeze_(1).shape == (4, 1, 3, 2)


def test_schemas_and_tags_are_pytorchs():
    aten = tm.ops.aten
    schemas = {str(op._schema) for op in (aten.squeeze_.default, aten.squeeze_.dim, aten.squeeze_.dims,
                                          aten.unsqueeze_.default, aten.transpose_.default, aten.t_.default,
                                          aten.as_strided_.default)}
    assert schemas == {
        "aten::squeeze_(Tensor(a!) self) -> Tensor(a!)",
        "aten::squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)",
        "aten::squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)",
        "aten::unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)",
        "aten::transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)",
        "aten::t_(Tensor(a!) self) -> Tensor(a!)",
        "aten::as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) "
        "-> Tensor(a!)"}
    assert set(aten.t_.default.tags) == {tm.Tag.inplace, tm.Tag.inplace_view, tm.Tag.pt2_compliant_tag}
    y = aten.unsqueeze_.default(tm.zeros(3), 0)
    assert y.shape == (1, 3)


def test_double_backward_through_an_inplace_view():
    x = tm.tensor([[1.0, 2.0]], requires_grad=True)
    y = x * x
    y.t_()
    g, = tm.autograd.grad(y.sum(), x, create_graph=True)
    gg, = tm.autograd.grad(g.sum(), x)
    assert g.tolist() == [[2.0, 4.0]] and gg.tolist() == [[2.0, 2.0]]


def test_resize_as_takes_the_templates_shape():
    # Tensor.resize_as_ (new): resize_ to the template's shape, PyTorch's errors
    x = tm.arange(6.0)
    assert x.resize_as_(tm.zeros(2, 2)) is x and x.tolist() == [[0.0, 1.0], [2.0, 3.0]] and x._version == 1
    with pytest.raises(TypeError, match=r"^resize_as_\(\): argument 'the_template' \(position 1\) must be Tensor, "
                                        r"not int$"):
        x.resize_as_(3)
    with pytest.raises(RuntimeError, match="^cannot resize variables that require grad$"):
        (tm.ones(2, requires_grad=True) * 1).resize_as_(tm.ones(3))

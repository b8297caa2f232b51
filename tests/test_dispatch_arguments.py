"""What a ``__torch_dispatch__`` handler receives, argument by argument (issues 24 §2, 25 §1):
list-typed schema arguments as lists, factories' tensor options as PyTorch's C++ formulas pass
them, ``_to_copy``'s ``layout``, ``nonzero_static``. Literal expectations (PyTorch 2.13's, logged
with its TorchDispatchMode), and the same program under torch when it is installed."""

from __future__ import annotations

import pytest

import tensormodes as tm
from tensormodes.utils._python_dispatch import TorchDispatchMode


def _shape(value, lib) -> str:
    """A handler's argument as text that reads the same for both libraries: container types
    kept (``list[T]`` vs ``tuple[T]``), tensors as ``T``, the module name as ``torch``."""
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{','.join(_shape(v, lib) for v in value)}]"
    if isinstance(value, lib.Tensor):
        return "T"
    return repr(value).replace("tensormodes.", "torch.")


def _log(lib, mode_class, program, keep=None) -> list[str]:
    lines = []

    class Log(mode_class):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if keep is None or any(k in str(func) for k in keep):
                shown = {k: _shape(v, lib) for k, v in kwargs.items()}
                lines.append(f"{func} {_shape(tuple(args), lib)} {shown}")
            return func(*args, **kwargs)

    with Log():
        program(lib)
    return lines


def _torch_log(program, keep=None):
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    return _log(torch, TorchMode, program, keep)


# -- 1. list-typed schema arguments reach handlers as lists --------------------------------------

def _lists(lib):
    x = lib.ones(2, 3)
    i = lib.tensor([0])
    x.index_put((i,), lib.ones(3))
    x.index_put_((i,), lib.ones(3), accumulate=True)
    x[i]
    x.view(3, 2)
    x.sum((0,))
    x.permute((1, 0))
    lib.cat((x, x))


LISTS = [
    "aten.index_put.default tuple[T,list[T],T] {}",
    "aten.index_put_.default tuple[T,list[T],T,True] {}",
    "aten.index.Tensor tuple[T,list[T]] {}",
    "aten.view.default tuple[T,list[3,2]] {}",
    "aten.sum.dim_IntList tuple[T,list[0]] {}",
    "aten.permute.default tuple[T,list[1,0]] {}",
    "aten.cat.default tuple[list[T,T]] {}",
]


def test_list_arguments_are_lists():
    assert _log(tm, TorchDispatchMode, _lists, keep=("index", "view", "sum", "permute", "cat")) == LISTS


def test_index_put_backward_indices_are_a_list():
    def program(lib):
        x = lib.ones(2, 3, requires_grad=True)
        x[lib.tensor([0])].sum().backward()

    assert "aten.index_put.default tuple[T,list[T],T,True] {}" in _log(tm, TorchDispatchMode, program)


def test_a_tensor_list_is_only_made_a_list():
    # one nested list inside ``indices`` is not unwrapped as an int list would be: the error
    # under a mode names the list, as without one
    class Passing(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    x = tm.zeros(3)
    message = r"argument 'indices' \(position 2\) must be tuple of Tensors, not list \(element 0\)"
    with pytest.raises(TypeError, match=message):
        x.index_put(([0, 1],), tm.ones(2))
    with Passing(), pytest.raises(TypeError, match=message):
        x.index_put(([0, 1],), tm.ones(2))


@pytest.mark.torch
def test_list_arguments_match_torch():
    assert _torch_log(_lists, keep=("index", "view", "sum", "permute", "cat")) == LISTS


# -- 4. nonzero_static: a static-shape nonzero, its own aten op ----------------------------------

def test_nonzero_static_values_and_padding():
    x = tm.tensor([[0, 1], [2, 0]])
    assert tm.nonzero_static(x, size=4).tolist() == [[0, 1], [1, 0], [-1, -1], [-1, -1]]
    assert x.nonzero_static(size=1, fill_value=7).tolist() == [[0, 1]]
    assert tm.nonzero_static(x, size=0).shape == (0, 2)
    assert tm.nonzero_static(tm.tensor(3.0), size=2).shape == (2, 0)
    assert tm.nonzero_static(tm.tensor([0.5, float("nan")]), size=3).tolist() == [[0], [1], [-1]]
    assert tm.nonzero_static(x, size=4).dtype == tm.int64
    out = tm.empty(0, dtype=tm.int64)
    assert tm.nonzero_static(x, size=2, out=out) is out and out.tolist() == [[0, 1], [1, 0]]


def test_nonzero_static_errors_are_pytorchs():
    x = tm.tensor([[0, 1], [2, 0]])
    with pytest.raises(RuntimeError, match="^nonzero_static: 'size' must be an non-negative integer$"):
        tm.nonzero_static(x, size=-1)
    with pytest.raises(TypeError, match=r"^nonzero_static\(\): argument 'size' must be int, not float$"):
        tm.nonzero_static(x, size=2.0)
    with pytest.raises(TypeError, match=r"^nonzero_static\(\): argument 'size' must be int, not bool$"):
        tm.nonzero_static(x, size=True)
    with pytest.raises(TypeError, match=r"^nonzero_static\(\): argument 'fill_value' must be int, not float$"):
        tm.nonzero_static(x, size=2, fill_value=1.5)
    with pytest.raises(TypeError):
        tm.nonzero_static(x)


def test_nonzero_static_schema_tags_and_static_meta():
    overload = tm.ops.aten.nonzero_static.default
    assert str(overload._schema) == "aten::nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor"
    assert str(tm.ops.aten.nonzero_static.out._schema) == (
        "aten::nonzero_static.out(Tensor self, *, SymInt size, int fill_value=-1, Tensor(a!) out) -> Tensor(a!)")
    assert tm.Tag.dynamic_output_shape not in overload.tags  # unlike nonzero: the shape is static
    meta = tm.nonzero_static(tm.zeros(5, 2, device="meta"), size=3)
    assert meta.device.type == "meta" and meta.shape == (3, 2) and meta.dtype == tm.int64
    from tensormodes._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fake = tm.nonzero_static(tm.ones(4, 3), size=6)  # no DynamicOutputShapeException
    assert fake.shape == (6, 2)


def test_nonzero_static_at_the_dispatch_level():
    def program(lib):
        x = lib.tensor([[0, 1], [2, 0]])
        lib.nonzero_static(x, size=3)
        lib.nonzero_static(x, size=3, fill_value=5)

    expected = ["aten.nonzero_static.default tuple[T] {'size': '3'}",
                "aten.nonzero_static.default tuple[T] {'size': '3', 'fill_value': '5'}"]
    assert _log(tm, TorchDispatchMode, program, keep=("nonzero",)) == expected


@pytest.mark.torch
def test_nonzero_static_matches_torch():
    torch = pytest.importorskip("torch")
    for data, size, fill in (([[0, 1], [2, 0]], 4, -1), ([0.0, 3.0, 0.0, 1.0], 1, 9), (5, 2, 0), ([[0, 0]], 3, -1)):
        ours = tm.nonzero_static(tm.tensor(data), size=size, fill_value=fill)
        theirs = torch.nonzero_static(torch.tensor(data), size=size, fill_value=fill)
        assert ours.tolist() == theirs.tolist() and tuple(ours.shape) == tuple(theirs.shape)
    assert str(tm.ops.aten.nonzero_static.default._schema) == str(torch.ops.aten.nonzero_static.default._schema)

    def program(lib):
        x = lib.tensor([[0, 1], [2, 0]])
        lib.nonzero_static(x, size=3)
        lib.nonzero_static(x, size=3, fill_value=5)

    assert _torch_log(program, keep=("nonzero",)) == _log(tm, TorchDispatchMode, program, keep=("nonzero",))


# -- 2. factories inside gradient formulas: PyTorch's TensorOptions, not the binding's defaults ---

def _formula_factories(lib):
    x = lib.arange(6.0).reshape(2, 3).requires_grad_()
    x[lib.tensor([0, 1])].sum().backward()  # index_backward: grad.new_zeros(sizes, grad.options())
    x.index_select(0, lib.tensor([1])).sum().backward()
    x.clamp(1, 3).sum().backward()  # clamp_backward: at::scalar_tensor(0., grad.options())
    x.max(0)[0].sum().backward()  # value_selecting_reduction_backward: grad.new_zeros(sizes)


OPTIONS = {"dtype": "torch.float32", "layout": "torch.strided", "device": "device(type='cpu')"}
FORMULA_FACTORIES = [
    "aten.ones_like.default tuple[T] {'pin_memory': 'False', 'memory_format': 'torch.preserve_format'}",
    f"aten.new_zeros.default tuple[T,list[2,3]] {OPTIONS}",
    "aten.ones_like.default tuple[T] {'pin_memory': 'False', 'memory_format': 'torch.preserve_format'}",
    f"aten.new_zeros.default tuple[T,list[2,3]] {OPTIONS}",
    "aten.ones_like.default tuple[T] {'pin_memory': 'False', 'memory_format': 'torch.preserve_format'}",
    f"aten.scalar_tensor.default tuple[0.0] {OPTIONS}",
    "aten.ones_like.default tuple[T] {'pin_memory': 'False', 'memory_format': 'torch.preserve_format'}",
    "aten.new_zeros.default tuple[T,list[2,3]] {}",
]
FACTORIES = ("new_zeros", "_like", "scalar_tensor")


def test_formula_factories_get_pytorchs_options():
    assert _log(tm, TorchDispatchMode, _formula_factories, keep=FACTORIES) == FORMULA_FACTORIES


@pytest.mark.torch
def test_formula_factories_match_torch():
    assert _torch_log(_formula_factories, keep=FACTORIES) == FORMULA_FACTORIES


# -- 3. _to_copy's layout -------------------------------------------------------------------------

def _to_copies(lib):
    x = lib.ones(2)
    lib.ops.aten._to_copy.default(x, dtype=lib.float64, layout=lib.strided)
    lib.ops.aten._to_copy.default(x, layout=lib.strided)
    x.to(lib.float64)


TO_COPIES = [
    "aten._to_copy.default tuple[T] {'dtype': 'torch.float64', 'layout': 'torch.strided'}",
    "aten._to_copy.default tuple[T] {'layout': 'torch.strided'}",
    "aten._to_copy.default tuple[T] {'dtype': 'torch.float64'}",
]


def test_to_copy_takes_a_layout():
    assert _log(tm, TorchDispatchMode, _to_copies, keep=("_to_copy",)) == TO_COPIES
    assert tm._to_copy(tm.ones(2), layout=tm.strided, dtype=tm.int64).tolist() == [1, 1]
    assert repr(tm.strided) == "tensormodes.strided" and type(tm.strided) is tm.layout
    with pytest.raises(TypeError, match="cannot create 'tensormodes.layout' instances"):
        tm.layout()
    with pytest.raises(RuntimeError, match="unsupported layout"):
        tm._to_copy(tm.ones(2), layout="sparse")


@pytest.mark.torch
def test_to_copy_layout_matches_torch():
    torch = pytest.importorskip("torch")
    assert _torch_log(_to_copies, keep=("_to_copy",)) == TO_COPIES
    assert str(tm.ops.aten._to_copy.default._schema) == str(torch.ops.aten._to_copy.default._schema)


# -- Scalar arguments at their schema default: compared by type too, as PyTorch's dispatcher ----

def _scalars(lib):
    x, y = lib.ones(2, 3), lib.ones(2, 3)
    F = lib.nn.functional
    lib.add(x, y, alpha=1.0)  # 1.0 is not the schema's int 1: kept
    lib.add(x, y, alpha=1)
    lib.add(x, y, alpha=2.0)
    F.hardtanh(x, -1.0, 1.0)
    F.hardtanh(x, -1, 1)
    F.elu(x)  # F.elu passes its alpha, a float; scale and input_scale stay at their defaults
    F.relu6(x)
    F.softplus(x)
    F.pad(x, (1, 1))  # pad passes its value as a float, 0.0 when none is given
    F.pad(x, (1, 1), value=2)
    F.leaky_relu(x)


SCALARS = [
    "aten.add.Tensor tuple[T,T] {'alpha': '1.0'}",
    "aten.add.Tensor tuple[T,T] {}",
    "aten.add.Tensor tuple[T,T] {'alpha': '2.0'}",
    "aten.hardtanh.default tuple[T,-1.0,1.0] {}",
    "aten.hardtanh.default tuple[T] {}",
    "aten.elu.default tuple[T,1.0] {}",
    "aten.hardtanh.default tuple[T,0,6] {}",
    "aten.softplus.default tuple[T] {}",
    "aten.constant_pad_nd.default tuple[T,list[1,1],0.0] {}",
    "aten.constant_pad_nd.default tuple[T,list[1,1],2.0] {}",
    "aten.leaky_relu.default tuple[T] {}",
]
_SCALAR_OPS = ("add", "hardtanh", "elu", "softplus", "constant_pad_nd", "leaky_relu")


def test_scalar_defaults_are_compared_by_type():
    assert _log(tm, TorchDispatchMode, _scalars, keep=_SCALAR_OPS) == SCALARS


@pytest.mark.torch
def test_scalar_defaults_match_torch():
    assert _torch_log(_scalars, keep=_SCALAR_OPS) == SCALARS


# -- 5. a direct aten call's trailing arguments at their schema defaults are dropped -----------

def _direct(lib):
    x, y = lib.ones(2, 3), lib.ones(2, 3)
    aten = lib.ops.aten
    aten.cat.default([x, y], 0)
    aten.cat.default([x, y], 1)
    aten.sum.dim_IntList(x, [0], False)
    aten.sum.dim_IntList(x, [0], True)
    aten._softmax.default(x, 1, False)
    aten.add.Tensor(x, y, alpha=1)
    aten.mean.dim(x, [1], False, dtype=None)


DIRECT = [
    "aten.cat.default tuple[list[T,T]] {}",
    "aten.cat.default tuple[list[T,T],1] {}",
    "aten.sum.dim_IntList tuple[T,list[0]] {}",
    "aten.sum.dim_IntList tuple[T,list[0],True] {}",
    "aten._softmax.default tuple[T,1,False] {}",
    "aten.add.Tensor tuple[T,T] {}",
    "aten.mean.dim tuple[T,list[1]] {}",
]


_DIRECT_OPS = ("cat", "sum", "softmax", "add", "mean")


def test_direct_calls_drop_trailing_defaults():
    assert _log(tm, TorchDispatchMode, _direct, keep=_DIRECT_OPS) == DIRECT


@pytest.mark.torch
def test_direct_calls_drop_trailing_defaults_as_torch():
    assert _torch_log(_direct, keep=_DIRECT_OPS) == DIRECT


# ... whatever grad mode, and inside a handler: the next mode down sees them dropped too ---------

def _direct_without_grad(lib):
    with lib.no_grad():
        _direct(lib)


def _handler_explicit(lib):
    """A mode whose handler calls ``func`` with every trailing default written out."""
    aten = lib.ops.aten

    class Explicit(lib.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is aten.cat.default:
                return func(list(args[0]), 0)
            if func is aten.sum.dim_IntList:
                return func(args[0], args[1], False, dtype=None)
            if func is aten.mean.dim:
                return func(args[0], dim=args[1], keepdim=False)
            return func(*args, **kwargs)

    x, y = lib.ones(2, 3), lib.ones(2, 3)
    with Explicit():
        lib.cat([x, y])
        x.sum(0)
        x.mean(1)


def test_direct_calls_drop_trailing_defaults_under_no_grad():
    assert _log(tm, TorchDispatchMode, _direct_without_grad, keep=_DIRECT_OPS) == DIRECT


def test_a_handlers_call_reaches_the_next_mode_without_its_defaults():
    assert _log(tm, TorchDispatchMode, _handler_explicit, keep=_DIRECT_OPS) == HANDLER_EXPLICIT


HANDLER_EXPLICIT = [
    "aten.cat.default tuple[list[T,T]] {}",
    "aten.sum.dim_IntList tuple[T,list[0]] {}",
    "aten.mean.dim tuple[T,list[1]] {}",
]


@pytest.mark.torch
def test_direct_calls_without_grad_and_in_handlers_as_torch():
    assert _torch_log(_direct_without_grad, keep=_DIRECT_OPS) == DIRECT
    assert _torch_log(_handler_explicit, keep=_DIRECT_OPS) == HANDLER_EXPLICIT


# -- a direct call as written (autograd records nothing of a factory); defaults compared as ATen --

def _as_written(lib):
    aten = lib.ops.aten
    x = lib.ones(2, requires_grad=True)
    y = lib.ones(1, 4, 4)
    aten.new_empty.default(x, [3])  # no ``pin_memory=False``: that is ``x.new_empty(3)``'s form
    x.new_empty(3)
    aten.sum.dim_IntList(x, [0], False, dtype=None)
    aten.max_pool2d_with_indices.default(y, [2], [], [0], [1], False)  # [0] is not int[2]'s [0, 0]
    aten.max_pool2d_with_indices.default(y, [2], [], 0, 1, False)
    aten.max_pool2d_with_indices.default(y, [2], [], [0, 0], [1, 1], False)
    aten.softplus.default(y, 1, 20)
    aten.softplus.default(y, 1.0, 20.0)  # a Scalar keeps its type
    aten.nan_to_num.default(y, 0)  # a float takes the int: 0.0, not the default None
    aten.nan_to_num.default(y, posinf=2)  # by name: placed, the default before it filled in
    aten.elu.default(y, scale=2)


AS_WRITTEN = [
    "aten.new_empty.default tuple[T,list[3]] {}",
    "aten.new_empty.default tuple[T,list[3]] {'pin_memory': 'False'}",
    "aten.sum.dim_IntList tuple[T,list[0]] {}",
    "aten.max_pool2d_with_indices.default tuple[T,list[2],list[],list[0],list[1]] {}",
    "aten.max_pool2d_with_indices.default tuple[T,list[2]] {}",
    "aten.max_pool2d_with_indices.default tuple[T,list[2]] {}",
    "aten.softplus.default tuple[T] {}",
    "aten.softplus.default tuple[T,1.0,20.0] {}",
    "aten.nan_to_num.default tuple[T,0.0] {}",
    "aten.nan_to_num.default tuple[T,None,2.0] {}",
    "aten.elu.default tuple[T,1,2] {}",
]
_AS_WRITTEN_OPS = ("new_empty", "sum", "max_pool2d", "softplus", "nan_to_num", "elu")


def test_direct_calls_reach_modes_as_written():
    assert _log(tm, TorchDispatchMode, _as_written, keep=_AS_WRITTEN_OPS) == AS_WRITTEN


@pytest.mark.torch
def test_direct_calls_as_written_match_torch():
    assert _torch_log(_as_written, keep=_AS_WRITTEN_OPS) == AS_WRITTEN


# -- a public default that is not the schema's: a value given equal to it is kept -----------------

def _public_defaults(lib):
    y = lib.tensor([1.0, float("nan")])
    lib.nan_to_num(y)
    lib.nan_to_num(y, 0.0)  # the public default, but the schema's is None: kept
    lib.nan_to_num(y, 0)
    lib.nan_to_num(y, None)
    lib.nan_to_num(y, posinf=1.0)
    y.clone().nan_to_num_(0.0)
    lib.nan_to_num(y, 0.0, out=lib.empty(2))


PUBLIC_DEFAULTS = [
    "aten.nan_to_num.default tuple[T] {}",
    "aten.nan_to_num.default tuple[T,0.0] {}",
    "aten.nan_to_num.default tuple[T,0.0] {}",
    "aten.nan_to_num.default tuple[T] {}",
    "aten.nan_to_num.default tuple[T,None,1.0] {}",
    "aten.nan_to_num_.default tuple[T,0.0] {}",
    "aten.nan_to_num.out tuple[T,0.0] {'out': 'T'}",
]


def test_a_given_public_default_that_is_not_the_schemas_is_kept():
    assert _log(tm, TorchDispatchMode, _public_defaults, keep=("nan_to_num",)) == PUBLIC_DEFAULTS


@pytest.mark.torch
def test_given_public_defaults_match_torch():
    assert _torch_log(_public_defaults, keep=("nan_to_num",)) == PUBLIC_DEFAULTS

"""tensormodes.library: custom ops as one op of the dispatch level, with PyTorch's schemas,
errors, autograd semantics and opcheck results."""


import itertools
from collections.abc import Sequence
from typing import Optional

import numpy as np
import pytest

import tensormodes as tm
from tensormodes._dispatch import kernel_site
from tensormodes._meta_array import MetaArray
from tensormodes.library import OpCheckError, custom_op, infer_schema, opcheck
from tensormodes.overrides import TorchFunctionMode
from tensormodes.utils._python_dispatch import TorchDispatchMode

_COUNTER = itertools.count()


def fresh(name: str) -> str:
    """A new qualified name per test: ops are global, as in PyTorch."""
    return f"libtest::{name}{next(_COUNTER)}"


class Recorder(TorchDispatchMode):
    def __init__(self):
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append((str(func), args, kwargs or {}))
        return func(*args, **(kwargs or {}))


class FunctionRecorder(TorchFunctionMode):
    def __init__(self):
        self.seen = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen.append((func, args, kwargs or {}))
        return func(*args, **(kwargs or {}))


def scaled(name=None):
    @custom_op(name or fresh("scaled"), mutates_args=())
    def op(x: tm.Tensor, k: float = 2.0) -> tm.Tensor:
        return x * k
    return op


# -- schemas ---------------------------------------------------------------------------------------

def _many(a: tm.Tensor, b: tm.Tensor | None, c: list[tm.Tensor], d: int, i: Sequence[int],  # noqa: UP006
          j: list[float] | None = None, e: float = 1, g: str = "x", *, k: tm.dtype = tm.float32,
          n: int | float | bool = 2) -> tuple[tm.Tensor, tm.Tensor]:
    pass


def test_inferred_schema_strings():
    assert infer_schema(_many, mutates_args=()) == (
        '(Tensor a, Tensor? b, Tensor[] c, SymInt d, SymInt[] i, float[]? j=None, float e=1, str g="x", *, '
        "ScalarType k=float32, Scalar n=2) -> (Tensor, Tensor)")
    assert infer_schema(_many, mutates_args=("a", "c"), op_name="zz").startswith("zz(Tensor(a0!) a, Tensor? b, "
                                                                                   "Tensor(a2!)[] c,")
    assert infer_schema(_many, mutates_args="unknown").startswith("(Tensor(a0!) a, Tensor(a1!)? b, Tensor(a2!)[] c")


def test_op_schema_prints_as_pytorch():
    op = custom_op(fresh("many"), _many, mutates_args=("a", "c"))
    name = op._qualname
    assert str(op._opoverload._schema) == (
        f'{name}(Tensor(a0!) a, Tensor? b, Tensor(a2!)[] c, SymInt d, SymInt[] i, float[]? j=None, float e=1., '
        f'str g="x", *, ScalarType k=6, Scalar n=2) -> (Tensor, Tensor)')
    ns, _, short = name.partition("::")
    packet = getattr(getattr(tm.ops, ns), short)
    assert isinstance(packet, tm.ops.OpOverloadPacket) and isinstance(packet.default, tm.ops.OpOverload)
    assert packet.default is op._opoverload and packet.overloads() == ["default"]
    assert (packet.default.name(), packet.default.namespace, str(packet.default)) == (name, ns, f"{ns}.{short}.default")
    assert repr(packet.default) == f"<OpOverload(op='{ns}.{short}', overload='default')>"
    assert packet._qualified_op_name == name and op._opoverload._schema.arguments[0].is_write


def test_unknown_names():
    with pytest.raises(AttributeError, match="^'_OpNamespace' 'libtest' object has no attribute 'nothere'$"):
        tm.ops.libtest.nothere  # noqa: B018
    op = scaled()
    with pytest.raises(AttributeError, match="has no overload name 'nothere'"):
        op._opoverload.overloadpacket.nothere  # noqa: B018
    with pytest.raises(ValueError, match="not enough values to unpack"):
        custom_op("noname", _no_return_value, mutates_args=())
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'mutates_args'"):
        custom_op("libtest::q")


def _no_return_value(x: tm.Tensor) -> tm.Tensor: ...
def _bad_dict(x: dict) -> tm.Tensor: ...
def _no_return(x: tm.Tensor): ...
def _no_annotation(x) -> tm.Tensor: ...
def _varargs(*x: tm.Tensor) -> tm.Tensor: ...
def _tuple_in(x: tuple[int, int]) -> tm.Tensor: ...
def _int_arg(x: tm.Tensor, n: int) -> tm.Tensor: ...
def _bad_return(x: tm.Tensor) -> dict: ...


@pytest.mark.parametrize("fn, mutates, message", [
    (_no_annotation, (), "infer_schema(func): Parameter x must have a type annotation. Got func with signature "
                         "(x) -> tensormodes.Tensor)"),
    (_no_return, (), "infer_schema(func): No return type annotation was provided. Please add one. Got func with "
                     "signature (x: tensormodes.Tensor))"),
    (_varargs, (), "infer_schema(func): We do not support positional-only args, varargs, or varkwargs. Got func "
                   "with signature (*x: tensormodes.Tensor) -> tensormodes.Tensor)"),
    (_int_arg, ("n",), "infer_schema(func): Parameter n is in mutable_args but only Tensors or collections of "
                       "Tensors can be mutated Got func with signature (x: tensormodes.Tensor, n: int) -> "
                       "tensormodes.Tensor)"),
    (_int_arg, ("z",), "infer_schema(func): {'z'} in mutates_args were not found in the custom op's signature. "
                       "mutates_args should contain the names of all args that the custom op mutates, or just the "
                       "string 'unknown' if you don't know. Got func with signature (x: tensormodes.Tensor, n: int) "
                       "-> tensormodes.Tensor)"),
    (_int_arg, "all", "mutates_args must either be a sequence of the names of the arguments that are mutated or "
                      "the string 'unknown'. "),
])
def test_infer_schema_errors(fn, mutates, message):
    with pytest.raises(ValueError) as info:
        infer_schema(fn, mutates_args=mutates)
    assert str(info.value) == message


def test_unsupported_types_list_the_valid_ones():
    with pytest.raises(ValueError, match=r"^infer_schema\(func\): Parameter x has unsupported type <class 'dict'>\. "
                                         r"The valid types are: dict_keys\(\[<class 'tensormodes.Tensor'>, "):
        infer_schema(_bad_dict, mutates_args=())
    with pytest.raises(ValueError, match=r"We do not support Tuple inputs in schema\. As a workaround, please try to "
                                         r"use List instead\. For example, list\[int\]\."):
        infer_schema(_tuple_in, mutates_args=())
    with pytest.raises(ValueError, match=r"Return has unsupported type <class 'dict'>\. The valid types are: "
                                         r"\{<class 'tensormodes.Tensor'>: 'Tensor', "):
        infer_schema(_bad_return, mutates_args=())


def _torch_message(torch, error: Exception) -> str:
    return (str(error).replace("torch.", "tensormodes.")
            .replace(", tensormodes.distributed.distributed_c10d.GroupName, "
                     "typing.Optional[tensormodes.distributed.distributed_c10d.GroupName]", ""))


@pytest.mark.torch
@pytest.mark.parametrize("source", [
    "def f(x: L.Tensor) -> L.Tensor: ...",
    "def f(x: L.Tensor, y: Optional[L.Tensor], zs: list[L.Tensor], n: int = 3, s: Sequence[int] = None, "
    "*, f: float = 0.5, b: bool = True, d: Optional[L.dtype] = None) -> tuple[L.Tensor, L.Tensor]: ...",
    "def f(x: L.Tensor, y: L.Tensor) -> None: ...",
    "def f(x: L.Tensor) -> list[L.Tensor]: ...",
    "def f(x: L.Tensor) -> tuple[L.Tensor, int, float, bool]: ...",
    "def f(x: L.Tensor, e: float = 1e-5, g: float = 1, h: str = 'cpu') -> L.Tensor: ...",
    "def f(x: dict) -> L.Tensor: ...",
    "def f(x: tuple[int, int]) -> L.Tensor: ...",
    "def f(x: L.Tensor) -> dict: ...",
    "def f(x) -> L.Tensor: ...",
])
@pytest.mark.parametrize("mutates", [(), ("x",), "unknown"])
def test_infer_schema_matches_pytorch(source, mutates):
    import torch
    results = []
    for library in (torch, tm):
        namespace = {"L": library, "Optional": Optional, "Sequence": Sequence}
        exec(source, namespace)  # noqa: S102
        infer = torch.library.infer_schema if library is torch else infer_schema
        try:
            results.append(("ok", infer(namespace["f"], mutates_args=mutates)))
        except Exception as error:  # noqa: BLE001
            results.append((type(error), _torch_message(torch, error) if library is torch else
                            str(error).replace("tensormodes._dtype.dtype", "tensormodes.dtype")
                            .replace("tensormodes._device.device", "tensormodes.device")))
    assert results[0] == results[1]


@pytest.mark.torch
def test_schema_string_matches_pytorch():
    import torch
    name = fresh("many")
    theirs = torch.library.custom_op(name.replace("libtest", "mylibtest"), mutates_args=("a", "c"))(
        _torch_twin(torch))
    ours = custom_op(name, _many, mutates_args=("a", "c"))
    assert str(ours._opoverload._schema) == str(theirs._opoverload._schema).replace("mylibtest", "libtest")


def _torch_twin(torch):
    def _many(a: torch.Tensor, b: torch.Tensor | None, c: list[torch.Tensor], d: int, i: Sequence[int],
              j: list[float] | None = None, e: float = 1, g: str = "x", *, k: torch.dtype = torch.float32,
              n: int | float | bool = 2) -> tuple[torch.Tensor, torch.Tensor]:
        pass
    return _many


def _device_none(x: tm.Tensor, device: tm.device = None) -> tm.Tensor: ...
def _device_cpu(x: tm.Tensor, device: tm.device = "cpu") -> tm.Tensor: ...


def test_schemas_pytorchs_parser_refuses():
    # PyTorch's parser: a non-optional Device or list cannot default to None (PyTorch 2.13's texts,
    # the schema shown under the op's name without its namespace)
    name = fresh("dev")
    with pytest.raises(RuntimeError) as info:
        custom_op(name, _device_none, mutates_args=())
    short = name.partition("::")[2]
    assert str(info.value) == (f"expected string_literal but found 'None' here:\n{short}(Tensor x, Device device=None) "
                               f"-> Tensor\n{' ' * (len(short) + 25)}~~~~ <--- HERE\n")
    with pytest.raises(RuntimeError) as info:
        tm.library.define("libtest::listnone", "(Tensor x,  int[] y = None) -> Tensor")
    assert str(info.value) == ("expected [ but found 'None' here:\nlistnone(Tensor x,  int[] y = None) -> Tensor\n"
                               + " " * 30 + "~~~~ <--- HERE\n")
    assert not hasattr(tm.ops.libtest, "listnone")  # nothing defined
    # an optional Device may default to None; a device default prints as PyTorch's
    optional = custom_op(fresh("devopt"), _device_optional, mutates_args=())
    assert "Device? device=None" in str(optional._opoverload._schema)
    assert str(custom_op(fresh("devcpu"), _device_cpu, mutates_args=())._opoverload._schema).endswith(
        "(Tensor x, Device device=cpu) -> Tensor")
    assert infer_schema(_device_cpu, mutates_args=()) == '(Tensor x, Device device="cpu") -> Tensor'


def _device_optional(x: tm.Tensor, device: tm.device | None = None) -> tm.Tensor: ...


@pytest.mark.torch
def test_schemas_pytorchs_parser_refuses_match_pytorch():
    import torch

    for text in ("(Tensor x, Device d=None) -> Tensor", "(Tensor x, *, Tensor[] ys=None) -> Tensor",
                 "(Tensor x, float[] f=None) -> Tensor", "(Tensor x, int y=None) -> Tensor"):
        results = []
        for library, namespace in ((torch, "mylibtest"), (tm, "libtest")):
            name = fresh("parsed").replace("libtest", namespace)
            try:
                library.library.define(name, text)
                results.append("ok")
            except RuntimeError as error:
                results.append(str(error).replace(name.partition("::")[2], "NAME"))
        assert results[0] == results[1], text


# -- one op at every level --------------------------------------------------------------------------

def test_dispatch_mode_sees_one_op_in_schema_form():
    op = scaled()
    x = tm.ones(2)
    with Recorder() as recorder:
        a = op(x)
        b = op(x, k=3.0)
        c = op._opoverload(x, 4.0)
    name = str(op._opoverload)
    assert [(f, len(args), kw) for f, args, kw in recorder.seen] == [(name, 1, {}), (name, 2, {}), (name, 2, {})]
    assert recorder.seen[1][1][1] == 3.0
    assert (a.tolist(), b.tolist(), c.tolist()) == ([2.0, 2.0], [3.0, 3.0], [4.0, 4.0])


def test_torch_function_mode_sees_the_overload_with_the_call_as_given():
    op = scaled()
    x = tm.ones(2)
    with FunctionRecorder() as recorder:
        op(x)
        op(x, k=3.0)
        op._opoverload.overloadpacket(x)
    assert [(func, kwargs) for func, _, kwargs in recorder.seen] == [
        (op._opoverload, {}), (op._opoverload, {"k": 3.0}), (op._opoverload.overloadpacket, {})]


@pytest.mark.torch
def test_modes_see_what_pytorch_modes_see():
    import torch
    from torch.overrides import TorchFunctionMode as TorchTF
    from torch.utils._python_dispatch import TorchDispatchMode as TorchTD

    seen = {"torch": [], "tm": []}

    def modes(base_tf, base_td, log):
        class TF(base_tf):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(("tf", str(func).rpartition(".")[2], len(args), sorted(kwargs or {})))
                return func(*args, **(kwargs or {}))

        class TD(base_td):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append(("td", str(func).rpartition(".")[2], len(args), sorted(kwargs or {})))
                return func(*args, **(kwargs or {}))
        return TF, TD

    name = fresh("seen")

    def torch_fn(x: torch.Tensor, k: float = 2.0, *, s: float = 1.0) -> torch.Tensor:
        return x * k * s

    def tm_fn(x: tm.Tensor, k: float = 2.0, *, s: float = 1.0) -> tm.Tensor:
        return x * k * s

    ops = {"torch": torch.library.custom_op(name.replace("libtest", "mylibtest"), torch_fn, mutates_args=()),
           "tm": custom_op(name, tm_fn, mutates_args=())}
    for lib, library in (("torch", torch), ("tm", tm)):
        TF, TD = modes(TorchTF, TorchTD, seen[lib]) if lib == "torch" else modes(TorchFunctionMode, TorchDispatchMode,
                                                                                  seen[lib])
        x = library.ones(2)
        with TF(), TD():
            ops[lib](x)
            ops[lib](x, k=3.0)
            ops[lib](x, 3.0, s=2.0)
    assert seen["tm"] == seen["torch"]


def test_meta_and_kernel_site_run_the_fake_rule():
    op = scaled()
    with pytest.raises(RuntimeError) as info:
        op(tm.ones(2, 3, device="meta"))
    assert str(info.value) == (f"There was no fake impl registered for <CustomOpDef({op._qualname})>. This is "
                               "necessary for torch.compile/export/fx tracing to work. Please use "
                               "`op.register_fake` to add an fake impl.")
    calls = []

    @op.register_fake
    def _(x, k=2.0):
        calls.append(type(x._data))
        return x.new_empty(x.shape)

    out = op(tm.ones(2, 3, device="meta"))
    assert (out.device.type, tuple(out.shape), out.dtype) == ("meta", (2, 3), tm.float32)
    # the table's way: the op's OpDef at the kernel-call site, on arrays (what FakeTensorMode runs)
    meta = kernel_site.call(op._opdef, MetaArray((4,), np.dtype(np.float64)))
    assert type(meta) is MetaArray and meta.shape == (4,) and meta.dtype == np.float64
    real = kernel_site.call(op._opdef, np.ones(2, np.float32), 5.0)
    assert real.tolist() == [5.0, 5.0] and real.dtype == np.float32
    assert calls == [MetaArray, MetaArray]


@pytest.mark.torch
def test_missing_fake_rule_message_matches_pytorch():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    name = fresh("nofake")

    def nofake(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    theirs = torch.library.custom_op(name.replace("libtest", "mylibtest"), nofake, mutates_args=())
    with pytest.raises(RuntimeError) as expected, FakeTensorMode():
        theirs(torch.ones(2))

    def nofake(x: tm.Tensor) -> tm.Tensor:  # noqa: F811
        return x * 2
    ours = custom_op(name, nofake, mutates_args=())
    with pytest.raises(RuntimeError) as info:
        ours(tm.ones(2, device="meta"))
    assert str(info.value) == str(expected.value).replace("mylibtest", "libtest")


# -- autograd -----------------------------------------------------------------------------------

def test_autograd_with_setup_context_and_saved_tensors():
    @custom_op(fresh("mulsin"), mutates_args=())
    def mulsin(x: tm.Tensor, y: tm.Tensor, *, s: float = 1.0) -> tuple[tm.Tensor, tm.Tensor]:
        return x * y.sin() * s, x + y

    seen = {}

    def setup_context(ctx, inputs, keyword_only_inputs, output):
        x, y = inputs
        seen["needs"] = ctx.needs_input_grad
        ctx.save_for_backward(x, y)
        ctx.s = keyword_only_inputs["s"]

    def backward(ctx, g1, g2):
        x, y = ctx.saved_tensors
        seen["needs_backward"] = ctx.needs_input_grad
        return g1 * y.sin() * ctx.s + g2, (g1 * x * y.cos() * ctx.s + g2) if ctx.needs_input_grad[1] else None

    mulsin.register_autograd(backward, setup_context=setup_context)
    x = tm.tensor([0.5, 1.0], requires_grad=True)
    y = tm.tensor([2.0, -1.0])
    a, b = mulsin(x, y, s=3.0)
    assert a.grad_fn.name() == f"GeneratedBackwardFor_libtest_{mulsin._name}_defaultBackward"
    (a + b).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.sin([2.0, -1.0]) * 3 + 1, rtol=1e-6)
    assert seen == {"needs": (True, False, False), "needs_backward": (True, False)}
    # against central differences
    x2 = tm.tensor([0.5, 1.0], dtype=tm.float64, requires_grad=True)
    y2 = tm.tensor([2.0, -1.0], dtype=tm.float64, requires_grad=True)
    assert tm.autograd.gradcheck(lambda u, v: mulsin(u, v, s=0.5), (x2, y2))


def test_backward_without_autograd_raises_pytorch_error():
    op = scaled()
    y = op(tm.ones(2, requires_grad=True))
    assert y.requires_grad
    with pytest.raises(RuntimeError, match=rf"^Trying to backward through {op._opoverload} but no autograd formula "
                                           r"was registered\. Please use register_autograd to add one\.$"):
        y.sum().backward()


def test_tensor_list_gradients():
    @custom_op(fresh("lst"), mutates_args=())
    def lst(xs: list[tm.Tensor]) -> list[tm.Tensor]:
        return [t * 2 for t in xs]

    needs = []

    def backward(ctx, grads):
        needs.append(ctx.needs_input_grad)
        return [g * 2 for g in grads]

    tm.library.register_autograd(lst, backward)
    x1, x2 = tm.ones(2, requires_grad=True), tm.ones(3)
    out = lst([x1, x2])
    assert type(out) is list and len(out) == 2
    out[0].sum().backward()
    assert x1.grad.tolist() == [2.0, 2.0] and needs == [([True, False],)]


def test_autograd_on_mutating_op_is_refused():
    @custom_op(fresh("inc"), mutates_args=("x",))
    def inc(x: tm.Tensor, y: tm.Tensor) -> None:
        x.add_(y)

    with pytest.raises(RuntimeError, match=r"^Cannot register autograd formula for non-functional operator "
                                           rf"<CustomOpDef\({inc._qualname}\)> with schema {inc._qualname}\(Tensor"
                                           r"\(a0!\) x, Tensor y\) -> \(\)\. Please create a functional operator"):
        inc.register_autograd(lambda ctx, g: g)


# -- mutation ------------------------------------------------------------------------------------

def test_mutation_bumps_versions_and_is_one_op():
    @custom_op(fresh("inc"), mutates_args=("x",))
    def inc(x: tm.Tensor, y: tm.Tensor) -> None:
        x.add_(y)

    a, b = tm.zeros(2), tm.ones(2)
    assert inc(a, b) is None
    assert a.tolist() == [1.0, 1.0] and a._version == 2 and b._version == 0  # the kernel's add_, then the op's
    with Recorder() as recorder:
        inc(a, b)
    assert [f for f, _, _ in recorder.seen] == [str(inc._opoverload)]
    out = inc(tm.zeros(2, device="meta"), tm.ones(2, device="meta"))  # no return: PyTorch's trivial fake rule
    assert out is None


@pytest.mark.torch
def test_mutation_version_matches_pytorch():
    import torch

    def inc(x: torch.Tensor, y: torch.Tensor) -> None:
        x.add_(y)
    op = torch.library.custom_op(fresh("inc").replace("libtest", "mylibtest"), inc, mutates_args=("x",))
    a = torch.zeros(2)
    op(a, torch.ones(2))
    assert a._version == 2


def test_returning_an_input_is_refused():
    @custom_op(fresh("al"), mutates_args=())
    def al(x: tm.Tensor) -> tm.Tensor:
        return x.view(-1)

    with pytest.raises(RuntimeError, match=r"The output of this custom operator \(1\) must not also be an input to "
                                           r"this custom operator and \(2\) may not alias any inputs"):
        al(tm.ones(2))


# -- kernels and dispatch rules --------------------------------------------------------------------

def test_register_kernel_and_torch_dispatch_rules():
    op = scaled()
    op.register_kernel("cpu", lambda x, k=2.0: x * k + 100)
    assert op(tm.ones(1)).tolist() == [102.0]
    with pytest.raises(RuntimeError, match="Expected one of cpu"):
        op.register_kernel("gpu", lambda x, k=2.0: x)

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    @tm.library.register_torch_dispatch(op, Mode)
    def _(mode, func, types, args, kwargs):
        assert isinstance(mode, Mode) and func is op._opoverload
        return args[0] - 1

    with Mode():
        assert op(tm.ones(1)).tolist() == [0.0]
    assert op(tm.ones(1)).tolist() == [102.0]


# -- opcheck -------------------------------------------------------------------------------------

def test_opcheck_success_and_failures():
    op = scaled()
    op.register_fake(lambda x, k=2.0: tm.empty_like(x))
    assert opcheck(op, (tm.ones(2, 3),)) == {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
                                             "test_faketensor": "SUCCESS", "test_aot_dispatch_dynamic": "SUCCESS"}
    op.register_fake(lambda x, k=2.0: x.new_empty(3))
    results = opcheck(op, (tm.ones(2),), raise_exception=False)
    assert repr(results["test_faketensor"]) == (
        f"MetadataMismatchError(reason='When comparing the output of {op._opoverload} on FakeTensor and concrete "
        "Tensors, found mismatched tensor metadata: Shapes tensormodes.Size([2]) and tensormodes.Size([3]) are not "
        "equal!')")
    op.register_fake(lambda x, k=2.0: tm.empty_like(x, dtype=tm.float64))
    with pytest.raises(OpCheckError, match=r"^opcheck\(op, \.\.\.\): test_faketensor failed with When comparing .* "
                                           r"Dtypes tensormodes.float32 and tensormodes.float64 are not equal! "
                                           r"\(scroll up for stack trace\)$"):
        opcheck(op, (tm.ones(2),), test_utils="test_faketensor")
    op.register_fake(lambda x, k=2.0: tm.empty_strided(tuple(x.shape), (1, 2), device="meta"))
    error = opcheck(op, (tm.ones(2, 3),), test_utils=("test_faketensor",), raise_exception=False)["test_faketensor"]
    assert error.reason.endswith("Stride mismatch! Strides are (3, 1) and (1, 2) (mismatched at 0)!")

    @custom_op(fresh("bad"), mutates_args=())
    def bad(x: tm.Tensor) -> tm.Tensor:
        x.add_(1)
        return x.clone()
    bad.register_fake(lambda x: tm.empty_like(x))
    error = opcheck(bad, (tm.ones(2),), raise_exception=False)["test_schema"]
    assert type(error) is RuntimeError and str(error) == "Argument x is not defined as mutable but was mutated"
    with pytest.raises(ValueError, match=r"expected test_utils to be subset of \('test_schema', "):
        opcheck(op, (tm.ones(2),), test_utils=("nope",))


@pytest.mark.torch
def test_opcheck_failure_texts_match_pytorch():
    import torch

    def f(x: torch.Tensor) -> torch.Tensor:
        return x * 2
    theirs = torch.library.custom_op(fresh("oc").replace("libtest", "mylibtest"), f, mutates_args=())
    theirs.register_fake(lambda x: x.new_empty(3))
    expected = torch.library.opcheck(theirs, (torch.ones(2),), raise_exception=False)
    ours = scaled()
    ours.register_fake(lambda x, k=2.0: x.new_empty(3))
    got = opcheck(ours, (tm.ones(2),), raise_exception=False)
    assert list(got) == list(expected)
    assert got["test_faketensor"].reason.replace(str(ours._opoverload), "OP") == _torch_message(
        torch, expected["test_faketensor"].reason).replace(str(theirs._opoverload), "OP")


def test_numpy_of_a_tensor_requiring_grad_under_no_grad():
    # PyTorch refuses numpy() only with grad mode on: a custom op's kernel (grad mode off) may call it
    x = tm.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    with tm.no_grad():
        assert x.numpy().tolist() == [1.0, 1.0]


def test_scaled_silu_example(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "custom_op_scaled_silu.py"
    spec = importlib.util.spec_from_file_location("custom_op_scaled_silu", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    result = example.main()
    assert result["targets"] == ["examples.scaled_silu.default"]
    # 2*32*4*16 + 2*32*16 forward, 2*32*16 twice and 2*32*4*16 backward (x needs no gradient), 4*32*16 silu
    assert result["flops"] == 13312
    assert result["meta_shape"] == (8, 1)
    assert result["joint_ops"].count("examples.scaled_silu.default") == 1  # one op in the joint graph
    assert "aten.mm.default" in result["joint_ops"]  # and the backward's matmuls after it
    fake_out = result["fake_out"]
    assert type(fake_out).__name__ == "FakeTensor" and tuple(fake_out.shape) == (10**6, 1)
    grads = result["joint"](result["x"])  # the joint graph computes what eager autograd does
    model_grads = tm.autograd.grad(result["model"](result["x"]).sum(), list(result["model"].parameters()))
    assert all(tm.equal(a, b) for a, b in zip(grads, model_grads))
    assert result["checks"] == {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
                                "test_faketensor": "SUCCESS", "test_aot_dispatch_dynamic": "SUCCESS"}
    assert result["losses"][-1] < 0.2 * result["losses"][0]
    model, x = result["model"], result["x"]
    assert tm.equal(result["traced"](x), model(x))
    # the gradient against central differences, in float64
    u = tm.randn(3, 4, dtype=tm.float64, requires_grad=True)
    assert tm.autograd.gradcheck(lambda t: example.scaled_silu(t, 0.7), (u,))
    with Recorder() as recorder:
        model(x)
    assert "examples.scaled_silu.default" in [f for f, _, _ in recorder.seen]
    assert "tensormodes.ops.examples.scaled_silu.default(fc1, 1.5)" in capsys.readouterr().out

"""``nn.Module``'s behaviour: registration, iteration, state dicts, conversions, hooks and interceptors.

Most tests state the exact expectation; ``test_*_matches_torch`` run the same
snippet on PyTorch too and compare results or error types and messages.
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.nn.modules import _hooks as module_hooks
from tensormodes.nn.modules import module as module_module
from tensormodes.overrides import TorchFunctionMode

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None

nn = tm.nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.block = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
        self.scale = nn.Parameter(tm.ones(1))
        self.register_buffer("steps", tm.zeros((), dtype=tm.int64))
        self.register_buffer("cache", tm.zeros(2), persistent=False)

    def forward(self, x):
        return self.block(self.act(self.fc1(x))) * self.scale


# ---------------------------------------------------------------- registration


def test_attribute_assignment_registers_parameters_buffers_and_modules():
    m = nn.Module()
    m.w = nn.Parameter(tm.ones(2))
    m.child = nn.Linear(1, 1)
    m.b = nn.Buffer(tm.zeros(1))
    m.plain = tm.zeros(3)
    m.number = 3
    assert list(m._parameters) == ["w"]
    assert list(m._modules) == ["child"]
    assert list(m._buffers) == ["b"]
    assert "plain" in m.__dict__ and "number" in m.__dict__
    assert m.w is m._parameters["w"] and m.child is m._modules["child"] and m.b is m._buffers["b"]
    assert [n for n, _ in m.named_parameters()] == ["w", "child.weight", "child.bias"]


def test_assigning_none_keeps_the_name_registered():
    m = nn.Linear(2, 2)
    m.bias = None
    assert "bias" in m._parameters and m.bias is None
    assert list(m.state_dict()) == ["weight"]
    m.sub = nn.ReLU()
    m.sub = None
    assert m._modules["sub"] is None and list(m.children()) == []
    bn = nn.BatchNorm1d(2)
    bn.running_mean = None
    assert "running_mean" in bn._buffers and "running_mean" not in bn.state_dict()


def test_assigning_wrong_types_to_registered_names_raises():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"cannot assign 'tensormodes.FloatTensor' as parameter 'weight' "
                                        r"\(torch.nn.Parameter or None expected\)"):
        m.weight = tm.ones(2, 2)
    m.sub = nn.ReLU()
    with pytest.raises(TypeError, match=r"cannot assign 'int' as child module 'sub' "
                                        r"\(torch.nn.Module or None expected\)"):
        m.sub = 3
    bn = nn.BatchNorm1d(2)
    with pytest.raises(TypeError, match=r"cannot assign 'str' as buffer 'running_mean' "
                                        r"\(torch.nn.Buffer, torch.Tensor or None expected\)"):
        bn.running_mean = "x"
    bn.running_mean = tm.ones(2)  # a plain tensor replaces a registered buffer
    assert bn._buffers["running_mean"].tolist() == [1.0, 1.0]


def test_reassigning_a_name_moves_it_between_kinds():
    m = nn.Module()
    m.x = 5
    m.x = nn.Parameter(tm.ones(1))
    assert "x" not in m.__dict__ and "x" in m._parameters
    del m.x
    m.x = nn.ReLU()
    assert "x" not in m._parameters and "x" in m._modules
    with pytest.raises(TypeError, match="cannot assign 'tensormodes.FloatTensor' as child module 'x'"):
        m.x = nn.Buffer(tm.ones(1))  # as in PyTorch, a registered name only takes its own kind (or None)
    del m.x
    m.x = nn.Buffer(tm.ones(1), persistent=False)
    assert "x" in m._buffers and "x" in m._non_persistent_buffers_set
    del m.x
    assert "x" not in m._buffers and "x" not in m._non_persistent_buffers_set
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'x'"):
        m.x  # noqa: B018


def test_register_errors():
    m = nn.Module()
    m.attr = 1
    for call, message in ((lambda: m.register_buffer("a.b", tm.ones(1)), 'buffer name can\'t contain "."'),
                          (lambda: m.register_buffer("", tm.ones(1)), 'buffer name can\'t be empty string ""'),
                          (lambda: m.register_buffer("attr", tm.ones(1)), "attribute 'attr' already exists"),
                          (lambda: m.register_parameter("a.b", None), 'parameter name can\'t contain "."'),
                          (lambda: m.add_module("a.b", nn.ReLU()), 'module name can\'t contain ".", got: a.b'),
                          (lambda: m.add_module("attr", nn.ReLU()), "attribute 'attr' already exists")):
        with pytest.raises(KeyError) as info:
            call()
        assert info.value.args == (message,)
    with pytest.raises(TypeError, match=r"cannot assign 'list' object to buffer 'b' \(torch Tensor or None required\)"):
        m.register_buffer("b", [1])
    with pytest.raises(TypeError, match="buffer name should be a string. Got int"):
        m.register_buffer(1, tm.ones(1))
    with pytest.raises(TypeError, match=r"cannot assign 'tensormodes.FloatTensor' object to parameter 'p' "
                                        r"\(torch.nn.Parameter or None required\)"):
        m.register_parameter("p", tm.ones(1))
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("c", 3)


def test_non_leaf_parameter_is_rejected():
    base = tm.ones(2, requires_grad=True)
    p = nn.Parameter(tm.ones(2))
    p._grad_fn = (base * 2).grad_fn
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'p'. Model parameters must "
                                         "be created explicitly"):
        nn.Module().register_parameter("p", p)


def test_registering_before_init_raises():
    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(tm.ones(1))
            super().__init__()

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


def test_module_init_rejects_arguments_and_missing_forward():
    with pytest.raises(TypeError, match=r"Module.__init__\(\) got an unexpected keyword argument 'x'"):
        nn.Module(x=1)
    with pytest.raises(TypeError, match=r"Module.__init__\(\) takes 1 positional argument but 2 were given"):
        nn.Module(1)
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'):
        nn.Module()(tm.ones(1))


def test_buffer_marker():
    b = nn.Buffer(tm.ones(2, requires_grad=True), persistent=False)
    assert type(b) is tm.Tensor and isinstance(b, nn.Buffer) and not isinstance(tm.ones(1), nn.Buffer)
    assert b.requires_grad and b.grad_fn is None and b.persistent is False
    m = nn.Module()
    m.b = b
    assert m.b is b and list(m.state_dict()) == [] and [n for n, _ in m.named_buffers()] == ["b"]
    with pytest.raises(TypeError, match="Buffer\\(\\): argument 'data' must be a Tensor, not list"):
        nn.Buffer([1])


def test_dir_lists_registered_members():
    names = dir(Net())
    for name in ("fc1", "scale", "steps", "cache", "forward", "training"):
        assert name in names
    assert names == sorted(names)


# ---------------------------------------------------------------- iteration


def test_named_members_order_prefix_and_recurse():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "fc1.weight", "fc1.bias", "block.0.weight", "block.0.bias", "block.1.weight", "block.1.bias"]
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.named_buffers(prefix="m")] == [
        "m.steps", "m.cache", "m.block.1.running_mean", "m.block.1.running_var", "m.block.1.num_batches_tracked"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "block", "block.0", "block.1"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "block"]
    assert [n for n, _ in net.named_modules(prefix="root")][:2] == ["root", "root.fc1"]


def test_shared_modules_and_parameters_are_deduplicated():
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in seq.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in seq.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(list(seq.children())) == 2
    # A parameter shared by two modules is also yielded once.
    other = nn.Linear(2, 2)
    other.weight = shared.weight
    assert len(list(nn.Sequential(shared, other).parameters())) == 3
    # The state dict keeps every name (as PyTorch's does).
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_deep_chains_do_not_recurse():
    deep = nn.Identity()
    for _ in range(3000):
        wrapper = nn.Module()
        wrapper.inner = deep
        deep = wrapper
    assert len(list(deep.modules())) == 3001
    assert len(deep.state_dict()) == 0


# ---------------------------------------------------------------- state dict


def test_state_dict_is_ordered_detached_and_shares_memory():
    net = Net()
    sd = net.state_dict()
    assert type(sd) is OrderedDict
    assert list(sd) == ["scale", "steps", "fc1.weight", "fc1.bias", "block.0.weight", "block.0.bias",
                        "block.1.weight", "block.1.bias", "block.1.running_mean", "block.1.running_var",
                        "block.1.num_batches_tracked"]
    assert all(not v.requires_grad and type(v) is tm.Tensor for v in sd.values())
    assert sd._metadata == OrderedDict([("", {"version": 1}), ("fc1", {"version": 1}), ("act", {"version": 1}),
                                        ("block", {"version": 1}), ("block.0", {"version": 1}),
                                        ("block.1", {"version": 2})])
    with tm.no_grad():
        net.scale.fill_(7)
    assert sd["scale"].tolist() == [7.0]  # detached, not copied
    kept = net.state_dict(keep_vars=True)
    assert kept["scale"] is net.scale
    assert list(net.fc1.state_dict(prefix="x.")) == ["x.weight", "x.bias"]


def test_load_state_dict_round_trip_and_result():
    a, b = Net(), Net()
    result = b.load_state_dict(a.state_dict())
    assert result == ([], []) and repr(result) == "<All keys matched successfully>"
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert x.tolist() == y.tolist(), name
    weight = b.fc1.weight
    b.load_state_dict(Net().state_dict())
    assert b.fc1.weight is weight  # copied in place


def test_load_state_dict_strict_errors():
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict({"weight": tm.ones(3, 3), "bias": sd["bias"], "extra": tm.ones(1)})
    assert str(info.value) == (
        'Error(s) in loading state_dict for Linear:\n\tUnexpected key(s) in state_dict: "extra". \n\t'
        "size mismatch for weight: copying a param with shape tensormodes.Size([3, 3]) from checkpoint, "
        "the shape in current model is tensormodes.Size([2, 2]).")
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias". '):
        m.load_state_dict({"weight": sd["weight"]})
    result = m.load_state_dict({"weight": sd["weight"], "other": tm.ones(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["other"]
    assert repr(result) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['other'])"
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got <class 'list'>."):
        m.load_state_dict([])


def test_load_state_dict_hints_at_a_module_prefix():
    m = nn.Linear(2, 2)
    wrapped = {"module." + k: v for k, v in m.state_dict().items()}
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(wrapped)
    message = str(info.value)
    assert message.startswith('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: '
                              '"weight", "bias". \n\tUnexpected key(s) in state_dict: "module.weight", '
                              '"module.bias". \n\tHint: every unexpected key is a missing key with an extra '
                              '"module." prefix')
    outer = nn.Module()
    outer.module = nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match='Hint: every missing key is an unexpected key with a "module." prefix '
                                           "added"):
        outer.load_state_dict(m.state_dict())
    with pytest.raises(RuntimeError) as info:  # no hint when the keys differ otherwise
        m.load_state_dict({"module.weight": tm.ones(2, 2)})
    assert "Hint" not in str(info.value)


def test_load_state_dict_assign_and_backward_compatible_num_batches_tracked():
    m = nn.Linear(2, 2)
    new = {"weight": tm.zeros(2, 2), "bias": tm.ones(2)}
    m.load_state_dict(new, assign=True)
    assert type(m.weight) is nn.Parameter and m.weight.requires_grad and m.bias.tolist() == [1.0, 1.0]
    bn = nn.BatchNorm1d(2)
    old = OrderedDict((k, v) for k, v in bn.state_dict().items() if k != "num_batches_tracked")
    old._metadata = {"": {"version": 1}}
    assert bn.load_state_dict(old) == ([], [])
    old._metadata = {"": {"version": 2}}
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "num_batches_tracked"'):
        bn.load_state_dict(old)


def test_state_dict_hooks_and_extra_state():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    a, b = WithExtra(), WithExtra()
    a.value = 5
    sd = a.state_dict()
    assert sd == {"_extra_state": {"value": 5}}
    b.load_state_dict(sd)
    assert b.value == 5
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        b.load_state_dict({})
    seen = []
    m = nn.Linear(1, 1)
    m.register_state_dict_pre_hook(lambda mod, prefix, keep: seen.append(("pre", prefix)))
    m.register_state_dict_post_hook(lambda mod, d, prefix, meta: seen.append(("post", list(d))))
    m.register_load_state_dict_post_hook(lambda mod, keys: seen.append(("load", keys.missing_keys[:])))
    nn.Sequential(m).state_dict()
    m.load_state_dict({"weight": tm.ones(1, 1)}, strict=False)
    assert seen == [("pre", "0."), ("post", ["0.weight", "0.bias"]), ("load", ["bias"])]


# ---------------------------------------------------------------- modes and conversions


def test_train_eval_recurse_and_return_self():
    net = Net()
    assert net.eval() is net
    assert [m.training for m in net.modules()] == [False] * 6
    net.block.train()
    assert net.training is False and net.block[1].training is True
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train(1)


def test_zero_grad():
    m = nn.Linear(2, 1)
    m(tm.ones(2)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert m.weight.grad.tolist() == [[0.0, 0.0]] and m.bias.grad.tolist() == [0.0]
    m.zero_grad()
    assert m.weight.grad is None and m.bias.grad is None


def test_conversions_keep_parameter_identity_and_integer_buffers():
    net = Net()
    net(tm.ones(2, 3)).sum().backward()
    weight = net.fc1.weight
    assert net.double() is net
    assert net.fc1.weight is weight and weight.dtype is tm.float64 and weight.grad.dtype is tm.float64
    assert net.steps.dtype is tm.int64 and net.block[1].num_batches_tracked.dtype is tm.int64
    assert net.cache.dtype is tm.float64
    net.to(tm.float32)
    assert weight.dtype is tm.float32
    net.to(tm.zeros(1, dtype=tm.float16))
    assert weight.dtype is tm.float16 and net.steps.dtype is tm.int64
    net.float()
    net.to("cpu", tm.bfloat16)
    assert weight.dtype is tm.bfloat16
    net.to(dtype=tm.float64, device=tm.device("cpu"))
    assert weight.dtype is tm.float64 and weight.device == tm.device("cpu")
    net.half()
    assert weight.dtype is tm.float16
    net.cpu().type(tm.float32)
    assert net.steps.dtype is tm.float32  # type() casts every parameter and buffer
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes, but got "
                                        "desired dtype=tensormodes.int32"):
        net.to(tm.int32)
    assert isinstance(weight, nn.Parameter) and weight.requires_grad


def test_apply_requires_grad_and_get_members():
    net = Net()
    order = []
    net.apply(lambda m: order.append(type(m).__name__))
    assert order == ["Linear", "ReLU", "Linear", "BatchNorm1d", "Sequential", "Net"]
    assert net.requires_grad_(False) is net and not any(p.requires_grad for p in net.parameters())
    assert net.get_submodule("block.1") is net.block[1] and net.get_submodule("") is net
    assert net.get_parameter("block.0.bias") is net.block[0].bias
    assert net.get_buffer("block.1.running_var") is net.block[1].running_var
    with pytest.raises(AttributeError, match="Sequential has no attribute `5`"):
        net.get_submodule("block.5")
    with pytest.raises(AttributeError, match="`scale` is not an nn.Module"):
        net.get_submodule("scale.x")
    with pytest.raises(AttributeError, match="`steps` is not an nn.Parameter"):
        net.get_parameter("steps")
    with pytest.raises(AttributeError, match="`scale` is not a buffer"):
        net.get_buffer("scale")


def test_repr_nested_and_multiline_extra_repr():
    class Two(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    net = Net()
    net.two = Two()
    assert repr(net) == (
        "Net(\n"
        "  (fc1): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (act): ReLU()\n"
        "  (block): Sequential(\n"
        "    (0): Linear(in_features=4, out_features=4, bias=True)\n"
        "    (1): BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)\n"
        "  )\n"
        "  (two): Two(\n"
        "    a=1\n"
        "    b=2\n"
        "  )\n"
        ")")


# ---------------------------------------------------------------- forward hooks


def test_forward_hooks_order_results_and_removal():
    calls = []
    m = nn.Identity()
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre1") or (args[0] + 1,))
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre0") or args[0] * 10, prepend=True)
    m.register_forward_pre_hook(lambda mod, args, kwargs: calls.append(("prek", kwargs)) or None, with_kwargs=True)
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(("fwd", args[0].tolist())) or out * 2)
    m.register_forward_hook(lambda mod, args, kwargs, out: calls.append("fwdk") or None, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: calls.append("first"), prepend=True)
    assert m(tm.ones(1)).tolist() == [22.0]  # (1 * 10 + 1) * 2
    assert calls == ["pre0", "pre1", ("prek", {}), "first", ("fwd", [11.0]), "fwdk"]
    h1.remove()
    h2.remove()
    h2.remove()  # removing twice is harmless
    calls.clear()
    assert m(tm.ones(1)).tolist() == [10.0]
    assert calls == ["pre0", ("prek", {}), "first", "fwdk"]


def test_forward_pre_hook_with_kwargs_replaces_both():
    class Scale(nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    m = Scale()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": 3.0}), with_kwargs=True)
    assert m(tm.ones(1)).tolist() == [3.0]
    m2 = Scale()
    m2.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of \(new_args, "
                                           r"new_kwargs\), but got"):
        m2(tm.ones(1))


def test_always_call_forward_hook_runs_when_forward_raises():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    seen = []
    m = Boom()
    m.register_forward_hook(lambda mod, args, out: seen.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        m(tm.ones(1))
    assert seen == [("always", None)]


def test_handle_as_context_manager():
    m = nn.Identity()
    with m.register_forward_hook(lambda mod, args, out: out + 1):
        assert m(tm.zeros(1)).tolist() == [1.0]
    assert m(tm.zeros(1)).tolist() == [0.0]
    assert not m._forward_hooks and not m._forward_hooks_with_kwargs


def test_global_forward_hooks_run_before_module_hooks():
    calls = []
    m = nn.Identity()
    m.register_forward_pre_hook(lambda mod, args: calls.append("local pre"))
    m.register_forward_hook(lambda mod, args, out: calls.append("local"))
    with module_module.register_module_forward_pre_hook(lambda mod, args: calls.append("global pre")), \
            module_module.register_module_forward_hook(lambda mod, args, out: calls.append("global")):
        m(tm.ones(1))
        nn.ReLU()(tm.ones(1))
    m(tm.ones(1))
    assert calls == ["global pre", "local pre", "global", "local", "global pre", "global", "local pre", "local"]
    assert not module_hooks._global_forward_hooks and not module_hooks._global_forward_pre_hooks


# ---------------------------------------------------------------- backward hooks


def _backward_record(library, hook_kind):
    """Run a module with a full backward (pre-)hook in ``library``; return what the hooks saw and x.grad."""
    nn_ = library.nn
    lin = nn_.Linear(3, 2)
    with library.no_grad():
        lin.weight.copy_(library.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]))
        lin.bias.copy_(library.tensor([0.5, -0.5]))
    seen = []
    if hook_kind == "hook":
        def hook(module, grad_input, grad_output):
            seen.append(([None if g is None else g.tolist() for g in grad_input], [g.tolist() for g in grad_output]))
        lin.register_full_backward_hook(hook)
    elif hook_kind == "replace":
        lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 2,))
    elif hook_kind == "pre":
        def pre(module, grad_output):
            seen.append([g.tolist() for g in grad_output])
            return (grad_output[0] * library.tensor([1.0, 0.0]),)
        lin.register_full_backward_pre_hook(pre)
    x = library.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    (lin(x) * library.tensor([[1.0, 3.0]])).sum().backward()
    return seen, x.grad.tolist(), lin.weight.grad.tolist()


@pytest.mark.torch
@pytest.mark.parametrize("hook_kind", ["hook", "replace", "pre"])
def test_full_backward_hooks_match_torch(hook_kind):
    assert _backward_record(tm, hook_kind) == _backward_record(torch, hook_kind)


def test_full_backward_hook_exact_values():
    seen, x_grad, _ = _backward_record(tm, "hook")
    assert seen == [([[[-2.0, 3.5, 9.0]]], [[[1.0, 3.0]]])]
    assert x_grad == [[-2.0, 3.5, 9.0]]
    _, x_grad, weight_grad = _backward_record(tm, "pre")
    assert x_grad == [[1.0, 2.0, 3.0]] and weight_grad == [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]


@pytest.mark.torch
def test_full_backward_hook_with_non_tensor_and_constant_inputs_matches_torch():
    def run(library):
        class M(library.nn.Module):
            def forward(self, a, k, b):
                return a * b * k

        seen = []
        m = M()
        m.register_full_backward_hook(
            lambda mod, gi, go: seen.append([None if g is None else g.tolist() for g in gi]))
        a = library.ones(2, requires_grad=True)
        m(a, 3, library.ones(2) * 2).sum().backward()
        return seen, a.grad.tolist()

    assert run(tm) == run(torch)


def test_full_backward_hook_when_no_input_requires_grad_warns():
    seen = []
    lin = nn.Linear(2, 1)
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, [g.tolist() for g in go])))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed with respect "
                                         "to module outputs since no inputs require gradients"):
        lin(tm.ones(1, 2)).sum().backward()
    assert seen == [((None,), [[[1.0]]])]


def test_backward_hook_returning_wrong_count_raises():
    lin = nn.Linear(2, 1)
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of grad_input, got 2, but "
                                           "expected 1"):
        lin(tm.ones(1, 2, requires_grad=True)).sum().backward()
    lin2 = nn.Linear(2, 1)
    lin2.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="Backward pre hook returned an invalid number of grad_output, got 2, "
                                           "but expected 1"):
        lin2(tm.ones(1, 2, requires_grad=True)).sum().backward()


def test_global_backward_hooks_and_removal():
    calls = []
    with module_module.register_module_full_backward_pre_hook(lambda m, go: calls.append(("pre", type(m).__name__))), \
            module_module.register_module_full_backward_hook(lambda m, gi, go: calls.append(type(m).__name__)):
        net = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
        net(tm.ones(1, 2, requires_grad=True)).sum().backward()
    assert calls == [("pre", "Sequential"), ("pre", "Tanh"), "Tanh", ("pre", "Linear"), "Linear", "Sequential"]
    calls.clear()
    net(tm.ones(1, 2, requires_grad=True)).sum().backward()
    assert calls == []


def test_backward_hooks_leave_no_graph_without_grad():
    lin = nn.Linear(2, 1)
    lin.register_full_backward_hook(lambda m, gi, go: None)
    with tm.no_grad():
        out = lin(tm.ones(1, 2, requires_grad=True))
    assert out.grad_fn is None and not out.requires_grad


# ---------------------------------------------------------------- the call path


def test_module_call_is_not_a_torch_function():
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    lin = nn.Linear(2, 2)
    x = tm.ones(1, 2)
    with Log():
        lin(x)
    assert seen == ["linear"]


def test_plain_call_runs_forward_directly(monkeypatch):
    """No hook, no interceptor: ``_hooked_call`` is never reached."""
    def fail(*args, **kwargs):
        raise AssertionError("slow path taken")

    monkeypatch.setattr(nn.Module, "_hooked_call", fail)
    net = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    assert net(tm.ones(1, 2)).shape == (1, 2)
    net.register_forward_hook(lambda *a: None)
    with pytest.raises(AssertionError, match="slow path taken"):
        net(tm.ones(1, 2))


# ---------------------------------------------------------------- interceptors


def test_interceptor_sees_every_call_and_can_replace_it():
    calls = []

    def leaf_linear(module, forward, args, kwargs):
        calls.append(type(module).__name__)
        if isinstance(module, nn.Linear):
            return tm.zeros(args[0].shape[0], module.out_features)  # recorded, not run
        return forward(*args, **kwargs)

    net = nn.Sequential(nn.Linear(2, 3), nn.Sigmoid())
    with module_module.intercept_module_calls(leaf_linear):
        out = net(tm.ones(4, 2))
    assert calls == ["Sequential", "Linear", "Sigmoid"]
    assert out.tolist() == [[0.5] * 3] * 4
    assert module_hooks._INTERCEPTORS.get() == ()


def test_interceptors_nest_innermost_first_and_hooks_run_below_them():
    order = []

    def outer(module, forward, args, kwargs):
        order.append("outer")
        return forward(*args, **kwargs)

    def inner(module, forward, args, kwargs):
        order.append("inner")
        return forward(*args, **kwargs)

    m = nn.Identity()
    m.register_forward_hook(lambda *a: order.append("hook"))
    with module_module.intercept_module_calls(outer), module_module.intercept_module_calls(inner):
        m(tm.ones(1))
    assert order == ["inner", "outer", "hook"]


def test_interceptor_scope_is_restored_on_error_and_is_per_thread():
    def fn(module, forward, args, kwargs):
        return forward(*args, **kwargs)

    with pytest.raises(KeyError):
        with module_module.intercept_module_calls(fn):
            raise KeyError("x")
    assert module_hooks._INTERCEPTORS.get() == ()
    seen = []
    with module_module.intercept_module_calls(fn):
        thread = threading.Thread(target=lambda: seen.append(module_hooks._INTERCEPTORS.get()))
        thread.start()
        thread.join()
        assert module_hooks._INTERCEPTORS.get() == (fn,)
    assert seen == [()]
    with pytest.raises(TypeError, match="intercept_module_calls\\(\\) expects a callable, got int"):
        with module_module.intercept_module_calls(3):
            pass


# ---------------------------------------------------------------- against PyTorch


def _outcome(snippet, library):
    namespace = {"L": library, "nn": library.nn}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(snippet, namespace)
        return ("ok", repr(namespace.get("result")).replace("torch.", "tensormodes."))
    except Exception as error:  # noqa: BLE001 - the error itself is what is compared
        return (type(error).__name__, str(error).replace("torch.", "tensormodes."))


SNIPPETS = [
    "m = nn.Linear(2, 2); m.weight = L.ones(2, 2)",
    "m = nn.Linear(2, 2); m.weight = None; result = (m.weight, list(m.state_dict()))",
    "m = nn.Module(); m.register_buffer('a.b', L.ones(1))",
    "m = nn.Module(); m.register_buffer('x', 3)",
    "m = nn.Module(); m.register_parameter('x', L.ones(1))",
    "m = nn.Module(); m.add_module('x', 3)",
    "m = nn.Module(); m.add_module('', nn.ReLU())",
    "m = nn.Module(); m.x = 1; m.register_parameter('x', None)",
    "m = nn.Module(); m.sub = nn.ReLU(); m.sub = 'no'",
    "m = nn.Module(); result = m.nothing",
    "nn.Module()(1)",
    "nn.Module(3)",
    "m = nn.Linear(2, 2); m.load_state_dict({'module.weight': m.weight, 'module.bias': m.bias}, strict=False); "
    "result = m.load_state_dict({'weight': m.weight}, strict=False)",
    "m = nn.Linear(2, 2); m.load_state_dict({'weight': L.ones(3, 3), 'bias': m.bias, 'extra': 1})",
    "m = nn.Linear(2, 2); m.load_state_dict({'weight': 3, 'bias': m.bias})",
    "m = nn.Linear(2, 2); m.load_state_dict({'bias': m.bias})",
    "m = nn.Sequential(nn.Linear(1, 1)); m.load_state_dict({'0.weight': L.ones(1, 1), '1.bias': L.ones(1)})",
    "m = nn.Linear(2, 2); result = m.load_state_dict(m.state_dict())",
    "m = nn.BatchNorm1d(2); result = list(m.state_dict()._metadata.items())",
    "m = nn.Sequential(nn.Linear(1, 1)); result = m.get_submodule('0.weight')",
    "m = nn.Sequential(nn.Linear(1, 1)); result = m.get_parameter('0.nope')",
    "m = nn.Sequential(nn.Linear(1, 1)); result = m.get_buffer('0.weight')",
    "m = nn.Linear(1, 1); m.to(L.int64)",
    "m = nn.Linear(1, 1); m.train('yes')",
    "m = nn.Linear(2, 2); h = m.register_full_backward_hook(lambda *a: None); "
    "result = m.register_forward_pre_hook(lambda m, a, k: 1, with_kwargs=True) and m(L.ones(2))",
    "m = nn.Linear(2, 2); result = [type(x).__name__ for x in m.state_dict().values()]",
    "result = [n for n, _ in nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU())).named_modules(prefix='p')]",
    "m = nn.Sequential(nn.Sequential(nn.ReLU())); m.set_submodule('0.0', nn.Tanh()); "
    "m.set_submodule('0.x', nn.ReLU()); result = m",
    "m = nn.Sequential(nn.ReLU()); m.set_submodule('', nn.ReLU())",
    "m = nn.Sequential(nn.ReLU()); m.set_submodule('0', 3)",
    "m = nn.Sequential(nn.ReLU()); m.set_submodule('x', nn.ReLU(), strict=True)",
    "m = nn.Sequential(nn.Linear(1, 1)); m.set_submodule('0.weight', nn.ReLU())",
    "m = nn.Sequential(nn.Linear(1, 1)); m.set_submodule('1.x', nn.ReLU())",
]


@pytest.mark.torch
@pytest.mark.parametrize("snippet", SNIPPETS)
def test_module_behaviour_matches_torch(snippet):
    assert _outcome(snippet, tm) == _outcome(snippet, torch)


def test_parameters_to_vector_and_clip_grad():
    m = nn.Linear(2, 2)
    vector = nn.utils.parameters_to_vector(m.parameters())
    assert vector.tolist() == m.weight.flatten().tolist() + m.bias.tolist()
    nn.utils.vector_to_parameters(tm.arange(6.0), m.parameters())
    assert m.weight.tolist() == [[0.0, 1.0], [2.0, 3.0]] and m.bias.tolist() == [4.0, 5.0]
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], m.parameters())
    p = nn.Parameter(tm.zeros(2))
    p.grad = tm.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is "
                                           "non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="`parameters` is an empty generator, no gradient clipping will occur."):
        nn.utils.clip_grad_norm_((q for q in []), 1.0)


@pytest.mark.torch
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
def test_clip_grad_norm_matches_torch(norm_type):
    grads = [RNG_GRADS[0], RNG_GRADS[1]]
    outcomes = []
    for library in (tm, torch):
        params = [library.nn.Parameter(library.zeros(g.shape)) for g in grads]
        for p, g in zip(params, grads):
            p.grad = library.from_numpy(g.copy())
        total = library.nn.utils.clip_grad_norm_(params, 0.5, norm_type=norm_type)
        outcomes.append((total.item(), [p.grad.numpy().copy() for p in params]))
    np.testing.assert_allclose(outcomes[0][0], outcomes[1][0], rtol=1e-6)
    for ours, theirs in zip(outcomes[0][1], outcomes[1][1]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.torch
def test_clip_grad_value_matches_torch():
    outcomes = []
    for library in (tm, torch):
        p = library.nn.Parameter(library.zeros(3, 4))
        p.grad = library.from_numpy(RNG_GRADS[0].copy())
        library.nn.utils.clip_grad_value_([p], 0.3)
        outcomes.append(p.grad.numpy().copy())
    np.testing.assert_array_equal(outcomes[0], outcomes[1])


RNG_GRADS = [np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32),
             np.random.default_rng(4).standard_normal(5).astype(np.float32)]


def _hook_order(library):
    calls = []
    nn_ = library.nn
    tree = nn_.Sequential(nn_.Sequential(nn_.Linear(1, 1)), nn_.Linear(1, 1))
    for name, module in tree.named_modules():
        label = name or "root"
        module.register_state_dict_pre_hook(lambda m, prefix, keep, label=label: calls.append(("pre", label)))
        module.register_state_dict_post_hook(
            lambda m, sd, prefix, meta, label=label: calls.append(("post", label, len(sd))))
        module.register_load_state_dict_post_hook(lambda m, keys, label=label: calls.append(("load", label)))
    tree.load_state_dict(tree.state_dict())
    return calls


def test_state_dict_hooks_run_in_pytorch_order():
    assert _hook_order(tm) == [
        ("pre", "root"), ("pre", "0"), ("pre", "0.0"), ("post", "0.0", 2), ("post", "0", 2), ("pre", "1"),
        ("post", "1", 4), ("post", "root", 4), ("load", "0.0"), ("load", "0"), ("load", "1"), ("load", "root")]


@pytest.mark.torch
def test_state_dict_hook_order_matches_torch():
    assert _hook_order(tm) == _hook_order(torch)


def test_state_dict_positional_arguments_and_overriding_submodules():
    m = nn.Linear(1, 1)
    destination = OrderedDict()
    with pytest.warns(FutureWarning, match="Positional args are being deprecated, use kwargs instead"):
        result = m.state_dict(destination, "p.")
    assert result is destination and list(destination) == ["p.weight", "p.bias"]

    class OnlyWeight(nn.Linear):
        def state_dict(self, *, destination=None, prefix="", keep_vars=False):
            destination[prefix + "w"] = self.weight.detach()
            return destination

    net = nn.Sequential(OnlyWeight(1, 1), nn.Linear(1, 1))
    assert list(net.state_dict()) == ["0.w", "1.weight", "1.bias"]


def test_hooks_registered_after_calls_without_any_still_run():
    # Module calls take a shortcut while no hook was ever registered; registering one (on the
    # module or globally) and removing it again must switch the full check on and off correctly.
    layer = tm.nn.Identity()
    x = tm.ones(1)
    assert layer(x) is x
    handle = layer.register_forward_hook(lambda module, args, output: output * 3)
    assert layer(x).tolist() == [3.0]
    handle.remove()
    assert layer(x) is x
    seen = []
    handle = tm.nn.modules.module.register_module_forward_pre_hook(lambda module, args: seen.append(module))
    other = tm.nn.Identity()
    other(x)
    handle.remove()
    other(x)
    assert seen == [other]


def test_a_tensor_marked_is_param_is_a_parameter():
    """PyTorch's Parameter metaclass: ``_is_param = True`` makes any tensor pass isinstance,
    so a module registers it as a parameter; nothing else changes."""
    t = tm.zeros(2)
    assert not isinstance(t, tm.nn.Parameter)
    t._is_param = True
    assert isinstance(t, tm.nn.Parameter) and type(t) is tm.Tensor
    assert not isinstance(t, tm.nn.UninitializedParameter) and not isinstance(t, tm.nn.Buffer)
    assert not isinstance(1, tm.nn.Parameter) and isinstance(tm.nn.Parameter(tm.ones(1)), tm.nn.Parameter)
    module = tm.nn.Module()
    module.w = t
    assert [name for name, _ in module.named_parameters()] == ["w"]

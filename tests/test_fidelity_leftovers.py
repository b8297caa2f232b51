"""Fidelity leftovers of issues 24, 25 and 30, each checked against PyTorch 2.13 when it is
installed and against literals otherwise: what a ``TorchFunctionMode`` receives for builtins whose
optional tensors are passed positionally and for ``Tensor.backward``; ``autograd.grad``,
``backward`` and ``gradcheck`` on tensor-likes and under modes; the order of the engine's
accumulations into ``.grad`` as a dispatch mode sees it."""

from __future__ import annotations

import math

import pytest

import tensormodes as tm
from tensormodes.overrides import TorchFunctionMode
from tensormodes.utils._python_dispatch import TorchDispatchMode

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None


def _describe(value):
    """A value as a library-independent string (tensors by shape only)."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"T{list(value.shape)}"
    return repr(value)


def calls_seen(library, mode_base, program) -> list[tuple]:
    """``(function name, args, kwargs)`` of each call a logging mode receives while ``program``
    runs (values described by ``_describe``)."""
    seen = []

    class Log(mode_base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            seen.append((func.__name__, tuple(map(_describe, args)),
                         tuple((k, _describe(v)) for k, v in kwargs.items())))
            return func(*args, **kwargs)

    library.manual_seed(0)
    x = library.randn(3, 4, requires_grad=True)
    w = library.randn(2, 4)
    b = library.randn(2)
    with Log():
        program(library, x, w, b)
    return seen


def _linear_calls(library, x, w, b):
    F = library.nn.functional
    F.linear(x, w, b)
    F.linear(x, w)
    F.linear(x, w, bias=b)
    F.linear(input=x, weight=w)


def _backward_calls(library, x, w, b):
    library.nn.functional.linear(x, w).sum().backward()
    (x * 2).sum().backward(retain_graph=True)


def _other_optional_tensor_calls(library, x, w, b):
    index = library.tensor([0, 1, 1])
    library.bincount(index, b[:1].expand(3))
    library.bincount(index)
    library.trapezoid(b, b)
    library.nn.functional.rms_norm(x, (4,), w[0])


LINEAR_CALLS = [
    ("linear", ("T[3, 4]", "T[2, 4]", "T[2]"), ()),
    ("linear", ("T[3, 4]", "T[2, 4]"), ()),
    ("linear", ("T[3, 4]", "T[2, 4]", "T[2]"), ()),  # PyTorch keeps the keyword (README: Differences)
    ("linear", ("T[3, 4]", "T[2, 4]"), ()),
]

BACKWARD_CALLS = [
    ("linear", ("T[3, 4]", "T[2, 4]"), ()),
    ("sum", ("T[3, 2]",), ()),
    ("backward", ("T[]",), (("gradient", "None"), ("retain_graph", "None"), ("create_graph", "False"),
                            ("inputs", "None"))),
    ("mul", ("T[3, 4]", "2"), ()),
    ("sum", ("T[3, 4]",), ()),
    ("backward", ("T[]",), (("gradient", "None"), ("retain_graph", "True"), ("create_graph", "False"),
                            ("inputs", "None"))),
]


def test_an_optional_tensor_given_positionally_reaches_handlers_positionally():
    assert calls_seen(tm, TorchFunctionMode, _linear_calls) == LINEAR_CALLS


def test_tensor_backward_hands_every_keyword_to_handlers():
    assert calls_seen(tm, TorchFunctionMode, _backward_calls) == BACKWARD_CALLS


@pytest.mark.torch
def test_handler_arguments_equal_pytorchs():
    from torch.overrides import TorchFunctionMode as TorchMode

    theirs = calls_seen(torch, TorchMode, _linear_calls)
    # the one call style the generated signature cannot tell apart: a keyword given for a
    # positional parameter (PyTorch hands its builtins' arguments on as written)
    assert theirs[2] == ("linear", ("T[3, 4]", "T[2, 4]"), (("bias", "T[2]"),))
    assert theirs[3] == ("linear", (), (("input", "T[3, 4]"), ("weight", "T[2, 4]")))
    assert [theirs[0], theirs[1]] == LINEAR_CALLS[:2]
    assert calls_seen(torch, TorchMode, _backward_calls) == BACKWARD_CALLS
    ours = calls_seen(tm, TorchFunctionMode, _other_optional_tensor_calls)
    theirs = calls_seen(torch, TorchMode, _other_optional_tensor_calls)
    assert ours == theirs


# -- issue 30 item 3: autograd.grad, backward and gradcheck on tensor-likes and under modes ------

class Wrapper:
    """A tensor-like holding a tensor (PyTorch's test_overrides pattern): attributes are
    forwarded, method calls go through ``__torch_function__``, which records them in the class."""

    used_calls: set = set()

    def __init__(self, data):
        self.__dict__["_data"] = data

    def __getattr__(self, name):
        value = getattr(self._data, name)
        if callable(value) and not isinstance(value, tm.dtype):
            method = getattr(type(self._data), name)
            return lambda *a, **kw: self.__torch_function__(method, (Wrapper,), (self,) + a, kw)
        return wrap(value)

    def __setattr__(self, name, value):
        setattr(self._data, name, unwrap(value))

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.used_calls.add(func)
        return wrap(func(*unwrap(args), **{k: unwrap(v) for k, v in (kwargs or {}).items()}))


def wrap(value):
    if isinstance(value, (tuple, list)):
        return type(value)(map(wrap, value))
    return Wrapper(value) if isinstance(value, tm.Tensor) else value


def unwrap(value):
    if isinstance(value, (tuple, list)):
        return type(value)(map(unwrap, value))
    return value._data if isinstance(value, Wrapper) else value


class WrongSquare(tm.autograd.Function):
    """``x * x`` with a wrong gradient (``x`` instead of ``2 x``)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x


def test_autograd_grad_and_backward_dispatch_to_tensor_likes():
    Wrapper.used_calls = set()
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    like = Wrapper(x)
    (g,) = tm.autograd.grad((x * x).sum(), like)
    assert isinstance(g, Wrapper) and g._data.tolist() == [2.0, 4.0]
    assert Wrapper.used_calls == {tm.autograd.grad}
    assert tm.autograd.grad(x.sum(), {"x": x})["x"].tolist() == [1.0, 1.0]
    tm.autograd.backward(wrap((x * 3).sum()), inputs=[like])
    assert tm.autograd.backward in Wrapper.used_calls and x.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match=r"^`inputs` argument to `grad\(\)` cannot be empty.$"):
        tm.autograd.grad(x.sum(), [])


def test_gradcheck_checks_tensor_like_inputs():
    Wrapper.used_calls = set()
    a = Wrapper(tm.tensor([0.5, -1.5], dtype=tm.float64))
    b = Wrapper(tm.tensor([2.0, 3.0], dtype=tm.float64))
    a.requires_grad = True
    b.requires_grad = True
    assert tm.autograd.gradcheck(tm.mul, (a, b)) and tm.autograd.gradgradcheck(tm.mul, (a, b))
    # the inputs are used through their methods (the protocol), not skipped
    assert {tm.Tensor.detach, tm.Tensor.numel, tm.autograd.grad, tm.mul} <= Wrapper.used_calls
    # a wrong gradient of a tensor-like input is found (it was skipped before: vacuously True)
    def wrong(t):
        return wrap(WrongSquare.apply(unwrap(t)))

    assert tm.autograd.gradcheck(wrong, (a,), raise_exception=False) is False
    with pytest.raises(tm.autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        tm.autograd.gradcheck(wrong, (a,))


def _grad_calls(library, mode_base, make_input) -> list[str]:
    """The ``autograd`` functions a logging mode sees (with their argument counts and keywords)
    for ``grad`` and ``backward`` of ``x * x`` with ``x`` given as ``make_input(x)``."""
    seen = []

    class Log(mode_base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", "") in ("grad", "backward"):
                seen.append(f"{func.__name__} {len(args)} {sorted(kwargs or {})}")
            return func(*args, **(kwargs or {}))

    x = library.tensor([1.0, 2.0], dtype=library.float64, requires_grad=True)
    with Log():
        library.autograd.grad((x * x).sum(), make_input(x))
        library.autograd.backward((x * x).sum(), inputs=[make_input(x)])
    return seen


GRAD_KEYWORDS = "['allow_unused', 'create_graph', 'grad_outputs', 'is_grads_batched', 'materialize_grads', " \
                "'only_inputs', 'retain_graph']"
SEEN = [f"grad 2 {GRAD_KEYWORDS}", "backward 1 ['create_graph', 'grad_tensors', 'inputs', 'retain_graph']"]


def test_a_mode_sees_autograd_grad_and_backward_on_tensor_likes_with_pytorchs_arguments():
    assert _grad_calls(tm, TorchFunctionMode, Wrapper) == SEEN
    # on plain tensors too, as PyTorch's modes (the formulas' calls run below the mode's handler)
    assert _grad_calls(tm, TorchFunctionMode, lambda x: x) == SEEN


@pytest.mark.torch
def test_autograd_call_arguments_are_pytorchs():
    from torch.overrides import TorchFunctionMode as TorchMode

    # PyTorch's modes see the call on plain tensors too, as ours
    assert _grad_calls(torch, TorchMode, lambda x: x) == SEEN


# -- issue 24: a leaf's accumulation runs as soon as its producers have, as in PyTorch's engine ---

def _accumulation_ops(library, mode_base, program: str) -> list[str]:
    """The aten ops a logging dispatch mode sees while ``backward()`` of ``program`` accumulates
    into ``.grad`` that already holds a gradient (so accumulating is an ``add_``)."""

    class Log(mode_base):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func).removeprefix("aten."))
            return func(*args, **(kwargs or {}))

    def tensor(*shape):
        return library.arange(1.0, 1.0 + 0.5 * math.prod(shape), 0.5).reshape(shape).requires_grad_()

    a, v, u = tensor(3, 4), tensor(4), tensor(3)
    programs = {"2d@1d": lambda: (a @ v).sum(), "1d@2d": lambda: (u @ a).sum(),
                "shared": lambda: ((a @ v).tanh() * u).sum() + (v * v).sum()}
    programs[program]().backward()
    with Log() as log:
        loss = programs[program]()
        forward = len(log.ops)
        loss.backward()
    return log.ops[forward:]


ACCUMULATIONS = {
    # u's add_ right after the mul that made its gradient; v's once both of its producers have run
    "shared": ["ones_like.default", "expand.default", "mul.Tensor", "mul.Tensor", "add.Tensor", "expand.default",
               "mul.Tensor", "mul.Tensor", "add_.Tensor", "detach.default", "tanh_backward.default",
               "view.default", "mul.Tensor", "t.default", "mv.default", "add.Tensor", "add_.Tensor", "add_.Tensor"],
    # a's add_ before the unsqueeze's backward (squeeze) that leads to u's
    "1d@2d": ["ones_like.default", "expand.default", "unsqueeze.default", "t.default", "mm.default", "t.default",
              "mm.default", "add_.Tensor", "squeeze.dim", "add_.Tensor"],
    "2d@1d": ["ones_like.default", "expand.default", "view.default", "mul.Tensor", "t.default", "mv.default",
              "add_.Tensor", "add_.Tensor"],
}


@pytest.mark.parametrize("program", sorted(ACCUMULATIONS))
def test_accumulations_run_when_their_producers_have(program):
    assert _accumulation_ops(tm, TorchDispatchMode, program) == ACCUMULATIONS[program]


@pytest.mark.torch
@pytest.mark.parametrize("program", sorted(ACCUMULATIONS))
def test_accumulation_order_is_pytorchs(program):
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    assert _accumulation_ops(torch, TorchMode, program) == ACCUMULATIONS[program]

"""The per-type half of the __torch_function__ protocol: subclasses and tensor-likes."""

from __future__ import annotations

import collections
import inspect
import warnings

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes import _C
from tensormodes._overrides import dispatch as _dispatch
from tensormodes.overrides import (
    BaseTorchFunctionMode,
    get_default_nowrap_functions,
    get_ignored_functions,
    get_overridable_functions,
    get_testing_overrides,
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    is_tensor_like,
    is_tensor_method_or_property,
    resolve_name,
    wrap_torch_function,
)

from .recording import Recorder

# -- helpers -------------------------------------------------------------------------


def make_like(name, log, result=None, decline=()):
    """A tensor-like class logging ``(class name, function name)`` for each call."""

    class Like:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((cls.__name__, resolve_name(func) or func.__name__))
            if func in decline:
                return NotImplemented
            return result if result is not None else cls.__name__

    Like.__name__ = Like.__qualname__ = name
    return Like


# -- has_torch_function ---------------------------------------------------------------


def test_has_torch_function_is_false_for_plain_tensors_and_numbers():
    x = tm.ones(2)
    assert not has_torch_function((x, 1, 2.5, None))
    assert not has_torch_function_unary(x)
    assert not has_torch_function_variadic(x, x)


def test_has_torch_function_sees_subclasses_and_tensor_likes_one_level_deep():
    class Sub(tm.Tensor):
        pass

    Like = make_like("Like", [])
    s = tm.ones(1).as_subclass(Sub)
    assert has_torch_function((s,))
    assert has_torch_function_unary(Like())
    assert has_torch_function_variadic(1, Like())
    assert not has_torch_function(([Like()],)), "looks one level only"


def test_parameter_and_disabled_sentinel_do_not_count():
    class OptOut:
        __torch_function__ = _C._disabled_torch_function_impl

    assert not has_torch_function((tm.nn.Parameter(tm.ones(1)), OptOut()))


def test_has_torch_function_under_disable_flags():
    Like = make_like("Like", [])
    with _C.DisableTorchFunctionSubclass():
        assert not has_torch_function((Like(),))
    with BaseTorchFunctionMode():
        assert has_torch_function((1,))
        assert not has_torch_function(()), "an empty args tuple is never overridden"
        with _C.DisableTorchFunction():
            assert not has_torch_function((1, Like()))
        with _C.DisableTorchFunctionSubclass():
            assert has_torch_function((1,)), "modes still run"


# -- handle_torch_function and ordering --------------------------------------------------


def test_tensor_like_handles_a_builtin_function():
    class Diagonal:
        def __init__(self, n, v):
            self.n, self.v = n, v

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is tm.mean:
                return args[0].v / args[0].n
            return NotImplemented

    assert tm.mean(Diagonal(5, 2)) == 0.4


def test_unrelated_types_are_tried_left_to_right():
    log = []
    A = make_like("A", log, decline=(tm.add,))
    B = make_like("B", log)
    assert tm.add(A(), B()) == "B"
    assert log == [("A", "tensormodes.add"), ("B", "tensormodes.add")]
    log.clear()
    assert tm.add(B(), A()) == "B"
    assert log == [("B", "tensormodes.add")]


def test_one_call_per_type_even_with_repeated_instances():
    log = []
    A = make_like("A", log, decline=(tm.cat,))
    B = make_like("B", log)
    assert tm.cat([A(), A(), B(), A()]) == "B"
    assert log == [("A", "tensormodes.cat"), ("B", "tensormodes.cat")]


def test_subclass_goes_before_superclass_whatever_its_position():
    log = []

    class Base:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(cls.__name__)
            return NotImplemented if cls.__name__ == "Derived" else cls.__name__

    class Derived(Base):
        pass

    class Other:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append("Other")
            return NotImplemented

    assert tm.add(Other(), Base()) == "Base"
    assert log == ["Other", "Base"]
    log.clear()
    result = handle_torch_function(tm.add, (Base(), Other(), Derived()), 1, 2)
    assert log == ["Derived", "Base"] and result == "Base"


def test_types_argument_lists_overloaded_types_in_order():
    seen = []

    class A:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(types)
            return "ok"

    class B(A):
        pass

    tm.add(A(), B())
    assert seen == [(B, A)]


def test_all_decline_raises_type_error_naming_function_and_types():
    A = make_like("A", [], decline=(tm.mm,))
    with pytest.raises(TypeError, match=r"no implementation found for 'tensormodes.mm' on types that implement "
                                        r"__torch_function__: \[<class '.*A'>\]"):
        tm.mm(A(), tm.ones(2, 2))


def test_method_names_appear_in_the_error():
    class Sub(tm.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    s = tm.ones(2).as_subclass(Sub)
    with pytest.raises(TypeError, match=r"'tensormodes.Tensor.sum'"):
        s.sum()


def test_errors_raised_in_an_override_propagate_unchanged():
    class Boom(Exception):
        pass

    class Like:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            raise Boom("from the override")

    with pytest.raises(Boom, match="from the override"):
        tm.exp(Like())


def test_kwargs_reach_overrides_as_a_dict_with_what_was_passed():
    calls = []

    class Like:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append((func, args, kwargs))
            return 0

    like = Like()
    tm.add(like, 1, alpha=2)
    tm.sum(like)
    assert calls[0] == (tm.add, (like, 1), {"alpha": 2})
    assert calls[1] == (tm.sum, (like,), {})


def test_plain_method_torch_function_still_works_but_warns():
    class Old:
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return "old"

    with pytest.warns(DeprecationWarning, match="as a plain method is deprecated"):
        assert tm.exp(Old()) == "old"


def test_third_party_function_joins_the_protocol():
    log = []
    Like = make_like("Like", log, result="handled")

    def my_op(a, b):
        if has_torch_function((a, b)):
            return handle_torch_function(my_op, (a, b), a, b)
        return a + b

    assert my_op(1, 2) == 3
    assert my_op(Like(), 2) == "handled"
    assert log == [("Like", "my_op")]


def test_wrap_torch_function_decorator():
    log = []
    Like = make_like("Like", log, result="wrapped")

    @wrap_torch_function(lambda a, b=None: (a, b))
    def combine(a, b=None):
        return "plain"

    assert combine(1) == "plain"
    assert combine(Like()) == "wrapped"
    assert log[0][1] == "combine"


def test_index_objects_and_assigned_values_take_part():
    log = []
    Like = make_like("Like", log)
    t = tm.zeros(3)
    assert t[Like()] == "Like"
    assert t[0, Like()] == "Like"
    t[0] = Like()
    assert log == [("Like", "tensormodes.Tensor.__getitem__"), ("Like", "tensormodes.Tensor.__getitem__"),
                   ("Like", "tensormodes.Tensor.__setitem__")]


def test_tensor_lists_and_keyword_arguments_take_part():
    log = []
    Like = make_like("Like", log)
    assert tm.stack([tm.ones(1), Like()]) == "Like"
    assert tm.add(tm.ones(1), other=Like()) == "Like"
    assert tm.add(tm.ones(1), tm.ones(1), out=Like()) == "Like"


# -- the default Tensor.__torch_function__ -----------------------------------------------


class Logged(tm.Tensor):
    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(resolve_name(func))
        return super().__torch_function__(func, types, args, kwargs or {})


def test_subclass_results_keep_the_subclass():
    Logged.calls = []
    x = tm.ones(3).as_subclass(Logged)
    assert type(x + 1) is Logged
    assert type(x.sum()) is Logged
    assert type(tm.add(x, 1)) is Logged
    assert type(x.shape) is tm.Size
    assert Logged.calls == ["tensormodes.Tensor.add", "tensormodes.Tensor.sum", "tensormodes.add",
                            "tensormodes.Tensor.shape.__get__"]


def test_tuples_lists_and_named_tuples_are_converted():
    class Sub(tm.Tensor):
        pass

    s = tm.tensor([[1., 5.], [3., 2.]]).as_subclass(Sub)
    values, indices = s.max(dim=1)
    assert type(values) is Sub and type(indices) is Sub
    assert type(s.max(dim=1)).__name__ == "max"
    assert all(type(p) is Sub for p in s.split(1))
    assert all(type(p) is Sub for p in tm.broadcast_tensors(s, s))


def test_subclass_inheriting_the_default_handler():
    class Plain(tm.Tensor):
        pass

    x = tm.ones(2).as_subclass(Plain)
    y = tm.ones(2)
    assert type(x + y) is Plain and type(y + x) is Plain
    assert type(tm.add(y, x)) is Plain


def test_no_wrap_getters_return_the_same_object():
    class Sub(tm.Tensor):
        pass

    s = tm.ones(2).as_subclass(Sub)
    s.grad = tm.zeros(2)
    assert s.grad is s.grad
    assert type(s.grad) is tm.Tensor
    assert tm.Tensor.grad.__get__ in get_default_nowrap_functions()
    assert tm.Tensor._base.__get__ in get_default_nowrap_functions()


def test_default_handler_declines_unrelated_types():
    class A(tm.Tensor):
        pass

    class B(tm.Tensor):
        pass

    a, b = tm.ones(1).as_subclass(A), tm.ones(1).as_subclass(B)
    with pytest.raises(TypeError, match="no implementation found for 'tensormodes.add'"):
        tm.add(a, b)
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'A' and 'B'"):
        a + b


def test_default_handler_accepts_superclass_types():
    class A(tm.Tensor):
        pass

    class AA(A):
        pass

    a, aa = tm.ones(1).as_subclass(A), tm.ones(1).as_subclass(AA)
    assert type(a + aa) is AA
    assert type(tm.add(a, aa)) is AA


def test_make_subclass_and_constructors():
    class Sub(tm.Tensor):
        pass

    base = tm.tensor([1, 2])
    s = tm.Tensor._make_subclass(Sub, base)
    assert type(s) is Sub and s.dtype is tm.int64
    s[0] = 9
    assert base.tolist() == [9, 2], "shares storage"
    aliased = Sub(base)
    assert type(aliased) is Sub and aliased.data_ptr() == base.data_ptr()
    built = Sub([1, 2])
    assert type(built) is Sub and built.dtype is tm.float32
    assert Sub(2, 3).shape == (2, 3)
    assert tm.Tensor().shape == (0,)
    requires = tm.Tensor._make_subclass(Sub, tm.ones(1), True)
    assert requires.requires_grad
    with pytest.raises(TypeError, match="subclass of Tensor"):
        tm.Tensor._make_subclass(int, base)


def test_parameter_never_blocks_and_returns_plain_tensors():
    p = tm.nn.Parameter(tm.ones(2))
    assert type(p * 2) is tm.Tensor
    log = []
    Like = make_like("Like", log)
    assert tm.add(p, Like()) == "Like"

    class Sub(tm.Tensor):
        pass

    assert type(p + tm.ones(2).as_subclass(Sub)) is Sub


# -- what handlers receive --------------------------------------------------------------

CALLABLES_HANDLERS_SEE = [
    ("x + y", "tensormodes.Tensor.add"), ("x.add(y)", "tensormodes.Tensor.add"), ("tm.add(x, y)", "tensormodes.add"),
    ("1 + x", "tensormodes.Tensor.add"), ("x - y", "tensormodes.Tensor.sub"), ("2 - x", "tensormodes.Tensor.__rsub__"),
    ("x * 2", "tensormodes.Tensor.mul"), ("x / y", "tensormodes.Tensor.div"),
    ("2 / x", "tensormodes.Tensor.__rtruediv__"),
    ("x // y", "tensormodes.Tensor.__floordiv__"), ("x % y", "tensormodes.Tensor.remainder"),
    ("x ** 2", "tensormodes.Tensor.__pow__"), ("2 ** x", "tensormodes.Tensor.__rpow__"),
    ("x @ y", "tensormodes.Tensor.matmul"),
    ("-x", "tensormodes.Tensor.neg"), ("abs(x)", "tensormodes.Tensor.abs"), ("~i", "tensormodes.Tensor.__invert__"),
    ("i & i", "tensormodes.Tensor.__and__"), ("1 & i", "tensormodes.Tensor.bitwise_and"),
    ("x == y", "tensormodes.Tensor.__eq__"), ("x != y", "tensormodes.Tensor.ne"), ("x < y", "tensormodes.Tensor.lt"),
    ("x[0]", "tensormodes.Tensor.__getitem__"), ("len(x)", "tensormodes.Tensor.__len__"),
    ("repr(x)", "tensormodes.Tensor.__repr__"), ("x.shape", "tensormodes.Tensor.shape.__get__"),
    ("x.grad", "tensormodes.Tensor.grad.__get__"), ("x.dtype", "tensormodes.Tensor.dtype.__get__"),
    ("x.T", "tensormodes.Tensor.T.__get__"), ("x.size()", "tensormodes.Tensor.size"),
    ("x.sum(dim=1)", "tensormodes.Tensor.sum"), ("tm.zeros(3)", "tensormodes.zeros"),
    ("F.relu(x)", "tensormodes.nn.functional.relu"), ("x.float()", "tensormodes.Tensor.float"),
]


@pytest.mark.parametrize("expression, expected", CALLABLES_HANDLERS_SEE)
def test_handlers_receive_pytorchs_callable(expression, expected):
    names = {"tm": tm, "F": F, "x": tm.ones(2, 2), "y": tm.ones(2, 2), "i": tm.ones(2, 2, dtype=tm.int64)}
    with Recorder() as recorder:
        eval(expression, names)
    assert recorder.names[0] == expected


def test_in_place_and_setter_callables():
    x = tm.ones(2)
    with Recorder() as recorder:
        x += 1
        x.requires_grad = False
        x[0] = 3.0
        x //= 2
    assert recorder.names == ["tensormodes.Tensor.add_", "tensormodes.Tensor.requires_grad.__set__",
                              "tensormodes.Tensor.__setitem__", "tensormodes.Tensor.floor_divide_"]


@pytest.mark.torch
@pytest.mark.parametrize("expression, expected", CALLABLES_HANDLERS_SEE)
def test_handlers_receive_the_same_callable_as_in_torch(expression, expected):
    import torch
    from torch.overrides import TorchFunctionMode as TorchMode
    from torch.overrides import resolve_name as torch_resolve_name

    seen = []

    class TorchRecorder(TorchMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(torch_resolve_name(func))
            return func(*args, **(kwargs or {}))

    x, y, i = torch.ones(2, 2), torch.ones(2, 2), torch.ones(2, 2, dtype=torch.int64)
    with TorchRecorder():
        eval(expression.replace("tm.", "torch.").replace("F.", "torch.nn.functional."),
             {"torch": torch, "x": x, "y": y, "i": i})
    assert seen[0] == expected.replace("tensormodes.", "torch.")


def test_functional_composite_is_seen_once_by_a_pass_through_mode():
    x, weight = tm.ones(2), tm.ones(3, 2)
    with Recorder() as recorder:
        F.relu(x)
        F.linear(x, weight)
    assert recorder.names == ["tensormodes.nn.functional.relu", "tensormodes.nn.functional.linear"]


def test_functional_composite_dispatches_for_tensor_likes():
    log = []
    Like = make_like("Like", log)
    assert F.relu(Like()) == "Like"
    assert log == [("Like", "tensormodes.nn.functional.relu")]


# -- disabling -----------------------------------------------------------------------------


def test_disable_subclass_runs_plain_implementation():
    x = tm.ones(2).as_subclass(Logged)
    Logged.calls = []
    with _C.DisableTorchFunctionSubclass():
        assert not _C._is_torch_function_enabled()
        result = x + 1
        with _C._EnableTorchFunction():
            assert _C._is_torch_function_enabled()
            assert type(x + 1) is Logged
    assert type(result) is tm.Tensor
    assert Logged.calls == ["tensormodes.Tensor.add"]
    assert _C._is_torch_function_enabled()


def test_disable_flags_restored_after_exceptions():
    with pytest.raises(ZeroDivisionError):
        with _C.DisableTorchFunction():
            raise ZeroDivisionError
    assert _dispatch.get_state() is None
    with pytest.raises(ZeroDivisionError):
        with _C.DisableTorchFunctionSubclass():
            raise ZeroDivisionError
    assert _C._is_torch_function_enabled()


# -- introspection ------------------------------------------------------------------------


def test_is_tensor_like_and_is_tensor_method_or_property():
    class Sub(tm.Tensor):
        pass

    Like = make_like("Like", [])
    assert is_tensor_like(tm.ones(1)) and is_tensor_like(tm.ones(1).as_subclass(Sub)) and is_tensor_like(Like())
    assert not is_tensor_like(1) and not is_tensor_like([tm.ones(1)])
    assert is_tensor_method_or_property(tm.Tensor.add)
    assert is_tensor_method_or_property(tm.Tensor.shape.__get__)
    assert not is_tensor_method_or_property(tm.add)


def test_resolve_name_round_trips_through_eval():
    for funcs in get_overridable_functions().values():
        for func in funcs:
            name = resolve_name(func)
            assert name is not None
            value = eval(name, {"tensormodes": tm})
            assert value == func, name
    assert resolve_name(lambda: 0) is None


def test_overridable_functions_are_derived_and_complete():
    overridable = get_overridable_functions()
    assert set(overridable) == {tm, tm.Tensor, F, tm.linalg, tm.special, tm.fft}
    assert set(overridable[tm.special]) == {getattr(tm.special, name) for name in tm.special.__all__}
    assert set(overridable[tm.fft]) == {getattr(tm.fft, name) for name in tm.fft.__all__} - {
        tm.fft.fftfreq, tm.fft.rfftfreq}  # factories
    assert set(overridable[tm.linalg]) == {getattr(tm.linalg, name) for name in tm.linalg.__all__
                                           if not isinstance(getattr(tm.linalg, name), type)}
    assert tm.add in overridable[tm] and tm.zeros not in overridable[tm]
    assert tm.Tensor.add in overridable[tm.Tensor] and tm.Tensor.add_ in overridable[tm.Tensor]
    assert tm.Tensor.__rsub__ in overridable[tm.Tensor]
    assert tm.Tensor.shape.__get__ in overridable[tm.Tensor]
    assert tm.Tensor.requires_grad.__set__ in overridable[tm.Tensor]
    assert F.relu in overridable[F]
    ignored = get_ignored_functions()
    assert tm.is_tensor in ignored and tm.get_default_dtype in ignored and tm.manual_seed in ignored
    assert tm.zeros in ignored and tm.arange in ignored and tm.fft.fftfreq in ignored
    assert not ignored & {f for funcs in overridable.values() for f in funcs}, "the two lists are disjoint"
    public_callables = [getattr(tm, name) for name in tm.__all__ if callable(getattr(tm, name))
                        and not isinstance(getattr(tm, name), tm.dtype)]
    for func in public_callables:
        assert func in overridable[tm] or func in ignored or isinstance(func, type), func
    # Private ops (the fused backward kernels) can be overridden but are not exported, as in torch.
    assert tm._log_softmax_backward_data in overridable[tm]
    assert not [name for name in tm.__all__ if name.startswith("_")]


def test_every_overridable_function_has_a_testing_override_with_its_signature():
    overrides = get_testing_overrides()
    assert overrides is get_testing_overrides(), "the same cached dict on every call, as in PyTorch"
    for funcs in get_overridable_functions().values():
        for func in funcs:
            dummy = overrides[func]
            try:
                expected = inspect.signature(func)
            except (TypeError, ValueError):
                continue
            assert inspect.signature(dummy) == expected, resolve_name(func)
    assert inspect.signature(overrides[tm.add]) == inspect.signature(tm.add)
    assert str(inspect.signature(overrides[tm.add])) == "(input, other, *, alpha=1, out=None)"


class TensorLike:
    """Routes every overridable function to its testing override."""

    handled = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.handled.append(func)
        return _TESTING[func](*args, **(kwargs or {}))


_TESTING = get_testing_overrides()


def _tensor_like_call(func):
    """Arguments putting a TensorLike in every required parameter (PyTorch's
    ``generate_tensor_like_override_tests``); None when none of them may carry an override,
    which only a function of ``get_ignored_functions()`` may do."""
    args, kwargs = [], {}
    for p in inspect.signature(func).parameters.values():
        if p.default is not inspect.Parameter.empty or p.kind is p.VAR_KEYWORD:
            continue
        if p.kind is p.VAR_POSITIONAL:
            args.extend([TensorLike(), TensorLike()])
        elif p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = TensorLike()
        else:
            args.append(TensorLike())
    relevant = _dispatch.RELEVANT_OF[func](*args, **kwargs)
    if not any(isinstance(r, TensorLike) for r in relevant):
        return None
    return args, kwargs


OVERRIDABLE_CALLS = [(func, _tensor_like_call(func)) for func in _TESTING
                     if func.__name__ not in ("__get__", "__set__")]


@pytest.mark.parametrize("func, call", OVERRIDABLE_CALLS, ids=[resolve_name(f) for f, _ in OVERRIDABLE_CALLS])
def test_tensor_like_overrides_every_function(func, call):
    assert call is not None, "no required argument takes a tensor: the function belongs to get_ignored_functions()"
    TensorLike.handled = []
    args, kwargs = call
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = func(*args, **kwargs)
    assert TensorLike.handled == [func]
    assert result == -1


def test_tensor_like_overrides_every_property_accessor():
    for func in get_overridable_functions()[tm.Tensor]:
        if func.__name__ not in ("__get__", "__set__"):
            continue
        TensorLike.handled = []
        if func.__name__ == "__set__":
            func(TensorLike(), TensorLike())  # a descriptor's __set__ always returns None
        else:
            assert func(TensorLike()) == -1
        assert TensorLike.handled == [func]


def test_ignored_factories_still_dispatch_through_modes_and_out():
    """Ignored only means no required argument takes a tensor-like: an ``out=`` tensor-like
    still dispatches, as in PyTorch."""
    log = []
    Like = make_like("Like", log)
    for func in (tm.zeros, tm.ones, tm.empty, tm.rand, tm.randn, tm.arange):
        assert func(2, out=Like()) == "Like"
    assert [name for _, name in log] == ["tensormodes.zeros", "tensormodes.ones", "tensormodes.empty",
                                         "tensormodes.rand", "tensormodes.randn", "tensormodes.arange"]


@pytest.mark.torch
def test_ignored_factories_match_torch():
    import torch
    import torch.overrides

    torch_ignored = {torch.overrides.resolve_name(f) for f in torch.overrides.get_ignored_functions()}
    ignored = get_ignored_functions()
    generated = [f for funcs in _dispatch.OVERRIDABLE.values() for f in funcs if f in ignored]
    assert len(generated) >= 18
    for func in generated:
        assert resolve_name(func).replace("tensormodes", "torch", 1) in torch_ignored, resolve_name(func)


def test_factories_are_overridable_through_modes():
    with Recorder() as recorder:
        tm.zeros(2), tm.ones(2), tm.tensor([1]), tm.randn(2)
    assert recorder.names == ["tensormodes.zeros", "tensormodes.ones", "tensormodes.tensor", "tensormodes.randn"]


# -- PyTorch's precedence scenarios side by side ------------------------------------------


def _precedence_log(lib, add):
    log = []

    def like(name, decline):
        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append((name, [t.__name__ for t in types]))
                return NotImplemented if decline else name

        Like.__name__ = name
        return Like

    A, B = like("A", True), like("B", False)
    D = type("D", (A,), {})
    results = []
    for args in [(A(), B()), (B(), A()), (A(), D()), (D(), B())]:
        try:
            results.append(add(*args))
        except TypeError:
            results.append("TypeError")
    return log, results


@pytest.mark.torch
def test_precedence_matches_torch():
    import torch

    assert _precedence_log(tm, tm.add) == _precedence_log(torch, torch.add)


def test_named_tuple_conversion_for_user_named_tuples():
    Pair = collections.namedtuple("Pair", "first second")

    class Sub(tm.Tensor):
        pass

    converted = tm.Tensor.__torch_function__.__func__(Sub, lambda: Pair(tm.ones(1), tm.zeros(1)), (), (), {})
    assert type(converted) is Pair and type(converted.first) is Sub


def test_a_tensor_is_not_a_tensor_list():
    with pytest.raises(TypeError, match="must be tuple of Tensors"):
        tm.cat(tm.ones(2, 2))


def test_participation_is_cached_per_class_until_forgotten():
    class Late:
        pass

    assert tm.add(tm.ones(1), 1).tolist() == [2.0]
    assert not has_torch_function((Late(),))
    Late.__torch_function__ = classmethod(lambda cls, func, types, args=(), kwargs=None: "late")
    _dispatch.forget_participation(Late)
    assert tm.exp(Late()) == "late"

"""Unbacked symbolic scalars: PyTorch's ``SymInt``, ``SymFloat`` and ``SymBool`` for values that
a fake tensor computed but does not hold.

Inside ``make_fx(f, tracing_mode="fake")`` (a ``FakeTensorMode`` with a ``ShapeEnv``), reading a
computed value (``t.item()``, ``t.tolist()``) gives a fresh *unbacked symbol* instead of raising:
``u0``, ``u1`` ... for integers, ``zuf0`` ... for floats, ``Eq(u0, 1)`` for a bool tensor's value.
Python arithmetic on symbols makes new symbolic values (``n * 2 + 1``), which a tracer records
as graph nodes (``ShapeEnv.recorder``); whatever needs a concrete answer — ``if n > 0``,
``int(n)``, ``range(n)``, ``hash(n)`` — raises ``GuardOnDataDependentSymNode`` (or
``TypeError`` for ``hash``) as PyTorch does.

>>> env = ShapeEnv()
>>> n = env.create_unbacked_symint()
>>> n, n * 2 + 1, n > 0, n / 2
(u0, 2*u0 + 1, u0 > 0, IntTrueDiv(u0, 2))
>>> try:
...     bool(n > 0)
... except GuardOnDataDependentSymNode as e:
...     print(str(e).splitlines()[0])
Could not guard on data-dependent expression u0 > 0 (unhinted: u0 > 0).  (Size-like symbols: none)

Derived expressions print in PyTorch's (sympy's) form for sums, differences and products with
numbers (``2*u0 + 1``, ``3 - u0``); other combinations print readably but not always as sympy
would simplify them (``u0*u0`` where PyTorch prints ``u0**2``; ``n % 3`` always ``PythonMod(u0, 3)``,
which PyTorch prints ``Mod(u0, 3)`` once ``u0`` has been a size). A symbolic value also carries, when
it is one, its affine form ``a*leaf + b`` in one leaf symbol, which fake tensors use for sizes.
"""

from __future__ import annotations

import operator
import os
import sys

__all__ = ["SymInt", "SymFloat", "SymBool", "ShapeEnv", "GuardOnDataDependentSymNode", "sym_float",
           "is_symbolic"]

# whether any symbol was ever made: until then fake tensors skip looking for symbolic arguments
SYMBOLS_MADE = [False]
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class GuardOnDataDependentSymNode(RuntimeError):
    """Python asked for the concrete value of an unbacked symbol (``if n > 0:``, ``int(n)``): a
    value that exists only when the program runs on data. PyTorch's exception and message start."""

    def __init__(self, message: str, expr: str = "") -> None:
        super().__init__(message)
        self.expr = expr


GuardOnDataDependentSymNode.__module__ = "tensormodes.fx.experimental.symbolic_shapes"


def _user_frame() -> str:
    """``file:line in function`` of the innermost caller outside tensormodes (PyTorch's "Caused by")."""
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename.startswith("<tensormodes")
                                 or os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR)):
        frame = frame.f_back
    if frame is None:
        return "unknown"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


def _guard_error(expr: str) -> GuardOnDataDependentSymNode:
    return GuardOnDataDependentSymNode(
        f"Could not guard on data-dependent expression {expr} (unhinted: {expr}).  (Size-like symbols: none)\n\n"
        "consider using data-dependent friendly APIs such as guard_or_false, guard_or_true and "
        f"statically_known_true.\nCaused by: ({_user_frame()})\n(tensormodes: the value was read from a fake "
        "tensor while tracing; Python control flow on it needs the data)", expr)


def _extract_error(expr: str) -> GuardOnDataDependentSymNode:
    return GuardOnDataDependentSymNode(
        f"Could not extract specialized integer from data-dependent expression {expr} (unhinted: {expr}).  "
        f"(Size-like symbols: none)\n\n\nCaused by: ({_user_frame()})\n(tensormodes: the value was read from a "
        "fake tensor while tracing; a Python int of it needs the data)", expr)


class ShapeEnv:
    """Where unbacked symbols are made and numbered (``u0``, ``u1`` ...; ``zuf0`` ... for floats),
    PyTorch's ``torch.fx.experimental.symbolic_shapes.ShapeEnv`` reduced to that.
    ``recorder``: None, or a function called with every symbolic value arithmetic makes (a
    tracer records it as a node).

    >>> env = ShapeEnv()
    >>> env.create_unbacked_symint(), env.create_unbacked_symint(), env.create_unbacked_symfloat()
    (u0, u1, zuf0)
    """

    def __init__(self) -> None:
        self.counts = {"u": 0, "zuf": 0}
        self.recorder = None

    def _leaf(self, cls, prefix: str):
        SYMBOLS_MADE[0] = True
        name = f"{prefix}{self.counts[prefix]}"
        self.counts[prefix] += 1
        value = _new(cls, name, _ATOM, None, (), self)
        if cls is SymInt:
            value._affine = (value, 1, 0)
        return value

    def create_unbacked_symint(self) -> SymInt:
        """A fresh integer symbol (``u0`` ...)."""
        return self._leaf(SymInt, "u")

    def create_unbacked_symfloat(self) -> SymFloat:
        """A fresh float symbol (``zuf0`` ...)."""
        return self._leaf(SymFloat, "zuf")

    def create_unbacked_symbool(self) -> SymBool:
        """A fresh bool: ``Eq(u0, 1)`` of a fresh integer symbol, as PyTorch makes a bool tensor's value."""
        return _apply(operator.eq, (self.create_unbacked_symint(), 1), SymBool, record=False)


# precedences for printing: comparisons < sums < products < atoms
_COMPARE, _SUM, _PRODUCT, _ATOM = 0, 1, 2, 3
_new_object = object.__new__


def _new(cls, text: str, precedence: int, op, args: tuple, env: ShapeEnv):
    value = _new_object(cls)
    value._text = text
    value._precedence = precedence
    value._op = op
    value._args = args
    value._env = env
    value._affine = None
    return value


def _wrap(value, precedence: int) -> str:
    text = value._text if isinstance(value, _Symbolic) else repr(value)
    own = value._precedence if isinstance(value, _Symbolic) else (_ATOM if not _negative(value) else _SUM)
    return f"({text})" if own < precedence else text


def _negative(value) -> bool:
    return isinstance(value, (int, float)) and value < 0


def _text_of(op, args: tuple) -> tuple[str, int]:
    """How ``op(*args)`` prints, and its precedence (sympy's forms for the common cases)."""
    if op is operator.neg:
        return f"-{_wrap(args[0], _PRODUCT)}", _SUM
    if op in _FUNCTION_FORMS:
        return f"{_FUNCTION_FORMS[op]}({', '.join(_wrap(a, _COMPARE) for a in args)})", _ATOM
    a, b = args
    if op is operator.add:
        if _negative(b):
            return f"{_wrap(a, _SUM)} - {_wrap(-b, _PRODUCT)}", _SUM
        if not isinstance(a, _Symbolic):  # sympy puts the number last: 1 + u0 prints u0 + 1
            a, b = b, a
        return f"{_wrap(a, _SUM)} + {_wrap(b, _SUM)}", _SUM
    if op is operator.sub:
        return f"{_wrap(a, _SUM)} - {_wrap(b, _PRODUCT)}", _SUM
    if op is operator.mul:
        if isinstance(a, _Symbolic) and not isinstance(b, _Symbolic):  # sympy puts the number first
            a, b = b, a
        return f"{_wrap(a, _PRODUCT)}*{_wrap(b, _PRODUCT)}", _PRODUCT
    if op is operator.truediv:
        return f"{_wrap(a, _PRODUCT)}/{_wrap(b, _ATOM)}", _PRODUCT
    if op is operator.floordiv:
        return f"({_wrap(a, _PRODUCT)}//{_wrap(b, _ATOM)})", _ATOM
    if op is operator.pow:
        return f"{_wrap(a, _ATOM)}**{_wrap(b, _ATOM)}", _ATOM
    return f"{_wrap(a, _SUM)} {_INFIX[op]} {_wrap(b, _SUM)}", _COMPARE


_INFIX = {operator.gt: ">", operator.ge: ">=", operator.lt: "<", operator.le: "<="}


def sym_float(value):
    """``float(value)`` for a number; for a ``SymInt``, the ``SymFloat`` of it (``ToFloat(u0)``),
    recorded by a tracer as PyTorch's ``torch.sym_float``.

    >>> sym_float(3)
    3.0
    """
    if isinstance(value, SymInt):
        return _apply(sym_float, (value,), SymFloat)
    return value if isinstance(value, SymFloat) else float(value)


_FUNCTION_FORMS = {operator.eq: "Eq", operator.ne: "Ne", operator.mod: "PythonMod", sym_float: "ToFloat",
                   "int_truediv": "IntTrueDiv"}


def _affine_of(op, args: tuple):
    """The affine form ``(leaf, a, b)`` of ``op(*args)`` over SymInt affine arguments, or None."""
    forms = []
    for arg in args:
        if isinstance(arg, SymInt):
            if arg._affine is None:
                return None
            forms.append(arg._affine)
        elif type(arg) is int:
            forms.append((None, 0, arg))
        else:
            return None
    if op is operator.neg:
        leaf, a, b = forms[0]
        return leaf, -a, -b
    (leaf1, a1, b1), (leaf2, a2, b2) = forms
    if leaf1 is not None and leaf2 is not None and leaf1 is not leaf2:
        return None
    leaf = leaf1 if leaf1 is not None else leaf2
    if op is operator.add:
        return leaf, a1 + a2, b1 + b2
    if op is operator.sub:
        return leaf, a1 - a2, b1 - b2
    if op is operator.mul and (a1 == 0 or a2 == 0):
        return leaf, a1 * b2 + a2 * b1, b1 * b2
    return None


def _apply(op, args: tuple, cls, record: bool = True, text_op=None):
    """The symbolic value ``op(*args)`` of class ``cls``, handed to the tracer's recorder."""
    env = next(a._env for a in args if isinstance(a, _Symbolic))
    text, precedence = _text_of(text_op or op, args)
    value = _new(cls, text, precedence, op, args, env)
    if cls is SymInt:
        value._affine = _affine_of(op, args)
    if record and env.recorder is not None and _called_by_user():
        env.recorder(value)
    return value


def _called_by_user() -> bool:
    """Whether the arithmetic being made was written by the user, not by the library's own
    size computations (``numel``, strides), which a tracer records only when an op uses them."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None:
        return True
    name = frame.f_code.co_filename
    return not (name.startswith("<tensormodes") or os.path.abspath(name).startswith(_PACKAGE_DIR))


def affine_value(leaf: SymInt, a: int, b: int):
    """``a*leaf + b`` as an int (``a == 0``) or a SymInt, made without being recorded (a size the
    fake tensor rules computed, not a value of the program)."""
    if a == 0:
        return b
    value = leaf if a == 1 else _apply(operator.mul, (leaf, a), SymInt, record=False)
    return value if b == 0 else _apply(operator.add, (value, b), SymInt, record=False)


def is_symbolic(value) -> bool:
    """Whether ``value`` is a ``SymInt``, ``SymFloat`` or ``SymBool``."""
    return isinstance(value, _Symbolic)


class _Symbolic:
    """What the three symbolic scalar classes share: printing, refusing hashing and concrete answers."""

    __slots__ = ("_text", "_precedence", "_op", "_args", "_env", "_affine")

    def __repr__(self) -> str:
        return self._text

    __str__ = __repr__

    def __hash__(self):
        raise TypeError(f"unhashable type: non-nested {type(self).__name__}")

    def __bool__(self) -> bool:
        raise _guard_error(f"Ne({self._text}, 0)")

    def __index__(self) -> int:
        raise _extract_error(self._text)

    def __int__(self) -> int:
        raise _extract_error(self._text)

    def __float__(self) -> float:
        raise _guard_error(self._text)

    def __complex__(self) -> complex:
        raise _guard_error(self._text)

    def node_name(self) -> str:
        """The name a tracer gives the node computing this value (PyTorch's: ``mul``, ``sym_float``)."""
        op = self._op
        return _NODE_NAMES.get(op, getattr(op, "__name__", "sym"))

    def _compare(self, op, other):
        if not isinstance(other, (int, float, bool, _Symbolic)):
            return NotImplemented
        return _apply(op, (self, other), SymBool)

    def __eq__(self, other):
        return self._compare(operator.eq, other)

    def __ne__(self, other):
        return self._compare(operator.ne, other)

    def __lt__(self, other):
        return self._compare(operator.lt, other)

    def __le__(self, other):
        return self._compare(operator.le, other)

    def __gt__(self, other):
        return self._compare(operator.gt, other)

    def __ge__(self, other):
        return self._compare(operator.ge, other)


_NODE_NAMES = {operator.pow: "pow_1"}
_IDENTITIES = frozenset({(1, operator.mul), (0, operator.add), (0, operator.sub)})


def _arith(op, int_result: bool, reflected: bool = False):
    """A binary operator method: SymInt with int (or SymInt) stays SymInt when ``int_result``;
    meeting a float (or SymFloat) it becomes a SymFloat through ``sym_float``, as PyTorch's."""

    def method(self, other):
        if isinstance(other, bool) or not isinstance(other, (int, float, SymInt, SymFloat)):
            return NotImplemented
        if type(other) is int and isinstance(self, SymInt) and (other, op) in _IDENTITIES:
            return self  # u0 * 1, u0 + 0: u0 itself, as sympy simplifies them (numel's product)
        mine = self
        if isinstance(self, SymInt) and isinstance(other, (float, SymFloat)):
            mine = sym_float(self)
        elif isinstance(self, SymFloat) and isinstance(other, SymInt):
            other = sym_float(other)
        args = (other, mine) if reflected else (mine, other)
        floating = isinstance(mine, SymFloat) or isinstance(other, (float, SymFloat))
        if op is operator.truediv and not floating:
            return _apply(operator.truediv, args, SymFloat, text_op="int_truediv")
        return _apply(op, args, SymFloat if floating or not int_result else SymInt)

    method.__name__ = f"__{'r' if reflected else ''}{op.__name__.strip('_')}__"
    return method


class SymInt(_Symbolic):
    """An integer known only as an expression over unbacked symbols (``u0``, ``2*u0 + 1``):
    PyTorch's ``torch.SymInt``. Arithmetic with ints gives SymInts (``/`` a SymFloat), comparisons
    give SymBools; ``int()``, ``range()`` and indexing need the value and raise
    ``GuardOnDataDependentSymNode``."""

    __slots__ = ()

    __add__, __radd__ = _arith(operator.add, True), _arith(operator.add, True, True)
    __sub__, __rsub__ = _arith(operator.sub, True), _arith(operator.sub, True, True)
    __mul__, __rmul__ = _arith(operator.mul, True), _arith(operator.mul, True, True)
    __floordiv__, __rfloordiv__ = _arith(operator.floordiv, True), _arith(operator.floordiv, True, True)
    __mod__, __rmod__ = _arith(operator.mod, True), _arith(operator.mod, True, True)
    __pow__ = _arith(operator.pow, True)
    __truediv__, __rtruediv__ = _arith(operator.truediv, False), _arith(operator.truediv, False, True)

    def __neg__(self):
        return _apply(operator.neg, (self,), SymInt)

    def __float__(self) -> float:
        raise _extract_error(self._text)


class SymFloat(_Symbolic):
    """A float known only as an expression over unbacked symbols (``zuf0``): PyTorch's
    ``torch.SymFloat``. ``float()`` raises ``GuardOnDataDependentSymNode``, as does ``int()``
    (PyTorch's ``TruncToInt(zuf0)``)."""

    __slots__ = ()

    __add__, __radd__ = _arith(operator.add, False), _arith(operator.add, False, True)
    __sub__, __rsub__ = _arith(operator.sub, False), _arith(operator.sub, False, True)
    __mul__, __rmul__ = _arith(operator.mul, False), _arith(operator.mul, False, True)
    __truediv__, __rtruediv__ = _arith(operator.truediv, False), _arith(operator.truediv, False, True)
    __pow__ = _arith(operator.pow, False)

    def __neg__(self):
        return _apply(operator.neg, (self,), SymFloat)

    def __int__(self) -> int:
        raise _extract_error(f"TruncToInt({self._text})")

    __index__ = __int__


class SymBool(_Symbolic):
    """A truth value known only as an expression over unbacked symbols (``u0 > 2``,
    ``Eq(u0, 1)``): PyTorch's ``torch.SymBool``. ``bool()`` (an ``if``) raises
    ``GuardOnDataDependentSymNode``."""

    __slots__ = ()

    def __bool__(self) -> bool:
        raise _guard_error(self._text)
sym_float.__module__ = "tensormodes"  # torch.sym_float: the graph code names it tensormodes.sym_float

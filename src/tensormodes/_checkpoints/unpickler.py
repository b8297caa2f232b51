"""A restricted interpreter of pickle opcodes: builds data and allow-listed objects, runs nothing.

Python's ``pickle`` module never sees a file's bytes: this reads them. It interprets the
opcodes of protocols 2 to 5 that hold data (numbers, strings, bytes, tuples, lists, dicts, sets,
the memo, marks, frames) and four that name or make objects: ``GLOBAL``/``STACK_GLOBAL`` look the
name up in a table of :class:`Builder` objects (anything else is refused, nothing is imported),
``REDUCE``/``NEWOBJ`` call only a builder's own code, ``BUILD`` sets attributes on an
``OrderedDict`` or a plain-data instance, ``BINPERSID`` hands the id to the caller's storage
loader. Text opcodes of protocols 0 and 1 (``INST``, ``OBJ``, ``PERSID``, ``INT`` ...) and
extension codes are refused. Every refusal names the opcode or global and its offset.
Work and memory are bounded by the file's size: lengths are checked against the bytes left
before anything is read or allocated, and nothing recurses.
"""

from __future__ import annotations

import collections
import struct
from collections.abc import Callable
from typing import Any

from .errors import CallerError, FormatError, UnsafeFileError
from .safe_globals import field_order, plain_fields, user_classes

__all__ = ["Builder", "Unpickler", "Refused", "globals_in"]


class Refused(Exception):
    """Raised by a builder: the message, to which the interpreter adds where it happened."""


class Builder:
    """What a global of the allow-list stands for: its name, and what ``REDUCE`` (``call``) and
    ``NEWOBJ`` (``new``) on it make; a builder without them refuses the opcode."""

    def __init__(self, name: str, call: Callable | None = None, new: Callable | None = None,
                 unsupported: str | None = None) -> None:
        self.name, self.call, self.new, self.unsupported = name, call, new, unsupported

    def __repr__(self) -> str:
        return self.name


class _UserClass:
    """A plain-data class from the user's allow-list."""

    def __init__(self, name: str, cls: type) -> None:
        self.name, self.cls = name, cls

    def make(self, args):
        if args != ():
            raise Refused(f"{self.name} is rebuilt from its attributes; NEWOBJ gave it arguments {args!r}")
        return object.__new__(self.cls)


_NAMES = {
    0x80: "PROTO", 0x95: "FRAME", 0x2e: "STOP", 0x28: "MARK", 0x30: "POP", 0x31: "POP_MARK", 0x32: "DUP",
    0x4e: "NONE", 0x88: "NEWTRUE", 0x89: "NEWFALSE", 0x4a: "BININT", 0x4b: "BININT1", 0x4d: "BININT2",
    0x8a: "LONG1", 0x8b: "LONG4", 0x47: "BINFLOAT", 0x58: "BINUNICODE", 0x8c: "SHORT_BINUNICODE",
    0x8d: "BINUNICODE8", 0x55: "SHORT_BINSTRING", 0x54: "BINSTRING", 0x43: "SHORT_BINBYTES", 0x42: "BINBYTES",
    0x8e: "BINBYTES8", 0x96: "BYTEARRAY8", 0x29: "EMPTY_TUPLE", 0x74: "TUPLE", 0x85: "TUPLE1", 0x86: "TUPLE2",
    0x87: "TUPLE3", 0x5d: "EMPTY_LIST", 0x61: "APPEND", 0x65: "APPENDS", 0x7d: "EMPTY_DICT", 0x73: "SETITEM",
    0x75: "SETITEMS", 0x8f: "EMPTY_SET", 0x90: "ADDITEMS", 0x91: "FROZENSET", 0x68: "BINGET", 0x6a: "LONG_BINGET",
    0x71: "BINPUT", 0x72: "LONG_BINPUT", 0x94: "MEMOIZE", 0x63: "GLOBAL", 0x93: "STACK_GLOBAL", 0x52: "REDUCE",
    0x81: "NEWOBJ", 0x62: "BUILD", 0x51: "BINPERSID",
}
_REFUSED_NAMES = {
    0x69: "INST", 0x6f: "OBJ", 0x92: "NEWOBJ_EX", 0x50: "PERSID", 0x49: "INT", 0x4c: "LONG", 0x46: "FLOAT",
    0x53: "STRING", 0x56: "UNICODE", 0x67: "GET", 0x70: "PUT", 0x6c: "LIST", 0x64: "DICT", 0x82: "EXT1",
    0x83: "EXT2", 0x84: "EXT4", 0x97: "NEXT_BUFFER", 0x98: "READONLY_BUFFER",
}
_MARK = object()


class Unpickler:
    """Reads one pickle from ``data`` (bytes or a memoryview) at ``start``; ``where`` names the
    stream in errors (``"data.pkl"``). ``builders`` maps ``"module.name"`` to :class:`Builder`;
    ``persistent_load`` makes what a ``BINPERSID`` id stands for."""

    def __init__(self, data, where: str, builders: dict[str, Builder], persistent_load: Callable,
                 start: int = 0) -> None:
        self.data, self.where, self.builders, self.persistent_load = data, where, builders, persistent_load
        self.position = start
        self.stack: list[Any] = []
        self.memo: dict[int, Any] = {}
        self.marks: list[int] = []
        self.at = start
        self.names: dict[bytes, Any] = {}  # GLOBAL lines already resolved

    def load(self):
        """The object; ``self.position`` is then just after its ``STOP``."""
        try:
            return self._run()
        except FormatError:
            raise
        except CallerError as e:  # the caller's exception, not the file's fault
            raise e.error from None
        except Refused as e:
            raise FormatError(f"{self.where} offset {self.at}: {e}") from None
        except (IndexError, KeyError, TypeError, ValueError, AttributeError, OverflowError, struct.error,
                RecursionError) as e:
            name = _NAMES.get(self.data[self.at], "?") if self.at < len(self.data) else "?"
            raise FormatError(f"{self.where} offset {self.at}: invalid pickle at opcode {name} "
                              f"({type(e).__name__}: {e})") from None

    def _take(self, n: int) -> bytes:
        start = self.position
        if n < 0 or start + n > len(self.data):
            raise FormatError(f"{self.where} offset {self.at}: the pickle needs {n} bytes at offset {start} but "
                              f"{self.where} ends at {len(self.data)} (truncated or corrupted)")
        self.position = start + n
        return bytes(self.data[start:start + n])

    def _length(self, size: int) -> int:
        return int.from_bytes(self._take(size), "little")

    def _pop(self):
        if len(self.stack) <= (self.marks[-1] if self.marks else 0):
            raise Refused("stack underflow: an opcode needs a value above the last MARK")
        return self.stack.pop()

    def _peek(self):
        if len(self.stack) <= (self.marks[-1] if self.marks else 0):
            raise Refused("stack underflow: an opcode needs a value above the last MARK")
        return self.stack[-1]

    def _pop_mark(self) -> list:
        if not self.marks:
            raise Refused("an opcode needs a MARK but none is open")
        mark = self.marks.pop()
        items = self.stack[mark:]
        del self.stack[mark:]
        return items

    def _run(self):
        data, stack, handlers = self.data, self.stack, _HANDLERS
        size = len(data)
        while True:
            self.at = self.position
            if self.position >= size:
                raise FormatError(f"{self.where} offset {self.at}: the pickle ends without a STOP opcode "
                                  "(truncated)")
            code = data[self.position]
            self.position += 1
            handler = handlers.get(code)
            if handler is None:
                name = _REFUSED_NAMES.get(code)
                what = f"opcode {name} ({bytes([code])!r})" if name else f"byte {code:#04x}, which is no opcode"
                raise FormatError(f"{what} at {self.where} offset {self.at} is not interpreted: tm.load reads "
                                  "the opcodes PyTorch's checkpoints use (protocols 2 to 5, no code)")
            if handler is _stop:
                if len(stack) != 1 or self.marks:
                    raise Refused(f"STOP with {len(stack)} values on the stack and {len(self.marks)} open marks")
                return stack.pop()
            handler(self)

    # -- names and objects ------------------------------------------------------------------------------

    def _resolve(self, module: str, name: str):
        full = f"{module}.{name}"
        if module == "__builtin__":
            full = f"builtins.{name}"
        builder = self.builders.get(full)
        if type(builder) is Builder and builder.unsupported:
            raise FormatError(f'"{full}" at {self.where} offset {self.at}: {builder.unsupported}')
        if builder is not None:
            return builder
        cls = user_classes().get(full)
        if cls is not None:
            return _UserClass(full, cls)
        raise UnsafeFileError(f'"{full}" at {self.where} offset {self.at} is not allowed: tm.load builds only '
                              "PyTorch's weights_only values (containers, tensors, storages, dtypes, Size, "
                              "device, Parameter) and plain-data classes added with "
                              "tensormodes.serialization.add_safe_globals; nothing else is imported or called, "
                              "whatever weights_only says")

    def _reduce(self) -> None:
        args = self._pop()
        target = self._peek()
        if type(args) is not tuple:
            raise Refused(f"REDUCE needs a tuple of arguments, got {type(args).__name__}")
        if type(target) is _UserClass:
            self.stack[-1] = target.make(args)
        elif type(target) is Builder and target.call is not None:
            self.stack[-1] = target.call(*args)
        else:
            raise Refused(f"REDUCE on {_describe(target)}, which cannot be called")

    def _newobj(self) -> None:
        args = self._pop()
        target = self._peek()
        if type(args) is not tuple:
            raise Refused(f"NEWOBJ needs a tuple of arguments, got {type(args).__name__}")
        if type(target) is _UserClass:
            self.stack[-1] = target.make(args)
        elif type(target) is Builder and target.new is not None:
            self.stack[-1] = target.new(*args)
        else:
            raise Refused(f"NEWOBJ on {_describe(target)}, which makes no objects")

    def _build(self) -> None:
        state = self._pop()
        inst = self._peek()
        if type(inst) is collections.OrderedDict:
            if type(state) is not dict:
                raise Refused(f"BUILD on an OrderedDict with a {type(state).__name__} state")
            _set_attributes(inst, state, None, "OrderedDict")
        elif type(inst) in user_classes().values():
            slots = None
            if type(state) is tuple and len(state) == 2:
                state, slots = state
            fields = plain_fields(type(inst))
            order = field_order(type(inst))
            if type(state) is list and order is not None and hasattr(type(inst), "__slots__"):
                # a frozen dataclass with slots pickles its fields' values in order
                if len(state) != len(order):
                    raise Refused(f"BUILD on {type(inst).__qualname__} with {len(state)} values for "
                                  f"{len(order)} fields")
                state, slots = None, dict(zip(order, state))
            _set_attributes(inst, state or {}, fields, type(inst).__qualname__)
            if slots:
                _set_slots(inst, slots, fields)
        else:
            raise Refused(f"BUILD on {_describe(inst)}: only OrderedDicts and allowed plain-data classes take "
                          "attributes")

    def _persid(self) -> None:
        pid = self._peek()
        self.stack[-1] = self.persistent_load(pid)


def _describe(value) -> str:
    if type(value) in (Builder, _UserClass):
        return f'"{value.name}"'
    return f"a value of type {type(value).__name__}"


def _set_attributes(inst, state, fields, what: str) -> None:
    if type(state) is not dict:
        raise Refused(f"BUILD on {what} with a {type(state).__name__} state")
    for key in state:
        if type(key) is not str or not key.isidentifier() or key.startswith("__") \
                or (fields is not None and key not in fields):
            raise Refused(f"BUILD sets attribute {key!r} on {what}, which is not allowed")
    if state:  # a class with slots only has no __dict__
        inst.__dict__.update(state)


def _set_slots(inst, slots, fields) -> None:
    if type(slots) is not dict:
        raise Refused(f"BUILD with slot state of type {type(slots).__name__}")
    for key, value in slots.items():
        if type(key) is not str or key.startswith("__") or (fields is not None and key not in fields) \
                or type(type(inst).__dict__.get(key)).__name__ != "member_descriptor":
            raise Refused(f"BUILD sets slot {key!r} on {type(inst).__qualname__}, which is not allowed")
        object.__setattr__(inst, key, value)


def _stop(u: Unpickler) -> None:
    pass  # handled by the loop


def _push(value):
    return lambda u: u.stack.append(value)


def _string(size: int, kind: str):
    def handler(u: Unpickler) -> None:
        raw = u._take(u._length(size))
        if kind == "str":
            u.stack.append(raw.decode("utf-8", "surrogatepass"))
        elif kind == "ascii":
            u.stack.append(raw.decode("ascii"))
        else:
            u.stack.append(raw if kind == "bytes" else bytearray(raw))
    return handler


def _int(size: int, signed: bool):
    return lambda u: u.stack.append(int.from_bytes(u._take(size), "little", signed=signed))


def _long(size: int):
    return lambda u: u.stack.append(int.from_bytes(u._take(u._length(size)), "little", signed=True))


def _tuple(n: int):
    def handler(u: Unpickler) -> None:
        if n > len(u.stack) - (u.marks[-1] if u.marks else 0):
            raise Refused(f"TUPLE{n} needs {n} values above the last mark")
        items = tuple(u.stack[len(u.stack) - n:])
        del u.stack[len(u.stack) - n:]
        u.stack.append(items)
    return handler


def _top(u: Unpickler, kinds: tuple, what: str):
    target = u._peek()
    if type(target) not in kinds:
        raise Refused(f"{what} on a value of type {type(target).__name__}")
    return target


def _global(u: Unpickler) -> None:
    window = bytes(u.data[u.position:u.position + 1024])  # two lines of at most 511 bytes each
    first = window.find(b"\n", 0, 512)
    second = window.find(b"\n", first + 1, first + 513) if first >= 0 else -1
    if second < 0:
        u._take(len(window) + 1 if len(window) < 1024 else 0)  # the truncated-pickle error, if truncated
        raise Refused("GLOBAL needs a module and a name, each a line of at most 511 bytes")
    u.position += second + 1
    line = window[:second]
    known = u.names.get(line)  # each name is resolved once per pickle (a tensor names three)
    if known is None:
        known = u.names[line] = u._resolve(line[:first].decode("utf-8"), line[first + 1:].decode("utf-8"))
    u.stack.append(known)


def _stack_global(u: Unpickler) -> None:
    name, module = u._pop(), u._pop()
    if type(module) is not str or type(name) is not str:
        raise Refused("STACK_GLOBAL needs two strings")
    u.stack.append(u._resolve(module, name))


def _setitems(u: Unpickler) -> None:
    items = u._pop_mark()
    target = _top(u, (dict, collections.OrderedDict, collections.Counter), "SETITEMS")
    if len(items) % 2:
        raise Refused("SETITEMS with an odd number of values")
    for i in range(0, len(items), 2):
        target[items[i]] = items[i + 1]


def _setitem(u: Unpickler) -> None:
    value, key = u._pop(), u._pop()
    _top(u, (dict, collections.OrderedDict, collections.Counter), "SETITEM")[key] = value


def _memo_get(size: int):
    def handler(u: Unpickler) -> None:
        index = u._length(size)
        if index not in u.memo:
            raise Refused(f"memo entry {index} is read before it is written")
        u.stack.append(u.memo[index])
    return handler


def _memo_put(size: int):
    def handler(u: Unpickler) -> None:
        index = u._length(size) if size else len(u.memo)
        u.memo[index] = u._peek()
    return handler


def _proto(u: Unpickler) -> None:
    version = u._take(1)[0]
    if version > 5:
        raise Refused(f"pickle protocol {version} is not supported (at most 5)")


def _frame(u: Unpickler) -> None:
    u._take(8)  # a frame's length: the opcodes inside are read as usual


def _mark(u: Unpickler) -> None:
    u.marks.append(len(u.stack))


def _pop(u: Unpickler) -> None:
    if u.marks and len(u.stack) == u.marks[-1]:
        u.marks.pop()
    else:
        u._pop()


def _append(u: Unpickler) -> None:
    value = u._pop()
    _top(u, (list,), "APPEND").append(value)


def _appends(u: Unpickler) -> None:
    items = u._pop_mark()
    _top(u, (list,), "APPENDS").extend(items)


def _additems(u: Unpickler) -> None:
    items = u._pop_mark()
    _top(u, (set,), "ADDITEMS").update(items)


def _binfloat(u: Unpickler) -> None:
    u.stack.append(struct.unpack(">d", u._take(8))[0])


_HANDLERS: dict[int, Callable[[Unpickler], None]] = {
    0x80: _proto, 0x95: _frame, 0x2e: _stop, 0x28: _mark, 0x30: _pop,
    0x31: lambda u: u._pop_mark(), 0x32: lambda u: u.stack.append(u._peek()),
    0x4e: _push(None), 0x88: _push(True), 0x89: _push(False),
    0x4a: _int(4, True), 0x4b: _int(1, False), 0x4d: _int(2, False), 0x8a: _long(1), 0x8b: _long(4),
    0x47: _binfloat,
    0x58: _string(4, "str"), 0x8c: _string(1, "str"), 0x8d: _string(8, "str"),
    0x55: _string(1, "ascii"), 0x54: _string(4, "ascii"),
    0x43: _string(1, "bytes"), 0x42: _string(4, "bytes"), 0x8e: _string(8, "bytes"), 0x96: _string(8, "bytearray"),
    0x29: lambda u: u.stack.append(()), 0x74: lambda u: u.stack.append(tuple(u._pop_mark())),
    0x85: _tuple(1), 0x86: _tuple(2), 0x87: _tuple(3),
    0x5d: lambda u: u.stack.append([]), 0x61: _append, 0x65: _appends,
    0x7d: lambda u: u.stack.append({}), 0x73: _setitem, 0x75: _setitems,
    0x8f: lambda u: u.stack.append(set()), 0x90: _additems,
    0x91: lambda u: u.stack.append(frozenset(u._pop_mark())),
    0x68: _memo_get(1), 0x6a: _memo_get(4), 0x71: _memo_put(1), 0x72: _memo_put(4), 0x94: _memo_put(0),
    0x63: _global, 0x93: _stack_global, 0x52: Unpickler._reduce, 0x81: Unpickler._newobj,
    0x62: Unpickler._build, 0x51: Unpickler._persid,
}


_FIXED = {0x80: 1, 0x95: 8, 0x4a: 4, 0x4b: 1, 0x4d: 2, 0x47: 8, 0x68: 1, 0x6a: 4, 0x71: 1, 0x72: 4}
_SIZED = {0x8a: 1, 0x8b: 4, 0x58: 4, 0x8c: 1, 0x8d: 8, 0x55: 1, 0x54: 4, 0x43: 1, 0x42: 4, 0x8e: 8, 0x96: 8}
_TEXTS = (0x58, 0x8c, 0x8d, 0x55, 0x54)


def globals_in(data, where: str) -> list[str]:
    """The ``module.name`` of every global the pickle in ``data`` names, in order of first
    appearance, read without building anything: ``GLOBAL`` opcodes, and ``STACK_GLOBAL`` after
    two string opcodes (a name computed otherwise is not seen, as in PyTorch's scan)."""
    found: dict[str, None] = {}
    texts: list = []  # the strings the last opcodes pushed (memo opcodes leave them in place)
    at, size = 0, len(data)
    while at < size:
        code = data[at]
        at += 1
        if code in _FIXED:
            at += _FIXED[code]
            if code not in (0x71, 0x72):
                texts.clear()
        elif code in _SIZED:
            width = _SIZED[code]
            length = int.from_bytes(bytes(data[at:at + width]), "little")
            text = bytes(data[at + width:at + width + length])
            at += width + length
            texts[:] = texts[-1:] + [text.decode("utf-8", "replace")] if code in _TEXTS else []
        elif code == 0x63:
            lines = bytes(data[at:at + 1024]).split(b"\n", 2)
            if len(lines) < 3:
                raise FormatError(f"{where} offset {at - 1}: a GLOBAL opcode without its two lines")
            found[f"{lines[0].decode('utf-8', 'replace')}.{lines[1].decode('utf-8', 'replace')}"] = None
            at += len(lines[0]) + len(lines[1]) + 2
            texts.clear()
        elif code == 0x93:
            if len(texts) == 2:
                found[f"{texts[0]}.{texts[1]}"] = None
            texts.clear()
        elif code == 0x2e:
            return ["builtins." + name[12:] if name.startswith("__builtin__.") else name for name in found]
        elif code in _NAMES:
            if code != 0x94:
                texts.clear()
        else:
            name = _REFUSED_NAMES.get(code)
            what = f"opcode {name} ({bytes([code])!r})" if name else f"byte {code:#04x}, which is no opcode"
            raise FormatError(f"{what} at {where} offset {at - 1} is not interpreted")
    raise FormatError(f"{where}: the pickle ends without a STOP opcode (truncated)")

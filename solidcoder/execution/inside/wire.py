"""The plain-data wire format between a candidate's process and the judge's: values, never code or objects.

Only plain values cross: None, bool, int, float, complex, str, bytes, list, tuple, dict, set and frozenset of those,
a range, a slice, a dict's keys, values or items view, and an iterator's items, nested at most MAX_DEPTH deep, at
most MAX_MESSAGE bytes encoded. A value of another type is sent as what plain Python compares it as (`plain`):

* a stdlib value (Fraction, Decimal, the datetime types, bytearray, deque, array, Counter, OrderedDict, defaultdict
  with a builtin factory, UserList, UserDict, UserString) as its parts, rebuilt by its own constructor on the other
  side (`stdlib_values.py`);
* a subclass of a builtin that the program defined (its namedtuple, IntEnum) as `Derived`: its handle with its base
  type's value, when the sender can keep a handle, else as that base value; the standard library's other
  subclasses of builtins as their base value;
* a numpy scalar as its `item()`, a numpy array of numbers or booleans as its dtype, shape and items (rebuilt by
  `numpy.array` from those numbers, never from a buffer or an address);
* a generator, `map` or other iterator of the program's as an `IteratorHandle`, drawn lazily where it lives (an
  endless one costs only what the test takes); one the judge sends (the test's) as its items (at most MAX_ITEMS),
  which arrive as a fresh iterator over them.

`Handle(n)` names an object that stays in the candidate's process (an instance of one of its classes):
`encode(value, keep)` sends a value that has no plain form as the Handle `keep` gives it, anywhere inside a value.
The *decoder* defines what a value is: the candidate encodes with code it can tamper with, so the judge decodes
every reply as hostile bytes and gets either a plain value or `WireError`, never anything else. Frames are a 4-byte
length and the value.

A value is ASCII JSON, parsed by the interpreter's C parser, so lists of numbers and strings cost C time, not a
Python call per item: null, true, false, strings, floats, ints of up to 63 bits and lists are themselves; every
other value is a one-key object naming its type: {"t": [items]} tuple, {"S": [...]} set, {"z": [...]}
frozenset, {"d": [k1, v1, k2, v2, ...]} dict, {"b": "hex"} bytes, {"c": [re, im]} complex, {"I": "hex"} a larger
int, {"h": n} or {"h": [n, class name]} a handle, {"r": [start, stop, step]} a range, {"K": d}, {"V": d}, {"T": d}
the keys, values and items of the dict d, {"g": [items]} an iterator, {"s": [start, stop, step]} a slice (an index,
as `obj[1:3]` sends it), {"A": [dtype, shape, items]} a numpy array, {"L": [[...], ...]} a list of tuples of scalars
(sent at C speed), {"G": n} an iterator's handle, {"C": n} a test's callable, {"o": [name, parts]} a stdlib value,
{"p": [n, class name, value]} a `Derived`, {"B": name} a builtin type or function (the receiver's own).
"""

from __future__ import annotations

import builtins
import contextlib
import gc
import itertools
import json
import math
import os
import re
import select
import struct
import sys
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

from solidcoder.execution.inside import stdlib_values

MAX_DEPTH = 100
MAX_MESSAGE = 64 << 20
MAX_ITEMS = 1 << 20  # an iterator's items sent at most (a longer one, or an endless one, cannot be judged)
_LEN = struct.Struct("<I")
_SMALL = 1 << 63
_SCALARS = frozenset({str, float, bool, type(None)})
_TAGGED = {tuple: "t", set: "S", frozenset: "z"}
_VIEWS = {type({}.keys()): "K", type({}.values()): "V", type({}.items()): "T"}
_dumps = json.JSONEncoder(ensure_ascii=True, allow_nan=True, check_circular=False, separators=(",", ":")).encode
_loads = json.JSONDecoder().decode


class WireError(ValueError):
    """Bytes that are not a well-formed plain value, or a value that cannot be sent."""


class Handle:
    """A reference to an object living in the candidate's process, by number, with its class's name (what
    `type(obj).__name__` says in the judge; only a name, never the class)."""

    __slots__ = ("id", "name")

    def __init__(self, ident: int, name: str = "") -> None:
        self.id, self.name = ident, name

    def __repr__(self) -> str:
        return f"Handle({self.id})"


class IteratorHandle(Handle):
    """A Handle of an iterator or generator of the program's: the judge iterates it lazily, where it lives."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"IteratorHandle({self.id})"


class CallbackHandle(Handle):
    """A Handle of a callable of the test's (a lambda, its own function), sent to the program: calling it there asks
    the judge to call it (`harness.Callback`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"CallbackHandle({self.id})"


Keep = Callable[[Any], Handle]  # a value with no plain form -> the Handle it is sent as (WireError: none)


# The frame a program's process sends the moment a call has returned, before it encodes the value: what follows is
# encoding, which the judge times apart from the program's deadline (`proxies.Channel.receive`).
COMPUTED = b'{"t":["computed"]}'


@contextlib.contextmanager
def _collector_paused():
    """The cyclic garbage collector off while a value's millions of containers are built (it would walk them again
    and again; none of them forms a cycle), back to how it was after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def encode(value: Any, keep: Keep | None = None) -> bytes:
    """The bytes of a plain value; WireError names the first thing that is not plain (and that `keep` refuses)."""
    with _collector_paused():
        data = _dumps(_tree(value, 0, keep)).encode("ascii")
    if len(data) > MAX_MESSAGE:
        raise WireError(f"value too large to send ({len(data)} bytes)")
    return data


def _native(items) -> bool:
    """Whether a sequence's items are all JSON as they are (checked at C speed: no Python call per item)."""
    kinds = set(map(type, items))
    if int in kinds:
        ints = [x for x in items if type(x) is int] if len(kinds) > 1 else items
        if min(ints) <= -_SMALL or max(ints) >= _SMALL:
            return False
        kinds.discard(int)
    return kinds <= _SCALARS


def _native_rows(items: list) -> Any:
    """A list of lists, or of tuples, of JSON scalars as one JSON value, checked and built at C speed (a million
    pairs cost what plain Python takes to build them): the list itself, or {"L": rows} for tuples; else None."""
    kinds = set(map(type, items))
    if kinds not in ({list}, {tuple}) or not _native(list(itertools.chain.from_iterable(items))):
        return None
    return items if kinds == {list} else {"L": list(map(list, items))}


def _tree(value: Any, depth: int, keep: Keep | None = None) -> Any:
    kind = type(value)
    if depth > MAX_DEPTH:
        raise WireError(f"nested deeper than {MAX_DEPTH} (or cyclic)")
    if kind is _Items:
        return {"g": [_tree(item, depth + 1, keep) for item in value]}
    if kind is _Array:
        return {"A": [value[0], value[1], _tree(value[2], depth + 1, keep)]}
    if kind is _Object:
        return {"o": [value[0], _tree(stdlib_values.STDLIB[value[0]][1](value[1]), depth + 1, keep)]}
    if kind is Derived:
        return {"p": [value.handle.id, value.name, _tree(value.value, depth + 1, keep)]}
    if kind in _SCALARS:
        return value
    if kind is int:
        return value if -_SMALL < value < _SMALL else {"I": format(value, "x")}
    if kind is list:
        if _native(value):
            return value
        rows = _native_rows(value)
        if rows is not None:
            return rows
        return [_tree(item, depth + 1, keep) for item in value]
    if kind in _TAGGED:
        return {_TAGGED[kind]: list(value) if _native(value) else [_tree(item, depth + 1, keep) for item in value]}
    return _tree_other(value, kind, depth, keep)


def _tree_other(value: Any, kind: type, depth: int, keep: Keep | None) -> Any:
    if kind is dict:
        return {"d": [_tree(x, depth + 1, keep) for pair in value.items() for x in pair]}
    if kind is bytes:
        return {"b": value.hex()}
    if kind is complex:
        return {"c": [value.real, value.imag]}
    if kind is Handle:
        return {"h": [value.id, value.name] if value.name else value.id}
    if kind is IteratorHandle:
        return {"G": value.id}
    if kind is CallbackHandle:
        return {"C": value.id}
    if kind is range:
        return {"r": [value.start, value.stop, value.step]}
    if kind is slice:
        return {"s": [_tree(x, depth + 1, keep) for x in (value.start, value.stop, value.step)]}
    if kind in _VIEWS:
        return {_VIEWS[kind]: _tree(_owner(value), depth + 1, keep)}
    if _builtin_name(value) is not None:
        return {"B": _builtin_name(value)}
    try:
        converted = plain(value, keep)
    except WireError:
        if keep is None:
            raise
        handle = keep(value)
        if not isinstance(handle, Handle):
            raise WireError(f"no handle for a {type(value).__name__}") from None
        return _tree_other(handle, type(handle), depth, keep)
    return _tree(converted, depth, keep)


def _builtin_name(value: Any) -> str | None:
    """The name of a builtin type or function (`int`, `len`, `ValueError`) that `value` is, so that it arrives as
    the receiver's own object of that name (`f() is int` holds as in plain Python); else None."""
    if type(value) not in (type, types.BuiltinFunctionType):
        return None
    name = getattr(value, "__name__", None)
    return name if type(name) is str and getattr(builtins, name, None) is value else None


def _owner(view: Any) -> dict:
    """The dict a keys, values or items view shows (values get placeholder keys: only their order matters)."""
    kind = _VIEWS[type(view)]
    if kind == "K":
        return dict.fromkeys(view)
    return dict(enumerate(view)) if kind == "V" else dict(view)


def plain(value: Any, keep: Keep | None = None) -> Any:
    """The builtin value that `value` equals as plain Python compares it, a stdlib value as its parts (`STDLIB`), a
    subclass of a builtin that the program defined as its base value with a Handle (`Derived`, when `keep` gives
    one); WireError when there is none."""
    if stdlib_values.sendable(value):
        return _Object((stdlib_values.STDLIB_TYPES[type(value)], value))
    for base in (bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset):
        if base in type(value).__mro__:  # a real subclass: not one whose `__class__` claims it
            return value if type(value) is base else _derived_or_base(value, base, keep)
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == () and hasattr(value, "item"):
        return value.item()  # a numpy scalar (np.int64, np.float64, np.bool_)
    if _is_array(value):
        return _Array((value.dtype.str, list(value.shape), value.ravel().tolist()))
    if isinstance(value, Iterator):
        if keep is not None:  # the program's iterator stays where it is, drawn one batch at a time by the judge
            with contextlib.suppress(WireError):
                return IteratorHandle(keep(value).id)
        items = list(itertools.islice(value, MAX_ITEMS + 1))
        if len(items) > MAX_ITEMS:
            raise WireError(f"an iterator of more than {MAX_ITEMS} items")
        return _Items(items)
    raise WireError(f"a {type(value).__name__} is not a plain builtin value")


_SCALAR_COPY = {int: int.__int__, float: float.__float__, complex: complex.__complex__, str: str.__str__,
                bytes: bytes.__bytes__}


def _derived_or_base(value: Any, base: type, keep: Keep | None) -> Any:
    """A subclass instance as `Derived` (its handle, class name and base value) when its class is not the
    standard library's (the program's namedtuple, IntEnum, list subclass) and `keep` gives it a handle; else its
    base type's value."""
    kind = type(value)
    module = getattr(kind, "__module__", "")
    if keep is None or base is bool or not isinstance(module, str) or module.split(".")[0] in _STDLIB_NAMES:
        return _base_value(value, base)
    try:
        handle = keep(value)
    except WireError:
        return _base_value(value, base)
    return Derived(handle, str(getattr(kind, "__name__", "")), _base_value(value, base))


def _base_value(value: Any, base: type) -> Any:
    """A subclass instance as its base type's value, read through the base type's own slots."""
    if base is dict:
        return dict(dict.items(value))
    return _SCALAR_COPY[base](value) if base in _SCALAR_COPY else base(value)


class _Items(list):
    """An iterator's items, as the encoder sends them."""


class _Object(tuple):
    """A stdlib value as the encoder sends it: (its `STDLIB` name, the value)."""


class Derived:
    """A program's subclass of a builtin: the handle of its object, its class name and its base type's value. The
    judge rebuilds it as a subclass of that builtin holding the value, whose other attributes the program's object
    answers (`proxies._derived`); equality is the base value's, decided in the judge."""

    __slots__ = ("handle", "name", "value")

    def __init__(self, handle: Handle, name: str, value: Any) -> None:
        self.handle, self.name, self.value = handle, name, value


_STDLIB_NAMES = sys.stdlib_module_names | {"builtins"}


class _Array(tuple):
    """A numpy array of numbers or booleans, as the encoder sends it: (dtype string, shape, flat items)."""


_ARRAY_DTYPE = re.compile(r"[<>|=](b1|[iu][1248]|f[248]|c(8|16))")


def _is_array(value: Any) -> bool:
    """Whether `value` is a numpy array of numbers or booleans (the kinds `_ARRAY_DTYPE` names), whatever its shape."""
    kind = type(value)
    return kind.__module__ == "numpy" and kind.__name__ == "ndarray" and bool(_ARRAY_DTYPE.fullmatch(value.dtype.str))



def decode(data: bytes) -> Any:
    """The value `data` encodes; WireError for anything malformed, too deep, or not exactly one value."""
    try:
        with _collector_paused():
            return _value(_loads(data.decode("ascii")), 0)
    except WireError:
        raise
    except (ValueError, TypeError, ArithmeticError, RecursionError, MemoryError) as exc:  # bad JSON, unhashable
        # items, huge ints, a stdlib value its constructor refuses (a date out of range, an invalid Decimal)
        raise WireError(f"malformed value: {type(exc).__name__}") from None


def _value(node: Any, depth: int) -> Any:
    kind = type(node)
    if depth > MAX_DEPTH:
        raise WireError(f"nested deeper than {MAX_DEPTH}")
    if kind in _SCALARS or kind is int:
        return node
    if kind is list:
        if _decoded_scalars(node) or _scalar_rows(node):
            return node
        return [_value(item, depth + 1) for item in node]
    if kind is not dict or len(node) != 1:
        raise WireError("an object that is not a tagged value")
    ((tag, payload),) = node.items()
    return _tagged(tag, payload, depth)


def _decoded_scalars(items: list) -> bool:
    return set(map(type, items)) <= _SCALARS | {int}


def _scalar_rows(items: list) -> bool:
    """Whether `items` is a list of lists of scalars (checked at C speed, as `_native_rows` sends them)."""
    return set(map(type, items)) == {list} and _decoded_scalars(list(itertools.chain.from_iterable(items)))


def _tagged(tag: str, payload: Any, depth: int) -> Any:
    if tag == "L" and type(payload) is list and _scalar_rows(payload):
        return list(map(tuple, payload))
    if tag in _SEQUENCE_TAGS and type(payload) is list:
        items = payload if _decoded_scalars(payload) else [_value(item, depth + 1) for item in payload]
        # Hashing runs item by item in Python, so that the judge's per-test alarm can interrupt a set whose hashes
        # collide on purpose (quadratic to build); a set built from a list in one C call could not be interrupted.
        return tuple(items) if tag == "t" else _SEQUENCE_TAGS[tag](item for item in items)
    if tag == "d" and type(payload) is list and len(payload) % 2 == 0:
        items = [_value(item, depth + 1) for item in payload]
        return {key: value for key, value in zip(items[::2], items[1::2], strict=True)}  # noqa: C416 - see above
    if type(payload) is str and tag in ("b", "I"):
        return bytes.fromhex(payload) if tag == "b" else _big_int(payload)
    if tag == "c" and type(payload) is list and len(payload) == 2 and {type(x) for x in payload} <= {float}:
        return complex(*payload)
    if tag in _HANDLES and type(payload) is int and payload >= 0:
        return _HANDLES[tag](payload)
    if tag == "h" and type(payload) is list and len(payload) == 2 and type(payload[0]) is int and payload[0] >= 0 \
            and type(payload[1]) is str:
        return Handle(payload[0], payload[1][:100])
    return _rebuilt(tag, payload, depth)


def _rebuilt(tag: str, payload: Any, depth: int) -> Any:
    """A range, a dict view or an iterator, rebuilt in the judge from plain parts."""
    if tag == "r" and type(payload) is list and len(payload) == 3 and all(type(x) is int for x in payload) \
            and payload[2] != 0:
        return range(*payload)
    if tag == "s" and type(payload) is list and len(payload) == 3:
        return slice(*(_value(item, depth + 1) for item in payload))
    if tag == "g" and type(payload) is list:
        return iter([_value(item, depth + 1) for item in payload])
    if tag == "B" and type(payload) is str and _builtin_name(getattr(builtins, payload, None)) == payload:
        return getattr(builtins, payload)
    if tag == "o" and type(payload) is list and len(payload) == 2 and payload[0] in stdlib_values.STDLIB:
        return stdlib_values.rebuilt(payload[0], _value(payload[1], depth + 1))
    if tag == "p" and type(payload) is list and len(payload) == 3 and type(payload[0]) is int and payload[0] >= 0 \
            and type(payload[1]) is str:
        return Derived(Handle(payload[0]), payload[1][:100], _value(payload[2], depth + 1))
    if tag == "A" and type(payload) is list and len(payload) == 3:
        return _array(*payload[:2], _value(payload[2], depth + 1))
    if tag in ("K", "V", "T") and type(payload) is dict:
        owner = _value(payload, depth + 1)
        if type(owner) is dict:
            return owner.keys() if tag == "K" else owner.values() if tag == "V" else owner.items()
    raise WireError(f"a malformed {tag!r} value")


def _array(dtype: Any, shape: Any, items: Any) -> Any:
    """A numpy array rebuilt by numpy's own constructor from plain numbers: never from a buffer or an address."""
    well_formed = type(dtype) is str and bool(_ARRAY_DTYPE.fullmatch(dtype)) and type(items) is list \
        and type(shape) is list and len(shape) <= 32 and all(type(n) is int and n >= 0 for n in shape)
    if not well_formed or math.prod(shape) != len(items):
        raise WireError("a malformed array")
    import numpy  # present wherever a program could have sent an array: the judge and the program share one root

    return numpy.array(items, dtype=numpy.dtype(dtype)).reshape(shape)


def _big_int(text: str) -> int:
    if not text or text.strip() != text or "_" in text or text[text.startswith("-"):][:2].lower() == "0x":
        raise WireError("a malformed large int")
    return int(text, 16)


_SEQUENCE_TAGS = {"t": tuple, "S": set, "z": frozenset}
_HANDLES = {"h": Handle, "G": IteratorHandle, "C": CallbackHandle}


def write_frame(fd: int, payload: bytes, _write=os.write) -> None:
    data = memoryview(_LEN.pack(len(payload)) + payload)
    while data:
        data = data[_write(fd, data) :]


def read_frame(fd: int, deadline: float | None = None) -> bytes:
    """One frame from `fd`; TimeoutError past `deadline` (time.monotonic), EOFError when the writer is gone."""
    size = _LEN.unpack(_read_exact(fd, 4, deadline))[0]
    if size > MAX_MESSAGE:
        raise WireError(f"frame of {size} bytes is over the limit")
    return _read_exact(fd, size, deadline)


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    chunks, remaining = [], size
    while remaining:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)

"""The judge's side of the program: proxies that call into the candidate's process and decode what comes back.

Used by the judge process (`referee.py`) only. A test reaches the program through `Remote` (a function, class or
method of the program) and `RemoteObject` (an object of the program's that has no plain value: attribute reads,
method calls and the protocols `len`, `iter`/`next` (`RemoteGenerator`), `bool`, `str`/`repr`, `in`, indexing and
`hash`), over one `Channel` (two pipes; every reply decoded as hostile bytes by `wire.py`). Every result a test
receives is plain data or another proxy. The program's exceptions arrive as their stdlib class, or a judge-side
class of their name under their stdlib bases, with their args, never as `StopIteration` (which would end a test's
own loop early), and in-place changes the program made to its arguments are applied to the test's own objects.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from typing import Any

from solidcoder.execution.inside import wire
from solidcoder.execution.inside.raised import ProgramError, program_raised

REQUESTS, REPLIES, PIDFD = 4, 5, 6  # the candidate's request and reply pipes, and a pidfd that can kill it

# Attributes through which a consumer reads or writes memory at an address, or takes a buffer or capsule, that the
# object names: numpy's array interfaces, DLPack, Arrow's C interfaces, the buffer protocol's Python names. A proxy
# never forwards them (they read as missing), so a test's `np.asarray(answer)` cannot be pointed at the judge's own
# memory (the judge and the program are forks of one zygote: an `id()` there names the same object here); numpy
# falls back to reading the object as a sequence, value by value, and an array the program returns arrives rebuilt
# from its numbers (`wire.py`).
MEMORY_ATTRIBUTES = frozenset({
    "__array_interface__", "__array_struct__", "__cuda_array_interface__", "__array__", "__array_priority__",
    "__array_function__", "__array_ufunc__", "__array_wrap__", "__array_finalize__", "__array_prepare__",
    "__dlpack__", "__dlpack_device__", "__arrow_c_array__", "__arrow_c_stream__", "__arrow_c_schema__",
    "__arrow_c_device_array__", "__arrow_c_device_stream__", "__buffer__", "__release_buffer__",
    "__array_namespace__", "_as_parameter_",
})


class TestTimeout(BaseException):
    """The test ran out of time; a BaseException so that `except Exception` in a test script cannot eat it."""

    __test__ = False


class CandidateLost(BaseException):
    """The candidate's process is gone (it exited, crashed or was killed): no later call can be answered."""


class Channel:
    """The two pipes to the candidate, with the current test's deadline and what became of the candidate.

    Safe to use from a test's worker threads (a `ThreadPoolExecutor`): one request and its reply at a time, under a
    lock. The per-test alarm interrupts the main thread only; a worker thread's wait ends at the deadline itself
    (`read_frame`'s own timeout), which kills the candidate as the alarm would.
    """

    def __init__(self) -> None:
        self.deadline = 0.0
        self.allowance = 0.0  # seconds left this test for encoding and decoding answers (`_encoded`)
        self.callbacks: list = []  # the test's callables the program holds, by number (`keep`)
        self.callback_numbers: dict[int, int] = {}
        self.lost: str | None = None
        self.timed_out = False
        self.lock = threading.RLock()
        self.proxies: dict[int, RemoteObject] = {}  # handle number -> its proxy, so that `is` works as in the program
        self.classes: dict[tuple, type] = {}  # judge-side classes made for the program's (`made`)

    def ask(self, request: tuple) -> tuple:
        with self.lock:
            if self.lost:
                raise CandidateLost(self.lost)
            try:
                wire.write_frame(REQUESTS, wire.encode(request, self.keep))
                reply = self.receive()
                while type(reply) is tuple and reply[:1] == ("callback",):  # the program called a test's callable
                    wire.write_frame(REQUESTS, self._called_back(reply))
                    reply = self.receive()
                return reply
            except (TimeoutError, TestTimeout):  # TimeoutError is an OSError: it must come first
                self.kill("timed out")
                self.timed_out = True
                raise TestTimeout() from None
            except (EOFError, OSError):
                self.lost = "the program's process ended during the test"
                raise CandidateLost(self.lost) from None

    def receive(self) -> tuple:
        try:
            frame = wire.read_frame(REPLIES, self.deadline)
            if frame == wire.COMPUTED:
                frame, reply = self._encoded()
            else:
                reply = wire.decode(frame)
        except wire.WireError as exc:
            self.kill(f"sent a malformed reply ({exc})")
            raise CandidateLost(self.lost) from None
        if type(reply) is not tuple or not reply or type(reply[0]) is not str:
            self.kill("sent a reply that is not a message")
            raise CandidateLost(self.lost)
        # A handle is a one-key object {"h": n}, {"G": n} or {"p": [n, ...]}; spelt with an escape, it arrives bare,
        # useless to a test.
        return _proxied(self, reply, 0) if any(tag in frame for tag in (b'"h"', b'"G"', b'"p"')) else reply

    def keep(self, value: Any) -> wire.Handle:
        """How a test's value with no plain form is sent: a proxy (or a program's subclass of a builtin) as its
        handle, the program's function or class as its object's handle, a callable of the test's as a
        `CallbackHandle` the program can call; anything else cannot be sent."""
        if type(value) is Remote:
            return _handle_of(_incoming(self, self.ask(("ref", value._path)), (), {}))
        if callable(value) and not isinstance(value, RemoteObject) and not getattr(type(value), "_sc_derived", False):
            number = self.callback_numbers.get(id(value))
            if number is None or self.callbacks[number] is not value:  # kept alive here, so an id is never reused
                number = self.callback_numbers[id(value)] = len(self.callbacks)
                self.callbacks.append(value)
            return wire.CallbackHandle(number)
        return _handle_of(value)

    def _called_back(self, message: tuple) -> bytes:
        """Run the test's callable the program called, with the program's arguments; its result or its exception,
        encoded. The test's deadline still runs."""
        _, number, args, kwargs = message if len(message) == 4 else (None, -1, [], {})
        if type(number) is not int or not 0 <= number < len(self.callbacks) or type(args) is not list \
                or type(kwargs) is not dict:
            self.kill("sent a malformed callback")
            raise CandidateLost(self.lost)
        try:
            return wire.encode(("returned", self.callbacks[number](*args, **kwargs)), self.keep)
        except (TestTimeout, CandidateLost):
            raise
        except BaseException as exc:  # noqa: BLE001 - the test's callable failed: the program sees its exception
            return wire.encode(("failed", type(exc).__name__, str(exc)[:500]))

    def _encoded(self) -> tuple[bytes, Any]:
        """The value frame after the program's call returned, read and decoded on the encoding allowance: the time
        it takes moves the test's deadline (and its alarm) later, up to `allowance` per test in all, so that sending
        a large answer never counts against the program's time. A program that claims to have returned and goes on
        computing gains at most that allowance."""
        start, allowance = time.monotonic(), max(self.allowance, 0.0)
        self._shift(allowance)
        try:
            frame = wire.read_frame(REPLIES, self.deadline)
            return frame, wire.decode(frame)
        finally:
            spent = min(time.monotonic() - start, allowance)
            self.allowance -= spent
            self._shift(spent - allowance)

    def _shift(self, seconds: float) -> None:
        self.deadline += seconds
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        if left > 0:
            signal.setitimer(signal.ITIMER_REAL, max(left + seconds, 0.001))

    def kill(self, why: str) -> None:
        self.lost = self.lost or f"the program {why}"
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(PIDFD, signal.SIGKILL)

    def proxy(self, handle: wire.Handle) -> RemoteObject:
        found = self.proxies.get(handle.id)
        if found is None:
            kind = RemoteGenerator if type(handle) is wire.IteratorHandle else self._proxy_class(handle.name)
            found = self.proxies[handle.id] = kind(self, handle.id)
        return found

    def made(self, name: str, bases: tuple[type, ...], namespace: dict | None = None,
             fallback: str = "ProgramException") -> type:
        """A judge-side class named as one of the program's (`fallback` where the name is no identifier) under
        `bases`: the same class for the same name and bases within a run, so `type(a) is type(b)` holds as in the
        program."""
        key = (name, bases)
        if key not in self.classes:
            body = {"__module__": "solution", **(namespace or {})}
            self.classes[key] = type(name if name.isidentifier() else fallback, bases, body)
        return self.classes[key]

    def _proxy_class(self, name: str) -> type:
        """A subclass of RemoteObject named as the program's class, so that `type(obj).__name__` reads as in plain
        Python."""
        return self.made(name, (RemoteObject,), {"__slots__": ()}, "RemoteObject")


class Remote:
    """A function, class or method of the program, called through the channel; returns decoded plain values, with
    a proxy (`RemoteObject`) for each object of the program's inside them."""

    def __init__(self, channel: Channel, path: tuple, label: str) -> None:
        self._channel, self._path, self._label = channel, path, label

    def __call__(self, *args, **kwargs):
        reply = self._channel.ask(("call", self._path, list(args), kwargs))
        return _incoming(self._channel, reply, args, kwargs)

    def __getattr__(self, name: str):
        """A class constant, a static or class method, a function's attribute: read from the program's object."""
        if name in MEMORY_ATTRIBUTES or name.startswith("_sc"):
            raise AttributeError(name)
        target = _incoming(self._channel, self._channel.ask(("ref", self._path)), (), {})
        return getattr(target, name)

    def __instancecheck__(self, obj: Any) -> bool:
        """`isinstance(value, Cls)` for a class of the program's, answered by the program for its own object (or
        for a plain value the test holds)."""
        try:
            return bool(_incoming(self._channel, self._channel.ask(("isinstance", self._path, obj)), (), {}))
        except wire.WireError:  # an object of the test's own, which cannot be sent: not an instance of the program's
            return False

    def __repr__(self) -> str:
        return f"<program's {self._label}>"


class RemoteObject:
    """An object living in the candidate's process (an instance of one of its classes, a function or iterator it
    returned): attribute reads and writes, calls and the protocols `len`, `iter`/`next`, `bool`, `str`/`repr`,
    `in`, indexing and `hash` are answered by the program's own code there; every answer is plain data, or another
    proxy. Equality with a value the test built is decided here, on the object's plain value: an object of the
    program's that has no plain form equals only itself (as one with no `__eq__` does), and the program's `__eq__`
    is never asked, so it can neither see nor fake an expected value. Two of the program's own objects are compared
    (==, !=, <, <=, >, >=) by the program's methods: that reveals nothing the test holds.
    """

    def __init__(self, channel: Channel, handle: int) -> None:
        object.__setattr__(self, "_sc", (channel, handle))

    def _ask(self, name: str, *args: Any) -> Any:
        channel, handle = object.__getattribute__(self, "_sc")
        return _incoming(channel, channel.ask(("op", handle, name, list(args))), (), {})

    def _mine(self, other: object) -> bool:
        return isinstance(other, RemoteObject) and object.__getattribute__(other, "_sc")[0] is \
            object.__getattribute__(self, "_sc")[0]

    def __getattr__(self, name: str):
        if name in MEMORY_ATTRIBUTES:
            raise AttributeError(f"the program's object has no {name!r} the judge will read")
        channel, handle = object.__getattribute__(self, "_sc")
        reply = channel.ask(("getattr", handle, name))
        if reply[0] == "callable":
            return Remote(channel, ("attr", handle, name), name)
        return _incoming(channel, reply, (), {})

    @property
    def __dict__(self) -> Any:  # vars(obj): the program's object's attributes
        return self.__getattr__("__dict__")

    def __setattr__(self, name: str, value: Any) -> None:
        channel, handle = object.__getattribute__(self, "_sc")
        _incoming(channel, channel.ask(("setattr", handle, name, value)), (), {})

    def __call__(self, *args, **kwargs):
        channel, handle = object.__getattribute__(self, "_sc")
        return _incoming(channel, channel.ask(("call", ("object", handle), list(args), kwargs)), args, kwargs)

    def __len__(self) -> int:
        return self._ask("len")

    def __iter__(self):
        source = self._ask("iter")
        if type(source) is not RemoteGenerator:
            raise ProgramError("the program's iter() sent no iterator")
        return source

    def __bool__(self) -> bool:
        return self._ask("bool")

    def __str__(self) -> str:
        return self._ask("str")

    def __repr__(self) -> str:
        return self._ask("repr")

    def __hash__(self) -> int:
        return self._ask("hash")

    def __contains__(self, item: Any) -> bool:
        return self._ask("contains", item)

    def __getitem__(self, key: Any) -> Any:
        return self._ask("getitem", key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._ask("setitem", key, value)

    def __eq__(self, other: object):
        return self._ask("eq", other) if self._mine(other) else NotImplemented

    def __ne__(self, other: object):
        return self._ask("ne", other) if self._mine(other) else NotImplemented

    def __lt__(self, other: object):
        return self._ask("lt", other) if self._mine(other) else NotImplemented

    def __le__(self, other: object):
        return self._ask("le", other) if self._mine(other) else NotImplemented

    def __gt__(self, other: object):
        return self._ask("gt", other) if self._mine(other) else NotImplemented

    def __ge__(self, other: object):
        return self._ask("ge", other) if self._mine(other) else NotImplemented


class RemoteGenerator(RemoteObject):
    """A generator or other iterator of the program's, drawn where it lives: `next`, `send`, `close`, `throw` and
    `itertools.islice` reach it there, so an endless one costs only what the test takes. After `STREAK` `next`s in
    a row it is drawn in batches (doubling up to `harness.TAKE_MAX` items a request), so draining a long one costs
    a few requests, not one per item; the program then runs ahead of the test by at most one batch, which only a
    test that watches the generator's side effects between items could tell (any attribute read, such as `send`,
    ends the streak)."""

    STREAK = 8

    def __init__(self, channel: Channel, handle: int) -> None:
        super().__init__(channel, handle)
        object.__setattr__(self, "_sc_items", [])  # drawn and not yet taken, last first
        object.__setattr__(self, "_sc_state", [False, 0])  # whether it ended; `next`s in a row

    def __iter__(self):
        return self

    def __next__(self):
        items, state = object.__getattribute__(self, "_sc_items"), object.__getattribute__(self, "_sc_state")
        if not items and not state[0]:
            state[1] += 1
            count = 1 if state[1] <= self.STREAK else min(1 << (state[1] - self.STREAK), 4096)
            drawn, ended = _batch(self._ask("take", count))
            items.extend(reversed(drawn))
            state[0] = ended
        if items:
            return items.pop()
        raise StopIteration

    def __getattr__(self, name: str):
        object.__getattribute__(self, "_sc_state")[1] = 0
        return super().__getattr__(name)


def _batch(value: Any) -> tuple[list, bool]:
    if type(value) is tuple and len(value) == 2 and type(value[0]) is list and type(value[1]) is bool:
        return value
    raise ProgramError("the program's iterator sent a malformed batch")


def _handle_of(value: Any) -> wire.Handle:
    """How a test's argument that has no plain form is sent: a proxy (or a value of a program's subclass of a
    builtin, `_derived`) as its handle; anything else cannot be."""
    if isinstance(value, RemoteObject):
        return wire.Handle(object.__getattribute__(value, "_sc")[1])
    if getattr(type(value), "_sc_derived", False):
        return wire.Handle(object.__getattribute__(value, "__dict__")["_sc_handle"])
    raise wire.WireError(f"a {type(value).__name__} is not a plain builtin value")


def _derived(channel: Channel, value: wire.Derived) -> Any:
    """A program's subclass of a builtin (its namedtuple, IntEnum, list subclass) as a judge-side subclass of that
    builtin, named as the program's class and holding the plain value: equality, hashing, indexing and the base
    type's methods are the judge's own on that value; any other attribute (a namedtuple's fields, an enum's
    `name`) is read from the program's object through its proxy."""
    base = type(value.value)
    if base not in _DERIVABLE:
        return value.value
    instance = channel.made(value.name, (base,), _DERIVED_BODY, "ProgramValue")(value.value)
    instance.__dict__.update(_sc_handle=value.handle.id, _sc_proxy=channel.proxy(value.handle))
    return instance


_DERIVABLE = (int, float, complex, str, bytes, list, tuple, dict, set, frozenset)


def _derived_getattr(self, attribute: str) -> Any:
    if attribute.startswith("_sc_") or attribute in MEMORY_ATTRIBUTES:
        raise AttributeError(attribute)
    return getattr(object.__getattribute__(self, "__dict__")["_sc_proxy"], attribute)


def _derived_repr(self) -> str:
    return repr(object.__getattribute__(self, "__dict__")["_sc_proxy"])


_DERIVED_BODY = {"__getattr__": _derived_getattr, "__repr__": _derived_repr, "_sc_derived": True}


def _incoming(channel: Channel, reply: tuple, args: tuple, kwargs: dict) -> Any:
    kind = reply[0]
    if kind == "value" and len(reply) == 3:
        apply_mutations(args, kwargs, reply[2])
        return reply[1]
    if kind == "value" and len(reply) == 4 and _given(reply[3], args, kwargs):  # the program returned an argument
        apply_mutations(args, kwargs, reply[2])
        return args[reply[3]] if type(reply[3]) is int else kwargs[reply[3]]
    if kind == "raised" and len(reply) in (4, 5):
        detail = reply[4] if len(reply) == 5 else None
        raise program_raised(str(reply[1])[:100], str(reply[2])[:500], str(reply[3])[:300], detail, channel.made)
    channel.kill("sent a reply that is not a message")
    raise CandidateLost(channel.lost)


def _given(key: Any, args: tuple, kwargs: dict) -> bool:
    return type(key) is int and 0 <= key < len(args) or type(key) is str and key in kwargs


_PROXY_HOLDERS = (list, tuple, set, frozenset, dict, type(iter([])), *map(type, ({}.keys(), {}.values(), {}.items())))


def _proxied(channel: Channel, value: Any, depth: int) -> Any:
    """A decoded value with each Handle in it replaced by the proxy of that object (the same proxy for the same
    handle); a container without handles stays as it is."""
    kind = type(value)
    if kind is wire.Handle or kind is wire.IteratorHandle:
        return channel.proxy(value)
    if kind is wire.Derived:
        return _derived(channel, value)
    if kind not in _PROXY_HOLDERS or depth > wire.MAX_DEPTH:
        return value
    if kind is dict:
        return {_proxied(channel, k, depth + 1): _proxied(channel, v, depth + 1) for k, v in value.items()}
    items = list(value)
    if not set(map(type, items)) & {wire.Handle, wire.IteratorHandle, wire.Derived, *_PROXY_HOLDERS}:
        return value if kind in (list, tuple, set, frozenset) else _rebuilt_like(kind, items)
    return _rebuilt_like(kind, [_proxied(channel, x, depth + 1) for x in items])


def _rebuilt_like(kind: type, items: list) -> Any:
    """A list, tuple, set or frozenset of `items`; an iterator over them; a dict view of a dict rebuilt from them."""
    if kind in (list, tuple, set, frozenset):
        return kind(items)
    if kind is type({}.keys()):
        return dict.fromkeys(items).keys()
    if kind is type({}.values()):
        return dict(enumerate(items)).values()
    if kind is type({}.items()):
        return dict(items).items()
    return iter(items)


def apply_mutations(args: tuple, kwargs: dict, changes: Any) -> None:
    """The program changed arguments in place (a list, dict or set, or one inside a tuple): change the test's own
    objects the same way. A change is (position or keyword, the argument's new value)."""
    if type(changes) is not tuple:
        return
    for change in changes:
        if type(change) is not tuple or len(change) != 2:
            continue
        key, value = change
        if type(key) is int and 0 <= key < len(args):
            _update(args[key], value, 0)
        elif type(key) is str and key in kwargs:
            _update(kwargs[key], value, 0)


def _update(target: Any, value: Any, depth: int) -> None:
    """Make `target` hold `value`, in place, keeping the identity of containers nested in it where the shapes
    match (a test may hold an inner list too)."""
    if type(target) is not type(value) or depth > wire.MAX_DEPTH:
        return
    if type(target) is tuple:
        for inner, new in zip(target, value, strict=False):
            _update(inner, new, depth + 1)
    elif type(target) is list:
        if len(target) != len(value):
            target[:] = value
            return
        for i, new in enumerate(value):
            _replace_item(target, i, new, depth)
    elif type(target) is dict:
        if target.keys() != value.keys():
            target.clear()
            target.update(value)
            return
        for key, new in value.items():
            _replace_item(target, key, new, depth)
    elif type(target) is set:
        target.clear()
        target.update(value)


def _replace_item(target: Any, key: Any, new: Any, depth: int) -> None:
    if type(target[key]) is type(new) and type(new) in (list, dict, set, tuple):
        _update(target[key], new, depth + 1)
        if type(new) is not tuple or target[key] == new:
            return
    target[key] = new

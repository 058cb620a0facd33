"""The judge process: runs the tests and decides each verdict, in a process that never executes candidate code.

Started by the zygote beside the candidate's process for every `tests` run. Test scripts with their expected values,
HumanEval-style `check(candidate)` functions and the oracle stage's assert scripts all run here; the program is
reachable only through proxies (`Remote`, and `RemoteObject` for an object of the program's that has no plain value)
that send arguments to the candidate's process and decode what comes back as hostile bytes (`wire.py`). The equality
rule: a comparison with an expected value that the test built is decided here, on the program object's plain value;
it is never decided by the program's `__eq__`. Comparisons between two of the program's own objects may use the
program's methods: they cannot reveal or fake an expected value. Each call waits at most for what is left of its
test's time; past that this process kills the candidate (a pidfd), so a program spinning in C code costs one test's
limit, not the run's. Verdicts go to the report fd as JSON lines that only this process holds. A test script is
trusted to mean what it says (it is the test), but it runs confined like the program: no network, read-only
filesystem.

One judge process serves several runs of one test script in turn (`serve`; the zygote never gives it a run of
another script: `children.JudgeServer`): each run arrives as a request on the control socket carrying that run's
descriptors, which are placed at fixed numbers (`RUN_FDS`) and closed afterwards. After each run it checks that
the tests left it as it was (`integrity.py`); if not, or after its last allowed run, it says so and exits, and the
zygote starts a fresh one for the next run.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import json
import os
import signal
import socket
import threading
import time
from typing import Any

from solidcoder.execution import wire
from solidcoder.execution.compare import strict_equal
from solidcoder.execution.harness import MAX_REPR, at, compile_standalone, exception_text, program_frames
from solidcoder.execution.integrity import Integrity

REQUESTS, REPLIES, PIDFD, REPORT_FD = 4, 5, 6, 3
CONTROL, JOB = 8, 9
RUN_FDS = (JOB, REPORT_FD, REQUESTS, REPLIES, PIDFD)  # the order the zygote sends them in
# The builtin exception classes a program's exception arrives as, so that a test's `except ValueError` works. Not
# StopIteration and its kind: raised into a test's own loop (`all(map(candidate, cases))`) it would end the loop
# early and pass the test; it arrives as a ProgramError, as PEP 479 turns it into a RuntimeError in a generator.
_BUILTIN_ERRORS = {name: value for name, value in vars(builtins).items()
                   if isinstance(value, type) and issubclass(value, Exception)
                   and not issubclass(value, (StopIteration, StopAsyncIteration))}


class TestTimeout(BaseException):
    """The test ran out of time; a BaseException so that `except Exception` in a test script cannot eat it."""

    __test__ = False


class CandidateLost(BaseException):
    """The candidate's process is gone (it exited, crashed or was killed): no later call can be answered."""


class ProgramError(Exception):
    """The program raised an exception that is not a builtin one (its class name is in the message)."""


class Channel:
    """The two pipes to the candidate, with the current test's deadline and what became of the candidate.

    Safe to use from a test's worker threads (a `ThreadPoolExecutor`): one request and its reply at a time, under a
    lock. The per-test alarm interrupts the main thread only; a worker thread's wait ends at the deadline itself
    (`read_frame`'s own timeout), which kills the candidate as the alarm would.
    """

    def __init__(self) -> None:
        self.deadline = 0.0
        self.lost: str | None = None
        self.timed_out = False
        self.lock = threading.RLock()
        self.proxies: dict[int, RemoteObject] = {}  # handle number -> its proxy, so that `is` works as in the program

    def ask(self, request: tuple) -> tuple:
        with self.lock:
            if self.lost:
                raise CandidateLost(self.lost)
            try:
                wire.write_frame(REQUESTS, wire.encode(request, _handle_of))
                return self.receive()
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
            reply = wire.decode(frame)
        except wire.WireError as exc:
            self.kill(f"sent a malformed reply ({exc})")
            raise CandidateLost(self.lost) from None
        if type(reply) is not tuple or not reply or type(reply[0]) is not str:
            self.kill("sent a reply that is not a message")
            raise CandidateLost(self.lost)
        # A handle is a one-key object {"h": n}; "h" spelt with an escape arrives as a bare Handle, useless to a test.
        return _proxied(self, reply, 0) if b'"h"' in frame else reply

    def kill(self, why: str) -> None:
        self.lost = self.lost or f"the program {why}"
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(PIDFD, signal.SIGKILL)

    def proxy(self, handle: wire.Handle) -> RemoteObject:
        found = self.proxies.get(handle.id)
        if found is None:
            found = self.proxies[handle.id] = RemoteObject(self, handle.id)
        return found


class Remote:
    """A function, class or method of the program, called through the channel; returns decoded plain values, with
    a proxy (`RemoteObject`) for each object of the program's inside them."""

    def __init__(self, channel: Channel, path: tuple, label: str) -> None:
        self._channel, self._path, self._label = channel, path, label

    def __call__(self, *args, **kwargs):
        reply = self._channel.ask(("call", self._path, list(args), kwargs))
        return _incoming(self._channel, reply, args, kwargs)

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
        return type(other) is RemoteObject and other._sc[0] is object.__getattribute__(self, "_sc")[0]

    def __getattr__(self, name: str):
        channel, handle = object.__getattribute__(self, "_sc")
        reply = channel.ask(("getattr", handle, name))
        if reply[0] == "callable":
            return Remote(channel, ("attr", handle, name), name)
        return _incoming(channel, reply, (), {})

    def __setattr__(self, name: str, value: Any) -> None:
        channel, handle = object.__getattribute__(self, "_sc")
        _incoming(channel, channel.ask(("setattr", handle, name, value)), (), {})

    def __call__(self, *args, **kwargs):
        channel, handle = object.__getattribute__(self, "_sc")
        return _incoming(channel, channel.ask(("call", ("object", handle), list(args), kwargs)), args, kwargs)

    def __len__(self) -> int:
        return self._ask("len")

    def __iter__(self):
        return RemoteIterator(self._ask("iter"))

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


class RemoteIterator:
    """What `iter()` of a program's object gave, in the program's process: each `next` asks it there, so an endless
    iterator costs only what the test takes. Only here does the program's StopIteration end the test's loop."""

    def __init__(self, source: RemoteObject) -> None:
        self._source = source

    def __iter__(self):
        return self

    def __next__(self):
        channel, handle = object.__getattribute__(self._source, "_sc")
        reply = channel.ask(("op", handle, "next", []))
        if reply[0] == "raised" and reply[1:2] == ("StopIteration",):
            raise StopIteration
        return _incoming(channel, reply, (), {})


def _handle_of(value: Any) -> wire.Handle:
    """How a test's argument that has no plain form is sent: a proxy as its handle; anything else cannot be."""
    if type(value) is RemoteObject:
        return wire.Handle(object.__getattribute__(value, "_sc")[1])
    raise wire.WireError(f"a {type(value).__name__} is not a plain builtin value")


def _incoming(channel: Channel, reply: tuple, args: tuple, kwargs: dict) -> Any:
    kind = reply[0]
    if kind == "value" and len(reply) == 3:
        _apply_mutations(args, kwargs, reply[2])
        return reply[1]
    if kind == "raised" and len(reply) == 4:
        raise _program_raised(str(reply[1])[:100], str(reply[2])[:500], str(reply[3])[:300])
    channel.kill("sent a reply that is not a message")
    raise CandidateLost(channel.lost)


_PROXY_HOLDERS = (list, tuple, set, frozenset, dict, type(iter([])), *map(type, ({}.keys(), {}.values(), {}.items())))


def _proxied(channel: Channel, value: Any, depth: int) -> Any:
    """A decoded value with each Handle in it replaced by the proxy of that object (the same proxy for the same
    handle); a container without handles stays as it is."""
    kind = type(value)
    if kind is wire.Handle:
        return channel.proxy(value)
    if kind not in _PROXY_HOLDERS or depth > wire.MAX_DEPTH:
        return value
    if kind is dict:
        return {_proxied(channel, k, depth + 1): _proxied(channel, v, depth + 1) for k, v in value.items()}
    items = list(value)
    if not set(map(type, items)) & {wire.Handle, *_PROXY_HOLDERS}:
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


def _program_raised(name: str, message: str, where: str) -> Exception:
    """The program's exception as the test sees it: the builtin class of that name with the program's message (a
    class of the program's own is a ProgramError naming it); `program_raised` keeps its text and where it was."""
    text = f"{name}: {message}" if message else name
    try:
        exc = _BUILTIN_ERRORS[name](message)
    except (KeyError, TypeError):  # not a builtin name, or a class that takes other arguments (UnicodeDecodeError)
        exc = ProgramError(text)
    exc.program_raised = (text, where)
    return exc


def _apply_mutations(args: tuple, kwargs: dict, changes: Any) -> None:
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


def _base_scope(channel: Channel, job: dict) -> dict[str, Any]:
    """The names a test script sees: the builtins, the problem's header (the dataset's own code, trusted as the test
    is: its imports and helpers) and a proxy for the entry point. Nothing the program reports adds a name: a program
    cannot bind `math` for the test, or hide a builtin."""
    scope: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    header = job.get("header") or ""
    if header:
        with contextlib.suppress(Exception):  # a header that fails here fails the tests that need its names
            exec(compile_standalone(header, "prompt.py"), scope)
    entry_point = job["entry_point"]
    name = entry_point.split(".")[0]
    if name:
        scope[name] = Remote(channel, ("name", name), name)
    return scope


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except BaseException:  # noqa: BLE001 - a broken __repr__ (of a test's own object) must not break the verdict
        return "<unrepresentable>"
    return text if len(text) <= MAX_REPR else text[:MAX_REPR] + "..."


def _candidate(scope: dict, channel: Channel, entry_point: str):
    """What `check(candidate)` receives: the function, or a fresh instance's method for `Class.method`."""
    if "." not in entry_point:
        found = scope.get(entry_point)
        return found if isinstance(found, Remote) else Remote(channel, ("name", entry_point), entry_point)
    cls_name, method = entry_point.split(".", 1)
    return getattr(Remote(channel, ("name", cls_name), cls_name)(), method)


def _run_one(test: dict, scope: dict, channel: Channel, entry_point: str) -> dict:
    kind = test["kind"]
    if kind == "call":
        value = eval(compile_standalone(test["call"], "test.py", "eval"), scope)
        return {"ok": strict_equal(value, test["expected"], test.get("tolerance", 1e-6)), "actual": _short_repr(value)}
    if kind == "assert":
        exec(compile_standalone(test["script"], "test.py"), scope)
    else:  # "check": a HumanEval-style `def check(candidate)` script
        exec(compile_standalone(test["script"], "test.py"), scope)
        scope["check"](_candidate(scope, channel, entry_point))
    return {"ok": True}


def _alarm(_signum, _frame):
    raise TestTimeout()


def _guarded(test: dict, base: dict, channel: Channel, job: dict) -> dict:
    """One test under its deadline; the candidate's fate during the test overrides how the script ended."""
    channel.deadline = time.monotonic() + job["test_time_s"]
    signal.setitimer(signal.ITIMER_REAL, job["test_time_s"] + 0.05)
    try:
        verdict = _run_one(test, dict(base), channel, job["entry_point"])
    except TestTimeout:
        verdict = {"ok": False, "timeout": True}
    except CandidateLost as exc:
        verdict = {"ok": False, "error": str(exc), "lost": True}
    except BaseException as exc:  # noqa: BLE001 - whatever the test raised is that test's failure
        verdict = {"ok": False, "error": _failure(exc, test)}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return _settled(verdict, channel, job)


def _failure(exc: BaseException, test: dict) -> str:
    """One line: the exception's type and message once, where the program raised it, then the test's line."""
    text, where = getattr(exc, "program_raised", (exception_text(exc), ""))
    frames = program_frames(exc, {"test.py": test.get("call") or test.get("script") or ""})
    places = [f"at {where}"] if where else []
    places += [f"{'called from' if where else 'at'} {at(frames[-1])}"] if frames else []
    return " ".join(filter(None, [text, ", ".join(places)]))


def _settled(verdict: dict, channel: Channel, job: dict) -> dict:
    if channel.timed_out or verdict.get("timeout"):
        return {"ok": False, "timeout": True, "error": f"timed out after {job['test_time_s']} s",
                "lost": channel.lost is not None}
    if channel.lost is not None:
        return {"ok": False, "error": channel.lost, "lost": True}
    return verdict


def _emit(record: dict) -> None:
    data = (json.dumps(record, default=repr) + "\n").encode()
    while data:
        data = data[os.write(REPORT_FD, data) :]


def _loaded(channel: Channel, job: dict) -> Any:
    """The program's names once it has loaded, or None after reporting why it did not."""
    channel.deadline = time.monotonic() + job["test_time_s"]
    signal.setitimer(signal.ITIMER_REAL, job["test_time_s"] + 0.05)  # decoding a hostile reply takes time too
    try:
        reply = channel.receive()
    except (TimeoutError, TestTimeout):
        channel.kill("timed out while loading")
        reply = ("load_error", f"the program did not finish loading within {job['test_time_s']} s")
    except (EOFError, OSError, CandidateLost):
        reply = ("load_error", "the program's process ended while loading")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if reply[0] == "loaded" and len(reply) == 2:
        return reply[1]
    _emit({"event": "load_error", "error": str(reply[1] if len(reply) > 1 else reply)[:2000]})
    return None


def judge_run(job: dict) -> None:
    """One run: every test in turn, one verdict each, then `done`."""
    channel = Channel()
    names = _loaded(channel, job)
    if names is not None:
        base = _base_scope(channel, job)
        for index, test in enumerate(job["tests"]):
            verdict = _guarded(test, base, channel, job)
            _emit({"event": "test", "index": index, **verdict})
            if channel.lost or (job.get("stop_on_failure") and not verdict["ok"]):
                break
    channel.lost = channel.lost or "the run is over"  # a test's leftover thread cannot reach the next run's program
    _emit({"event": "done"})


def _place(fds: list[int]) -> None:
    """Move one run's descriptors to `RUN_FDS` (through high copies, so no source is overwritten)."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 16) for fd in fds]
    for fd in fds:
        os.close(fd)
    for fd, target in zip(high, RUN_FDS, strict=True):
        os.dup2(fd, target)
        os.close(fd)


def _next_run(control: socket.socket) -> dict | None:
    """The next run's job, its descriptors in place; None when the zygote is gone or sent something else."""
    try:
        message, fds, _, _ = socket.recv_fds(control, 16, len(RUN_FDS))
    except OSError:
        return None
    if message != b"run" or len(fds) != len(RUN_FDS):
        for fd in fds:
            os.close(fd)
        return None
    _place(fds)
    size = os.fstat(JOB).st_size
    job = json.loads(os.pread(JOB, size, 0))
    os.close(JOB)
    return job


def serve(runs: int) -> None:
    """Entry point of the judge process: judge up to `runs` runs sent on `CONTROL`, then exit. Never returns.

    After each run it answers `again`, or `fresh` when it will serve no more (its last run, or the tests changed
    what it relies on).
    """
    signal.signal(signal.SIGALRM, _alarm)
    control = socket.socket(fileno=CONTROL)
    integrity = Integrity()
    for served in range(1, runs + 1):
        job = _next_run(control)
        if job is None:
            break
        judge_run(job)
        for fd in RUN_FDS[1:]:
            os.close(fd)
        again = served < runs and integrity.intact()
        control.sendall(b"again" if again else b"fresh")
        if not again:
            break
    os._exit(0)

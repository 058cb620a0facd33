"""The judge process: runs the tests and decides each verdict, in a process that never executes candidate code.

Started by the zygote beside the candidate's process for every `tests` run. Test scripts with their expected
values, HumanEval-style `check(candidate)` functions and the oracle stage's assert scripts all run here; the
program is reachable only through proxies (`Remote`) that send arguments to the candidate's process and decode
what comes back as hostile bytes (`wire.py`). Each call waits at most for what is left of its test's time; past
that this process kills the candidate (a pidfd), so a program spinning in C code costs one test's limit, not the
run's. Verdicts go to the report fd as JSON lines that only this process holds. A test script is trusted to
mean what it says (it is the test), but it runs confined like the program: no network, read-only filesystem.

One judge process serves several runs of its worker in turn (`serve`): each run arrives as a request on the control
socket carrying that run's descriptors, which are placed at fixed numbers (`RUN_FDS`) and closed afterwards. After
each run it checks that the tests left it as it was (`integrity.py`); if not, or after its last allowed run, it
says so and exits, and the zygote starts a fresh one for the next run.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import json
import os
import signal
import socket
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
    """The two pipes to the candidate, with the current test's deadline and what became of the candidate."""

    def __init__(self) -> None:
        self.deadline = 0.0
        self.lost: str | None = None
        self.timed_out = False

    def ask(self, request: tuple) -> tuple:
        if self.lost:
            raise CandidateLost(self.lost)
        try:
            wire.write_frame(REQUESTS, wire.encode(request))
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
            reply = wire.decode(wire.read_frame(REPLIES, self.deadline))
        except wire.WireError as exc:
            self.kill(f"sent a malformed reply ({exc})")
            raise CandidateLost(self.lost) from None
        if type(reply) is not tuple or not reply or type(reply[0]) is not str:
            self.kill("sent a reply that is not a message")
            raise CandidateLost(self.lost)
        return reply

    def kill(self, why: str) -> None:
        self.lost = self.lost or f"the program {why}"
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(PIDFD, signal.SIGKILL)


class Remote:
    """A function, class or method of the program, called through the channel; returns decoded plain values.

    Only a class (`constructs`) answers with an object of the program's; from anything else that is a lie.
    """

    def __init__(self, channel: Channel, path: tuple, label: str, constructs: bool = False) -> None:
        self._channel, self._path, self._label, self._constructs = channel, path, label, constructs

    def __call__(self, *args, **kwargs):
        reply = self._channel.ask(("call", self._path, [_outgoing(a) for a in args],
                                   {k: _outgoing(v) for k, v in kwargs.items()}))
        if reply[0] == "handle" and not self._constructs:
            self._channel.kill(f"answered a call of {self._label} with an object of its own")
            raise CandidateLost(self._channel.lost)
        return _incoming(self._channel, reply, args, kwargs)

    def __repr__(self) -> str:
        return f"<program's {self._label}>"


class RemoteObject:
    """An instance living in the candidate's process; attribute access asks for it there.

    It has no truth value and no equality: a test can only read plain values through its methods, so a program
    cannot pass `assert f(x)` or `assert f(x) != y` by answering with an object instead of a value.
    """

    __hash__ = object.__hash__

    def __init__(self, channel: Channel, handle: int, class_name: str) -> None:
        object.__setattr__(self, "_sc", (channel, handle, class_name))

    def __getattr__(self, name: str):
        channel, handle, class_name = object.__getattribute__(self, "_sc")
        reply = channel.ask(("getattr", handle, name))
        if reply[0] == "callable":
            return Remote(channel, ("attr", handle, name), f"{class_name}.{name}")
        return _incoming(channel, reply, (), {})

    def __repr__(self) -> str:
        return f"<program's {object.__getattribute__(self, '_sc')[2]} object>"

    def __bool__(self) -> bool:
        raise TypeError(f"{self!r} has no truth value in a test; call its methods")

    def __eq__(self, other: object) -> bool:
        raise TypeError(f"{self!r} cannot be compared in a test; call its methods")

    __ne__ = __eq__


def _outgoing(value: Any) -> Any:
    return wire.Handle(object.__getattribute__(value, "_sc")[1]) if type(value) is RemoteObject else value


def _incoming(channel: Channel, reply: tuple, args: tuple, kwargs: dict) -> Any:
    kind = reply[0]
    if kind == "value" and len(reply) == 3:
        _apply_mutations(args, kwargs, reply[2])
        return reply[1]
    if kind == "handle" and len(reply) == 3 and type(reply[1]) is int:
        return RemoteObject(channel, reply[1], str(reply[2]))
    if kind == "raised" and len(reply) == 4:
        raise _program_raised(str(reply[1])[:100], str(reply[2])[:500], str(reply[3])[:300])
    channel.kill("sent a reply that is not a message")
    raise CandidateLost(channel.lost)


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


def _base_scope(channel: Channel, names: Any, job: dict) -> dict[str, Any]:
    """The names a test script sees: the builtins, the problem's header (the dataset's own code, trusted as the test
    is: its imports and helpers) and a proxy for the entry point. Nothing the program reports adds a name: a program
    cannot bind `math` for the test, or hide a builtin. Only whether its entry point is a class comes from it."""
    scope: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    header = job.get("header") or ""
    if header:
        with contextlib.suppress(Exception):  # a header that fails here fails the tests that need its names
            exec(compile_standalone(header, "prompt.py"), scope)
    entry_point = job["entry_point"]
    name = entry_point.split(".")[0]
    if name:
        entry = names.get(name) if type(names) is dict else None
        declared_class = "." in entry_point or type(entry) is tuple and entry[:1] == ("class",)
        scope[name] = Remote(channel, ("name", name), name, constructs=declared_class)
    return scope


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except BaseException:  # noqa: BLE001 - a broken __repr__ (of a test's own object) must not break the verdict
        return "<unrepresentable>"
    return text if len(text) <= MAX_REPR else text[:MAX_REPR] + "..."


def _candidate(scope: dict, channel: Channel, entry_point: str):
    """What `check(candidate)` receives: the function, or a fresh instance's method for `Class.method`."""
    if "." not in entry_point:  # the proxy the scope has knows whether the program declared a class
        found = scope.get(entry_point)
        return found if isinstance(found, Remote) else Remote(channel, ("name", entry_point), entry_point)
    cls_name, method = entry_point.split(".", 1)
    return getattr(Remote(channel, ("name", cls_name), cls_name, constructs=True)(), method)


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
        base = _base_scope(channel, names, job)
        for index, test in enumerate(job["tests"]):
            verdict = _guarded(test, base, channel, job)
            _emit({"event": "test", "index": index, **verdict})
            if channel.lost or (job.get("stop_on_failure") and not verdict["ok"]):
                break
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

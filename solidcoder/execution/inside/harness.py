"""Code that runs inside the candidate's sandboxed process, around the untrusted program. It decides nothing.

Four modes. `stdio` runs the program as `__main__`; the parent compares its stdout. `serve` loads the program
and answers calls from the judge process (`referee.py`) over two pipes, one value per call, in the plain-data
wire format (`wire.py`); a value with no plain form (an object of the program's classes) stays here behind a
numbered handle, and the judge's proxy asks for its attributes, methods and protocols (`PROTOCOLS`). `trace` and
`blocks` run it under a tracer (`trace_harness.py`; debugging feedback, not a verdict); `candidate.py` picks the
mode.
Everything this process sends is data the judge or the parent decodes as hostile bytes: a program
that rewrites this module, `builtins` or the encoder can only change the values it answers with, which it could
have computed anyway. Code is compiled as a standalone file would be (no `__future__` flag of this module).
"""

from __future__ import annotations

import builtins
import io
import linecache
import operator
import os
import sys
import traceback
import types
from typing import Any

from solidcoder.execution.inside import wire

MAX_REPR = 300
MEMORY_ERROR_EXIT = 125  # a stdio program that ran out of memory (a failure either way, so no one gains by faking it)
CANDIDATE_IN, CANDIDATE_OUT, REPORT_FD = 3, 4, 3


def compile_standalone(source: str, filename: str, mode: str = "exec"):
    """compile() as `python file.py` would: no compiler flags inherited from this module."""
    return compile(source, filename, mode, dont_inherit=True)


def fresh_stdio() -> None:
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8", errors="replace")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="replace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="replace")
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    sys.argv = ["solution.py"]


def flush_and_exit(code: int, _exit=os._exit) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - no contextlib here: the program may have replaced it
            stream.flush()
        except BaseException:  # noqa: BLE001 - the program may have closed or replaced the stream
            pass
    _exit(code)


def source_line(source: str, lineno: int | None) -> str:
    """Line `lineno` (1-based) of `source`, stripped; "" when there is no such line."""
    lines = source.splitlines()
    return lines[lineno - 1].strip()[:200] if lineno and 0 < lineno <= len(lines) else ""


def program_frames(exc: BaseException, sources: dict[str, str]) -> list[list]:
    """[file, line, function, source line] of each frame of `exc`'s traceback whose file is one of `sources`
    (file name to its text: compiled code has no file to read lines from), outermost first."""
    summary = traceback.StackSummary.extract(traceback.walk_tb(exc.__traceback__), lookup_lines=False)
    return [[f.filename, f.lineno or 0, f.name, source_line(sources[f.filename], f.lineno)]
            for f in summary if f.filename in sources]


def at(frame: list) -> str:
    """`file:line: source` for one of `program_frames`, without the colon when the source line is unknown."""
    file, line, _, text = frame
    return f"{file}:{line}: {text}" if text else f"{file}:{line}"


def exception_message(exc: BaseException) -> str:
    """str(exc), at most 500 characters; never raises (the program may have written that __str__)."""
    try:
        return str(exc)[:500]
    except BaseException:  # noqa: BLE001 - a broken __str__ still leaves the type
        return "<unprintable message>"


def exception_text(exc: BaseException) -> str:
    """`Type: message`, or just `Type` when the message is empty."""
    message = exception_message(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def describe(exc: BaseException, sources: dict[str, str]) -> str:
    """One line: the exception's type and message, then its innermost frame in `sources`, with its source line."""
    frames = program_frames(exc, sources)
    return exception_text(exc) + (f" at {at(frames[-1])}"[:300] if frames else "")


def _exit_code_of(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def new_namespace(name: str) -> dict[str, Any]:
    return {"__name__": name, "__builtins__": builtins, "__file__": "solution.py"}


def run_header(job: dict, ns: dict) -> None:
    """The problem's header (the dataset harness's code before the program: imports, helpers) in the program's
    namespace, under the file name `prompt.py`; the program then runs in the same namespace, after it."""
    header = job.get("header") or ""
    if header:
        linecache.cache["prompt.py"] = (len(header), None, header.splitlines(True), "prompt.py")
        exec(compile_standalone(header, "prompt.py"), ns)


def run_stdio(code: str) -> None:
    """Run the program as a script; exit with its status. The parent judges stdout."""
    linecache.cache["solution.py"] = (len(code), None, code.splitlines(True), "solution.py")  # traceback's lines
    try:
        exec(compile_standalone(code, "solution.py"), new_namespace("__main__"))
    except SystemExit as exc:
        flush_and_exit(_exit_code_of(exc))
    except MemoryError:
        print("MemoryError", file=sys.stderr)
        flush_and_exit(MEMORY_ERROR_EXIT)
    except BaseException as exc:  # noqa: BLE001 - report whatever the program raised, like the interpreter does
        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)  # without this harness's frame
        flush_and_exit(1)
    flush_and_exit(0)


# ---------------------------------------------------------------- serve: answer the judge's calls


class ProgramServer:
    """The program's namespace and the objects handed out as handles; one request, one reply.

    A value with no plain form (an instance of the program's class, a function, an iterator asked for by `iter`)
    stays here and is sent as a Handle, anywhere inside a reply (`keep`); the judge reaches it through a proxy that
    reads attributes, calls methods and asks for the protocols in `PROTOCOLS`, each answered by the program's own
    code here. Handles come back inside arguments and are replaced by their objects (`_unhandle`).
    """

    def __init__(self, ns: dict, code: str = "") -> None:
        self.ns, self.objects, self.sources = ns, {}, {"solution.py": code}
        self.numbers: dict[int, int] = {}  # id() of a kept object -> its handle number (kept objects stay alive)
        self.pending: dict[int, BaseException] = {}  # id() of an iterator -> what it raised after a batch's items

    def reply_to(self, request: Any) -> tuple:
        op = request[0]
        if op == "call":
            return self._call(self._target(request[1]), request[2], request[3])
        if op == "getattr":
            value = getattr(self.objects[request[1]], request[2])
            return ("callable",) if type(value) in _ROUTINES else ("value", value, ())
        if op == "ref":  # a function or class of the program as an object (its attributes, isinstance)
            return ("value", self.keep(self._target(request[1])), ())
        if op == "isinstance":
            return ("value", isinstance(self._unhandle(request[2]), self._target(request[1])), ())
        if op == "setattr":
            setattr(self.objects[request[1]], request[2], self._unhandle(request[3]))
            return ("value", None, ())
        if op == "op" and request[2] in PROTOCOLS:
            return self._protocol(self.objects[request[1]], request[2], request[3])
        raise ValueError(f"unknown request {op!r}")

    def _protocol(self, obj: Any, name: str, args: list) -> tuple:
        pending = self.pending.pop(id(obj), None)
        if pending is not None:
            raise pending
        if name == "take":
            return ("value", self._take(obj, args[0] if args and type(args[0]) is int else 1), ())
        value = PROTOCOLS[name](obj, *[self._unhandle(a) for a in args])
        if name == "iter":  # lazy: the judge draws it in batches (`proxies.RemoteGenerator`)
            return ("value", wire.IteratorHandle(self.keep(value).id), ())
        return ("value", value, ())

    def _take(self, iterator: Any, count: int) -> tuple[list, bool]:
        """Up to `count` items of the iterator, and whether it ended. An exception after some items is kept for
        the next request on that iterator, so the judge sees the items first, then the exception, as a loop would."""
        items: list = []
        for _ in range(max(1, min(count, TAKE_MAX))):
            try:
                items.append(next(iterator))
            except StopIteration:
                return items, True
            except BaseException as exc:  # noqa: BLE001 - the program's own exception, delivered in its turn
                if not items:
                    raise
                self.pending[id(iterator)] = exc
                break
        return items, False

    def keep(self, value: Any) -> wire.Handle:
        """The handle of `value`, the same one each time it is sent."""
        number = self.numbers.get(id(value))
        if number is None:
            number = self.numbers[id(value)] = len(self.objects) + 1
            self.objects[number] = value
        name = getattr(type(value), "__name__", "")
        return wire.Handle(number, name if type(name) is str else "")

    def _target(self, path: tuple):
        if path[0] == "name":
            return self.ns[path[1]]
        if path[0] == "object":
            return self.objects[path[1]]
        return getattr(self.objects[path[1]], path[2])

    def _call(self, fn, args: list, kwargs: dict) -> tuple:
        """Call `fn`; the reply carries the value and every argument (by position or keyword) whose contents the
        call changed, so that the test sees its own objects changed in place. A class's instance stays here."""
        args = [self._unhandle(a) for a in args]
        kwargs = {k: self._unhandle(v) for k, v in kwargs.items()}
        given = [*enumerate(args), *kwargs.items()]
        before = [(key, a, _encoded_or_none(a)) for key, a in given if type(a) in _MUTABLE_HOLDERS]
        value = fn(*args, **kwargs)
        mutated = tuple((key, a) for key, a, b in before if b is not None and _encoded_or_none(a) != b)
        same = next((key for key, a in given if a is value and type(a) in _MUTABLE_HOLDERS), None)
        if same is not None:  # the test's own object came back: the judge answers with it, changed as the program did
            return ("value", None, mutated, same)
        return ("value", self.keep(value) if isinstance(fn, type) else value, mutated)

    def _unhandle(self, value: Any) -> Any:
        """An argument with each Handle in it (at any depth of lists, tuples and dicts) replaced by its object."""
        kind = type(value)
        if kind is wire.Handle:
            return self.objects[value.id]
        if kind is wire.Derived:  # the program's own object, sent back by the test
            return self.objects[value.handle.id]
        if kind is wire.CallbackHandle:  # a callable of the test's: calling it asks the judge
            return Callback(self, value.id)
        if kind in _HOLDERS:
            return value if not set(map(type, value)) & _HOLDS_HANDLES else kind(self._unhandle(x) for x in value)
        if kind is dict:
            return {k: self._unhandle(v) for k, v in value.items()}
        return value


_HOLDERS = (list, tuple, set, frozenset)
_HOLDS_HANDLES = {wire.Handle, wire.Derived, wire.CallbackHandle, *_HOLDERS, dict}  # item types that may hold one
# What a `getattr` answers as "callable" (the judge calls it by name); any other value is sent, an object as a Handle.
_ROUTINES = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.MethodWrapperType)
TAKE_MAX = 4096  # the most items one `take` draws from an iterator
PROTOCOLS = {"take": None, "len": len, "iter": iter, "next": next, "bool": bool, "str": str, "repr": repr, "hash": hash,
             "contains": operator.contains, "getitem": operator.getitem, "setitem": operator.setitem,
             "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
             "ge": operator.ge}


_MUTABLE_HOLDERS = (list, dict, set, tuple)  # argument types whose contents a call can change (a tuple's lists)


def _encoded_or_none(value: Any) -> bytes | None:
    try:
        return wire.encode(value)
    except wire.WireError:
        return None


def exported_names(ns: dict) -> dict[str, Any]:
    """What the judge may name: the program's own callables and classes, where imported ones come from (the judge
    imports those itself), modules by name, and small plain values by value."""
    names: dict[str, Any] = {}
    for name, value in list(ns.items()):
        if name.startswith("__"):
            continue
        if type(value).__name__ == "module":
            names[name] = ("module", getattr(value, "__name__", name))
        elif isinstance(value, type) or callable(value):
            names[name] = _callable_entry(value)
        elif (raw := _encoded_or_none(value)) is not None and len(raw) <= 1 << 16:
            names[name] = ("value", value)
    return names


def _callable_entry(value: Any) -> tuple:
    module = getattr(value, "__module__", None)
    if isinstance(module, str) and module != "solution":
        return ("import", module, str(getattr(value, "__qualname__", getattr(value, "__name__", ""))))
    return ("class" if isinstance(value, type) else "function",)


def _send(message: tuple, keep: wire.Keep | None = None) -> None:
    try:
        payload = wire.encode(message, keep)
    except wire.WireError as exc:
        payload = wire.encode(("raised", "TypeError", f"the program's answer cannot be judged: {exc}", ""))
    wire.write_frame(CANDIDATE_OUT, payload)


class Callback:
    """A callable of the test's, in the program's hands: each call sends ("callback", n, args, kwargs) to the judge,
    which runs the test's own callable there, and answers the judge's requests (a callback may call the program
    again) until its result comes: ("returned", value) or ("failed", exception name, message). Nested at most
    MAX_NESTING deep (a callback that recurses into the program and back ends in RecursionError)."""

    depth = 0

    def __init__(self, server: ProgramServer, number: int) -> None:
        self._server, self._number = server, number

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if Callback.depth >= MAX_NESTING:
            raise RecursionError("callbacks between the test and the program nested too deep")
        Callback.depth += 1
        try:
            _send(("callback", self._number, list(args), kwargs), self._server.keep)
            return self._outcome()
        finally:
            Callback.depth -= 1

    def _outcome(self) -> Any:
        while True:
            message = wire.decode(wire.read_frame(CANDIDATE_IN))
            if type(message) is tuple and message and message[0] in ("returned", "failed"):
                return self._result(message)
            reply = _answer(self._server, message)
            wire.write_frame(CANDIDATE_OUT, wire.COMPUTED)
            _send(reply, self._server.keep)

    def _result(self, message: tuple) -> Any:
        if message[0] == "returned" and len(message) == 2:
            return self._server._unhandle(message[1])
        error = getattr(builtins, str(message[1]) if len(message) > 1 else "", None)
        error = error if isinstance(error, type) and issubclass(error, Exception) else RuntimeError
        raise error(str(message[2]) if len(message) > 2 else "")

    def __repr__(self) -> str:
        return f"<the test's callable {self._number}>"


MAX_NESTING = 50


def run_serve(job: dict) -> None:
    """Load the header and the program, announce the program's names, then answer calls until the judge closes the
    pipe."""
    ns, code = new_namespace("solution"), job["code"]
    try:
        run_header(job, ns)
        exec(compile_standalone(code, "solution.py"), ns)
        _send(("loaded", exported_names(ns)))
    except BaseException as exc:  # noqa: BLE001 - a program that fails to load fails every test
        _send(("load_error", describe(exc, {"solution.py": code})))
        flush_and_exit(0)
    server = ProgramServer(ns, code)
    while True:
        try:
            request = wire.decode(wire.read_frame(CANDIDATE_IN))
        except (EOFError, OSError):
            flush_and_exit(0)
        reply = _answer(server, request)
        wire.write_frame(CANDIDATE_OUT, wire.COMPUTED)  # encoding starts: the judge times it apart
        _send(reply, server.keep)


def _answer(server: ProgramServer, request: Any) -> tuple:
    """The reply to one request; an exception is sent as (type name, message, where the program raised it, its
    classes and arguments: `exception_detail`)."""
    try:
        return server.reply_to(request)
    except BaseException as exc:  # noqa: BLE001 - SystemExit, MemoryError... all are the call's outcome
        frames = program_frames(exc, server.sources)
        return ("raised", type(exc).__name__, exception_message(exc), at(frames[-1])[:300] if frames else "",
                exception_detail(exc))


def exception_detail(exc: BaseException) -> tuple:
    """The exception's classes, most derived first, as (module, qualified name); its args and its attributes
    (`json.JSONDecodeError.pos`), each when plain (else None). The judge trusts none of it: it only looks the names
    up among the classes it already holds."""
    try:
        classes = tuple((str(c.__module__), str(c.__qualname__)) for c in type(exc).__mro__[:32])
    except BaseException:  # noqa: BLE001 - a class whose names are not strings, or whose str raises
        classes = ()
    attributes = getattr(exc, "__dict__", None)
    return classes, _small(exc.args, tuple), _small(dict(attributes) if type(attributes) is dict else None, dict)


def _small(value: Any, kind: type) -> Any:
    raw = _encoded_or_none(value) if type(value) is kind else None
    return value if raw is not None and len(raw) <= 1 << 16 else None

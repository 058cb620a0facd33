"""Code that runs inside a sandboxed child, around the untrusted program.

Three modes: `stdio` runs the program as `__main__` (the parent compares its stdout), `tests` loads the program
and runs call tests against it, `trace` runs it under `sys.settrace` and reports variables' final values.

Results travel on a report pipe, one line per record, each line prefixed by a per-run nonce the parent checks;
the run counts as complete only once the `done` record arrives, so exiting early (`sys.exit`, `os._exit`) or
printing a fake verdict is a failure. The functions used after the program has run are bound when this module
is imported (in the zygote, before any program exists), so a program that reassigns `os.write`, `json.dumps` or
this module's globals does not change how verdicts are written or compared. A program that deliberately digs
through interpreter internals (frames, `gc`, ctypes) can still reach the nonce: that is out of scope, and the
module docstring of `sandbox.py` says so.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import os
import signal
import sys
import traceback
from typing import Any

from solidcoder.execution.compare import is_plain_value, strict_equal

MAX_REPR = 300


class TestTimeout(BaseException):
    """Raised by the per-test alarm; a BaseException so that `except Exception` in the program cannot eat it."""


class Reporter:
    """Writes nonce-prefixed JSON lines to the report pipe with functions captured before the program runs."""

    def __init__(self, fd: int, nonce: str, _write=os.write, _dumps=json.dumps, _encode=str.encode) -> None:
        self._fd, self._prefix = fd, nonce + " "
        self._write, self._dumps, self._encode = _write, _dumps, _encode

    def emit(self, record: dict) -> None:
        data = self._encode(self._prefix + self._dumps(record, default=repr) + "\n")
        while data:
            data = data[self._write(self._fd, data) :]


def _fresh_stdio() -> None:
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8", errors="replace")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="replace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="replace")
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    sys.argv = ["solution.py"]


def _flush_and_exit(code: int, _exit=os._exit) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - no contextlib here: the program may have replaced it
            stream.flush()
        except BaseException:  # noqa: BLE001 - the program may have closed or replaced the stream
            pass
    _exit(code)


def _describe(exc: BaseException, filename: str = "solution.py") -> str:
    """One-line description of an exception, with the innermost line of user code when there is one."""
    lines = [f"{type(exc).__name__}: {exc}"[:500]]
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in (filename, "test.py")]
    if frames:
        last = frames[-1]
        lines.append(f"at {last.filename}:{last.lineno}: {(last.line or '').strip()}"[:300])
    return " ".join(lines)


def _exit_code_of(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def _new_namespace(name: str) -> dict[str, Any]:
    return {"__name__": name, "__builtins__": builtins, "__file__": "solution.py"}


def run_stdio(code: str, reporter: Reporter) -> None:
    """Run the program as a script; exit with its status. The parent judges stdout."""
    try:
        exec(compile(code, "solution.py", "exec"), _new_namespace("__main__"))
    except SystemExit as exc:
        _flush_and_exit(_exit_code_of(exc))
    except MemoryError:
        reporter.emit({"event": "memory_error"})
        print("MemoryError", file=sys.stderr)
        _flush_and_exit(1)
    except BaseException as exc:  # noqa: BLE001 - report whatever the program raised, like the interpreter does
        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)  # without this harness's frame
        _flush_and_exit(1)
    _flush_and_exit(0)


def _resolve(ns: dict, entry_point: str):
    """`f` or `Class.method` (LeetCode style: a fresh instance per test)."""
    if "." in entry_point:
        cls_name, method = entry_point.split(".", 1)
        return getattr(ns[cls_name](), method)
    return ns[entry_point]


def _checked(fn, strict: bool, _plain=is_plain_value):
    """Wrap the function under test so that it can only return plain builtin values."""
    if not strict:
        return fn

    def candidate(*args, **kwargs):
        value = fn(*args, **kwargs)
        if not _plain(value):
            raise TypeError(f"returned a {type(value).__name__}, not a plain builtin value")
        return value

    return candidate


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except BaseException:  # noqa: BLE001 - a broken __repr__ must not break the verdict
        return "<unrepresentable>"
    return text if len(text) <= MAX_REPR else text[:MAX_REPR] + "..."


def _run_one(test: dict, ns: dict, entry_point: str, strict: bool, _equal=strict_equal, _plain=is_plain_value):
    kind = test["kind"]
    if kind == "call":
        value = eval(compile(test["call"], "test.py", "eval"), dict(ns))
        ok = (_plain(value) or not strict) and _equal(value, test["expected"])
        return {"ok": bool(ok), "actual": _short_repr(value)}
    scope = dict(ns)
    if kind == "assert":
        if entry_point in ns:  # a method entry point (Class.method) is called through its class, unwrapped
            scope[entry_point] = _checked(ns[entry_point], strict)
        exec(compile(test["script"], "test.py", "exec"), scope)
    else:  # "check": a HumanEval-style `def check(candidate)` script
        exec(compile(test["script"], "test.py", "exec"), scope)
        scope["check"](_checked(_resolve(ns, entry_point), strict))
    return {"ok": True}


def _alarm(_signum, _frame):
    raise TestTimeout()


def run_tests(job: dict, reporter: Reporter, _setitimer=signal.setitimer, _signal=signal.signal) -> None:
    """Load the program, then run each call test in turn, reporting one verdict per test and then `done`."""
    ns = _new_namespace("solution")
    try:
        exec(compile(job["code"], "solution.py", "exec"), ns)
    except BaseException as exc:  # noqa: BLE001 - a program that fails to load fails every test
        reporter.emit({"event": "load_error", "error": _describe(exc)})
        reporter.emit({"event": "done"})
        _flush_and_exit(0)
    _signal(signal.SIGALRM, _alarm)
    for index, test in enumerate(job["tests"]):
        verdict = _guarded(test, ns, job, _setitimer)
        reporter.emit({"event": "test", "index": index, **verdict})
        if job.get("stop_on_failure") and not verdict["ok"]:
            break
    reporter.emit({"event": "done"})
    _flush_and_exit(0)


def _guarded(test: dict, ns: dict, job: dict, _setitimer) -> dict:
    _setitimer(signal.ITIMER_REAL, job["test_time_s"])
    try:
        return _run_one(test, ns, job["entry_point"], job.get("strict", True))
    except TestTimeout:
        return {"ok": False, "timeout": True, "error": f"timed out after {job['test_time_s']} s"}
    except MemoryError:
        return {"ok": False, "error": "MemoryError"}
    except BaseException as exc:  # noqa: BLE001 - SystemExit inside a test is a failure of that test
        return {"ok": False, "error": _describe(exc)}
    finally:
        _setitimer(signal.ITIMER_REAL, 0)


def _literal_repr(value: Any) -> str | None:
    """repr(value) when it is short and round-trips through ast.literal_eval, else None."""
    if isinstance(value, (list, tuple, dict, set, frozenset, str, bytes)) and len(value) > MAX_REPR:
        return None
    try:
        text = repr(value)
        if len(text) > MAX_REPR or ast.literal_eval(text) != value:
            return None
    except BaseException:  # noqa: BLE001 - anything that does not round-trip is simply not reported
        return None
    return text


def _snapshot(variables: dict, borrowed: tuple[str, ...] = ()) -> dict[str, str]:
    """Literal reprs of a scope's own variables (`borrowed` closure variables belong to the enclosing scope)."""
    out = {}
    for name, value in variables.items():
        if name.startswith("__") or name in borrowed:
            continue
        if (text := _literal_repr(value)) is not None:
            out[name] = text
    return out


def run_trace(job: dict, reporter: Reporter) -> None:
    """Run the program (and optionally a call) under settrace; report each scope's final variable values."""
    scopes: dict[str, dict[str, str]] = {}

    def local_tracer(frame, event, _arg):
        if event == "return":
            code = frame.f_code
            scopes[getattr(code, "co_qualname", code.co_name)] = _snapshot(frame.f_locals, code.co_freevars)
        return local_tracer

    def global_tracer(frame, _event, _arg):
        return local_tracer if frame.f_code.co_filename in ("solution.py", "call.py") else None

    ns = _new_namespace("__main__" if job.get("call") is None else "solution")
    error = None
    sys.settrace(global_tracer)
    try:
        exec(compile(job["code"], "solution.py", "exec"), ns)
        if job.get("call") is not None:
            eval(compile(job["call"], "call.py", "eval"), ns)
    except SystemExit:
        pass
    except BaseException as exc:  # noqa: BLE001 - a program that raises reports the exception, not values
        error = _describe(exc)
    finally:
        sys.settrace(None)
    scopes.pop("<module>", None)
    scopes["<module>"] = _snapshot({k: v for k, v in ns.items() if not callable(v) and type(v).__name__ != "module"})
    reporter.emit({"event": "trace", "scopes": {} if error else scopes, "error": error})
    reporter.emit({"event": "done"})
    _flush_and_exit(0)


def run_child(job: dict, report_fd: int) -> None:
    """Entry point in the child after confinement: never returns."""
    _fresh_stdio()
    reporter = Reporter(report_fd, job["nonce"])
    mode = job["mode"]
    if mode == "stdio":
        run_stdio(job["code"], reporter)
    elif mode == "tests":
        run_tests(job, reporter)
    elif mode == "trace":
        run_trace(job, reporter)
    _flush_and_exit(120)

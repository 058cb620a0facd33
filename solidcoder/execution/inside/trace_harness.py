"""The candidate's side of `trace` and `blocks` runs: the program run under a tracer, in its confined process.

`trace` records every variable's final value per scope (and the variables at a crash), `blocks` makes LDB's two
runs, the program as written and LDB's instrumented program, and reports the blocks LDB's tracer cuts, with the
variables before and after each (`basic_blocks.py`). Both write one record to the
report descriptor, which only this process holds while the program runs; the parent (`trace.py`, `blocks.py`)
decodes it as hostile bytes.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable
from types import CodeType
from typing import Any

from solidcoder.execution.inside.basic_blocks import (
    MAX_TRACE,
    ProbeRecorder,
    TraceRecorder,
    TracerFailure,
    WatchedStdout,
    called_name,
    instrument,
)
from solidcoder.execution.inside.harness import (
    MAX_REPR,
    REPORT_FD,
    compile_standalone,
    describe,
    exception_message,
    exception_text,
    flush_and_exit,
    new_namespace,
    program_frames,
    run_header,
)
from solidcoder.parsing import literal

_NO_CALL = object()  # the trace made no call (or the program exited before it), so nothing was returned

def _literal_repr(value: Any) -> str | None:
    """repr(value) when it is short and round-trips through ast.literal_eval, else None."""
    if isinstance(value, (list, tuple, dict, set, frozenset, str, bytes)) and len(value) > MAX_REPR:
        return None
    try:
        text = repr(value)
        if len(text) > MAX_REPR or literal(text) != value:
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


def _qualname(code) -> str:
    return getattr(code, "co_qualname", code.co_name)


def run_trace(job: dict) -> None:
    """Run the program (and optionally a call) under settrace; report each scope's final variable values, what the
    call returned, and, when it raised, the exception with its frames and the variables as they were at the crash."""
    scopes: dict[str, dict[str, str]] = {}
    ns = new_namespace("__main__" if job.get("call") is None else "solution")
    header_names = set(ns)
    exc, returned = _traced_run(job, ns, scopes, header_names)
    scopes.pop("<module>", None)
    scopes["<module>"] = _snapshot({k: v for k, v in ns.items() if not callable(v) and type(v).__name__ != "module"
                                    and k not in header_names})
    record = {"event": "trace", "scopes": scopes, "returned": returned, **_exception_record(exc, job)}
    os.write(REPORT_FD, json.dumps(record, default=repr).encode() + b"\n")
    flush_and_exit(0)


def _tracer(scopes: dict):
    """A settrace hook that records a program frame's variables in `scopes` each time the frame returns."""
    def local_tracer(frame, event, _arg):
        if event == "return":
            scopes[_qualname(frame.f_code)] = _snapshot(frame.f_locals, frame.f_code.co_freevars)
        return local_tracer

    def global_tracer(frame, _event, _arg):
        return local_tracer if frame.f_code.co_filename in ("solution.py", "call.py") else None
    return global_tracer


def _traced_run(job: dict, ns: dict, scopes: dict, header_names: set) -> tuple[BaseException | None, dict | None]:
    """Run under the tracer, filling `scopes`: (the exception that stopped the program, or None; the call's value).
    The header runs first, untraced; `header_names` gets the names it bound."""
    try:
        run_header(job, ns)
    except BaseException as exc:  # noqa: BLE001 - a header that fails is reported as the program's failure
        return exc, None
    header_names.update(ns)
    sys.settrace(_tracer(scopes))
    try:
        exec(compile_standalone(job["code"], "solution.py"), ns)
        call = job.get("call")
        value = _NO_CALL if call is None else eval(compile_standalone(call, "call.py", "eval"), ns)
    except SystemExit:
        value = _NO_CALL
    except BaseException as exc:  # noqa: BLE001 - a program that raises reports the exception and where it was
        sys.settrace(None)
        _crash_scopes(exc, scopes)
        return exc, None
    finally:
        sys.settrace(None)
    return None, None if value is _NO_CALL else _returned(value)


def _crash_scopes(exc: BaseException, scopes: dict) -> None:
    """Each function on the crash's traceback as it was when the exception left it; the innermost call wins."""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == "solution.py" and code.co_name != "<module>":
            scopes[_qualname(code)] = _snapshot(tb.tb_frame.f_locals, code.co_freevars)
        tb = tb.tb_next


def _returned(value: Any) -> dict:
    """The call's value: its type, its literal repr (`literal`), or a shortened plain repr when it has none."""
    literal = _literal_repr(value)
    try:
        text = repr(value)[:MAX_REPR] if literal is None else literal
    except BaseException:  # noqa: BLE001 - the program's own __repr__ may raise
        text = "<unrepresentable>"
    return {"type": type(value).__name__, "repr": text, "literal": literal is not None}


def _exception_record(exc: BaseException | None, job: dict) -> dict:
    """`error` (one line) and `exception` (type, message, program frames outermost first) of the trace record."""
    if exc is None:
        return {"error": None, "exception": None}
    sources = {"solution.py": job["code"], "call.py": job.get("call") or ""}
    frames = program_frames(exc, sources)[-50:]
    return {"error": describe(exc, sources), "exception": {"type": type(exc).__name__,
                                                           "message": exception_message(exc), "frames": frames}}


def run_blocks(job: dict) -> None:
    """LDB's two runs (`basic_blocks.py`): the program as written under its trace recorder, then LDB's instrumented
    program under its probe recorder, each after the header and followed by the call, if any, on the same stdin;
    report the blocks cut, the exception that stopped the probe run, if any, or why LDB's tracer gives no blocks."""
    entry, stdin = job.get("entry") or called_name(job.get("call")), sys.stdin.buffer.read()
    try:
        probed = instrument(job["code"], entry)
    except (TracerFailure, SyntaxError, ValueError) as failure:  # LDB's tracer gives no blocks
        return _report_blocks({"head": [], "tail": [], "count": 0, "tracer": exception_text(failure)[:500]})
    tracer = _trace_run(job, entry, stdin)
    probes = ProbeRecorder(probed.markers, tracer.lines)
    exc = None if probed.code is None else _recorded_run(job, probed.code, probes.global_trace, stdin)
    too_long = f"TraceTooLong: the trace ran past {MAX_TRACE} lines" if tracer.too_long else None
    _report_blocks({**probes.record(), **_exception_record(exc, job), "unprobed": probed.unprobed,
                    "tracer": too_long})


def _trace_run(job: dict, entry: str | None, stdin: bytes) -> TraceRecorder:
    """LDB's first run, the program as written, its stdout watched (LDB's `trace` listing shares it)."""
    tracer = TraceRecorder(entry, job["code"].count("\n") + 2)
    stdout, sys.stdout = sys.stdout, WatchedStdout(sys.stdout, tracer)
    try:
        _recorded_run(job, compile_standalone(job["code"], "solution.py"), tracer.global_trace, stdin)
    finally:
        sys.stdout = stdout
    return tracer


def _recorded_run(job: dict, code: CodeType, hook: Callable, stdin: bytes) -> BaseException | None:
    """Run the header (untraced), `code` and the call under the settrace `hook`, reading `stdin`: the exception that
    stopped the program, or None."""
    ns = new_namespace("__main__" if job.get("call") is None else "solution")
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="replace")
    try:
        run_header(job, ns)
        sys.settrace(hook)
        exec(code, ns)
        if job.get("call") is not None:
            eval(compile_standalone(job["call"], "call.py", "eval"), ns)
    except SystemExit:
        return None
    except BaseException as raised:  # noqa: BLE001 - a program that raises reports the exception
        return raised
    finally:
        sys.settrace(None)
    return None


def _report_blocks(record: dict) -> None:
    os.write(REPORT_FD, json.dumps({"event": "blocks", **record}, default=repr).encode() + b"\n")
    flush_and_exit(0)

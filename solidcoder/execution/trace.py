"""The variable tracer: the final value of each variable, per scope, from one real run in the sandbox.

A program runs once on one input (stdin, or a call made after loading it) under `sys.settrace`. For each scope
(the module, and every function by qualified name, its last call winning) we report each variable's value when
the scope was last left, restricted to values whose repr is at most a few hundred characters and round-trips
through `ast.literal_eval`; also what the program printed and what the call returned. A program that raises
reports the exception (`error` in one line, `exception` with the program's frames, named by the file name the
caller gives) and `ok` is False; its scopes then hold the variables as they were at the crash (for a function on
the traceback, its innermost call). This is the ground truth for the CodeRL+ execution-semantics task (which reads
`scopes` of `ok` results only) and the real-trace feedback of the debugger.

Everything the child reports is hostile data: it arrives on the run's report descriptor, never on stdout (so
nothing the program prints can forge a record), values travel as repr text parsed here by `ast.literal_eval`, and
a record of the wrong shape yields nothing rather than an error.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

from solidcoder.execution.executor import Executor
from solidcoder.execution.harness import source_line
from solidcoder.execution.sandbox import Limits

CALL_FILE = "<call>"  # how a frame of the traced call expression is named


@dataclass(frozen=True)
class TracedValue:
    """A value as the tracer saw it: its type name, its repr, and (when `literal`) the value itself."""

    type: str
    repr: str
    value: Any = None
    literal: bool = False

    @classmethod
    def of(cls, value: Any) -> TracedValue:
        return cls(type(value).__name__, repr(value), value, True)

    def to_json(self) -> dict:
        """{"type", "repr"}, and "value" when JSON holds the value exactly (no tuple, set, bytes or int key)."""
        data: dict[str, Any] = {"type": self.type, "repr": self.repr}
        if self.literal and _json_exact(self.value):
            data["value"] = self.value
        return data


@dataclass(frozen=True)
class TraceFrame:
    """One frame of the program's traceback: file (the caller's name for it), line, function, source line."""

    file: str
    line: int
    function: str
    source: str = ""

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}: {self.source}" if self.source else f"{self.file}:{self.line}"


@dataclass(frozen=True)
class TracedError:
    """The exception that stopped the program, with the program's frames, outermost first."""

    type: str
    message: str
    frames: list[TraceFrame] = field(default_factory=list)

    @property
    def headline(self) -> str:
        """`Type: message`, or `Type` when the message is empty."""
        return f"{self.type}: {self.message}" if self.message else self.type

    @property
    def summary(self) -> str:
        """`Type: message at file:line: source` (innermost frame), the one-line `TraceResult.error`."""
        return f"{self.headline} at {self.frames[-1].where}" if self.frames else self.headline

    def to_json(self) -> dict:
        frames = [{"file": f.file, "line": f.line, "function": f.function, "source": f.source} for f in self.frames]
        return {"type": self.type, "message": self.message, "traceback": frames}


@dataclass
class TraceResult:
    """Final values per scope (`"<module>"` and function qualnames), what was printed and returned, or the error
    that stopped the program (then `scopes` hold the values at the crash)."""

    scopes: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    status: str = "ok"
    stdout: str = ""
    returned: TracedValue | None = None
    exception: TracedError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status == "ok"

    def to_json(self) -> dict:
        """JSON-friendly form: each value as {"type", "repr", "value" when JSON holds it exactly}."""
        typed = {scope: {name: TracedValue.of(value).to_json() for name, value in values.items()}
                 for scope, values in self.scopes.items()}
        return {"status": self.status, "error": self.error,
                "exception": self.exception.to_json() if self.exception else None, "scopes": typed,
                "returned": self.returned.to_json() if self.returned else None, "stdout": self.stdout}


def trace_program(pool: Executor, code: str, stdin: str = "", call: str | None = None,
                  limits: Limits | None = None, filename: str = "solution.py", header: str = "") -> TraceResult:
    """Run `code` once (after the problem's `header`, untraced; feeding `stdin`, then evaluating `call` if given)
    and collect final variable values; `filename` names the program in the error and its frames."""
    result = pool.run({"mode": "trace", "code": code, "call": call, "header": header}, stdin, limits)
    # The harness writes its record last, after the program has run: a line the program wrote first loses.
    record = next((r for r in reversed(result.records) if r.get("event") == "trace"), None)
    if record is None:
        detail = result.detail or (result.stderr.strip().splitlines() or [""])[-1]
        return TraceResult(error=f"{result.status}: {detail}".rstrip(": "), status=result.status,
                           stdout=result.stdout)
    exception = _parse_exception(record.get("exception"), {"solution.py": (filename, code),
                                                           "call.py": (CALL_FILE, call or "")})
    error = exception.summary if exception else _text(record.get("error")) or None
    return TraceResult(scopes=_parse_scopes(record.get("scopes")), error=error, status=result.status,
                       stdout=result.stdout, returned=_parse_returned(record.get("returned")), exception=exception)


def _text(value: Any, limit: int = 500) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _parse_scopes(scopes: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(scopes, dict):
        return {}
    return {scope: _parse_values(values) for scope, values in scopes.items() if isinstance(values, dict)}


def _parse_values(values: dict[str, str]) -> dict[str, Any]:
    """literal_eval each repr in the parent: the child only ever sends text, never objects."""
    parsed = {}
    for name, text in values.items():
        try:
            parsed[name] = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return parsed


def _parse_returned(returned: Any) -> TracedValue | None:
    """The call's value: the parsed value when the child sent a literal repr, else only its type and repr."""
    if not isinstance(returned, dict) or not isinstance(returned.get("repr"), str):
        return None
    parsed = _parse_values({"value": returned["repr"]}) if returned.get("literal") is True else {}
    if "value" in parsed:
        return TracedValue.of(parsed["value"])
    return TracedValue(_text(returned.get("type"), 100), _text(returned["repr"]))


def _parse_exception(exception: Any, files: dict[str, tuple[str, str]]) -> TracedError | None:
    """The child's exception, its frames renamed by `files` (child's name: (shown name, source)), others dropped."""
    if not isinstance(exception, dict) or not _text(exception.get("type")):
        return None
    raw = exception.get("frames") if isinstance(exception.get("frames"), list) else []
    frames = [_parse_frame(f, files) for f in raw if isinstance(f, list) and len(f) == 4]
    return TracedError(_text(exception["type"], 100), _text(exception.get("message")), [f for f in frames if f])


def _parse_frame(frame: list, files: dict[str, tuple[str, str]]) -> TraceFrame | None:
    """Source lines come from the code we sent, not from the child."""
    file, line, function, _ = frame
    if file not in files or type(line) is not int:
        return None
    name, source = files[file]
    return TraceFrame(name, line, _text(function, 200), source_line(source, line))


def _json_exact(value: Any) -> bool:
    """True when json.loads(json.dumps(value)) gives back `value` with the same types throughout."""
    if value is None or type(value) in (bool, int, str):
        return True
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is list:
        return all(_json_exact(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _json_exact(v) for k, v in value.items())
    return False


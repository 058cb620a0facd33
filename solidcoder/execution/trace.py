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
a record of the wrong shape, or a value that cannot be rebuilt, yields nothing (the value is left out, or shown as
the child's repr text) rather than an error.

**A trace can be forged.** The tracer (`sys.settrace`) runs in the traced program's own process, as it must to see
its variables, so nothing it writes is out of the program's reach: a program can write its own record and exit
before the tracer writes (only the last record counts, so a record written first loses), patch the harness, or
change the tracer's data through frames. No secret or descriptor trick closes that inside one process, and the
sandbox refuses ptrace, so no other process can read the values. What the consumers do about it: a trace is
debugging feedback, where a forged one only misleads its own program's repair; the CodeRL+ alignment reward
(`solidcoder.train.alignment`) builds no task from a program that `forgery_route` finds a way to reach the tracer
in, so a forged value never becomes ground truth unless it gets past that static check (an allow-list of pure
imports and `sys` attributes; no names or attributes that start with `_`, no frame, code or generator internals,
no reflective or file-opening builtins). It is a filter of the known routes, not a proof; it also turns away
honest programs that use other imports or `self._private` attributes (they give no alignment task).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

from solidcoder.errors import UnreadableCode
from solidcoder.execution.executor import Executor
from solidcoder.execution.inside.harness import source_line
from solidcoder.execution.sandbox import ExecResult, Limits
from solidcoder.parsing import literal, parse_python

CALL_FILE = "<call>"  # how a frame of the traced call expression is named
# `forgery_route`: imports that give a program no handle on the process (their public attributes reach no unsafe
# module), what it may read from `sys`, and the names and attribute prefixes that reach the interpreter's insides.
PURE_IMPORTS = frozenset({"math", "cmath", "collections", "itertools", "functools", "heapq", "bisect", "string",
                          "re", "operator", "fractions", "decimal", "statistics", "random", "typing", "copy",
                          "array", "datetime", "numbers", "__future__"})
SYS_ATTRIBUTES = frozenset({"stdin", "stdout", "setrecursionlimit", "getrecursionlimit", "maxsize", "exit",
                            "set_int_max_str_digits", "float_info", "maxunicode", "version_info", "argv"})
REFLECTIVE = frozenset({"getattr", "setattr", "delattr", "vars", "globals", "locals", "eval", "exec", "compile",
                        "open", "breakpoint", "help", "__import__", "memoryview"})
UNSAFE_ATTRIBUTES = frozenset({"sys", "types", "inspect", "builtins", "bltns", "warnings", "contextlib", "copyreg",
                               "abc", "keyword", "stdlib_re", "buffer", "raw", "detach", "modules", "attrgetter",
                               "methodcaller", "get_field", "settrace", "setprofile"})
INTERNALS = ("_", "gi_", "cr_", "ag_", "f_", "tb_", "co_")  # private names, generator/frame/traceback/code parts
SAFE_DUNDERS = frozenset({"__init__", "__name__", "__eq__", "__lt__", "__hash__", "__repr__",
                          "__str__", "__len__", "__iter__", "__next__", "__getitem__", "__contains__"})


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
    return read_trace(result, code, call, filename)


async def atrace_program(pool: Executor, code: str, stdin: str = "", call: str | None = None,
                         limits: Limits | None = None, filename: str = "solution.py", header: str = "") -> TraceResult:
    """`trace_program` on the event loop: the run awaited on the executor (`Executor.arun`)."""
    result = await pool.arun({"mode": "trace", "code": code, "call": call, "header": header}, stdin, limits)
    return read_trace(result, code, call, filename)


def read_trace(result: ExecResult, code: str, call: str | None, filename: str) -> TraceResult:
    """The trace a run of `code` reported (read as hostile data), or what ended the run when it reported none."""
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


def forgery_route(code: str) -> str | None:
    """How `code` could reach the tracer that runs in its process (and so forge its trace), or None when this
    static check finds no way: see the module docstring. Code that does not parse has no route (it does not run)."""
    try:
        tree = parse_python(code)
    except UnreadableCode as exc:  # Python may still run it: unchecked is not safe
        return f"the program cannot be checked: {exc.msg}"
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        route = _route(node)
        if route:
            return f"line {getattr(node, 'lineno', 0)}: {route}"
    return None


def _route(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):  # `sys` only by its own name, so that each of its attributes is checked
        names = [a.name for a in node.names if a.name.split(".")[0] not in PURE_IMPORTS | {"sys"}
                 or a.name == "sys" and a.asname not in (None, "sys")]
        return f"imports {names[0]}" if names else None
    if isinstance(node, ast.ImportFrom):
        return _from_route(node)
    if isinstance(node, ast.Attribute) and _unsafe_name(node.attr, UNSAFE_ATTRIBUTES):
        return f"reads attribute {node.attr}"
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sys":
        return None if node.attr in SYS_ATTRIBUTES else f"reads sys.{node.attr}"
    if isinstance(node, ast.MatchClass):  # `case C(attr=x)` reads attributes by name
        names = [a for a in node.kwd_attrs if _unsafe_name(a, UNSAFE_ATTRIBUTES)]
        return f"reads attribute {names[0]} in a pattern" if names else None
    if isinstance(node, ast.Name) and (node.id in REFLECTIVE or node.id.startswith("__") and node.id not in
                                       SAFE_DUNDERS):
        return f"uses {node.id}"
    return None


def _from_route(node: ast.ImportFrom) -> str | None:
    module = (node.module or "").split(".")[0]
    if node.level or module not in PURE_IMPORTS | {"sys"}:
        return f"imports from {node.module or '.'}"
    allowed = SYS_ATTRIBUTES if module == "sys" else None
    names = [a.name for a in node.names if _unsafe_name(a.name, UNSAFE_ATTRIBUTES) or a.name == "*" and allowed
             or allowed is not None and a.name not in allowed]
    return f"imports {names[0]} from {module}" if names else None


def _unsafe_name(name: str, unsafe: frozenset[str]) -> bool:
    return name in unsafe or name.startswith(INTERNALS) and name not in SAFE_DUNDERS


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
            parsed[name] = literal(text)
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


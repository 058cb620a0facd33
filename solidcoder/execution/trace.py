"""The variable tracer: the final value of each variable, per scope, from one real run in the sandbox.

A program runs once on one input (stdin, or a call made after loading it) under `sys.settrace`. For each scope
(the module, and every function by qualified name, its last call winning) we report each variable's value when
the scope was last left, restricted to values whose repr is at most a few hundred characters and round-trips
through `ast.literal_eval`. A program that raises reports the exception instead of values. This is the ground
truth for the CodeRL+ execution-semantics task and the real-trace feedback of the debugger.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from solidcoder.execution.executor import Executor
from solidcoder.execution.sandbox import Limits


@dataclass
class TraceResult:
    """Final values per scope (`"<module>"` and function qualnames), or the error that stopped the program."""

    scopes: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    status: str = "ok"
    stdout: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None and self.status == "ok"

    def to_json(self) -> dict:
        """JSON-friendly form: values as their repr, so tuples, sets and bytes survive."""
        reprs = {scope: {name: repr(value) for name, value in values.items()} for scope, values in self.scopes.items()}
        return {"status": self.status, "error": self.error, "scopes": reprs}


def trace_program(pool: Executor, code: str, stdin: str = "", call: str | None = None,
                  limits: Limits | None = None) -> TraceResult:
    """Run `code` once (feeding `stdin`, then evaluating `call` if given) and collect final variable values."""
    job = {"mode": "trace", "code": code, "call": call}
    result = pool.run(job, stdin, limits)
    record = next((r for r in result.records if r.get("event") == "trace"), None)
    if record is None:
        detail = result.detail or (result.stderr.strip().splitlines() or [""])[-1]
        return TraceResult(error=f"{result.status}: {detail}".rstrip(": "), status=result.status,
                           stdout=result.stdout)
    scopes = {scope: _parse_values(values) for scope, values in record["scopes"].items()}
    return TraceResult(scopes=scopes, error=record["error"], status=result.status, stdout=result.stdout)


def _parse_values(values: dict[str, str]) -> dict[str, Any]:
    """literal_eval each repr in the parent: the child only ever sends text, never objects."""
    parsed = {}
    for name, text in values.items():
        try:
            parsed[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
    return parsed

"""Real traces for debugging (the `trace_feedback` refinement): the tracer's final values on a failing test.

For a failing test the candidate is run once more under the tracer on that input (stdin, or the test's call to
the entry point), so the debug prompt shows the real final value of every variable, per scope, instead of a trace
the model imagines.
"""

from __future__ import annotations

from solidcoder.execution.executor import Executor
from solidcoder.execution.sandbox import Limits
from solidcoder.execution.trace import TraceResult, trace_program
from solidcoder.problem import Problem
from solidcoder.stages.live import Outcome

MAX_TRACE_CHARS = 3000


def trace_failure(pool: Executor, problem: Problem, code: str, failure: Outcome) -> TraceResult | None:
    """The tracer's run of `code` on a failing test's input; None when a call test has no single call to trace."""
    if problem.kind == "call" and failure.call is None:
        return None
    stdin = failure.stdin if problem.kind == "stdio" else ""
    limits = Limits(wall_s=problem.time_limit_s, memory_mb=problem.memory_limit_mb)
    return trace_program(pool, code, stdin, failure.call, limits)


def format_trace(result: TraceResult) -> str:
    if result.error:
        return f"the program raised: {result.error}"
    lines = []
    for scope, values in result.scopes.items():
        lines.append(f"{scope}:")
        lines += [f"  {name} = {value!r}" for name, value in values.items()]
    text = "\n".join(lines) or "(no variables recorded)"
    return text if len(text) <= MAX_TRACE_CHARS else text[:MAX_TRACE_CHARS] + "\n..."

"""Code fix and debug from real traces: the failing input, expected vs actual, and the tracer's final values.

For a failing test the candidate is run once more under the tracer on that input (stdin, or the test's call to
the entry point), so the debug prompt shows the real final value of every variable, per scope, instead of a trace
the model imagines. With `--no-live` the failure comes from a mental trace and the model's reasoning stands in.
"""

from __future__ import annotations

from solidcoder.execution.executor import Executor
from solidcoder.execution.sandbox import Limits
from solidcoder.execution.trace import TraceResult, trace_program
from solidcoder.problem import Problem
from solidcoder.stages.base import StageContext, extract_code
from solidcoder.stages.live import Outcome

MAX_TRACE_CHARS = 3000


class Debugger:
    """Proposes a fixed program for one failing test."""

    def __init__(self, ctx: StageContext, pool: Executor):
        self.ctx, self.pool = ctx, pool

    def real_trace(self, code: str, failure: Outcome) -> str:
        """The tracer's final values for `code` on the failing input, as text for the prompt."""
        result = trace_failure(self.pool, self.ctx.problem, code, failure)
        if result is None:
            return "(no single call to trace in this test)"
        self.ctx.trajectory.add("execution", "trace", test=failure.id, **result.to_json())
        return format_trace(result)

    def fix(self, code: str, failure: Outcome, trace: str | None = None) -> str:
        trace = self.real_trace(code, failure) if trace is None else trace
        reply = self.ctx.ask("debug", "debugger", "stages/debug", problem=self.ctx.statement, code=code,
                             language=self.ctx.common["language"], failing_input=failure.input,
                             expected_output=failure.expected, actual_output=_actual(failure), trace=trace)
        return extract_code(reply) or code


def trace_failure(pool: Executor, problem: Problem, code: str, failure: Outcome) -> TraceResult | None:
    """The tracer's run of `code` on a failing test's input; None when a call test has no single call to trace."""
    if problem.kind == "call" and failure.call is None:
        return None
    stdin = failure.stdin if problem.kind == "stdio" else ""
    limits = Limits(wall_s=problem.time_limit_s, memory_mb=problem.memory_limit_mb)
    return trace_program(pool, code, stdin, failure.call, limits)


def _actual(failure: Outcome) -> str:
    if failure.detail and failure.detail not in failure.actual:
        return f"{failure.actual}\n({failure.status}: {failure.detail})".strip()
    return failure.actual or failure.status


def format_trace(result: TraceResult) -> str:
    if result.error:
        return f"the program raised: {result.error}"
    lines = []
    for scope, values in result.scopes.items():
        lines.append(f"{scope}:")
        lines += [f"  {name} = {value!r}" for name, value in values.items()]
    text = "\n".join(lines) or "(no variables recorded)"
    return text if len(text) <= MAX_TRACE_CHARS else text[:MAX_TRACE_CHARS] + "\n..."

"""Real traces for debugging (the `trace_feedback` refinement): what the program really did on a failing test.

For a failing test the candidate is run once more under a tracer on that input (stdin, or the test's call to the
entry point), so the debug prompt shows a real trace instead of one the model imagines: the final value of every
variable, per scope (`trace_feedback`, `trace_feedback=values`), or LDB's executed basic blocks with the variables
before and after each, at most 10 blocks (`trace_feedback=blocks`, `execution/blocks.py`).
"""

from __future__ import annotations

from solidcoder.execution.blocks import atrace_blocks
from solidcoder.execution.build import not_compiling, run_limits
from solidcoder.execution.executor import Executor
from solidcoder.execution.trace import TraceResult, atrace_program
from solidcoder.problem import Problem
from solidcoder.stages.live import Evaluation, Outcome

MAX_TRACE_CHARS = 3000


async def trace_failure(pool: Executor, problem: Problem, code: str, failure: Outcome) -> TraceResult | None:
    """The tracer's run of `code` on a failing test's input; None when a call test has no single call to trace."""
    if problem.kind == "call" and failure.call is None:
        return None
    stdin = failure.stdin if problem.kind == "stdio" else ""
    limits = run_limits(problem)
    return await atrace_program(pool, code, stdin, failure.call, limits, header=problem.header)


def format_trace(result: TraceResult) -> str:
    if result.error:
        return f"the program raised: {result.error}"
    lines = []
    for scope, values in result.scopes.items():
        lines.append(f"{scope}:")
        lines += [f"  {name} = {value!r}" for name, value in values.items()]
    text = "\n".join(lines) or "(no variables recorded)"
    return text if len(text) <= MAX_TRACE_CHARS else text[:MAX_TRACE_CHARS] + "\n..."


async def block_trace_failure(pool: Executor, problem: Problem, code: str, failure: Outcome) -> str:
    """`trace_feedback=blocks`: LDB's block listing of `code` on a failing test's input ("" when a call test has no
    single call to trace); a run that recorded no block says what ended it."""
    if problem.kind == "call" and failure.call is None:
        return ""
    stdin = failure.stdin if problem.kind == "stdio" else ""
    limits = run_limits(problem)
    trace = await atrace_blocks(pool, code, stdin, failure.call, limits, header=problem.header)
    listing = trace.prompt_text(code).strip("\n")
    error = f"the program raised: {trace.error}" if trace.error else ""
    text = "\n".join(part for part in (listing, error) if part)
    if listing:  # the debug template's heading speaks of final values; this line says what follows instead
        text = "(the executed basic blocks, each between the variables before and after it)\n" + text
    return text if len(text) <= MAX_TRACE_CHARS else text[:MAX_TRACE_CHARS] + "\n..."


async def trace_text(form: str, pool: Executor, problem: Problem, code: str, failure: Outcome) -> str:
    """The debug prompt's trace of `code` on a failing test: LDB's blocks, or the tracer's final values (the run
    awaited on the executor)."""
    if form == "blocks":
        return await block_trace_failure(pool, problem, code, failure)
    result = await trace_failure(pool, problem, code, failure)
    return format_trace(result) if result is not None else ""


def failure_report(evaluation: Evaluation, limit: int = 3) -> str:
    """The failing tests as the debug prompt shows them; a program that does not build, the compiler's words once."""
    failures = evaluation.failures()
    if unbuilt := not_compiling(failures):
        return unbuilt
    lines = [evaluation.summary()]
    for outcome in failures[:limit]:
        lines.append(f"- Test: {outcome.input[:400]}\n  Expected: {outcome.expected[:300]}\n"
                     f"  Got: {outcome.actual[:300]}\n  Verdict: {outcome.status} {outcome.detail[:300]}")
    return "\n".join(lines)

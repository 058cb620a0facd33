"""The two kinds of bench task: code generation (a strategy, judged on hidden tests) and trace inference.

Code: the strategy sees the problem and may run code on the public tests; the final code is judged on the hidden
tests. A sandbox failure in either is an `InfrastructureError`, not a wrong answer. Trace inference (CodeRL+
evaluation): the model predicts `f(input)` or a local variable's final value; the truth comes from the tracer's
real run, and the answer scores when its literal equals it with the same type (Exact@1).

`TaskRecipe` is the one factory of both: the driver builds a local run's task from it, and every Ray node its
own (bench/distributed.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from solidcoder.bench.runner import InfrastructureError
from solidcoder.core.calls import RecordingModel
from solidcoder.core.context import SolveContext
from solidcoder.core.executions import UnitExecutions
from solidcoder.datasets.cruxeval import TraceItem, parameters
from solidcoder.execution.executor import Executor
from solidcoder.execution.judge import JudgeReport
from solidcoder.execution.sandbox import Limits
from solidcoder.execution.trace import atrace_program
from solidcoder.parsing import literal
from solidcoder.problem import Problem
from solidcoder.prompting import PromptLibrary
from solidcoder.stages.live import LiveExecutor, SuiteTest
from solidcoder.store import ResultRow
from solidcoder.strategies.base import Attempt, Strategy

ANSWER_NAME = "_answer_"
TRACE_TEMPLATES = ("tasks/trace_output", "tasks/trace_variable")  # what a trace-inference run renders


@dataclass(frozen=True)
class TaskRecipe:
    """What every unit of a run runs, as the options resolve it (bench/plan.py): a strategy's code tasks, or trace
    tasks when `strategy` is None; sent as it is to every Ray node, where `build` makes the node's own task."""

    strategy: str | None  # the strategy's name (with any options); None: trace inference
    temperature: float | None = None
    max_tokens: int | None = None  # completion tokens per model call

    def build(self, items: list, prompts: PromptLibrary, pool: Executor,
              strategy: Strategy | None = None) -> CodeTask | TraceTask:
        """The task over `items`; `strategy` is the one the driver made from this recipe's name and checked, else (on
        a Ray node) it is made here."""
        from solidcoder.strategies import make_strategy

        if self.strategy is None:
            return TraceTask(items, prompts, pool, self.temperature, self.max_tokens)
        return CodeTask(items, strategy or make_strategy(self.strategy), prompts, pool, self.temperature,
                        self.max_tokens)


class CodeTask:
    """Solve with `strategy`, judge on hidden tests."""

    def __init__(self, problems: list[Problem], strategy: Strategy, prompts: PromptLibrary, pool: Executor,
                 temperature: float | None = None, max_tokens: int | None = None):
        self.items, self.strategy, self.prompts, self.pool = problems, strategy, prompts, pool
        self.temperature, self.max_tokens = temperature, max_tokens

    async def run_one(self, problem: Problem, model: RecordingModel) -> ResultRow:
        ctx = SolveContext(model=model, prompts=self.prompts, pool=self.pool, temperature=self.temperature,
                           max_tokens=self.max_tokens, executions=model.executions)
        attempt = await self.strategy.solve(problem, ctx)
        judge = model.executions.judge(self.pool, "hidden")  # records the scoring as every other execution
        report = await judge.ajudge(problem, attempt.code, problem.hidden_tests)  # SandboxFailure: not scored
        first = report.failures()[0] if report.failures() else None
        kept, alarms = await self.false_alarms(problem, attempt, report, model.executions)
        alternatives = await self.alternatives(problem, attempt, judge, report)
        return ResultRow(passed=report.passed, tests_passed=report.pass_count, tests_total=report.total,
                         first_failure=first.detail[:300] if first else "", first_status=first and first.status,
                         code=attempt.code, notes=attempt.notes(), kept_tests=kept,
                         false_alarms=alarms, alternatives_passed=alternatives, language=problem.language)

    async def alternatives(self, problem: Problem, attempt: Attempt, judge,
                           report: JudgeReport) -> dict[str, bool] | None:
        """`alternatives_passed`: each of the attempt's other answers judged on the hidden tests (each distinct
        program once; the answer's own verdict reused); None when it gave none."""
        if not attempt.alternatives:
            return None
        verdicts = {attempt.code: report.passed}
        for code in attempt.alternatives.values():
            if code not in verdicts:
                verdicts[code] = (await judge.ajudge(problem, code, problem.hidden_tests)).passed
        return {name: verdicts[code] for name, code in attempt.alternatives.items()}

    async def false_alarms(self, problem: Problem, attempt: Attempt, report: JudgeReport,
                           executions: UnitExecutions | None = None) -> tuple[int | None, int | None]:
        """Oracle precision: (kept tests, false alarms): of the tests the strategy kept, how many reject this answer
        although the hidden tests accept it (a false alarm). Counted only on answers the hidden tests accept (else
        None); both None without kept tests."""
        if not attempt.kept:
            return None, None
        if not report.passed:
            return len(attempt.kept), None
        tests = [SuiteTest(f"kept-{i}", test) for i, test in enumerate(attempt.kept)]
        judge = executions.judge(self.pool, "kept") if executions is not None else None
        evaluation = await LiveExecutor(self.pool, problem, judge, executions, "kept").evaluate(attempt.code, tests)
        return len(attempt.kept), len(evaluation.failures())


class TraceTask:
    """Predict a value of a real run; Exact@1 against the tracer."""

    def __init__(self, items: list[TraceItem], prompts: PromptLibrary, pool: Executor,
                 temperature: float | None = None, max_tokens: int | None = None):
        self.items, self.prompts, self.pool = items, prompts, pool
        self.temperature, self.max_tokens = temperature, max_tokens

    async def truth(self, item: TraceItem) -> tuple[str, Any]:
        """(variable asked about or "", its true value) from one traced run."""
        code = f"{item.code}\n\n{ANSWER_NAME} = {item.call}\n"
        result = await atrace_program(self.pool, code, limits=Limits(wall_s=10.0))
        if not result.ok:
            raise InfrastructureError(f"tracer could not establish the truth: {result.error}")
        if item.task == "output":
            return "", result.scopes["<module>"][ANSWER_NAME]
        local = result.scopes.get("f", {})
        params = parameters(item.code)
        names = sorted(n for n in local if n not in params) or sorted(local)
        if not names:
            raise InfrastructureError("f has no local variable with a literal final value")
        return names[-1], local[names[-1]]

    async def run_one(self, item: TraceItem, model: RecordingModel) -> ResultRow:
        variable, expected = await self.truth(item)
        template = "tasks/trace_output" if item.task == "output" else "tasks/trace_variable"
        extra = {"variable": variable} if variable else {}
        messages = self.prompts.messages(template, code=item.code, input=item.input, **extra)
        reply = await model.acomplete(messages, temperature=self.temperature, max_tokens=self.max_tokens)
        answer = parse_answer(reply.text)
        return ResultRow(passed=same_value(answer, expected), variable=variable, expected=repr(expected),
                         predicted="<no literal answer>" if answer is _NO_ANSWER else repr(answer))


_NO_ANSWER = object()


def parse_answer(text: str) -> Any:
    """The literal the reply ends on: after its last `ANSWER:`, else its last line, else (as replies often end
    "... i.e. `f(x) == 3`") the right side of the last line's last `==`, else its last `backticked` span."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    tagged = [line.split("ANSWER:", 1)[1] for line in lines if "ANSWER:" in line]
    last = (tagged or lines or [""])[-1]
    candidates = [last]
    if not tagged:
        candidates += [last.rsplit("==", 1)[1]] if "==" in last else []
        candidates += re.findall(r"`([^`]+)`", last)[-1:]
    for candidate in candidates:
        quoted = candidate.strip().strip("`").strip()
        for variant in (quoted, quoted.rstrip(" .`").lstrip(" `")):  # "5." stays a float unless it does not parse
            try:
                return literal(variant)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
    return _NO_ANSWER


def same_value(a: Any, b: Any) -> bool:
    """Exact: equal and of the same type, all the way down (so 1 is not True and (1,) is not [1])."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return a == b

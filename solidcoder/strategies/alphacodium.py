"""AlphaCodium (Ridnik, Kredo and Friedman 2024, "Code Generation with AlphaCodium: From Prompt Engineering to Flow
Engineering"), read from its code: Codium-ai/AlphaCodium@eb7577dbe998ae7e55696264591ac3c5dde75638,
`alpha_codium/gen/coding_competitor.py: CodeContestsCompetitor.run` and the stages it runs with the shipped
`alpha_codium/settings/configuration.toml`; the prompts are its `settings/code_contests_*.toml`, adapted to our
variables (`prompts/strategies/alphacodium_*.j2`).

The flow, stage by stage:
1. `run_self_reflect`: the problem in bullet points and an explanation of each public test's output (YAML).
2. `run_generate_possible_solutions`: up to `solutions` = 3 possible solutions (`max_num_of_possible_solutions`),
   the first whose name says "brute" dropped (`remove_bruce_force_solutions = true`); test explanations shown.
3. `run_choose_best_solution`: one ranking call; its whole YAML answer is the algorithm the code follows.
4. `run_generate_ai_tests`: `ai_tests` = 6 input/output tests (`number_of_ai_tests`); the public tests are put
   before them (in reverse order, as the anchor's `insert(0, ...)` leaves them) and after them
   (`add_public_tests_to_ai_tests = true`).
5. `run_initial_code_generation`: code from the chosen solution; while it fails a public test, regenerate, up to
   `initial_attempts` = 8 more times (`max_attempts`): attempt 1 again from the chosen solution, attempt k > 1 from
   possible solution k mod 3. If none passes, the candidate closest to the expected outputs is kept (the anchor's
   `calc_distance_between_results`, `alphacodium_io.distance`: finite for a crash or a timeout, infinite when a
   program printed nothing); when every distance is infinite, the last one.
6. `run_evaluate_public_tests`: each public test in turn; on failure a two-call fix (`single_stage_fix = true`:
   analyze the failure, then write the fixed code), at most `fixes_per_test` = 3 tries per test (one more with a
   single public test) and `public_calls` = 4 fixes in all (`max_allowed_calls`). A test that passes joins the
   "test anchors"; after each fix the anchors run again and, if one fails, the code reverts to what it was when
   this test's turn began. An empty output reverts without a call.
7. `run_evaluate_all_ai_tests`: each test of step 4's list; on failure one analyze-and-fix call (YAML with
   `fixed_code`), at most `ai_calls` = 4 in all (`ai_tests.max_allowed_calls`), except that the public tests at the
   end are always tried. The fix is kept only when it passes that test and every anchor; the test then joins them.

Replies are free YAML, as the anchor asks for them: no grammar or JSON schema goes with any request, and each
stage's reply is read as the anchor's code reads that stage (`alphacodium_io.READERS`). A stage whose reply cannot be
read is asked again, up to `retries` = 3 tries (each stage's `counter_retry`). Every call may write up to
`max_tokens` = 2,000 tokens (the anchor's `ai_handler`), whatever the run's `--max-tokens`.

A failing test reaches the fix prompts as the anchor's `run_tests` shows it: test input, expected output, code
output. A call test's code output is the value the call returned. An assert script (HumanEval's and MBPP's public
tests) is shown by the assert it failed on: the call it checks as the input, the value it compares that call with
as the expected output (a literal as its repr; `True` for `assert f(x)`, `False` for `assert not f(x)`; for any
other condition, the condition), and as the code output the value the program returns when the sandbox runs that
call again. The distance of step 5 compares those same values.

Calls: the flow takes up to 25 calls plus one per public test when no reply needs asking again (4 to plan, 9 to
write code, 8 for public-test fixes, 4 for AI-test fixes, and one for each public test at the end of step 7), so
`min_calls` = 30. A run's `--max-calls` is a cap the user gave and is never exceeded; when it is below `min_calls`
and the flow is cut by it, the reason the flow stopped says so ("--max-calls 20 is below AlphaCodium's min_calls =
30 ..."). AlphaCodium rows want `--max-calls 30` or more, or none. A cap reached in step 5 answers with the closest
candidate so far. `Attempt.stages` lists each call once its reply is in (a call stopped by the cap is not listed);
`fixes` counts the fixes whose reply held code.

Departures:
- Sampling is the run's (`--temperature`, as for every strategy here), not the anchor's per-prompt temperatures
  (0.2 and 0.3) and frequency penalty 0.1.
- 2,000 tokens is the anchor's cap on its TGI (deepseek) path; its OpenAI path sends none (the model's own limit).
- Prompts show the whole problem text (with its examples) where the anchor cuts the examples off
  (`description_short`), and the public tests as our examples; a call problem is asked for a function and AI
  tests as a call of it with a literal expected value (the anchor knows only stdin programs). An AI test that
  never calls the entry point is dropped; an input that is no call is read as the arguments of one (`1, 2`,
  `a=1, b=2`).
- A solution the code cycles to, and the test explanations, are shown as YAML dumped from the read reply (the
  anchor renders a Python dict's repr, and cuts the explanations out of the reply's own text).
- The ranking, AI-test and failure-analysis prompts carry a one-line system message (the anchor's own line from
  its possible-solutions prompt) where the anchor's is empty: every prompt here has a system and a user message.
- When a stage's reply cannot be read after 3 tries the anchor abandons the problem (an empty answer, or, in step
  7, the code so far); here the flow goes on without it: the reflection's text as given, no possible solutions (the
  code then always follows the chosen one), the chosen solution's raw reply, no AI tests, or no fix.
- Code replies are read by the project's `extract_code` (the anchor cuts a leading ```python and trailing
  backticks); a fix whose reply holds no code leaves the code as it was, where the anchor would run the reply.
- A test whose program crashed is shown with its input and expected output, the error as its code output (the
  anchor's `run_tests` shows a single crashing test by its traceback alone). An assert whose call uses a name the
  script set before it cannot be run alone: its code output is then the judge's message.
- Step 7's exception for a crashing program (`'sandbox error: ' in error_str`) never fires in the anchor (only
  its logger writes that text), so a fix that fails its test is always reverted; so it is here.
- The answer is verified when it passes every test of step 4's list (public and AI tests) in a last run; the
  anchor verifies nothing and has no cap on calls. `--max-calls` ends the flow with the code so far.
- The distance's own departures are in `alphacodium_io.distance`, the reader's in `alphacodium_io`'s docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, TypeVar

from solidcoder.core.calls import RecordingModel, UnitModel
from solidcoder.core.context import SolveContext, ask
from solidcoder.errors import ProblemBudgetExceeded
from solidcoder.problem import Problem, TestCase
from solidcoder.prompting import problem_variables
from solidcoder.stages.base import describe_test, extract_code
from solidcoder.stages.live import Evaluation, LiveExecutor, Outcome, SuiteTest
from solidcoder.strategies.alphacodium_io import (
    READERS,
    Asserted,
    Reflection,
    Solution,
    as_text,
    distance,
    empty_output,
    entry_name,
    error_text,
    example_test,
    failing_assert,
    read_analysis,
    read_examples,
    read_fixed_code,
    read_reflection,
    read_reply,
    read_solutions,
    shown,
)
from solidcoder.strategies.base import Attempt, NoLoop

T = TypeVar("T")
STAGES = ("reflect", "possible_solutions", "choose_best", "ai_tests", "solve", "analyze_failure", "fix_solution",
          "analyze_and_fix")


@dataclass
class AlphaCodiumSettings:
    """The anchor's caps (`configuration.toml`), its token cap per call, and the calls its flow may take."""

    solutions: int = 3  # possible_solutions.max_num_of_possible_solutions
    ai_tests: int = 6  # generate_ai_tests.number_of_ai_tests
    initial_attempts: int = 8  # initial_code_generation.max_attempts (regenerations after the first code)
    fixes_per_test: int = 3  # public_tests.max_fixes_per_test (one more with a single public test)
    public_calls: int = 4  # public_tests.max_allowed_calls (fixes over all public tests)
    ai_calls: int = 4  # ai_tests.max_allowed_calls
    retries: int = 3  # every stage's counter_retry: tries per stage whose reply does not parse
    max_tokens: int | None = 2000  # ai_handler's max_tokens for every call, whatever --max-tokens; None: the run's
    min_calls: int = 30  # calls the flow may take; a lower --max-calls is named when it stops the flow


class AlphaCodium(NoLoop):
    name = "alphacodium"
    templates = tuple(f"strategies/alphacodium_{stage}" for stage in STAGES)
    python_only = "AlphaCodium's prompts, as its code has them, ask for Python"

    def __init__(self, settings: AlphaCodiumSettings | None = None):
        self.config = settings or AlphaCodiumSettings()

    def settings(self) -> dict[str, Any]:
        return asdict(self.config)

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt:
        tokens = ctx.max_tokens if self.config.max_tokens is None else self.config.max_tokens
        flow = _Flow(problem, replace(ctx, max_tokens=tokens), self.config)
        try:
            await flow.run()
        except ProblemBudgetExceeded as exc:  # --max-calls: answer with the code so far, if there is one
            stopped = self.budget_reason(exc, ctx.model)
            if not flow.code:
                raise stopped from exc
            return await flow.attempt(stopped)
        return await flow.attempt(None)

    def budget_reason(self, exc: ProblemBudgetExceeded, model: UnitModel) -> ProblemBudgetExceeded:
        """`exc`, saying so when the unit's call cap was below the flow's `min_calls`."""
        cap = model.max_calls if isinstance(model, RecordingModel) else None
        if cap is None or cap >= self.config.min_calls:
            return exc
        return ProblemBudgetExceeded(f"{exc} (--max-calls {cap} is below AlphaCodium's min_calls = "
                                     f"{self.config.min_calls}: give --max-calls {self.config.min_calls} or more)")


@dataclass
class _Flow:
    """One problem's run: the current code, the test anchors and what each stage did."""

    problem: Problem
    ctx: SolveContext
    config: AlphaCodiumSettings
    code: str = ""
    anchors: dict[str, SuiteTest] = field(default_factory=dict)
    stages: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=lambda: {"fixes": 0, "reverted": 0})

    def __post_init__(self) -> None:
        self.live = LiveExecutor(self.ctx.pool, self.problem, self.ctx.judge, self.ctx.executions)
        self.public = [SuiteTest(f"public-{i}", t) for i, t in enumerate(self.problem.public_tests)]
        self.suite = [*reversed(self.public), *self.public]  # step 4 puts the AI tests in the middle
        self.variables = {**problem_variables(self.problem), "tests": _examples_text(self.problem)}

    async def run(self) -> None:
        reflection = await self.reflect()
        self.variables |= {"self_reflection": reflection.bullets, "tests_explanations": reflection.explanations}
        solutions = await self.possible_solutions()
        chosen = await self.choose_best(solutions)
        await self.ai_tests()
        await self.initial_code(chosen, solutions)
        await self.iterate_public()
        await self.iterate_ai()

    async def attempt(self, stopped: ProblemBudgetExceeded | None) -> Attempt:
        """The answer, verified on every test of step 4's list."""
        final = await self.live.evaluate(self.code, list({test.id: test for test in self.suite}.values()))
        self.figures |= {"anchors": len(self.anchors), "final_passed": len(final.passed_ids)}
        return Attempt(code=self.code, verified=final.verified, stopped=stopped, stages=self.stages,
                       figures=self.figures)

    async def structured(self, stage: str, read: Callable[[dict], T | None], **variables: str) -> tuple[T | None, str]:
        """Ask a YAML stage until its reply reads (`retries` tries); the value (None if never) and the last reply."""
        reply = ""
        for _ in range(self.config.retries):
            reply = await self.call(stage, **variables)
            data = read_reply(reply, READERS[stage])
            value = read(data) if data is not None else None
            if value is not None:
                return value, reply
        return None, reply

    async def call(self, stage: str, **variables: str) -> str:
        """One call of a stage's template; the stage is recorded once the reply is in."""
        reply = await ask(self.ctx, f"strategies/alphacodium_{stage}", **self.variables, **variables)
        self.stages.append(stage)
        return reply

    async def reflect(self) -> Reflection:
        count = len(self.public)
        found, reply = await self.structured("reflect", lambda d: read_reflection(d, count), test_count=str(count))
        return found or Reflection(reply.strip(), "")

    async def possible_solutions(self) -> list[Solution]:
        found, _ = await self.structured("possible_solutions", read_solutions, max_solutions=str(self.config.solutions))
        self.figures["solutions"] = len(found or [])
        return found or []

    async def choose_best(self, solutions: list[Solution]) -> str:
        """The chosen solution: the ranking call's whole YAML answer, as the anchor hands it to the code stage."""
        text = "\n\n".join(s.text for s in solutions)
        found, reply = await self.structured("choose_best", lambda d: d if "name" in d else None, solutions=text,
                                             solution_count=str(len(solutions)))
        return as_text(found) if found is not None else reply.strip()

    async def ai_tests(self) -> None:
        found, _ = await self.structured("ai_tests", read_examples, ai_test_count=str(self.config.ai_tests))
        cases = [case for case in (example_test(e, self.problem) for e in found or []) if case is not None]
        generated = [SuiteTest(f"ai-{i}", case) for i, case in enumerate(cases)]
        self.suite = [*reversed(self.public), *generated, *self.public]
        self.figures["ai_tests"] = len(generated)

    async def initial_code(self, chosen: str, solutions: list[Solution]) -> None:
        """Regenerate while the public tests fail, cycling through the solutions; else keep the closest."""
        candidates: list[tuple[float, str]] = []
        for attempt in range(self.config.initial_attempts + 1):
            algorithm = solutions[attempt % len(solutions)].text if attempt > 1 and solutions else chosen
            code = extract_code(await self.call("solve", solution=algorithm))
            evaluation = await self.evaluate(code, self.public)
            self.figures["initial_attempts"] = attempt + 1
            if evaluation.green:
                self.code = code
                return
            candidates.append((distance(evaluation), code))
            self.code = _closest(candidates)  # the answer so far, should --max-calls stop the flow here

    async def iterate_public(self) -> None:
        """Each public test in turn, fixed by analysis and then code, under the per-test and overall caps."""
        per_test = self.config.fixes_per_test + (len(self.public) == 1)
        fixes = 0
        for test in self.public:
            fixes = await self.public_test(test, per_test, fixes)

    async def public_test(self, test: SuiteTest, per_test: int, fixes: int) -> int:
        start, tries = self.code, 0
        while True:
            outcome = await self.run_one(test)
            if outcome.passed:
                self.anchors[test.id] = test
                return fixes
            tries += 1
            if fixes >= self.config.public_calls or tries > per_test:
                return fixes
            if empty_output(outcome):
                self.code = start
                continue
            self.code = await self.analyze_then_fix(outcome) or self.code
            fixes += 1
            if not await self.anchors_hold():
                self.revert(start)

    async def analyze_then_fix(self, outcome: Outcome) -> str:
        """The anchor's two-call fix: analyze the failure (YAML), then write the fixed code."""
        error = error_text(outcome)
        analysis, _ = await self.structured("analyze_failure", read_analysis, code=self.code, error=error)
        if analysis is None:
            return ""
        code = extract_code(await self.call("fix_solution", code=self.code, error=error,
                                           what_went_wrong=analysis.what_went_wrong, fixed_flow=analysis.fixed_flow))
        self.figures["fixes"] += bool(code)
        return code

    async def iterate_ai(self) -> None:
        """Every test of step 4's list; a fix is kept only if it passes the test and every anchor."""
        calls, protected = 0, len(self.suite) - len(self.public)
        for index, test in enumerate(self.suite):
            outcome = await self.run_one(test)
            if outcome.passed:
                self.anchors[test.id] = test
            elif calls < self.config.ai_calls or index >= protected:
                calls += 1
                await self.fix_ai_test(test, outcome)

    async def fix_ai_test(self, test: SuiteTest, outcome: Outcome) -> None:
        start = self.code
        fixed, _ = await self.structured("analyze_and_fix", read_fixed_code, code=self.code,
                                         error=error_text(outcome))
        self.figures["fixes"] += bool(fixed)
        self.code = fixed or self.code
        if not (await self.run_one(test)).passed or not await self.anchors_hold():
            self.revert(start)
        else:
            self.anchors[test.id] = test

    async def run_one(self, test: SuiteTest) -> Outcome:
        return (await self.evaluate(self.code, [test])).outcomes[0]

    async def evaluate(self, code: str, tests: list[SuiteTest]) -> Evaluation:
        """`code` run on `tests`, each failed assert script shown as the anchor shows a test (`shown`)."""
        evaluation = await self.live.evaluate(code, tests)
        asserted = self.asserted(evaluation, tests)
        checked = {o.id for o in evaluation.outcomes if o.status == "fail"}  # the call returned; its assert failed
        returned = await self.returned(code, {i: a for i, a in asserted.items() if i in checked})
        evaluation.outcomes = [shown(o, asserted.get(o.id), returned.get(o.id)) for o in evaluation.outcomes]
        return evaluation

    def asserted(self, evaluation: Evaluation, tests: list[SuiteTest]) -> dict[str, Asserted]:
        """The failing assert of each failed script test, by test id."""
        scripts = {t.id: t.test.script for t in tests if isinstance(t.test, TestCase) and t.test.script}
        found = {o.id: failing_assert(scripts[o.id], o.detail, entry_name(self.problem))
                 for o in evaluation.failures() if o.id in scripts}
        return {test_id: value for test_id, value in found.items() if value is not None}

    async def returned(self, code: str, asserted: dict[str, Asserted]) -> dict[str, str]:
        """The value (its repr) each asserted expression gives when `code` runs it again, by test id."""
        if not asserted:
            return {}
        calls = [SuiteTest(i, TestCase(kind="call", call=a.expression)) for i, a in asserted.items()]
        rerun = await self.live.evaluate(code, calls)
        return {o.id: o.actual for o in rerun.outcomes if o.status in ("pass", "fail")}

    async def anchors_hold(self) -> bool:
        """Whether the current code still passes every test it passed before (the anchor's `passed_tests`)."""
        if not self.anchors:
            return True
        return (await self.live.evaluate(self.code, list(self.anchors.values()))).green

    def revert(self, code: str) -> None:
        if code != self.code:
            self.figures["reverted"] += 1
        self.code = code


def _closest(candidates: list[tuple[float, str]]) -> str:
    """The first candidate of least distance, or the last one when every distance is infinite (the anchor)."""
    best = min(candidates, key=lambda candidate: candidate[0])
    return best[1] if best[0] != float("inf") else candidates[-1][1]


def _examples_text(problem: Problem) -> str:
    """The public tests as input/output pairs, for the prompts."""
    samples = [describe_test(test) for test in problem.public_tests]
    return "\n".join(f"Example {i}:\ninput:\n{s.input}\noutput:\n{s.output}" for i, s in enumerate(samples, 1))

"""SolidCoder as the paper's Algorithm 1 (10kH/SolidCoder, paper/latex/acl_latex.tex), with its ablations.

For each of p plans: shift-left planning names exactly three edge cases and plans around them [S]; the plan is
checked by hand simulation and refined once if the check fails; one program is written from it; intermediate
simulation traces the program on a sample and revises it when the trace shows a logic error [I]. Then up to `a`
assumption-breaking rounds: a red-team property test, checked by the judge prompt [O], is executed on the
program [L]; a failing test is kept [D] and the program is replaced by the fix, unconditionally; a passing test
ends the rounds. The program is accepted when it passes the public tests and every kept test; otherwise up to `d`
debug rounds, each followed by the same check. The last program is returned. Calls run at temperature 0 and top-p 0.95.

Refinements, the project's own, each a named option that is off in the paper's setting (docs/pipeline.md):
`candidates=K` programs per plan (the extras at `candidate_temperature`; the one passing most public tests is
kept), `monotonic` fixes (kept only when they lose no passed test and pass one more), `best` (answer with the best
program seen, not the last), `oracle_gating` (break assumptions only once the public tests pass), `trace_feedback`
(the debug prompt shows the tracer's real variable values on the first failing test; `trace_feedback=blocks`, LDB's
executed basic blocks with the values before and after each instead), `structured_oracle` (the
red-team test as JSON fields), `evidence` (checks of the test by parsing and execution before the judge prompt),
`evidence_judge` (those checks, when they can check the test, stand in for the judge prompt), `crash_fallback` (a
structured call test whose property the evidence rejects, or whose property is no Python expression, keeps its
call, crash-only), `compact_oracle` (the structured red team from the project's shorter template), `stage_caps` (the
completion caps of `STAGE_TOKENS` for the stages whose replies are not programs), `strip_self_tests` (a call
program's own top-level self-test is dropped from every program the loop reads, stages/sanitize.py).
Per-role models apply when the model is a roster (`--model ROLE=MODEL`). Name the options after a colon:
`solidcoder:candidates=3,monotonic`.
`solidcoder+` is the preset of the refinements the project recommends (`PRESETS`); it takes ablations and further
options the same way (`solidcoder+_no_oracle`, `solidcoder+:candidates=5`). The settings, presets, stage caps and
roles live in `strategies/paper_settings.py`.

Ablations, one component each, as the paper's Table 3 defines them: without S the plan is written without the
edge cases; without I the program is not simulated; without O red-team tests are not judged and only a crash
fails them; without L the model's own trace of the test decides instead of an execution; without D failing tests
are fixed but not kept. A red-team reply with no well-formed test, or one the judge rejects, ends its round with
nothing to execute, and the next round tries again.
"""

from __future__ import annotations

import re
from dataclasses import asdict, replace
from typing import Any

from solidcoder.core.context import SolveContext, ask
from solidcoder.core.keys import without_later_defaults
from solidcoder.errors import BadInput, ProblemBudgetExceeded
from solidcoder.languages import language
from solidcoder.problem import Problem
from solidcoder.prompting import TEMPLATE_VARIABLES, problem_variables
from solidcoder.stages.base import extract_code, first_sample, last_verdict
from solidcoder.stages.debug import failure_report, trace_text
from solidcoder.stages.evidence import checkable, contradiction, wrong_argument_types
from solidcoder.stages.live import Evaluation, GeneratedTest, LiveExecutor, SuiteTest, kept_test
from solidcoder.stages.oracle import (
    ORACLE_SCHEMAS,
    input_only,
    parameters,
    parse_structured_test,
    parse_test,
    structured_call,
)
from solidcoder.stages.sanitize import strip_self_tests
from solidcoder.store import OracleRounds
from solidcoder.strategies.base import Attempt
from solidcoder.strategies.paper_settings import (
    COMPACT_ORACLE,
    COMPONENTS,
    LATER_REFINEMENTS,
    PRESETS,
    ROLES,
    STAGE_TOKENS,
    PaperSettings,
    parse_refinements,
)


class Algorithm1:
    """`--strategy solidcoder` (and `solidcoder_no_<component>`): the loop above, against a `SolveContext`.

    `seed_code`, when set, is the first plan's program instead of a written one (`solve --prerank`)."""

    requires = ()
    takes_seed = True

    @property
    def python_only(self) -> str:
        """Real variable traces are Python's tracer's: `trace_feedback` asked for by name is Python only; a preset's
        (`solidcoder+`) is left out for another language, whose debug prompt shows the failing tests' runs."""
        return "trace_feedback traces Python programs only" if "trace_feedback" in self.name.partition(":")[2] else ""

    def __init__(self, name: str = "solidcoder", ablation: str | None = None, seed_code: str | None = None,
                 **settings: Any):
        self.name, self.seed_code = name, seed_code
        self.config = replace(PaperSettings(), **settings, **({ablation: False} if ablation else {}))

    def with_settings(self, seed_code: str | None = None, **changes: Any) -> Algorithm1:
        """A copy with some `PaperSettings` changed (solve's --plans, --no-oracle ...) and an optional seed."""
        copy = Algorithm1(self.name, seed_code=seed_code or self.seed_code)
        copy.config = replace(self.config, **changes)
        return copy

    def with_loop(self, changes: dict[str, Any]) -> Algorithm1:
        return self.with_settings(**changes)

    def seeded(self, code: str) -> Algorithm1:
        return self.with_settings(seed_code=code)

    @property
    def templates(self) -> tuple[str, ...]:
        """The templates hashed into the configuration key: the paper's, and a refinement's own when it is on."""
        return (*(t for t in TEMPLATE_VARIABLES if t.startswith("paper/")),
                *((COMPACT_ORACLE,) if self.config.compact_oracle else ()))

    def settings(self) -> dict[str, Any]:
        """The configuration key's part: every `PaperSettings` value, less `LATER_REFINEMENTS` while off."""
        return {"algorithm": "paper", **without_later_defaults(asdict(self.config), LATER_REFINEMENTS)}

    def loop(self, problem: Problem, ctx: SolveContext) -> Loop:
        """A run on `problem`, its calls at the settings' temperature (unless the run sets one) and top-p."""
        temperature = self.config.temperature if ctx.temperature is None else ctx.temperature
        return Loop(problem, replace(ctx, temperature=temperature, top_p=self.config.top_p), self.config,
                    self.seed_code)

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt:
        if ctx.pool is None:
            raise ValueError("the solidcoder strategy needs the sandbox pool in its SolveContext")
        loop = self.loop(problem, ctx)
        stopped = None
        try:
            await loop.run()
        except ProblemBudgetExceeded as exc:  # the per-problem --max-calls cap: the last program (`best`: the best)
            stopped = exc
            if self.config.best and loop.history:
                await loop.choose_best()
        return loop.attempt(stopped, accepted=loop.accepted)


class Loop:
    """One problem's run of Algorithm 1: the stages in the order they ran, and the tests kept."""

    def __init__(self, problem: Problem, ctx: SolveContext, config: PaperSettings, seed: str | None = None) -> None:
        self.problem, self.ctx, self.config, self.seed = problem, ctx, config, seed
        self.live = LiveExecutor(ctx.pool, problem, ctx.judge, ctx.executions)
        self.common = problem_variables(problem)
        self.public = [SuiteTest(f"public-{i}", t) for i, t in enumerate(problem.public_tests)]
        self.kept: list[SuiteTest] = []
        self.stages: list[str] = []
        self.accepted = self.verified = False  # passes_all; and with at least one test run (Evaluation.verified)
        self.code = ""  # the last S
        self.history: list[str] = []  # every S the run produced, in order (for `best`)
        self.rounds: list[str] = []  # each oracle round's outcome: malformed, rejected, executed (passed or failed)
        self.rejections: list[str] = []  # the judge's reason for each rejected test, in order

    async def ask(self, stage: str, template: str, temperature: float | None = None, schema: dict | None = None,
                  **variables: str) -> str:
        self.stages.append(stage)
        model = self.ctx.model.for_role(ROLES[stage])
        ctx = replace(self.ctx, model=model, temperature=self.ctx.temperature if temperature is None else temperature,
                      max_tokens=self.max_tokens(stage))
        return await ask(ctx, template if "/" in template else f"paper/{template}", schema=schema, **variables)

    def program(self, reply: str) -> str:
        """The program in a reply; with `strip_self_tests`, a call program without its own top-level self-test."""
        code = extract_code(reply, self.problem.language)
        return strip_self_tests(code) if self.config.strip_self_tests and self.problem.kind == "call" else code

    def max_tokens(self, stage: str) -> int | None:
        """The run's completion cap, or with `stage_caps` the stage's own when that is lower."""
        cap = STAGE_TOKENS.get(stage) if self.config.stage_caps else None
        return min(filter(None, (cap, self.ctx.max_tokens)), default=None)

    async def run(self) -> None:
        await self.loop()
        if self.config.best and not self.accepted:
            await self.choose_best()

    def start_from(self, code: str, kept: list[SuiteTest]) -> None:
        """Start (or go on) from `code` with `kept` accumulated as failing tests already found (routing's tiers)."""
        self.code = code
        self.kept.extend(test for test in kept if test not in self.kept)

    def take(self, code: str) -> None:
        self.code = code
        self.history.append(code)

    def saw(self, programs: list[str]) -> None:
        """Programs written outside the loop (routing's tiers 0 and 1), in the order written, are candidates for
        `best` too; the program in hand stays."""
        self.history.extend(programs)

    def note_round(self, outcome: str | None, rejection: str | None = None) -> None:
        """An oracle round run outside the loop (routing's tiers): its outcome (None: no round was asked for, as for
        a shared test run again) and, when the test was rejected, why."""
        self.rounds.extend([outcome] if outcome else [])
        self.rejections.extend([rejection] if rejection else [])

    async def choose_best(self) -> None:
        """`best`: of every distinct S, the one passing most of T ∪ accumulated now (the latest among equals)."""
        self.stages.append("choose_best")
        scored = []
        for order, code in enumerate(dict.fromkeys(reversed(self.history))):
            evaluation = await self.evaluate(code, self.public + self.kept)
            scored.append(((evaluation.green, len(evaluation.passed_ids), -order), code, evaluation.verified))
        _, self.code, self.verified = max(scored)

    async def loop(self) -> None:
        for _ in range(self.config.p):
            plan = await self.plan()
            self.take(await self.write(plan))
            self.take(await self.intermediate_simulation(plan, self.code))
            if not self.config.oracle_gating or (await self.evaluate(self.code, self.public)).green:
                await self.break_assumptions()
            if await self.passes_all(self.code):
                return
            for _ in range(self.config.d):
                self.take(await self.kept_if_better(self.code, await self.debug(plan, self.code), []))
                if await self.passes_all(self.code):
                    return

    async def plan(self) -> str:
        """[S] three edge cases and a plan (or a plan alone); a plan that fails its hand check is refined once."""
        variables = {k: self.common[k] for k in ("problem", "language", "io_mode")}
        plan = await self.ask("plan", "shift_left" if self.config.shift_left else "plan", **variables)
        check = await self.ask("plan_check", "plan_check", problem=self.common["problem"], plan=plan)
        if last_verdict(check, "CORRECT", "INCORRECT") != "CORRECT":
            plan = await self.ask("plan_refine", "plan_refine", problem=self.common["problem"], plan=plan)
        return plan

    async def write(self, plan: str) -> str:
        """One program from the plan; with `candidates=K`, the one of K that passes most public tests."""
        seed, self.seed = self.seed, None  # a preranked program stands in for the first plan's first one
        codes = [seed or self.program(await self.ask("code", "code", **self.common, plan=plan))]
        self.code = codes[0]  # the program in hand, should a call cap stop the run before the others are written
        for _ in range(1, self.config.candidates):
            reply = await self.ask("code", "code", self.config.candidate_temperature, **self.common, plan=plan)
            codes.append(self.program(reply))
        if len(codes) == 1:
            return codes[0]
        passed = [len((await self.evaluate(code, self.public)).passed_ids) for code in codes]
        return codes[passed.index(max(passed))]

    async def intermediate_simulation(self, plan: str, code: str) -> str:
        """[I] trace the program on a sample; a reply with code is the revision, NO CHANGE keeps it."""
        sample = first_sample(self.problem)
        if not self.config.simulation or sample is None:
            return code
        reply = await self.ask("simulate", "simulate", problem=self.common["problem"], plan=plan, code=code,
                               sample_input=sample.input, sample_output=sample.output)
        revised = self.program(reply) if last_verdict(reply, "NO CHANGE") is None else ""
        return revised or code

    async def break_assumptions(self) -> None:
        """Up to `a` rounds: a failing test is kept [D] and the fix replaces the code; a passing one ends them."""
        for round_no in range(1, self.config.a + 1):
            test = await self.oracle_test(self.code, round_no)
            if test is None:
                continue
            failure = await self.failure_of(self.code, test)
            how = "executed" if self.config.live else "traced"
            self.rounds.append(f"{how}, failed" if failure else f"{how}, passed")
            if failure is None:
                break
            if self.config.defensive:
                test = kept_test(test)
                self.kept.append(test)
            self.take(await self.kept_if_better(self.code, await self.fix(self.code, test, failure), [test]))

    async def oracle_test(self, code: str, round_no: int, template: str | None = None) -> SuiteTest | None:
        """[O] a red-team test, kept only if the judge calls it VALID; without O, a crash-only test. `template` asks
        for the structured test from another template (routing's `oracle=shared`)."""
        test = await self.red_team(code, round_no, template)
        if test is None:
            self.rounds.append("malformed")
            return None
        if not self.config.oracle:
            return self.suite_test(replace(test, crash_only=True))
        if test.crash_only:  # `crash_fallback`: a structured reply whose property is no Python expression
            return self.rejected(test, "evidence: the property is not a Python boolean expression")
        if self.config.evidence or self.config.evidence_judge:
            if reason := await self.contradiction(test):
                return self.rejected(test, f"evidence: {reason}")
            if self.config.evidence_judge and checkable(test, self.problem):  # the evidence stands in for the judge
                return self.suite_test(test)
        return await self.judged(test)

    def suite_test(self, test: GeneratedTest) -> SuiteTest:
        return SuiteTest(f"generated-{len(self.stages)}", test)

    async def judged(self, test: GeneratedTest) -> SuiteTest | None:
        """[O] the paper's judge prompt: the test if it says VALID; else the round is rejected, with its reason."""
        verdict = await self.ask("judge", "judge", problem=self.common["problem"], test=test.text(),
                                 io_mode=self.common["io_mode"])
        if last_verdict(verdict, "VALID", "INVALID") == "VALID":
            return self.suite_test(test)
        self.rounds.append("rejected")
        self.rejections.append(_reason(verdict))
        return None

    def rejected(self, test: GeneratedTest, reason: str) -> SuiteTest | None:
        """The round's rejection by the evidence, with the reason; with `crash_fallback`, a structured call test whose
        arguments have the examples' types keeps its call as a crash-only test instead (the judge is not asked: it
        would judge a property that is gone)."""
        call = test if test.crash_only else input_only(test)
        fallback = call if self.config.crash_fallback and not wrong_argument_types(test, self.problem) else None
        self.rejections.append(reason + ("; its call is kept, crash-only" if fallback else ""))
        if fallback is None:
            self.rounds.append("rejected")
            return None
        return self.suite_test(fallback)

    async def contradiction(self, test: GeneratedTest) -> str | None:
        """`evidence`: why parsing and execution reject the test before the judge is asked (stages/evidence.py)."""
        self.stages.append("evidence")
        return await contradiction(test, self.problem, self.live)

    async def red_team(self, code: str, round_no: int, template: str | None = None) -> GeneratedTest | None:
        """The red-team test as free text (the paper), or as JSON fields (`structured_oracle`, or `template`)."""
        kind, entry = self.problem.kind, self.problem.entry_point or ""
        variables = {"problem": self.common["problem"], "code": code, "io_mode": self.common["io_mode"],
                     "entry_point": self.common["entry_point"]}
        if template is None and not (self.config.structured_oracle or self.config.compact_oracle):
            return parse_test(await self.ask("red_team", "red_team", **variables), kind, entry, f"oracle-{round_no}")
        template = template or (COMPACT_ORACLE if self.config.compact_oracle else "red_team_structured")
        reply = await self.ask("red_team", template, schema=ORACLE_SCHEMAS[kind], **variables)
        names = parameters(self.problem.starter_code + "\n" + self.problem.statement, entry) if entry else ()
        test = parse_structured_test(reply, kind, entry, f"oracle-{round_no}", names)
        fallback = structured_call(reply, entry, f"oracle-{round_no}", names) if self.config.crash_fallback else None
        return test or fallback

    async def failure_of(self, code: str, test: SuiteTest) -> str | None:
        """[L] what went wrong when the test ran on the code, or None when it passed; without L, a mental trace."""
        if not self.config.live:
            reply = await self.ask("mental_execute", "mental_execute", problem=self.common["problem"], code=code,
                                   test=test.test.text(), io_mode=self.common["io_mode"])
            failed = last_verdict(reply, "PASSED", "FAILED") != "PASSED"
            return "by the model's trace, a check in the test fails" if failed else None
        self.stages.append("execute")
        evaluation = await self.evaluate(code, [test])
        failures = evaluation.failures()
        return f"{failures[0].status}: {failures[0].detail or failures[0].actual}"[:1000] if failures else None

    async def fix(self, code: str, test: SuiteTest, failure: str) -> str:
        reply = await self.ask("fix", "fix", problem=self.common["problem"], code=code, test=test.test.text(),
                               failure=failure, language=self.common["language"])
        return self.program(reply) or code

    async def debug(self, plan: str, code: str) -> str:
        evaluation = await self.evaluate(code, self.public + self.kept)
        trace = await self.trace(code, evaluation) if self.config.trace_feedback else ""
        reply = await self.ask("debug", "debug", problem=self.common["problem"], plan=plan, code=code,
                               language=self.common["language"], test_report=failure_report(evaluation), trace=trace)
        return self.program(reply) or code

    async def trace(self, code: str, evaluation: Evaluation) -> str:
        """`trace_feedback`: the tracer's final values of `code` on the first failing test's input, or with
        `trace_feedback=blocks` its executed basic blocks (`stages/debug.py`)."""
        failures = evaluation.failures()
        if not failures or language(self.problem.language).native:
            return ""
        self.stages.append("trace")
        form, failure = "blocks" if self.config.trace_feedback == "blocks" else "values", failures[0]
        text = await trace_text(form, self.ctx.pool, self.problem, code, failure)
        self.ctx.traced(code, form, failure.call or failure.stdin or failure.input, text)
        return text

    async def kept_if_better(self, old: str, new: str, extra: list[SuiteTest]) -> str:
        """`monotonic`: the new program only if it loses no passed test and passes one more; else it replaces S."""
        if not self.config.monotonic or new == old:
            return new
        self.stages.append("compare")
        tests = self.public + self.kept + [t for t in extra if t not in self.kept]
        before, after = await self.evaluate(old, tests), await self.evaluate(new, tests)
        better = set(before.passed_ids) <= set(after.passed_ids) and len(after.passed_ids) > len(before.passed_ids)
        return new if better else old

    async def passes_all(self, code: str) -> bool:
        """T ∪ accumulated: the public tests and every kept test, executed."""
        self.stages.append("passes_all")
        evaluation = await self.evaluate(code, self.public + self.kept)
        self.accepted, self.verified = evaluation.green, evaluation.verified
        return self.accepted

    def attempt(self, stopped: ProblemBudgetExceeded | None = None, **figures: Any) -> Attempt:
        """The run's answer: the program in hand, the tests kept, the oracle rounds and the caller's `figures`."""
        return Attempt(code=self.code, verified=self.verified, stopped=stopped, stages=self.stages,
                       kept=[t.test for t in self.kept], figures=figures,
                       oracle=OracleRounds(tuple(self.rounds), tuple(self.rejections)))

    async def evaluate(self, code: str, tests: list[SuiteTest]) -> Evaluation:
        return await self.live.evaluate(code, tests)


def _reason(verdict: str, limit: int = 300) -> str:
    """The judge's reply without its verdict word: why it rejected the test ("INVALID. The input ..." keeps the
    sentence after the verdict)."""
    text = re.sub(r"\bINVALID\b[.:]?", " ", verdict)
    return " ".join(text.split())[:limit] or "(no reason given)"


def make_algorithm1(name: str = "solidcoder") -> Algorithm1:
    """`solidcoder` or `solidcoder+` (a preset), `_no_<component>` for an ablation, refinements after a colon:
    `solidcoder:candidates=3,best`, `solidcoder+_no_oracle`."""
    base, _, options = name.partition(":")
    preset = "solidcoder+" if base.startswith("solidcoder+") else "solidcoder"
    part = base.removeprefix(preset).removeprefix("_no_") or None
    if part is not None and part not in COMPONENTS:
        known = ", ".join(f"{preset}_no_{c}" for c in COMPONENTS)
        raise BadInput(f"unknown SolidCoder ablation {name!r}; known: {known}")
    return Algorithm1(name, part, **{**PRESETS[preset], **parse_refinements(options)})

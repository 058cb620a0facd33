"""`solidcoder-routed`: the cheap path first, the full loop only for the problems that need it.

The SolidCoder paper names difficulty-aware routing as future work; this is the project's version of it.

Routed v2 (2026-12-03) is the default: tiers 0 and 1 without an oracle round, tier 2 routed around. Each choice
cites the development sets' rows (HumanEval 0-39, MBPP 0-39); the settings' comments name them.

* Tier 0: one program written directly (Direct's prompt in the model maker's format since 2026-12-08, `prompt=plain`
  for the project's own prompt before, stages/prompt_formats.py; at the full loop's temperature, 0 unless the run
  sets one), run on the public tests. Accepted when they all passed and at least one ran. With `oracle=shared` (routed
  v1's setting) or `oracle=program`, an oracle round runs too (a judged red-team test, executed) and must pass: the
  test is written from the problem alone and shared with tier 1, or written against the program.
* Tier 0's guard (`guard=tests`, off by default): before tier 0's program is accepted, the model writes tests from
  the problem alone (CodeT's generated tests, one call; `prompts/refinements/generated_tests.j2`) and the program
  must pass at least half of those it can run; otherwise tier 1 runs. The same tests serve tier 1's `agreement`
  selector, without a second call.
* Tier 1: `samples` programs at `temperature` (the choices of one request, so the prompt is billed once), pruned
  by the cheap verifiers (syntax, lint, public tests) and clustered by behaviour on the public inputs; the largest
  cluster's program goes through the same check (with an oracle: the shared test, asked for now if tier 0 never
  needed it, or a round of its own; with `evidence`, an oracle test that every surviving sample fails is rejected
  as suspect).
* Tiers 0 and 1 read programs as the full loop does (with `strip_self_tests`, as `solidcoder+` has it, a call
  program's own top-level self-test is dropped before anything runs it).
* Tier 2, with `max_tier=2` (off by default: it solved 1 of the 18 development-set problems it ran on): the full loop
  (Algorithm 1 with `full`'s settings, `solidcoder+` by default), seeded with every failing test the earlier tiers
  found (kept as accumulated tests), under its own call budget (`full_calls`, 7 by default: one plan of
  `solidcoder+`; `benchmarks/tier2_budget.py`); at the budget its latest program is the answer. On a strong model
  the full loop is the paper's claim: `solidcoder-routed:max_tier=2,oracle=shared` is routed v1.

* The answer: the first program a tier accepts; when none is accepted (or a cap stops the run), the best program
  any tier produced, by the public tests and the failing tests found that it passes, the latest among equals.

The attempt's `Route` (store.py) says where a problem ended and what each tier cost (calls, tokens, seconds): a
row's `notes.tier` and `notes.tiers`.

Options follow a colon, as Algorithm 1's refinements do: `solidcoder-routed:samples=3,max_tier=1,full=solidcoder`
(`samples` tier 1's count, `temperature` its sampling temperature, `max_tier` the last tier tried, `full` the
Algorithm 1 preset or ablation tier 2 runs, `full_calls` its call budget, `none` for the run's cap alone, `oracle`
`none`, `shared` or `program`, `prompt` `qwen` or `plain`, `selector` `majority`, `agreement` or `orm` (with
`orm` a trained ORM's directory), `guard` `none` or `tests`, `trace_feedback`
tier 2's debug trace, `values` or `blocks`). With `max_tier` below 2 a problem no tier accepted is answered with the
best program its tiers produced, unverified.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from solidcoder.core.calls import UnitModel
from solidcoder.core.context import SolveContext, ask
from solidcoder.core.keys import without_later_defaults
from solidcoder.errors import BadInput, ProblemBudgetExceeded
from solidcoder.problem import Problem
from solidcoder.prompting import problem_variables
from solidcoder.requirements import Requirement
from solidcoder.stages.live import SuiteTest
from solidcoder.stages.prompt_formats import PLAIN, PromptFormat, prompt_format
from solidcoder.store import Route, TierCost
from solidcoder.strategies.algorithm1 import Algorithm1, Loop, make_algorithm1
from solidcoder.strategies.base import Attempt
from solidcoder.strategies.selection import (
    GENERATED_TESTS,
    REQUIRES,
    SELECTORS,
    GeneratedTests,
    Selector,
    sample_and_select,
)
from solidcoder.wording import counted

SHARED_ORACLE = "refinements/red_team_shared"
ORACLES = ("program", "shared", "none")
# Options added after runs were recorded: name -> the value at which each is left out of the settings (what the
# strategy did before it existed), so those runs keep their configuration key (core/keys.py). A new field of
# `RoutedSettings` goes here, or every recorded key of this strategy changes (tests/test_keys.py checks recorded ones).
LATER_SETTINGS = {"max_tier": 2, "full_calls": None, "oracle": "program", "selector": "majority",
                  "trace_feedback": None, "guard": "none", "orm": None, "prompt": "plain"}
GUARDS = ("none", "tests")


@dataclass
class RoutedSettings:
    samples: int = 5
    temperature: float = 0.8
    full: str = "solidcoder+"
    # 1 since 2026-12-03 (routed v2): tier 2 ran on 5 problems of HumanEval 0-39 and solved none, and on 13 of MBPP
    # 0-39 for 1, at 42 % and 68 % of the routed tokens (benchmarks/results/humaneval40_qwen05b_routed_onerequest/,
    # mbpp40_qwen05b_routed_onerequest/, tier2_budget.txt). `max_tier=2`, or any loop flag of `solve`, runs it.
    max_tier: int = 1
    full_calls: int | None = 7
    # "none" since 2026-12-03 (routed v2), from the development sets' recorded calls
    # (benchmarks/results/routed_v2_replay.txt): without the oracle round, tiers 0 and 1 answer the same 35/40 on
    # HumanEval 0-39 and 22/40 on MBPP 0-39 at 2.31x and 2.71x Direct's tokens instead of 3.14x and 3.84x; the round
    # caught none of tier 0's 4 false accepts on MBPP. "shared" from 2026-12-03 (morning), "program" before.
    oracle: str = "none"
    # How tier 1 picks among its surviving samples (strategies/selection.py): "majority" (behaviour on the public
    # inputs), "agreement" (CodeT: tests generated from the problem, one call, asked only when two or more distinct
    # programs survive) or "orm" (a trained outcome reward model, the directory in `orm`). "majority": agreement
    # picked what the majority picked on every contested problem of the development sets, at more tokens
    # (benchmarks/results/selector_replay.txt).
    selector: str = "majority"
    orm: str | None = None
    # Tier 2's debug trace, replacing its loop's own: "values" (final values) or "blocks" (LDB's block trace).
    trace_feedback: str | None = None
    # Tier 0's guard against false accepts: "tests" (the program must pass half the generated tests) or "none".
    # "none": on MBPP 0-39 the guard scored 22/40 as routed v2 does, at 4.0x Direct's tokens instead of 2.7x; it
    # caught 1 of tier 0's 4 false accepts (benchmarks/results/mbpp40_qwen05b_routed_onerequest/README.md).
    guard: str = "none"
    # The prompt format of tiers 0 and 1 (stages/prompt_formats.py): "qwen", the model maker's own (stop strings, its
    # sanitizer in place of `strip_self_tests`), since 2026-12-08, or "plain", the Direct prompt before. "qwen": on
    # HumanEval 0-39 routed v2 answered 36/40 with it against 33/40 with the plain prompt, at fewer completion tokens
    # (benchmarks/results/humaneval164_qwen05b/README.md, issue 53).
    prompt: str = "qwen"

    def selection(self) -> Selector:
        return Selector(self.selector, self.orm)


def parse_routed(options: str) -> RoutedSettings:
    """"samples=3,max_tier=1" -> RoutedSettings(samples=3, max_tier=1); BadInput names an unknown or bad option."""
    settings = RoutedSettings()
    for item in filter(None, (o.strip() for o in options.split(","))):
        key, _, value = item.partition("=")
        if key not in ("samples", "temperature", "full", "max_tier", "full_calls", "oracle", "selector",
                       "trace_feedback", "guard", "orm", "prompt"):
            raise BadInput(f"unknown solidcoder-routed option {key!r}; known: samples, temperature, full, max_tier, "
                           "full_calls, oracle, selector, orm, trace_feedback, guard, prompt")
        setattr(settings, key, _option_value(key, value, item))
    settings.selection()  # BadInput now, before any call, for selector=orm without orm=DIR (or the reverse)
    return settings


def _option_value(key: str, value: str, item: str) -> Any:
    if key == "full" and value.startswith(("solidcoder", "solidcoder+")) and ":" not in value:
        return value
    if key == "full_calls" and value == "none":
        return None
    if key == "orm" and value:
        return value
    if key == "prompt":
        return prompt_format(value).name
    if key == "oracle" and value in ORACLES or key == "selector" and value in SELECTORS \
            or key == "guard" and value in GUARDS \
            or key == "trace_feedback" and value in ("values", "blocks"):
        return value
    if key in ("samples", "full_calls") and value.isdigit() and int(value) >= 1 \
            or key == "max_tier" and value in ("0", "1", "2"):
        return int(value)
    if key == "temperature" and value.replace(".", "", 1).isdigit() and float(value) > 0:
        return float(value)
    raise BadInput(f"solidcoder-routed option {item!r}: samples takes a count >= 1, temperature a number > 0, "
                   "max_tier 0, 1 or 2, full an Algorithm 1 name (solidcoder, solidcoder+, solidcoder+_no_oracle), "
                   "full_calls a count >= 1 or none, oracle none, shared or program, selector majority, agreement or "
                   "orm, orm a trained ORM directory, guard none or tests, trace_feedback values or blocks")


@dataclass
class _Tiers:
    """The route's record (the attempt's `Route`): what each tier cost (from the recording model's running usage)
    and, with `guard=tests`, what tier 0's guard found."""

    model: UnitModel
    spent: list[TierCost] = field(default_factory=list)
    guard: str = ""  # tier 0's guard: how many generated tests the program passed
    _mark: tuple = (0, 0, 0.0)

    def start(self) -> None:
        self._mark = (self.model.usage.calls, self.model.usage.tokens, time.monotonic())

    def end(self, tier: int) -> None:
        calls, tokens, started = self._mark
        self.spent.append(TierCost(tier, self.model.usage.calls - calls, self.model.usage.tokens - tokens,
                                   round(time.monotonic() - started, 3)))


class Routed:
    """`--strategy solidcoder-routed`: tiers 0, 1 and 2 above, in order, until one accepts a program."""

    name = "solidcoder-routed"

    takes_seed = False

    def __init__(self, settings: RoutedSettings | None = None, full: Algorithm1 | None = None):
        self.config = settings or RoutedSettings()
        self.full = full or _full_loop(self.config)

    @property
    def templates(self) -> tuple[str, ...]:
        shared = (SHARED_ORACLE,) if self.config.oracle == "shared" else ()
        generated = (GENERATED_TESTS,) if self.config.selector == "agreement" or self.config.guard == "tests" else ()
        direct = tuple(dict.fromkeys((prompt_format(self.config.prompt).template, "strategies/direct")))
        return (*direct, *self.full.templates, *shared, *generated)

    def with_loop(self, changes: dict[str, Any]) -> Routed:
        """solve's loop flags set tier 2, the full loop, and turn it on; loop sizes asked for are run (no tier-2 call
        budget)."""
        sized = bool({"p", "d", "a"} & changes.keys())
        config = replace(self.config, max_tier=2, full_calls=None if sized else self.config.full_calls)
        return Routed(config, self.full.with_loop(changes))

    def seeded(self, code: str) -> Routed:
        return self

    @property
    def python_only(self) -> str:
        """Tier 2's `trace_feedback`, asked for by routing's option or in its `full` preset's name, is Python only."""
        return "trace_feedback traces Python programs only" if self.config.trace_feedback else self.full.python_only

    @property
    def requires(self) -> tuple[Requirement, ...]:
        return REQUIRES + self.config.selection().requires  # the filters that prune tier 1's samples, the selector's

    def settings(self) -> dict[str, Any]:
        """The configuration key's part: every `RoutedSettings` value (`full` as its loop's settings), less those of
        `LATER_SETTINGS` at their declared values."""
        # Tier 1's samples are the choices of one request (the prompt billed once) since 2026-12-03; before, five
        # requests. The key says so, so rows of the two accountings are never one run.
        # Since 2026-12-03, too, a problem no tier accepted is answered with the best program seen, not the last.
        found = asdict(self.config) | {"full": self.full.settings(), "samples_in": "one request", "answer": "best seen"}
        return without_later_defaults(found, LATER_SETTINGS)

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt:
        loop, tiers, failing = self.full.loop(problem, ctx), _Tiers(ctx.model), []
        oracle, code, tier = _Oracle(loop, self.config.oracle), "", 0
        generated = GeneratedTests(problem, ctx)
        try:
            for tier in range(min(self.config.max_tier, 1) + 1):
                tiers.start()
                found = [await self._direct(problem, loop)] if tier == 0 else \
                    await self._sampled(problem, loop, generated)
                loop.saw([program for program in reversed(found) if program])  # the top-ranked last
                accepted = bool(found[0]) and await _checked(loop, oracle, found[0], failing, found[1:]) \
                    and (tier > 0 or await self._guarded(problem, generated, found[0], tiers))
                code = found[0] or code  # the answer so far, should a cap stop the run
                tiers.end(tier)
                if accepted:
                    return _attempt(code, tier, tiers, loop, verified=True)
            if self.config.max_tier < 2:
                return await _best_seen(code, tier, tiers, loop, failing)
            tier = 2
            tiers.start()
            self._budget(ctx.model)
            loop.start_from(code, failing)
            await loop.run()
            tiers.end(2)
        except ProblemBudgetExceeded as exc:
            tiers.end(tier)
            return await _best_seen(loop.code or code, tier, tiers, loop, failing, stopped=exc)
        return await _best_seen(loop.code, 2, tiers, loop, failing) if not loop.accepted \
            else _attempt(loop.code, 2, tiers, loop, loop.verified)

    def _budget(self, model: UnitModel) -> None:
        """Tier 2's own call budget (`full_calls`), below the run's per-problem cap."""
        if self.config.full_calls is not None:
            model.cap_after(self.config.full_calls,
                            f"tier 2's budget of {counted(self.config.full_calls, 'call')} reached")

    async def _direct(self, problem: Problem, loop: Loop) -> str:
        form = prompt_format(self.config.prompt).for_problem(problem)
        reply = await ask(loop.ctx, form.template, stop=form.stop, **problem_variables(problem))
        return self._read(form, problem, loop)(reply)

    @staticmethod
    def _read(form: PromptFormat, problem: Problem, loop: Loop) -> Callable[[str], str]:
        """How tiers 0 and 1 read a reply: as the full loop does, or as the maker's format does."""
        return loop.program if form is PLAIN else (lambda text: form.program(text, problem))

    async def _guarded(self, problem: Problem, generated: GeneratedTests, code: str, tiers: _Tiers) -> bool:
        """`guard=tests`: tier 0's program passes at least half of the generated tests it can run (no readable test:
        nothing to go on, accepted); `notes.guard` says how many it passed."""
        if self.config.guard == "none":
            return True
        tests = await generated.tests()
        if not tests:
            tiers.guard = "no readable generated test"
            return True
        report = await generated.ctx.judge.ajudge(problem, code, tests)
        tiers.guard = f"passed {report.pass_count} of {report.total} generated tests"
        return report.pass_count * 2 >= report.total

    async def _sampled(self, problem: Problem, loop: Loop, generated: GeneratedTests) -> list[str]:
        """The survivors of sample-and-select (strategies/selection.py, as `solve --prerank`'s), best first ([""]
        when none survived)."""
        form = prompt_format(self.config.prompt).for_problem(problem)
        chosen = await sample_and_select(problem, loop.ctx, self.config.samples, self.config.temperature,
                                         self.config.selection(), generated, read=self._read(form, problem, loop),
                                         form=form)
        return chosen.programs or [""]


def _full_loop(config: RoutedSettings) -> Algorithm1:
    """Tier 2's loop: the `full` preset, with `trace_feedback` when the option sets it."""
    loop = make_algorithm1(config.full)
    if config.trace_feedback is None:
        return loop
    return loop.with_settings(trace_feedback="blocks" if config.trace_feedback == "blocks" else True)


class _Oracle:
    """The oracle test of tiers 0 and 1: a red-team round on each program checked (`oracle=program`), one test
    written from the problem alone (`oracle=shared`, `prompts/refinements/red_team_shared.j2`), asked for the first
    time a program needs it and run on every program checked after, without another call, or none (`oracle=none`:
    the public tests decide)."""

    def __init__(self, loop: Loop, kind: str):
        self.loop, self.kind, self.asked, self.test = loop, kind, False, None

    async def test_for(self, code: str) -> tuple[SuiteTest | None, bool]:
        """The test for `code`, and whether a round was asked for it (False: the shared test, asked for before, or
        no oracle at all)."""
        if self.kind == "none":
            return None, False
        if self.kind == "program":
            return await self.loop.oracle_test(code, 1), True
        if self.asked:
            return self.test, False
        self.asked, self.test = True, await self.loop.oracle_test(code, 1, SHARED_ORACLE)
        return self.test, True


async def _checked(loop: Loop, oracle: _Oracle, code: str, failing: list[SuiteTest], others: list[str]) -> bool:
    """Public tests and the oracle test on `code`; a failing oracle test joins `failing`. True when everything that
    ran passed and at least one test ran. With `evidence`, a test that `code` and every other sampled program passing
    the public tests (`others`) fail is suspect: rejected, as the evidence's other checks reject (a shared test that
    failed an earlier tier's program leaves `failing` again). A round is recorded when one was asked for."""
    public = await loop.evaluate(code, loop.public)
    if not public.green:
        return False
    test, fresh = await oracle.test_for(code)
    if test is None:
        return public.verified
    failure = await loop.failure_of(code, test)
    if failure and loop.config.evidence and others and await _all_fail(loop, test, others):
        loop.note_round("rejected" if fresh else None,
                        f"evidence: all {len(others) + 1} sampled programs that pass the public tests fail it")
        failing[:] = [kept for kept in failing if kept is not test]
        return public.verified
    loop.note_round(f"executed, {'failed' if failure else 'passed'}" if fresh else None)
    if failure is not None:
        failing.extend([] if test in failing else [test])
        return False
    return public.verified or not test.test.crash_only


async def _all_fail(loop: Loop, test: SuiteTest, programs: list[str]) -> bool:
    for program in programs:
        if (await loop.evaluate(program, [test])).green:
            return False
    return True


async def _best_seen(code: str, tier: int, tiers: _Tiers, loop: Loop, failing: list[SuiteTest],
                     stopped: ProblemBudgetExceeded | None = None) -> Attempt:
    """No tier accepted a program: the answer is the best program any tier produced, by the public tests and the
    failing tests found passed (the latest among equals), as a run stopped by a cap answers too. The full loop
    chose it already when its `best` option is on."""
    loop.start_from(loop.code or code, failing)  # the failing tests found are what the programs are ranked on too
    if loop.history and loop.stages[-1:] != ["choose_best"]:
        await loop.choose_best()
    return _attempt(loop.code if loop.history else code, tier, tiers, loop, loop.verified, stopped)


def _attempt(code: str, tier: int, tiers: _Tiers, loop: Loop, verified: bool,
             stopped: ProblemBudgetExceeded | None = None) -> Attempt:
    return replace(loop.attempt(stopped), code=code, verified=verified,
                   route=Route(tier, tuple(tiers.spent), tiers.guard))

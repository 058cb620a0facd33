"""LDB, the Large Language Model Debugger (Zhong et al., 2024), read from FloridSleeves/LLMDebugger@49ac191
(`programming/ldb.py`, `PyGenerator.ldb_debug` / `ldb_generate` in `programming/generators/py_generate.py`,
`programming/tracing/tracer.py`), block level, chat models.

A seed program (another strategy's answer: Direct by default, `ldb:seed=NAME` for any strategy, the rest of the
options string being its name) is run on the visible tests. While one fails, for at most 10 rounds (`max_iters`
of `run_ldb.sh`): one failing test's input is traced and cut into blocks as LDB's tracer cuts them
(`execution/blocks.py`, `execution/inside/basic_blocks.py`); the debug call shows the task, the program, the failing
test with its real output and the selected blocks, and asks for a verdict per block as JSON; the fix call continues
that conversation with "Please fix the Python code."; the fixed program is run on the visible tests. A program
LDB's tracer gives no blocks for (the run raises, but for an AssertionError, or times out; staticfg fails on it;
the function is never called) gets LDB's one-line feedback and no debug call. The answer is the last program, as
LDB's. The debug and fix calls run at LDB's settings, whatever the run's `--temperature` and `--max-tokens`
(`LdbSettings`): temperature 0 (`ldb_debug` passes it, `ldb_generate` has it as `generate_chat`'s default) and
1,024 completion tokens (`generate_chat`'s default, which LDB's vLLM path sends and its OpenAI path sends only when
it retries after a context overflow); the seed strategy runs at the run's settings.

Departures: the failing test is the first one, not a random one (runs replay and resume); each round's prompt
holds that round's conversation only (LDB keeps appending every round to one chat, cut to its last 3,097 GPT-2
tokens), written as one system and one user message (LDB's program and debug reply are assistant turns); the debug
reply is asked for as a JSON object `{"blocks": [...]}` of LDB's per-block fields, enforced where the backend can
(`ask` with a schema), with no stop strings (LDB stops it at "[debug end]" or "Here is the updated code:"); its
verdicts are recorded, and the fix call sees the reply as text, as LDB's does. The program is not prefixed with
LDB's import header, not completed from the prompt (LDB's `prepare_function_from_seed` adds the prompt's signature
and helper functions a program lacks) and no comment from the prompt is inserted into it. A fix reply's program is
its longest compiling Python block (`extract_code`; LDB's, the text after its first "```python"), and a reply
without code keeps the current program (LDB takes the whole reply for the program). One round of `pass_at_k`.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from solidcoder.core.context import SolveContext, ask
from solidcoder.errors import BadInput, ProblemBudgetExceeded
from solidcoder.execution.blocks import BlockTrace, atrace_blocks
from solidcoder.execution.build import run_limits
from solidcoder.execution.judge import JudgeReport, TestVerdict
from solidcoder.parsing import load_json
from solidcoder.problem import Problem, TestCase
from solidcoder.prompting import problem_variables
from solidcoder.stages.base import extract_code
from solidcoder.stages.live import first_call
from solidcoder.strategies.base import Attempt, NoLoop, Strategy

ROUNDS = 10  # run_ldb.sh: --max_iters 10
TEMPERATURE = 0.0  # LDB's debug and fix calls
MAX_TOKENS = 1024  # LDB's generate_chat default
VERDICT_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["blocks"],
    "properties": {"blocks": {"type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["block", "correct", "explanation"],
        "properties": {"block": {"type": "string", "maxLength": 20}, "correct": {"type": "boolean"},
                       "explanation": {"type": "string", "maxLength": 1000}}}}},
}
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@dataclass(frozen=True)
class LdbSettings:
    """The seed strategy, the rounds, and the sampling of the debug and fix calls (LDB's, not the run's)."""

    seed: str = "direct"
    rounds: int = ROUNDS
    temperature: float = TEMPERATURE
    max_tokens: int = MAX_TOKENS


def parse_ldb(options: str) -> LdbSettings:
    """`rounds=N` and `seed=NAME` (last: the rest of the string is the seed strategy's name and options)."""
    settings = LdbSettings()
    head, found, seed = options.partition("seed=")
    for option in filter(None, head.rstrip(",").split(",")):
        key, _, value = option.partition("=")
        if key != "rounds" or not value.isdigit() or int(value) < 1:
            raise BadInput(f"ldb: unknown option {option!r}; options: rounds=N, seed=STRATEGY (last)")
        settings = replace(settings, rounds=int(value))
    return replace(settings, seed=seed or settings.seed) if found else settings


@dataclass(frozen=True)
class BlockVerdict:
    block: str
    correct: bool
    explanation: str


@dataclass
class LdbRound:
    """One round: the traced test, how many blocks were cut, whether the debug call was made, its verdicts, whether
    the fix reply had no code (the program was kept), and the fixed program's visible-test score."""

    test: str
    blocks_run: int
    debugged: bool
    verdicts: list[BlockVerdict] = field(default_factory=list)
    no_code: bool = False
    passed: int = 0


class Ldb(NoLoop):
    name = "ldb"
    templates = ("strategies/ldb_debug", "strategies/ldb_fix")
    takes_seed = True
    python_only = "LDB debugs from the basic blocks of a Python trace"

    def __init__(self, settings: LdbSettings | None = None, code: str | None = None):
        self.config = settings or LdbSettings()
        self.code = code
        self.seed: Strategy = make_seed(self.config.seed)
        self.templates = (*self.seed.templates, *Ldb.templates) if code is None else Ldb.templates

    def settings(self) -> dict[str, Any]:
        return {**asdict(self.config), "seed_settings": self.seed.settings(), "seeded": self.code is not None}

    def seeded(self, code: str) -> Ldb:
        return Ldb(self.config, code)

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt:
        code = self.code if self.code is not None else (await self.seed.solve(problem, ctx)).code
        report = await ctx.check(problem, code)
        chat = replace(ctx, temperature=self.config.temperature, max_tokens=self.config.max_tokens)
        rounds: list[LdbRound] = []
        stopped = None
        try:
            while not report.passed and report.failures() and len(rounds) < self.config.rounds:
                fixed, done = await ldb_round(problem, chat, code, report)
                code, report = fixed, await ctx.check(problem, fixed)
                rounds.append(done)
                done.passed = report.pass_count
        except ProblemBudgetExceeded as exc:  # --max-calls: the last program checked is the answer
            stopped = exc
        figures = {"seed": self.config.seed, "rounds": [asdict(r) for r in rounds]}
        return Attempt(code=code, verified=report.passed if report.total else None, stopped=stopped, figures=figures)


def make_seed(name: str) -> Strategy:
    from solidcoder.strategies import make_strategy

    return make_strategy(name)


async def ldb_round(problem: Problem, ctx: SolveContext, code: str, report: JudgeReport) -> tuple[str, LdbRound]:
    """Trace the first failing test, debug block by block (when LDB's tracer gives blocks), fix: (the fixed program,
    the current one when the fix reply has none; the round). `ctx` samples as LDB's debug and fix calls do."""
    failure = report.failures()[0]
    test = problem.public_tests[failure.index]
    trace = await trace_test(ctx, problem, code, test)
    shown = trace.prompt_text(code) + "\n" if trace.shown else ""
    ctx.traced(code, "blocks", test.call or test.stdin or test.script or "", shown)
    output = real_output(failure, trace)
    variables = {**_base(problem, code), "failing_test": f"{assertion_text(test)} # Real Execution Output: {output}",
                 "trace": shown}
    reply = await ask(ctx, "strategies/ldb_debug", schema=VERDICT_SCHEMA, **variables) if shown else ""
    fixed = await ask(ctx, "strategies/ldb_fix", **variables, debug_reply=reply, test=assertion_text(test),
                      actual_output=output)
    program = extract_code(fixed)
    done = LdbRound(variables["failing_test"], trace.count, bool(shown), parse_verdicts(reply), not program)
    return program or code, done


def _base(problem: Problem, code: str) -> dict[str, str]:
    variables = problem_variables(problem)
    return {"problem": variables["problem"], "language": variables["language"], "code": code}


async def trace_test(ctx: SolveContext, problem: Problem, code: str, test: TestCase) -> BlockTrace:
    """LDB's blocks of `code` on the test's input: its stdin, or the test's (first) call of the entry point, whose
    function is the traced entry."""
    limits = run_limits(problem)
    if test.kind != "call":
        return await atrace_blocks(ctx.pool, code, test.stdin or "", None, limits)  # stdio: no header
    call = test.call or first_call(test.script or "", problem)
    if call is None:
        return BlockTrace(error="no call of the entry point in the test")
    entry = (problem.entry_point or "").split(".")[-1] or None
    return await atrace_blocks(ctx.pool, code, "", call, limits, header=problem.header, entry=entry)


def assertion_text(test: TestCase) -> str:
    """The test as LDB's assertion text: the script, `assert CALL == EXPECTED`, or the stdin and expected output."""
    if test.kind == "call":
        return (test.script or f"assert {test.call} == {test.expected!r}").strip()
    return f"Input:\n{test.stdin or ''}\nExpected output:\n{test.expected_stdout or ''}".rstrip()


def real_output(failure: TestVerdict, trace: BlockTrace) -> str:
    """LDB's real execution output: what the call returned (for an assert script, the traced call's `_ret`), the
    error it raised, or the program's output."""
    if failure.actual is not None:
        return failure.actual
    if trace.error or not trace.blocks:
        return trace.error or failure.detail
    return dict(trace.blocks[-1].after or ()).get("_ret", failure.detail)


def parse_verdicts(reply: str) -> list[BlockVerdict]:
    """The per-block verdicts of a debug reply (the schema's object, or LDB's one JSON object a line)."""
    found = _OBJECT.search(reply)
    try:
        data = load_json(found.group(0)) if found else {}
    except ValueError:
        data = {}
    items = data.get("blocks") if isinstance(data, dict) and "blocks" in data else None
    if not isinstance(items, list):
        items = [_line_object(line) for line in reply.splitlines()]
    return [v for v in (_verdict(item) for item in items) if v is not None]


def _line_object(line: str) -> Any:
    try:
        return load_json(line.strip())
    except ValueError:
        return None


def _verdict(item: Any) -> BlockVerdict | None:
    """LDB's reading: `correct` a boolean, or a string that is true when it says "true"."""
    if not isinstance(item, dict) or not {"block", "correct", "explanation"} <= item.keys():
        return None
    correct = item["correct"] if isinstance(item["correct"], bool) else str(item["correct"]).lower() == "true"
    return BlockVerdict(str(item["block"])[:20], correct, str(item["explanation"])[:1000])

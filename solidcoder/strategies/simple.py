"""One-call baselines (Direct, Chain-of-Thought, Self-Planning, Analogical prompting) and Direct best-of-n.

Each renders its template (prompts/strategies/<name>.j2) once and takes the code from the reply. Self-planning is
asked for the plan and the code in one reply (the template's two phases), which is how MapCoder's reimplementation
runs it as a one-call baseline.

Direct is greedy (temperature 0, as the published baselines are: the Qwen2.5-Coder report, EvalPlus) unless the run
sets `--temperature`; `direct:sampled` is the model's default temperature, what `direct` was before 2026-12-04 (its
recorded rows keep their key). `direct:n=5` is best-of-n, the equal-compute baseline (issue 37): n programs at
`temperature` (0.8) as the choices of one request, the first that passes the public tests is the answer, else the
behaviour majority on the public inputs (ties: the earliest). It answers for every k <= n at once (the pick among the
first k samples, `Attempt.alternatives`), so `report` can price best-of-k at the tokens of any strategy; each sample
is judged too (`sample 1` ... `sample n`), so `report` can say how often any sample was right (the oracle).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from solidcoder.core.context import SolveContext, ask
from solidcoder.errors import BadInput
from solidcoder.execution.judge import JudgeReport
from solidcoder.problem import Problem
from solidcoder.prompting import problem_variables
from solidcoder.stages.base import extract_code
from solidcoder.stages.prompt_formats import prompt_format
from solidcoder.strategies.base import Attempt, NoLoop

DIRECT = "strategies/direct"


class OneCallStrategy(NoLoop):
    """Render `strategies/<name>`, call the model once, extract the code."""

    def __init__(self, name: str):
        self.name = name
        self.templates = (f"strategies/{name}",)

    def settings(self) -> dict[str, Any]:
        return {"template": f"strategies/{self.name}"}

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt:
        reply = await ask(ctx, f"strategies/{self.name}", **problem_variables(problem))
        return Attempt(code=extract_code(reply, problem.language))


@dataclass(frozen=True)
class DirectSettings:
    sampled: bool = False  # the model's default temperature instead of greedy (one sample only)
    n: int = 1  # best of n
    temperature: float = 0.8  # the samples' temperature when n > 1
    # The prompt format (stages/prompt_formats.py): the model maker's own since 2026-12-08 (issue 53: greedy 98/164
    # on HumanEval against the plain prompt's 86/164, benchmarks/results/humaneval164_qwen05b/); rows recorded as
    # `direct` before then are `direct:prompt=plain` and keep their keys.
    prompt: str = "qwen"


def parse_direct(options: str) -> DirectSettings:
    """"sampled" | "n=5[,temperature=0.8]" | "prompt=qwen" -> DirectSettings; BadInput names an unknown or bad
    option."""
    found: dict[str, Any] = {}
    for item in filter(None, (o.strip() for o in options.split(","))):
        key, _, value = item.partition("=")
        try:
            found[key] = {"sampled": lambda v: v in ("", "true"), "n": int, "temperature": float,
                          "prompt": lambda v: prompt_format(v).name}[key](value)
        except KeyError:
            raise BadInput(f"unknown direct option {key!r}; known: sampled, n, temperature, prompt") from None
        except ValueError:
            raise BadInput(f"direct option {item!r}: not a number") from None
    settings = DirectSettings(**found)
    if settings.n < 1 or settings.sampled and settings.n > 1 or not 0 <= settings.temperature <= 2:
        raise BadInput(f"direct options {options!r}: n >= 1, temperature in [0, 2], sampled only with n=1")
    return settings


class Direct(OneCallStrategy):
    """Direct: greedy, sampled at the model's default, or best-of-n, in a prompt format (module docstring)."""

    def __init__(self, config: DirectSettings | None = None):
        super().__init__("direct")
        self.config = config or DirectSettings()
        self.format = prompt_format(self.config.prompt)
        self.templates = tuple(dict.fromkeys((self.format.template, DIRECT)))

    def settings(self) -> dict[str, Any]:
        found = asdict(self.config)
        if found.pop("prompt") != "plain":  # the plain format's rows keep the keys they were recorded with
            found |= {"prompt": self.format.name, "stop": list(self.format.stop)}
        template = {"template": self.format.template}
        if self.config.n > 1:
            return template | found | {"answer": "first public pass, else majority"}
        return template | {k: v for k, v in found.items() if k in ("prompt", "stop")} | (
            {} if self.config.sampled else {"temperature": 0.0})

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt:
        if self.config.n > 1:
            return await self._best_of_n(problem, ctx)
        greedy = ctx.temperature is None and not self.config.sampled
        form = self.format.for_problem(problem)
        reply = await ask(ctx.with_temperature(0.0) if greedy else ctx, form.template, stop=form.stop,
                          **problem_variables(problem))
        return Attempt(code=form.program(reply, problem))

    async def _best_of_n(self, problem: Problem, ctx: SolveContext) -> Attempt:
        form = self.format.for_problem(problem)
        messages = ctx.prompts.messages(form.template, **problem_variables(problem))
        reply = await ctx.model.acomplete(messages, temperature=self.config.temperature, max_tokens=ctx.max_tokens,
                                          n=self.config.n, **({"stop": form.stop} if form.stop else {}))
        programs = [form.program(text, problem) for text in reply.texts]
        reports = [await ctx.check(problem, code) if code.strip() else None for code in programs]
        picks = [pick(reports[:k]) for k in range(1, len(programs) + 1)]
        # each pick among the first k, and each sample itself (the oracle: is any sample right?), judged by the bench
        alternatives = {str(k): programs[i] for k, i in enumerate(picks, 1)} | {
            f"sample {i}": code for i, code in enumerate(programs, 1)}
        figures = {"best_of": {"samples": len(programs), "picks": picks,
                               "public_passed": [bool(r and r.passed) for r in reports]}}
        return Attempt(code=programs[picks[-1]], alternatives=alternatives, figures=figures)


def pick(reports: list[JudgeReport | None]) -> int:
    """The index of the first program that passed its public tests (at least one ran), else of the earliest program
    of the largest behaviour cluster on the public inputs (a sample without code votes for nothing)."""
    passing = next((i for i, r in enumerate(reports) if r is not None and r.total and r.passed), None)
    if passing is not None:
        return passing
    signatures = [tuple((v.status, v.actual) for v in r.verdicts) if r is not None else None for r in reports]
    votes = Counter(s for s in signatures if s is not None)
    if not votes:
        return 0
    best = max(votes.values())
    return next(i for i, s in enumerate(signatures) if s is not None and votes[s] == best)

"""Sample and select: the one path from a problem to its ranked sampled programs (routing's tier 1, `solve --prerank`).

`sample_and_select` draws programs from the coder model (Direct's prompt, in the model maker's format unless the
caller names another, `stages/prompt_formats.py`, as the choices of one request, so the prompt is billed once),
prunes them with the cheap verifiers (`FILTERS`: syntax, lint, the first 3 public tests), ranks the survivors by
behaviour majority on the public inputs (`verify/rank.py`'s `prune_then_rank`, the path `rank` measures), and orders
them by the run's selector. Every program runs through the judge's one call (`Judge.ajudge`), awaited: nothing here
runs the sandbox in a thread of its own, and a sandbox failure raises `SandboxFailure` rather than prune, keep or
rank a program.

Three selectors, as issue 29 names them: `majority` (the ranking's own order: behaviour majority on the public
inputs), `agreement` (CodeT's dual agreement: the survivors run on tests the model writes from the problem alone,
one call, asked only when two or more distinct programs survive) and `orm` (a trained outcome reward model,
`solidcoder train orm`, scores each survivor; no model call). Among equal scores the majority's order stands.

It lives among the strategies because it asks the model (the samples, the agreement selector's tests) and reads
replies as they do; `verify/` below it prunes and ranks programs and knows nothing of models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from solidcoder.core.context import SolveContext, ask
from solidcoder.errors import BadInput
from solidcoder.languages import language
from solidcoder.problem import Problem, TestCase
from solidcoder.prompting import problem_variables
from solidcoder.requirements import TRANSFORMERS, Requirement
from solidcoder.stages.prompt_formats import SAMPLING, PromptFormat
from solidcoder.verify.rank import AgreementScorer, Candidate, MajorityScorer, prune_then_rank, reranked
from solidcoder.verify.weak import filter_requirements, make_verifier

FILTERS = ("syntax", "lint", "tests:3")
NATIVE_FILTERS = ("tests:3",)  # a C++ program's syntax is its build: the tests' compile_error verdict prunes it
REQUIRES = filter_requirements(FILTERS)  # what sampling with these filters needs installed (the linter)
SELECTORS = ("majority", "agreement", "orm")
GENERATED_TESTS = "refinements/generated_tests"
TEST_COUNT = 6  # tests asked of the model for `agreement` (AlphaCodium's number_of_ai_tests)


@dataclass(frozen=True)
class Selector:
    """A selector by name; `orm` is the trained ORM's directory, which `orm` needs and nothing else takes."""

    name: str = "majority"
    orm: str | None = None

    def __post_init__(self) -> None:
        if self.name not in SELECTORS:
            raise BadInput(f"unknown selector {self.name!r}; choose one of: {', '.join(SELECTORS)}")
        if (self.name == "orm") != (self.orm is not None):
            raise BadInput("the orm selector needs a trained ORM directory, and only it takes one")
        if self.orm is not None and not Path(self.orm, "config.json").is_file():
            raise BadInput(f"no trained ORM in {self.orm} (no config.json there)")

    @property
    def requires(self) -> tuple[Requirement, ...]:
        return (TRANSFORMERS,) if self.name == "orm" else ()


class GeneratedTests:
    """CodeT's tests written from the problem alone (`prompts/refinements/generated_tests.j2`), asked for at most
    once per problem, so that several users of them (routing's tier-0 guard and its selector) share one call."""

    def __init__(self, problem: Problem, ctx: SolveContext):
        self.problem, self.ctx, self._tests = problem, ctx, None

    async def tests(self) -> list[TestCase]:
        """The readable tests of the one reply (asked for on first use)."""
        from solidcoder.strategies.alphacodium_io import example_test, load_reply, read_examples

        if self._tests is None:
            reply = await ask(self.ctx, GENERATED_TESTS, count=str(TEST_COUNT), **problem_variables(self.problem))
            examples = read_examples(load_reply(reply, ("input:", "output:")) or {}) or []
            self._tests = [t for t in (example_test(e, self.problem) for e in examples) if t is not None]
        return self._tests


@dataclass
class Selected:
    """The surviving programs, best first by the selector, and how many samples each filter pruned."""

    ranked: list[Candidate]
    pruned: dict[str, int]

    @property
    def programs(self) -> list[str]:
        return [candidate.code for candidate in self.ranked]


async def sample_and_select(problem: Problem, ctx: SolveContext, samples: int, temperature: float,
                            selector: Selector, generated: GeneratedTests | None = None,
                            read: Callable[[str], str] | None = None, form: PromptFormat = SAMPLING) -> Selected:
    """`samples` programs at `temperature` in the prompt format `form` (`read` takes each out of its reply), pruned,
    ranked by behaviour majority and ordered by `selector`; `generated` are the problem's generated tests when a
    caller shares them (routing's guard), else asked for here if the selector needs them. Programs run on
    `ctx.judge`, which records them."""
    judge = ctx.judge
    programs = await sample_programs(problem, ctx, samples, temperature, read, form)
    filters = NATIVE_FILTERS if language(problem.language).native else FILTERS
    ranking = await prune_then_rank(problem, programs, [make_verifier(f, judge) for f in filters],
                                    MajorityScorer(judge))
    survivors = [candidate for candidate, _ in ranking.ranked]
    return Selected(await selected(selector, survivors, generated or GeneratedTests(problem, ctx)), ranking.pruned)


async def sample_programs(problem: Problem, ctx: SolveContext, samples: int, temperature: float,
                          read: Callable[[str], str] | None = None, form: PromptFormat = SAMPLING) -> list[str]:
    """`samples` programs from the coder model (Direct's prompt in the format `form`) as the choices of one request,
    each read by `read` (default: as the format reads a reply); a server that returned fewer is asked again for the
    rest."""
    model = ctx.model.for_role("coder")
    form = form.for_problem(problem)
    # The statement alone, as routing's recorded runs were asked (Direct's own prompt adds missing starter code).
    messages = ctx.prompts.messages(form.template, **problem_variables(problem) | {"problem": problem.statement})
    read = read or (lambda text: form.program(text, problem))
    stop = {"stop": form.stop} if form.stop else {}
    programs: list[str] = []
    while len(programs) < samples:
        reply = await model.acomplete(messages, temperature=temperature, max_tokens=ctx.max_tokens,
                                      n=samples - len(programs), **stop)
        programs.extend(read(text) for text in reply.texts[:samples - len(programs)])
    return programs


async def selected(selector: Selector, ranked: list[Candidate], generated: GeneratedTests) -> list[Candidate]:
    """The survivors, best first by `selector` (the majority's order among equals and when there is nothing to go
    on: fewer than two survivors, or no readable generated test)."""
    if selector.name == "majority" or len(ranked) < 2:
        return ranked
    if selector.name == "orm":
        from solidcoder.verify.orm import loaded_scorer  # torch and transformers: the `train` extra

        return await reranked(generated.problem, ranked, loaded_scorer(selector.orm))
    tests = await generated.tests()
    if not tests:
        return ranked
    return await reranked(generated.problem, ranked, AgreementScorer(generated.ctx.judge, tests))

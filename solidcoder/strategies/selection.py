"""Choosing among sampled programs that survived pruning, for routing's tier 1 and `solve --prerank`.

Three selectors, as issue 29 names them: `majority` (the ranking's own order: behaviour majority on the public
inputs), `agreement` (CodeT's dual agreement: the survivors run on tests the model writes from the problem alone,
one call, asked only when two or more distinct programs survive) and `orm` (a trained outcome reward model,
`solidcoder train orm`, scores each survivor; no model call). Among equal scores the majority's order stands.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from solidcoder.core.context import SolveContext, ask
from solidcoder.errors import BadInput
from solidcoder.problem import Problem, TestCase
from solidcoder.prompting import problem_variables
from solidcoder.requirements import TRANSFORMERS, Requirement
from solidcoder.verify.rank import Candidate

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


async def selected(selector: Selector, ranked: list[Candidate], generated: GeneratedTests) -> list[Candidate]:
    """The survivors, best first by `selector` (the majority's order among equals and when there is nothing to go
    on: fewer than two survivors, or no readable generated test)."""
    if selector.name == "majority" or len(ranked) < 2:
        return ranked
    problem = generated.problem
    if selector.name == "orm":
        from solidcoder.verify.orm import loaded_scorer  # torch and transformers: the `train` extra

        scores = await asyncio.to_thread(loaded_scorer(selector.orm).scores, problem, ranked)
    else:
        tests = await generated.tests()
        if not tests:
            return ranked
        from solidcoder.verify.rank import AgreementScorer

        scores = await asyncio.to_thread(AgreementScorer(generated.ctx.judge, tests).scores, problem, ranked)
    return [c for _, c in sorted(zip(scores, ranked, strict=True), key=lambda pair: -pair[0])]


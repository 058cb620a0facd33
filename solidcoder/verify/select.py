"""`solve --prerank N`: sample N programs, prune them with the weak verifiers, and rank the survivors.

The top-ranked program becomes the first plan's program in Algorithm 1, which still executes it on the
public tests and red-teams it before calling it verified: sampling picks a strong start, execution decides.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from solidcoder.core.trajectory import Usage
from solidcoder.execution.executor import Executor
from solidcoder.execution.judge import Judge
from solidcoder.models.factory import as_roster
from solidcoder.problem import Problem
from solidcoder.prompting import PromptLibrary
from solidcoder.stages.base import extract_code
from solidcoder.verify.rank import MajorityScorer, RankResult, prune_then_rank
from solidcoder.verify.weak import filter_requirements, make_verifier

FILTERS = ("syntax", "lint", "tests:3")
REQUIRES = filter_requirements(FILTERS)  # what sampling with these filters needs installed (the linter)


@dataclass
class Sampled:
    """The ranking and what the sampling cost."""

    ranking: RankResult
    usage: Usage


async def sample_then_rank(problem: Problem, models, pool: Executor, prompts: PromptLibrary, samples: int,
                           temperature: float = 0.8, max_tokens: int | None = None,
                           read: Callable[[str], str] = extract_code, judge: Judge | None = None) -> Sampled:
    """Draw `samples` programs from the coder model (Direct prompt), as the choices of one request, and
    prune-then-rank them (in a worker thread: the verifiers run the sandbox). `read` takes the program out of a
    reply; `judge` runs them (the run's, which records every verdict; default a plain one on `pool`)."""
    model = as_roster(models).for_role("coder")
    messages = prompts.messages("strategies/direct", problem=problem.statement, language="Python 3",
                                io_mode="call" if problem.kind == "call" else "stdin",
                                entry_point=problem.entry_point or "")
    programs, usage = [], Usage()
    while len(programs) < samples:  # one request for all of them; a server that returned fewer is asked again
        reply = await model.acomplete(messages, temperature=temperature, max_tokens=max_tokens,
                                      n=samples - len(programs))
        programs.extend(read(text) for text in reply.texts[:samples - len(programs)])
        usage.add(reply)
    judge = judge or Judge(pool)
    verifiers = [make_verifier(f, judge) for f in FILTERS]
    ranking = await asyncio.to_thread(prune_then_rank, problem, programs, verifiers, MajorityScorer(judge))
    return Sampled(ranking, usage)

"""Best-of-n Direct at the same tokens: does a strategy beat plain sampling at equal cost? (issue 37)

A `direct:n=N` run records, for every problem, N samples of the Direct prompt at temperature 0.8 (one request) and
which answer the first k of them give for each k <= N (the first that passes the public tests, else the behaviour
majority), each judged on the hidden tests (`alternatives_passed`). A strategy that spent T tokens per problem is
compared with best-of-k, where k is the sample count whose tokens per problem come closest to T: the prompt once,
plus k / N of the completion tokens the N samples cost. Where T is beyond N samples, k = N and the line says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from solidcoder.bench.compare import paired
from solidcoder.bench.metrics import Summary

BEST_OF = "direct:n="


@dataclass(frozen=True)
class EqualCompute:
    """`strategy` against best-of-`k` of `sampled` at equal tokens."""

    strategy: Summary
    sampled: Summary
    k: int
    tokens: float  # best-of-k's tokens per problem

    @property
    def capped(self) -> bool:
        return self.k == samples_of(self.sampled) and self.tokens < self.strategy.tokens

    def per_problem(self) -> dict[str, float]:
        return {pid: float(found[str(self.k)]) for pid, found in self.sampled.alternatives.items()
                if str(self.k) in found}

    def line(self, label: Callable[[Summary], str]) -> str:
        cap = f" (capped: {self.k} samples are all the run has)" if self.capped else ""
        compared = paired(self.strategy.per_problem, self.per_problem())
        best = sum(self.per_problem().values()) / max(len(self.per_problem()), 1) * 100
        return (f"{self.strategy.dataset} {label(self.strategy)} against Direct best-of-{self.k} at equal tokens "
                f"({self.strategy.tokens:,.0f} against {self.tokens:,.0f} per problem{cap}; best-of-{self.k} "
                f"{best:.1f} %): {compared.line()}")


def samples_of(summary: Summary) -> int:
    """N of a `direct:n=N` run (0 where the name gives no count)."""
    count = summary.strategy.removeprefix(BEST_OF).split(",")[0]
    return int(count) if count.isdecimal() and len(count) < 6 else 0


def tokens_for(sampled: Summary, k: int) -> float:
    """Tokens per problem of k of the run's samples: the prompt once, k / N of the completions."""
    return sampled.prompt_tokens + sampled.completion_tokens * k / samples_of(sampled)


def equal_compute(summaries: list[Summary], s: Summary) -> EqualCompute | None:
    """`s` against the best-of-n run on its dataset and model with the closest tokens; None without one."""
    runs = [o for o in summaries if o.strategy.startswith(BEST_OF) and o.dataset == s.dataset and o.model == s.model
            and o.language == s.language and o.alternatives and o is not s and samples_of(o)]
    if not runs or s.strategy.startswith(BEST_OF) or not s.problems:
        return None
    sampled = runs[0]
    k = min(range(1, samples_of(sampled) + 1), key=lambda k: abs(tokens_for(sampled, k) - s.tokens))
    return EqualCompute(s, sampled, k, tokens_for(sampled, k))


def equal_compute_lines(summaries: list[Summary], label: Callable[[Summary], str]) -> list[str]:
    """A line per configuration that has a best-of-n run beside it, each named by `label`."""
    return [found.line(label) for s in summaries if (found := equal_compute(summaries, s)) is not None]

"""Best-of-n Direct at the same completion tokens: does a strategy beat plain sampling at equal cost? (issues 37, 53)

A `direct:n=N` run records, for every problem, N samples of the Direct prompt at its temperature (one request) and
which answer the first k of them give for each k <= N (the first that passes the public tests, else the behaviour
majority), each judged on the hidden tests (`alternatives_passed`; since issue 53 also every sample's own verdict,
`sample 1` ... `sample N`, from which the oracle is read: a problem counts when any of its N samples is right).

A strategy that spent C completion tokens per problem is compared with best-of-k, where k is the sample count whose
completion tokens per problem come closest to C (k / N of what the N samples cost): completion tokens are what a
local model's time follows (a prompt is evaluated once and is nearly free beside them), and what an API bills most
for. Model seconds per problem stand beside them. Where C is beyond N samples, k = N and the line says so.

The baseline is the best-of-n run sampled as the strategy's own samplers sample: the same prompt format (`prompt=`)
and temperature (`temperature=`, 0.8 when not given, for both `direct:n=` and routing's tier 1); where the run
directory has none such, the closest other one, and the line names what differs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from solidcoder.bench.compare import paired
from solidcoder.bench.metrics import Summary

BEST_OF = "direct:n="
SAMPLE = "sample "  # the alternatives that are one sample's own verdict, not a pick among the first k
SAMPLING_DEFAULTS = {"prompt": "plain", "temperature": "0.8"}


@dataclass(frozen=True)
class EqualCompute:
    """`strategy` against best-of-`k` of `sampled` at equal completion tokens."""

    strategy: Summary
    sampled: Summary
    k: int
    completion_tokens: float  # best-of-k's completion tokens per problem

    @property
    def capped(self) -> bool:
        return self.k == samples_of(self.sampled) and self.completion_tokens < self.strategy.completion_tokens

    def per_problem(self) -> dict[str, float]:
        return {pid: float(found[str(self.k)]) for pid, found in self.sampled.alternatives.items()
                if str(self.k) in found}

    def line(self, label: Callable[[Summary], str]) -> str:
        cap = f" (capped: {self.k} samples are all the run has)" if self.capped else ""
        compared = paired(self.strategy.per_problem, self.per_problem())
        best = sum(self.per_problem().values()) / max(len(self.per_problem()), 1) * 100
        seconds = self.sampled.model_s * self.k / samples_of(self.sampled)
        return (f"{self.strategy.dataset} {label(self.strategy)} against Direct best-of-{self.k} at equal completion "
                f"tokens ({self.strategy.completion_tokens:,.0f} against {self.completion_tokens:,.0f} per problem"
                f"{cap}; model seconds {self.strategy.model_s:,.1f} against {seconds:,.1f}; best-of-{self.k} "
                f"{best:.1f} %{self._oracle()}{self._differs()}): {compared.line()}")

    def _oracle(self) -> str:
        """How much of the ceiling the samples hold: problems with any right sample among the first k, and all N."""
        right = oracle(self.sampled, self.k), oracle(self.sampled, samples_of(self.sampled))
        if right[1] is None:
            return ""
        n = samples_of(self.sampled)
        return f"; oracle (any right sample) {right[0] * 100:.1f} % of {self.k}, {right[1] * 100:.1f} % of {n}"

    def _differs(self) -> str:
        ours, theirs = sampling_of(self.strategy.strategy), sampling_of(self.sampled.strategy)
        differs = [f"{name} {theirs[name]} where it samples at {ours[name]}" for name in ours
                   if ours[name] != theirs[name]]
        return f"; the baseline differs: {', '.join(differs)}" if differs else ""


def oracle(sampled: Summary, k: int) -> float | None:
    """The share of problems where any of the first `k` samples passes the hidden tests; None when the run did not
    judge each sample (runs before issue 53)."""
    judged = [found for found in sampled.alternatives.values() if f"{SAMPLE}1" in found]
    if not judged:
        return None
    return sum(any(found.get(f"{SAMPLE}{i}", False) for i in range(1, k + 1)) for found in judged) / len(judged)


def samples_of(summary: Summary) -> int:
    """N of a `direct:n=N` run (0 where the name gives no count)."""
    count = summary.strategy.removeprefix(BEST_OF).split(",")[0]
    return int(count) if count.isdecimal() and len(count) < 6 else 0


def sampling_of(strategy: str) -> dict[str, str]:
    """The prompt format and temperature a strategy's samples are drawn with, from its options."""
    options = dict(item.partition("=")[::2] for item in strategy.partition(":")[2].split(",") if "=" in item)
    return {name: options.get(name, default) for name, default in SAMPLING_DEFAULTS.items()}


def completion_for(sampled: Summary, k: int) -> float:
    """Completion tokens per problem of k of the run's samples: k / N of what the N samples cost."""
    return sampled.completion_tokens * k / samples_of(sampled)


def equal_compute(summaries: list[Summary], s: Summary) -> EqualCompute | None:
    """`s` against the best-of-n run on its dataset, model and language sampled most like it (module docstring),
    at the closest completion tokens; None without one."""
    runs = [o for o in summaries if o.strategy.startswith(BEST_OF) and o.dataset == s.dataset and o.model == s.model
            and o.language == s.language and o.alternatives and o is not s and samples_of(o)]
    if not runs or s.strategy.startswith(BEST_OF) or not s.problems:
        return None
    wanted = sampling_of(s.strategy)
    sampled = max(runs, key=lambda o: sum(sampling_of(o.strategy)[name] == wanted[name] for name in wanted))
    k = min(range(1, samples_of(sampled) + 1), key=lambda k: abs(completion_for(sampled, k) - s.completion_tokens))
    return EqualCompute(s, sampled, k, completion_for(sampled, k))


def equal_compute_lines(summaries: list[Summary], label: Callable[[Summary], str]) -> list[str]:
    """A line per configuration that has a best-of-n run beside it, each named by `label`."""
    return [found.line(label) for s in summaries if (found := equal_compute(summaries, s)) is not None]

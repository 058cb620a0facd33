"""Library side of `solidcoder solve`: read the problem, build the models, run the pipeline, show and write results.

Progress goes to stderr (rich), the program to stdout or `--out`, the trajectory under the run directory. Exit
codes: 0 verified, 1 unverified (budget or loop exhausted, or no test ran; the best candidate is still printed,
marked), 2 bad input (raised as `BadInput` before anything is written), 3 infrastructure error (a model or the
sandbox failed; the trajectory so far is on disk and the message says why).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from solidcoder.errors import BadInput
from solidcoder.pipeline import SolveConfig, SolveResult, solve
from solidcoder.problem import Problem, TestCase, load_problem
from solidcoder.stages.base import Event
from solidcoder.textproblem import read_problem_text
from solidcoder.trajectory import Usage

EXIT_CODES = {"verified": 0, "unverified": 1, "infrastructure_error": 3}


@dataclass
class ModelChoice:
    """Which models to use and the run-wide caps."""

    specs: list[str] = field(default_factory=list)
    api_base: str | None = None
    api_key: str | None = None
    gguf: Path | None = None
    max_calls: int | None = None
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None


def load_input(path: Path, stdio: bool = False, function: str | None = None, tests: Path | None = None) -> Problem:
    """The problem from a problem JSON/JSONL or a free-text file, plus any `--tests` file."""
    if stdio and function:
        raise BadInput("give either --stdio or --function NAME, not both")
    if path.suffix in (".json", ".jsonl"):
        problem = load_problem(path)
        if (stdio and problem.kind != "stdio") or (function and problem.entry_point != function):
            raise BadInput(f"{path}: --stdio/--function contradict the problem file (kind {problem.kind!r})")
    else:
        problem = read_problem_text(path, "stdio" if stdio else None, function)
    if tests is not None:
        problem.public_tests = problem.public_tests + read_tests(tests, problem.kind)
    return problem


def read_tests(path: Path, kind: str) -> list[TestCase]:
    """Tests from a JSON list or a JSONL file of test objects (docs/problem-schema.md)."""
    try:
        text = path.read_text(encoding="utf-8")
        items = [json.loads(line) for line in text.splitlines() if line.strip()] if path.suffix == ".jsonl" \
            else json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BadInput(f"--tests {path}: cannot read tests ({exc})") from None
    if not isinstance(items, list):
        raise BadInput(f"--tests {path}: expected a JSON list of tests")
    tests = []
    for i, item in enumerate(items):
        try:
            test = TestCase.from_dict(item, default_kind=kind)
        except (ValueError, TypeError) as exc:
            raise BadInput(f"--tests {path}: test {i}: {exc}") from None
        if test.kind != kind:
            raise BadInput(f"--tests {path}: test {i} is a {test.kind} test but the problem is {kind}")
        tests.append(test)
    return tests


def build_models(choice: ModelChoice):
    from solidcoder.models.base import Budget, BudgetConfig
    from solidcoder.models.factory import ModelOptions, make_roster, parse_role_specs
    from solidcoder.stages.run import check_roles

    specs = parse_role_specs(choice.specs)
    check_roles(specs)
    budget = Budget(BudgetConfig(choice.max_calls, choice.max_total_tokens, choice.max_cost_usd))
    options = ModelOptions(api_base=choice.api_base, api_key=choice.api_key, gguf=choice.gguf, budget=budget)
    return make_roster(specs, options)


PIPELINE = "solidcoder+"


def run_solve(problem: Problem, config: SolveConfig, choice: ModelChoice, *, out: Path | None = None,
              prompts_dir: Path | None = None, prerank: int = 0, workers: int = 2, strategy: str = PIPELINE) -> int:
    """Solve `problem` and report; returns the exit code."""
    from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
    from solidcoder.prompting import PromptLibrary

    if out is not None and not out.parent.is_dir():
        raise BadInput(f"--out {out}: directory {out.parent} does not exist")
    _check_strategy(strategy, config, prerank)
    prompts = PromptLibrary.from_env(prompts_dir)
    check_stage_templates(prompts)  # a broken override fails now, as bad input, not in the middle of a run
    models = build_models(choice)
    if config.run_dir is None:
        config.run_dir = Path(".solidcoder") / "runs" / f"{problem.id}-{time.strftime('%Y%m%d-%H%M%S')}"
    if strategy != PIPELINE:
        return _run_strategy(strategy, problem, models, prompts, config, choice, out, workers)
    console = Console(stderr=True)
    sampling = Usage()
    with SandboxPool(SandboxConfig(workers=workers)) as pool:
        if prerank > 0:
            config.seed_code, sampling = _sampled_seed(problem, models, pool, prompts, prerank, config, console)
        result = solve(problem, models, pool, config, prompts=prompts, on_event=_progress(console))
    _write_program(result, out)
    _print_summary(console, result, config.run_dir, sampling)
    return EXIT_CODES[result.status]


def _check_strategy(strategy: str, config: SolveConfig, prerank: int) -> None:
    """The pipeline's own flags (--plans, --candidates, --no-sim, --prerank ...) apply to solidcoder+ only."""
    from solidcoder.strategies import make_strategy

    if strategy == PIPELINE:
        return
    make_strategy(strategy)  # BadInput for an unknown name, before anything runs
    if strategy.startswith(PIPELINE):
        raise BadInput(f"--strategy {strategy}: solve runs {PIPELINE} ablations with --no-shift-left, --no-sim ...")
    loop = {k: v for k, v in asdict(config).items() if k not in ("run_dir", "max_tokens")}
    if prerank or loop != {k: v for k, v in asdict(SolveConfig()).items() if k in loop}:
        raise BadInput(f"--plans, --candidates, --no-* and --prerank set the {PIPELINE} pipeline; with --strategy "
                       f"{strategy} name its options in the strategy (e.g. solidcoder:candidates=3)")


def _run_strategy(strategy: str, problem: Problem, models, prompts, config: SolveConfig, choice: ModelChoice,
                  out: Path | None, workers: int) -> int:
    from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
    from solidcoder.strategy_solve import solve_with_strategy
    from solidcoder.trajectory import Trajectory

    console = Console(stderr=True)
    console.print(f"[bold cyan]{'strategy':>14}[/] {strategy}", highlight=False)
    trajectory = Trajectory(config.run_dir, {"problem": problem.id, "strategy": strategy})
    with SandboxPool(SandboxConfig(workers=workers)) as pool:
        outcome = solve_with_strategy(strategy, problem, models, pool, prompts, trajectory, config.max_tokens,
                                      choice.max_calls)
    _write_code(outcome.code, outcome.verified, outcome.status, outcome.reason, out)
    usage = trajectory.usage
    console.print(f"[bold]{outcome.status}[/]: {outcome.reason}; {usage.calls} model calls, "
                  f"{usage.prompt_tokens}/{usage.completion_tokens} tokens; trajectory: {trajectory.path}",
                  highlight=False)
    return EXIT_CODES[outcome.status]


def _sampled_seed(problem, models, pool, prompts, samples: int, config: SolveConfig,
                  console) -> tuple[str | None, Usage]:
    """Prune-then-rank `samples` programs; the best one seeds the loop (None when every sample was pruned)."""
    from solidcoder.verify.select import sample_then_rank

    sampled = sample_then_rank(problem, models, pool, prompts, samples, config.candidate_temperature,
                               config.max_tokens)
    ranking = sampled.ranking
    pruned = ", ".join(f"{name} -{count}" for name, count in ranking.pruned.items())
    console.print(f"[bold cyan]{'samples':>14}[/] {samples} sampled ({sampled.usage.prompt_tokens}+"
                  f"{sampled.usage.completion_tokens} tokens); pruned {pruned}; "
                  f"{len(ranking.ranked)} distinct survivors", highlight=False)
    return (ranking.best.code if ranking.best else None), sampled.usage


def check_stage_templates(prompts) -> None:
    """Render every template the pipeline uses, in both I/O modes; BadInput names the first broken one."""
    from solidcoder.prompting import TEMPLATE_VARIABLES, sample_variables

    for name in (n for n in TEMPLATE_VARIABLES if n.startswith("stages/")):
        for mode in ("call", "stdin"):
            prompts.messages(name, **sample_variables(name, mode))


def _progress(console: Console):
    def show(event: Event) -> None:
        console.print(f"[bold cyan]{event.stage:>14}[/] {event.message}", highlight=False)

    return show


def _write_program(result: SolveResult, out: Path | None) -> None:
    _write_code(result.code, result.verified, result.status, result.reason, out)


def _write_code(code: str, verified: bool, status: str, reason: str, out: Path | None) -> None:
    code = code if verified else f"# UNVERIFIED ({status}): {reason}\n{code}"
    if out is None:
        print(code, end="" if code.endswith("\n") else "\n")
        return
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_text(code, encoding="utf-8")
    os.replace(tmp, out)


def _print_summary(console: Console, result: SolveResult, run_dir: Path, sampling: Usage) -> None:
    """The outcome and what it cost; `sampling` (solve --prerank) is counted in the totals and shown apart."""
    style = {"verified": "green", "unverified": "yellow"}.get(result.status, "red")
    table = Table(title=f"[{style}]{result.status}[/]: {result.reason}", show_header=False)
    loop = result.usage
    usage = Usage(loop.calls + sampling.calls, loop.prompt_tokens + sampling.prompt_tokens,
                  loop.completion_tokens + sampling.completion_tokens, loop.cost_usd + sampling.cost_usd)
    calls = f"{usage.calls} ({sampling.calls} of them sampling)" if sampling.calls else usage.calls
    rows = [("plans used", result.plans_used), ("debug rounds", result.debug_rounds),
            ("accumulated tests", len(result.accumulated_tests)), ("model calls", calls),
            ("tokens (prompt / completion)", f"{usage.prompt_tokens} / {usage.completion_tokens}"),
            ("cost", f"${usage.cost_usd:.4f}"), ("time", f"{result.elapsed_s:.1f} s"),
            ("trajectory", str(run_dir / "trajectory.json"))]
    for name, value in rows:
        table.add_row(name, str(value))
    console.print(table)

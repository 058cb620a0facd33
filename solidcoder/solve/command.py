"""Library side of `solidcoder solve`: read the problem, build the models, run the strategy, show and write results.

`solve` is a one-problem run of the bench's machinery (`solve/run.py`): by default `solidcoder-routed` (a
direct program, then ranked samples, then the `solidcoder+` preset of Algorithm 1, whose loop sizes and components
the --plans, --candidates, --no-* flags change). Progress goes to
stderr (rich), the program to stdout or `--out`, the trajectory and the paid replies (calls.jsonl) to the run's own
directory under `--run-dir` (default `.solidcoder/runs`; `SolveRun` in solve/run.py names it by the problem and the
configuration key, so the same problem with the same settings run again replays its recorded calls, as a resumed
bench does, and another problem's run is never overwritten). Exit codes: 0 verified,
1 unverified (budget or loop exhausted, or no test ran; the best program seen is still printed, marked), 2 bad
input (raised as `BadInput` before anything is written), 3 infrastructure error (a model or the sandbox failed:
nothing on stdout, one line on stderr saying why; the trajectory so far is on disk), 130 interrupted (Ctrl-C,
solve/stopping.py: within 2 s, "stopping…" on stderr, the calls in flight cancelled and kept in the trajectory as
cancelled, the trajectory on disk marked "interrupted"; a second Ctrl-C quits at once).

What a person reads is escaped (`solidcoder.escaping.terminal_safe`): the reason, the summary, the progress lines and
the errors on stderr always; the program on stdout when stdout is a terminal, so a program's escape sequences (a
clipboard write, a title, a clear screen) and bidirectional controls are shown, never obeyed. Piped or redirected,
stdout is the program byte for byte, as `--out` writes it; the `# UNVERIFIED` line above it is escaped and one line
either way, so that it stays a comment.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from solidcoder.errors import BadInput
from solidcoder.escaping import one_line, terminal_safe
from solidcoder.languages import chosen, for_problem
from solidcoder.problem import Problem, TestCase, load_problem
from solidcoder.solve.progress import call_progress
from solidcoder.solve.textproblem import read_problem_text
from solidcoder.stages.prompt_formats import SAMPLING
from solidcoder.strategies.selection import Selector
from solidcoder.wording import counted

if TYPE_CHECKING:
    from solidcoder.models.llamacpp import Generating

EXIT_CODES = {"verified": 0, "unverified": 1, "infrastructure_error": 3}


@dataclass(kw_only=True)
class ModelChoice:
    """Which models to use and the run-wide caps."""

    specs: list[str] = field(default_factory=list)
    api_base: str | None = None
    api_key: str | None = None
    gguf: Path | None = None
    threads: int | None = None
    max_calls: int | None = None
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None


@dataclass(kw_only=True)
class SolveOptions:
    """The strategy and how to run it. `loop` holds changes to Algorithm 1's settings (p, d, a, candidates, the
    components), from solve's flags; they apply to the solidcoder family only."""

    strategy: str = "solidcoder-routed"
    loop: dict[str, Any] = field(default_factory=dict)
    prerank: int = 0
    selector: Selector = field(default_factory=Selector)  # how --prerank picks among its surviving samples
    max_tokens: int | None = None
    run_dir: Path | None = None
    out: Path | None = None
    prompts_dir: Path | None = None
    workers: int = 2
    hidden: tuple[Path, ...] = ()  # files no sandboxed run may see (the problem file and its tests)


def load_input(path: Path, stdio: bool = False, function: str | None = None, tests: Path | None = None,
               program_language: str | None = None) -> Problem:
    """The problem from a problem JSON/JSONL or a free-text file, plus any `--tests` file, its program asked for in
    `program_language` (`--language`; default: the problem file's, else Python). Other than Python, a pasted problem
    is read as stdin/stdout and a call problem is bad input."""
    if stdio and function:
        raise BadInput("give either --stdio or --function NAME, not both")
    native = chosen(program_language or "python").native
    if path.suffix in (".json", ".jsonl"):
        problem = load_problem(path)
        if (stdio and problem.kind != "stdio") or (function and problem.entry_point != function):
            raise BadInput(f"{path}: --stdio/--function contradict the problem file (kind {problem.kind!r})")
    else:
        problem = read_problem_text(path, "stdio" if stdio or native and not function else None, function)
    problem = _in_language(problem, path, program_language)
    if tests is not None:
        problem.public_tests = problem.public_tests + read_tests(tests, problem.kind)
    warn_before_calls(problem, Console(stderr=True))
    return problem


def _in_language(problem: Problem, path: Path, program_language: str | None) -> Problem:
    """`problem` with its program asked for in `program_language` (None: its own), whose toolchain is installed;
    BadInput for a call problem in a language other than Python."""
    name = program_language or problem.language
    return replace(problem, language=for_problem(name, problem.kind, f"--language {name}: {path}").name)


def warn_before_calls(problem: Problem, console: Console) -> None:
    """What the user should know before any call is paid for: examples of the statement that could not be read,
    and a problem with no test at all (its program cannot be verified), with what would add tests."""
    unread = problem.meta.get("unreadable_examples", 0)
    if unread:
        _warn(console, f"{counted(unread, 'example')} could not be read, so not used as tests: an Input: or Output: "
                       "that is not Python or JSON values, or that names no parameter of the function")
    if not problem.public_tests:
        _warn(console, "no tests: the program cannot be verified, and the run ends unverified (exit 1); add tests "
                       "with --tests FILE, or examples in the statement (`>>> f(1)` and its result on the next "
                       "line, `assert f(1) == 2`, `Input: x = 1 Output: 2`, or Input/Output sections for --stdio)")


def _warn(console: Console, text: str) -> None:
    console.print(Text.assemble(("warning: ", "bold yellow"), terminal_safe(text)), soft_wrap=True)


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


def build_models(choice: ModelChoice, on_progress: Callable[[Generating], None] | None = None):
    """The roster; --max-calls is the problem's cap (kept by the recording model), tokens and cost the budget's.
    `on_progress` hears how each generation of the embedded model is going (which call's sample, its tokens)."""
    from solidcoder.models.base import Budget, BudgetConfig
    from solidcoder.models.factory import ModelOptions, make_roster, parse_role_specs
    from solidcoder.strategies.paper_settings import check_roles

    specs = parse_role_specs(choice.specs)
    check_roles(specs)
    budget = Budget(BudgetConfig(max_tokens=choice.max_total_tokens, max_cost_usd=choice.max_cost_usd))
    options = ModelOptions(api_base=choice.api_base, api_key=choice.api_key, gguf=choice.gguf, budget=budget,
                           threads=choice.threads, on_progress=on_progress)
    return make_roster(specs, options)


def run_solve(problem: Problem, opts: SolveOptions, choice: ModelChoice) -> int:
    """Solve `problem` and report; returns the exit code. The run goes to a directory of its own under --run-dir
    (`SolveRun`), replaying any call recorded there; Ctrl-C stops it (solve/stopping.py) and returns 130."""
    from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
    from solidcoder.solve.run import SolveLimits, solve_problem
    from solidcoder.solve.stopping import Stopping

    console = Console(stderr=True)
    strategy, prompts, models = _prepare(opts, choice, console, problem.language)
    limits = SolveLimits(max_tokens=opts.max_tokens, max_calls=choice.max_calls, prerank=opts.prerank,
                         selector=opts.selector)
    run = _run_of(problem, opts, strategy, prompts, models, limits)
    trajectory, log = _trajectory(problem, opts, strategy, console, run), run.replay_log()
    stopping = Stopping(lambda text: console.print(Text(text, style="bold yellow")), trajectory.interrupted,
                        lambda: _said_interrupted(console, trajectory))
    try:
        config = SandboxConfig(workers=opts.workers, hidden_paths=tuple(map(str, opts.hidden)))
        with SandboxPool(config) as pool:
            outcome = stopping.run(solve_problem(strategy, problem, models, pool, prompts, trajectory, limits,
                                                 log, run.key))
    except (KeyboardInterrupt, asyncio.CancelledError):
        return _interrupted(console, trajectory)
    finally:
        log.close()
    return _report(console, outcome, opts.out)


def _prepare(opts: SolveOptions, choice: ModelChoice, console: Console, program_language: str):
    """The strategy, prompts and models, every input checked (BadInput) before the run directory is touched."""
    from solidcoder.prompting import PromptLibrary, check_templates
    from solidcoder.strategies.registry import check_language

    if opts.out is not None and not opts.out.parent.is_dir():
        raise BadInput(f"--out {opts.out}: directory {opts.out.parent} does not exist")
    strategy = make_solve_strategy(opts)
    check_requirements(strategy, opts)
    check_language(strategy, program_language, f"--strategy {opts.strategy}")
    prompts = PromptLibrary.from_env(opts.prompts_dir)
    check_templates(prompts)  # a broken override fails now, as bad input, not in the middle of a run
    models = build_models(choice, call_progress(console).generating)
    return strategy, prompts, models


def _trajectory(problem: Problem, opts: SolveOptions, strategy, console: Console, run):
    from solidcoder.core.trajectory import Trajectory

    console.print(Text.assemble(("strategy ", "bold cyan"), terminal_safe(opts.strategy)))
    return Trajectory(run.directory, {"problem": problem.to_dict(), "strategy": opts.strategy,
                                      "settings": strategy.settings()}, on_step=_progress(console))


def _run_of(problem: Problem, opts: SolveOptions, strategy, prompts, models, limits):
    """The run's directory and key: what changes answers, as bench keys its configurations (the model by spec, each
    role's own as `role=spec`; the templates by their text)."""
    from solidcoder.bench.plan import templates_digest
    from solidcoder.models.factory import DEFAULT_ROLE, as_roster
    from solidcoder.solve.run import SolveRun

    roster = as_roster(models)
    model = ",".join(f"{role}={roster.for_role(role).name}" if role != DEFAULT_ROLE else roster.for_role(role).name
                     for role in sorted(roster.by_role, key=lambda role: role != DEFAULT_ROLE))
    configuration = {"strategy": opts.strategy, "settings": strategy.settings(), "model": model,
                     "max_tokens": limits.max_tokens, "max_calls": limits.max_calls, "prerank": limits.prerank,
                     "selector": [limits.selector.name, limits.selector.orm] if limits.prerank else None,
                     "prompts": templates_digest(prompts, tuple(strategy.templates))}
    return SolveRun.of(opts.run_dir, problem, configuration)


def _report(console: Console, outcome, out: Path | None) -> int:
    """The program (stdout or --out) and the summary; a model or sandbox failure is one line and exit 3."""
    if outcome.status == "infrastructure_error":
        console.print(Text(one_line(f"error: {outcome.reason} (trajectory: {outcome.trajectory.path})")),
                      soft_wrap=True)
        return EXIT_CODES[outcome.status]
    _write_code(outcome.code, outcome.verified, outcome.status, outcome.reason, out)
    _print_summary(console, outcome)
    return EXIT_CODES[outcome.status]


def _interrupted(console: Console, trajectory) -> int:
    """Ctrl-C: the trajectory so far is kept, marked interrupted (the calls it cancelled marked too); exit 130 as a
    shell reports SIGINT."""
    trajectory.interrupted()
    _said_interrupted(console, trajectory)
    return 130


def _said_interrupted(console: Console, trajectory) -> None:
    console.print(Text(terminal_safe(f"interrupted: the trajectory so far is in {trajectory.path}; run the same "
                                     f"command again to resume it")), soft_wrap=True)


def make_solve_strategy(opts: SolveOptions):
    """The strategy by name, with solve's loop flags applied; BadInput when they name a strategy without a loop."""
    from solidcoder.strategies import make_strategy

    strategy = make_strategy(opts.strategy)  # BadInput for an unknown name, before anything runs
    changed = strategy.with_loop(opts.loop) if opts.loop else strategy
    if opts.selector.name != "majority" and not opts.prerank:
        raise BadInput("--selector picks among --prerank's samples: give --prerank N too (solidcoder-routed's tier 1 "
                       "takes its own: --strategy solidcoder-routed:selector=NAME)")
    if changed is None or opts.prerank and not strategy.takes_seed:
        raise BadInput(f"--plans, --debug-rounds, --oracle-rounds, --candidates and --no-* set the loop of solidcoder, "
                       f"solidcoder+ and solidcoder-routed's tier 2, --prerank seeds solidcoder and solidcoder+; "
                       f"--strategy {opts.strategy} takes neither")
    return changed


def check_requirements(strategy, opts: SolveOptions) -> None:
    """BadInput naming a tool the strategy (or --prerank's pruning) runs that is not installed, before any call."""
    from solidcoder.requirements import check_installed
    from solidcoder.strategies.selection import REQUIRES

    check_installed(strategy.requires, f"--strategy {opts.strategy}")
    check_installed(REQUIRES + opts.selector.requires if opts.prerank else (), "--prerank")


def _progress(console: Console):
    """One line per model call as it is recorded: its number, the template it rendered, its samples, tokens and
    time, e.g. `model call 3: paper/code  156 prompt + 187 completion tokens, 4.2 s` (`solve/progress.py`, where the
    live line of the call in flight is too); a failed call names the error's kind only, as the run's last line says
    why, once, and the trajectory holds the whole message."""
    return call_progress(console).step


def _write_code(code: str, verified: bool, status: str, reason: str, out: Path | None) -> None:
    """The program to `out`, or to stdout: escaped on a terminal, byte for byte when piped or redirected."""
    marked = "UNVERIFIED" if status == "unverified" else f"UNVERIFIED ({status})"
    code = code if verified else f"# {marked}: {one_line(reason)}\n{code}"
    if out is None:
        shown = terminal_safe(code) if sys.stdout.isatty() else code
        print(shown, end="" if shown.endswith("\n") else "\n")
        return
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_text(code, encoding="utf-8")
    os.replace(tmp, out)


def _prerank_row(header: dict) -> list[tuple[str, str]]:
    if "prerank" not in header:
        return []
    ranked = header["prerank"]
    pruned = ", ".join(f"{name} -{count}" for name, count in ranked["pruned"].items())
    return [("prerank", f"{ranked['samples']} sampled; pruned {pruned or 'none'}; "
                        f"{counted(ranked['survivors'], 'survivor')}")]


def _print_summary(console: Console, outcome) -> None:
    """The outcome and its reason on one left-aligned line, printed whole (the terminal wraps it, rich does not),
    then what applies to this run, in two columns without a box, and the trajectory's path on a line of its own."""
    call_progress(console).close()
    style = {"verified": "green", "unverified": "yellow"}.get(outcome.status, "red")
    console.print(Text.assemble((outcome.status, f"bold {style}"), f": {terminal_safe(outcome.reason)}"),
                  soft_wrap=True)
    table = Table.grid(padding=(0, 2))
    table.add_column(style="cyan")
    table.add_column(overflow="fold")
    for name, value in _summary_rows(outcome):
        table.add_row(name, Text(terminal_safe(str(value))))
    console.print(table)
    console.print(Text(terminal_safe(f"trajectory: {outcome.trajectory.path}")), soft_wrap=True)


def _summary_rows(outcome) -> list[tuple[str, object]]:
    """Only what applies: the loop's counts when the loop ran, --prerank's row when it sampled, the calls (those
    sampling for --prerank and those replayed from the run directory counted apart), tokens, the cost when it was
    not nothing, and the time."""
    trajectory, attempt, usage = outcome.trajectory, outcome.attempt, outcome.trajectory.usage
    stages = attempt.stages if attempt else []
    loop = [("plans used", stages.count("plan")), ("debug rounds", stages.count("debug") + stages.count("fix")),
            ("accumulated tests", len(attempt.kept or ()) if attempt else 0)] if "plan" in stages else []
    sampled = len(trajectory.calls(SAMPLING.template)) if "prerank" in trajectory.header else 0
    apart = [f"{sampled} of them sampling"] * bool(sampled) + [f"{usage.replayed} replayed"] * bool(usage.replayed)
    return [*loop, *_prerank_row(trajectory.header),
            ("model calls", f"{usage.calls} ({', '.join(apart)})" if apart else usage.calls),
            ("tokens (prompt / completion)", f"{usage.prompt_tokens} / {usage.completion_tokens}"),
            *[("cost", f"${usage.cost_usd:.4f}")] * (usage.cost_usd > 0), ("time", f"{trajectory.elapsed_s():.1f} s")]

"""The `solidcoder` command line: parse options, call the library, print results.

Every command is thin. Bad input raises `BadInput`, which the command group (`Commands`) turns into one line on
stderr and exit code 2. A flag means the same on every command that has it (see docs/cli.md). Help reads as the
docs write it (`cli/help.py`): `-h` or `--help` on every command, `solve [OPTIONS] PROBLEM`, `--workers N`,
a flag with nothing after it, and one example per command; `solidcoder --version` prints the version. Whatever a
command prints that a model, a program or a run directory wrote is shown through `solidcoder.escaping`: control
and bidirectional characters as escapes, never raw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from solidcoder.cli.help import HELP, Command, Commands
from solidcoder.cli.options import (
    SOLVE_STRATEGY_HELP,
    STRATEGY_HELP,
    ApiBase,
    ApiKey,
    DataFile,
    ExecutorOption,
    MaxCalls,
    MaxTokens,
    ModelSpecs,
    ProgramLanguage,
    PromptsDir,
    Threads,
    Workers,
)
from solidcoder.cli.prompts import prompts_app
from solidcoder.cli.train import train_app
from solidcoder.datasets.registry import dataset_help, subset_help
from solidcoder.escaping import terminal_safe

app = typer.Typer(cls=Commands, no_args_is_help=True, add_completion=False, context_settings=HELP)


def _echo(text: str) -> None:
    """A line of `bench`, `report` or `rank` output: it may quote a dataset, a run directory or a model's error, so its
    control characters are shown as escapes."""
    typer.echo(terminal_safe(text))


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"solidcoder {version('solidcoder')}")
        raise typer.Exit()


@app.callback()
def _group(
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_print_version,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Make language models write correct code.

    Example: solidcoder solve examples/is_palindrome.txt
    """


@app.command(cls=Command)
def check(
    solution: Annotated[Path, typer.Argument(help="The candidate program; its suffix names its language (.py, .cpp, "
                                             ".js; otherwise the problem's).")],
    problem: Annotated[Path, typer.Option("--problem-file", help="Problem JSON file (see docs/problem-schema.md).")],
    hidden: Annotated[bool, typer.Option("--hidden", help="Also run the hidden tests.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print verdicts as JSON.")] = False,
) -> None:
    """Judge SOLUTION against the problem's tests (public, and hidden with --hidden); exit 0 only when every test
    passes.

    Example: solidcoder check examples/two_sum.py --problem-file examples/two_sum.json --hidden

    Example: solidcoder check examples/sum_pairs.cpp --problem-file examples/sum_pairs.json --hidden
    """
    from solidcoder.commands import run_check
    from solidcoder.errors import SandboxFailure
    from solidcoder.escaping import one_line

    try:
        ok = run_check(solution, problem, hidden=hidden, as_json=as_json)
    except SandboxFailure as exc:  # no verdict: the sandbox failed, not the program (exit 3, as solve's)
        typer.echo(f"error: the sandbox failed, not the program: {one_line(str(exc))}", err=True)
        raise typer.Exit(3) from None
    raise typer.Exit(0 if ok else 1)


@app.command(cls=Command)
def trace(
    program: Annotated[Path, typer.Argument(help="Python file to run.")],
    stdin: Annotated[Path | None, typer.Option("--stdin", help="File fed to the program's standard input.")] = None,
    call: Annotated[str | None, typer.Option("--call", help='A call to make after loading, e.g. "f(1, 2)".')] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the trace as JSON, each value with its type.")]
    = False,
) -> None:
    """Run PROGRAM once in the sandbox and print each variable's final value, per scope, what it printed and what
    --call returned; when it raises, the variables at the crash and the traceback. Exit 0 when it ran to the end.

    Example: solidcoder trace examples/two_sum.py --call "two_sum([2, 7, 11], 9)"
    """
    from solidcoder.commands import run_trace

    ok = run_trace(program, stdin=stdin, call=call, as_json=as_json)
    raise typer.Exit(0 if ok else 1)

app.add_typer(prompts_app, name="prompts")


@app.command(cls=Command)
def serve(
    model: Annotated[str, typer.Argument(help="Model to serve: a hub id or path for vllm, a GGUF file for llama-cpp.",
                                         metavar="MODEL")],
    engine: Annotated[str, typer.Option("--engine", help="vllm or llama-cpp.")] = "llama-cpp",
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1.")] = 8000,
    tensor_parallel: Annotated[int, typer.Option("--tensor-parallel-size", help="GPUs to shard over (vllm).")] = 1,
    max_model_len: Annotated[int | None, typer.Option("--max-model-len", help="Context length (vllm).")] = None,
    n_ctx: Annotated[int, typer.Option("--n-ctx", help="Context length (llama-cpp).")] = 4096,
    ready_timeout: Annotated[float, typer.Option("--ready-timeout", help="Seconds to wait for the server.")] = 600.0,
) -> None:
    """Start a local OpenAI-compatible server, print how to use it, and stop it on Ctrl-C.

    Example: solidcoder serve qwen2.5-coder-1.5b-instruct-q4_k_m.gguf --port 8000
    """
    from solidcoder.models.serve import ServeConfig, run_server

    cfg = ServeConfig(
        engine, model, port, tensor_parallel_size=tensor_parallel, max_model_len=max_model_len, n_ctx=n_ctx
    )
    code = run_server(cfg, ready_timeout, typer.echo)
    raise typer.Exit(code)


@app.command(cls=Command)
def rank(
    candidates: Annotated[Path, typer.Argument(help="JSONL of samples: {problem_id, code} per line.",
                                               metavar="SAMPLES")],
    dataset: Annotated[str, typer.Option("--dataset", metavar="NAME", help="Dataset the samples answer.")]
    = "humaneval",
    data_file: DataFile = None,
    prune: Annotated[list[str] | None, typer.Option("--prune", help="Filters: syntax, lint, tests:N (public), "
                                                    "suite:N (the whole suite's first N).")] = None,
    orm: Annotated[str, typer.Option("--orm", metavar="DIR", help="Trained ORM directory, or none.")] = "none",
    generated_tests: Annotated[Path | None, typer.Option(
        "--generated-tests", metavar="FILE", help="JSONL of {problem_id, tests}: tests written from the problem "
        "alone; adds CodeT's agreement selector.")] = None,
    k: Annotated[int, typer.Option("--k", help="Best-of-k.")] = 64,
    executor: ExecutorOption = "local",
    preset: Annotated[str, typer.Option("--preset", help="default (cumulative filters, behaviour majority) or paper "
                                        "(each filter alone and V_all, tests-passed baseline, parallel PPS over 5 "
                                        "passes: docs/benchmarks.md); --prune overrides its filters.")] = "default",
) -> None:
    """Prune-then-rank table: Best-of-k and programs per second per filter, with and without the ORM.

    Example: solidcoder rank benchmarks/results/prune_rank_samples.jsonl --k 8
    """
    from solidcoder.datasets import DataOptions, load_dataset
    from solidcoder.verify.table import rank_preset, run_rank

    settings = rank_preset(preset, prune)
    problems, _ = load_dataset(dataset, DataOptions(data_file=data_file))
    _echo(run_rank(candidates, problems, settings, orm, k, executor, generated_tests, data_file))


# solve's own options, named here so that its signature stays one line an option.
Function = Annotated[str | None, typer.Option("--function", metavar="NAME", help="Force a call problem on NAME.")]
ExtraTests = Annotated[Path | None, typer.Option("--tests", metavar="FILE", help="JSON list / JSONL of extra public "
                                                 "tests.")]
Gguf = Annotated[Path | None, typer.Option("--gguf", metavar="FILE", help="GGUF file for the embedded model.")]
Out = Annotated[Path | None, typer.Option("--out", metavar="FILE", help="Write the program here instead of stdout.")]
TrajectoryDir = Annotated[Path | None, typer.Option("--run-dir", metavar="DIR", help="Parent of the run's own "
                                                   "directory (default .solidcoder/runs); rerun to resume.")]
Prerank = Annotated[int, typer.Option("--prerank", min=0, help="Sample N programs, prune and rank them, and start "
                                      "from the best.")]
Selection = Annotated[str, typer.Option("--selector", metavar="NAME", help="How --prerank picks among its surviving "
                                        "samples: majority (behaviour on the public inputs), agreement (tests the "
                                        "model writes from the problem, one call) or orm (with --orm DIR).")]
OrmDir = Annotated[Path | None, typer.Option("--orm", metavar="DIR", help="A trained outcome reward model "
                                             "(solidcoder train orm), for --selector orm.")]
SolveStrategy = Annotated[str, typer.Option("--strategy", metavar="NAME", help=SOLVE_STRATEGY_HELP)]


@app.command(cls=Command)
def solve(
    problem: Annotated[Path, typer.Argument(help="problem.txt (free text) or a problem JSON.")],
    stdio: Annotated[bool, typer.Option("--stdio", help="Force a stdin/stdout program.")] = False,
    function: Function = None,
    tests: ExtraTests = None,
    model: ModelSpecs = None,
    api_base: ApiBase = None,
    api_key: ApiKey = None,
    gguf: Gguf = None,
    threads: Threads = None,
    prompts: PromptsDir = None,
    out: Out = None,
    run_dir: TrajectoryDir = None,
    plans: Annotated[int | None, typer.Option("--plans", min=1, help="Plans (p; 5).")] = None,
    debug_rounds: Annotated[int | None, typer.Option("--debug-rounds", min=0, help="Debug rounds (d; 5).")] = None,
    oracle_rounds: Annotated[int | None, typer.Option("--oracle-rounds", min=0, help="Oracle rounds (a; 3).")] = None,
    candidates: Annotated[int | None, typer.Option("--candidates", min=1, help="Programs per plan (K).")] = None,
    prerank: Prerank = 0,
    selector: Selection = "majority",
    orm: OrmDir = None,
    no_shift_left: Annotated[bool, typer.Option("--no-shift-left", help="Plan without edge-case analysis.")] = False,
    no_sim: Annotated[bool, typer.Option("--no-sim", help="No intermediate simulation.")] = False,
    no_oracle: Annotated[bool, typer.Option("--no-oracle", help="Unjudged, crash-only generated tests.")] = False,
    no_live: Annotated[bool, typer.Option("--no-live", help="The model's trace decides generated tests.")] = False,
    no_defensive: Annotated[bool, typer.Option("--no-defensive", help="Do not keep failing tests.")] = False,
    max_tokens: MaxTokens = None,
    max_calls: MaxCalls = None,
    max_total_tokens: Annotated[int | None, typer.Option("--max-total-tokens", help="Cap on tokens.")] = None,
    max_cost: Annotated[float | None, typer.Option("--max-cost", help="Cap on cost in USD.")] = None,
    workers: Workers = 2,
    strategy: SolveStrategy = "solidcoder-routed",
    language: ProgramLanguage = None,
) -> None:
    """Write a program for PROBLEM, verified by execution. Exit 0 verified, 1 unverified, 2 bad input, 3 model or
    sandbox failure, 130 interrupted.

    Example: solidcoder solve examples/is_palindrome.txt"""
    from solidcoder.solve.command import ModelChoice, SolveOptions, load_input, run_solve
    from solidcoder.strategies.selection import Selector

    loop = _loop_changes({"p": plans, "d": debug_rounds, "a": oracle_rounds, "candidates": candidates},
                         {"shift_left": no_shift_left, "simulation": no_sim, "oracle": no_oracle, "live": no_live,
                          "defensive": no_defensive})
    opts = SolveOptions(strategy=strategy, loop=loop, prerank=prerank, max_tokens=max_tokens, run_dir=run_dir, out=out,
                        prompts_dir=prompts, workers=workers, hidden=tuple(p for p in (problem, tests) if p),
                        selector=Selector(selector, str(orm) if orm else None))
    choice = ModelChoice(specs=model or [], api_base=api_base, api_key=api_key, gguf=gguf, threads=threads,
                         max_calls=max_calls, max_total_tokens=max_total_tokens, max_cost_usd=max_cost)
    code = run_solve(load_input(problem, stdio, function, tests, language), opts, choice)
    raise typer.Exit(code)


def _loop_changes(sizes: dict[str, int | None], off: dict[str, bool]) -> dict[str, int | bool]:
    """solve's loop flags as changes to Algorithm 1's settings: the sizes given, the components turned off."""
    return {k: v for k, v in sizes.items() if v is not None} | {k: False for k, v in off.items() if v}


# bench's own options, named here so that its signature stays one line an option.
Dataset = Annotated[str, typer.Option("--dataset", metavar="NAME", help=dataset_help())]
BenchStrategy = Annotated[str, typer.Option("--strategy", metavar="NAME", help=STRATEGY_HELP)]
ResultsDir = Annotated[Path, typer.Option("--run-dir", metavar="DIR", help="Where results go; rerun to resume.")]
Ids = Annotated[Path | None, typer.Option("--ids", metavar="FILE", help="File with one problem id per line.")]
Subset = Annotated[str | None, typer.Option("--subset", metavar="NAME", help=subset_help())]
Temperature = Annotated[float | None, typer.Option("--temperature", metavar="T", help="Sampling temperature.")]


@app.command(cls=Command)
def bench(
    dataset: Dataset,
    strategy: BenchStrategy = "direct",
    model: ModelSpecs = None,
    api_base: ApiBase = None,
    api_key: ApiKey = None,
    run_dir: ResultsDir = Path("runs/bench"),
    data_file: DataFile = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N problems.")] = None,
    ids: Ids = None,
    subset: Subset = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Model calls in flight.")] = 8,
    samples: Annotated[int, typer.Option("--samples", help="Samples per problem (pass@k).")] = 1,
    temperature: Temperature = None,
    max_tokens: MaxTokens = None,
    prompts: PromptsDir = None,
    workers: Workers = 2,
    retries: Annotated[int, typer.Option("--retries", help="Attempts per model call.")] = 3,
    label: Annotated[str, typer.Option("--label", help="Name for this configuration in reports.")] = "",
    max_calls: MaxCalls = None,
    executor: ExecutorOption = "local",
    threads: Threads = None,
    language: ProgramLanguage = None,
) -> None:
    """Run a strategy on a benchmark, concurrently and resumably; rerun the same command to resume.

    Example: solidcoder bench --dataset humaneval --strategy direct --limit 10 --run-dir runs/he
    """
    from solidcoder.bench.command import run_bench
    from solidcoder.bench.plan import BenchOptions
    from solidcoder.datasets import DataOptions
    from solidcoder.models.factory import DEFAULT_ROLE, parse_role_specs

    try:
        roles = parse_role_specs(model or [])
        opts = BenchOptions(
            dataset=dataset, strategy=strategy, model=roles.pop(DEFAULT_ROLE, "local"), run_dir=run_dir,
            api_base=api_base, api_key=api_key,
            data=DataOptions(data_file=data_file, limit=limit, ids_file=ids, subset=subset,
                             language=language or "python"),
            concurrency=concurrency,
            samples=samples, temperature=temperature, max_tokens=max_tokens, prompts_dir=prompts, workers=workers,
            retries=retries, label=label, max_calls=max_calls, role_models=roles, executor=executor, threads=threads)
        run_bench(opts, _echo)
    except KeyboardInterrupt:
        typer.echo(terminal_safe(f"interrupted: finished problems are saved in {run_dir}; rerun the same command to "
                                 "resume"), err=True)
        raise typer.Exit(130) from None


@app.command(cls=Command)
def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories to compare side by side.",
                                                   metavar="RUN_DIR...")],
    html: Annotated[Path | None, typer.Option("--html", metavar="FILE", help="Also write the self-contained HTML "
                                              "report (plots, each problem's view) to FILE; none without it.")]
    = None,
    same_problems: Annotated[bool, typer.Option("--same-problems", help="Score only problems every run finished.")]
    = False,
    ids: Ids = None,
) -> None:
    """Print pass@1 and cost tables for run directories; with --html, also write a self-contained HTML report.

    Example: solidcoder report runs/direct runs/solidcoder --html report.html
    """
    from solidcoder.bench.command import run_report

    run_report(run_dirs, html, _echo, same_problems, ids)


@app.command(cls=Command)
def show(
    path: Annotated[Path, typer.Argument(help="A bench or solve run directory, its trajectory.json, or a "
                                         "parent of run directories.", metavar="PATH")],
    problem: Annotated[str | None, typer.Option("--problem", metavar="ID", help="One problem of the run, by its id: "
                                                "its phases, calls and executions as a tree.")] = None,
    full: Annotated[bool, typer.Option("--full", help="Prompts, replies and programs whole, not shortened.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the same content as JSON.")] = False,
) -> None:
    """List a run's problems (pass/fail, where each ended, calls, tokens, seconds), or show one problem as a tree.

    Example: solidcoder show runs/he --problem HumanEval/0
    """
    from solidcoder.show.command import run_show

    run_show(path, problem, full, as_json)


app.add_typer(train_app, name="train")


def main() -> None:  # pragma: no cover - thin wrapper for `python -m solidcoder`
    app(prog_name="solidcoder")


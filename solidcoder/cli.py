"""The `solidcoder` command line: parse options, call the library, print results.

Every command is thin. Bad input raises `BadInput`, which the command group (`_Commands`) turns into one line on
stderr and exit code 2. A flag means the same on every command that has it (see docs/cli.md). Help reads as the
docs write it (`_Command`, `_readable`): `-h` or `--help` on every command, `solve [OPTIONS] PROBLEM`, `--workers N`,
a flag with nothing after it, and one example per command; `solidcoder --version` prints the version.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from solidcoder.errors import BadInput
from solidcoder.strategies import STRATEGIES

VALUE_NAMES = {"int": "N", "integer": "N", "integer range": "N", "float": "NUMBER", "float range": "NUMBER",
               "path": "PATH"}
HELP = {"help_option_names": ["-h", "--help"]}  # context settings: children inherit them
# `--strategy` help names every strategy `make_strategy` builds (STRATEGIES), so it cannot fall behind them.
STRATEGY_HELP = (f"{', '.join(STRATEGIES)}; ablations solidcoder_no_PART and solidcoder+_no_PART; options after a "
                 "colon, e.g. solidcoder:candidates=3 (docs/pipeline.md).")
SOLVE_STRATEGY_HELP = ("solidcoder-routed (default) tries cheap tiers first, solidcoder+ is Algorithm 1 with the "
                       f"recommended refinements, solidcoder the paper's. One of {STRATEGY_HELP}")


class _Argument(TyperArgument):
    """A positional argument as the docs write it: `PROBLEM` (`[PROBLEM]` when optional), no type beside it."""

    def _usage_display_name(self) -> str:
        return self.display_name_raw if self.required else f"[{self.display_name_raw}]"

    def display_type_rich(self, ctx) -> None:
        return None


def _readable(params: list) -> None:
    """Name each argument in capitals (`RUN_DIR...`), each option's value by its kind unless the option names it
    (`--workers N`, `--model [ROLE=]MODEL`), and nothing after a flag; typer would write `{problem}`, `<bool>`."""
    for param in params:
        if isinstance(param, TyperArgument):
            param.__class__ = _Argument  # a subclass that only changes how help shows it
            param.metavar = param.metavar or param.name.upper() + ("..." if param.nargs != 1 else "")
        elif param.metavar is None:
            param.metavar = "" if param.is_flag else VALUE_NAMES.get(_kind(param), "TEXT")


def _kind(param) -> str:
    """The option's click type name (typer up to 0.2x), or its annotation's (later typer keeps the annotation)."""
    if getattr(param, "type", None) is not None:
        return param.type.name
    described = param.type_descriptor
    return "path" if described.is_path else getattr(described.annotation, "__name__", "")


class _ReadableHelp:
    """Mixin for commands and groups: their parameters and their help option shown as `_readable` names them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _readable(self.params)

    def get_help_option(self, ctx):
        option = super().get_help_option(ctx)
        _readable([option] if option is not None else [])
        return option


class _Command(_ReadableHelp, TyperCommand):
    """Every command's class (`@app.command(cls=_Command)`): readable help."""


class _Commands(_ReadableHelp, TyperGroup):
    """The command groups: readable help, and `BadInput` raised anywhere below becomes one line on stderr and exit
    code 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BadInput as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None


app = typer.Typer(cls=_Commands, no_args_is_help=True, add_completion=False, context_settings=HELP)


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


@app.command(cls=_Command)
def check(
    solution: Annotated[Path, typer.Argument(help="Python file with the candidate solution.")],
    problem: Annotated[Path, typer.Option("--problem-file", help="Problem JSON file (see docs/problem-schema.md).")],
    hidden: Annotated[bool, typer.Option("--hidden", help="Also run the hidden tests.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print verdicts as JSON.")] = False,
) -> None:
    """Judge SOLUTION against the problem's tests (public, and hidden with --hidden); exit 0 only when every test
    passes.

    Example: solidcoder check examples/two_sum.py --problem examples/two_sum.json --hidden
    """
    from solidcoder.commands import run_check

    ok = run_check(solution, problem, hidden=hidden, as_json=as_json)
    raise typer.Exit(0 if ok else 1)


@app.command(cls=_Command)
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


prompts_app = typer.Typer(cls=_Commands, no_args_is_help=True,
                          help="List, show and export the prompt templates.\n\n"
                          "Example: solidcoder prompts export my_prompts")
app.add_typer(prompts_app, name="prompts")
PromptsDir = Annotated[Path | None, typer.Option("--prompts", metavar="DIR",
                                                 help="Directory of override templates (wins first).")]
# Options several commands share, defined once so that each means the same everywhere.
ModelSpecs = Annotated[list[str] | None, typer.Option(
    "--model", metavar="[ROLE=]MODEL",
    help="Repeatable: a spec such as openai/NAME with --api-base, an API model (gpt-4o-mini) or a .gguf file; "
         "ROLE=MODEL for a pipeline role. Default: the embedded llama.cpp engine running --gguf, $SOLIDCODER_GGUF, "
         "a GGUF shipped in a package (extra `tiny`: SmolLM2-135M) or cached, else Qwen2.5-Coder-1.5B-Instruct "
         "Q4_K_M, downloaded once.")]
ApiBase = Annotated[str | None, typer.Option("--api-base", metavar="URL", help="OpenAI-compatible server URL.")]
ApiKey = Annotated[str | None, typer.Option("--api-key", metavar="KEY", envvar="SOLIDCODER_API_KEY",
                                            help="API key (default: $SOLIDCODER_API_KEY).")]
Workers = Annotated[int, typer.Option("--workers", min=1, help="Sandbox workers (programs running at once).")]
MaxCalls = Annotated[int | None, typer.Option("--max-calls", min=1, help="Model calls per problem; then the best "
                                              "code so far is the answer.")]
MaxTokens = Annotated[int | None, typer.Option("--max-tokens", help="Completion tokens per call.")]
Threads = Annotated[int | None, typer.Option("--threads", min=1, envvar="SOLIDCODER_THREADS", show_envvar=True,
                                             help="CPU threads of the embedded llama.cpp model (default: the "
                                             "model's n_threads setting, else one per physical core).")]
DataFile = Annotated[Path | None, typer.Option("--data-file", metavar="FILE",
                                               help="Local copy of the dataset (offline).")]
MaxSteps = Annotated[int | None, typer.Option("--max-steps", help="Optimizer updates.")]
EXECUTOR_HELP = "Where programs run: local, ray, or ray:ADDRESS (a Ray cluster; extra `dist`)."
ExecutorOption = Annotated[str, typer.Option("--executor", metavar="WHERE", help=EXECUTOR_HELP)]


@prompts_app.command("list", cls=_Command)
def prompts_list(prompts: PromptsDir = None) -> None:
    """List every template and the file that wins for it.

    Example: solidcoder prompts list --prompts my_prompts
    """
    from solidcoder.prompting import PromptLibrary

    for src in PromptLibrary.from_env(prompts).sources():
        typer.echo(f"{src.name:32} {src.origin:18} {src.path}")


@prompts_app.command("show", cls=_Command)
def prompts_show(
    name: Annotated[str, typer.Argument(help='Template name, e.g. "paper/code".')], prompts: PromptsDir = None
) -> None:
    """Print the template NAME as it will be used (after override lookup).

    Example: solidcoder prompts show paper/code
    """
    from solidcoder.prompting import PromptLibrary

    typer.echo(PromptLibrary.from_env(prompts).source(name).path.read_text(), nl=False)


@prompts_app.command("export", cls=_Command)
def prompts_export(
    dest: Annotated[Path, typer.Argument(help="Directory to copy the templates into.")], prompts: PromptsDir = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite files in DEST that differ (edited ones).")] = False,
) -> None:
    """Copy every template into DEST, ready to edit and use with --prompts DEST; exit 2, writing nothing, when that
    would overwrite a file with other content (an edited copy) unless --force.

    Example: solidcoder prompts export my_prompts
    """
    from solidcoder.prompting import PromptLibrary

    written = PromptLibrary.from_env(prompts).export(dest, force=force)
    typer.echo(f"wrote {len(written)} templates under {dest}; use them with --prompts {dest}")


@prompts_app.command("check", cls=_Command)
def prompts_check(prompts: PromptsDir = None) -> None:
    """Render every template with placeholder values and split it into messages; exit 2 naming the file (and line)
    of the first error: an unknown variable, a syntax error, a missing '=== user ===' or a malformed header.

    Example: solidcoder prompts check --prompts my_prompts
    """
    from solidcoder.prompting import PromptLibrary, check_templates

    names = check_templates(PromptLibrary.from_env(prompts))
    typer.echo(f"{len(names)} templates render")


@app.command(cls=_Command)
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


@app.command(cls=_Command)
def rank(
    candidates: Annotated[Path, typer.Argument(help="JSONL of samples: {problem_id, code} per line.",
                                               metavar="SAMPLES")],
    dataset: Annotated[str, typer.Option("--dataset", metavar="NAME", help="Dataset the samples answer.")]
    = "humaneval",
    data_file: DataFile = None,
    prune: Annotated[list[str] | None, typer.Option("--prune", help="Filters: syntax, lint, tests:N (public), "
                                                    "suite:N (the whole suite's first N).")] = None,
    orm: Annotated[str, typer.Option("--orm", help="Trained ORM directory, or none.")] = "none",
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
    typer.echo(run_rank(candidates, problems, settings, orm, k, executor, generated_tests, data_file))


# solve's own options, named here so that its signature stays one line an option.
Function = Annotated[str | None, typer.Option("--function", metavar="NAME", help="Force a call problem on NAME.")]
ExtraTests = Annotated[Path | None, typer.Option("--tests", metavar="FILE", help="JSON list / JSONL of extra public "
                                                 "tests.")]
Gguf = Annotated[Path | None, typer.Option("--gguf", metavar="FILE", help="GGUF file for the embedded model.")]
Out = Annotated[Path | None, typer.Option("--out", metavar="FILE", help="Write the program here instead of stdout.")]
TrajectoryDir = Annotated[Path | None, typer.Option("--run-dir", metavar="DIR", help="Where trajectory.json goes.")]
Prerank = Annotated[int, typer.Option("--prerank", min=0, help="Sample N programs, prune and rank them, and start "
                                      "from the best.")]
SolveStrategy = Annotated[str, typer.Option("--strategy", metavar="NAME", help=SOLVE_STRATEGY_HELP)]


@app.command(cls=_Command)
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
) -> None:
    """Write a program for PROBLEM, verified by execution. Exit 0 verified, 1 unverified, 2 bad input, 3 model or
    sandbox failure, 130 interrupted.

    Example: solidcoder solve examples/is_palindrome.txt"""
    from solidcoder.solve.command import ModelChoice, SolveOptions, load_input, run_solve

    loop = _loop_changes({"p": plans, "d": debug_rounds, "a": oracle_rounds, "candidates": candidates},
                         {"shift_left": no_shift_left, "simulation": no_sim, "oracle": no_oracle, "live": no_live,
                          "defensive": no_defensive})
    opts = SolveOptions(strategy=strategy, loop=loop, prerank=prerank, max_tokens=max_tokens, run_dir=run_dir, out=out,
                        prompts_dir=prompts, workers=workers, hidden=tuple(p for p in (problem, tests) if p))
    choice = ModelChoice(specs=model or [], api_base=api_base, api_key=api_key, gguf=gguf, threads=threads,
                         max_calls=max_calls, max_total_tokens=max_total_tokens, max_cost_usd=max_cost)
    code = run_solve(load_input(problem, stdio, function, tests), opts, choice)
    raise typer.Exit(code)


def _loop_changes(sizes: dict[str, int | None], off: dict[str, bool]) -> dict[str, int | bool]:
    """solve's loop flags as changes to Algorithm 1's settings: the sizes given, the components turned off."""
    return {k: v for k, v in sizes.items() if v is not None} | {k: False for k, v in off.items() if v}


# bench's own options, named here so that its signature stays one line an option.
Dataset = Annotated[str, typer.Option("--dataset", metavar="NAME", help="humaneval, mbpp, apps, codecontests, "
                                      "livecodebench, cruxeval, cruxeval-vars.")]
BenchStrategy = Annotated[str, typer.Option("--strategy", metavar="NAME", help=STRATEGY_HELP)]
ResultsDir = Annotated[Path, typer.Option("--run-dir", metavar="DIR", help="Where results go; rerun to resume.")]
Ids = Annotated[Path | None, typer.Option("--ids", metavar="FILE", help="File with one problem id per line.")]
Subset = Annotated[str | None, typer.Option("--subset", metavar="NAME", help="Published selection, e.g. apps150.")]
Temperature = Annotated[float | None, typer.Option("--temperature", metavar="T", help="Sampling temperature.")]


@app.command(cls=_Command)
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
) -> None:
    """Run a strategy on a benchmark, concurrently and resumably; rerun the same command to resume.

    Example: solidcoder bench --dataset humaneval --strategy direct --limit 10 --run-dir runs/he
    """
    from solidcoder.bench.command import BenchOptions, run_bench
    from solidcoder.datasets import DataOptions
    from solidcoder.models.factory import DEFAULT_ROLE, parse_role_specs

    try:
        roles = parse_role_specs(model or [])
        opts = BenchOptions(
            dataset=dataset, strategy=strategy, model=roles.pop(DEFAULT_ROLE, "local"), run_dir=run_dir,
            api_base=api_base, api_key=api_key,
            data=DataOptions(data_file=data_file, limit=limit, ids_file=ids, subset=subset), concurrency=concurrency,
            samples=samples, temperature=temperature, max_tokens=max_tokens, prompts_dir=prompts, workers=workers,
            retries=retries, label=label, max_calls=max_calls, role_models=roles, executor=executor, threads=threads)
        run_bench(opts, typer.echo)
    except KeyboardInterrupt:
        typer.echo(f"interrupted: finished problems are saved in {run_dir}; rerun the same command to resume", err=True)
        raise typer.Exit(130) from None


@app.command(cls=_Command)
def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories to compare side by side.",
                                                   metavar="RUN_DIR...")],
    html: Annotated[Path | None, typer.Option("--html", metavar="FILE", help="HTML output (default "
                                              "RUN_DIR/report.html).")] = None,
    same_problems: Annotated[bool, typer.Option("--same-problems", help="Score only problems every run finished.")]
    = False,
    ids: Ids = None,
) -> None:
    """Print pass@1 and cost tables for run directories and write a self-contained HTML report.

    Example: solidcoder report runs/direct runs/solidcoder --html report.html
    """
    from solidcoder.bench.command import run_report

    run_report(run_dirs, html, typer.echo, same_problems, ids)


@app.command(cls=_Command)
def show(
    path: Annotated[Path, typer.Argument(help="A bench run directory or a solve run directory.", metavar="PATH")],
    problem: Annotated[str | None, typer.Option("--problem", metavar="ID", help="One problem of the run, by its id: "
                                                "its stages, calls and executions as a tree.")] = None,
    full: Annotated[bool, typer.Option("--full", help="Prompts, replies and programs whole, not shortened.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the same content as JSON.")] = False,
) -> None:
    """List a run's problems (pass/fail, where each ended, calls, tokens, seconds), or show one problem as a tree.

    Example: solidcoder show runs/he --problem HumanEval/0
    """
    from solidcoder.show.command import run_show

    run_show(path, problem, full, as_json)


train_app = typer.Typer(cls=_Commands, no_args_is_help=True,
                        help="Train local models with execution feedback (extra `train`).\n\n"
                        "Example: solidcoder train coderl+ --model Qwen/Qwen2.5-Coder-0.5B-Instruct --data "
                        "train.jsonl --run-dir runs/coderl")
app.add_typer(train_app, name="train")


@train_app.command("coderl+", cls=_Command)
def train_coderl_plus(
    model: Annotated[str, typer.Option("--model", metavar="MODEL", help="Hub name, model directory or GGUF file to "
                                       "train.")],
    data: Annotated[Path, typer.Option("--data", metavar="FILE", help="Problems with tests (JSON/JSONL, "
                                       "docs/problem-schema.md).")],
    run_dir: Annotated[Path, typer.Option("--run-dir", metavar="DIR", help="Run directory: checkpoints, final model, "
                                          "metrics.jsonl.")],
    config: Annotated[Path | None, typer.Option("--config", metavar="FILE", help="YAML overriding the preset.")]
    = None,
    preset: Annotated[str, typer.Option("--preset", help="default (100 steps, no KL term) or paper (the CodeRL+ "
                                        "paper's 1000 steps, beta and loss form: docs/training.md).")] = "default",
    alpha: Annotated[float | None, typer.Option("--alpha", help="Share of alignment prompts (the paper's 1 - alpha); "
                                                "0 = plain GRPO.")] = None,
    max_steps: MaxSteps = None,
    variant: Annotated[str | None, typer.Option("--alignment-variant", help="paper or released.")] = None,
    max_problems: Annotated[int | None, typer.Option("--max-problems", help="Use the first N problems.")] = None,
    vllm: Annotated[bool | None, typer.Option("--vllm/--no-vllm", help="vLLM colocated generation (GPU).")] = None,
    bf16: Annotated[bool | None, typer.Option("--bf16/--no-bf16", help="bfloat16 training (GPU).")] = None,
    executor: Annotated[str | None, typer.Option("--executor", metavar="WHERE", help=EXECUTOR_HELP)] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Sandbox workers (programs running at "
                                                "once).")] = None,
) -> None:
    """CodeRL+: GRPO on code generation plus execution-semantics alignment on the policy's failed programs.

    Example: solidcoder train coderl+ --model Qwen/Qwen2.5-Coder-0.5B-Instruct --data train.jsonl --run-dir runs/rl
    """
    from solidcoder.train.config import load_config

    cfg = load_config(config, preset, model=model, data=str(data), out=str(run_dir), alpha=alpha, max_steps=max_steps,
                      alignment_variant=variant, max_problems=max_problems, use_vllm=vllm, bf16=bf16,
                      executor=executor, sandbox_workers=workers)
    try:
        from solidcoder.train.trainer import run_training
    except ImportError as exc:
        raise BadInput(f"training needs the train extra: pip install 'solidcoder[train]' ({exc})") from None
    metrics = run_training(cfg)
    typer.echo(f"trained {cfg.max_steps} steps; model: {run_dir / 'final'}; metrics: {metrics}")


@train_app.command("orm", cls=_Command)
def train_orm_command(
    samples: Annotated[Path, typer.Argument(help="JSONL of judged samples ({problem_id, code, passed} per line) "
                                            "or a bench results.jsonl.")],
    model: Annotated[str, typer.Option("--model", metavar="MODEL", help="Backbone: hub name or model directory.")],
    run_dir: Annotated[Path, typer.Option("--run-dir", metavar="DIR", help="Directory for the trained ORM.")],
    dataset: Annotated[str, typer.Option("--dataset", metavar="NAME", help="Dataset the samples answer.")]
    = "humaneval",
    data_file: DataFile = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", help="Optimizer updates (-1: whole epochs).")]
    = None,
    learning_rate: Annotated[float | None, typer.Option("--lr", help="Learning rate.")] = None,
    preset: Annotated[str, typer.Option("--preset", help="default (quick) or paper (the ORM paper's training: "
                                        "docs/training.md); --max-steps and --lr override it.")] = "default",
) -> None:
    """Train an outcome reward model on correct/incorrect candidate pairs (TRL RewardTrainer).

    Example: solidcoder train orm runs/bench/results.jsonl --model Qwen/Qwen2.5-Coder-0.5B --run-dir runs/orm
    """
    from solidcoder.datasets import DataOptions, load_dataset

    problems, _ = load_dataset(dataset, DataOptions(data_file=data_file))
    try:
        from solidcoder.verify.orm import orm_preset, run_train_orm
    except ImportError as exc:
        raise BadInput(f"training needs the train extra: pip install 'solidcoder[train]' ({exc})") from None
    config = orm_preset(preset, max_steps=max_steps, learning_rate=learning_rate)
    pairs = run_train_orm(samples, {p.id: p.statement for p in problems}, model, run_dir, config)
    typer.echo(f"trained an ORM on {pairs} pairs: {run_dir}")


# --- commands added by later work go above this line ---


def main() -> None:  # pragma: no cover - thin wrapper for `python -m solidcoder`
    app(prog_name="solidcoder")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""Library side of `solidcoder bench` and `solidcoder report`: check every input, then run or report.

Everything that can be wrong with the input (dataset, file, ids, strategy, model spec, flags, prompts) is checked
before the run directory is touched, so bad input leaves nothing half-written.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from solidcoder.bench.metrics import summarize
from solidcoder.bench.runner import BenchRunner, RunSpec, RunTotals
from solidcoder.core.keys import config_key
from solidcoder.datasets import TRACE_DATASETS, DataOptions, check_name, load_dataset, load_trace_items
from solidcoder.errors import BadInput
from solidcoder.execution.executor import parse_executor
from solidcoder.prompting import PromptLibrary
from solidcoder.requirements import check_installed
from solidcoder.store import ERRORS, RESULTS, AppendLog, ResultStore, read_rows
from solidcoder.wording import counted

Echo = Callable[[str], None]
TRACE_TEMPLATES = ("tasks/trace_output", "tasks/trace_variable")  # what a trace-inference run renders
# Options added to the configuration key after runs were recorded: name -> the value at which it is left out.
LATER_OPTIONS = {"max_calls": None}


@dataclass
class BenchOptions:
    dataset: str
    strategy: str
    model: str
    run_dir: Path
    api_base: str | None = None
    api_key: str | None = None
    data: DataOptions = field(default_factory=DataOptions)
    concurrency: int = 8
    samples: int = 1
    temperature: float | None = None
    max_tokens: int | None = None
    prompts_dir: Path | None = None
    workers: int = 2
    retries: int = 3
    label: str = ""
    max_calls: int | None = None  # per (problem, sample); the strategy answers with its best code when it is hit
    role_models: dict[str, str] = field(default_factory=dict)  # pipeline role -> spec (--model ROLE=SPEC)
    executor: str = "local"  # local, ray or ray:ADDRESS: where units (pipeline + execution) run
    threads: int | None = None  # the embedded model's CPU threads (--threads)

    @property
    def model_label(self) -> str:
        """The model as rows and resume keys name it: the spec, then any `role=spec` in role order."""
        return ",".join([self.model, *(f"{r}={s}" for r, s in sorted(self.role_models.items()))])


def _check_flags(opts: BenchOptions) -> None:
    check_name(opts.dataset)
    if opts.concurrency < 1:
        raise BadInput(f"--concurrency must be at least 1, got {opts.concurrency}")
    if opts.samples < 1:
        raise BadInput(f"--samples must be at least 1, got {opts.samples}")
    if opts.workers < 1 or opts.retries < 1 or (opts.max_calls is not None and opts.max_calls < 1):
        raise BadInput("--workers, --retries and --max-calls must be at least 1")
    if opts.temperature is not None and not 0 <= opts.temperature <= 2:
        raise BadInput(f"--temperature must be between 0 and 2, got {opts.temperature}")
    if opts.role_models:
        _check_roles(opts)
    if opts.run_dir.exists() and not opts.run_dir.is_dir():
        raise BadInput(f"--run-dir {opts.run_dir}: exists and is not a directory")
    if parse_executor(opts.executor).kind == "ray":
        _recipe(opts).check_remote()


def _check_roles(opts: BenchOptions) -> None:
    from solidcoder.strategies.paper_settings import check_roles

    if not opts.strategy.replace("-", "_").startswith("solidcoder"):
        raise BadInput(f"--model ROLE=MODEL sets a SolidCoder pipeline role; --strategy {opts.strategy} has none")
    check_roles(opts.role_models)


def _prepare(opts: BenchOptions, prompts: PromptLibrary) -> tuple[list, object, list[str]]:
    """(items, strategy or None, notes) for the dataset, all loaded and checked."""
    if opts.dataset in TRACE_DATASETS:
        if opts.strategy != "direct":
            raise BadInput(f"{opts.dataset} is a trace-inference task; only --strategy direct applies")
        return load_trace_items(opts.dataset, opts.data), None, []
    from solidcoder.strategies import make_strategy

    strategy = make_strategy(opts.strategy)
    check_installed(strategy.requires, f"--strategy {opts.strategy}")
    problems, report = load_dataset(opts.dataset, opts.data)
    unscorable = [p.id for p in problems if not p.hidden_tests]
    notes = report.lines() + ([f"skipped {counted(len(unscorable), 'problem')} without hidden tests"]
                              if unscorable else [])
    return [p for p in problems if p.hidden_tests], strategy, notes


def config_hash(opts: BenchOptions, settings: dict, prompts: PromptLibrary, templates: tuple[str, ...]) -> str:
    """Everything that changes answers except the model and the problem: strategy settings, sampling, and the text
    of the templates the run renders."""
    return config_hash_of(opts, settings, templates_digest(prompts, templates))


def templates_digest(prompts: PromptLibrary, templates: tuple[str, ...]) -> str:
    """The SHA-256 of the templates' names and text, in name order: the `prompts` part of the configuration key."""
    digest = hashlib.sha256()
    for src in (prompts.source(name) for name in sorted(templates)):
        digest.update(src.name.encode() + b"\0" + src.path.read_bytes() + b"\0")
    return digest.hexdigest()


def config_hash_of(opts: BenchOptions, settings: dict, prompts_digest: str) -> str:
    """`config_hash` of a run whose templates hash to `prompts_digest`; the options of `LATER_OPTIONS` are left out
    at their declared values (core/keys.py)."""
    config = {"dataset": opts.dataset, "strategy": opts.strategy, "settings": settings, "temperature": opts.temperature,
              "max_tokens": opts.max_tokens, "max_calls": opts.max_calls, "prompts": prompts_digest}
    return config_key(config, LATER_OPTIONS)


def _recipe(opts: BenchOptions):
    from solidcoder.bench.distributed import ModelRecipe

    return ModelRecipe(opts.model, opts.api_base, opts.api_key, opts.retries, tuple(sorted(opts.role_models.items())),
                       opts.threads)


def run_bench(opts: BenchOptions, echo: Echo = print) -> RunTotals:
    """Run (or resume) a benchmark; rows go to opts.run_dir as they finish."""
    from solidcoder.execution.executor import make_executor
    from solidcoder.execution.sandbox import SandboxConfig

    _check_flags(opts)
    prompts = PromptLibrary.from_env(opts.prompts_dir)
    items, strategy, notes = _prepare(opts, prompts)
    model = _recipe(opts).build()
    settings = strategy.settings() if strategy is not None else {"task": TRACE_DATASETS[opts.dataset]}
    templates = strategy.templates if strategy is not None else TRACE_TEMPLATES
    spec = RunSpec(opts.dataset, opts.strategy, opts.model_label, config_hash(opts, settings, prompts, templates),
                   opts.samples)
    for line in notes:
        echo(line)
    if opts.samples > 1 and not opts.temperature:
        echo("warning: --samples > 1 at temperature 0 draws near-identical samples; set --temperature")
    # The executor starts before the run directory is touched: an unreachable cluster leaves nothing behind.
    hidden = (str(opts.data.data_file),) if opts.data.data_file else ()  # no run may read the answers
    with make_executor(opts.executor, SandboxConfig(workers=opts.workers, hidden_paths=hidden)) as pool:
        store = ResultStore(opts.run_dir)
        try:
            _log_run(opts, spec, settings)
            totals = _execute(opts, spec, items, strategy, prompts, model, store, pool, echo)
        finally:
            store.close()
    _print_summary(opts.run_dir, spec, totals, echo)
    return totals


def _log_run(opts: BenchOptions, spec: RunSpec, settings: dict) -> None:
    log = AppendLog(opts.run_dir / "runs.jsonl")
    log.append({"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "argv": sys.argv, "dataset": opts.dataset,
                "strategy": opts.strategy, "model": spec.model, "config_hash": spec.config_hash,
                "settings": settings, "label": opts.label, "samples": opts.samples, "concurrency": opts.concurrency,
                **({"executor": opts.executor} if opts.executor != "local" else {})})
    log.close()


def _execute(opts, spec, items, strategy, prompts, model, store, pool, echo) -> RunTotals:
    from solidcoder.bench.tasks import CodeTask, TraceTask

    units = None
    if parse_executor(opts.executor).kind == "ray":
        task, units = _distributed_task(opts, items, prompts, pool), opts.concurrency
    elif strategy is None:
        task = TraceTask(items, prompts, pool, opts.temperature, opts.max_tokens)
    else:
        task = CodeTask(items, strategy, prompts, pool, opts.temperature, opts.max_tokens)
    total = len(items) * opts.samples
    runner = BenchRunner(spec=spec, task=task, model=model, store=store, concurrency=opts.concurrency,
                         on_row=_progress(echo, total), max_calls=opts.max_calls, units_in_flight=units)
    where = f"; units run on Ray beside {pool.size} sandbox workers" if units else ""
    echo(f"{len(runner.pending())} of {total} units to run ({total - len(runner.pending())} already done); "
         f"results in {opts.run_dir / RESULTS}{where}")
    return asyncio.run(runner.run())


def _distributed_task(opts: BenchOptions, items: list, prompts: PromptLibrary, pool):
    """Units run on the Ray nodes beside their sandboxes; the driver keeps the run directory (distributed.py)."""
    import uuid

    from solidcoder.bench.distributed import DistributedTask, UnitSpec, prompt_texts

    strategy = None if opts.dataset in TRACE_DATASETS else opts.strategy
    spec = UnitSpec(run_id=uuid.uuid4().hex, model=_recipe(opts), prompts=prompt_texts(prompts), strategy=strategy,
                    temperature=opts.temperature, max_tokens=opts.max_tokens, max_calls=opts.max_calls,
                    concurrency=opts.concurrency)
    return DistributedTask(items, spec, pool)


def _progress(echo: Echo, total: int) -> Callable[[dict, RunTotals], None]:
    """One line per finished unit, e.g. `[3/40] HumanEval/2 sample 0: PASS, 3 model calls, 156 prompt + 187
    completion tokens, 4.2 s`."""
    def show(row: dict, totals: RunTotals) -> None:
        n = totals.done_before + totals.finished + totals.errors
        verdict = ("PASS" if row["passed"] else "fail") if "passed" in row else f"INFRA ERROR ({row['error'][:120]})"
        calls = f"{row['calls']} model call" + ("s" if row["calls"] != 1 else "")
        echo(f"[{n}/{total}] {row['id']} sample {row['sample']}: {verdict}, {calls}, "
             f"{row['prompt_tokens']} prompt + {row['completion_tokens']} completion tokens, {row['wall_s']:.1f} s")
    return show


def _print_summary(run_dir: Path, spec: RunSpec, totals: RunTotals, echo: Echo) -> None:
    results = [r for r in read_rows(run_dir / RESULTS) if r.get("config_hash") == spec.config_hash
               and r.get("model") == spec.model and r.get("dataset") == spec.dataset]
    errors = [r for r in read_rows(run_dir / ERRORS) if r.get("config_hash") == spec.config_hash
              and r.get("model") == spec.model and r.get("dataset") == spec.dataset]
    for s in summarize(results, errors):
        scores = ", ".join(f"pass@{k} {v * 100:.1f}%" for k, v in s.pass_at.items())
        echo(f"{s.dataset} / {s.strategy} / {s.model}: {counted(s.problems, 'problem')} scored, "
             f"{scores or 'nothing scored'}; {counted(s.infra_errors, 'infrastructure error')} (excluded; rerun to "
             "retry)")
    if totals.stopped:
        echo(f"stopped early: {totals.stopped}")


def run_report(run_dirs: list[Path], html_path: Path | None, echo: Echo = print, same_problems: bool = False,
               ids_file: Path | None = None) -> None:
    from solidcoder.bench.html import write_html
    from solidcoder.bench.report import load_summaries, print_tables
    from solidcoder.datasets import read_ids
    from solidcoder.show.html import problems_html
    from solidcoder.show.load import load_run

    summaries = load_summaries(run_dirs, same_problems, set(read_ids(ids_file)) if ids_file else None)
    if not summaries:
        raise BadInput("no results in the given run directories")
    problems = problems_html([load_run(run_dir) for run_dir in run_dirs])  # every file read (and checked) first
    print_tables(summaries)
    if html_path is None:  # a run directory (often committed) is never written to unless asked
        echo("add --html FILE for the page with plots and each problem's view")
        return
    write_html(summaries, html_path, run_dirs, problems)
    echo(f"wrote {html_path}")

"""Library side of `solidcoder bench` and `solidcoder report`: plan the run, then run it, or report.

Every option is checked and resolved once, into a `BenchPlan` (bench/plan.py), before the run directory is
touched, so bad input leaves nothing half-written.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path

from solidcoder.bench.metrics import summarize
from solidcoder.bench.plan import BenchOptions, BenchPlan, plan_bench
from solidcoder.bench.runner import BenchRunner, BenchTask, RunSpec, RunTotals
from solidcoder.errors import BadInput
from solidcoder.execution.environment import BENCHMARK_MODULES
from solidcoder.store import ERRORS, RESULTS, RUNS, AppendLog, ResultRow, ResultStore, read_results
from solidcoder.wording import counted

Echo = Callable[[str], None]


def run_bench(opts: BenchOptions, echo: Echo = print) -> RunTotals:
    """Run (or resume) a benchmark; rows go to opts.run_dir as they finish."""
    from solidcoder.execution.executor import make_executor
    from solidcoder.execution.sandbox import SandboxConfig

    plan = plan_bench(opts)
    model = plan.model.build()
    for line in plan.work.notes:
        echo(line)
    if opts.samples > 1 and not opts.temperature:
        echo("warning: --samples > 1 at temperature 0 draws near-identical samples; set --temperature")
    # The executor starts before the run directory is touched: an unreachable cluster leaves nothing behind.
    hidden = (str(opts.data.data_file),) if opts.data.data_file else ()  # no run may read the answers
    # a benchmark's programs import what its own harness's environment has (execution/environment.py)
    config = SandboxConfig(workers=opts.workers, hidden_paths=hidden, third_party=BENCHMARK_MODULES)
    with make_executor(str(plan.where), config) as pool:
        store = ResultStore(opts.run_dir)
        try:
            _log_run(plan)
            totals = _execute(plan, model, store, pool, echo)
        finally:
            store.close()
    _print_summary(opts.run_dir, plan.spec, totals, echo)
    return totals


def _log_run(plan: BenchPlan) -> None:
    opts, spec = plan.options, plan.spec
    log = AppendLog(opts.run_dir / RUNS)
    log.append({"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "argv": sys.argv, "dataset": opts.dataset,
                "strategy": opts.strategy, "model": spec.model, "config_hash": spec.config_hash,
                "settings": plan.work.settings, "label": opts.label, "samples": opts.samples,
                "concurrency": opts.concurrency, **({"executor": opts.executor} if opts.executor != "local" else {})})
    log.close()


def _execute(plan: BenchPlan, model, store: ResultStore, pool, echo: Echo) -> RunTotals:
    opts = plan.options
    task, units = _task(plan, pool)
    total = len(plan.work.items) * opts.samples
    runner = BenchRunner(spec=plan.spec, task=task, model=model, store=store, concurrency=opts.concurrency,
                         on_row=_progress(echo, total), max_calls=opts.max_calls, units_in_flight=units)
    where = f"; units run on Ray beside {pool.size} sandbox workers" if units else ""
    echo(f"{len(runner.pending())} of {total} units to run ({total - len(runner.pending())} already done); "
         f"results in {opts.run_dir / RESULTS}{where}")
    return asyncio.run(runner.run())


def _task(plan: BenchPlan, pool) -> tuple[BenchTask, int | None]:
    """The run's task, and the units it keeps in flight (None: the runner's default). On Ray, units run on the nodes
    beside their sandboxes and the driver keeps the run directory (distributed.py)."""
    if plan.where.kind != "ray":
        return plan.task.build(plan.work.items, plan.prompts, pool, plan.work.strategy), None
    import uuid

    from solidcoder.bench.distributed import DistributedTask, UnitSpec, prompt_texts

    spec = UnitSpec(run_id=uuid.uuid4().hex, model=plan.model, prompts=prompt_texts(plan.prompts), task=plan.task,
                    max_calls=plan.options.max_calls, concurrency=plan.options.concurrency)
    return DistributedTask(plan.work.items, spec, pool), plan.options.concurrency


def _progress(echo: Echo, total: int) -> Callable[[ResultRow, RunTotals], None]:
    """One line per finished unit, e.g. `[3/40] HumanEval/2 sample 0: PASS, 3 model calls, 156 prompt + 187
    completion tokens, 4.2 s`."""
    def show(row: ResultRow, totals: RunTotals) -> None:
        n = totals.done_before + totals.finished + totals.errors
        verdict = f"INFRA ERROR ({(row.error or '')[:120]})" if row.passed is None else "PASS" if row.passed else "fail"
        echo(f"[{n}/{total}] {row.id} sample {row.sample}: {verdict}, {counted(row.calls, 'model call')}, "
             f"{row.prompt_tokens} prompt + {row.completion_tokens} completion tokens, {row.wall_s:.1f} s")
    return show


def _print_summary(run_dir: Path, spec: RunSpec, totals: RunTotals, echo: Echo) -> None:
    this_run = (spec.config_hash, spec.model, spec.dataset)
    results, errors = ([row for row in read_results(run_dir / name) if (row.config_hash, row.model, row.dataset)
                        == this_run] for name in (RESULTS, ERRORS))
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

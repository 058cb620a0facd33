"""The bench command's options, resolved once into a `BenchPlan`: what runs, where, with which model, under which key.

`plan_bench` checks everything that can be wrong with the input (dataset, file, ids, strategy, model spec, flags,
prompts) and decides each thing once: code tasks (a strategy, judged on hidden tests) or trace tasks (the dataset
is a trace-inference one); on this machine or on Ray; the model recipe the driver and every Ray node build from;
the configuration key the rows are found by. Nothing is called or written here, so bad input leaves nothing
half-written.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from solidcoder.bench.distributed import ModelRecipe
from solidcoder.bench.runner import RunSpec
from solidcoder.bench.tasks import TRACE_TEMPLATES, TaskRecipe
from solidcoder.core.keys import config_key
from solidcoder.datasets import DataOptions, check_name, load_dataset, load_trace_items, trace_task
from solidcoder.errors import BadInput
from solidcoder.execution.executor import ExecutorSpec, parse_executor
from solidcoder.prompting import PromptLibrary
from solidcoder.requirements import check_installed
from solidcoder.strategies import make_strategy
from solidcoder.strategies.registry import check_language
from solidcoder.wording import counted

if TYPE_CHECKING:
    from solidcoder.strategies.base import Strategy

# Options added to the configuration key after runs were recorded: name -> the value at which it is left out.
LATER_OPTIONS = {"max_calls": None, "language": "python"}


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
    def language(self) -> str:
        """The programs' language (`--language`, held with the data options: it selects the problems too)."""
        return self.data.language


@dataclass(frozen=True)
class Work:
    """What a run's units are, loaded and checked: the strategy (None for trace tasks), the items, what the loader
    noted, and the settings and templates its configuration key is made of."""

    strategy: Strategy | None
    items: list
    notes: tuple[str, ...]
    settings: dict
    templates: tuple[str, ...]


@dataclass(frozen=True)
class BenchPlan:
    """A bench run, every option resolved once (`plan_bench`)."""

    options: BenchOptions
    task: TaskRecipe  # what each unit runs: code (a strategy) or trace inference, and its sampling
    work: Work  # the strategy built and checked, the items, the settings
    where: ExecutorSpec  # local, or Ray (kind "ray"): every unit runs on a node beside its sandbox
    model: ModelRecipe  # how the driver and every Ray node build the run's model
    prompts: PromptLibrary
    spec: RunSpec  # what every row is keyed by (the configuration key included)


def plan_bench(opts: BenchOptions) -> BenchPlan:
    """The plan for `opts`, or BadInput naming the first option that is wrong; nothing is called or written."""
    _check_flags(opts)
    where = parse_executor(opts.executor)
    model = ModelRecipe(opts.model, opts.api_base, opts.api_key, opts.retries,
                        tuple(sorted(opts.role_models.items())), opts.threads)
    if where.kind == "ray":
        model.check_remote()
    prompts = PromptLibrary.from_env(opts.prompts_dir)
    trace = trace_task(opts.dataset)  # what runs: trace tasks ("output", "variable"), or code tasks when None
    task = TaskRecipe(None if trace else opts.strategy, opts.temperature, opts.max_tokens)
    work = _work(opts, task, trace)
    key = config_hash_of(opts, work.settings, templates_digest(prompts, work.templates))
    return BenchPlan(opts, task, work, where, model, prompts,
                     RunSpec(opts.dataset, opts.strategy, model.label, key, opts.samples))


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


def _check_roles(opts: BenchOptions) -> None:
    from solidcoder.strategies.paper_settings import check_roles

    if not opts.strategy.replace("-", "_").startswith("solidcoder"):
        raise BadInput(f"--model ROLE=MODEL sets a SolidCoder pipeline role; --strategy {opts.strategy} has none")
    check_roles(opts.role_models)


def _work(opts: BenchOptions, task: TaskRecipe, trace: str | None) -> Work:
    """Trace items, or the strategy (its requirements installed) and the problems with hidden tests to score on."""
    if trace:
        if opts.strategy != "direct":
            raise BadInput(f"{opts.dataset} is a trace-inference task; only --strategy direct applies")
        return Work(None, load_trace_items(opts.dataset, opts.data), (), {"task": trace}, TRACE_TEMPLATES)
    strategy = make_strategy(task.strategy)
    check_installed(strategy.requires, f"--strategy {opts.strategy}")
    check_language(strategy, opts.language, f"--strategy {opts.strategy}")
    problems, report = load_dataset(opts.dataset, opts.data)
    unscorable = [p.id for p in problems if not p.hidden_tests]
    notes = report.lines() + ([f"skipped {counted(len(unscorable), 'problem')} without hidden tests"]
                              if unscorable else [])
    return Work(strategy, [p for p in problems if p.hidden_tests], tuple(notes), strategy.settings(),
                tuple(strategy.templates))


def templates_digest(prompts: PromptLibrary, templates: tuple[str, ...]) -> str:
    """The SHA-256 of the templates' names and text, in name order: the `prompts` part of the configuration key."""
    digest = hashlib.sha256()
    for src in (prompts.source(name) for name in sorted(templates)):
        digest.update(src.name.encode() + b"\0" + src.path.read_bytes() + b"\0")
    return digest.hexdigest()


def config_hash_of(opts: BenchOptions, settings: dict, prompts_digest: str) -> str:
    """The configuration key: everything that changes answers except the model and the problem (strategy settings,
    sampling, and `prompts_digest`, the text of the templates the run renders). The options of `LATER_OPTIONS` are
    left out at their declared values (core/keys.py)."""
    config = {"dataset": opts.dataset, "strategy": opts.strategy, "settings": settings, "temperature": opts.temperature,
              "max_tokens": opts.max_tokens, "max_calls": opts.max_calls, "prompts": prompts_digest,
              "language": opts.language}
    return config_key(config, LATER_OPTIONS)

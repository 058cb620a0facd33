"""`solidcoder bench --executor ray[:ADDRESS]`: each (problem, sample) unit runs on a Ray node, beside its sandbox.

The driver keeps everything that makes a run resumable: it decides which units are pending, writes every row
to the run directory (results.jsonl, errors.jsonl) and every paid model reply to calls.jsonl, exactly as on one
machine, so a run started on a cluster resumes on a laptop and the other way round. What moves is the unit
itself: `DistributedTask.run_one` sends the unit to the least busy node's sandbox actor (`RayExecutor.stream`),
where `run_unit` runs the same `CodeTask` / `TraceTask` code, built from the run's `TaskRecipe`, against that
node's local pool (no hop per execution) with a model client built there from the same `ModelRecipe`, so model
calls go from the node straight to the configured endpoint. Each paid reply streams back to the driver as it
arrives and is logged at once; the unit's replies already in calls.jsonl travel with it and are replayed, not paid
again.

Differences from one machine, all in how, not what: `--concurrency` bounds units in flight (each makes one
model call at a time, so it still bounds model calls in flight) instead of allowing twice as many units to
overlap sandbox time with model time; a unit whose node dies is rerun on another node (replaying the replies
it had already streamed back) up to `ATTEMPTS` times, then recorded as a sandbox infrastructure error.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import queue
import shutil
import tempfile
import threading
import traceback
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solidcoder.bench.runner import InfrastructureError, UnitRecorder
from solidcoder.core.calls import Limiter, RecordingModel
from solidcoder.core.trajectory import Usage
from solidcoder.errors import BadInput, ModelError
from solidcoder.prompting import SUFFIX, PromptLibrary
from solidcoder.store import ResultRow

if TYPE_CHECKING:
    from solidcoder.bench.tasks import TaskRecipe

ATTEMPTS = 3  # nodes a unit may die on before it is recorded as an infrastructure error
_KEPT_RUNS = 4  # runs whose model client, prompts and task each node process keeps


@dataclass(frozen=True)
class ModelRecipe:
    """How the run's model (and any pipeline role's own model) is built: the driver and every node alike."""

    spec: str
    api_base: str | None = None
    api_key: str | None = None
    retries: int = 3
    roles: tuple[tuple[str, str], ...] = ()  # (role, spec) from --model ROLE=SPEC
    threads: int | None = None  # the embedded model's CPU threads (--threads)

    @property
    def label(self) -> str:
        """The model as rows and resume keys name it: the spec, then any `role=spec` in role order."""
        return ",".join([self.spec, *(f"{role}={spec}" for role, spec in self.roles)])

    def build(self):
        from solidcoder.models.factory import DEFAULT_ROLE, ModelOptions, check_api_base, make_model, make_roster
        from solidcoder.models.retry import RetryPolicy

        options = ModelOptions(self.api_base, self.api_key, policy=RetryPolicy(attempts=self.retries),
                               threads=self.threads)
        check_api_base([self.spec, *(spec for _, spec in self.roles)], self.api_base)
        if self.roles:
            return make_roster({DEFAULT_ROLE: self.spec, **dict(self.roles)}, options)
        return make_model(self.spec, options)

    def check_remote(self) -> None:
        """BadInput for an in-process model: with Ray, model calls must go to an endpoint every node can reach."""
        from solidcoder.models.transformers_backend import is_transformers_spec

        for spec in (self.spec, *(s for _, s in self.roles)):
            if not spec or spec == "local" or spec.endswith(".gguf") or is_transformers_spec(spec):
                raise BadInput(f"--executor ray sends model calls from every node to one endpoint, but --model "
                               f"{spec or 'local'} runs in-process; serve it (solidcoder serve) and pass "
                               f"--model openai/NAME --api-base URL")


@dataclass(frozen=True, kw_only=True)
class UnitSpec:
    """What every unit of a run shares, shipped with each unit (`run_id` keys the nodes' caches)."""

    run_id: str
    model: ModelRecipe
    prompts: dict[str, str]  # template name -> text, as resolved on the driver
    task: TaskRecipe  # what the unit runs: the same recipe a local run builds its task from
    max_calls: int | None = None
    concurrency: int = 8


def prompt_texts(library: PromptLibrary) -> dict[str, str]:
    return {src.name: src.path.read_text(encoding="utf-8") for src in library.sources()}


class DistributedTask:
    """A `BenchTask` whose units run on the Ray nodes; `executor` is a `RayExecutor`."""

    def __init__(self, items: list, spec: UnitSpec, executor: Any) -> None:
        self.items, self.spec, self.executor = items, spec, executor
        self._replies: dict[str, dict[str, dict]] | None = None

    def replies_for(self, model: RecordingModel) -> dict[str, dict]:
        """The replies calls.jsonl holds for this unit's key (indexed once per run)."""
        if self._replies is None:
            self._replies = {}
            for call_id, row in model.log.replies.items():
                self._replies.setdefault(call_id.split("#", 1)[0], {})[call_id] = row
        return dict(self._replies.get(model.key, {}))

    async def run_one(self, item: Any, model: RecordingModel) -> ResultRow:
        from ray.exceptions import RayActorError

        replies = self.replies_for(model)
        problem = ""
        for attempt in range(ATTEMPTS):
            try:
                return await self._attempt(item, model, replies)
            except RayActorError as exc:
                problem = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
                await asyncio.sleep(min(2.0**attempt, 10.0))  # a restarting actor needs a moment
        raise InfrastructureError(f"the Ray node running this unit died {ATTEMPTS} times: {problem}")

    async def _attempt(self, item: Any, model: RecordingModel, replies: dict[str, dict]) -> ResultRow:
        stream = self.executor.stream(run_unit, self.spec, item, model.key, replies)
        async with contextlib.aclosing(stream):
            async for event in stream:
                kind = event[0]
                if kind == "call":  # logged now, as on one machine, and replayed if this attempt dies
                    model.log.calls.append(event[1])
                    replies[event[1]["id"]] = event[1]
                    continue
                if kind == "execution":  # logged now, as on one machine
                    model.log.executions.append(event[1])
                    continue
                usage = dict(event[-1])
                model.template_usage, model.usage = usage.pop("template_usage", {}), Usage(**usage)
                if kind == "done":
                    return event[1]
                if kind == "error":
                    raise _rebuild(event[1], event[2])
                raise RuntimeError(f"a bench unit crashed on a Ray node:\n{event[1]}")
        raise InfrastructureError("a Ray node ended a unit without a result")


def _rebuild(class_path: str, message: str) -> Exception:
    """The model or sandbox error a node reported, as the same class here (the runner acts on the class)."""
    module, _, name = class_path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        cls = ModelError
    if not (isinstance(cls, type) and issubclass(cls, (ModelError, InfrastructureError))):
        cls = ModelError
    return cls(message)


# --- node side ------------------------------------------------------------------------------------------------


class _StreamingStore:
    """The part of `ResultStore` a `RecordingModel` uses: logged replies in, paid replies and executions out as
    events."""

    def __init__(self, replies: dict[str, dict], events: queue.SimpleQueue) -> None:
        self.replies = replies
        self.calls = _Events("call", events)
        self.executions = _Events("execution", events)


@dataclass(frozen=True)
class _Events:
    """An appender whose rows become `(kind, row)` events for the driver."""

    kind: str
    events: queue.SimpleQueue

    def append(self, row: dict) -> None:
        self.events.put((self.kind, row))


@dataclass
class _RunContext:
    recorder: UnitRecorder
    prompts_dir: Path
    task: Any


_contexts: OrderedDict[str, _RunContext] = OrderedDict()
_contexts_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _event_loop() -> asyncio.AbstractEventLoop:
    """One event loop per node process for every unit: model clients keep their connections on it."""
    global _loop
    with _contexts_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="bench units", daemon=True).start()
        return _loop


def _context(pool: Any, spec: UnitSpec) -> _RunContext:
    """This process's model client and call limiter, prompts and task for the run (built once per run, then
    shared)."""
    with _contexts_lock:
        if spec.run_id in _contexts:
            _contexts.move_to_end(spec.run_id)
            return _contexts[spec.run_id]
        prompts_dir = Path(tempfile.mkdtemp(prefix="solidcoder-prompts-"))
        for name, text in spec.prompts.items():
            target = prompts_dir / f"{name}{SUFFIX}"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        task = spec.task.build([], PromptLibrary([("driver", prompts_dir)]), pool)
        recorder = UnitRecorder(spec.model.build(), Limiter(spec.concurrency), spec.max_calls)
        context = _contexts[spec.run_id] = _RunContext(recorder, prompts_dir, task)
        while len(_contexts) > _KEPT_RUNS:
            _, old = _contexts.popitem(last=False)
            shutil.rmtree(old.prompts_dir, ignore_errors=True)
        return context


def _usage(model: RecordingModel) -> dict[str, Any]:
    return {**asdict(model.usage), "template_usage": model.template_usage}


def run_unit(pool: Any, spec: UnitSpec, item: Any, key: str, replies: dict[str, dict]) -> Iterator[tuple]:
    """Run one unit beside `pool` (in the node's sandbox actor); yields ("call", row) per paid model reply and
    ("execution", row) per program judged, then
    ("done", fields, usage), ("error", class path, message, usage) or ("crash", traceback, usage)."""
    context = _context(pool, spec)
    events: queue.SimpleQueue = queue.SimpleQueue()
    model = context.recorder.record(_StreamingStore(replies, events), key)

    async def work() -> None:
        try:
            fields = await context.task.run_one(item, model)
            events.put(("done", fields, _usage(model)))
        except (ModelError, InfrastructureError) as exc:
            path = f"{type(exc).__module__}.{type(exc).__qualname__}"
            events.put(("error", path, str(exc), _usage(model)))
        except BaseException:  # a bug, not the model's or the sandbox's fault: the driver raises it
            events.put(("crash", traceback.format_exc(), _usage(model)))

    future = asyncio.run_coroutine_threadsafe(work(), _event_loop())
    finished = False
    try:
        while (event := events.get())[0] in ("call", "execution"):
            yield event
        finished = True
        yield event
    finally:
        if not finished:  # the driver went away (Ctrl-C, or it died): stop the run's units on this node
            future.cancel()

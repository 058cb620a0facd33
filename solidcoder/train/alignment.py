"""CodeRL+ execution-semantics alignment tasks, built on the fly from the policy's own failed programs.

A rollout that fails its tests *without* a runtime error (wrong answer only: its semantics, not its syntax, are
off) is run once more under the tracer (`solidcoder.execution.trace`) on the input of its first failing test. The
variables whose final value is a primitive (int, float, str, bool, None) or a small container of primitives that
round-trips through `ast.literal_eval` become the ground truth: the value each had when its scope was last left
(for a recursive function, the outermost call; for a name bound in two scopes, one variable per scope). The task
asks the model, given the program, the input and the variable names, to predict those values (Eq. 5 of the paper).

A program that could reach the tracer in its own process, and so write its own trace (`trace.forgery_route`: imports
outside an allow-list, private or frame attributes, reflective builtins), gives no task.

Variables are named `name` at module level and `func.name` (qualified, without `<locals>`) inside functions, so
shadowed names stay apart. `TaskBuffer` keeps the most recent tasks, deduplicated by program and input.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol

from solidcoder.execution.executor import Executor
from solidcoder.execution.sandbox import Limits
from solidcoder.execution.trace import forgery_route, trace_program
from solidcoder.parsing import literal, parse_python
from solidcoder.problem import Problem, TestCase

PRIMITIVES = (int, float, str, bool, type(None))
CONTAINERS = (list, tuple, set, frozenset, dict)
MODULE = "<module>"


@dataclass(frozen=True)
class AlignmentTask:
    """One alignment prompt's inputs and ground truth; `truth` maps display names to final values."""

    problem_id: str
    code: str
    program_input: str  # stdin text, or the call expression for call problems
    truth: dict[str, Any]
    final_output: str | None = None  # what the program printed / returned (used by the released-code variant)

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.code}\0{self.program_input}".encode()).hexdigest()

    def to_json(self) -> str:
        """JSON text with values as reprs, so tuples and sets survive; see `from_json`."""
        data = {"problem_id": self.problem_id, "code": self.code, "program_input": self.program_input,
                "truth": {name: repr(value) for name, value in self.truth.items()}, "final_output": self.final_output}
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> AlignmentTask:
        data = json.loads(text)
        data["truth"] = {name: literal(value) for name, value in data["truth"].items()}
        return cls(**data)


@dataclass
class Rollout:
    """A judged code-generation completion, as the code reward hands it to observers."""

    problem: Problem
    code: str
    passed: bool
    verdict_statuses: list[str]
    failing_test: TestCase | None = None  # the first test that failed with a wrong answer
    actual: str | None = None  # what the program produced on it


class RolloutObserver(Protocol):
    """Receives every judged rollout of a reward batch (the task builder feeds its buffer this way)."""

    def observe(self, rollouts: list[Rollout]) -> None: ...


@dataclass(frozen=True)
class TaskBuilderConfig:
    """`max_variables` caps a task's variables (0: no cap); `module_only` keeps module-level names only;
    `max_container_len` 0 keeps primitive values only (the paper's V), else containers of up to that many
    primitives too."""

    max_variables: int = 8
    module_only: bool = False
    max_container_len: int = 8
    max_repr_chars: int = 120
    trace_wall_s: float = 5.0


def is_semantic_failure(rollout: Rollout) -> bool:
    """Failed, but every test ran to completion: wrong answers only, no crash, timeout or sandbox trouble."""
    return not rollout.passed and rollout.failing_test is not None and all(
        s in ("pass", "fail") for s in rollout.verdict_statuses)


def is_primitive_value(value: Any, max_len: int = 8) -> bool:
    """A primitive, or (`max_len` > 0) a container of at most `max_len` primitives (dict keys and values alike)."""
    if isinstance(value, PRIMITIVES):
        return True
    if max_len <= 0 or not isinstance(value, CONTAINERS) or len(value) > max_len:
        return False
    items = [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)
    return all(isinstance(item, PRIMITIVES) for item in items)


def display_name(scope: str, name: str) -> str:
    """`x` at module level, `outer.inner.x` inside nested function `outer.<locals>.inner`."""
    return name if scope == MODULE else f"{scope.replace('.<locals>', '')}.{name}"


class AlignmentTaskBuilder:
    """Turns semantic failures into alignment tasks with the tracer; the sandbox pool runs the traces."""

    def __init__(self, pool: Executor, config: TaskBuilderConfig | None = None) -> None:
        self.pool, self.config = pool, config or TaskBuilderConfig()

    def build(self, rollout: Rollout) -> AlignmentTask | None:
        """The task for one rollout, or None when it is not a semantic failure, has no usable variable, or could
        forge its own trace (the tracer runs in its process: `forgery_route`), so no forged value is ground truth."""
        if not is_semantic_failure(rollout) or forgery_route(rollout.code) is not None:
            return None
        test = rollout.failing_test  # set for every semantic failure
        program_input = _program_input(test, rollout.problem.entry_point or "")
        if program_input is None:
            return None
        stdin, call = program_input
        result = trace_program(self.pool, rollout.code, stdin=stdin, call=call,
                               limits=Limits(wall_s=self.config.trace_wall_s))
        truth = self.select(result.scopes) if result.ok else {}
        if not truth:
            return None
        shown_input = stdin if call is None else call
        final = result.stdout if call is None else (rollout.actual if call == test.call else None)
        return AlignmentTask(rollout.problem.id, rollout.code, shown_input, truth, final)

    def select(self, scopes: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Primitive-valued variables, module scope first, then functions in the order they were left."""
        cfg, truth = self.config, {}
        ordered = [MODULE, *[s for s in scopes if s != MODULE]] if MODULE in scopes else list(scopes)
        for scope in ordered[:1] if cfg.module_only else ordered:
            for name, value in scopes[scope].items():
                if is_primitive_value(value, cfg.max_container_len) and len(repr(value)) <= cfg.max_repr_chars:
                    truth[display_name(scope, name)] = value
        if cfg.max_variables > 0:
            truth = dict(list(truth.items())[: cfg.max_variables])
        return truth


def _program_input(test: TestCase, entry_point: str) -> tuple[str, str | None] | None:
    """(stdin, call) to trace a test's input with; None for a script test that never calls the entry point."""
    if test.kind == "stdio":
        return test.stdin or "", None
    call = test_call(test, entry_point)
    return None if call is None else ("", call)


def test_call(test: TestCase, entry_point: str) -> str | None:
    """The call a test makes: its `call`, else the first `entry_point(...)` (or `candidate(...)`) in its script."""
    if test.call is not None:
        return test.call
    try:
        tree = parse_python(test.script or "")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    names = (entry_point, "candidate")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            node.func.id = entry_point
            return ast.unparse(node)
    return None


@dataclass(frozen=True)
class TaskBufferConfig:
    capacity: int = 1024
    seed: int = 0


class TaskBuffer:
    """The `capacity` most recent tasks, deduplicated by (program, input); thread-safe; samples recent tasks."""

    def __init__(self, config: TaskBufferConfig | None = None) -> None:
        self.config = config or TaskBufferConfig()
        self._tasks: OrderedDict[str, AlignmentTask] = OrderedDict()
        self._lock = threading.Lock()
        self._rng = random.Random(self.config.seed)
        self.added = 0

    def __len__(self) -> int:
        return len(self._tasks)

    def add(self, task: AlignmentTask) -> bool:
        """Add (or refresh) a task; the oldest falls out past capacity. True when it was new."""
        with self._lock:
            new = task.key not in self._tasks
            self._tasks.pop(task.key, None)
            self._tasks[task.key] = task
            while len(self._tasks) > self.config.capacity:
                self._tasks.popitem(last=False)
            self.added += new
            return new

    def sample(self, count: int, recent: int | None = None) -> list[AlignmentTask]:
        """`count` distinct tasks drawn from the `recent` newest (default: the whole buffer)."""
        with self._lock:
            pool = list(self._tasks.values())[-(recent or len(self._tasks)):]
            return self._rng.sample(pool, min(count, len(pool)))


class BufferFeeder:
    """A `RolloutObserver` that builds tasks from semantic failures and adds them to a buffer."""

    def __init__(self, builder: AlignmentTaskBuilder, buffer: TaskBuffer, max_per_batch: int = 64) -> None:
        self.builder, self.buffer, self.max_per_batch = builder, buffer, max_per_batch
        self.built = 0

    def observe(self, rollouts: list[Rollout]) -> None:
        candidates = [r for r in rollouts if is_semantic_failure(r)][: self.max_per_batch]
        for task in _map_threads(self.builder.build, candidates, self.builder.pool.size):
            if task is not None:
                self.built += self.buffer.add(task)


def _map_threads(fn, items: list, workers: int) -> list:
    """`fn` over `items` on a few threads (each call blocks on a sandbox worker), results in order."""
    if len(items) <= 1:
        return [fn(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(items)))) as executor:
        return list(executor.map(fn, items))

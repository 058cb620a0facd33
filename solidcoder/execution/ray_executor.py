"""`RayExecutor`: the sandbox pool's interface over a Ray cluster (`--executor ray[:ADDRESS]`, extra `dist`).

What it adds: every node of the cluster runs programs, so throughput grows with the cluster's cores, and any
code written against `Executor` (the judge, the tracer, the pipeline, the rewards) uses them unchanged. Each
node gets one Ray actor that owns an ordinary `SandboxPool` of fork-server workers there; a run goes to the
actor with the fewest runs in flight per worker, and the actor's pool runs it exactly as a local pool would.
Isolation is therefore the local pool's, on each node (see `sandbox.py`): Ray adds none and removes none.

Why one actor per node rather than N single-worker actors: the pool already spreads runs over a node's cores
from warm zygotes, so one actor per node keeps one Ray process per node instead of one per core, and leaves
the node-local queueing to the pool. Each actor's workers get their own uid range (`uid_base` shifted by
`UID_OFFSET` plus the actor's index times the largest pool), so a restarted actor that lands beside another
(or a local pool on the driver's machine) never shares a uid, and so never a process limit, with it.

What it costs: each run is serialized, sent to an actor and its result sent back (a hop per run, a few ms on
one machine; see `benchmarks/executor_scaling.py`), and the Ray processes themselves take memory and a little
CPU on every node. Pool size per node is `SandboxConfig.workers`, else the node's Ray CPU count (`ray start
--num-cpus N` caps it); nodes that offer Ray no CPU (a driver-only head) get no actor. The actors claim no Ray
CPUs (num_cpus=0): their work happens in the zygotes, which Ray does not schedule.

Failures: a killed actor (or its process) is restarted by Ray on its node and the runs it had in flight are
retried there (`max_restarts=-1`, `max_task_retries`); runs are side-effect free, so a retry is safe. A run whose
sandbox worker died under it (the pool's own `sandbox_error`, as when the actor is being killed and takes its
workers first) is run again the same way; if every attempt loses its worker, that result is returned. When
retries run out, or the actor is gone for good, the run is retried on another actor, and when none is left it
returns `sandbox_error` (an infrastructure error, never a wrong answer). An actor Ray reports as restarting
rather than gone is given a few more tries, with pauses, before that. Nodes that join after the executor
started are not used. A cluster address that does not answer is a one-line `ExecutorUnavailable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from typing import Any

import ray
from ray.exceptions import ActorDiedError, GetTimeoutError, RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from solidcoder.execution.executor import ExecutorUnavailable
from solidcoder.execution.inside.isolation import Layer
from solidcoder.execution.sandbox import ExecResult, Limits, SandboxConfig, SandboxPool

log = logging.getLogger("solidcoder.ray")

UID_OFFSET = 1024  # keeps the actors' sandbox uids clear of a local pool's (uid_base + worker index)
RUN_RETRIES = 3  # Ray retries of one run on a restarted actor
RESUBMITS = 3  # then ours, after a pause, while an actor is only restarting (ActorUnavailableError)
WORKER_LOST = ("sandbox worker died", "worker unavailable")  # SandboxPool's details when a worker itself fails
WORKER_LOST_WAIT_S = 0.2  # before running a job again whose worker died (its actor may be going down)
STREAM_THREADS = 512  # units running beside one node's pool at once (bench tasks; they mostly wait on the model)


class NodeSandbox:
    """The actor: one `SandboxPool` on its node. A run takes a thread of the `runs` group, a stream one of `tasks`."""

    def __init__(self, config: SandboxConfig, limits: Limits) -> None:
        self.pool = SandboxPool(config, limits)

    def info(self) -> dict[str, Any]:
        return {"node": ray.get_runtime_context().get_node_id(), "pid": os.getpid(), "size": self.pool.size,
                "layers": self.pool.layers}

    @ray.method(concurrency_group="runs")
    def run(self, job: dict, stdin: str | bytes, limits: Limits | None) -> ExecResult:
        return self.pool.run(job, stdin, limits)

    @ray.method(concurrency_group="tasks")
    def stream(self, fn: Callable[..., Iterator[Any]], *args: Any) -> Iterator[Any]:
        """Run `fn(pool, *args)` here, beside the pool, and stream what it yields back to the caller."""
        yield from fn(self.pool, *args)

    def close(self) -> None:
        self.pool.close()


class RayExecutor:
    """An `Executor` whose runs happen on a Ray cluster's nodes (see the module docstring)."""

    def __init__(self, config: SandboxConfig | None = None, limits: Limits | None = None,
                 address: str | None = None, start_timeout_s: float = 120.0) -> None:
        self.config = config or SandboxConfig()
        self.limits = limits or Limits()
        self.address = address
        self._owns_ray = connect(address)
        self._lock = threading.Lock()
        self._actors: list[Any] = []
        self._closed = False
        try:
            self._start(start_timeout_s)
        except BaseException:
            self.close()
            raise

    def _start(self, timeout_s: float) -> None:
        nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]
        if not nodes:
            raise ExecutorUnavailable("the Ray cluster has no live node with CPUs to run programs on")
        sizes = [self.config.workers or max(1, int(n["Resources"]["CPU"])) for n in nodes]
        stride = max(sizes)
        actor_class = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=RUN_RETRIES,
                                 concurrency_groups={"runs": 2 * stride + 8, "tasks": STREAM_THREADS})(NodeSandbox)
        for index, (node, size) in enumerate(zip(nodes, sizes, strict=True)):
            config = replace(self.config, workers=size, uid_base=self.config.uid_base + UID_OFFSET + index * stride)
            strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=True)
            self._actors.append(actor_class.options(scheduling_strategy=strategy).remote(config, self.limits))
        try:
            infos = ray.get([actor.info.remote() for actor in self._actors], timeout=timeout_s)
        except GetTimeoutError:
            raise ExecutorUnavailable(f"Ray sandbox actors did not start within {timeout_s:.0f} s") from None
        except RayActorError as exc:
            raise ExecutorUnavailable(f"a Ray sandbox actor failed to start: {_first_line(exc)}") from None
        self._sizes = [info["size"] for info in infos]
        self._layers: list[Layer] = infos[0]["layers"]
        self._in_flight = [0] * len(self._actors)
        self._dead = [False] * len(self._actors)
        for layer in self._layers:
            if not layer.on:
                log.warning("sandbox layer %s is off on the Ray nodes: %s", layer.name, layer.detail)

    @property
    def layers(self) -> list[Layer]:
        return self._layers

    @property
    def size(self) -> int:
        """Sandbox workers over the whole cluster."""
        return sum(self._sizes)

    @property
    def actors(self) -> list[Any]:
        """The actor handles, one per node (for tests and tools: e.g. `ray.kill` one)."""
        return list(self._actors)

    def actor_info(self) -> list[dict[str, Any]]:
        """Node id, pid, pool size and layers of each actor, asked now."""
        return ray.get([actor.info.remote() for actor in self._actors])

    def _acquire(self) -> int | None:
        """The live actor with the fewest runs in flight per worker, counted as busy by one more; None if none."""
        with self._lock:
            live = [i for i in range(len(self._actors)) if not self._dead[i]]
            if not live:
                return None
            index = min(live, key=lambda i: self._in_flight[i] / self._sizes[i])
            self._in_flight[index] += 1
            return index

    def _release(self, index: int) -> None:
        with self._lock:
            self._in_flight[index] -= 1

    def _lost(self, index: int, exc: RayActorError, attempt: int) -> tuple[str, float]:
        """Account for a failed submission: (what went wrong, seconds to wait before resubmitting)."""
        if isinstance(exc, ActorDiedError):
            with self._lock:
                self._dead[index] = True
            log.warning("Ray sandbox actor %d is gone: %s", index, _first_line(exc))
            return _first_line(exc), 0.0
        return _first_line(exc), min(0.5 * 2**attempt, 5.0)  # restarting: give it time

    def _attempts(self) -> range:
        return range(len(self._actors) + RESUBMITS)

    def run(self, job: dict, stdin: str | bytes = b"", limits: Limits | None = None) -> ExecResult:
        """Run one harness job on the least busy node; never raises for the program's behaviour."""
        limits = limits or self.limits
        problem, lost = "no live Ray sandbox actor", None
        for attempt in self._attempts():
            index = self._acquire()
            if index is None:
                break
            try:
                lost = ray.get(self._actors[index].run.remote(job, stdin, limits))
                if not _worker_lost(lost):
                    return lost
                problem, wait_s = lost.detail, WORKER_LOST_WAIT_S
            except RayActorError as exc:
                problem, wait_s = self._lost(index, exc, attempt)
            finally:
                self._release(index)
            time.sleep(wait_s)
        return lost if lost is not None else _unavailable(problem, limits)

    def run_program(self, code: str, stdin: str | bytes = b"", limits: Limits | None = None) -> ExecResult:
        return self.run({"mode": "stdio", "code": code}, stdin, limits)

    def map(self, jobs: list[tuple[dict, str | bytes, Limits | None]]) -> list[ExecResult]:
        """Run several jobs over every node at once, results in order."""
        submitted = []
        for job, stdin, limits in jobs:
            index = self._acquire()
            ref = None if index is None else self._actors[index].run.remote(job, stdin, limits or self.limits)
            submitted.append((index, ref))
        results = []
        for (index, ref), (job, stdin, limits) in zip(submitted, jobs, strict=True):
            if index is None:
                results.append(self.run(job, stdin, limits))
                continue
            try:
                result = ray.get(ref)
                results.append(self.run(job, stdin, limits) if _worker_lost(result) else result)
            except RayActorError as exc:
                self._lost(index, exc, 0)
                results.append(self.run(job, stdin, limits))  # on another actor, or a sandbox_error
            finally:
                self._release(index)
        return results

    async def arun(self, job: dict, stdin: str | bytes = b"", limits: Limits | None = None) -> ExecResult:
        limits = limits or self.limits
        problem, lost = "no live Ray sandbox actor", None
        for attempt in self._attempts():
            index = self._acquire()
            if index is None:
                break
            try:
                lost = await self._actors[index].run.remote(job, stdin, limits)
                if not _worker_lost(lost):
                    return lost
                problem, wait_s = lost.detail, WORKER_LOST_WAIT_S
            except RayActorError as exc:
                problem, wait_s = self._lost(index, exc, attempt)
            finally:
                self._release(index)
            await asyncio.sleep(wait_s)
        return lost if lost is not None else _unavailable(problem, limits)

    async def stream(self, fn: Callable[..., Iterator[Any]], *args: Any) -> AsyncIterator[Any]:
        """Run `fn(pool, *args)` in the least busy node's actor, beside its pool, yielding what it yields.

        `fn` must be importable on every node (a module-level function of an installed package). It is not
        retried: if the actor dies, `RayActorError` reaches the caller, which knows whether a retry is safe.
        """
        index = self._acquire()
        if index is None:
            raise ActorDiedError()
        try:
            method = self._actors[index].stream.options(num_returns="streaming", max_task_retries=0)
            async for ref in method.remote(fn, *args):
                yield await ref
        finally:
            self._release(index)

    def with_limits(self, **changes) -> Limits:
        return replace(self.limits, **changes)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if ray.is_initialized():
            with contextlib.suppress(RayActorError, GetTimeoutError):  # killed below either way
                ray.get([actor.close.remote() for actor in self._actors], timeout=30)
            for actor in self._actors:
                ray.kill(actor, no_restart=True)
            if self._owns_ray:
                ray.shutdown()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def connect(address: str | None) -> bool:
    """Join the Ray instance of this process, or the cluster at `address`; True when this call started Ray."""
    if ray.is_initialized():
        return False
    target = address or os.environ.get("RAY_ADDRESS")
    if target and target not in ("auto", "local"):
        probe(target)
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ExecutorUnavailable(f"cannot join the Ray cluster at {address or 'this machine'}: "
                                  f"{_first_line(exc)}") from None
    return True


def probe(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast, in one line, when nothing listens at a HOST:PORT address (Ray itself would retry for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ExecutorUnavailable(f"Ray address {address!r} is not HOST:PORT (or auto)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ExecutorUnavailable(f"no Ray cluster answers at {address}: {exc.strerror or exc}") from None


def _worker_lost(result: ExecResult) -> bool:
    """The node's sandbox worker died under the run, as it does when its actor is being killed: run it again."""
    return result.status == "sandbox_error" and result.detail.startswith(WORKER_LOST)


def _unavailable(problem: str, limits: Limits) -> ExecResult:
    return ExecResult.from_wire({"status": "sandbox_error", "detail": f"Ray sandbox actor unavailable: {problem}"},
                                limits)


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[0] if lines else type(exc).__name__)[:300]

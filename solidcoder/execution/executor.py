"""Where sandboxed runs happen: the `Executor` interface and `make_executor` for `--executor local|ray[:ADDRESS]`.

`Executor` is the interface of `SandboxPool` (run, run_program, map, arun, layers, size, limits, with_limits,
close, context manager). Everything that executes programs (the judge, the tracer, the pipeline's stages, the
bench tasks, the trainer's rewards, prune-then-rank) takes an `Executor`, so the same code runs on

* `local` (the default): a `SandboxPool` of fork-server workers on this machine;
* `ray` / `ray:ADDRESS`: a `RayExecutor` (`ray_executor.py`, extra `dist`) whose actors each own a `SandboxPool`
  on their node. `ray` joins the Ray instance already started in this process, else the cluster `ray start`
  left on this machine, else a fresh local one; `ray:ADDRESS` joins the cluster at ADDRESS (`HOST:PORT` of the
  head node, or `auto`).

Either way a run returns the same `ExecResult`, with the same isolation (see `sandbox.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from solidcoder.errors import BadInput

if TYPE_CHECKING:
    from solidcoder.execution.inside.isolation import Layer
    from solidcoder.execution.sandbox import ExecResult, Limits, SandboxConfig

class ExecutorUnavailable(BadInput):
    """The executor cannot be had: Ray missing, a cluster address that does not answer, actors that never start."""


EXECUTOR_HELP = "local (this machine's sandbox pool), ray (a local Ray instance) or ray:ADDRESS (a Ray cluster)"


@runtime_checkable
class Executor(Protocol):
    """Runs harness jobs in the sandbox and returns `ExecResult`s; never raises for the program's behaviour."""

    limits: Limits

    @property
    def layers(self) -> list[Layer]: ...

    @property
    def size(self) -> int: ...

    def run(self, job: dict, stdin: str | bytes = b"", limits: Limits | None = None) -> ExecResult: ...

    def run_program(self, code: str, stdin: str | bytes = b"", limits: Limits | None = None) -> ExecResult: ...

    def map(self, jobs: list[tuple[dict, str | bytes, Limits | None]]) -> list[ExecResult]: ...

    async def arun(self, job: dict, stdin: str | bytes = b"", limits: Limits | None = None) -> ExecResult: ...

    def with_limits(self, **changes) -> Limits: ...

    def close(self) -> None: ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc) -> None: ...


@dataclass(frozen=True)
class ExecutorSpec:
    """A parsed `--executor` value: `kind` is local or ray; `address` is the Ray cluster's, or None."""

    kind: str
    address: str | None = None

    def __str__(self) -> str:
        return self.kind if self.address is None else f"{self.kind}:{self.address}"


def parse_executor(spec: str | None) -> ExecutorSpec:
    """Check an `--executor` value without importing anything; BadInput names what is wrong."""
    text = (spec or "local").strip()
    kind, sep, address = text.partition(":")
    if kind == "local" and not sep:
        return ExecutorSpec("local")
    if kind == "ray":
        if sep and not address.strip():
            raise BadInput("--executor ray:ADDRESS needs an address, e.g. ray:10.0.0.1:6379 (or plain ray)")
        return ExecutorSpec("ray", address.strip() or None)
    raise BadInput(f"--executor {spec!r}: expected {EXECUTOR_HELP}")


def make_executor(spec: str | None = "local", config: SandboxConfig | None = None,
                  limits: Limits | None = None) -> Executor:
    """The executor for `spec` (see the module docstring); `config.workers` is sandbox workers per node."""
    parsed = parse_executor(spec)
    if parsed.kind == "local":
        from solidcoder.execution.sandbox import SandboxPool

        return SandboxPool(config, limits)
    try:
        import ray  # noqa: F401 - fail now, with install advice
    except ImportError:
        message = f"--executor {parsed}: Ray is not installed; pip install 'solidcoder[dist]'"
        raise ExecutorUnavailable(message) from None
    from solidcoder.execution.ray_executor import RayExecutor

    return RayExecutor(config, limits, address=parsed.address)

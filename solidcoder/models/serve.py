"""Start a local OpenAI-compatible server (vLLM or llama.cpp), wait until it answers, and stop it cleanly.

The server runs as a real child process in its own process group (so Ctrl-C here stops it and everything it
spawned), logging to a file. Readiness means GET /v1/models answers 200; if the process dies first we fail at once
and show the end of its log.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from solidcoder.errors import BadInput

ENGINES = ("vllm", "llama-cpp")


class ServeError(Exception):
    """The server did not come up; the message includes the end of its log."""


@dataclass
class ServeConfig:
    """What to serve and how."""

    engine: str
    model: str
    port: int = 8000
    host: str = "127.0.0.1"
    tensor_parallel_size: int = 1
    max_model_len: int | None = None
    gpu_memory_utilization: float = 0.9
    n_ctx: int = 4096
    n_threads: int | None = None
    extra_args: list[str] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def served_name(self) -> str:
        """The name clients must send: the model id for vLLM, the file stem for a GGUF."""
        return Path(self.model).stem if self.engine == "llama-cpp" else self.model


def build_command(cfg: ServeConfig) -> list[str]:
    """The exact command line that starts the server."""
    if cfg.engine == "vllm":
        return _vllm_command(cfg)
    if cfg.engine == "llama-cpp":
        return _llama_cpp_command(cfg)
    raise BadInput(f"--engine {cfg.engine!r}: expected one of {', '.join(ENGINES)}")


def _vllm_command(cfg: ServeConfig) -> list[str]:
    command = ["vllm", "serve", cfg.model, "--host", cfg.host, "--port", str(cfg.port)]
    command += ["--served-model-name", cfg.served_name, "--tensor-parallel-size", str(cfg.tensor_parallel_size)]
    command += ["--gpu-memory-utilization", str(cfg.gpu_memory_utilization), "--dtype", "auto"]
    if cfg.max_model_len:
        command += ["--max-model-len", str(cfg.max_model_len)]
    return command + cfg.extra_args


def _llama_cpp_command(cfg: ServeConfig) -> list[str]:
    command = [sys.executable, "-m", "llama_cpp.server", "--model", cfg.model, "--model_alias", cfg.served_name]
    command += ["--host", cfg.host, "--port", str(cfg.port), "--n_ctx", str(cfg.n_ctx)]
    if cfg.n_threads:
        command += ["--n_threads", str(cfg.n_threads)]
    return command + cfg.extra_args


def check_available(cfg: ServeConfig) -> None:
    """Fail with install advice before starting anything that cannot start."""
    if cfg.engine == "vllm" and shutil.which("vllm") is None:
        raise BadInput("vllm is not installed here: pip install 'solidcoder[gpu]' on a machine with a GPU")
    if cfg.engine == "llama-cpp":
        if importlib.util.find_spec("llama_cpp") is None:
            raise BadInput("llama.cpp server needs llama-cpp-python: pip install 'solidcoder[local]'")
        if not Path(cfg.model).is_file():
            raise BadInput(f"--engine llama-cpp needs a GGUF file; not found: {cfg.model}")


def client_flags(cfg: ServeConfig) -> str:
    """What to pass to `solve`/`bench` to use this server."""
    return f"--model openai/{cfg.served_name} --api-base {cfg.base_url}"


class Server:
    """A running server process; use `start`, then `wait_ready`, and always `stop`."""

    def __init__(self, cfg: ServeConfig, log_path: Path | None = None):
        self.cfg = cfg
        self.command = build_command(cfg)
        self.log_path = log_path or Path(tempfile.mkstemp(prefix=f"solidcoder-{cfg.engine}-", suffix=".log")[1])
        self.process: subprocess.Popen | None = None

    def start(self) -> Server:
        with open(self.log_path, "ab") as log:
            # Own session = own process group, so stop() reaches the engine's worker processes too.
            self.process = subprocess.Popen(
                self.command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        return self

    def wait_ready(self, timeout_s: float = 600.0, poll_s: float = 0.5) -> list[str]:
        """Poll /v1/models until it answers; returns the served model ids. Raises `ServeError` on death/timeout."""
        assert self.process is not None, "start() first"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServeError(f"server exited with code {self.process.returncode}:\n{self.log_tail()}")
            models = probe_models(self.cfg.base_url)
            if models is not None:
                return models
            time.sleep(poll_s)
        raise ServeError(f"server not ready after {timeout_s:.0f} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, grace_s: float = 10.0) -> int | None:
        """SIGTERM the process group, SIGKILL it if it lingers; returns the exit code."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        _signal_group(self.process.pid, signal.SIGTERM)
        try:
            return self.process.wait(grace_s)
        except subprocess.TimeoutExpired:
            _signal_group(self.process.pid, signal.SIGKILL)
            return self.process.wait()


def probe_models(base_url: str, timeout_s: float = 2.0) -> list[str] | None:
    """Model ids from GET {base_url}/models, or None while the server is not answering yet."""
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout_s) as response:
            payload = json.loads(response.read())
    except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
        return None
    return [str(m.get("id")) for m in payload.get("data", [])]


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(pid, sig)


def run_server(cfg: ServeConfig, ready_timeout_s: float, say: Callable[[str], object]) -> int:
    """The `solidcoder serve` flow: start, wait until ready, print how to connect, run until Ctrl-C, stop."""
    check_available(cfg)
    server = Server(cfg).start()
    say(f"starting: {shlex.join(server.command)}\n  log: {server.log_path}")
    try:
        server.wait_ready(ready_timeout_s)
        say(f"ready at {cfg.base_url}\n  use: solidcoder solve ... {client_flags(cfg)}\n  Ctrl-C stops the server")
        return server.process.wait() if server.process else 1
    except ServeError as exc:
        say(f"error: {exc}")
        return 1
    except KeyboardInterrupt:
        say("stopping the server")
        return 0
    finally:
        server.stop()

"""`serve`: the command lines it builds, the health wait (real processes, real HTTP), stopping the process group."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from solidcoder.errors import BadInput
from solidcoder.models.serve import ServeConfig, ServeError, Server, build_command, client_flags, probe_models

REPO = Path(__file__).resolve().parents[1]


def test_vllm_command_line():
    cfg = ServeConfig("vllm", "Qwen/Qwen2.5-Coder-7B-Instruct", port=8123, tensor_parallel_size=2, max_model_len=16384)
    assert build_command(cfg) == [
        "vllm", "serve", "Qwen/Qwen2.5-Coder-7B-Instruct", "--host", "127.0.0.1", "--port", "8123",
        "--served-model-name", "Qwen/Qwen2.5-Coder-7B-Instruct", "--tensor-parallel-size", "2",
        "--gpu-memory-utilization", "0.9", "--dtype", "auto", "--max-model-len", "16384",
    ]  # fmt: skip
    assert client_flags(cfg) == "--model openai/Qwen/Qwen2.5-Coder-7B-Instruct --api-base http://127.0.0.1:8123/v1"


def test_llama_cpp_command_line():
    cfg = ServeConfig("llama-cpp", "/models/tiny.Q4.gguf", port=9000, n_ctx=2048, n_threads=2)
    assert build_command(cfg) == [
        sys.executable, "-m", "llama_cpp.server", "--model", "/models/tiny.Q4.gguf", "--model_alias", "tiny.Q4",
        "--host", "127.0.0.1", "--port", "9000", "--n_ctx", "2048", "--n_threads", "2",
    ]  # fmt: skip
    assert client_flags(cfg) == "--model openai/tiny.Q4 --api-base http://127.0.0.1:9000/v1"


def test_unknown_engine_is_bad_input():
    with pytest.raises(BadInput, match="expected one of vllm, llama-cpp"):
        build_command(ServeConfig("tgi", "m"))


def test_probe_answers_none_until_a_server_listens(scripted_server):
    port = int(scripted_server.url.rsplit(":", 1)[1].split("/")[0])
    assert probe_models(scripted_server.url) == ["scripted-model"]
    assert probe_models(f"http://127.0.0.1:{port + 1 if port < 65535 else port - 1}/v1", timeout_s=0.5) is None


def server_running(command: list[str], port: int = 1) -> Server:
    """A Server whose process is `command` (a real child process) instead of an inference engine."""
    server = Server(ServeConfig("llama-cpp", "unused.gguf", port=port))
    server.command = command
    return server.start()


def test_wait_ready_returns_models_once_the_port_answers(scripted_server):
    port = int(scripted_server.url.rsplit(":", 1)[1].split("/")[0])
    server = server_running([sys.executable, "-c", "import time; time.sleep(60)"], port)
    try:
        assert server.wait_ready(timeout_s=10, poll_s=0.05) == ["scripted-model"]
    finally:
        server.stop()
    assert server.process.returncode is not None


def test_wait_ready_fails_early_when_the_process_dies_and_shows_its_log():
    script = "import sys; print('loading weights'); print('CUDA out of memory', flush=True); sys.exit(3)"
    server = server_running([sys.executable, "-c", script])
    start = time.monotonic()
    with pytest.raises(ServeError, match=r"(?s)exited with code 3.*CUDA out of memory"):
        server.wait_ready(timeout_s=60, poll_s=0.05)
    assert time.monotonic() - start < 10


def test_wait_ready_times_out_and_stop_kills_the_whole_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    # The grandchild (sleep) is in the server's process group, so stopping the group must end it too.
    script = f"sleep 300 & echo $! > {pid_file}; trap '' TERM; wait"
    server = server_running(["bash", "-c", script])
    with pytest.raises(ServeError, match="not ready after 1 s"):
        server.wait_ready(timeout_s=1, poll_s=0.1)
    server.stop(grace_s=1)
    grandchild = int(pid_file.read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{grandchild}").exists() or "Z" in Path(f"/proc/{grandchild}/stat").read_text().split()[2]


def test_serve_vllm_without_vllm_installed_exits_2():
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "solidcoder", "serve", "--engine", "vllm", "some/model"],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "vllm is not installed" in done.stderr

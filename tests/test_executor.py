"""The executor interface without a cluster: the local pool satisfies it, `--executor` values are checked before
anything starts, and an unreachable Ray cluster is one line and exit 2 with no run directory left behind."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from bench_support import HUMANEVAL, bench_command

from solidcoder.errors import BadInput
from solidcoder.execution.executor import Executor, ExecutorSpec, make_executor, parse_executor
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.train.config import load_config


def test_the_local_pool_is_an_executor_and_make_executor_builds_one():
    with make_executor("local", SandboxConfig(workers=1)) as pool:
        assert isinstance(pool, SandboxPool) and isinstance(pool, Executor)
        assert pool.run_program("print(input()[::-1])", "olleh").stdout == "hello\n"
        assert pool.size == 1 and pool.with_limits(wall_s=3.0).wall_s == 3.0


@pytest.mark.parametrize(("spec", "parsed"), [
    (None, ExecutorSpec("local")), ("local", ExecutorSpec("local")), ("ray", ExecutorSpec("ray")),
    ("ray:10.0.0.1:6379", ExecutorSpec("ray", "10.0.0.1:6379")), ("ray:auto", ExecutorSpec("ray", "auto")),
    ("ray:ray://head:10001", ExecutorSpec("ray", "ray://head:10001")),
])
def test_executor_specs_parse(spec, parsed):
    assert parse_executor(spec) == parsed
    assert str(parsed) == (spec or "local")


@pytest.mark.parametrize("spec", ["ray:", "ray: ", "local:x", "dask", "Ray", "kubernetes:head"])
def test_bad_executor_specs_are_bad_input_in_one_line(spec):
    with pytest.raises(BadInput) as caught:
        make_executor(spec)
    assert "\n" not in str(caught.value) and "--executor" in str(caught.value)


def test_train_config_takes_the_executor_and_checks_it():
    assert load_config().executor == "local"
    assert load_config(executor="ray:10.0.0.1:6379").executor == "ray:10.0.0.1:6379"
    with pytest.raises(BadInput, match="--executor"):
        load_config(executor="ray:")


def run(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solidcoder", *args], capture_output=True, text=True,
                          timeout=timeout)


def one_line_error(done: subprocess.CompletedProcess, *needles: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert all(needle in lines[0] for needle in needles), lines[0]


def test_bench_with_a_bad_executor_is_exit_2_and_touches_nothing(tmp_path):
    run_dir = tmp_path / "run"
    one_line_error(run(bench_command("http://127.0.0.1:9", run_dir, "--executor", "cluster")[3:]), "--executor")
    assert not run_dir.exists()


def test_bench_on_ray_refuses_an_in_process_model(tmp_path):
    run_dir = tmp_path / "run"
    args = ["bench", "--dataset", "humaneval", "--data-file", str(HUMANEVAL), "--limit", "1", "--model", "local",
            "--run-dir", str(run_dir), "--executor", "ray"]
    one_line_error(run(args), "--executor ray", "in-process")
    assert not run_dir.exists()


def test_an_unreachable_cluster_is_one_line_and_exit_2_quickly(tmp_path):
    pytest.importorskip("ray", reason="Ray is the dist extra: pip install 'solidcoder[dist]'")
    run_dir = tmp_path / "run"
    started = time.monotonic()
    done = run(bench_command("http://127.0.0.1:9", run_dir, "--executor", "ray:127.0.0.1:9")[3:])
    one_line_error(done, "127.0.0.1:9")
    assert time.monotonic() - started < 60 and not run_dir.exists()


def test_rank_and_train_reject_a_bad_executor(tmp_path):
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text('{"problem_id": "HumanEval/0", "code": "x = 1"}\n')
    one_line_error(run(["rank", str(candidates), "--data-file", str(HUMANEVAL), "--executor", "spark"]),
                   "--executor")
    one_line_error(run(["train", "coderl+", "--model", "m", "--data", str(HUMANEVAL), "--run-dir", str(tmp_path / "o"),
                        "--executor", "ray:"]), "--executor")

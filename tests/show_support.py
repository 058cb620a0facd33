"""Fresh runs for the `show` and report tests: a routed bench run on three HumanEval problems against the scripted
server, one of them answered wrongly (so its executions hold a first failure), recorded as a user's run is."""

from __future__ import annotations

from pathlib import Path

from bench_support import bench_command, canonical_responder, run_cli
from scripted_server import ScriptedServer

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "benchmarks" / "results" / "humaneval40_qwen05b_routed_onerequest"
WRONG = "has_close_elements"  # HumanEval/0's entry point: answered with a stub that returns None


def fresh_bench_run(run_dir: Path) -> Path:
    """`bench --strategy solidcoder-routed` on HumanEval/0-2, HumanEval/0 answered wrongly; returns `run_dir`."""
    with ScriptedServer() as server:
        server.responder = canonical_responder(wrong={WRONG})
        done = run_cli(bench_command(server.url, run_dir, "--strategy", "solidcoder-routed", limit=3))
    assert done.returncode == 0, done.stderr
    return run_dir

"""Fresh runs for the `show` and report tests: a routed bench run on three HumanEval problems against the scripted
server, one of them answered wrongly (so its executions hold a first failure) by a program whose text would be
markup were it not escaped, recorded as a user's run is."""

from __future__ import annotations

from pathlib import Path

from bench_support import bench_command, canonical_responder, entry_point_of, humaneval_rows, run_cli
from scripted_server import Received, ScriptedServer, reply

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "benchmarks" / "results" / "humaneval40_qwen05b_routed_onerequest"
WRONG = "has_close_elements"  # HumanEval/0's entry point: answered with a wrong program
HOSTILE = "</pre><script>document.title = 'pwned'</script>"
WRONG_PROGRAM = f"```python\ndef {WRONG}(*args):\n    note = \"{HOSTILE}\"\n    return None\n```"


def responder():
    """Canonical solutions, but the wrong program (with its would-be markup) for HumanEval/0."""
    canonical, rows = canonical_responder(), humaneval_rows()

    def respond(received: Received):
        return reply(WRONG_PROGRAM) if entry_point_of(received, rows) == WRONG else canonical(received)

    return respond


def fresh_bench_run(run_dir: Path) -> Path:
    """`bench --strategy solidcoder-routed` on HumanEval/0-2, HumanEval/0 answered wrongly; returns `run_dir`."""
    with ScriptedServer() as server:
        server.responder = responder()
        done = run_cli(bench_command(server.url, run_dir, "--strategy", "solidcoder-routed", limit=3))
    assert done.returncode == 0, done.stderr
    return run_dir

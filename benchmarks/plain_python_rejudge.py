"""Do the committed HumanEval rows' verdicts agree with plain Python in the declared benchmark environment?

Every row of the run directories given (HumanEval's problems; a row's recorded `code`) is judged again outside the
sandbox, as the dataset's harness judges it: the problem's header (the prompt's imports and helpers), the program,
HumanEval's `check` and `check(entry_point)`, run by a plain Python that imports the standard library and
`BENCHMARK_MODULES` only (`solidcoder/execution/environment.py`'s `plain_python`), in a fresh folder and session,
with a 10 s limit, as the official harness runs them (these are the recorded programs of a benchmark run, which the
official harness also ran; hostile programs run only in the sandbox). Prints the agreement per strategy and overall,
and every disagreement. No model call.

    python benchmarks/plain_python_rejudge.py benchmarks/results/humaneval164_qwen05b \
        --data-file ../shared/data/humaneval_with_sample_io.jsonl
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.environment import BENCHMARK_MODULES, plain_python
from solidcoder.store import RESULTS, read_rows

LIMIT_S = 10


def plain_verdict(command: list[str], env: dict[str, str], source: str) -> bool:
    """Whether `source` exits 0 in plain Python (in a fresh folder and session, within LIMIT_S)."""
    with tempfile.TemporaryDirectory() as folder:
        try:
            done = subprocess.run([*command, "-c", source], cwd=folder, env=env, capture_output=True,
                                  timeout=LIMIT_S, start_new_session=True)
        except subprocess.TimeoutExpired:
            return False
        return done.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dirs", type=Path, nargs="+")
    parser.add_argument("--data-file", type=Path, required=True)
    args = parser.parse_args()
    tests = {row["task_id"]: row for row in map(json.loads, args.data_file.read_text().splitlines())}
    problems = {p.id: p for p in load_dataset("humaneval", DataOptions(data_file=args.data_file))[0]}
    rows = [row for run in args.run_dirs for row in read_rows(run / RESULTS) if row["id"] in problems]
    sources = [f"{problems[r['id']].header}\n{r.get('code') or ''}\n{tests[r['id']]['test']}\n"
               f"check({tests[r['id']]['entry_point']})\n" for r in rows]
    with plain_python(BENCHMARK_MODULES) as (command, env), ThreadPoolExecutor(2) as pool:
        plain = list(pool.map(lambda source: plain_verdict(command, env, source), sources))
    counts: Counter = Counter()
    for row, verdict in zip(rows, plain, strict=True):
        counts[row["strategy"], verdict == row["passed"]] += 1
        if verdict != row["passed"]:
            print(f"disagrees: {row['strategy']} {row['id']}: the judge {'passed' if row['passed'] else 'failed'} it, "
                  f"plain Python {'passed' if verdict else 'failed'} it")
    for strategy in sorted({s for s, _ in counts}):
        agree, total = counts[strategy, True], counts[strategy, True] + counts[strategy, False]
        print(f"{strategy}: {agree} of {total} agree")
    agree = sum(v for (_, same), v in counts.items() if same)
    print(f"all: {agree} of {len(rows)} agree ({agree / max(len(rows), 1) * 100:.1f} %), environment: the standard "
          f"library and {', '.join(BENCHMARK_MODULES)}")


if __name__ == "__main__":
    main()

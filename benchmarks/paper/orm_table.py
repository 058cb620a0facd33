"""The ORM paper's Table 1 layout (Orlanski et al., generate-prune-then-rank) for samples you give, one command.

    python benchmarks/paper/orm_table.py --samples SAMPLES.jsonl [--orm DIR] [--dataset humaneval] [--limit N] \
        [--k 8] [--preset paper]

SAMPLES is a JSONL of {problem_id, code} rows (or a bench results.jsonl), several per problem; `--orm` a model
trained by `solidcoder train orm`. The table is `solidcoder rank --preset paper`: rows none, each filter alone and
V_all; Best-of-k and programs per second of the verifier-only baseline (tests passed, duplicates breaking ties) and,
with an ORM, of the ORM ranking; PPS averaged over 5 parallel passes. `--limit N` keeps the first N problems that
have samples. Offline the problems come from the shared files (`--data-dir`).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tables import SHARED, write

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.verify.table import rank_preset, run_rank

FILES = {"humaneval": "humaneval_with_sample_io.jsonl", "mbpp": "mbpp_397.jsonl", "apps": "apps_selected150.jsonl",
         "codecontests": "codecontests_sample19.jsonl", "livecodebench": "livecodebench_sample.jsonl"}


def main() -> None:
    args = parse()
    problems, _ = load_dataset(args.dataset, DataOptions(data_file=None if args.online else args.data_dir
                                                         / FILES[args.dataset]))
    settings = rank_preset(args.preset)
    with tempfile.TemporaryDirectory() as tmp:
        samples = first_problems(args.samples, args.limit, Path(tmp) / "samples.jsonl")
        markdown = run_rank(samples, problems, settings, args.orm or "none", args.k)
    header = (f"# ORM paper Table 1 layout, rerun: `{args.samples}` on {args.dataset}, "
              f"{f'the first {args.limit} problems' if args.limit else 'every problem'} with samples\n\n"
              f"`solidcoder rank --preset {args.preset}`: Best-of-{args.k} (%) on the hidden tests and programs per "
              f"second; filters {', '.join(settings.prune)}; ORM: {args.orm or 'none'}.")
    write("orm_table1.md", header, ["benchmarks/paper/orm_table.py", *sys.argv[1:]],
          "| " + markdown.replace("\n", " |\n| ") + " |", args.out)


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, required=True)
    parser.add_argument("--orm", default=None, help="a trained ORM directory (default: the baseline alone)")
    parser.add_argument("--dataset", choices=sorted(FILES), default="humaneval")
    parser.add_argument("--limit", type=int, default=None, help="the first N problems with samples")
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--preset", default="paper")
    parser.add_argument("--data-dir", type=Path, default=SHARED)
    parser.add_argument("--online", action="store_true", help="load the hub dataset, not the shared file")
    parser.add_argument("--out", type=Path, default=None, help="the markdown file (default benchmarks/results/paper/)")
    return parser.parse_args()


def first_problems(samples: Path, limit: int | None, out: Path) -> Path:
    """`samples` itself, or a copy holding only the rows of its first `limit` problems."""
    if limit is None:
        return samples
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept = list(dict.fromkeys(str(r.get("problem_id", r.get("id"))) for r in rows))[:limit]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows if str(r.get("problem_id", r.get("id"))) in kept))
    return out


if __name__ == "__main__":
    main()

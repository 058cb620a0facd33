"""The SolidCoder paper's Tables 2, 3 and 4 for one model, one command each: a `bench` run per cell, then markdown.

    python benchmarks/paper/solidcoder_tables.py --table 3 --model MODEL [--limit N] [--run-dir DIR] [-- BENCH_ARGS]

Table 2: pass@1 of the seven strategies (Direct, CoT, Self-Planning, Analogical, MapCoder, CodeSIM, SolidCoder) on
HumanEval, CodeContests and APPS. Table 3: Direct, the five leave-one-out ablations and the full loop on
CodeContests. Table 4: pass@1, model calls and tokens per problem of MapCoder, CodeSIM and SolidCoder on the three
benchmarks. SolidCoder is `--strategy solidcoder`, the paper's Algorithm 1 in the paper's setting.

Each cell is `solidcoder bench` into `RUN_DIR/<dataset>` (rerun the command to resume; cells already finished
cost nothing, and Table 4 reuses Table 2's cells), and the table is built from those rows with the report's own
scoring. Offline the datasets are the shared files (`--data-dir`, default ../shared/data): the paper's
CodeContests set has 165 problems and APPS 150, the shared CodeContests file has 19. `--online` loads the hub
datasets instead. Arguments after `--` go to every `bench` (e.g. `-- --api-base URL --max-calls 30`).
"""

from __future__ import annotations

import argparse
import sys

from tables import latest, parse_with_bench_args, pct, run_cell, table_parser, write

from solidcoder.bench.metrics import Summary

FILES = {"humaneval": "humaneval_with_sample_io.jsonl", "codecontests": "codecontests_sample19.jsonl",
         "apps": "apps_selected150.jsonl"}
NAMES = {"direct": "Direct", "cot": "CoT", "self_planning": "SelfPlanning", "analogical": "Analogical",
         "mapcoder": "MapCoder", "codesim": "CodeSIM", "solidcoder": "SolidCoder"}
PARTS = {"shift_left": "Shift-left Planning", "simulation": "Intermediate Simulation",
         "oracle": "Oracle-based Assertions", "live": "Live Execution", "defensive": "Defensive Accumulation"}
TABLES = {
    "2": (list(FILES), list(NAMES)),
    "3": (["codecontests"], ["direct", *(f"solidcoder_no_{p}" for p in PARTS), "solidcoder"]),
    "4": (list(FILES), ["mapcoder", "codesim", "solidcoder"]),
}


def main() -> None:
    args, bench_args = parse()
    datasets, strategies = TABLES[args.table]
    for dataset in datasets:
        for strategy in strategies:
            data_file = None if args.online else args.data_dir / FILES[dataset]
            run_cell(args.run_dir / dataset, dataset, strategy, args.model, data_file, args.limit, bench_args)
    cells = {(d, s): latest(args.run_dir / d, s) for d in datasets for s in strategies}
    markdown = {"2": table2, "3": table3, "4": table4}[args.table](datasets, strategies, cells)
    write(f"solidcoder_table{args.table}.md", header(args), ["benchmarks/paper/solidcoder_tables.py", *sys.argv[1:]],
          markdown, args.out)


def parse() -> tuple[argparse.Namespace, list[str]]:
    parser = table_parser(__doc__.splitlines()[0], list(TABLES), "paper-solidcoder")
    parser.add_argument("--model", required=True, help="any `bench --model` spec (a GGUF path, openai/NAME, ...)")
    return parse_with_bench_args(parser)


def header(args: argparse.Namespace) -> str:
    data = "the hub datasets" if args.online else f"the shared files in `{args.data_dir.name}/`"
    limit = f"the first {args.limit} problems of each" if args.limit else "every problem"
    return (f"# SolidCoder Table {args.table}, rerun: `{args.model}` on {data}, {limit}\n\n"
            f"pass@1 (%) on the hidden tests over the problems each cell finished (n in parentheses); infrastructure "
            f"errors are not scored. SolidCoder is the paper's Algorithm 1 (`--strategy solidcoder`).")


def table2(datasets: list[str], strategies: list[str], cells: dict) -> str:
    rows = ["| Benchmark | " + " | ".join(NAMES[s] for s in strategies) + " |",
            "|---|" + "---|" * len(strategies)]
    rows += [f"| {d} | " + " | ".join(pct(cells[d, s]) for s in strategies) + " |" for d in datasets]
    return "\n".join(rows)


def table3(datasets: list[str], strategies: list[str], cells: dict) -> str:
    full = cells[datasets[0], "solidcoder"]
    rows = ["| Configuration | Pass@1 | Δ |", "|---|---|---|"]
    for strategy in strategies:
        summary = cells[datasets[0], strategy]
        name = {"direct": "Direct", "solidcoder": "**SolidCoder (Full)**"}.get(strategy)
        name = name or f"w/o {PARTS[strategy.removeprefix('solidcoder_no_')]}"
        delta = "–" if strategy == "solidcoder" or not (summary and full and summary.problems and full.problems) \
            else f"{100 * (summary.pass1 - full.pass1):+.1f}"
        rows.append(f"| {name} | {pct(summary)} | {delta} |")
    return "\n".join(rows)


def table4(datasets: list[str], strategies: list[str], cells: dict) -> str:
    rows = ["| | " + " | ".join(NAMES[s] for s in strategies) + " |", "|---|" + "---|" * len(strategies)]
    for dataset in datasets:
        rows.append(f"| **{dataset}** |" + " |" * len(strategies))
        for label, value in (("Pass@1 (%)", pct), ("Model calls", lambda s: _per(s, "calls", 1)),
                             ("Tokens (K)", lambda s: _per(s, "tokens", 1000))):
            rows.append(f"| {label} | " + " | ".join(value(cells[dataset, s]) for s in strategies) + " |")
    return "\n".join(rows)


def _per(summary: Summary | None, field: str, scale: int) -> str:
    if summary is None or not summary.problems:
        return "–"
    value = getattr(summary, field) / scale
    return f"{value:.1f}" if scale > 1 else f"{value:.0f}"


if __name__ == "__main__":
    main()

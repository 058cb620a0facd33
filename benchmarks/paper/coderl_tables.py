"""The CodeRL+ paper's Tables 1 and 2 for the models you give, one command each: a `bench` run per cell, then markdown.

    python benchmarks/paper/coderl_tables.py --table 1 --model base=MODEL --model coderl=runs/coderl/final \
        [--limit N] [--run-dir DIR] [-- BENCH_ARGS]

Each `--model LABEL=SPEC` is a row (the base model, a GRPO run, a CodeRL+ run: any `bench --model` spec, a
trained `final/` directory included). Every cell is greedy (`--temperature 0`), the paper's evaluation.

Table 1, code generation: pass@1 of `--strategy direct` on HumanEval, MBPP and LiveCodeBench (the loadable ones of
the paper's benchmarks), and their mean. Table 2, code reasoning: the paper's LiveCodeBench code-reasoning set is not
loadable here, so CRUXEval output prediction (`--dataset cruxeval`, Exact@1) stands in for it, said so in the
table; `cruxeval-vars` (every variable's final value, the alignment task's own form) is a second column. The paper's
test-output-generation column has no loadable dataset and is printed as a dash.

Offline the datasets are the shared files (`--data-dir`, default ../shared/data); `--online` loads the hub datasets.
Cells already finished cost nothing on a rerun. Arguments after `--` go to every `bench`.
"""

from __future__ import annotations

import argparse
import sys

from tables import latest, parse_with_bench_args, pct, run_cell, table_parser, write

FILES = {"humaneval": "humaneval_with_sample_io.jsonl", "mbpp": "mbpp_397.jsonl",
         "livecodebench": "livecodebench_sample.jsonl", "cruxeval": "cruxeval_sample.jsonl",
         "cruxeval-vars": "cruxeval_sample.jsonl"}
TABLES = {"1": ["humaneval", "mbpp", "livecodebench"], "2": ["cruxeval", "cruxeval-vars"]}
COLUMNS = {"humaneval": "HumanEval", "mbpp": "MBPP", "livecodebench": "LiveCodeBench",
           "cruxeval": "Code reasoning: CRUXEval-O (for LCB code reasoning)", "cruxeval-vars": "CRUXEval variables"}


def main() -> None:
    args, bench_args = parse()
    models = dict(spec.split("=", 1) for spec in args.model)
    for dataset in TABLES[args.table]:
        data_file = None if args.online else args.data_dir / FILES[dataset]
        strategy = "direct" if dataset in ("humaneval", "mbpp", "livecodebench") else None
        for spec in models.values():
            run_cell(args.run_dir / dataset, dataset, strategy, spec, data_file, args.limit,
                     ["--temperature", "0", *bench_args])
    cells = {(d, label): latest(args.run_dir / d, model=spec) for d in TABLES[args.table]
             for label, spec in models.items()}
    markdown = table(TABLES[args.table], list(models), cells, args.table)
    write(f"coderl_table{args.table}.md", header(args), ["benchmarks/paper/coderl_tables.py", *sys.argv[1:]],
          markdown, args.out)


def parse() -> tuple[argparse.Namespace, list[str]]:
    parser = table_parser(__doc__.splitlines()[0], list(TABLES), "paper-coderl")
    parser.add_argument("--model", action="append", required=True, type=_model_spec,
                        help="LABEL=SPEC, one per row (any `bench --model` spec)")
    return parse_with_bench_args(parser)


def _model_spec(text: str) -> str:
    if "=" not in text or not text.split("=", 1)[0]:
        raise argparse.ArgumentTypeError(f"{text!r}: use LABEL=MODEL (e.g. base=Qwen/Qwen2.5-Coder-7B-Instruct)")
    return text


def header(args: argparse.Namespace) -> str:
    data = "the hub datasets" if args.online else f"the shared files in `{args.data_dir.name}/`"
    limit = f"the first {args.limit} problems of each" if args.limit else "every problem"
    what = "pass@1 (%) of `--strategy direct`, greedy," if args.table == "1" else "Exact@1 (%), greedy,"
    return (f"# CodeRL+ Table {args.table}, rerun on {data}, {limit}\n\n{what} over the problems each cell finished "
            f"(n in parentheses); infrastructure errors are not scored.")


def table(datasets: list[str], labels: list[str], cells: dict, number: str) -> str:
    columns = [COLUMNS[d] for d in datasets] + (["Avg."] if number == "1" else ["Test output generation"])
    rows = ["| Model | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for label in labels:
        values = [pct(cells[d, label]) for d in datasets]
        scored = [cells[d, label] for d in datasets if cells[d, label] and cells[d, label].problems]
        extra = "–" if number == "2" or len(scored) < len(datasets) else \
            f"{100 * sum(s.pass1 for s in scored) / len(scored):.1f}"
        rows.append(f"| {label} | " + " | ".join([*values, extra]) + " |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()

"""`solidcoder report`: side-by-side tables of run directories and a self-contained HTML page.

Table 1 is laid out like the SolidCoder paper's Table 2 (methods down, datasets across, pass@1 %); Table 2 like its
Table 4 (per dataset: pass@1, the change against the first method, and where the calls and tokens went). On a
terminal too narrow for a table even with its cells wrapped, the table is printed stacked, a block per row; no cell is
cut. Piped without $COLUMNS, the tables are laid out 200 columns wide.

A run directory is read through its shapes (`solidcoder.shapes`): a row with a string where a count or seconds
belongs stops the report with one line naming the file and line (exit code 2), before anything is printed or
written; a partly wrong report would be worse than none. Every cell and line is printed as `rich.text.Text` through
`terminal_safe`: a name is never read as markup, and its control characters are shown as escapes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from solidcoder.bench.compare import paired, wilson
from solidcoder.bench.equal_compute import equal_compute_lines
from solidcoder.bench.metrics import GROUP, Summary, summarize
from solidcoder.errors import BadInput
from solidcoder.escaping import terminal_safe
from solidcoder.languages import tagged
from solidcoder.shapes import ERROR, RESULT, RUN, checked_results, checked_rows
from solidcoder.store import ERRORS, RESULTS, RUNS, ResultRow, run_labels

if TYPE_CHECKING:
    from rich.console import Console, Group
    from rich.table import Table
    from rich.text import Text


def load_summaries(run_dirs: list[Path], same_problems: bool = False, ids: set[str] | None = None) -> list[Summary]:
    """Summaries of every configuration in the run directories; `same_problems` keeps, per dataset, only the
    problems every configuration finished (a fair comparison of runs that stopped at different points); `ids`, when
    given, only those problems."""
    results: list[ResultRow] = []
    errors: list[ResultRow] = []
    labels: dict[str, str] = {}
    for run_dir in run_dirs:
        rows, failed, named = _read(run_dir, ids)
        earlier = {row.config_hash for row in results + errors}
        results, errors = results + _reruns(run_dir, rows, earlier), errors + _reruns(run_dir, failed, earlier)
        labels.update(named)
    summaries = summarize(common_problems(results) if same_problems else results, errors)
    for s in summaries:
        s.label = labels.get(s.config_hash, "")
    return _distinct_names(summaries)


def _read(run_dir: Path, ids: set[str] | None) -> tuple[list[ResultRow], list[ResultRow], dict[str, str]]:
    """A run directory's result rows, error rows and configuration labels, every row checked against its shape."""
    if not (run_dir / RESULTS).exists() and not (run_dir / ERRORS).exists():
        raise BadInput(f"{run_dir}: not a run directory (no {RESULTS})")
    labels = run_labels(checked_rows(run_dir / RUNS, RUN))
    results, errors = checked_results(run_dir / RESULTS, RESULT), checked_results(run_dir / ERRORS, ERROR)
    return _only(results, ids), _only(errors, ids), labels


def _only(rows: list[ResultRow], ids: set[str] | None) -> list[ResultRow]:
    return rows if ids is None else [row for row in rows if row.id in ids]


def _reruns(run_dir: Path, rows: list[ResultRow], earlier: set[str]) -> list[ResultRow]:
    """A configuration that an earlier directory also holds is another run of it (the same command run again, say
    after a code change the hash does not cover): its rows are kept apart, named by their directory."""
    return [replace(row, run=run_dir.name) if row.config_hash in earlier else row for row in rows]


def _distinct_names(summaries: list[Summary]) -> list[Summary]:
    """Two configurations of one method, model and dataset (other options, templates or code) are told apart by
    their configuration hash, and two runs of one configuration by directory: the tables key their rows by name,
    and one would hide the other. Where the report holds programs in several languages, Python's are named too."""
    if len({s.language for s in summaries}) > 1:  # Python beside another language: every name says its language
        for s in (s for s in summaries if s.language == "python"):
            s.label = tagged(s.name, s.language, python_too=True)
    seen = Counter((s.dataset, s.name, s.model) for s in summaries)
    for s in summaries:
        if seen[s.dataset, s.name, s.model] > 1:
            s.label = f"{s.name} @{s.config_hash[:6]}" + (f" in {s.run}" if s.run else "")
    return summaries


def common_problems(results: list[ResultRow]) -> list[ResultRow]:
    """Rows of the problems that every configuration of the same dataset has a result for."""
    ids: dict[tuple, set[str]] = {}
    for row in results:
        ids.setdefault(tuple(getattr(row, k) for k in GROUP), set()).add(row.id)
    shared: dict[str, set[str]] = {}
    for group, found in ids.items():
        shared[group[0]] = shared.get(group[0], found) & found
    return [row for row in results if row.id in shared[row.dataset]]


def method(s: Summary) -> str:
    """A row label: the configuration's label or strategy, and the model's last path component."""
    return f"{s.name} ({s.model.rstrip('/').rsplit('/', 1)[-1]})"


def pass_table(summaries: list[Summary]) -> tuple[list[str], list[list[str]]]:
    """Rows = methods, columns = datasets, cells = pass@1 %; last column the average."""
    datasets = list(dict.fromkeys(s.dataset for s in summaries))
    methods = list(dict.fromkeys(method(s) for s in summaries))
    cells = {(method(s), s.dataset): s for s in summaries}
    rows = []
    for m in methods:
        values = [cells.get((m, d)) for d in datasets]
        scored = [v.pass1 * 100 for v in values if v and v.problems]
        row = [m] + [_cell(v) for v in values] + [f"{sum(scored) / len(scored):.1f}" if scored else "-"]
        rows.append(row)
    return ["method", *datasets, "avg"], rows


def _cell(s: Summary | None) -> str:
    if s is None or not s.problems:
        return "-" if s is None else f"- ({s.infra_errors} infra)"
    extra = f" ({s.infra_errors} infra)" if s.infra_errors else ""
    return f"{s.pass1 * 100:.1f}{extra}"


def cost_table(summaries: list[Summary]) -> tuple[list[str], list[list[str]]]:
    """Per dataset and method: pass@1, change vs the dataset's first method, pass@k, and cost per problem."""
    header = ["dataset", "method", "problems", "pass@1 %", "delta", "pass@k", "calls/prob", "prompt tok/prob",
              "compl tok/prob", "cost $", "wall s/prob", "infra errors"]
    rows = []
    first: dict[str, float] = {}
    for s in summaries:
        base = first.setdefault(s.dataset, s.pass1)
        k = max(s.pass_at) if s.pass_at else 1
        rows.append([s.dataset, method(s), str(s.problems), f"{s.pass1 * 100:.1f}", f"{(s.pass1 - base) * 100:+.1f}",
                     f"@{k} {s.pass_at.get(k, 0) * 100:.1f}" if k > 1 else "-", f"{s.calls:.2f}",
                     f"{s.prompt_tokens:.0f}", f"{s.completion_tokens:.0f}", f"{s.cost_usd:.4f}", f"{s.wall_s:.1f}",
                     str(s.infra_errors)])
    return header, rows


def print_tables(summaries: list[Summary]) -> None:
    """Both tables, then the per-configuration lines. A table wider than the terminal even with its cells wrapped is
    stacked instead (one block of `column  value` lines per row), so no cell is ever cut."""
    console = _console()
    for title, (header, rows) in (("pass@1 on hidden tests (%)", pass_table(summaries)),
                                  ("per problem: calls, tokens, cost, time", cost_table(summaries))):
        table = _table(title, header, rows)
        console.print(table if _narrowest(console, table) <= console.width else _stacked(title, header, rows))
    lines = signal_lines(summaries) + ending_lines(summaries) + oracle_lines(summaries) \
        + precision_lines(summaries) + tier_lines(summaries) + template_lines(summaries)
    for line in lines:
        console.print(_text(line), overflow="fold")


def _text(cell: str, style: str = "") -> Text:
    """A cell or line as the terminal shows it: never markup, its control characters escaped."""
    from rich.text import Text

    return Text(terminal_safe(cell), style=style)


def _console() -> Console:
    """$COLUMNS when set, else the terminal's width; piped to a file without $COLUMNS, wide enough for full rows."""
    import os
    import sys

    from rich.console import Console

    wide = not sys.stdout.isatty() and not os.environ.get("COLUMNS")
    return Console(width=200 if wide else None)


def _narrowest(console: Console, table: Table) -> int:
    """The table's width with every cell wrapped at its spaces (rich clamps a measure to the console's width, so this
    one measures against an unbounded one)."""
    from rich.measure import Measurement

    return Measurement.get(console, console.options.update_width(10_000), table).minimum


def _table(title: str, header: list[str], rows: list[list[str]]) -> Table:
    from rich.table import Table

    table = Table(title=title)
    for column in header:
        table.add_column(_text(column), justify="left" if column in ("method", "dataset") else "right",
                         overflow="fold")
    for row in rows:
        table.add_row(*map(_text, row))
    return table


def _stacked(title: str, header: list[str], rows: list[list[str]]) -> Group:
    """The table as one block per row: its first cells (dataset, method) as a heading, then `column  value` lines."""
    from rich.console import Group

    keys = 2 if header[:2] == ["dataset", "method"] else 1
    blocks = [_block(" / ".join(row[:keys]), header[keys:], row[keys:]) for row in rows]
    return Group(_text(title, "bold italic"), *blocks)


def _block(heading: str, names: list[str], values: list[str]) -> Group:
    from rich.console import Group
    from rich.table import Table

    block = Table(show_header=False, box=None, padding=(0, 2))
    block.add_column(overflow="fold")
    block.add_column(overflow="fold")
    for name, value in zip(names, values, strict=True):
        block.add_row(_text(name), _text(value))
    return Group(_text(heading, "bold"), block)


def template_lines(summaries: list[Summary]) -> list[str]:
    """Where each configuration's tokens went: tokens per problem by the template each call rendered, most first,
    and each one's share of the total."""
    return [f"{s.dataset} {method(s)}: tokens per problem by template: "
            + ", ".join(f"{template} {n:.0f} ({n / s.tokens:.0%})"
                        for template, n in sorted(s.template_tokens.items(), key=lambda kv: -kv[1]))
            for s in summaries if s.template_tokens and s.tokens]


def tier_lines(summaries: list[Summary]) -> list[str]:
    """Routed configurations: how many problems ended in each tier (and passed), and each tier's tokens per problem
    over all problems."""
    return [f"{s.dataset} {method(s)}: ended in "
            + ", ".join(f"tier {t}: {n} ({s.tiers_passed.get(t, 0)} pass)" for t, n in sorted(s.tiers.items()))
            + "; tokens per problem spent in "
            + ", ".join(f"tier {t}: {n:.0f}" for t, n in sorted(s.tier_tokens.items()))
            for s in summaries if s.tiers]


def ending_lines(summaries: list[Summary]) -> list[str]:
    """How each configuration's answers did on the hidden tests: the mean share of tests passed, and how many
    answers passed or failed first by each verdict (wrong output, runtime error, time limit, compile error ...)."""
    return [f"{s.dataset} {method(s)}: answers passed {s.tests_share:.1%} of their hidden tests on average"
            + _endings(s) for s in summaries if s.tests_share is not None]


def _endings(s: Summary) -> str:
    ordered = sorted(s.endings.items(), key=lambda kv: -kv[1])
    return "; answers by ending: " + ", ".join(f"{status} {n}" for status, n in ordered) if ordered else ""


def oracle_lines(summaries: list[Summary]) -> list[str]:
    """Configurations with an oracle: how its rounds ended, and the share that executed a test."""
    lines = []
    for s in (s for s in summaries if s.oracle_rounds):
        rounds = sum(s.oracle_rounds.values())
        executed = sum(n for outcome, n in s.oracle_rounds.items() if outcome.startswith(("executed", "traced")))
        outcomes = "; ".join(f"{outcome} {n}" for outcome, n in sorted(s.oracle_rounds.items()))
        lines.append(f"{s.dataset} {method(s)}: {rounds} oracle rounds, {executed} executed a test "
                     f"({executed / rounds:.0%}): {outcomes}")
    return lines


def precision_lines(summaries: list[Summary]) -> list[str]:
    """Oracle precision per configuration that kept tests: false alarms among tests kept on hidden-passing answers."""
    return [f"{s.dataset} {method(s)}: {s.false_alarms} false alarms of {s.kept_tests} kept tests on answers the "
            f"hidden tests accept ({s.false_alarms / s.kept_tests:.0%})" for s in summaries if s.kept_tests]


def interval_lines(summaries: list[Summary]) -> list[str]:
    """Each configuration's pass@1 with its 95 % Wilson interval over its problems."""
    lines = []
    for s in (s for s in summaries if s.problems):
        low, high = wilson(s.pass1 * s.problems, s.problems)
        lines.append(f"{s.dataset} {method(s)}: pass@1 {s.pass1 * 100:.1f} % [{low * 100:.1f}, {high * 100:.1f}] "
                     f"(95 %, {s.problems} problems)")
    return lines


# Greedy Direct as the report's baseline, the first the report holds: in the model maker's format (named so in runs
# before it became `direct`'s default, 2026-12-08), then `direct` (the maker's format since, the plain prompt before).
GREEDY_DIRECT = ("direct:prompt=qwen", "direct")


def baseline(summaries: list[Summary], s: Summary) -> Summary | None:
    """What `s` is compared with: greedy Direct (`GREEDY_DIRECT`) on the same dataset and model when the report holds
    it (in the same language where it can; Direct in another language against Direct in Python), else the dataset's
    first configuration; None for the baseline itself."""
    same = [o for o in summaries if o.dataset == s.dataset and o.problems]
    wanted = "python" if s.strategy in GREEDY_DIRECT else s.language
    direct = sorted((o for o in same if o.strategy in GREEDY_DIRECT and o.model == s.model),
                    key=lambda o: (o.language != wanted, GREEDY_DIRECT.index(o.strategy)))
    found = (direct or same or [None])[0]
    return None if found is s else found


def signal_lines(summaries: list[Summary]) -> list[str]:
    """Intervals, each configuration against Direct, and against best-of-n Direct at equal completion tokens."""
    return interval_lines(summaries) + comparison_lines(summaries) + equal_compute_lines(summaries, method)


def comparison_lines(summaries: list[Summary]) -> list[str]:
    """Each configuration against its baseline (Direct where there is one), problem by problem."""
    lines = []
    for s in (s for s in summaries if s.problems):
        if (base := baseline(summaries, s)) is not None:
            lines.append(f"{s.dataset} {method(s)} against {method(base)}: "
                         f"{paired(s.per_problem, base.per_problem).line()}")
    return lines

"""A self-contained HTML report: the two tables, two inline SVG plots, the intervals and the problems (no scripts,
no network).

Plot 1: pass@1 per method, one bar group per dataset, each bar with its 95 % Wilson interval. Plot 2: pass@1
against tokens per problem, one labelled point per method and dataset with its interval, tokens on a log scale
ticked at 1, 2 and 5 times the powers of ten. Both have ticks on both axes; their legends are HTML lists under the
plots, so no name is clipped. Then the problems: a grid of problems by configurations whose cells link to each
problem's view (`problems`, rendered by show/html.py).

Every text is HTML-escaped by `html_safe` (names, datasets, table cells, the run directories' paths); every number
on the page is formatted here from a number (`report` checked the rows' fields are numbers: `solidcoder.shapes`).
"""

from __future__ import annotations

import math
from pathlib import Path

from solidcoder.bench.compare import wilson
from solidcoder.bench.metrics import Summary
from solidcoder.bench.report import cost_table, method, pass_table, signal_lines
from solidcoder.escaping import html_safe

COLORS = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#000000"]
W, H, PAD, LEFT = 760, 340, 40, 64  # the plot's size, its margins, and the left margin (the y ticks' labels)
STYLE = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
         "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child{text-align:left}"
         "ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.4em 1.4em;max-width:760px}"
         ".swatch{display:inline-block;width:.9em;height:.9em;margin-right:.4em;vertical-align:middle}")


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html_safe(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html_safe(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _list(lines: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{html_safe(line)}</li>" for line in lines) + "</ul>"


def _colors(summaries: list[Summary]) -> dict[str, str]:
    methods = list(dict.fromkeys(method(s) for s in summaries))
    return {m: COLORS[i % len(COLORS)] for i, m in enumerate(methods)}


def _y(share: float) -> float:
    """The plot's y coordinate of a pass@1 share (0 to 1)."""
    return H - PAD - (H - 2 * PAD) * share


def _interval(s: Summary) -> tuple[float, float]:
    return wilson(s.pass1 * s.problems, s.problems)


def bar_chart(summaries: list[Summary]) -> str:
    colors = _colors(summaries)
    datasets = list(dict.fromkeys(s.dataset for s in summaries))
    group_w = (W - LEFT - PAD) / max(len(datasets), 1)
    bar_w = group_w * 0.8 / max(len(colors), 1)
    parts = [_y_axis()]
    for gi, dataset in enumerate(datasets):
        x0 = LEFT + gi * group_w + group_w * 0.1
        parts += [_bar(s, x0 + list(colors).index(method(s)) * bar_w, bar_w * 0.9, colors[method(s)])
                  for s in summaries if s.dataset == dataset]
        parts.append(_x_tick(x0 + group_w * 0.4, html_safe(dataset)))
    return _figure(parts, colors, "pass@1 per configuration, with 95 % intervals")


def _bar(s: Summary, x: float, width: float, color: str) -> str:
    low, high = _interval(s)
    middle = x + width / 2
    return (f'<rect x="{x:.1f}" y="{_y(s.pass1):.1f}" width="{width:.1f}" height="{_y(0) - _y(s.pass1):.1f}" '
            f'fill="{color}"><title>{html_safe(method(s))}: {s.pass1 * 100:.1f}% '
            f'[{low * 100:.1f}, {high * 100:.1f}]</title></rect>{_whisker(middle, low, high)}'
            f'<text x="{middle:.1f}" y="{_y(high) - 4:.1f}" text-anchor="middle">{s.pass1 * 100:.1f}</text>')


def _whisker(x: float, low: float, high: float) -> str:
    return (f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_y(low):.1f}" y2="{_y(high):.1f}" stroke="#333"/>'
            + "".join(f'<line x1="{x - 4:.1f}" x2="{x + 4:.1f}" y1="{_y(v):.1f}" y2="{_y(v):.1f}" stroke="#333"/>'
                      for v in (low, high)))


def scatter(summaries: list[Summary]) -> str:
    colors = _colors(summaries)
    points = [s for s in summaries if s.problems and s.tokens > 0]
    if not points:
        return "<p>No token counts to plot.</p>"
    lo = math.log10(min(s.tokens for s in points)) - 0.15
    hi = math.log10(max(s.tokens for s in points)) + 0.15
    x = lambda tokens: LEFT + (W - LEFT - PAD) * (math.log10(tokens) - lo) / (hi - lo)  # noqa: E731
    datasets = len({s.dataset for s in points}) > 1
    parts = [_y_axis(), *(_x_tick(x(v), f"{v:,.0f}") for v in log_ticks(lo, hi)),
             f'<text x="{(LEFT + W - PAD) / 2}" y="{H - 4}" text-anchor="middle">tokens per problem (log scale)</text>']
    parts += [_point(s, x(s.tokens), colors[method(s)], datasets) for s in points]
    return _figure(parts, colors, "pass@1 against tokens per problem: up is better, left is cheaper")


def _point(s: Summary, x: float, color: str, datasets: bool) -> str:
    low, high = _interval(s)
    name = s.name + (f" on {s.dataset}" if datasets else "")  # the legend names the model too
    label = f"{method(s)}: {s.pass1 * 100:.1f}% [{low * 100:.1f}, {high * 100:.1f}] at {s.tokens:.0f} tokens"
    return (f'{_whisker(x, low, high)}<circle cx="{x:.1f}" cy="{_y(s.pass1):.1f}" r="6" fill="{color}">'
            f'<title>{html_safe(label)}</title></circle><text x="{x + 9:.1f}" y="{_y(s.pass1) - 6:.1f}">'
            f"{html_safe(name)}</text>")


def log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2 and 5 times the powers of ten between 10**lo and 10**hi; on a range too narrow for three of those, five
    values spread evenly over it on the log scale, each rounded to two significant digits."""
    found = [m * 10.0 ** k for k in range(math.floor(lo), math.ceil(hi) + 1) for m in (1, 2, 5)
             if lo <= math.log10(m * 10.0 ** k) <= hi]
    if len(found) >= 3:
        return found
    spread = [_two_digits(10 ** (lo + (hi - lo) * (0.1 + 0.2 * i))) for i in range(5)]
    return [value for value in spread if lo <= math.log10(value) <= hi]


def _two_digits(value: float) -> float:
    return round(value, 1 - math.floor(math.log10(value)))


def _x_tick(x: float, label: str) -> str:
    return (f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{H - PAD}" y2="{H - PAD + 5}" stroke="#333"/>'
            f'<text x="{x:.1f}" y="{H - PAD + 18}" text-anchor="middle">{label}</text>')


def _y_axis() -> str:
    ticks = "".join(f'<line x1="{LEFT - 5}" x2="{W - PAD}" y1="{_y(v / 100):.1f}" y2="{_y(v / 100):.1f}" '
                    f'stroke="#ddd"/><line x1="{LEFT - 5}" x2="{LEFT}" y1="{_y(v / 100):.1f}" '
                    f'y2="{_y(v / 100):.1f}" stroke="#333"/><text x="{LEFT - 8}" y="{_y(v / 100) + 4:.1f}" '
                    f'text-anchor="end">{v}</text>' for v in range(0, 101, 25))
    return (f'{ticks}<line x1="{LEFT}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="#333"/>'
            f'<line x1="{LEFT}" y1="{PAD}" x2="{LEFT}" y2="{H - PAD}" stroke="#333"/>'
            f'<text x="16" y="{H / 2}" transform="rotate(-90 16 {H / 2})" text-anchor="middle">pass@1 %</text>')


def _figure(parts: list[str], colors: dict[str, str], title: str) -> str:
    legend = "".join(f"<li><span class='swatch' style='background:{c}'></span>{html_safe(m)}</li>"
                     for m, c in colors.items())
    return (f'<figure><svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-size="11" '
            f'font-family="sans-serif" role="img" aria-label="{html_safe(title)}" overflow="visible">'
            f'{"".join(parts)}</svg><ul class="legend">{legend}</ul><figcaption>{html_safe(title)}'
            f"</figcaption></figure>")


def write_html(summaries: list[Summary], path: Path, sources: list[Path], problems: str = "") -> None:
    """The report, written atomically; `problems` is the grid and the problem views (show/html.py)."""
    runs = ", ".join(html_safe(str(p)) for p in sources)
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>solidcoder report</title>"
            f"<style>{STYLE}</style></head><body><h1>solidcoder report</h1><p>Runs: {runs}</p>"
            f"<h2>pass@1 on hidden tests (%)</h2>{_table(*pass_table(summaries))}{bar_chart(summaries)}"
            f"<h2>Calls, tokens, cost and time per problem</h2>{_table(*cost_table(summaries))}"
            f"<h2>pass@1 against tokens</h2>{scatter(summaries)}"
            f"<h2>Signal or noise: 95 % intervals, and each configuration against Direct</h2>"
            f"{_list(signal_lines(summaries))}{problems}</body></html>")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(path)

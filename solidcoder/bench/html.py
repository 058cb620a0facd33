"""A self-contained HTML report: the two tables, two inline SVG plots and the intervals (no scripts, no network).

Plot 1: pass@1 per method, one bar group per dataset. Plot 2: pass@1 against tokens per problem, one point per
method and dataset, tokens on a log scale.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

from solidcoder.bench.metrics import Summary
from solidcoder.bench.report import comparison_lines, cost_table, interval_lines, method, pass_table

COLORS = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#000000"]
W, H, PAD = 720, 320, 50


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _list(lines: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>"


def _colors(summaries: list[Summary]) -> dict[str, str]:
    methods = list(dict.fromkeys(method(s) for s in summaries))
    return {m: COLORS[i % len(COLORS)] for i, m in enumerate(methods)}


def bar_chart(summaries: list[Summary]) -> str:
    colors = _colors(summaries)
    datasets = list(dict.fromkeys(s.dataset for s in summaries))
    group_w = (W - 2 * PAD) / max(len(datasets), 1)
    bar_w = group_w * 0.8 / max(len(colors), 1)
    parts = [_axes("pass@1 %", 100)]
    for gi, dataset in enumerate(datasets):
        x0 = PAD + gi * group_w + group_w * 0.1
        for s in (s for s in summaries if s.dataset == dataset):
            x = x0 + list(colors).index(method(s)) * bar_w
            h = (H - 2 * PAD) * s.pass1
            parts.append(f'<rect x="{x:.1f}" y="{H - PAD - h:.1f}" width="{bar_w * 0.9:.1f}" height="{h:.1f}" '
                         f'fill="{colors[method(s)]}"><title>{html.escape(method(s))}: {s.pass1 * 100:.1f}%</title>'
                         "</rect>")
        parts.append(f'<text x="{x0 + group_w * 0.4:.1f}" y="{H - PAD + 16}" text-anchor="middle">'
                     f"{html.escape(dataset)}</text>")
    return _svg(parts, colors)


def scatter(summaries: list[Summary]) -> str:
    colors = _colors(summaries)
    points = [s for s in summaries if s.problems and s.tokens > 0]
    if not points:
        return "<p>No token counts to plot.</p>"
    lo = math.log10(min(s.tokens for s in points)) - 0.1
    hi = math.log10(max(s.tokens for s in points)) + 0.1
    parts = [_axes("pass@1 %", 100), f'<text x="{W / 2}" y="{H - 8}" text-anchor="middle">tokens per problem '
             f"(log, {10 ** lo:.0f} to {10 ** hi:.0f})</text>"]
    for s in points:
        x = PAD + (W - 2 * PAD) * (math.log10(s.tokens) - lo) / (hi - lo)
        y = H - PAD - (H - 2 * PAD) * s.pass1
        label = f"{method(s)} on {s.dataset}: {s.pass1 * 100:.1f}% at {s.tokens:.0f} tokens"
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="{colors[method(s)]}">'
                     f"<title>{html.escape(label)}</title></circle>")
    return _svg(parts, colors)


def _axes(label: str, top: int) -> str:
    ticks = "".join(f'<text x="{PAD - 6}" y="{H - PAD - (H - 2 * PAD) * v / top + 4:.1f}" text-anchor="end">{v}'
                    f'</text><line x1="{PAD}" x2="{W - PAD}" y1="{H - PAD - (H - 2 * PAD) * v / top:.1f}" '
                    f'y2="{H - PAD - (H - 2 * PAD) * v / top:.1f}" stroke="#eee"/>' for v in range(0, top + 1, 25))
    return (f'{ticks}<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="#333"/>'
            f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{H - PAD}" stroke="#333"/>'
            f'<text x="14" y="{H / 2}" transform="rotate(-90 14 {H / 2})" text-anchor="middle">{label}</text>')


def _svg(parts: list[str], colors: dict[str, str]) -> str:
    legend = "".join(f'<rect x="{W - 200}" y="{10 + i * 16}" width="10" height="10" fill="{c}"/>'
                     f'<text x="{W - 185}" y="{19 + i * 16}">{html.escape(m)}</text>'
                     for i, (m, c) in enumerate(colors.items()))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-size="11" '
            f'font-family="sans-serif">{"".join(parts)}{legend}</svg>')


def write_html(summaries: list[Summary], path: Path, sources: list[Path]) -> None:
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child{text-align:left}")
    runs = ", ".join(html.escape(str(p)) for p in sources)
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>solidcoder report</title>"
            f"<style>{style}</style></head><body><h1>solidcoder report</h1><p>Runs: {runs}</p>"
            f"<h2>pass@1 on hidden tests (%)</h2>{_table(*pass_table(summaries))}{bar_chart(summaries)}"
            f"<h2>Calls, tokens, cost and time per problem</h2>{_table(*cost_table(summaries))}"
            f"<h2>pass@1 against tokens</h2>{scatter(summaries)}"
            f"<h2>Signal or noise: 95 % intervals, and each configuration against Direct</h2>"
            f"{_list(interval_lines(summaries) + comparison_lines(summaries))}</body></html>")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(path)

"""The report's problem pages: a grid of problems by configurations, each cell linking to that problem's view (the
content of `show --problem`, in collapsible `<details>` sections), all in the report's one self-contained file.

Every value a run recorded (programs, prompts, replies, test values, ids, and the counts, which `load` checked are
numbers) is HTML-escaped by `html_safe`, its control and bidirectional characters shown as `show` shows them; there
are no scripts. A cell's link is `#` and the view's id; opening a link to an element inside a closed section opens
it in browsers that follow the HTML standard's fragment rules, and every section also opens by a click on its
summary. Everything a section holds but its summary is indented under the summary, so nested sections (a phase's
calls, a call's prompt and reply) read as a tree.
"""

from __future__ import annotations

import hashlib
import re

from solidcoder.core.executions import Execution, TestRun
from solidcoder.escaping import html_safe
from solidcoder.show.load import natural
from solidcoder.show.views import Call, Phase, ProblemView, Run
from solidcoder.wording import counted

STYLE = (".grid td{text-align:center;padding:2px 6px}.grid td.problem{text-align:left}"
         ".grid td.pass{background:#d7f0d7}.grid td.fail{background:#f6d5d5}.grid td.none{background:#f6ecc8}"
         ".grid a{color:inherit}section.problem{border-top:2px solid #ccc;margin-top:1.5em}"
         "details{margin:.3em 0}details>:not(summary){margin-left:1.2em}summary{cursor:pointer}"
         "pre{background:#f6f6f6;padding:.5em;"
         "white-space:pre-wrap;word-break:break-word;text-align:left}.failure{background:#fbeaea}")
WORDS = {True: ("pass", "pass"), False: ("fail", "fail"), None: ("none", "no verdict")}


def anchor(run_index: int, view: ProblemView) -> str:
    """The id of a view's section: readable, and unique over runs, configurations and problems."""
    text = f"{run_index}|{view.line.config}|{view.line.problem}"
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{view.line.problem}-{view.line.config}").strip("-")[:60]
    return f"p-{slug}-{hashlib.sha256(text.encode()).hexdigest()[:6]}"


def problems_html(runs: list[Run]) -> str:
    """The grid, then every problem's view."""
    views = [(i, anchor(i, view), view) for i, run in enumerate(runs) for view in run.problems]
    return (f"<style>{STYLE}</style><h2 id='grid'>Problems by configuration</h2>{_grid(runs, views)}"
            "<h2>Problem views</h2>"
            + "".join(section(name, view) for _, name, view in views))


def _grid(runs: list[Run], views: list[tuple[int, str, ProblemView]]) -> str:
    """Problems down, configurations across; each cell the verdict, linking to the view."""
    columns = _columns(runs)
    problems = sorted({view.line.problem for _, _, view in views}, key=natural)
    cells = {((i, view.line.config), view.line.problem): (name, view) for i, name, view in views}
    head = "<tr><th>problem</th>" + "".join(f"<th>{html_safe(label)}</th>" for _, label in columns) + "</tr>"
    rows = "".join(f"<tr><td class='problem'>{html_safe(problem)}</td>"
                   + "".join(_cell(cells.get((key, problem))) for key, _ in columns) + "</tr>" for problem in problems)
    return f"<table class='grid'>{head}{rows}</table>"


def _columns(runs: list[Run]) -> list[tuple[tuple[int, str], str]]:
    """(key, label) per configuration of every run; a name two runs share is told apart by its directory."""
    found = [((i, line.config), line.config) for i, run in enumerate(runs) for line in run.lines()]
    unique = list(dict.fromkeys(found))
    shared = {label for _, label in unique if sum(1 for _, other in unique if other == label) > 1}
    return [(key, f"{label} in {runs[key[0]].path}" if label in shared else label) for key, label in unique]


def _cell(found: tuple[str, ProblemView] | None) -> str:
    if found is None:
        return "<td>-</td>"
    name, view = found
    css, word = WORDS[view.line.passed]
    return f"<td class='{css}'><a href='#{name}'>{word}</a></td>"


def section(name: str, view: ProblemView) -> str:
    """One problem's view: a heading, each phase, the strategy's tests, the final program and why."""
    line = view.line
    head = (f"<h3>{html_safe(line.problem)}: {html_safe(line.config)}: {WORDS[line.passed][1]}</h3>"
            f"<p>ended {html_safe(line.ended)}, {html_safe(counted(line.calls, 'call'))}, "
            f"{html_safe(line.tokens)} tokens, "
            f"{html_safe(f'{line.seconds:.1f}')} s. "
            f"<a href='#grid'>Back to the grid</a></p>")
    missing = "" if view.executions_recorded else \
        "<p>Executions: none recorded (a run from before they were; its final verdict is below).</p>"
    body = "".join(_phase(phase, f"{name}-p{i}") for i, phase in enumerate(view.phases))
    return f"<section class='problem' id='{name}'>{head}{missing}{body}{_tests(view)}{_final(view, name)}</section>"


def _phase(phase: Phase, name: str) -> str:
    note = f" ({html_safe(phase.note)})" if phase.note else ""
    steps = "".join(_call(s) if isinstance(s, Call) else _execution(s) for s in phase.steps) or \
        "<p>No calls or executions recorded.</p>"
    return f"<details class='phase' id='{name}'><summary>{html_safe(phase.name)}{note}</summary>{steps}</details>"


def _call(call: Call) -> str:
    cost = "replayed" if call.replayed else html_safe(f"{call.seconds:.1f} s")
    prompt = f"<h4>prompt</h4>{_pre(call.prompt)}" if call.prompt else ""
    reply = f"<h4>error</h4>{_pre(call.error)}" if call.error else f"<h4>reply</h4>{_pre(call.reply)}"
    return (f"<details class='call'><summary>call {html_safe(call.position)}: "
            f"{html_safe(call.template or 'template not recorded')}, {html_safe(call.prompt_tokens)} + "
            f"{html_safe(call.completion_tokens)} tokens, {cost}</summary>{prompt}{reply}</details>")


def _execution(execution: Execution) -> str:
    if execution.purpose == "trace":
        return _trace(execution)
    tests = "".join(f"<li>{html_safe(t.kind)}{' ' + html_safe(t.name) if t.name else ''}: {html_safe(t.status)}"
                    f"{_pre(t.input)}</li>" for t in execution.tests)
    failure = _failure(execution.first_failure) if execution.first_failure else ""
    return (f"<details class='execution'><summary>execution ({html_safe(execution.purpose)}): "
            f"{html_safe(execution.passed)} of {html_safe(execution.total)} tests pass</summary><h4>program</h4>"
            f"{_pre(execution.program)}<h4>tests</h4><ul>{tests}</ul>{failure}</details>")


def _trace(execution: Execution) -> str:
    traced = execution.tests[0] if execution.tests else TestRun(kind="traced", status="?")
    return (f"<details class='trace'><summary>trace fed to the debugger: {html_safe(traced.status)} on "
            f"{html_safe(traced.input[:100])}</summary><h4>program</h4>{_pre(execution.program)}<h4>trace</h4>"
            f"{_pre(execution.trace)}</details>")


def _failure(test: TestRun) -> str:
    parts = [("input", test.input), ("expected", test.expected), ("actual", test.actual), ("detail", test.detail)]
    return (f"<div class='failure'><h4>first failure: {html_safe(test.kind)} test, {html_safe(test.status)}</h4>"
            + "".join(f"<p>{name}</p>{_pre(value)}" for name, value in parts if value) + "</div>")


def _tests(view: ProblemView) -> str:
    items = [f"strategy stages: {', '.join(view.strategy_stages)}"] * bool(view.strategy_stages) \
        + [f"oracle rounds: {'; '.join(view.oracle_rounds)}"] * bool(view.oracle_rounds) \
        + [f"rejected oracle test: {reason}" for reason in view.rejected]
    kept = "".join(f"<li>accumulated test ({html_safe(t.origin or 'kept')}){_pre(t.source)}</li>" for t in view.kept)
    scored = f"<li>scored: {html_safe(view.scored.passed)} of {html_safe(view.scored.total)} hidden tests pass" \
        f"{_pre(view.scored.first_failure) if view.scored.first_failure else ''}</li>" if view.scored else ""
    listed = "".join(f"<li>{html_safe(item)}</li>" for item in items) + kept + scored
    return f"<details class='tests'><summary>tests kept, rejected and scored</summary><ul>{listed}</ul></details>" \
        if listed else ""


def _final(view: ProblemView, name: str) -> str:
    return (f"<details class='final'><summary>final program</summary><pre id='{name}-program'>"
            f"{html_safe(view.program or '(none)')}</pre></details><p>Why: {html_safe(view.why)}</p>")


def _pre(text: str) -> str:
    return f"<pre>{html_safe(text)}</pre>"

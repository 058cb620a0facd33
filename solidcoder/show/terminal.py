"""`show` in the terminal: the listing as a table, one problem as a tree. Everything a run recorded (program text,
prompts, replies, test values, ids, and the counts, which `load` checked are numbers) is printed as `rich.text.Text`
through `terminal_safe`: never read as markup, its control and bidirectional characters shown as escapes."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from solidcoder.core.executions import Execution, TestRun
from solidcoder.escaping import terminal_safe
from solidcoder.show.views import Call, Line, ProblemView, Stage

VERDICT = {True: ("PASS", "green"), False: ("FAIL", "red"), None: ("NO VERDICT", "yellow")}


def safe(text: str, style: str = "") -> Text:
    return Text(terminal_safe(text), style=style)


def verdict(passed: bool | None) -> Text:
    word, style = VERDICT[passed]
    return Text(word, style=f"bold {style}")


def listing(lines: list[Line]) -> Table:
    table = Table(title=safe(f"{len({line.problem for line in lines})} problems, {len(lines)} runs"))
    for column in ("problem", "configuration", "result", "ended", "calls", "tokens", "seconds"):
        table.add_column(column, justify="right" if column in ("calls", "tokens", "seconds") else "left")
    for line in lines:
        table.add_row(safe(line.problem), safe(line.config), verdict(line.passed), safe(line.ended),
                      safe(str(line.calls)), safe(str(line.tokens)), safe(f"{line.seconds:.1f}"))
    return table


def tree(view: ProblemView) -> Tree:
    line = view.line
    root = Tree(Text.assemble(safe(f"{line.problem}  {line.config}: ", "bold"), verdict(line.passed),
                              safe(f"  ended {line.ended}, {line.calls} calls, {line.tokens} tokens, "
                                   f"{line.seconds:.1f} s")))
    if not view.executions_recorded:
        root.add(safe("executions: none recorded (a run from before they were; its final verdict is below)", "dim"))
    for stage in view.stages:
        _stage(root.add(safe(f"{stage.name}" + (f"  ({stage.note})" if stage.note else ""), "bold cyan")), stage)
    _tests(root, view)
    _final(root, view)
    return root


def _stage(node: Tree, stage: Stage) -> None:
    if not stage.steps:
        node.add(safe("no calls or executions recorded", "dim"))
    for step in stage.steps:
        _call(node, step) if isinstance(step, Call) else _execution(node, step)


def _call(node: Tree, call: Call) -> None:
    cost = "replayed" if call.replayed else f"{call.seconds:.1f} s"
    head = node.add(safe(f"call {call.position}: {call.template or 'template not recorded'}  "
                         f"{call.prompt_tokens} + {call.completion_tokens} tokens, {cost}", "magenta"))
    if call.prompt:
        head.add(Text.assemble(safe("prompt\n", "dim"), safe(call.prompt)))
    head.add(Text.assemble(safe("error\n" if call.error else "reply\n", "dim"), safe(call.error or call.reply)))


def _execution(node: Tree, execution: Execution) -> None:
    if execution.purpose == "trace":
        _trace(node, execution)
        return
    head = node.add(Text.assemble(safe(f"execution ({execution.purpose}): ", "yellow"),
                                  safe(f"{execution.passed} of {execution.total} tests pass")))
    head.add(Text.assemble(safe("program\n", "dim"), safe(execution.program)))
    for test in execution.tests:
        head.add(safe(f"{test.kind}{' ' + test.name if test.name else ''}: {test.status}  "
                      f"{_one_line(test.input)}", "green" if test.status == "pass" else "red"))
    if execution.first_failure is not None:
        head.add(failure_text(execution.first_failure))


def _trace(node: Tree, execution: Execution) -> None:
    traced = execution.tests[0] if execution.tests else TestRun(kind="traced", status="?")
    head = node.add(Text.assemble(safe("trace fed to the debugger: ", "yellow"),
                                  safe(f"{traced.status} on {_one_line(traced.input)}")))
    head.add(Text.assemble(safe("program\n", "dim"), safe(execution.program)))
    head.add(Text.assemble(safe("trace\n", "dim"), safe(execution.trace)))


def failure_text(test: TestRun) -> Text:
    parts = [("first failure", f"{test.kind} test, {test.status}"), ("input", test.input),
             ("expected", test.expected), ("actual", test.actual), ("detail", test.detail)]
    return Text("\n").join(safe(f"{name}: {value}", "red" if name == "first failure" else "")
                           for name, value in parts if value)


def _tests(root: Tree, view: ProblemView) -> None:
    if view.strategy_stages:
        root.add(safe(f"strategy stages: {', '.join(view.strategy_stages)}"))
    if view.oracle_rounds:
        root.add(safe(f"oracle rounds: {'; '.join(view.oracle_rounds)}"))
    for reason in view.rejected:
        root.add(safe(f"rejected oracle test: {reason}"))
    for test in view.kept:
        text = f"{test.stdin!r} checked by\n{test.source}" if test.kind == "stdio" else test.source
        root.add(Text.assemble(safe(f"accumulated test ({test.origin or 'kept'}, kept: it failed a program"
                                    f"{', crash-only' if test.crash_only else ''})\n", "dim"), safe(text)))


def _final(root: Tree, view: ProblemView) -> None:
    if view.scored is not None:
        failure = f"; first failure: {view.scored.first_failure}" if view.scored.first_failure else ""
        root.add(safe(f"scored: {view.scored.passed} of {view.scored.total} hidden tests pass{failure}"))
    root.add(Text.assemble(safe("final program\n", "bold"), safe(view.program or "(none)")))
    root.add(Text.assemble(safe("why: ", "bold"), safe(view.why)))


def _one_line(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + " ..."


def console() -> Console:
    """$COLUMNS or the terminal's width; piped without $COLUMNS, 200 columns (as `report` prints)."""
    import os
    import sys

    return Console(width=200 if not sys.stdout.isatty() and not os.environ.get("COLUMNS") else None)

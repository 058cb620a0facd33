"""`show` in the terminal: the listing as a table, one problem as a tree. Everything a run recorded (program text,
prompts, replies, test values, ids, and the counts, which `load` checked are numbers) is printed as `rich.text.Text`
through `terminal_safe`: never read as markup, its control and bidirectional characters shown as escapes.

At any width nothing is cut: the listing numbers its configurations when a run has several (a legend under the table
names them) and wraps a cell that does not fit; a text block (a program, prompt, reply or trace) breaks a line too
long for the terminal itself, starting each continuation with `↪ `, so a wrapped line of code is not read as two."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from solidcoder.core.executions import Execution, TestRun
from solidcoder.escaping import terminal_safe
from solidcoder.show.views import Call, Line, Phase, ProblemView
from solidcoder.wording import counted

VERDICT = {True: ("PASS", "green"), False: ("FAIL", "red"), None: ("NO VERDICT", "yellow")}
MARK = "↪ "  # starts the continuation of a line broken at the terminal's width


def safe(text: str, style: str = "") -> Text:
    return Text(terminal_safe(text), style=style)


def verdict(passed: bool | None) -> Text:
    word, style = VERDICT[passed]
    return Text(word, style=f"bold {style}")


class Marked:
    """A text block whose lines too long for the width it is given are broken there, each continuation starting with
    `MARK` (rich would wrap them at a space with no mark, or cut them)."""

    def __init__(self, text: Text):
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width, len(MARK) + 1)
        text = self.text.copy()
        text.expand_tabs()
        yield Text("\n").join(piece for line in text.split("\n", allow_blank=True) for piece in _broken(line, width))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, max(1, *map(cell_len, self.text.plain.split("\n"))))


def _broken(line: Text, width: int) -> list[Text]:
    """`line` in pieces of at most `width` cells, every piece after the first after `MARK`."""
    offsets, used, room = [], 0, width
    for index, char in enumerate(line.plain):
        if used + cell_len(char) > room:
            offsets, used, room = [*offsets, index], 0, width - len(MARK)
        used += cell_len(char)
    first, *rest = line.divide(offsets)
    return [first, *(Text.assemble(Text(MARK, "dim"), piece) for piece in rest)]


def block(title: str, body: str, style: str = "dim") -> Marked:
    """A titled text block: the title on its own line, the text under it."""
    return Marked(Text.assemble(safe(f"{title}\n", style), safe(body)))


def listing(lines: list[Line]) -> Group:
    """The table, a row per problem and configuration; where a run has several configurations, each is a number in
    the table and named in full in the legend under it (a name is never cut, so no two read the same)."""
    configs = list(dict.fromkeys(line.config for line in lines))
    table = _listing_table(f"{counted(len({line.problem for line in lines}), 'problem')}, "
                           f"{counted(len(lines), 'run')}")
    for line in lines:
        config = str(configs.index(line.config) + 1) if len(configs) > 1 else line.config
        table.add_row(safe(line.problem), safe(config), verdict(line.passed), safe(line.ended),
                      safe(str(line.calls)), safe(str(line.tokens)), safe(f"{line.seconds:.1f}"))
    legend = [safe(f"config {number}: {config}") for number, config in enumerate(configs, 1)]
    return Group(table, *(legend if len(configs) > 1 else []))


def _listing_table(title: str) -> Table:
    """The listing's columns, every one wrapping a cell too long for it (never cutting it)."""
    table = Table(title=safe(title))
    for column in ("problem", "config", "result", "ended", "calls", "tokens", "seconds"):
        table.add_column(column, justify="right" if column in ("calls", "tokens", "seconds") else "left",
                         overflow="fold")
    return table


def tree(view: ProblemView) -> Tree:
    line = view.line
    root = Tree(Text.assemble(safe(f"{line.problem}  {line.config}: ", "bold"), verdict(line.passed),
                              safe(f"  ended {line.ended}, {counted(line.calls, 'call')}, {line.tokens} tokens, "
                                   f"{line.seconds:.1f} s")))
    if not view.executions_recorded:
        root.add(safe("executions: none recorded (a run from before they were; its final verdict is below)", "dim"))
    for phase in view.phases:
        _phase(root.add(safe(f"{phase.name}" + (f"  ({phase.note})" if phase.note else ""), "bold cyan")), phase)
    _tests(root, view)
    _final(root, view)
    return root


def _phase(node: Tree, phase: Phase) -> None:
    if not phase.steps:
        node.add(safe("no calls or executions recorded", "dim"))
    for step in phase.steps:
        _call(node, step) if isinstance(step, Call) else _execution(node, step)


def _call(node: Tree, call: Call) -> None:
    cost = "replayed" if call.replayed else f"{call.seconds:.1f} s"
    head = node.add(safe(f"call {call.position}: {call.template or 'template not recorded'}  "
                         f"{call.prompt_tokens} + {call.completion_tokens} tokens, {cost}", "magenta"))
    if call.prompt:
        head.add(block("prompt", call.prompt))
    head.add(block("error" if call.error else "reply", call.error or call.reply))


def _execution(node: Tree, execution: Execution) -> None:
    if execution.purpose == "trace":
        _trace(node, execution)
        return
    head = node.add(Text.assemble(safe(f"execution ({execution.purpose}): ", "yellow"),
                                  safe(f"{execution.passed} of {execution.total} tests pass")))
    head.add(block("program", execution.program))
    for test in execution.tests:
        head.add(safe(f"{test.kind}{' ' + test.name if test.name else ''}: {test.status}  "
                      f"{_one_line(test.input)}", "green" if test.status == "pass" else "red"))
    if execution.first_failure is not None:
        head.add(Marked(failure_text(execution.first_failure)))


def _trace(node: Tree, execution: Execution) -> None:
    traced = execution.tests[0] if execution.tests else TestRun(kind="traced", status="?")
    head = node.add(Text.assemble(safe("trace fed to the debugger: ", "yellow"),
                                  safe(f"{traced.status} on {_one_line(traced.input)}")))
    head.add(block("program", execution.program))
    head.add(block("trace", execution.trace))


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
        root.add(block(f"accumulated test ({test.origin or 'kept'}, kept: it failed a program"
                       f"{', crash-only' if test.crash_only else ''})", text))


def _final(root: Tree, view: ProblemView) -> None:
    if view.scored is not None:
        failure = f"; first failure: {view.scored.first_failure}" if view.scored.first_failure else ""
        root.add(safe(f"scored: {view.scored.passed} of {view.scored.total} hidden tests pass{failure}"))
    root.add(block("final program", view.program or "(none)", "bold"))
    root.add(Text.assemble(safe("why: ", "bold"), safe(view.why)))


def _one_line(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + " ..."


def console() -> Console:
    """$COLUMNS or the terminal's width; piped without $COLUMNS, 200 columns (as `report` prints)."""
    import os
    import sys

    return Console(width=200 if not sys.stdout.isatty() and not os.environ.get("COLUMNS") else None)

"""The examples of a pasted problem statement, as tests: stdin/stdout pairs and calls with their results.

stdio examples come from headed sections, in the layouts the judges' pages paste as:
  * "Sample Input 1" / "Sample Output 1" (AtCoder, also "Sample Input 1 Copy" then a "Copy" line, and the Japanese
    "入力例 1" / "出力例 1"), "Sample Input 0" (HackerRank), "Example Input:", each followed by its lines;
  * "Example"/"Examples" (or "Sample"/"Sample 1"), then bare "Input"/"Output" headings (Codeforces, also lower-case
    and "inputCopy"/"outputCopy"), up to a "Note"/"Explanation"/"Constraints" line or a markdown heading;
  * any of these as markdown headings or bold, with the block in a ``` fence.
A body is a fenced block, else its lines up to the next blank line or heading. A bare "Input"/"Output" heading
outside an examples section introduces the format description ("The first line contains ..."), so it is an
example only when its body is a fenced block, and only when the text labels no examples.

Call examples of an entry point (`f(` or, for a `Class.method` entry, `Class().method(`) are doctests (`>>> f(1)`
then the result line), asserts (`assert f(1) == 2`; any other assert naming the entry is kept as a script), arrows
(`f(1) -> 2`, `f(1) == 2`, `f(1) => 2`, `f(1) ==> 2`) and LeetCode examples ("Input: nums = [2,7], target = 9
Output: [0,1]", on one line or several, JSON's null/true/false read as Python's), whose named arguments are put in
the stub's order.
"""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

from solidcoder.parsing import compile_source, literal, parse_python
from solidcoder.problem import TestCase, _json_ok

_IO = re.compile(r"^[ \t#>*_]*(?:(?P<tag>(?:sample|example)s?)[ \t]*)?(?P<io>input|output)(?:[ \t]*copy)?"
                 r"[ \t]*(?:#?[ \t]*\d+)?(?:[ \t]*copy)?[ \t]*:?[ \t*_]*$"
                 r"|^[ \t#>*_]*(?P<jp>入力例|出力例)[ \t]*\d*(?:[ \t]*copy)?[ \t]*:?[ \t*_]*$", re.IGNORECASE)
_SECTION = re.compile(r"^[ \t#>*_]*(?:examples?|samples?|sample[ \t]+tests?(?:\(s\))?|入出力例)[ \t]*(?:#?[ \t]*\d+)?"
                      r"[ \t]*:?[ \t*_]*$", re.IGNORECASE)
_STOP = re.compile(r"^[ \t>*_]*(?:#+[ \t]|(?:notes?|explanations?|hints?|constraints|scoring|subtasks?)\b)",
                   re.IGNORECASE)
_MARK = re.compile(r"(?<!\w)\**(?P<m>input|output|explanation|example[ \t]*\d*|constraints|notes?|follow[- ]up)"
                   r"[ \t]*\**[ \t]*:[ \t]*\**", re.IGNORECASE)
_VALUES = re.compile(r"\s*(?:\w+\s*=|[-+.\[({'\"0-9]|(?:true|false|null|None|True|False)\b)")  # an example's input
_JSON_NAMES = {"null": "None", "true": "True", "false": "False"}
_PARSE_ERRORS = (SyntaxError, ValueError, MemoryError, RecursionError)


def stdio_examples(text: str) -> list[tuple[str, str]]:
    """(input, output) pairs from example sections, in order; only the labelled ones when there are any."""
    pairs, given = [], None
    for is_input, body, labelled in _headed(text.split("\n")):
        if is_input:
            given = (body, labelled) if body is not None else None
            continue
        if given is not None and body is not None:
            pairs.append((given[0], body, given[1] or labelled))
        given = None
    return [(i, o) for i, o, labelled in pairs if labelled] or [(i, o) for i, o, _ in pairs]


def _headed(lines: list[str]) -> Iterator[tuple[bool, str | None, bool]]:
    """(is input, body or None, labelled an example) for each Input/Output heading, skipping fenced blocks."""
    examples, i = False, 0
    while i < len(lines):
        heading = _IO.match(lines[i])
        if heading:
            labelled = examples or bool(heading.group("tag") or heading.group("jp"))
            body, i = _body(lines, i + 1, labelled)
            yield _is_input(heading), body, labelled
            continue
        examples = bool(_SECTION.match(lines[i])) or (examples and not _STOP.match(lines[i]))
        i = _fence_end(lines, i) + 1 if _is_fence(lines[i]) else i + 1


def _is_input(heading: re.Match) -> bool:
    return (heading.group("io") or "").lower() == "input" or heading.group("jp") == "入力例"


def _is_fence(line: str) -> bool:
    return line.strip().startswith("```")


def _fence_end(lines: list[str], start: int) -> int:
    """The index of the line closing the fence opened at `start` (past the end when it is never closed)."""
    return next((j for j in range(start + 1, len(lines)) if _is_fence(lines[j])), len(lines))


def _body(lines: list[str], start: int, loose: bool) -> tuple[str | None, int]:
    """A heading's body and the index after it: a fenced block, or (when `loose`) the lines up to a blank one."""
    j = start
    while j < len(lines) and (not lines[j].strip() or lines[j].strip().lower() == "copy"):
        j += 1
    if j < len(lines) and _is_fence(lines[j]):
        return _fenced(lines, j)
    taken = []
    while loose and j < len(lines) and lines[j].strip() and not _boundary(lines[j]):
        taken.append(lines[j].strip())
        j += 1
    return ("".join(line + "\n" for line in taken) if taken else None), (j if loose else start)


def _fenced(lines: list[str], start: int) -> tuple[str, int]:
    """The content of the fence opened at `start` (dedented, without trailing blank lines) and the index after it."""
    end = _fence_end(lines, start)
    content = lines[start + 1:end]
    while content and not content[-1].strip():
        content.pop()
    return textwrap.dedent("".join(line + "\n" for line in content)), end + 1


def _boundary(line: str) -> bool:
    return bool(_IO.match(line) or _SECTION.match(line) or _STOP.match(line))


@dataclass(frozen=True)
class CallExamples:
    """The call tests read from a statement, and how many of its LeetCode examples ("Input: ... Output: ...") could
    not be read: arguments or a result that are not literals, or a name the stub's parameters do not have."""

    tests: list[TestCase]
    unreadable: int = 0


def call_examples(text: str, prefix: str, params: list[str] | None = None) -> list[TestCase]:
    """Call tests of the entry called as `prefix...)` (`f(`, `Solution().f(`), in the order the text gives them."""
    return read_call_examples(text, prefix, params).tests


def read_call_examples(text: str, prefix: str, params: list[str] | None = None) -> CallExamples:
    """`call_examples`, with the count of LeetCode examples it could not read."""
    leetcode = list(_leetcode_examples(text, prefix, params))
    read = [(at, test) for at, test in leetcode if test is not None]
    tests: list[TestCase] = []
    for _, test in sorted([*_line_examples(text, prefix), *read], key=lambda found: found[0]):
        if test not in tests:
            tests.append(test)
    return CallExamples(tests, len(leetcode) - len(read))


def leetcode_pairs(text: str) -> int:
    """How many "Input: ... Output: ..." examples the text has, read or not (a description such as "Input: the
    first line holds n" is not one)."""
    return sum(1 for _ in _pairs(text))


def _pairs(text: str) -> Iterator[tuple[int, str, str]]:
    """(offset, input, output) of each Input mark followed by an Output mark (up to the next mark or the end) whose
    input reads as values: a `name = ...` argument or a literal's first character."""
    marks = list(_MARK.finditer(text))
    for here, after, then in zip(marks, marks[1:], [*marks[2:], None], strict=False):
        given = text[here.end():after.start()]
        if _mark(here) == "input" and _mark(after) == "output" and _VALUES.match(given):
            yield here.start(), given, text[after.end():then.start() if then else len(text)]


def _line_examples(text: str, prefix: str) -> Iterator[tuple[int, TestCase]]:
    lines, offset = text.split("\n"), 0
    for i, raw in enumerate(lines):
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        test = _line_example(raw.strip(), following, prefix)
        if test is not None:
            yield offset, test
        offset += len(raw) + 1


def _line_example(line: str, following: str, prefix: str) -> TestCase | None:
    """A doctest (`line` is the `>>>` line, `following` its result), an assert or an arrow example, else None."""
    if line.startswith(">>>"):
        return _made(prefix, line[3:].strip(), following)
    if line.startswith("assert"):
        return _assert(line, prefix)
    arrow = next((a for a in ("==>", "==", "->", "=>", "→") if a in line), None)
    if arrow is None or not line.startswith(prefix):
        return None
    call, result = line.rsplit(arrow, 1)
    return _made(prefix, call.strip(), result.strip().rstrip(".,;"))


def _assert(line: str, prefix: str) -> TestCase | None:
    """`assert f(1) == 2` as a call test; any other assert that calls the entry point as its own script."""
    try:
        node = parse_python(line).body[0]
    except (*_PARSE_ERRORS, IndexError):
        return None
    if not isinstance(node, ast.Assert) or prefix not in line:
        return None
    test = node.test
    if node.msg is None and isinstance(test, ast.Compare) and [type(op) for op in test.ops] == [ast.Eq]:
        made = _made(prefix, ast.get_source_segment(line, test.left) or "",
                     ast.get_source_segment(line, test.comparators[0]) or "")
        if made is not None:
            return made
    return TestCase(kind="call", script=line)


def _made(prefix: str, call: str, result: str) -> TestCase | None:
    """The test `call` returns `result` (a literal); a result JSON cannot hold (tuples, sets) is compared in Python."""
    if not call.startswith(prefix) or not result or result.startswith(">>>"):
        return None
    try:
        compile_source(call, "<example>", "eval")
        expected = literal(result)
    except _PARSE_ERRORS:
        return None
    if _json_ok(expected):
        return TestCase(kind="call", call=call, expected=expected)
    return TestCase(kind="call", script=f"assert {call} == {result}")


def _leetcode_examples(text: str, prefix: str, params: list[str] | None) -> Iterator[tuple[int, TestCase | None]]:
    """"Input: a = 1, b = [2] Output: 3" examples: an Input mark, then an Output mark, then the next mark or the end;
    None for one that cannot be read."""
    for at, given, result in _pairs(text):
        arguments = _arguments(_pythonic(_one_line(given)), params)
        first = next((line.strip() for line in result.split("\n") if line.strip()), "")
        yield at, None if arguments is None else _made(prefix, f"{prefix}{arguments})", _pythonic(first))


def _mark(found: re.Match) -> str:
    return found.group("m").lower()


def _one_line(given: str) -> str:
    """Arguments given one per line ("nums = [1, 2]" then "k = 3") as one comma-separated line."""
    return ", ".join(line.strip().rstrip(",") for line in given.split("\n") if line.strip())


def _pythonic(line: str) -> str:
    """JSON's null, true and false (outside strings) as Python's None, True and False."""
    try:
        names = [t for t in tokenize.generate_tokens(io.StringIO(line).readline)
                 if t.type == tokenize.NAME and t.string in _JSON_NAMES]
    except (tokenize.TokenError, SyntaxError):
        return line
    for token in reversed(names):
        line = line[:token.start[1]] + _JSON_NAMES[token.string] + line[token.end[1]:]
    return line


def _arguments(given: str, params: list[str] | None) -> str | None:
    """"nums = [2, 7], target = 9" as the positional argument list "[2, 7], 9", in `params` order when known."""
    source = f"_({given})"
    try:
        call = parse_python(source, "eval").body
    except _PARSE_ERRORS:
        return None
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    names = [k.arg for k in call.keywords]
    if None in names or (params is not None and not set(names) <= set(params[len(call.args):])):
        return None
    keywords = sorted(call.keywords, key=lambda k: params.index(k.arg)) if params is not None else call.keywords
    return ", ".join(ast.get_source_segment(source, node) or "" for node in [*call.args, *(k.value for k in keywords)])

"""Reading model replies (code blocks, the program, a final verdict word) and the public examples as prompts show
them. Every strategy reads replies with these; none talks to a model here (that is `core.context.ask`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from solidcoder.problem import Problem, TestCase

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_OPEN_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*)\Z", re.DOTALL)
PYTHON_TAGS = ("", "python", "py", "python3")


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(tag, body) of every fenced block, in order; last, a Python block the reply opened and never closed (it ran
    into the completion cap), cut back to its longest prefix of whole lines that compiles."""
    closed = [(tag.lower(), body) for tag, body in _FENCE.findall(text)]
    cut = cut_off_block(text)
    return closed + ([("python", cut)] if cut else [])


def cut_off_block(text: str) -> str | None:
    """The compiling part of a Python (or untagged) block left open at the end of a reply, or None."""
    tail = _FENCE.sub("", text)
    found = _OPEN_FENCE.search(tail)
    if not found or found.group(1).lower() not in PYTHON_TAGS:
        return None
    lines = found.group(2).splitlines()
    prefixes = ("\n".join(lines[:n]).strip("\n") for n in range(len(lines), 0, -1))
    return next((prefix + "\n" for prefix in prefixes if prefix.strip() and _compiles(prefix)), None)


def extract_code(text: str) -> str:
    """The program in a reply: the longest Python (or untagged) block that compiles, else the longest block; a block
    cut off by the completion cap only when no closed block compiles."""
    blocks = [body for tag, body in _FENCE.findall(text) if tag.lower() in PYTHON_TAGS]
    if not any(map(_compiles, blocks)) and (cut := cut_off_block(text)):
        return cut
    if not blocks:
        return text.strip() + "\n" if _compiles(text) else ""
    ranked = sorted(blocks, key=lambda body: (_compiles(body), len(body)), reverse=True)
    return ranked[0].strip("\n") + "\n"


def _compiles(source: str) -> bool:
    try:
        compile(source, "<reply>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def last_verdict(text: str, *words: str) -> str | None:
    """The last of `words` appearing as a whole word in `text` (so VALID never matches inside INVALID)."""
    pattern = r"\b(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + r")\b"
    found = re.findall(pattern, text)
    return found[-1] if found else None


@dataclass(frozen=True)
class Sample:
    """One public example as the prompts show it."""

    input: str
    output: str


def describe_test(test: TestCase) -> Sample:
    """A public test as input / expected text for simulation and debug prompts."""
    if test.kind == "stdio":
        return Sample(test.stdin or "", test.outputs[0])
    if test.call is not None:
        return Sample(test.call, repr(test.expected))
    return Sample(test.script or "", "every assertion in the script above holds")


def first_sample(problem: Problem) -> Sample | None:
    return describe_test(problem.public_tests[0]) if problem.public_tests else None

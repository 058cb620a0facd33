"""Prompt formats: how Direct's request is written and its reply read, one entry a format.

`plain` is the project's own Direct prompt (`strategies/direct`): the problem, one instruction, the longest compiling
fenced block of the reply (`extract_code`). `qwen` is how the model's maker evaluates Qwen2.5-Coder instruct models
on HumanEval and MBPP (QwenLM/Qwen2.5-Coder, `qwencoder-eval/instruct/eval_plus`: `model.py`'s `ChatML`, then
`evalplus.sanitize`), read from that code:

* the template `strategies/direct_qwen`: its system line, "Can you complete the following Python function?" over the
  problem in a fence, and the assistant's turn opened with a fence that the reply continues;
* its stop strings (`QWEN_STOP`: the end-of-text markers, a top-level `if __name__`, `def main(`, `print(` or `#`,
  and the closing fence);
* the reply read as its maker reads it: the text before any further fence, tabs as four spaces, then EvalPlus's
  sanitizer (`reachable_definitions`: the imports and the definitions the entry point reaches). A backend that
  answered a fresh turn instead of continuing the fence (a server without `continue_final_message`) wrote a fence
  of its own: the program is read after it; a reply that opens no fence is read by `extract_code`.

Two readings are the project's, named here: a LeetCode entry point (`Solution.twoSum`) is reached from its class,
and where the maker's reading leaves the entry point undefined (a reply that is not the fence's continuation, such
as prose first from a backend that answered a fresh turn), the reply is read as `plain` reads it, less its
self-test (`strip_self_tests`), when that defines it.

Departures, named: the user message ends at its closing fence (the maker's has a newline after it); MBPP problems are
this project's data (a typed function stub from MultiPL-E) where EvalPlus writes the task and one assert in a
docstring; Q4_K_M on llama.cpp here, bf16 on vLLM there. The maker's format is for call problems in Python; a stdin
problem or another language gets `plain` (its stop strings would cut a program's top-level `print(`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from solidcoder.errors import BadInput
from solidcoder.languages import PYTHON
from solidcoder.problem import Problem
from solidcoder.stages.base import extract_code
from solidcoder.stages.sanitize import reachable_definitions, strip_self_tests

QWEN_STOP = ("<|endoftext|>", "<|endofmask|>", "</s>", "\nif __name__", "\ndef main(", "\nprint(", "\n#", "\n```")
_OPENING_FENCE = re.compile(r"\s*```[\w+#-]*[ \t]*\n")


@dataclass(frozen=True)
class PromptFormat:
    """One way to write Direct's request and read its reply: the template, the stop strings, and whether the
    reply is read as its maker reads it (a continued fence, then the sanitizer) instead of by `extract_code`."""

    name: str
    template: str
    help: str
    stop: tuple[str, ...] = ()
    maker_reading: bool = False

    def for_problem(self, problem: Problem) -> PromptFormat:
        """This format where it applies (the maker's: Python call problems), else `plain`."""
        fits = not self.maker_reading or problem.kind == "call" and problem.language == PYTHON.name
        return self if fits else PLAIN

    def program(self, reply: str, problem: Problem) -> str:
        """The program in `reply`, read as this format reads it."""
        if not self.maker_reading:
            return extract_code(reply, problem.language)
        entry = (problem.entry_point or "").split(".")[0]  # `Solution.twoSum`: the class is what is reached from
        program = self._makers_reading(reply, problem, entry)
        if _defines(program, entry):
            return program
        opened = _OPENING_FENCE.match(reply)
        ours = strip_self_tests(extract_code(reply[opened.end():] if opened else reply, problem.language))
        return ours if _defines(ours, entry) else program

    @staticmethod
    def _makers_reading(reply: str, problem: Problem, entry: str) -> str:
        body = _after_fence(reply)
        body = body.split("```")[0] if body is not None else extract_code(reply, problem.language)
        body = body.replace("\t", "    ")
        try:
            return reachable_definitions(body, entry) + "\n"
        except (SyntaxError, ValueError):  # nothing in it parses: the sandbox gives the verdict on the text itself
            return body


def _defines(code: str, name: str) -> bool:
    """Whether `code` defines `name` at its top level (a function or a class)."""
    return re.search(rf"^(async\s+def|def|class)\s+{re.escape(name)}\b", code, re.MULTILINE) is not None


def _after_fence(reply: str) -> str | None:
    """The text after the fence the reply opens with (and after a second one, where a server that does not continue a
    prefilled turn answered with a fence of its own after ours); None when it opens with none."""
    opened = _OPENING_FENCE.match(reply)
    if opened is None:
        return None
    again = _OPENING_FENCE.match(reply, opened.end())
    return reply[(again or opened).end():]


PLAIN = PromptFormat("plain", "strategies/direct", "the project's Direct prompt; the longest compiling fenced block")
QWEN = PromptFormat("qwen", "strategies/direct_qwen", "Qwen2.5-Coder's own EvalPlus format: a prefilled fence, its "
                    "stop strings and the EvalPlus sanitizer (call problems in Python; others: plain)",
                    stop=QWEN_STOP, maker_reading=True)
FORMATS = {f.name: f for f in (PLAIN, QWEN)}
SAMPLING = QWEN  # the format programs are sampled in unless a strategy says otherwise (`solve --prerank`, tier 1)


def prompt_format(name: str) -> PromptFormat:
    """The format `name`; BadInput naming the known ones otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise BadInput(f"unknown prompt format {name!r}; known: {', '.join(FORMATS)}") from None

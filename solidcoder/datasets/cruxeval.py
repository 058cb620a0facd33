"""Trace-inference items (CodeRL+ evaluation): CRUXEval output prediction and variable final values.

An item is a function `f`, an input, and a question: the value of `f(input)` ("output") or the final value of
one local variable of `f` ("variable"). Ground truth comes from the tracer's real run in the sandbox, never from
the model; the dataset's own answer is kept in `expected_text` for comparison.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from solidcoder.datasets.base import hub_rows
from solidcoder.parsing import parse_python


@dataclass
class TraceItem:
    """One question about a program's execution."""

    id: str
    code: str
    input: str
    task: str  # "output" or "variable"
    expected_text: str = ""
    variable: str = ""

    @property
    def call(self) -> str:
        return f"f({self.input})"


def cruxeval_item(row: dict, task: str = "output") -> TraceItem:
    return TraceItem(id=str(row["id"]), code=row["code"], input=row["input"], task=task,
                     expected_text=row.get("output", ""))


def parameters(code: str) -> set[str]:
    """Parameter names of `f` (a variable question asks about something the function computes)."""
    for node in ast.walk(parse_python(code)):
        if isinstance(node, ast.FunctionDef) and node.name == "f":
            args = node.args
            return {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    return set()


CRUXEVAL_HUB = "cruxeval-org/cruxeval"


def cruxeval_online() -> list[dict]:
    return hub_rows(CRUXEVAL_HUB, "test")

"""APPS: with starter code the tests are calls (argument lines -> a one-element output list), else stdio.

Public tests are the row's `sample_io` (the first tests of `test_list` in the APPS-150 file; the upstream
`input_output` has no split, so online rows take the examples found in the statement); hidden tests are the whole
`test_list`. Ids are `apps-<problem id>`; the APPS-150 file repeats 21 of them, which `dedupe` removes.
"""

from __future__ import annotations

import json

from solidcoder.datasets.base import first_function_name, hub_rows, shown_in_statement, stdout_text
from solidcoder.problem import Problem, TestCase, argument_lines_test


def _test(entry_point: str | None, sample: dict) -> TestCase:
    if entry_point:
        return argument_lines_test(entry_point, sample["input"], sample["output"])
    return TestCase(kind="stdio", stdin=sample["input"], expected_stdout=stdout_text(sample["output"]))


def apps_problem(row: dict) -> Problem:
    starter = row.get("starter_code") or ""
    entry = first_function_name(starter) if starter.strip() else None
    hidden = [_test(entry, s) for s in row["test_list"]]
    public = [_test(entry, s) for s in row.get("sample_io") or []]
    return Problem(
        id=f"apps-{row['id']}", kind="call" if entry else "stdio", statement=row["description"], entry_point=entry,
        starter_code=starter, public_tests=public, hidden_tests=hidden, source="apps",
        meta={"difficulty": row.get("difficulty", ""), "name": str(row.get("name", ""))},
    )


APPS_HUB = "codeparrot/apps"


def apps_online() -> list[dict]:
    rows = []
    for row in hub_rows(APPS_HUB, "test"):
        io = json.loads(row["input_output"] or "{}")
        tests = [{"input": i if isinstance(i, str) else "\n".join(map(json.dumps, i)), "output": o}
                 for i, o in zip(io.get("inputs", []), io.get("outputs", []), strict=False)]
        samples = [t for t in tests if shown_in_statement(row["question"], [t["input"]])]
        rows.append({"id": row["problem_id"], "name": str(row["problem_id"]), "description": row["question"],
                     "difficulty": row["difficulty"], "starter_code": row["starter_code"], "test_list": tests,
                     "sample_io": samples})
    return rows

"""CodeContests: stdio problems keyed by their name (several problems share a `cf_contest_id`).

Public tests are the statement's examples; hidden tests are every test the source evaluates with (online: public,
private and generated; in the SandboxFusion file: its `test` list), so the verdict covers the examples too.
"""

from __future__ import annotations

import json

from solidcoder.datasets.base import hub_rows, shown_in_statement, stdout_text
from solidcoder.problem import Problem, TestCase


def _stdio(stdin: str, stdout) -> TestCase:
    return TestCase(kind="stdio", stdin=stdin, expected_stdout=stdout_text(stdout))


def codecontests_problem(row: dict) -> Problem:
    """A row of the SandboxFusion file: `content`, `labels` (JSON text), `test` (JSON text)."""
    labels = json.loads(row["labels"])
    tests = [_stdio(t["input"]["stdin"], t["output"]["stdout"]) for t in json.loads(row["test"])]
    public = [t for t in tests if shown_in_statement(row["content"], [t.stdin or "", t.outputs[0]])]
    return Problem(id=labels["name"].strip(), kind="stdio", statement=row["content"], public_tests=public,
                   hidden_tests=tests, source="codecontests",
                   meta={"difficulty": str(labels.get("difficulty", "")), "origin": str(labels.get("source", ""))})


def hub_problem(row: dict) -> Problem:
    """A row of deepmind/code_contests."""
    def tests(block: dict) -> list[TestCase]:
        return [_stdio(i, o) for i, o in zip(block["input"], block["output"], strict=False)]

    limit = row.get("time_limit") or {}
    seconds = (limit.get("seconds") or 0) + (limit.get("nanos") or 0) / 1e9
    public = tests(row["public_tests"])
    return Problem(id=row["name"].strip(), kind="stdio", statement=row["description"], public_tests=public,
                   hidden_tests=public + tests(row["private_tests"]) + tests(row["generated_tests"]),
                   time_limit_s=float(seconds) if seconds > 0 else 5.0, source="codecontests",
                   meta={"difficulty": str(row.get("difficulty", "")), "origin": str(row.get("source", ""))})


CODECONTESTS_HUB = "deepmind/code_contests"


def codecontests_online() -> list[dict]:
    return [{"_hub": True, **row} for row in hub_rows(CODECONTESTS_HUB, "test")]


def codecontests_any(row: dict) -> Problem:
    return hub_problem(row) if row.get("_hub") else codecontests_problem(row)

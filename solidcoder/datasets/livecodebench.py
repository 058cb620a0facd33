"""LiveCodeBench: stdio problems (AtCoder, Codeforces) and LeetCode `Solution.method` call problems.

Compressed tests are base64(zlib(pickle(...))) upstream. The pickle only ever holds str / dict / list, so it is
decoded with an Unpickler whose `find_class` refuses every global: no class, function or reduce target can be
loaded, which is what makes unpickling untrusted bytes dangerous. Anything else in the stream is BadInput.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import re
import zlib

from solidcoder.datasets.base import hub_rows, shown_in_statement
from solidcoder.errors import BadInput
from solidcoder.problem import Problem, TestCase

_QUESTION = re.compile(r"### Question:\n(.*?)\n+### Format:", re.DOTALL)
_STARTER = re.compile(r"### Format:.*?```python\n(.*?)```", re.DOTALL)


class _NoGlobals(pickle.Unpickler):
    def find_class(self, module: str, name: str):  # noqa: ARG002 - refusing is the point
        raise pickle.UnpicklingError(f"refusing to load global {module}.{name} from a dataset pickle")


def decode_tests(blob: str):
    """base64 -> zlib -> pickle (plain containers only) -> JSON text when the pickle holds a string."""
    try:
        raw = zlib.decompress(base64.b64decode(blob))
        value = _NoGlobals(io.BytesIO(raw)).load()
    except (ValueError, zlib.error, pickle.UnpicklingError, EOFError) as exc:
        raise BadInput(f"livecodebench: cannot decode compressed tests ({exc})") from None
    if isinstance(value, dict) and isinstance(value.get("input_output"), str):
        value = value["input_output"]
    return json.loads(value) if isinstance(value, str) else value


def _test(fn_name: str | None, stdin: str, output: str) -> TestCase:
    if not fn_name:
        return TestCase(kind="stdio", stdin=stdin, expected_stdout=output)
    args = [json.loads(line) for line in stdin.split("\n") if line.strip()]
    return TestCase(kind="call", call=f"Solution().{fn_name}(*{args!r})", expected=json.loads(output))


def _build(pid: str, statement: str, starter: str, fn_name: str | None, pairs: list[tuple[str, str]]) -> Problem:
    tests = [_test(fn_name, i, o) for i, o in pairs]
    public = [t for (i, o), t in zip(pairs, tests, strict=True) if shown_in_statement(statement, [i, o])]
    return Problem(id=pid, kind="call" if fn_name else "stdio", statement=statement,
                   entry_point=f"Solution.{fn_name}" if fn_name else None, starter_code=starter,
                   public_tests=public, hidden_tests=tests, source="livecodebench")


def livecodebench_problem(row: dict) -> Problem:
    """A row of the SandboxFusion file (`content` is the full prompt; `test` holds inputs/outputs/fn_name)."""
    if "question_content" in row:
        return _hub_problem(row)
    labels = json.loads(row["labels"])
    io_ = decode_tests(row["test"])
    question = _QUESTION.search(row["content"])
    starter = _STARTER.search(row["content"])
    starter_code = starter.group(1) if starter and "YOUR CODE HERE" not in starter.group(1) else ""
    pairs = list(zip(io_["inputs"], io_["outputs"], strict=False))
    return _build(labels["task_id"], question.group(1) if question else row["content"], starter_code,
                  io_.get("fn_name"), pairs)


def _hub_problem(row: dict) -> Problem:
    """A row of livecodebench/code_generation_lite."""
    cases = json.loads(row["public_test_cases"]) + decode_tests(row["private_test_cases"])
    fn_name = json.loads(row.get("metadata") or "{}").get("func_name")
    pairs = [(c["input"], c["output"]) for c in cases]
    return _build(row["question_id"], row["question_content"], row.get("starter_code") or "", fn_name, pairs)


LIVECODEBENCH_HUB = "livecodebench/code_generation_lite"


def livecodebench_online() -> list[dict]:
    return hub_rows(LIVECODEBENCH_HUB, "test")

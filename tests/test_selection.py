"""The one sample-and-select path (`strategies/selection.py`): routing's tier 1 and `solve --prerank` both take it, so
the same samples are asked for in the same request, run as the same executions and end in the same pick; nothing
else composes sampling with pruning and ranking, and `rank` measures the same `prune_then_rank` (real sandbox,
scripted server)."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from scripted_server import ScriptedServer
from stage_router import BAD, GOOD, StageRouter
from test_algorithm1 import ZERO_BUG
from test_bench_strategies import run
from test_routed import ADD0, GENERATED, TESTS_REPLY

from solidcoder.core.trajectory import Trajectory
from solidcoder.models.factory import ModelOptions, make_model
from solidcoder.models.retry import RetryPolicy
from solidcoder.prompting import PromptLibrary
from solidcoder.solve.run import SolveLimits, solve_problem
from solidcoder.stages.base import extract_code
from solidcoder.store import read_rows
from solidcoder.strategies import make_strategy
from solidcoder.strategies.selection import Selector

PACKAGE = Path(__file__).resolve().parents[1] / "solidcoder"
BROKEN = "```python\ndef add(a, b)\n    return a\n```"
# Dedupe leaves 3 programs, syntax prunes one; the 2 survivors run the public tests for `tests:3`, again for the
# majority's vote, then on the generated tests and the public tests once more for the agreement selector: 8 runs.
SAMPLES = (BROKEN, ZERO_BUG, ZERO_BUG, GOOD)  # the majority is wrong: agreement picks GOOD
SAMPLING_RUNS = 8


def shown(execution: dict) -> tuple:
    """An execution as the path decides it: who judged, the program, each test's input and verdict, the count."""
    return (execution["purpose"], execution["program"], [(t["input"], t["status"]) for t in execution["tests"]],
            execution["passed"], execution["total"])


def sampled(requests) -> tuple:
    """The sampling request and the generated tests' request, as sent."""
    first = next(r.body for r in requests if r.body.get("n"))
    tests = next(r.body for r in requests if "tests" in str(r.body["messages"]) and not r.body.get("n"))
    return (first["messages"], first["n"], first["temperature"]), tests["messages"]


def routed_tier_1(server: ScriptedServer, sandbox_pool, tmp_path: Path) -> tuple[str, list, tuple]:
    """Tier 0's program fails; tier 1 samples, selects by agreement, and answers."""
    StageRouter(server).queue("strategies/direct", BAD, *SAMPLES).queue(GENERATED, TESTS_REPLY)
    strategy = make_strategy("solidcoder-routed:samples=4,selector=agreement")
    results, errors = run(server, strategy, sandbox_pool, tmp_path, (ADD0,))
    assert errors == [] and results[0]["passed"]
    runs = [shown(row) for row in read_rows(tmp_path / "run" / "executions.jsonl")]
    return results[0]["code"], runs[1:1 + SAMPLING_RUNS], sampled(server.chat_requests())  # after tier 0's run


def preranked(server: ScriptedServer, sandbox_pool) -> tuple[str, list, tuple]:
    """`solve --prerank 4 --selector agreement` in process: the pick seeds solidcoder+'s first plan."""
    router = StageRouter(server).queue("strategies/direct", *SAMPLES).queue(GENERATED, TESTS_REPLY)
    model = make_model("openai/scripted-model", ModelOptions(api_base=server.url, policy=RetryPolicy(attempts=1)))
    trajectory = Trajectory(None, {})
    limits = SolveLimits(prerank=4, selector=Selector("agreement"))
    strategy = make_strategy("solidcoder+").with_loop({"p": 1, "d": 1, "a": 1, "candidates": 1})
    outcome = asyncio.run(solve_problem(strategy, ADD0, model, sandbox_pool, PromptLibrary.from_env(), trajectory,
                                        limits))
    assert outcome.verified and "code" not in router.seen  # the pick seeded the loop, which wrote no program
    runs = [shown(step) for step in trajectory.steps if step["type"] == "execution" and step["after_call"] <= 2]
    assert trajectory.header["prerank"] == {"samples": 4, "pruned": {"syntax": 1, "lint:ruff": 0, "tests:3": 0},
                                            "survivors": 2, "selector": "agreement"}
    return outcome.code, runs, sampled(server.chat_requests())


def test_tier_1_and_prerank_ask_run_and_pick_alike(scripted_server, sandbox_pool, tmp_path):
    code, runs, requests = routed_tier_1(scripted_server, sandbox_pool, tmp_path)
    with ScriptedServer() as server:
        assert preranked(server, sandbox_pool) == (code, runs, requests)
    assert code.strip() == extract_code(GOOD).strip() and len(runs) == SAMPLING_RUNS
    assert [purpose for purpose, *_ in runs] == ["strategy"] * SAMPLING_RUNS


def calls_of(name: str) -> set[str]:
    """The package's modules that call `name` (as a function or a method)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = getattr(node, "func", None) if isinstance(node, ast.Call) else None
            if (getattr(func, "id", None) or getattr(func, "attr", None)) == name:
                found.add(path.relative_to(PACKAGE.parent).as_posix())
    return found


def test_sampling_and_selection_are_composed_in_one_place():
    assert calls_of("sample_and_select") == {"solidcoder/strategies/routed.py", "solidcoder/solve/run.py"}
    assert calls_of("sample_programs") == calls_of("selected") == {"solidcoder/strategies/selection.py"}
    # the path's pruning and ranking, and `rank`'s (verify/table.py), which measures it
    assert calls_of("prune_then_rank") == {"solidcoder/strategies/selection.py", "solidcoder/verify/table.py"}


def test_verify_knows_nothing_of_models_strategies_or_runs():
    above = ("solidcoder.strategies", "solidcoder.solve", "solidcoder.bench", "solidcoder.core", "solidcoder.models",
             "solidcoder.stages", "solidcoder.cli")
    for path in (PACKAGE / "verify").glob("*.py"):
        imported = [node.module or "" for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(node, ast.ImportFrom)]
        assert not [name for name in imported if name.startswith(above)], path.name

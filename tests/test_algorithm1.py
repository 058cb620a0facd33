"""`--strategy solidcoder` is the paper's Algorithm 1: the order of its stages and its call count, per scenario,
and each ablation removing exactly its component. A scripted OpenAI-compatible server answers each stage from
its own queue (recognised by a phrase only that stage's template has); the sandbox runs every test for real."""

from __future__ import annotations

from collections import defaultdict, deque

import pytest
from scripted_server import reply
from test_bench_strategies import ADD, run

from solidcoder.stages.base import extract_code
from solidcoder.strategies import make_strategy

# The first match wins: (stage, a phrase only that template's rendered prompt contains).
SIGNATURES = [
    ("plan", "worst-case inputs could break a naive solution"),
    ("plan", "Write a step-by-step plan"),
    ("plan_check", "You check algorithm plans by carrying them out"),
    ("plan_refine", "You repair algorithm plans"),
    ("code", "You turn plans into correct"),
    ("simulate", "You trace programs line by line"),
    ("red_team", "You are a red-team tester. Your job is to break"),
    ("judge", "You are the judge of generated tests"),
    ("fix", "You fix programs so that they pass a test"),
    ("debug", "You debug programs against the plan"),
    ("mental_execute", "You execute programs in your head"),
]
GOOD = "```python\ndef add(a, b):\n    return a + b\n```"
BAD = "```python\ndef add(a, b):\n    return a - b\n```"
ZERO_BUG = "```python\ndef add(a, b):\n    return a + b if a else 0\n```"  # passes add(1, 2), fails add(0, 5)
ZERO_TEST = "Weak assumption: a zero argument.\n```python\nassert add(0, 5) == 5, 'zero'\n```"
DEFAULTS = {"plan": "EDGE CASES:\n1. zero\n2. negatives\n3. large\nPLAN:\n1. return a + b",
            "plan_check": "Traced.\nVERDICT: CORRECT", "plan_refine": "PLAN:\n1. return a + b", "code": GOOD,
            "simulate": "The trace matches.\nNO CHANGE", "red_team": ZERO_TEST, "judge": "Fine.\nVALID",
            "fix": GOOD, "debug": GOOD, "mental_execute": "Every check holds.\nPASSED"}


class PaperRouter:
    """Answers each stage from its queue, else its default; remembers the stage of every request in order."""

    def __init__(self, server, **defaults: str):
        self.defaults, self.queues, self.seen = {**DEFAULTS, **defaults}, defaultdict(deque), []
        server.responder = self._respond

    def queue(self, stage: str, *texts: str) -> PaperRouter:
        self.queues[stage].extend(texts)
        return self

    def _respond(self, received):
        text = "\n".join(m.get("content", "") for m in received.body.get("messages", []))
        stage = next((name for name, phrase in SIGNATURES if phrase in text), "unknown")
        self.seen.append(stage)
        return reply(self.queues[stage].popleft() if self.queues[stage] else self.defaults.get(stage, "?"), 11, 13)


def solved(server, sandbox_pool, tmp_path, name="solidcoder"):
    results, errors = run(server, make_strategy(name), sandbox_pool, tmp_path)
    assert errors == []
    return results[0]


def model_stages(notes: dict) -> list[str]:
    return [s for s in notes["stages"] if s not in ("execute", "passes_all")]


def test_right_at_once(scripted_server, sandbox_pool, tmp_path):
    router = PaperRouter(scripted_server, red_team="```python\nassert add(2, 2) == 4, 'sum'\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path)
    assert row["notes"]["stages"] == ["plan", "plan_check", "code", "simulate", "red_team", "judge", "execute",
                                      "passes_all"]
    assert row["passed"] and row["notes"]["accepted"] and router.seen == model_stages(row["notes"])
    assert row["notes"]["verified"]  # the public test and the red-team test ran and passed


def test_a_failing_oracle_test_is_kept_and_the_fix_replaces_the_code(scripted_server, sandbox_pool, tmp_path):
    PaperRouter(scripted_server, code=ZERO_BUG).queue("red_team", ZERO_TEST, "```python\nassert add(3, 4) == 7\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path)
    assert row["notes"]["stages"] == ["plan", "plan_check", "code", "simulate", "red_team", "judge", "execute",
                                      "fix", "red_team", "judge", "execute", "passes_all"]
    assert row["passed"] and row["notes"]["kept_tests"] == 1


def test_a_passing_oracle_test_ends_the_rounds_then_debugging_fixes_the_public_test(scripted_server, sandbox_pool,
                                                                                    tmp_path):
    PaperRouter(scripted_server, code=BAD, red_team="```python\nassert add(0, 0) == 0, 'zero'\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path)
    assert row["notes"]["stages"] == ["plan", "plan_check", "code", "simulate", "red_team", "judge", "execute",
                                      "passes_all", "debug", "passes_all"]
    assert row["passed"]


def test_always_wrong_spends_exactly_the_calls_algorithm_1_implies(scripted_server, sandbox_pool, tmp_path):
    PaperRouter(scripted_server, code=BAD, fix=BAD, debug=BAD)
    row = solved(scripted_server, sandbox_pool, tmp_path)
    p, d, a = 5, 5, 3
    planning, code, simulation, per_round = 2, 1, 1, 3  # plan + plan_check; red_team + judge + fix
    assert row["calls"] == p * (planning + code + simulation + a * per_round + d) == 90
    assert not row["passed"] and row["code"] == extract_code(BAD)  # the last S


def test_a_plan_that_fails_its_hand_check_is_refined_once(scripted_server, sandbox_pool, tmp_path):
    PaperRouter(scripted_server).queue("plan_check", "Wrong on the sample.\nVERDICT: INCORRECT")
    row = solved(scripted_server, sandbox_pool, tmp_path)
    assert row["notes"]["stages"][:4] == ["plan", "plan_check", "plan_refine", "code"]


def test_a_rejected_oracle_test_is_not_executed_and_the_next_round_tries_again(scripted_server, sandbox_pool,
                                                                               tmp_path):
    PaperRouter(scripted_server).queue("judge", "It asserts a wrong value.\nINVALID")
    stages = solved(scripted_server, sandbox_pool, tmp_path)["notes"]["stages"]
    assert stages[4:9] == ["red_team", "judge", "red_team", "judge", "execute"]


def test_every_call_is_greedy(scripted_server, sandbox_pool, tmp_path):
    PaperRouter(scripted_server)
    solved(scripted_server, sandbox_pool, tmp_path)
    assert {r.body.get("temperature") for r in scripted_server.chat_requests()} == {0.0}


def test_the_paper_templates_are_used(scripted_server, sandbox_pool, tmp_path):
    PaperRouter(scripted_server)
    solved(scripted_server, sandbox_pool, tmp_path)
    first = scripted_server.chat_requests()[0].body["messages"][-1]["content"]
    assert "exactly three edge cases" in first and ADD.statement in first


# ---------------------------------------------------------------- ablations: each removes exactly its component


def test_without_shift_left_the_plan_names_no_edge_cases(scripted_server, sandbox_pool, tmp_path):
    PaperRouter(scripted_server, red_team="```python\nassert add(2, 2) == 4\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder_no_shift_left")
    first = scripted_server.chat_requests()[0].body["messages"][-1]["content"]
    assert "edge case" not in first and "Write a step-by-step plan" in first
    assert row["notes"]["stages"][:3] == ["plan", "plan_check", "code"]


def test_without_simulation_the_program_is_not_traced(scripted_server, sandbox_pool, tmp_path):
    PaperRouter(scripted_server, red_team="```python\nassert add(2, 2) == 4\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder_no_simulation")
    assert row["notes"]["stages"] == ["plan", "plan_check", "code", "red_team", "judge", "execute", "passes_all"]


def test_without_oracle_tests_are_unjudged_and_only_a_crash_fails_them(scripted_server, sandbox_pool, tmp_path):
    PaperRouter(scripted_server, code=ZERO_BUG)  # the zero test's assertion fails, but nothing crashes
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder_no_oracle")
    assert row["notes"]["stages"] == ["plan", "plan_check", "code", "simulate", "red_team", "execute", "passes_all"]
    assert row["notes"]["kept_tests"] == 0


def test_without_live_the_models_trace_decides_instead_of_an_execution(scripted_server, sandbox_pool, tmp_path):
    PaperRouter(scripted_server).queue("mental_execute", "It fails.\nFAILED")
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder_no_live")
    assert row["notes"]["stages"][4:9] == ["red_team", "judge", "mental_execute", "fix", "red_team"]
    assert "execute" not in row["notes"]["stages"]


def test_without_defensive_a_failing_test_is_fixed_but_not_kept(scripted_server, sandbox_pool, tmp_path):
    PaperRouter(scripted_server, code=ZERO_BUG).queue("red_team", ZERO_TEST, "```python\nassert add(3, 4) == 7\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder_no_defensive")
    assert "fix" in row["notes"]["stages"] and row["notes"]["kept_tests"] == 0


def test_an_unknown_ablation_is_bad_input():
    from solidcoder.errors import BadInput

    with pytest.raises(BadInput, match="solidcoder_no_oracle"):
        make_strategy("solidcoder_no_brain")

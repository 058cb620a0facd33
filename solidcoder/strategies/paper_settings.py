"""Algorithm 1's settings: the paper's loop sizes and components (`PaperSettings`), the project's refinements and
presets, the per-stage completion caps, which role model plays each stage, and the parsing of
`--strategy solidcoder:OPTIONS`. The loop that reads them is `strategies/algorithm1.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solidcoder.errors import BadInput

COMPONENTS = ("shift_left", "simulation", "oracle", "live", "defensive")


@dataclass
class PaperSettings:
    """The paper's loop sizes and sampling, and which components are on."""

    p: int = 5
    d: int = 5
    a: int = 3
    temperature: float = 0.0
    top_p: float = 0.95
    shift_left: bool = True
    simulation: bool = True
    oracle: bool = True
    live: bool = True
    defensive: bool = True
    # The project's refinements; these defaults are the paper's setting.
    candidates: int = 1
    candidate_temperature: float = 0.8
    monotonic: bool = False
    best: bool = False
    oracle_gating: bool = False
    trace_feedback: bool | str = False  # True: the final values of each variable; "blocks": LDB's block trace
    structured_oracle: bool = False
    evidence: bool = False
    evidence_judge: bool = False
    crash_fallback: bool = False
    stage_caps: bool = False
    strip_self_tests: bool = False
    compact_oracle: bool = False


REFINEMENTS = ("candidates", "monotonic", "best", "oracle_gating", "trace_feedback", "structured_oracle", "evidence",
               "evidence_judge", "crash_fallback", "stage_caps", "strip_self_tests", "compact_oracle")
# Refinements added after runs were recorded: name -> the value at which each is left out of a run's settings (off,
# as before it existed), so those runs keep their configuration key (core/keys.py). A new setting of `PaperSettings`
# goes here, or every recorded key of Algorithm 1 changes (tests/test_keys.py checks recorded ones).
LATER_REFINEMENTS = {"strip_self_tests": False, "compact_oracle": False}
# `compact_oracle`: the structured red team from a shorter template of the project's own (no worked example for the
# model to copy), about half the prompt tokens of `paper/red_team_structured` (benchmarks/results/oracle_rounds.txt).
COMPACT_ORACLE = "refinements/red_team_compact"
# `stage_caps`: the completion cap of the stages whose replies are not programs, below the run's --max-tokens. Sized
# from the replies of Qwen2.5-Coder-0.5B on HumanEval 0-39 (issue 15's run: plans averaged 470 tokens and often hit
# 512; a judge that loops repeats its reason until the cap).
STAGE_TOKENS = {"plan": 384, "plan_check": 256, "plan_refine": 384, "red_team": 320, "judge": 128,
                "mental_execute": 256}
# The project's recommended combination: what its earlier pipeline did, as options over Algorithm 1, plus the
# structured red team checked by evidence and the stage caps (docs/pipeline.md; benchmarks/results/oracle_rounds.txt:
# the same precision as the judge prompt at fewer tokens per round on Qwen2.5-Coder-0.5B).
PRESETS: dict[str, dict[str, Any]] = {
    "solidcoder": {},
    "solidcoder+": {"candidates": 3, "monotonic": True, "best": True, "oracle_gating": True, "trace_feedback": True,
                    "structured_oracle": True, "evidence": True, "crash_fallback": True, "stage_caps": True,
                    "strip_self_tests": True, "compact_oracle": True},
}
# Which model plays each stage when the model is a roster (--model ROLE=MODEL).
ROLES = {"plan": "planner", "plan_check": "planner", "plan_refine": "planner", "code": "coder",
         "simulate": "simulator", "mental_execute": "simulator", "red_team": "oracle", "judge": "judge",
         "fix": "debugger", "debug": "debugger"}


def check_roles(names) -> None:
    """BadInput for a `--model ROLE=MODEL` naming no role of the loop (a typo would silently use the default)."""
    roles = list(dict.fromkeys(ROLES.values()))
    unknown = sorted(set(names) - {*roles, "default"})
    if unknown:
        raise BadInput(f"--model {unknown[0]}=...: unknown role; roles are {', '.join(roles)}")


def parse_refinements(options: str) -> dict[str, Any]:
    """"candidates=3,monotonic" -> {"candidates": 3, "monotonic": True}; BadInput names an unknown or bad one."""
    found: dict[str, Any] = {}
    for item in filter(None, (o.strip() for o in options.split(","))):
        key, _, value = item.partition("=")
        if key not in REFINEMENTS:
            raise BadInput(f"unknown refinement {key!r} in --strategy; known: {', '.join(REFINEMENTS)}")
        if key == "trace_feedback" and value in ("blocks", "values"):
            found[key] = "blocks" if value == "blocks" else True
            continue
        if (key == "candidates") != bool(value) or (value and not value.isdigit() or value == "0"):
            raise BadInput(f"refinement {item!r}: candidates takes a count (candidates=3), trace_feedback nothing, "
                           "values or blocks, the others no value")
        found[key] = int(value) if value else True
    return found

"""Script the scripted server by pipeline stage: each request is recognised by its template's wording and answered
from that stage's queue (or its default), so pipeline tests state replies per stage, not in global call order."""

from __future__ import annotations

from collections import defaultdict, deque

from scripted_server import Action, Received, ScriptedServer, reply

# The first match wins: (stage, a phrase only that stage's rendered prompt contains).
SIGNATURES = [
    ("plan_simulate", "You verify algorithm plans"),
    ("shift_left_plan", "edge cases a naive solution gets wrong"),
    ("plan", "Write a plan for"),
    ("code", "You write correct, efficient"),
    ("oracle_simulate", "decide whether every check in the test holds"),
    ("simulate", "You are a precise interpreter"),
    ("oracle_judge", "You review generated tests"),
    ("oracle", "You are a red-team tester"),
    ("debug", "You fix code using evidence"),
]

CORRECT_ADD = "```python\ndef add(a, b):\n    total = a + b\n    return total\n```"
DEFAULTS = {
    "plan_simulate": "Traced the sample.\nVERDICT: CORRECT",
    "shift_left_plan": "Edge cases: negatives, zero.\n1. Return a + b.",
    "plan": "1. Return a + b.",
    "code": CORRECT_ADD,
    "oracle_simulate": "Every check holds.\nPASSED",
    "simulate": "Output matches.\nPASSED",
    "oracle_judge": "The input respects the constraints.\nVALID",
    "oracle": "Weak assumption: zero.\n```python\nassert add(0, 0) == 0, 'zero'\n```",
    "debug": "The subtraction is wrong.\n" + CORRECT_ADD,
}


def stage_of(received: Received) -> str:
    text = "\n".join(m.get("content", "") for m in received.body.get("messages", []))
    return next((stage for stage, phrase in SIGNATURES if phrase in text), "unknown")


class StageRouter:
    """Installs itself as the server's responder; `queue(stage, *texts_or_actions)` scripts one stage."""

    def __init__(self, server: ScriptedServer, defaults: dict[str, str] | None = None):
        self.server = server
        self.defaults = {**DEFAULTS, **(defaults or {})}
        self.queues: dict[str, deque[Action]] = defaultdict(deque)
        server.responder = self._respond

    def queue(self, stage: str, *items: str | Action) -> StageRouter:
        self.queues[stage].extend(reply(i, 11, 13) if isinstance(i, str) else i for i in items)
        return self

    def _respond(self, received: Received) -> Action:
        stage = stage_of(received)
        if self.queues[stage]:
            return self.queues[stage].popleft()
        return reply(self.defaults.get(stage, "no script for this stage"), 11, 13)

    def stages(self) -> list[str]:
        """The stage of every chat request so far, in order."""
        return [stage_of(r) for r in self.server.chat_requests()]

    def requests(self, stage: str) -> list[Received]:
        return [r for r in self.server.chat_requests() if stage_of(r) == stage]

    def prompt(self, stage: str, index: int = -1) -> str:
        return "\n".join(m["content"] for m in self.requests(stage)[index].body["messages"])

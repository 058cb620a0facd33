"""Script the scripted server by pipeline stage: each request is recognised by the template name it carries (the
X-Solidcoder-Template header the client sends) and answered from that stage's queue (or its default), so pipeline
tests state replies per stage, not in global call order, and rewording a template changes no test."""

from __future__ import annotations

from collections import defaultdict, deque

from scripted_server import Action, Received, ScriptedServer, reply

TEMPLATE_HEADER = "x-solidcoder-template"

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


def template_of(received: Received) -> str:
    """The template name the request carries ("" when it carries none)."""
    return next((v for k, v in received.headers.items() if k.lower() == TEMPLATE_HEADER), "")


def stage_of(received: Received) -> str:
    """The pipeline stage: the name of its template under prompts/stages/ (e.g. stages/oracle_judge -> oracle_judge)."""
    template = template_of(received)
    return template.removeprefix("stages/") if template.startswith("stages/") else template or "unknown"


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

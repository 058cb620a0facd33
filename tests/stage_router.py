"""Script the scripted server by stage: each request is recognised by the template name it carries (the
X-Solidcoder-Template header the client sends) and answered from that stage's queue (or its default), so tests
state replies per stage, not in global call order, and rewording a template changes no test.

Algorithm 1's templates (prompts/paper/) map to its stages (planning with or without edge cases is the one stage
"plan"); Direct's prompt in either format (stages/prompt_formats.py) is the one stage "strategies/direct"; any other
template is its own stage, by name."""

from __future__ import annotations

from collections import defaultdict, deque

from scripted_server import Action, Received, ScriptedServer, reply

TEMPLATE_HEADER = "x-solidcoder-template"
STAGE_OF_TEMPLATE = {"paper/shift_left": "plan", "paper/red_team_structured": "red_team",
                     "refinements/red_team_compact": "red_team", "strategies/direct_qwen": "strategies/direct",
                     **{f"paper/{s}": s for s in (
    "plan", "plan_check", "plan_refine", "code", "simulate", "red_team", "judge", "fix", "debug", "mental_execute")}}

GOOD = "```python\ndef add(a, b):\n    return a + b\n```"
BAD = "```python\ndef add(a, b):\n    return a - b\n```"
DEFAULTS = {"plan": "EDGE CASES:\n1. zero\n2. negatives\n3. large\nPLAN:\n1. return a + b",
            "plan_check": "Traced.\nVERDICT: CORRECT", "plan_refine": "PLAN:\n1. return a + b", "code": GOOD,
            "simulate": "The trace matches.\nNO CHANGE",
            "red_team": "Weak assumption: a zero argument.\n```python\nassert add(0, 5) == 5, 'zero'\n```",
            "judge": "Fine.\nVALID", "fix": GOOD, "debug": GOOD, "mental_execute": "Every check holds.\nPASSED"}


def template_of(received: Received) -> str:
    """The template name the request carries ("" when it carries none)."""
    return next((v for k, v in received.headers.items() if k.lower() == TEMPLATE_HEADER), "")


def stage_of(received: Received) -> str:
    """The stage of a request: Algorithm 1's stage for a paper template, else the template's name."""
    template = template_of(received)
    return STAGE_OF_TEMPLATE.get(template, template or "unknown")


class StageRouter:
    """Installs itself as the server's responder; `queue(stage, *texts_or_actions)` scripts one stage, keyword
    arguments replace a stage's default reply. `seen` is the stage of every request, in order."""

    def __init__(self, server: ScriptedServer, **defaults: str):
        self.server = server
        self.defaults = {**DEFAULTS, **defaults}
        self.queues: dict[str, deque[Action]] = defaultdict(deque)
        self.seen: list[str] = []
        server.responder = self._respond

    def queue(self, stage: str, *items: str | Action) -> StageRouter:
        self.queues[stage].extend(reply(i, 11, 13) if isinstance(i, str) else i for i in items)
        return self

    def _respond(self, received: Received) -> Action:
        stage = stage_of(received)
        self.seen.append(stage)
        if self.queues[stage]:
            return self.queues[stage].popleft()
        return reply(self.defaults.get(stage, "no script for this stage"), 11, 13)

    def requests(self, stage: str) -> list[Received]:
        return [r for r in self.server.chat_requests() if stage_of(r) == stage]

    def prompt(self, stage: str, index: int = -1) -> str:
        return "\n".join(m["content"] for m in self.requests(stage)[index].body["messages"])

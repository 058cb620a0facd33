"""Intermediate simulation: the model traces code on an input by hand and answers PASSED or FAILED.

A preliminary filter only: live execution has the final word. It ranks candidates (`coding`), and with
`--no-live` it replaces execution of generated tests (assumption breaking by mental tracing).
"""

from __future__ import annotations

from solidcoder.stages.base import StageContext, first_sample, last_verdict
from solidcoder.stages.live import GeneratedTest


class Simulator:
    """Asks the model to trace code mentally."""

    def __init__(self, ctx: StageContext):
        self.ctx = ctx

    def passes(self, code: str) -> bool | None:
        """The model's verdict for `code` on the first public example; None when there is no example."""
        sample = first_sample(self.ctx.problem)
        if sample is None:
            return None
        reply = self.ctx.ask("simulate", "simulator", "stages/simulate", problem=self.ctx.statement,
                             code=code, sample_input=sample.input, sample_output=sample.output)
        verdict = last_verdict(reply, "PASSED", "FAILED")
        self.ctx.trajectory.add("decision", "simulate", verdict=verdict)
        return None if verdict is None else verdict == "PASSED"

    def breaks(self, code: str, test: GeneratedTest) -> tuple[bool, str]:
        """(True when the model's trace says `code` fails `test`, its reasoning) — the `--no-live` oracle check."""
        reply = self.ctx.ask("oracle_simulate", "simulator", "stages/oracle_simulate", code=code, test=test.text(),
                             **{k: v for k, v in self.ctx.common.items() if k in ("problem", "io_mode")})
        verdict = last_verdict(reply, "PASSED", "FAILED")
        self.ctx.trajectory.add("decision", "oracle_simulate", verdict=verdict)
        return verdict == "FAILED", reply

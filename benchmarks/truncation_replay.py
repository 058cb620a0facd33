"""What does reading a program cut off by the completion cap gain? Replays the Direct-prompt replies of a run.

A reply that runs into `--max-tokens` inside its code block never closes the fence. `extract_code` used to find no
block in it and return an empty program; it now takes the open block cut back to its longest prefix of whole lines
that compiles (`stages/base.py`), when no closed block compiles. This takes every Direct-prompt reply a run directory
recorded (the `direct` rows' one call; a `solidcoder-routed` row's tier-0 program and tier-1 samples) and every
code and debug reply of Algorithm 1 (`solidcoder` rows, located by `notes.stages`) on call problems, keeps those
with an unclosed fence, and judges the program read both ways on the public and hidden tests. No model call is made.

    python benchmarks/truncation_replay.py benchmarks/results/mbpp40_qwen05b_issue15 \
        --data-file ../shared/data/mbpp_397.jsonl --dataset mbpp
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from routed_samples import calls_by_position
from sanitize_replay import direct_replies, replay_inputs, verdicts

from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.stages.base import extract_code

CALLS = ("plan", "plan_check", "plan_refine", "code", "simulate", "red_team", "judge", "debug")  # stages that call


def loop_replies(run_dir: Path, row: dict) -> list[str]:
    """The code and debug replies of an Algorithm 1 row: its n-th calling stage in `notes.stages` is its n-th call."""
    calls = calls_by_position(run_dir, row["key"])
    stages = [stage for stage in row["notes"]["stages"] if stage in CALLS]
    return [calls[i]["text"] for i, stage in enumerate(stages, 1) if stage in ("code", "debug") and i in calls]


def before(reply: str) -> str:
    """The program as read before: the reply up to its unclosed fence."""
    return extract_code(reply[:reply.rindex("```")])


def main() -> None:
    args, rows, problems = replay_inputs(__doc__.splitlines()[0], ("direct", "solidcoder"))
    moved: Counter = Counter()
    with SandboxPool(SandboxConfig(workers=2)) as pool:
        judge = Judge(pool)
        for row in rows:
            problem = problems[row["id"]]
            read = loop_replies if row["strategy"] == "solidcoder" else direct_replies
            replies = read(args.run_dir, row) if problem.kind == "call" else []
            cut = [reply for reply in replies if reply.count("```") % 2]
            group = f"{row['strategy']} {row['config_hash'][:6]}"
            moved[group, "replies"] += len(replies)
            moved[group, "cut off"] += len(cut)
            old = verdicts(problem, [before(reply) for reply in cut], judge)
            new = verdicts(problem, [extract_code(reply) for reply in cut], judge)
            for (pub0, hid0), (pub1, hid1) in zip(old, new, strict=True):
                moved[group, f"public {'pass' if pub0 else 'fail'}->{'pass' if pub1 else 'fail'}"] += 1
                moved[group, f"hidden {'pass' if hid0 else 'fail'}->{'pass' if hid1 else 'fail'}"] += 1
            if row["strategy"] == "direct" and cut:
                moved[group, "direct rows whose verdict moves"] += new[0][1] != row["passed"]
    for group in sorted({g for g, _ in moved}):
        print(f"{group}: " + ", ".join(f"{k} {v}" for (g, k), v in sorted(moved.items()) if g == group))


if __name__ == "__main__":
    main()

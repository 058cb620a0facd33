"""The candidate's process entry after confinement: one run, by its mode (`children.Child` calls it)."""

from __future__ import annotations

from solidcoder.execution.inside import batch, harness, native, trace_harness


def run_candidate(job: dict) -> None:
    """Run the job's program as its mode says (stdio, serve, trace, blocks; build and exec for other languages, an
    exec job with `inputs` running several tests); never returns."""
    mode = job["mode"]
    if mode in ("build", "exec"):
        harness.flush_and_exit(batch.run_batch(job) if job.get("inputs") is not None else native.run(job))
    harness.fresh_stdio()
    if mode == "stdio":
        harness.run_stdio(job["code"])
    elif mode == "serve":
        harness.run_serve(job)
    elif mode == "trace":
        trace_harness.run_trace(job)
    elif mode == "blocks":
        trace_harness.run_blocks(job)
    harness.flush_and_exit(120)

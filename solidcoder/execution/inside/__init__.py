"""The code that runs inside the sandbox: the trust boundary is this folder.

Everything here executes in the zygote (`zygote.py`, the fork-server that isolates itself: `isolation.py`,
`rootfs.py`, `linux.py`, `cgroup.py`) or in the confined processes it clones (`children.py`): the candidate's
process (`candidate.py`, `harness.py`, `trace_harness.py`, `basic_blocks.py`) and the judge process (`referee.py`,
`proxies.py`, `raised.py`, `integrity.py`), which talk in the plain-data wire format (`wire.py`,
`stdlib_values.py`) and compare values with `compare.py`. Nothing here imports the host side of `execution/`
(the pool, the executors, the host's judge and tracers): it imports only this folder, the standard library and the
bottom layer's `solidcoder.matching` and `solidcoder.parsing` (`tests/test_execution_boundary.py` checks this).

Used on both sides: the host imports a few names from here, as plain definitions shared with the sandbox rather than
copies of them: `compare.py` (the host compares stdio output, the judge process compares returned values),
`isolation.Layer` (what the zygote reports), `rootfs.hidden_paths` (the pool computes what no run may see),
`cgroup.create_memory_cgroup`/`remove_cgroup` (the pool makes and removes each worker's cgroup; the zygote holds it),
`children.judge_slots`, and `harness.MEMORY_ERROR_EXIT` and `harness.source_line`. They live here because the
sandboxed side needs them; the host reading them never makes them trusted code, and nothing here decides a verdict
inside the candidate's process.
"""

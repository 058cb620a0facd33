"""The SolidCoder strategy: an adapter from the Strategy protocol to the pipeline's `solve()`.

The pipeline (solidcoder/pipeline.py) is built separately; until it exists, asking for this strategy is BadInput
with a clear message rather than a stand-in that would report numbers for something that did not run.
"""

from __future__ import annotations

from solidcoder.errors import BadInput


def make_solidcoder():
    try:
        import solidcoder.pipeline  # noqa: F401
    except ImportError:
        raise BadInput("strategy 'solidcoder' needs solidcoder/pipeline.py, which is not in this build yet") from None
    raise BadInput("strategy 'solidcoder': the pipeline adapter is not wired yet")

"""benchmarks/README.md maps every benchmark script to what it measures and where its results are: it names every
script, and every result path it names exists."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
INDEX = (BENCHMARKS / "README.md").read_text(encoding="utf-8")


def _expanded(path: str) -> list[str]:
    """`a{1,2}.md` as `a1.md` and `a2.md`."""
    parts = re.split(r"\{([^}]*)\}", path)
    choices = [[part] if i % 2 == 0 else part.split(",") for i, part in enumerate(parts)]
    return ["".join(pieces) for pieces in itertools.product(*choices)]


def test_the_index_names_every_script():
    scripts = {str(p.relative_to(BENCHMARKS)) for pattern in ("*.py", "*.sh", "paper/*.py")
               for p in BENCHMARKS.glob(pattern)}
    indexed = set(re.findall(r"^\| `([^`]+)` \|", INDEX, re.M))
    assert scripts and scripts <= indexed
    assert {name for name in indexed if not name.startswith("results/")} == scripts


def test_every_result_the_index_names_exists():
    named = [path for token in re.findall(r"`(results/[^`]+)`", INDEX) for path in _expanded(token)]
    assert len(named) > 20
    assert [path for path in named if not (BENCHMARKS / path).exists()] == []

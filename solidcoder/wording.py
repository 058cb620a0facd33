"""Words a person reads: counts ("1 call", "2 calls", never "1 calls") and the docs' markdown tables."""

from __future__ import annotations


def plural(count: int, word: str, words: str | None = None) -> str:
    """`word` for a count of one, else `words` (default: `word` + "s"); the count is not included."""
    return word if count == 1 else (words or f"{word}s")


def counted(count: int, word: str, words: str | None = None) -> str:
    """"1 call", "3 calls", "0 calls"."""
    return f"{count} {plural(count, word, words)}"


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table (docs/benchmarks.md's, built from the registries); a `|` in a cell is escaped."""
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(cell.replace("|", "\\|") for cell in line) + " |" for line in lines)

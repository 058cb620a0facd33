"""Counts in the words a person reads: "1 call", "2 calls", never "1 calls"."""

from __future__ import annotations


def plural(count: int, word: str, words: str | None = None) -> str:
    """`word` for a count of one, else `words` (default: `word` + "s"); the count is not included."""
    return word if count == 1 else (words or f"{word}s")


def counted(count: int, word: str, words: str | None = None) -> str:
    """"1 call", "3 calls", "0 calls"."""
    return f"{count} {plural(count, word, words)}"

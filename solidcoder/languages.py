"""The languages a program may be written in: one `Language` entry each, read through a problem's `language` field.

Python only for now: every program solidcoder writes, runs and judges is Python. An entry holds what is decided by
the language alone: how prompts name it, the code-fence tags reply extraction accepts, the source file's suffix.
The next language is a new entry here (with what running it takes), not a new `if`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    """`name` as `Problem.language` holds it; `prompt_name` as templates say it (`{{ language }}`); `fence_tags`
    the tags of a reply's code block taken as this language ("" is an untagged block); `suffix` its source file's
    (not read yet: the sandbox's harness names every program `solution.py`)."""

    name: str
    prompt_name: str
    fence_tags: tuple[str, ...]
    suffix: str


PYTHON = Language("python", "Python 3", ("", "python", "py", "python3"), ".py")
LANGUAGES = {PYTHON.name: PYTHON}
DEFAULT = PYTHON.name  # a problem file without `language`


def language(name: str) -> Language:
    """The entry called `name`; a ValueError naming the known ones when there is none (a problem file's field)."""
    if name not in LANGUAGES:
        raise ValueError(f"field 'language' must be one of {tuple(LANGUAGES)}, got {name!r}")
    return LANGUAGES[name]

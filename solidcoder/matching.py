"""How a problem's outputs are matched: the comparison modes, and the float tolerance a problem is judged with.

Part of the problem schema (`Problem.output_match`, `Problem.tolerance`), so the schema owns it and the judge
(`execution/inside/compare.py`) reads it from here. The comparison itself lives in `execution/inside/compare.py`.

The tolerance is the one a problem sets, else the one its statement states, else DEFAULT_TOLERANCE.
`stated_tolerance` reads statements as the datasets write them: "absolute or relative error does not exceed
10^{-6}", "$$$10^{-4}$$$", "10^{ - 9}", "10^-9", "10^(-6)", "10<sup>-6</sup>", "10⁻⁶", "2 \\cdot 10^{-6}",
"1e-6" or "0.000001", with an ASCII or Unicode minus. A number counts only when it is below 1 and a word about
error or precision ("error", "precision", "accuracy", "tolerance", "differ", "within") comes shortly before it in
the same paragraph, or just after it; the first such number wins. Constraints such as "1 <= n <= 10^9" are never
read as a tolerance.
"""

from __future__ import annotations

import functools
import re

DEFAULT_TOLERANCE = 1e-6
# "tokens": whitespace, newlines included, only separates tokens; "lines": the same line layout too.
MODES = ("tokens", "lines")

_MINUS = "[-\u2212\u2013]"
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_NUMBER = re.compile(
    r"(?<![\w.])(?:(?P<coef>[0-9]+(?:\.[0-9]+)?)\s*(?:\\cdot|\\times|[*·×⋅])\s*)?10\s*(?:"
    rf"(?:\^|\*\*)\s*[{{(]?\s*{_MINUS}\s*(?P<exp>[0-9]{{1,3}})\s*[}})]?"
    rf"|<sup>\s*{_MINUS}\s*(?P<sup>[0-9]{{1,3}})\s*</sup>"
    r"|⁻(?P<uni>[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}))"
    rf"|(?<![\w.])(?P<mant>[0-9]+(?:\.[0-9]+)?)[eE]\s*{_MINUS}\s*(?P<eexp>[0-9]{{1,3}})(?!\w|\.[0-9])"
    r"|(?<![\w.])(?P<dec>0\.[0-9]*[1-9][0-9]*)(?!\w|\.[0-9])"
)
_KEYWORD = re.compile(r"error|precision|accura|toleran|differ|within", re.IGNORECASE)
_BEFORE, _AFTER = 120, 40


def _value(match: re.Match) -> float:
    if match["dec"]:
        return float(match["dec"])
    if match["mant"]:
        return float(f"{match['mant']}e-{match['eexp']}")
    exponent = match["exp"] or match["sup"] or match["uni"].translate(_SUPERSCRIPTS)
    return float(match["coef"] or 1) * 10.0 ** -int(exponent)


def _near_keyword(text: str, match: re.Match) -> bool:
    before = text[max(0, match.start() - _BEFORE) : match.start()].rsplit("\n\n", 1)[-1]
    after = text[match.end() : match.end() + _AFTER].split("\n\n", 1)[0]
    return bool(_KEYWORD.search(before) or _KEYWORD.search(after))


@functools.lru_cache(maxsize=4096)
def stated_tolerance(statement: str) -> float | None:
    """The tolerance a statement states for floating-point answers, or None when it states none."""
    for match in _NUMBER.finditer(statement):
        value = _value(match)
        if 0 < value < 1 and _near_keyword(statement, match):
            return value
    return None


def problem_tolerance(float_tolerance: float | None, statement: str) -> float:
    """The tolerance to judge with: the problem's own, else the statement's, else DEFAULT_TOLERANCE."""
    if float_tolerance is not None:
        return float_tolerance
    stated = stated_tolerance(statement)
    return DEFAULT_TOLERANCE if stated is None else stated

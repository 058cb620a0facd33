"""Text a person sees, made safe to show: what a model wrote, what a program printed or named, what a run directory
holds.

* `terminal_safe`: every C0 control but newline and tab, DEL, every C1 control, and the bidirectional controls
  (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) and the line and paragraph separators U+2028, U+2029,
  shown as their Python escapes (`\\x1b`, `\\x9b`, `\\u202e`): no escape sequence reaches the terminal (no OSC 52
  clipboard write, no title, no clear screen), and no text reads in an order other than the one it is stored in
  (Trojan Source). `one_line` also shows newlines, for a message that must stay one line.
* `json_safe`: JSON text (as `json.dumps(..., ensure_ascii=False)` writes it) with the same characters written as
  `\\uXXXX`: the same data, shown safely.
* `html_safe`: any value as HTML text: `terminal_safe`, then HTML-escaped (quotes too, so it may go in an
  attribute); a page shows the characters a terminal would.

Imports nothing heavy: the CLI's one `BadInput` handler uses it.
"""

from __future__ import annotations

import html
import re

_SHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """`text` with every control character but newline and tab, and every bidirectional control, shown as its
    escape. Markup is the caller's to avoid (print it as `rich.text.Text`)."""
    return _SHOWN.sub(lambda m: repr(m.group())[1:-1], text)


def one_line(text: str) -> str:
    """`terminal_safe`, and newlines shown as `\\n` too."""
    return terminal_safe(text).replace("\n", "\\n")


def json_safe(text: str) -> str:
    """JSON text with the characters `terminal_safe` shows written as `\\uXXXX` escapes (all are in the BMP, and
    outside a string JSON has none of them)."""
    return _SHOWN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def html_safe(value: object) -> str:
    """Any value (text, a number) as HTML text, its control characters shown as `terminal_safe` shows them."""
    return html.escape(terminal_safe(str(value)))

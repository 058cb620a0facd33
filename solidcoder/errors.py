"""Error types shared across the package.

`BadInput` is anything the user gave us that we cannot use (missing file, malformed problem, unknown dataset,
broken template, bad flag). The CLI turns it into a one-line message and exit code 2.
"""


class BadInput(Exception):
    """The user's input is unusable; the message names the problem in one line."""

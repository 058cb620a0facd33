"""Error types shared across the package.

`BadInput` is anything the user gave us that we cannot use (missing file, malformed problem, unknown dataset,
broken template, bad flag). The CLI turns it into a one-line message and exit code 2. `InfrastructureError` is a
failure of the sandbox, never of the candidate: what it stopped is not scored, and a bench unit is retried.
"""


class BadInput(Exception):
    """The user's input is unusable; the message names the problem in one line."""


class InfrastructureError(Exception):
    """The sandbox (not the candidate) failed; the unit is retried on resume."""

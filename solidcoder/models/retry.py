"""The one retry policy every HTTP backend uses (tenacity).

Backends translate their library's exceptions into `TransientError` (rate limit, timeout, connection, 5xx,
malformed reply) or `ModelFatalError` (authentication, bad request, context window). Only transient errors are
retried, with exponential backoff and jitter, never sooner than a server's Retry-After, within a bounded number of
attempts and a bounded total wait. When retries run out the last transient error becomes a `ModelError`.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt
from tenacity import RetryError as _RetryError
from tenacity import stop_after_delay as _stop_after_delay

from solidcoder.errors import ModelError

T = TypeVar("T")


class TransientError(Exception):
    """A failure that may go away if we wait: the message says what happened."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. `max_total_wait_s` bounds time spent sleeping between attempts, not the calls."""

    attempts: int = 5
    base_wait_s: float = 1.0
    max_wait_s: float = 60.0
    max_total_wait_s: float = 300.0
    timeout_s: float = 300.0

    def wait_for(self, state: RetryCallState) -> float:
        """Exponential backoff with full jitter, but never less than the server's Retry-After."""
        backoff = self.base_wait_s * 2 ** (state.attempt_number - 1)
        wait = random.uniform(backoff / 2, backoff)
        exc = state.outcome.exception() if state.outcome else None
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(wait, self.max_wait_s)

    def _kwargs(self) -> dict:
        return {
            "stop": stop_after_attempt(self.attempts) | _stop_after_delay(self.max_total_wait_s),
            "wait": self.wait_for,
            "retry": retry_if_exception_type(TransientError),
            "reraise": False,
        }


def call_with_retries(policy: RetryPolicy, what: str, fn: Callable[[], T]) -> T:
    """Run `fn`, retrying transient errors; raise `ModelError` naming `what` when retries run out."""
    try:
        for attempt in Retrying(**policy._kwargs()):
            with attempt:
                return fn()
    except _RetryError as exc:
        raise _gave_up(what, exc) from None
    raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover


async def acall_with_retries(policy: RetryPolicy, what: str, fn: Callable[[], Awaitable[T]]) -> T:
    """The async twin of `call_with_retries`."""
    try:
        async for attempt in AsyncRetrying(**policy._kwargs()):
            with attempt:
                return await fn()
    except _RetryError as exc:
        raise _gave_up(what, exc) from None
    raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover


def _gave_up(what: str, exc: _RetryError) -> ModelError:
    attempts, last = exc.last_attempt.attempt_number, str(exc.last_attempt.exception())
    return ModelError(f"{what}: gave up after {attempts} attempt(s): {last.removeprefix(f'{what}: ')}")

"""How often and how long to retry: `RetryPolicy`, pure data (the loop is `_retry`)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_RETRY_AFTER_MS", "RetryPolicy"]

DEFAULT_MAX_RETRY_AFTER_MS = 60_000
"""A server hint above this is a reason to stop (and fall back), not to sleep."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry. Delays are in seconds; the server hint is in ms."""

    attempts: int = 4
    """Calls in all: the first and three retries."""
    initial_delay: float = 1.0
    """The backoff before the first retry, in seconds (before jitter)."""
    backoff_factor: float = 2.0
    """Each retry's backoff is this many times the one before."""
    max_delay: float = 30.0
    """The longest backoff, in seconds."""
    jitter: bool = True
    """Full jitter: a uniform wait in [0, backoff]."""
    deadline: float | None = None
    """Total seconds for all attempts and waits; None: no deadline."""
    max_retry_after_ms: int = DEFAULT_MAX_RETRY_AFTER_MS
    """A server hint above this means: do not sleep here, give up and let a fallback act."""

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.initial_delay < 0 or self.max_delay < 0 or self.backoff_factor < 1:
            raise ValueError("delays must be >= 0 and backoff_factor >= 1")

    def backoff(self, retry_number: int, rng: Callable[[], float] = random.random) -> float:
        """The wait in seconds before retry `retry_number` (1 for the first retry)."""
        ceiling = min(
            self.max_delay, self.initial_delay * self.backoff_factor ** (retry_number - 1)
        )
        return ceiling * rng() if self.jitter else ceiling

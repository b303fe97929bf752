"""How often and how long to retry: `RetryPolicy`, pure data (the loop is `_retry`)."""

from __future__ import annotations

import math
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
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int):
            raise ValueError(f"attempts must be an integer, not {self.attempts!r}")
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        for name in ("initial_delay", "max_delay"):
            _check_seconds(name, getattr(self, name))
        _check_seconds("backoff_factor", self.backoff_factor)
        if self.backoff_factor < 1:
            raise ValueError("backoff_factor must be at least 1")
        if self.deadline is not None:
            _check_seconds("deadline", self.deadline)
        hint_cap = self.max_retry_after_ms
        if isinstance(hint_cap, bool) or not isinstance(hint_cap, int) or hint_cap < 0:
            raise ValueError(f"max_retry_after_ms must be an integer >= 0, not {hint_cap!r}")

    def backoff(self, retry_number: int, rng: Callable[[], float] = random.random) -> float:
        """The wait in seconds before retry `retry_number` (1 for the first retry)."""
        ceiling = self.initial_delay
        if ceiling > 0 and retry_number > 1:
            try:
                ceiling *= self.backoff_factor ** (retry_number - 1)
            except OverflowError:  # thousands of retries: the cap has long been reached
                ceiling = self.max_delay
        ceiling = min(self.max_delay, ceiling)
        return ceiling * rng() if self.jitter else ceiling


def _check_seconds(name: str, value: object) -> None:
    """A number of seconds: finite and >= 0 (NaN and infinity are refused, not waited)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, not {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and >= 0, not {value!r}")

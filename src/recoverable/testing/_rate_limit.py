"""FakeProvider's rate-limit mode: a token bucket per API key, as the real APIs keep one.

`RateLimit(requests=20, per=1.0)` lets each key make 20 requests at once, then one more
every `per / requests` seconds (the bucket refills continuously, up to `burst`); a request
that finds it empty gets the provider's 429 with the time until the next token as
`retry-after-ms` (and `retry-after`, whole seconds, rounded up; Gemini: RetryInfo).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ._faults import Fault

__all__ = ["RateLimit", "TokenBuckets", "api_key"]

# The headers (and Gemini's query parameter) an SDK sends its credential in.
_KEY_HEADERS = ("authorization", "x-api-key", "x-goog-api-key")


@dataclass(frozen=True, slots=True)
class RateLimit:
    """`requests` per `per` seconds for each API key, with bursts of up to `burst`."""

    requests: int
    """How many requests a key may make per `per` seconds."""
    per: float = 1.0
    """The window, in seconds."""
    burst: int | None = None
    """The bucket's size: how many requests a rested key may make at once (None: `requests`)."""

    def __post_init__(self) -> None:
        if isinstance(self.requests, bool) or not isinstance(self.requests, int):
            raise ValueError(f"requests must be an integer, not {self.requests!r}")
        if self.requests < 1:
            raise ValueError("requests must be >= 1")
        if not (isinstance(self.per, (int, float)) and math.isfinite(self.per) and self.per > 0):
            raise ValueError(f"per must be a finite number of seconds > 0, not {self.per!r}")
        if self.burst is not None and (
            isinstance(self.burst, bool) or not isinstance(self.burst, int) or self.burst < 1
        ):
            raise ValueError(f"burst must be an integer >= 1 or None, not {self.burst!r}")

    @property
    def size(self) -> int:
        """The bucket's size."""
        return self.requests if self.burst is None else self.burst


def api_key(headers: Mapping[str, str], query: Mapping[str, str]) -> str:
    """The credential a request was sent with ("" when none): what the bucket is kept per."""
    for name in _KEY_HEADERS:
        value = headers.get(name)
        if value:
            return value
    return query.get("key", "")


class TokenBuckets:
    """One bucket per key (not thread-safe: FakeProvider calls it under its lock)."""

    def __init__(self, limit: RateLimit, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)

    def take(self, key: str) -> Fault | None:
        """Take a token for `key`: None when there was one, else the 429 to answer with."""
        limit = self.limit
        rate = limit.requests / limit.per
        now = self._clock()
        tokens, at = self._buckets.get(key, (float(limit.size), now))
        tokens = min(float(limit.size), tokens + (now - at) * rate)
        if tokens >= 1:
            self._buckets[key] = (tokens - 1, now)
            return None
        self._buckets[key] = (tokens, now)
        wait = (1 - tokens) / rate
        return Fault.rate_limited(
            retry_after=float(math.ceil(wait)),
            retry_after_ms=max(1, math.ceil(wait * 1000)),
            retry_delay=f"{wait:.3f}s",
        )

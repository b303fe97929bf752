"""Retry under hostile arguments and hints: refused at construction, never hammering, and a
cancel that wakes every wait."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

import recoverable as rc


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"attempts": float("nan")}, "attempts must be an integer"),
        ({"attempts": 2.5}, "attempts must be an integer"),
        ({"attempts": True}, "attempts must be an integer"),
        ({"attempts": 0}, "attempts must be at least 1"),
        ({"initial_delay": float("inf")}, "initial_delay must be finite"),
        ({"initial_delay": float("nan")}, "initial_delay must be finite"),
        ({"max_delay": -1}, "max_delay must be finite and >= 0"),
        ({"deadline": float("inf")}, "deadline must be finite"),
        ({"backoff_factor": 0.5}, "backoff_factor must be at least 1"),
        ({"backoff_factor": float("inf")}, "backoff_factor must be finite"),
        ({"max_retry_after_ms": -1}, "max_retry_after_ms must be an integer >= 0"),
        ({"max_retry_after_ms": 1.5}, "max_retry_after_ms must be an integer >= 0"),
        ({"initial_delay": "1"}, "initial_delay must be a number"),
    ],
)
def test_a_policy_refuses_bad_arguments_at_construction(fields: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        rc.RetryPolicy(**fields)
    with pytest.raises(ValueError, match=match):
        rc.retry(**fields)


def test_backoff_after_thousands_of_retries_is_the_cap() -> None:
    policy = rc.RetryPolicy(attempts=100_000, jitter=False, max_delay=30)
    assert [policy.backoff(n) for n in (1, 2, 3, 2_000, 10**6)] == [1.0, 2.0, 4.0, 30, 30]


@pytest.mark.parametrize("hint", ["120", str(10 * 24 * 3600), "1" + "0" * 400, "inf"])
def test_a_hint_longer_than_the_cap_gives_up_at_once_however_long(hint: str) -> None:
    calls = 0

    def rate_limited() -> None:
        nonlocal calls
        calls += 1
        raise rc.RecoverableError(rc.from_http(429, {"retry-after": hint}, source="openai"))

    with pytest.raises(rc.RecoverableError) as raised:
        rc.retry(attempts=5, sleep=lambda s: None).call(rate_limited)
    assert calls == 1  # no hammering with normal backoff
    detail = raised.value.detail
    assert (detail.code, detail.retryable) == ("provider_rate_limited", False)
    assert detail.details["gave_up"] == "retry_after_too_long"
    assert detail.details["server_retry_after_ms"] >= 120_000


def test_tenacity_hooks_obey_the_same_cap() -> None:
    class Outcome:
        failed = True

        def __init__(self, error: BaseException) -> None:
            self.error = error

        def exception(self) -> BaseException:
            return self.error

    class State:
        def __init__(self, error: BaseException) -> None:
            self.outcome = Outcome(error)

    week = rc.RecoverableError(rc.from_http(429, {"retry-after": str(8 * 24 * 3600)}))
    assert rc.adapters.retry_if_retryable(State(week)) is False
    assert rc.adapters.wait_retry_after()(State(week)) == 60.0
    assert rc.adapters.wait_retry_after(max_retry_after_ms=5_000)(State(week)) == 5.0


def _flaky() -> Any:
    async def always_overloaded() -> None:
        raise rc.RecoverableError("provider_overloaded", "busy", retry_after_ms=60_000)

    return always_overloaded


@pytest.mark.parametrize("kind", ["asyncio", "threading"])
async def test_a_cancel_wakes_an_async_retry_wait_at_once(kind: str) -> None:
    cancel: Any = asyncio.Event() if kind == "asyncio" else threading.Event()
    retrying = rc.retry(attempts=3, cancel=cancel)

    async def set_soon() -> None:
        await asyncio.sleep(0.05)
        cancel.set()

    setter = asyncio.create_task(set_soon())
    started = time.monotonic()
    with pytest.raises(rc.RecoverableError) as raised:
        await retrying.acall(_flaky())
    await setter
    assert raised.value.code == "run_cancelled"
    assert time.monotonic() - started < 5  # the hint asked for 60 s

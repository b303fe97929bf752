"""Shared cooldowns, breakers and budgets: the same tests against the memory, SQLite and Redis
stores (a real redis-server on loopback), on a virtual clock."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable.fleet._cooldowns import credential_hash
from recoverable.fleet._rules import GO
from recoverable.fleet._stores import FallibleStore, MemoryStore

from ..support.providers import free_port
from ..support.redis import redis_server
from ..support.retry import Clock, failing
from .support import (
    CREDENTIAL,
    Factory,
    rate_limited,
    raw_contents,
    refusal,
    retrying,
    worker,
)

# --- shared quiet times ----------------------------------------------------------------------


def test_one_workers_429_quiets_the_key_for_another(make: Factory, clock: Clock) -> None:
    a, b = worker(make, clock), worker(make, clock)
    first = failing(rate_limited(2000))
    assert retrying(clock, a).call(first) == "ok"
    assert first.calls == [1, 1]  # type: ignore[attr-defined]
    assert clock.slept == [2.0]  # the gate waited the hint; the loop did not wait it again
    assert b.quiet_ms() == 0  # it has passed, for everyone


def test_a_caller_that_never_saw_the_429_waits_out_the_rest(make: Factory, clock: Clock) -> None:
    a, b, c = worker(make, clock), worker(make, clock), worker(make, clock)
    a.after_failure(rate_limited(2000).detail, GO)
    clock.now += 0.5
    second = failing()
    assert retrying(clock, b).call(second) == "ok"
    assert second.calls == [1]  # type: ignore[attr-defined]
    assert clock.slept == [1.5]  # B waited out what was left, without spending a call
    clock.now -= 1.5  # C arrives at the same moment as B did: it goes one interval later
    assert retrying(clock, c).call(failing()) == "ok"
    assert clock.slept == [1.5, 2.5]  # the interval: the hint, at most max_spacing_s (1 s)


def test_quiet_without_a_hint_lasts_the_default(make: Factory, clock: Clock) -> None:
    a, b = worker(make, clock), worker(make, clock)
    overloaded = rc.RecoverableError("provider_overloaded", "529")
    a.after_failure(overloaded.detail, GO)
    assert b.quiet_ms() == 1000
    assert b.state().code == "provider_overloaded"
    assert b.state().pace_until == 0.0  # no hint, no pace: all resume together


def test_fail_fast_raises_the_remaining_quiet_time_and_spends_no_call(
    make: Factory, clock: Clock
) -> None:
    a = worker(make, clock)
    b = worker(make, clock, max_wait_ms=0)
    a.after_failure(rate_limited(30_000).detail, a.before_call(0))
    clock.now += 10
    fn = failing()
    detail = refusal(lambda: retrying(clock, b).call(fn))
    assert fn.calls == []  # type: ignore[attr-defined]
    assert (detail.code, detail.retryable, detail.retry_after_ms) == (
        "provider_rate_limited", True, 20_000,
    )  # fmt: skip
    assert detail.details["cooldown"] == "quiet"
    assert (
        detail.details["cooldown_key"]
        == "openai/gpt-4o/"
        + rc.fleet.Cooldowns.memory().key(credential=CREDENTIAL).scope.rsplit("/", 1)[1]
    )


def test_a_quiet_time_over_the_policys_cap_fails_fast_too(make: Factory, clock: Clock) -> None:
    a, b = worker(make, clock), worker(make, clock)
    a.after_failure(rate_limited(120_000).detail, a.before_call(0))
    detail = refusal(lambda: retrying(clock, b, max_retry_after_ms=60_000).call(failing()))
    assert (detail.code, detail.retry_after_ms) == ("provider_rate_limited", 120_000)


def test_fallback_moves_on_from_a_quiet_key_at_once(make: Factory, clock: Clock) -> None:
    quiet = worker(make, clock, max_wait_ms=0)
    quiet.after_failure(rate_limited(5000).detail, quiet.before_call(0))
    openai_call = failing()
    anthropic_call = failing(result="from anthropic")
    answer = rc.fallback(
        {
            "openai": retrying(clock, quiet)(openai_call),
            "anthropic": retrying(clock, worker(make, clock).key(source="anthropic"))(
                anthropic_call
            ),
        }
    )
    assert (answer.value, answer.name) == ("from anthropic", "anthropic")
    assert openai_call.calls == []  # type: ignore[attr-defined]
    [failure] = answer.failures
    assert (failure.code, failure.retry_after_ms, failure.details["candidate"]) == (
        "provider_rate_limited", 5000, "openai",
    )  # fmt: skip


def test_a_quota_stops_the_key_for_everyone_but_not_other_keys(make: Factory, clock: Clock) -> None:
    a, b = worker(make, clock), worker(make, clock)
    quota = rc.RecoverableError("provider_quota_exceeded", "insufficient_quota")
    fn = failing(quota)
    assert refusal(lambda: retrying(clock, a).call(fn)).code == "provider_quota_exceeded"
    clock.now += 600
    spent = failing()
    detail = refusal(lambda: retrying(clock, b).call(spent))
    assert spent.calls == []  # type: ignore[attr-defined]
    assert (detail.code, detail.retryable, detail.retry_after_ms) == (
        "provider_quota_exceeded", False, None,
    )  # fmt: skip
    assert detail.details["stopped_for_ms"] == 3_000_000
    other = make(clock=clock).key(source="openai", model="gpt-4o", credential="sk-other-key-123")
    assert retrying(clock, other).call(failing()) == "ok"
    clock.now += 3000
    assert retrying(clock, b).call(failing()) == "ok"  # the stop has passed


def test_waiting_callers_resume_one_per_hint_not_all_at_once(make: Factory, clock: Clock) -> None:
    a = worker(make, clock)
    a.after_failure(rate_limited(100).detail, a.before_call(0))
    waits = [worker(make, clock).before_call(60_000).wait_s for _ in range(4)]
    # One per interval, the interval 0.2% shorter each time (a pace too slow finds out).
    assert waits == pytest.approx([0.1, 0.2, 0.2998, 0.3994004], abs=1e-5)
    clock.now += 20  # the resume window has passed: no pace
    assert worker(make, clock).before_call(60_000).wait_s == 0


def test_the_credential_is_never_stored_or_shown(make: Factory, clock: Clock) -> None:
    a = worker(make, clock, max_wait_ms=0)
    a.after_failure(rate_limited(5000).detail, a.before_call(0))
    detail = refusal(lambda: retrying(clock, a).call(failing()))
    assert CREDENTIAL not in raw_contents(a)
    assert CREDENTIAL not in repr(detail.to_dict())
    assert CREDENTIAL[-12:] not in raw_contents(a)


def test_failures_without_a_cooldown_or_breaker_leave_nothing(make: Factory, clock: Clock) -> None:
    a = worker(make, clock)
    bad = rc.RecoverableError("provider_invalid_request", "400")
    assert refusal(lambda: retrying(clock, a).call(failing(bad))).code == (
        "provider_invalid_request"
    )
    assert a.state() == rc.fleet.Cooldowns.memory().state()


def test_async_calls_wait_out_the_shared_quiet(make: Factory, clock: Clock) -> None:
    a, b = worker(make, clock), worker(make, clock)
    a.after_failure(rate_limited(700).detail, a.before_call(0))
    calls: list[int] = []

    async def call() -> str:
        calls.append(1)
        return "ok"

    async def asleep(seconds: float) -> None:
        clock.sleep(seconds)

    answer = asyncio.run(retrying(clock, b, asleep=asleep).acall(call))
    assert (answer, calls, clock.slept) == ("ok", [1], [0.7])


def test_the_block_form_consults_the_gate_and_records_the_outcome(
    make: Factory, clock: Clock
) -> None:
    a, b = worker(make, clock), worker(make, clock)
    failures = [rate_limited(2000)]
    numbers: list[int] = []
    for attempt in retrying(clock, a):
        with attempt:
            numbers.append(attempt.number)
            if failures:
                raise failures.pop()
    assert numbers == [1, 2]
    assert clock.slept == [2.0]  # the gate waited the hint; the loop did not wait it again
    b.after_failure(rate_limited(30_000).detail, GO)  # now quiet for 30 s, for everyone
    entered: list[int] = []

    def blocked() -> None:
        for attempt in retrying(clock, worker(make, clock, max_wait_ms=0)):
            with attempt:
                entered.append(attempt.number)

    detail = refusal(blocked)
    assert entered == []  # refused before the block ran: no call spent
    assert (detail.code, detail.retry_after_ms) == ("provider_rate_limited", 30_000)
    assert detail.details["cooldown"] == "quiet"


def test_the_async_block_form_and_stream_consult_the_gate(make: Factory, clock: Clock) -> None:
    a = worker(make, clock)

    async def asleep(seconds: float) -> None:
        clock.sleep(seconds)

    async def block() -> list[int]:
        failures = [rate_limited(2000)]
        numbers: list[int] = []
        async for attempt in retrying(clock, a, asleep=asleep):
            with attempt:
                numbers.append(attempt.number)
                if failures:
                    raise failures.pop()
        return numbers

    assert asyncio.run(block()) == [1, 2]
    assert clock.slept == [2.0]
    opened: list[int] = []

    async def items() -> Any:
        opened.append(1)
        if len(opened) == 1:
            raise rate_limited(1500)
        yield "x"

    async def relay(cooldowns: rc.fleet.Cooldowns) -> list[object]:
        stream = retrying(clock, cooldowns, asleep=asleep).stream(items, on_error=lambda d: d)
        return [item async for item in stream]

    streams = a.key("streams")  # a key of its own: the block's pace is not in the way
    assert asyncio.run(relay(streams)) == ["x"]
    assert (opened, clock.slept) == ([1, 1], [2.0, 1.5])
    streams.after_failure(rate_limited(30_000).detail, GO)
    [detail] = asyncio.run(relay(worker(make, clock, max_wait_ms=0).key("streams")))
    assert isinstance(detail, rc.ErrorDetail)
    assert (detail.code, detail.retry_after_ms, len(opened)) == ("provider_rate_limited", 30_000, 2)


# --- a store that fails ---------------------------------------------------------------------


def store_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage().split(" (")[0] for r in caplog.records if r.name == "recoverable.cooldowns"
    ]


class BrokenStore:
    def get(self, key: str) -> str | None:
        raise ConnectionError("store down")

    def update(self, key: str, change: Any, ttl_s: float) -> Any:
        raise ConnectionError("store down")

    def close(self) -> None:
        raise ConnectionError("store down")


def test_a_failing_store_degrades_to_local_state_with_a_warning(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="recoverable.cooldowns")
    cooldowns = rc.fleet.Cooldowns(FallibleStore(BrokenStore(), name="broken"), clock=clock)
    fn = failing(rate_limited(300))
    assert retrying(clock, cooldowns).call(fn) == "ok"
    assert clock.slept == [0.3]  # the quiet time still held, locally
    assert store_warnings(caplog) == ["the broken cooldown store failed"]
    cooldowns.close()  # no raise


def test_redis_down_never_blocks_or_crashes_a_call(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="recoverable.cooldowns")
    cooldowns = rc.fleet.Cooldowns.redis(f"redis://127.0.0.1:{free_port()}/0").key(source="openai")
    fn = failing(rate_limited(1))
    assert rc.retry(cooldowns=cooldowns).call(fn) == "ok"
    assert fn.calls == [1, 1]  # type: ignore[attr-defined]
    # Once: then it uses local state for a while, quietly.
    assert store_warnings(caplog) == ["the redis cooldown store failed"]
    cooldowns.close()


def test_redis_stopped_mid_run_degrades(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with redis_server(tmp_path) as url:
        cooldowns = rc.fleet.Cooldowns.redis(url).key(source="openai")
        assert rc.retry(cooldowns=cooldowns).call(failing()) == "ok"
    assert rc.retry(cooldowns=cooldowns).call(failing(rate_limited(1))) == "ok"
    assert "the redis cooldown store failed" in caplog.text
    cooldowns.close()


def test_the_memory_store_forgets_expired_keys() -> None:
    store = MemoryStore()
    store.update("k", lambda old: ("v", None), 0.0)
    assert store.get("k") is None


def test_memory_cooldowns_load_neither_sqlite_nor_redis() -> None:
    code = (
        "import sys, recoverable as rc\n"
        "rc.retry(cooldowns=rc.fleet.Cooldowns.memory().key(source='openai')).call(lambda: 1)\n"
        "print(sorted(m for m in ('sqlite3', 'redis') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_a_pace_that_ran_dry_early_slows_to_the_servers_interval(
    make: Factory, clock: Clock
) -> None:
    """A bucket refilling every 50 ms: a first hint of 33 ms paces too fast; the 429 that
    follows (17 ms early after 34 ms of pace) gives the interval: 33 * (34 + 17) / 34."""
    a = worker(make, clock)
    a.after_failure(rate_limited(33).detail, GO)
    assert a.state().spacing == pytest.approx(0.033)
    clock.now += 0.067  # the anchor (33 ms) and an interval later: it ran dry again
    a.after_failure(rate_limited(17).detail, GO)
    assert a.state().spacing == pytest.approx(0.033 * (0.034 + 0.017) / 0.034)
    # A late 429 for a call sent before the new anchor does not change the pace.
    a.after_failure(rate_limited(5).detail, GO)
    assert a.state().spacing == pytest.approx(0.0495)
    # Nor does one less than an interval after it (dividing by a tiny elapsed would stall).
    clock.now += 0.017 + 0.03
    a.after_failure(rate_limited(40).detail, GO)
    assert a.state().spacing == pytest.approx(0.0495)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    source=st.text(max_size=300), model=st.text(max_size=30), credential=st.text(max_size=60),
    task=st.text(max_size=300),
)  # fmt: skip
def test_any_text_makes_a_working_key(
    make: Factory,
    clock: Clock,
    source: str,
    model: str,
    credential: str,
    task: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cooldowns = make(clock=clock).key(source=source, model=model, credential=credential)
    fn = failing(rate_limited(10))
    budget = cooldowns.task(uuid.uuid4().hex + task, max_attempts=5)  # a new task each time
    assert retrying(clock, budget).call(fn) == "ok"
    assert "cooldown store failed" not in caplog.text  # the shared store took it
    assert credential_hash(credential) in cooldowns.scope


def test_a_key_part_must_be_text() -> None:
    with pytest.raises(TypeError, match="must be a string"):
        rc.fleet.Cooldowns.memory().key(source=42)  # type: ignore[arg-type]


def test_a_wait_the_gate_does_is_logged_as_the_gates(
    make: Factory, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    # The 429's 30 s hint is the key's quiet time: the next gate waits it, or (past
    # max_wait_ms) fails at once; the log says so instead of "retrying in 30.000 s".
    key = worker(make, clock, max_wait_ms=0)
    with caplog.at_level(logging.WARNING, logger="recoverable.retry"):
        refused = refusal(lambda: retrying(clock, key).call(failing(rate_limited(30_000))))
    assert (refused.code, refused.details["cooldown"]) == ("provider_rate_limited", "quiet")
    lines = [r.getMessage() for r in caplog.records if r.name == "recoverable.retry"]
    assert lines[0] == (
        "attempt 1 failed with provider_rate_limited; the next attempt waits the key's shared"
        " quiet time (hint 30.000 s), or fails at once if that is longer than its max_wait_ms"
    )
    assert clock.slept == []

"""What a store holds cannot stop the fleet: a value written by a peer, a corruption or a
writer whose clock runs ahead is read bounded by this process's own policy from its own
clock, on the memory, SQLite and Redis stores alike. No stored value makes a call raise or
wait past the policy; one that no policy of ours could have written reads as no state and is
noted once."""

from __future__ import annotations

import json
import logging
import math
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable.fleet._rules import CLOCK_SKEW_S, GO, FleetPolicy, KeyState

from ..support.retry import Clock, failing
from .support import Factory, rate_limited, refusal, retrying, worker

NOW = 1_800_000_000.0


def _state(until: object, *, stop: bool = False, code: str = "provider_rate_limited") -> str:
    """A stored key state with `until` spelt as given (the JSON text a peer could write)."""
    spelt = until if isinstance(until, str) else json.dumps(until)
    rest = json.dumps([code, stop, 0.0, 0.0, 0.0, [], 0.0, "", 0.0, 0.0, NOW])
    return f"[{spelt},{rest[1:]}"


def _store(cooldowns: rc.fleet.Cooldowns, name: str, text: str) -> None:
    cooldowns.store.update(name, lambda old: (text, None), 3600.0)


FORGED = {
    "1e306": _state("1e306"),
    "a 400-digit integer": _state("9" * 400),
    "1e400 (infinity)": _state("1e400"),
    "NaN": _state("NaN"),
    "Infinity": _state("Infinity"),
    "a billion seconds ahead": _state(NOW + 1e9),
    "a billion seconds ahead, as a stop": _state(NOW + 1e9, stop=True),
    "negative": _state(-1e300),
    "a string for a time": _state('"tomorrow"'),
    "a 400-digit integer in the breaker's failures": _state(0.0).replace(
        "[]", "[" + "9" * 400 + "]"
    ),
    "nested a thousand deep": "[" * 1000 + "]" * 1000,
    "not JSON": "{{{",
    "an object": '{"until": 1e306}',
    "too few fields": "[1e306]",
    "a forged code": _state(NOW + 30, code="<script>alert(1)</script>"),
}


@pytest.mark.parametrize("text", FORGED.values(), ids=FORGED.keys())
def test_no_stored_value_makes_a_call_raise_or_wait(make: Factory, clock: Clock, text: str) -> None:
    clock.now = NOW
    key = worker(make, clock)
    _store(key, "key:" + key.scope, text)
    call = failing()
    assert retrying(clock, key).call(call) == "ok"
    assert call.calls == [1]  # type: ignore[attr-defined]
    waited = sum(clock.slept)
    assert waited <= FleetPolicy().max_quiet_s  # a forged code's 30 s is the only wait allowed
    assert key.before_call(60_000).refused == ""
    assert 0 <= key.quiet_ms() <= FleetPolicy().max_quiet_s * 1000
    assert key.circuit() == "closed"


@pytest.mark.parametrize(
    "text",
    ['["9' + "9" * 400 + '", 0]', "[" + "9" * 400 + ", 1e306]", "[1, 1e400]", "[-5, -1]", "[[[[",
     "[1, NaN]", '[true, "x"]'],
)  # fmt: skip
def test_no_stored_usage_makes_a_task_raise(make: Factory, clock: Clock, text: str) -> None:
    task = make(clock=clock).task("job-1", max_attempts=3)
    _store(task, "task:job-1", text)
    usage = task.usage()
    assert 0 <= usage.attempts <= 2**53
    assert math.isfinite(usage.cost_usd)
    assert usage.cost_usd >= 0
    assert retrying(clock, task).call(failing()) == "ok"


def test_a_writer_an_hour_ahead_quiets_the_key_for_its_hint_only(
    make: Factory, clock: Clock
) -> None:
    ahead = Clock(clock.now + 3600)  # a worker whose clock runs an hour fast
    worker(make, ahead).after_failure(rate_limited(2000).detail, GO)
    reader = worker(make, clock)
    assert reader.quiet_ms() == 2000  # its 2 s hint, not an hour and 2 s
    assert retrying(clock, reader).call(failing()) == "ok"
    assert clock.slept == [2.0]


def test_a_quota_stop_within_the_policy_is_still_honoured(make: Factory, clock: Clock) -> None:
    stopper = worker(make, clock)
    stopper.after_failure(rc.classify(rc.RecoverableError("provider_quota_exceeded")), GO)
    reader = worker(make, clock)
    stopped = refusal(lambda: reader.before_call(60_000))
    assert (stopped.code, stopped.details["cooldown"]) == ("provider_quota_exceeded", "stop")
    assert reader.quiet_ms() == 3_600_000


def test_a_value_read_as_none_is_noted_once(
    make: Factory, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    clock.now = NOW
    key = make(clock=clock).key(source="openai", model="gpt-4o", credential=uuid.uuid4().hex)
    _store(key, "key:" + key.scope, _state(NOW + 3e9))
    with caplog.at_level(logging.WARNING, logger="recoverable.cooldowns"):
        for _ in range(3):
            key.before_call(60_000)
    notes = [r.getMessage() for r in caplog.records if "read as none" in r.getMessage()]
    assert len(notes) == 1
    assert "until is 3e+09 s ahead, past this policy's 3600 s" in notes[0]


_NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999"]),
)


@settings(max_examples=300, deadline=None)
@given(
    numbers=st.lists(_NUMBER, min_size=11, max_size=11),
    stop=st.booleans(),
    skew=st.floats(min_value=-1e6, max_value=1e6),
)
def test_any_stored_state_reads_bounded_by_the_policy(
    numbers: list[object], stop: bool, skew: float
) -> None:
    until, spacing, slot, pace, opened, probe, anchor, written, *fails = numbers
    fields = [until, "provider_rate_limited", stop, spacing, slot, pace, fails, opened, "",
              probe, anchor, written]  # fmt: skip
    text = json.dumps(fields).replace('"NaN"', "NaN").replace('"Infinity"', "Infinity")
    text = text.replace('"-Infinity"', "-Infinity").replace('"1e999"', "1e999")
    now = NOW + skew
    policy = FleetPolicy()
    state, _ = KeyState.read(text, now, policy)
    horizon = now + CLOCK_SKEW_S + max(policy.quota_stop_s, policy.max_quiet_s) + 60
    for at in (state.until, state.next_slot, state.pace_until, state.open_until,
               state.probe_until, *state.failures):  # fmt: skip
        assert math.isfinite(at)
        assert 0 <= at <= horizon
    assert 0 <= state.spacing <= policy.max_spacing_s + CLOCK_SKEW_S

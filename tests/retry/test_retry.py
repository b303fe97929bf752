"""retry / fallback / adapters, with injected sleep and clock (no wall-time assertions)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import stamina
import tenacity

import recoverable as rc

from ..support.retry import Clock, failing


def retrying(clock: Clock, **options: Any) -> rc.Retrying:
    options.setdefault("rng", lambda: 1.0)  # jitter at its ceiling: deterministic
    return rc.retry(sleep=clock.sleep, asleep=clock.asleep, clock=clock, **options)


def rate() -> rc.RecoverableError:
    return rc.RecoverableError("provider_rate_limited", "slow", retry_after_ms=200)


def quota() -> rc.RecoverableError:
    return rc.RecoverableError("provider_quota_exceeded", "no credit")


def bad() -> rc.RecoverableError:
    return rc.RecoverableError("provider_invalid_request", "bad field")


def test_policy_defaults_are_three_retries_one_two_four_seconds() -> None:
    policy = rc.RetryPolicy(jitter=False)
    assert policy.attempts == 4
    assert [policy.backoff(n) for n in (1, 2, 3)] == [1.0, 2.0, 4.0]
    assert rc.RetryPolicy().backoff(3, lambda: 0.5) == 2.0  # full jitter scales the ceiling
    assert rc.RetryPolicy(max_delay=3, jitter=False).backoff(5) == 3


@pytest.mark.parametrize("bad", [{"attempts": 0}, {"initial_delay": -1}, {"backoff_factor": 0.5}])
def test_policy_rejects_nonsense(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must"):
        rc.RetryPolicy(**bad)  # type: ignore[arg-type]


def test_success_first_time_never_waits() -> None:
    clock = Clock()
    fn = failing()
    assert retrying(clock).call(fn) == "ok"
    assert (len(fn.calls), clock.slept) == (1, [])  # type: ignore[attr-defined]


def test_transient_failures_back_off_exponentially() -> None:
    clock = Clock()
    fn = failing(ConnectionResetError(), ConnectionResetError())
    assert retrying(clock).call(fn) == "ok"
    assert clock.slept == [1.0, 2.0]


def test_the_server_hint_is_waited_instead_of_the_backoff() -> None:
    clock = Clock()
    fn = failing(rate())
    assert retrying(clock).call(fn) == "ok"
    assert clock.slept == [0.2]


def test_a_non_retryable_failure_is_raised_as_is_at_once() -> None:
    clock = Clock()
    error = quota()
    fn = failing(error)
    with pytest.raises(rc.RecoverableError) as info:
        retrying(clock).call(fn)
    assert info.value is error
    assert (len(fn.calls), clock.slept) == (1, [])  # type: ignore[attr-defined]


def test_exhaustion_is_not_retryable_and_keeps_the_cause() -> None:
    clock = Clock()
    original = ConnectionResetError(104, "reset")
    fn = failing(*[original] * 10)
    gave_up: list[tuple[str, int]] = []
    with pytest.raises(rc.RecoverableError) as info:
        retrying(clock, on_give_up=lambda d, n: gave_up.append((d.code, n))).call(fn)
    detail = info.value.detail
    assert (detail.code, detail.retryable, detail.retry_after_ms) == ("network_error", False, None)
    assert detail.details == {"attempts": 4, "retries_exhausted": True, "gave_up": "attempts"}
    assert info.value.__cause__ is original
    assert clock.slept == [1.0, 2.0, 4.0]
    assert gave_up == [("network_error", 4)]
    # classify() of the exhausted error agrees: an outer retry layer will not retry again.
    assert rc.classify(info.value).retryable is False


def test_nested_retry_layers_do_not_multiply() -> None:
    clock = Clock()
    fn = failing(*[ConnectionResetError()] * 50)
    inner = retrying(clock, attempts=3)(fn)
    outer = retrying(clock, attempts=3)(inner)
    with pytest.raises(rc.RecoverableError):
        outer()
    assert len(fn.calls) == 3  # type: ignore[attr-defined]


def test_a_retry_after_above_the_cap_gives_up_at_once_keeping_the_hint() -> None:
    clock = Clock()
    hour = rc.RecoverableError("provider_rate_limited", "slow", retry_after_ms=3_600_000)
    with pytest.raises(rc.RecoverableError) as info:
        retrying(clock).call(failing(hour))
    assert clock.slept == []
    assert info.value.detail.details["gave_up"] == "retry_after_too_long"
    assert info.value.detail.details["server_retry_after_ms"] == 3_600_000


def test_the_deadline_stops_before_a_wait_that_would_cross_it() -> None:
    clock = Clock()
    fn = failing(*[ConnectionResetError()] * 10)
    with pytest.raises(rc.RecoverableError) as info:
        retrying(clock, deadline=2.5).call(fn)
    assert clock.slept == [1.0]  # 1 s, then 2 s more would end at 3 s > 2.5 s
    assert info.value.detail.details["gave_up"] == "deadline"


def test_the_decorator_counts_the_deadline_from_the_first_attempt() -> None:
    clock = Clock()
    calls: list[float] = []

    @retrying(clock, attempts=5, deadline=60)
    def slow() -> None:
        calls.append(clock.now)
        clock.now += 50  # each attempt takes 50 s
        raise ConnectionResetError()

    with pytest.raises(rc.RecoverableError) as info:
        slow()
    # Counted from the first call: at 101 s a second wait would cross 60 s, so two attempts
    # (counted from the first failure, as the success path once did, it made three).
    assert (calls, clock.slept) == ([0.0, 51.0], [1.0])
    assert info.value.detail.details["gave_up"] == "deadline"


def test_fallback_needs_a_candidate_whatever_the_container() -> None:
    for empty in ({}, [], ()):
        with pytest.raises(ValueError, match="at least one candidate"):
            rc.fallback(empty)  # type: ignore[arg-type]


def test_hooks_see_each_attempt_and_failure() -> None:
    clock = Clock()
    seen: list[object] = []
    run = retrying(
        clock,
        before_attempt=lambda n: seen.append(("attempt", n)),
        after_failure=lambda d, n, w: seen.append((d.code, n, w)),
    )
    assert run.call(failing(rate())) == "ok"
    assert seen == [("attempt", 1), ("provider_rate_limited", 1, 0.2), ("attempt", 2)]


def test_a_cancel_set_during_the_wait_stops_before_the_next_attempt() -> None:
    cancel = threading.Event()
    fn = failing(*[ConnectionResetError()] * 5)

    def sleep(_: float) -> None:
        cancel.set()  # the caller cancels while we wait

    with pytest.raises(rc.RecoverableError) as info:
        rc.retry(sleep=sleep, cancel=cancel, rng=lambda: 1.0).call(fn)
    assert info.value.detail.code == "run_cancelled"
    assert len(fn.calls) == 1  # type: ignore[attr-defined]


def test_a_real_event_wait_wakes_on_cancel() -> None:
    cancel = threading.Event()
    fn = failing(*[ConnectionResetError()] * 5)
    threading.Timer(0.05, cancel.set).start()
    with pytest.raises(rc.RecoverableError) as info:
        rc.retry(cancel=cancel, initial_delay=600, jitter=False).call(
            fn
        )  # waits 600 s unless woken
    assert info.value.detail.code == "run_cancelled"


def test_the_testing_switch_turns_waits_off() -> None:
    clock = Clock()
    rc.testing.set_testing(True)
    try:
        assert retrying(clock).call(failing(ConnectionResetError(), rate())) == "ok"
    finally:
        rc.testing.set_testing(False)
    assert clock.slept == []


def test_the_decorator_keeps_the_function_and_its_arguments() -> None:
    clock = Clock()
    calls: list[tuple[int, int]] = []

    @retrying(clock)
    def add(a: int, b: int = 0) -> int:
        """Add."""
        calls.append((a, b))
        if len(calls) == 1:
            raise ConnectionResetError()
        return a + b

    assert add(2, b=3) == 5
    assert (add.__name__, add.__doc__, calls) == ("add", "Add.", [(2, 3), (2, 3)])


def test_bare_decorator_form() -> None:
    rc.testing.set_testing(True)
    try:
        fn = failing(ConnectionResetError())
        assert rc.retry(fn)() == "ok"
        assert len(fn.calls) == 2  # type: ignore[attr-defined]
    finally:
        rc.testing.set_testing(False)


def test_block_form() -> None:
    clock = Clock()
    fn = failing(ConnectionResetError(), rate())
    results = []
    for attempt in retrying(clock):
        with attempt:
            results.append(fn())
    assert (results, clock.slept) == (["ok"], [1.0, 0.2])


def test_block_form_re_raises_what_cannot_be_retried() -> None:
    clock = Clock()
    error = bad()

    def block() -> None:
        for attempt in retrying(clock):
            with attempt:
                raise error

    with pytest.raises(rc.RecoverableError) as info:
        block()
    assert info.value is error


# --- async --------------------------------------------------------------------------------


async def test_async_decorator_and_call_forms() -> None:
    clock = Clock()
    calls: list[int] = []

    @retrying(clock)
    async def fetch() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise rate()
        return "ok"

    assert await fetch() == "ok"
    assert clock.slept == [0.2, 0.2]

    async def once() -> str:
        return "direct"

    assert await retrying(clock).acall(once) == "direct"


async def test_async_block_form() -> None:
    clock = Clock()
    fn = failing(ConnectionResetError())
    async for attempt in retrying(clock):
        with attempt:
            value = fn()
    assert (value, clock.slept) == ("ok", [1.0])


async def test_a_task_cancel_is_never_retried() -> None:
    calls: list[int] = []

    @rc.retry
    async def slow() -> None:
        calls.append(1)
        await asyncio.sleep(10)

    task = asyncio.create_task(slow())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert calls == [1]


async def test_a_cancel_during_the_backoff_wait_stops_the_retry() -> None:
    calls: list[int] = []

    @rc.retry(initial_delay=600, jitter=False)
    async def flaky() -> None:
        calls.append(1)
        raise ConnectionResetError()

    task = asyncio.create_task(flaky())
    await asyncio.sleep(0.05)  # now waiting 600 s before attempt 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert calls == [1]


# --- streams: one error event, only when terminal -----------------------------------------


def _stream_factory(plan: list[list[object]]) -> Callable[[], AsyncIterator[object]]:
    """Each call streams the next plan: items, ending in an exception to raise (if any)."""
    attempts = iter(plan)

    async def open_stream() -> AsyncIterator[object]:
        for item in next(attempts):
            if isinstance(item, BaseException):
                raise item
            yield item

    return open_stream


async def test_a_retried_stream_emits_no_error_event() -> None:
    clock = Clock()
    opener = _stream_factory([[rate()], [rate()], ["a", "b"]])
    items = [i async for i in retrying(clock).stream(opener, on_error=lambda d: ("error", d.code))]
    assert items == ["a", "b"]


async def test_a_terminal_stream_failure_emits_exactly_one_error_event() -> None:
    clock = Clock()
    opener = _stream_factory([[rate()], [rate()], [quota()]])
    items = [i async for i in retrying(clock).stream(opener, on_error=lambda d: ("error", d.code))]
    assert items == [("error", "provider_quota_exceeded")]


async def test_a_stream_that_already_produced_output_is_not_retried() -> None:
    clock = Clock()
    opener = _stream_factory([["a", ConnectionResetError()], ["never"]])
    items = [i async for i in retrying(clock).stream(opener, on_error=lambda d: ("error", d.code))]
    assert items == ["a", ("error", "network_error")]
    reset = rc.RecoverableError("network_error", "reset", details={"request_id": "req_5"})
    with pytest.raises(rc.RecoverableError) as info:
        async for _ in retrying(clock).stream(_stream_factory([["a", reset]])):
            pass
    # Stopped for good (an outer retry must not replay the output), its own details kept.
    assert (info.value.code, info.value.retryable) == ("network_error", False)
    assert info.value.detail.details == {
        "request_id": "req_5", "attempts": 1, "retries_exhausted": True, "output_started": True,
    }  # fmt: skip


# --- fallback ------------------------------------------------------------------------------


def test_fallback_moves_on_when_another_provider_could_succeed() -> None:
    first, second = failing(quota()), failing(result="from second")
    answer = rc.fallback([("openai", first), ("anthropic", second)])
    assert (answer.value, answer.name, answer.index) == ("from second", "anthropic", 1)
    assert [d.code for d in answer.failures] == ["provider_quota_exceeded"]
    assert answer.failures[0].details["candidate"] == "openai"


def test_fallback_stops_on_what_no_provider_can_fix() -> None:
    second = failing(result="never")
    error = bad()
    with pytest.raises(rc.RecoverableError) as info:
        rc.fallback({"openai": failing(error), "anthropic": second})
    assert info.value is error
    assert second.calls == []  # type: ignore[attr-defined]


def test_fallback_after_the_candidates_retries() -> None:
    clock = Clock()
    first = failing(*[rate() for _ in range(10)])
    answer = rc.fallback([first, failing(result="b")], retry=retrying(clock, attempts=3))
    assert (answer.index, len(first.calls), clock.slept) == (1, 3, [0.2, 0.2])  # type: ignore[attr-defined]
    assert answer.failures[0].details["gave_up"] == "attempts"


def test_a_long_retry_after_falls_back_at_once() -> None:
    clock = Clock()
    hour = rc.RecoverableError("provider_rate_limited", "slow", retry_after_ms=3_600_000)
    first = failing(hour)
    answer = rc.fallback([first, failing(result="b")], retry=retrying(clock))
    assert (answer.index, len(first.calls), clock.slept) == (1, 1, [])  # type: ignore[attr-defined]


def test_total_failure_holds_every_attempt_in_its_cause_chain() -> None:
    with pytest.raises(rc.RecoverableError) as info:
        rc.fallback({"a": failing(quota()), "b": failing(rate()), "c": failing(quota())})
    detail = info.value.detail
    assert detail.code == "provider_quota_exceeded"
    assert detail.retryable is False
    assert detail.message == (
        "every candidate failed (a: provider_quota_exceeded, b: provider_rate_limited, "
        "c: provider_quota_exceeded)"
    )
    chain, node = [], detail.cause
    while isinstance(node, rc.ErrorDetail):
        chain.append((node.details["candidate"], node.code))
        node = node.cause
    assert chain == [
        ("c", "provider_quota_exceeded"),
        ("b", "provider_rate_limited"),
        ("a", "provider_quota_exceeded"),
    ]


async def test_async_fallback() -> None:
    async def down() -> str:
        raise rc.RecoverableError("provider_overloaded", "busy")

    async def up() -> str:
        return "up"

    answer = await rc.afallback([down, up])
    assert (answer.value, answer.name) == ("up", "up")


# --- keep your retry library ----------------------------------------------------------------


def test_tenacity_obeys_the_classification_and_the_server_hint() -> None:
    sleeps: list[float] = []
    fn = failing(rate(), ConnectionResetError())
    wrapped = tenacity.retry(
        retry=rc.adapters.retry_if_retryable,
        wait=rc.adapters.wait_retry_after(tenacity.wait_fixed(3)),
        stop=tenacity.stop_after_attempt(5),
        sleep=sleeps.append,
    )(fn)
    assert wrapped() == "ok"
    assert sleeps == [0.2, 3]
    quota_calls = failing(quota())
    with pytest.raises(rc.RecoverableError):  # tenacity re-raises what it will not retry
        tenacity.retry(retry=rc.adapters.retry_if_retryable, sleep=sleeps.append)(quota_calls)()
    assert len(quota_calls.calls) == 1  # type: ignore[attr-defined]


def test_stamina_obeys_the_classification_and_the_server_hint() -> None:
    assert rc.adapters.stamina_on(rate()) == 0.2
    assert rc.adapters.stamina_on(ConnectionResetError()) is True
    assert rc.adapters.stamina_on(quota()) is False
    hour = rc.RecoverableError("provider_rate_limited", "slow", retry_after_ms=3_600_000)
    assert rc.adapters.stamina_on(hour) is False
    stamina.set_testing(True, attempts=3)
    try:
        fn = failing(rate(), rate())
        assert stamina.retry(on=rc.adapters.stamina_on, attempts=3)(fn)() == "ok"
        assert len(fn.calls) == 3  # type: ignore[attr-defined]
        no_credit = failing(quota())
        with pytest.raises(rc.RecoverableError):
            stamina.retry(on=rc.adapters.stamina_on, attempts=3)(no_credit)()
        assert len(no_credit.calls) == 1  # type: ignore[attr-defined]
    finally:
        stamina.set_testing(False)


async def test_every_form_calls_the_attempt_hook_before_each_attempt() -> None:
    clock = Clock()
    seen: list[int] = []
    run = retrying(clock, before_attempt=seen.append, after_failure=None)
    opener = _stream_factory([[rate()], [rate()], ["done"]])
    assert [i async for i in run.stream(opener)] == ["done"]
    assert seen == [1, 2, 3]
    seen.clear()
    for attempt in run:
        with attempt:
            if attempt.number < 2:
                raise ConnectionResetError()
    assert seen == [1, 2]

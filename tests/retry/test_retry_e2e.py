"""retry and fallback with real SDK clients (their own retries off) against FakeProvider.

Waits go through an injected sleep, so timing is asserted on what was asked, not wall time.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anthropic
import openai
import pytest

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

MESSAGES: Any = [{"role": "user", "content": "hi"}]


def ask_openai(fake: FakeProvider) -> str:
    client = openai.OpenAI(api_key="sk-test", base_url=fake.openai_url, max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    return str(reply.choices[0].message.content)


def ask_anthropic(fake: FakeProvider) -> str:
    client = anthropic.Anthropic(api_key="sk-ant", base_url=fake.url, max_retries=0)
    reply = client.messages.create(model="claude-opus-4-8", max_tokens=64, messages=MESSAGES)
    return str(reply.content[0].text)  # type: ignore[union-attr]


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(round(seconds, 3))


def test_a_429_with_retry_after_waits_that_long_then_succeeds(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=0.2), times=1)
    sleeps = Sleeps()
    answer = rc.retry(sleep=sleeps).call(ask_openai, fake)
    assert answer == "Hello from FakeProvider."
    assert sleeps == [0.2]  # the server's hint, not the 1 s backoff
    assert [r.fault for r in fake.requests] == ["rate_limited", None]


def test_529_twice_then_success(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded(), times=2)
    sleeps = Sleeps()
    answer = rc.retry(sleep=sleeps, rng=lambda: 1.0).call(ask_anthropic, fake)
    assert answer == "Hello from FakeProvider."
    assert sleeps == [1.0, 2.0]
    assert [r.fault for r in fake.requests] == ["overloaded", "overloaded", None]


def test_a_quota_429_is_not_retried_and_the_fallback_answers(fake: FakeProvider) -> None:
    fake.fail(Fault.insufficient_quota(), times=1)
    sleeps = Sleeps()
    answer = rc.fallback(
        {"openai": ask_openai, "anthropic": ask_anthropic}, fake, retry=rc.retry(sleep=sleeps)
    )
    assert (answer.name, answer.value) == ("anthropic", "Hello from FakeProvider.")
    assert [d.code for d in answer.failures] == ["provider_quota_exceeded"]
    assert sleeps == []
    assert [(r.api, r.fault) for r in fake.requests] == [
        ("openai_chat", "insufficient_quota"), ("anthropic", None),
    ]  # fmt: skip


def test_an_hour_long_retry_after_falls_back_at_once(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=3600), times=1)
    sleeps = Sleeps()
    answer = rc.fallback([ask_openai, ask_anthropic], fake, retry=rc.retry(sleep=sleeps))
    assert answer.name == "ask_anthropic"
    assert sleeps == []
    failure = answer.failures[0]
    assert failure.details["gave_up"] == "retry_after_too_long"
    assert failure.details["server_retry_after_ms"] == 3_600_000
    assert len(fake.requests) == 2


def test_a_bad_request_stops_the_fallback(fake: FakeProvider) -> None:
    fake.fail(Fault.status(400, {"error": {"message": "bad field", "type": "invalid_request_error",
                                           "param": "x", "code": None}}))  # fmt: skip
    with pytest.raises(rc.RecoverableError) as stopped:
        rc.fallback([ask_openai, ask_anthropic], fake)
    assert (stopped.value.code, stopped.value.details["candidate"]) == (
        "provider_invalid_request",
        "ask_openai",
    )
    assert isinstance(stopped.value.__cause__, openai.BadRequestError)  # the original, reachable
    assert len(fake.requests) == 1


def test_a_cancel_during_the_wait_sends_no_further_request(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded(), times=None)
    cancel = threading.Event()

    def sleep(_: float) -> None:
        cancel.set()  # the user cancels while we wait

    with pytest.raises(rc.RecoverableError) as info:
        rc.retry(sleep=sleep, cancel=cancel).call(ask_anthropic, fake)
    assert info.value.code == "run_cancelled"
    assert len(fake.requests) == 1


async def test_a_task_cancel_during_the_wait_sends_no_further_request(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded(), times=None)
    client = anthropic.AsyncAnthropic(api_key="sk-ant", base_url=fake.url, max_retries=0)

    @rc.retry(initial_delay=30, jitter=False)
    async def ask() -> object:
        return await client.messages.create(model="claude-opus-4-8", max_tokens=64,
                                            messages=MESSAGES)  # fmt: skip

    task = asyncio.create_task(ask())
    for _ in range(200):  # until the first request has been answered
        await asyncio.sleep(0.01)
        if fake.requests:
            break
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.1)
    assert len(fake.requests) == 1


def test_exhaustion_is_final_and_keeps_the_whole_chain(fake: FakeProvider) -> None:
    fake.fail(Fault.server_error(), times=None)
    sleeps = Sleeps()
    with pytest.raises(rc.RecoverableError) as info:
        rc.retry(attempts=3, sleep=sleeps).call(ask_openai, fake)
    detail = info.value.detail
    assert (detail.code, detail.retryable, detail.status, detail.source) == (
        "provider_server_error", False, 500, "openai",
    )  # fmt: skip
    assert detail.details["attempts"] == 3
    assert isinstance(info.value.__cause__, openai.InternalServerError)
    assert len(fake.requests) == 3
    # the exhausted error tells any outer layer: do not retry
    assert rc.classify(info.value).retryable is False


def test_total_failure_of_every_provider(fake: FakeProvider) -> None:
    fake.fail(Fault.unauthorized(), times=None)
    with pytest.raises(rc.RecoverableError) as info:
        rc.fallback([ask_openai, ask_anthropic], fake)
    detail = info.value.detail
    assert detail.code == "provider_auth_failed"
    assert isinstance(detail.cause, rc.ErrorDetail)
    assert detail.cause.details["candidate"] == "ask_anthropic"
    assert isinstance(detail.cause.cause, rc.ErrorDetail)
    assert detail.cause.cause.details["candidate"] == "ask_openai"


# -- one rule for what a retry raises: a RecoverableError, the SDK's exception its cause --------


def test_a_failure_not_worth_repeating_stops_as_a_recoverable_error(fake: FakeProvider) -> None:
    fake.fail(Fault.insufficient_quota(), times=1)
    with pytest.raises(rc.RecoverableError) as stopped:
        rc.retry(sleep=Sleeps()).call(ask_openai, fake)
    assert (stopped.value.code, stopped.value.retryable) == ("provider_quota_exceeded", False)
    assert type(stopped.value.__cause__) is openai.RateLimitError
    assert len(fake.requests) == 1


def test_a_spent_budget_stops_as_a_recoverable_error_too(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded(), times=None)
    with pytest.raises(rc.RecoverableError) as stopped:
        rc.retry(attempts=2, sleep=Sleeps()).call(ask_anthropic, fake)
    assert (stopped.value.code, stopped.value.retryable) == ("provider_overloaded", False)
    assert stopped.value.details["retries_exhausted"] is True
    assert isinstance(stopped.value.__cause__, anthropic.APIStatusError)
    assert len(fake.requests) == 2


async def test_the_async_form_and_the_block_raise_the_same(fake: FakeProvider) -> None:
    async def ask(fake: FakeProvider) -> str:
        client = openai.AsyncOpenAI(api_key="sk-test", base_url=fake.openai_url, max_retries=0)
        reply = await client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
        return str(reply.choices[0].message.content)

    fake.fail(Fault.status(401, {"error": {"message": "bad key", "type": "invalid_request_error",
                                           "code": "invalid_api_key"}}), times=2)  # fmt: skip
    with pytest.raises(rc.RecoverableError) as stopped:
        await rc.retry(sleep=Sleeps()).acall(ask, fake)
    assert stopped.value.code == "provider_auth_failed"
    assert type(stopped.value.__cause__) is openai.AuthenticationError
    with pytest.raises(rc.RecoverableError) as blocked:
        _ask_in_a_block(fake)
    assert blocked.value.code == "provider_auth_failed"
    assert len(fake.requests) == 2


def _ask_in_a_block(fake: FakeProvider) -> None:
    for attempt in rc.retry(sleep=Sleeps()):
        with attempt:
            ask_openai(fake)


def test_a_recoverable_error_raised_by_the_call_is_raised_as_it_is() -> None:
    own = rc.RecoverableError("invalid_input", "the prompt is empty")

    def call() -> None:
        raise own

    with pytest.raises(rc.RecoverableError) as stopped:
        rc.retry(sleep=Sleeps()).call(call)
    assert stopped.value is own

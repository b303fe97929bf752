"""Exactly one retry layer by default (principle 12), counted in requests: the real openai and
anthropic clients at their default `max_retries=2` against FakeProvider. The SDK's own
retries stamp each attempt (`x-stainless-retry-count`); `rc.retry` sees that they ran and
retries no further, and says once how to make its own the only layer."""

from __future__ import annotations

import logging
from typing import Any

import anthropic
import openai
import pytest

import recoverable as rc
from recoverable._retry.sdk_retries import sdk_retries
from recoverable.testing import FakeProvider, Fault

MESSAGES: Any = [{"role": "user", "content": "hi"}]


def _openai(fake: FakeProvider, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test", base_url=fake.openai_url, **options)


def _ask(client: openai.OpenAI) -> str:
    reply = client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    return str(reply.choices[0].message.content)


def test_a_default_client_s_retries_are_the_only_layer(
    fake: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    fake.fail(Fault.rate_limited(retry_after_ms=10), times=None)
    client = _openai(fake)  # max_retries=2: the SDK's default
    with (
        caplog.at_level(logging.WARNING, logger="recoverable"),
        pytest.raises(rc.RecoverableError) as stopped,
    ):
        rc.retry(attempts=5, sleep=lambda _: None).call(_ask, client)
    assert len(fake.requests) == 3  # the SDK's 3, not 3 for each of our 5 attempts
    assert stopped.value.code == "provider_rate_limited"
    assert stopped.value.retryable is False  # exhausted: no outer layer retries it again
    assert stopped.value.details["sdk_retries"] == 2
    assert stopped.value.details["gave_up"] == "sdk_retries"
    warned = [r.getMessage() for r in caplog.records if "retried this request" in r.getMessage()]
    assert len(warned) <= 1  # once per process and SDK (another test may have said it already)


def test_with_the_sdk_s_retries_off_ours_is_the_layer(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after_ms=10), times=2)
    client = rc.without_sdk_retries(_openai(fake))
    assert client.max_retries == 0
    sleeps: list[float] = []
    assert rc.retry(attempts=5, sleep=sleeps.append).call(_ask, client) == (
        "Hello from FakeProvider."
    )
    assert len(fake.requests) == 3
    assert sleeps == [0.01, 0.01]  # the server's hint, waited by us


def test_a_quota_costs_one_request_with_the_sdk_s_retries_off(fake: FakeProvider) -> None:
    fake.fail(Fault.insufficient_quota(), times=None)
    with pytest.raises(rc.RecoverableError) as stopped:
        rc.retry(sleep=lambda _: None).call(_ask, rc.without_sdk_retries(_openai(fake)))
    assert (stopped.value.code, len(fake.requests)) == ("provider_quota_exceeded", 1)


def test_anthropic_s_default_retries_are_counted_too(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded(), times=None)
    client = anthropic.Anthropic(api_key="sk-ant", base_url=fake.url)

    def ask() -> object:
        return client.messages.create(model="claude-x", max_tokens=8, messages=MESSAGES)

    with pytest.raises(rc.RecoverableError) as stopped:
        rc.retry(attempts=4, sleep=lambda _: None).call(ask)
    assert (stopped.value.code, stopped.value.details["sdk_retries"]) == (
        "provider_overloaded", 2
    )  # fmt: skip
    assert len(fake.requests) == 3


class _Forged(Exception):
    def __init__(self, request: object) -> None:
        super().__init__("forged")
        self.request = request


class _Raising:
    @property
    def headers(self) -> object:
        raise RuntimeError("boom")


@pytest.mark.parametrize(
    "request_",
    [None, object(), _Raising(), type("R", (), {"headers": {"x-stainless-retry-count": "-1"}})(),
     type("R", (), {"headers": {"x-stainless-retry-count": "9" * 400}})(),
     type("R", (), {"headers": {"x-stainless-retry-count": "two"}})()],
)  # fmt: skip
def test_a_forged_request_counts_no_retries(request_: object) -> None:
    assert sdk_retries(_Forged(request_)) == 0


def test_a_client_without_the_option_is_returned_as_it_is() -> None:
    plain = object()
    assert rc.without_sdk_retries(plain) is plain

"""FakeProvider's rate-limit mode: a token bucket per API key, read by the real SDKs."""

from __future__ import annotations

import anthropic
import openai
import pytest
from google import genai
from google.genai import types as genai_types

import recoverable as rc
from recoverable.testing import FakeProvider, Fault, RateLimit
from recoverable.testing._rate_limit import TokenBuckets, api_key

from ..support.retry import Clock

MESSAGES = [{"role": "user", "content": "hi"}]


def test_the_bucket_refills_one_token_per_interval() -> None:
    clock = Clock(0.0)
    buckets = TokenBuckets(RateLimit(3, per=1.0), clock)
    assert [buckets.take("a") for _ in range(3)] == [None, None, None]
    fault = buckets.take("a")
    assert fault is not None
    assert (fault.name, fault.retry_after_ms, fault.retry_after, fault.retry_delay) == (
        "rate_limited", 334, 1.0, "0.333s",
    )  # fmt: skip
    assert buckets.take("b") is None  # another key has its own bucket
    clock.now += 0.2
    late = buckets.take("a")
    assert late is not None and late.retry_after_ms == 134
    clock.now += 0.14
    assert buckets.take("a") is None
    assert buckets.take("a") is not None
    clock.now += 100
    assert [buckets.take("a") for _ in range(4)][:3] == [None, None, None]  # full, not more


def test_burst_sets_the_bucket_size() -> None:
    clock = Clock(0.0)
    buckets = TokenBuckets(RateLimit(10, per=1.0, burst=1), clock)
    assert buckets.take("k") is None
    fault = buckets.take("k")
    assert fault is not None and fault.retry_after_ms == 100


@pytest.mark.parametrize(
    "bad",
    [
        {"requests": 0}, {"requests": 1.5}, {"requests": True}, {"requests": 1, "per": 0},
        {"requests": 1, "per": float("nan")}, {"requests": 1, "per": float("inf")},
        {"requests": 1, "burst": 0},
    ],
)  # fmt: skip
def test_rate_limit_refuses_what_cannot_work(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="must be"):
        RateLimit(**bad)  # type: ignore[arg-type]


def test_the_key_is_the_credential_header_or_geminis_parameter() -> None:
    assert api_key({"authorization": "Bearer sk-1"}, {}) == "Bearer sk-1"
    assert api_key({"x-api-key": "ant"}, {}) == "ant"
    assert api_key({"x-goog-api-key": "g"}, {"key": "q"}) == "g"
    assert api_key({}, {"key": "q"}) == "q"
    assert api_key({}, {}) == ""


def test_real_sdks_get_a_429_with_the_wait_until_the_next_token(fake: FakeProvider) -> None:
    fake.rate_limit(RateLimit(2, per=60.0))
    client = openai.OpenAI(api_key="sk-one", base_url=fake.openai_url, max_retries=0)
    for _ in range(2):
        client.chat.completions.create(model="gpt-4o", messages=MESSAGES)  # type: ignore[arg-type]
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(model="gpt-4o", messages=MESSAGES)  # type: ignore[arg-type]
    detail = rc.classify(info.value)
    assert (detail.code, detail.retryable) == ("provider_rate_limited", True)
    assert detail.retry_after_ms is not None and 29_000 < detail.retry_after_ms <= 30_000
    # Another key is not limited by the first one's bucket.
    other = openai.OpenAI(api_key="sk-two", base_url=fake.openai_url, max_retries=0)
    other.chat.completions.create(model="gpt-4o", messages=MESSAGES)  # type: ignore[arg-type]
    ant = anthropic.Anthropic(api_key="ant-key", base_url=fake.url, max_retries=0)
    ant.messages.create(model="claude", max_tokens=5, messages=MESSAGES)  # type: ignore[arg-type]
    ant.messages.create(model="claude", max_tokens=5, messages=MESSAGES)  # type: ignore[arg-type]
    with pytest.raises(anthropic.RateLimitError) as ant_info:
        ant.messages.create(model="claude", max_tokens=5, messages=MESSAGES)  # type: ignore[arg-type]
    assert rc.classify(ant_info.value).code == "provider_rate_limited"
    assert [r.fault for r in fake.requests] == [
        None, None, "rate_limited", None, None, None, "rate_limited",
    ]  # fmt: skip


def test_gemini_is_limited_per_key_with_retry_info(fake: FakeProvider) -> None:
    fake.rate_limit(RateLimit(1, per=10.0))
    options = genai_types.HttpOptions(base_url=fake.url, timeout=5000)
    client = genai.Client(api_key="g-key", http_options=options)
    client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    with pytest.raises(Exception) as info:  # noqa: PT011 -- google.genai's ClientError
        client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    detail = rc.classify(info.value)
    assert detail.code == "provider_rate_limited"
    assert detail.retry_after_ms is not None and 9_000 < detail.retry_after_ms <= 10_000


def test_a_queued_fault_comes_first_and_takes_no_token(fake: FakeProvider) -> None:
    fake.rate_limit(RateLimit(1, per=60.0))
    fake.fail(Fault.server_error())
    client = openai.OpenAI(api_key="sk-one", base_url=fake.openai_url, max_retries=0)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    fake.rate_limit(None)
    client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert [r.fault for r in fake.requests] == ["server_error", None, None]
    with pytest.raises(TypeError, match="RateLimit"):
        fake.rate_limit(5)  # type: ignore[arg-type]

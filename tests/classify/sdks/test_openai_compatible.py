"""groq, together, fireworks-ai and cerebras-cloud-sdk: the real SDKs against FakeProvider.

Each SDK is generated like openai's but raises its own classes (`groq.RateLimitError`, ...),
matched by its package. FakeProvider answers OpenAI's Chat Completions (Groq's under
`/openai/v1`, in Groq's wording); each case makes a real request with the SDK's retries off
and asserts the exact classification.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import fireworks
import groq
import pytest
import together
from cerebras.cloud import sdk as cerebras_sdk

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ...support.providers import free_port, raised

MESSAGES: Any = [{"role": "user", "content": "hi"}]
CLIENTS: dict[str, Callable[..., Any]] = {
    "groq": groq.Groq,
    "together": together.Together,
    "fireworks": fireworks.Fireworks,
    "cerebras": cerebras_sdk.Cerebras,
}
SDKS = tuple(CLIENTS)


def _client(sdk: str, base_url: str, timeout: float = 10) -> Any:
    # cerebras-cloud-sdk warms its connection with a request of its own unless told not to.
    extra = {"warm_tcp_connection": False} if sdk == "cerebras" else {}
    return CLIENTS[sdk](api_key="fake-key", base_url=base_url, max_retries=0, timeout=timeout,
                        **extra)  # fmt: skip


def _call(sdk: str, fake: FakeProvider, stream: bool, timeout: float = 10) -> list[Any]:
    client = _client(sdk, fake.url, timeout)
    answer = client.chat.completions.create(model="llama-3.3-70b", messages=MESSAGES,
                                            stream=stream)  # fmt: skip
    return list(answer) if stream else [answer]


# (fault, stream, code, retryable, retry_after_ms, status, error_code)
CASES = [
    (Fault.rate_limited(retry_after=7), False, "provider_rate_limited", True, 7000, 429,
     "rate_limit_exceeded"),
    (Fault.rate_limited(retry_after_ms=1500), True, "provider_rate_limited", True, 1500, 429,
     "rate_limit_exceeded"),
    (Fault.insufficient_quota(), False, "provider_quota_exceeded", False, None, 429,
     "insufficient_quota"),
    (Fault.unauthorized(), False, "provider_auth_failed", False, None, 401, "invalid_api_key"),
    (Fault.forbidden(), False, "provider_permission_denied", False, None, 403, None),
    (Fault.model_not_found(), False, "provider_model_not_found", False, None, 404,
     "model_not_found"),
    (Fault.context_too_long(), False, "provider_context_too_long", False, None, 400,
     "context_length_exceeded"),
    (Fault.content_policy(), False, "provider_content_filtered", False, None, 400,
     "content_policy_violation"),
    (Fault.server_error(), False, "provider_server_error", True, None, 500, None),
    (Fault.unavailable(), False, "provider_overloaded", True, None, 503, None),
    (Fault.overloaded(), True, "provider_overloaded", True, None, 529, None),
    (Fault.drop(), False, "provider_connection_lost", True, None, None, None),
    (Fault.cut_stream(), True, "provider_connection_lost", True, None, None, None),
]  # fmt: skip


@pytest.mark.parametrize("sdk", SDKS)
@pytest.mark.parametrize(
    ("fault", "stream", "code", "retryable", "retry_after_ms", "status", "error_code"),
    CASES,
    ids=[f"{c[0].name}{'-stream' if c[1] else ''}" for c in CASES],
)
def test_the_real_sdk_raises_and_we_read_it(
    fake: FakeProvider,
    sdk: str,
    fault: Fault,
    stream: bool,
    code: str,
    retryable: bool,
    retry_after_ms: int | None,
    status: int | None,
    error_code: str | None,
) -> None:
    fake.fail(fault)
    error = raised(lambda: _call(sdk, fake, stream))
    # The SDK's own class; a stream cut mid-body escapes its iterator as httpx's own error.
    owner = "httpx" if fault.name == "cut_stream" else sdk
    assert type(error).__module__.split(".")[0] == owner
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.retry_after_ms, detail.status,
            detail.source) == (code, retryable, retry_after_ms, status, sdk)  # fmt: skip
    assert detail.details.get("error_code") == error_code
    if status is not None:
        assert detail.details["request_id"] == "req_fake_0001"


def test_groq_words_its_rate_limit_by_what_ran_out(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=3))
    error = raised(lambda: _call("groq", fake, False))
    assert type(error).__qualname__ == "RateLimitError"
    detail = rc.classify(error)
    assert (detail.code, detail.retry_after_ms, detail.details["error_type"]) == (
        "provider_rate_limited", 3000, "tokens",
    )  # fmt: skip
    assert detail.message.startswith("Rate limit reached for model `llama-3.3-70b`")
    assert [r.path for r in fake.requests] == ["/openai/v1/chat/completions"]


@pytest.mark.parametrize("sdk", SDKS)
def test_an_in_stream_error_event(fake: FakeProvider, sdk: str) -> None:
    """groq and together raise their bare APIError, cerebras-cloud-sdk an APIStatusError
    with status 200; fireworks-ai hands the error over as a chunk, which classify_response
    reads: the same code each way."""
    fake.fail(Fault.stream_overloaded())
    try:
        chunks = _call(sdk, fake, True)
    except Exception as error:
        assert sdk != "fireworks"
        raised_class = "APIStatusError" if sdk == "cerebras" else "APIError"
        assert type(error).__name__ == raised_class
        detail = rc.classify(error)
    else:
        assert sdk == "fireworks"
        found = [rc.classify_response(chunk) for chunk in chunks]
        assert found[:-1] == [None] * (len(chunks) - 1)
        detail = found[-1]  # type: ignore[assignment]
    assert (detail.code, detail.retryable, detail.source) == ("provider_overloaded", True, sdk)


@pytest.mark.parametrize("sdk", SDKS)
def test_a_hang_past_the_client_timeout(fake: FakeProvider, sdk: str) -> None:
    fake.fail(Fault.hang(5))
    error = raised(lambda: _call(sdk, fake, False, timeout=0.5))
    assert type(error).__name__ == "APITimeoutError"
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source) == ("provider_timeout", True, sdk)


@pytest.mark.parametrize("sdk", SDKS)
def test_nothing_listening_is_unreachable(sdk: str) -> None:
    client = _client(sdk, f"http://127.0.0.1:{free_port()}")
    error = raised(lambda: client.chat.completions.create(model="m", messages=MESSAGES))
    assert type(error).__name__ == "APIConnectionError"
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source, detail.details["phase"]) == (
        "provider_unreachable", True, sdk, "connect",
    )  # fmt: skip


@pytest.mark.parametrize("sdk", SDKS)
def test_a_normal_answer_reads_as_no_failure(fake: FakeProvider, sdk: str) -> None:
    (answer,) = _call(sdk, fake, False)
    assert answer.choices[0].message.content == "Hello from FakeProvider."
    assert rc.classify_response(answer) is None
    assert [rc.classify_response(chunk) for chunk in _call(sdk, fake, True)] == [None] * 5

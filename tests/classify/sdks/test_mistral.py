"""mistralai: the real SDK against FakeProvider on 127.0.0.1, every fault, streaming and not.

mistralai (Speakeasy-generated, on httpx2) raises one HTTP error class, `SDKError`, with the
status, the body as text and the headers; transport failures escape as httpx2's own errors,
and a stream's error event as a `ResponseValidationError` (the SDK has no class for it).
"""

from __future__ import annotations

from typing import Any

import pytest
from mistralai.client import Mistral

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ...support.providers import SdkCase, check_classified, free_port, raised, sdk_cases

MESSAGES: Any = [{"role": "user", "content": "hi"}]
MODEL = "mistral-large-latest"


def _call(server_url: str, stream: bool, timeout_ms: int = 10_000) -> list[Any]:
    client = Mistral(api_key="fake-key", server_url=server_url, timeout_ms=timeout_ms)
    if stream:
        return list(client.chat.stream(model=MODEL, messages=MESSAGES))
    return [client.chat.complete(model=MODEL, messages=MESSAGES)]


# (fault, stream, class, code, retryable, retry_after_ms, status)
CASES = [
    (Fault.rate_limited(retry_after=6), False, "SDKError", "provider_rate_limited", True, 6000,
     429),
    (Fault.rate_limited(retry_after_ms=800), True, "SDKError", "provider_rate_limited", True, 800,
     429),
    (Fault.insufficient_quota(), False, "SDKError", "provider_quota_exceeded", False, None, 429),
    (Fault.unauthorized(), False, "SDKError", "provider_auth_failed", False, None, 401),
    (Fault.forbidden(), False, "SDKError", "provider_permission_denied", False, None, 403),
    (Fault.model_not_found(), False, "SDKError", "provider_model_not_found", False, None, 404),
    (Fault.context_too_long(), True, "SDKError", "provider_context_too_long", False, None, 400),
    (Fault.content_policy(), False, "SDKError", "provider_content_filtered", False, None, 400),
    (Fault.server_error(), False, "SDKError", "provider_server_error", True, None, 500),
    (Fault.unavailable(), False, "SDKError", "provider_overloaded", True, None, 503),
    (Fault.overloaded(), True, "SDKError", "provider_overloaded", True, None, 529),
    (Fault.stream_overloaded(), True, "ResponseValidationError", "provider_overloaded", True,
     None, None),
    (Fault.drop(), False, "RemoteProtocolError", "provider_connection_lost", True, None, None),
    (Fault.cut_stream(), True, "RemoteProtocolError", "provider_connection_lost", True, None,
     None),
]  # fmt: skip


@pytest.mark.parametrize("case", sdk_cases(CASES))
def test_mistralai_raises_and_we_read_it(fake: FakeProvider, case: SdkCase) -> None:
    fake.fail(case.fault)
    detail = check_classified(raised(lambda: _call(fake.url, case.stream)), case, "mistral")
    if case.status is not None:
        assert detail.details["request_id"] == "req_fake_0001"


def test_a_hang_past_the_client_timeout(fake: FakeProvider) -> None:
    fake.fail(Fault.hang(5))
    error = raised(lambda: _call(fake.url, False, timeout_ms=500))
    assert type(error).__name__ == "ReadTimeout"
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source) == ("provider_timeout", True, "mistral")


def test_nothing_listening_is_unreachable() -> None:
    error = raised(lambda: _call(f"http://127.0.0.1:{free_port()}", False))
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source, detail.details["phase"]) == (
        "provider_unreachable", True, "mistral", "connect",
    )  # fmt: skip


def test_mistral_context_window_wording() -> None:
    body = {"object": "error", "type": "invalid_request_error", "code": "3051", "message": (
        "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 "
        "maximum context length")}  # fmt: skip
    assert rc.from_http(400, None, body, source="mistral").code == "provider_context_too_long"


def test_a_normal_answer(fake: FakeProvider) -> None:
    (answer,) = _call(fake.url, False)
    assert answer.choices[0].message.content == "Hello from FakeProvider."
    assert len(_call(fake.url, True)) == 5

"""huggingface-hub: the real `InferenceClient` against FakeProvider's OpenAI-compatible chat
route (`base_url`), every fault.

It raises `HfHubHTTPError` (or its `BadRequestError`) holding the httpx2 response, body and
headers; a stream's error line as a `TextGenerationError` subclass carrying the error object;
its own `InferenceTimeoutError` on a timeout; httpx2's transport errors pass through it.
"""

from __future__ import annotations

from typing import Any

import pytest
from huggingface_hub import InferenceClient

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ...support.providers import SdkCase, check_classified, free_port, raised, sdk_cases

MESSAGES: Any = [{"role": "user", "content": "hi"}]


def _call(base_url: str, stream: bool, timeout: float = 10) -> list[Any]:
    client = InferenceClient(base_url=base_url, api_key="hf_fake", timeout=timeout)
    answer = client.chat_completion(messages=MESSAGES, model="gpt-4o", stream=stream)
    return list(answer) if stream else [answer]


# (fault, stream, class, code, retryable, retry_after_ms, status)
CASES = [
    (Fault.rate_limited(retry_after=6), False, "HfHubHTTPError", "provider_rate_limited", True,
     6000, 429),
    (Fault.rate_limited(retry_after_ms=900), True, "HfHubHTTPError", "provider_rate_limited",
     True, 900, 429),
    (Fault.insufficient_quota(), False, "HfHubHTTPError", "provider_quota_exceeded", False, None,
     429),
    (Fault.unauthorized(), False, "HfHubHTTPError", "provider_auth_failed", False, None, 401),
    (Fault.forbidden(), False, "HfHubHTTPError", "provider_permission_denied", False, None, 403),
    (Fault.model_not_found(), True, "HfHubHTTPError", "provider_model_not_found", False, None,
     404),
    (Fault.context_too_long(), False, "BadRequestError", "provider_context_too_long", False, None,
     400),
    (Fault.content_policy(), True, "BadRequestError", "provider_content_filtered", False, None,
     400),
    (Fault.server_error(), False, "HfHubHTTPError", "provider_server_error", True, None, 500),
    (Fault.unavailable(), False, "HfHubHTTPError", "provider_overloaded", True, None, 503),
    (Fault.overloaded(), False, "HfHubHTTPError", "provider_overloaded", True, None, 529),
    (Fault.stream_overloaded(), True, "UnknownError", "provider_overloaded", True, None, None),
    (Fault.drop(), False, "RemoteProtocolError", "provider_connection_lost", True, None, None),
    (Fault.cut_stream(), True, "RemoteProtocolError", "provider_connection_lost", True, None,
     None),
]  # fmt: skip


@pytest.mark.parametrize("case", sdk_cases(CASES))
def test_inference_client_raises_and_we_read_it(fake: FakeProvider, case: SdkCase) -> None:
    fake.fail(case.fault)
    check_classified(raised(lambda: _call(fake.openai_url, case.stream)), case, "huggingface")
    assert len(fake.requests) == 1


def test_the_upstream_message_and_request_id_are_kept(fake: FakeProvider) -> None:
    fake.fail(Fault.model_not_found())
    detail = rc.classify(raised(lambda: _call(fake.openai_url, False)))
    assert detail.message.startswith("The model `gpt-4o` does not exist")
    assert detail.details["error_code"] == "model_not_found"


def test_its_own_timeout(fake: FakeProvider) -> None:
    fake.fail(Fault.hang(5))
    error = raised(lambda: _call(fake.openai_url, False, timeout=0.5))
    assert type(error).__name__ == "InferenceTimeoutError"
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source) == ("provider_timeout", True,
                                                              "huggingface")  # fmt: skip


def test_nothing_listening_is_unreachable() -> None:
    error = raised(lambda: _call(f"http://127.0.0.1:{free_port()}/v1", False))
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source) == (
        "provider_unreachable", True, "huggingface")  # fmt: skip


def test_a_text_generation_inference_sentence_in_a_stream() -> None:
    # TGI's own stream error line: `{"error": "...", "error_type": "overloaded"}`.
    from huggingface_hub.errors import OverloadedError, ValidationError

    detail = rc.classify(OverloadedError("Model is overloaded"))
    assert (detail.code, detail.retryable) == ("provider_overloaded", True)
    detail = rc.classify(ValidationError("Input validation error: `inputs` must not be empty"))
    assert (detail.code, detail.retryable, detail.source) == (
        "provider_invalid_request", False, "huggingface")  # fmt: skip

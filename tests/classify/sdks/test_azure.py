"""Azure OpenAI through the openai SDK's `AzureOpenAI`, against FakeProvider's deployment path.

The SDK raises openai's own classes; Azure's bodies differ from OpenAI's (a code that is a
status as text, `DeploymentNotFound`, the content filter's `innererror`), and each case
asserts the exact classification of what the real SDK raised.
"""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ...support.providers import SdkCase, check_classified, free_port, raised, sdk_cases

MESSAGES: Any = [{"role": "user", "content": "hi"}]
DEPLOYMENT = "gpt-4o-prod"
AZURE_RATE = (
    "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21"
    " have exceeded token rate limit of your current OpenAI S0 pricing tier."
)
AZURE_MISSING = "The API deployment for this resource does not exist."


def _client(endpoint: str, timeout: float = 10) -> openai.AzureOpenAI:
    return openai.AzureOpenAI(api_key="fake-azure-key", api_version="2024-10-21",
                              azure_endpoint=endpoint, max_retries=0, timeout=timeout)  # fmt: skip


def _call(fake: FakeProvider, stream: bool, timeout: float = 10) -> list[Any]:
    client = _client(fake.url, timeout)
    if stream:
        return list(client.chat.completions.create(model=DEPLOYMENT, messages=MESSAGES,
                                                   stream=True))  # fmt: skip
    return [client.chat.completions.create(model=DEPLOYMENT, messages=MESSAGES)]


# (fault, stream, class, code, retryable, retry_after_ms, status, error_code)
CASES = [
    (Fault.rate_limited(retry_after=6), False, "RateLimitError", "provider_rate_limited", True,
     6000, 429, "429"),
    (Fault.rate_limited(retry_after_ms=2500), True, "RateLimitError", "provider_rate_limited",
     True, 2500, 429, "429"),
    (Fault.insufficient_quota(), False, "RateLimitError", "provider_quota_exceeded", False, None,
     429, "insufficient_quota"),
    (Fault.unauthorized(), False, "AuthenticationError", "provider_auth_failed", False, None, 401,
     "401"),
    (Fault.forbidden(), False, "PermissionDeniedError", "provider_permission_denied", False, None,
     403, "PermissionDenied"),
    (Fault.model_not_found(), False, "NotFoundError", "provider_model_not_found", False, None,
     404, "DeploymentNotFound"),
    (Fault.context_too_long(), False, "BadRequestError", "provider_context_too_long", False, None,
     400, "context_length_exceeded"),
    (Fault.content_policy(), False, "BadRequestError", "provider_content_filtered", False, None,
     400, "content_filter"),
    (Fault.content_policy(), True, "BadRequestError", "provider_content_filtered", False, None,
     400, "content_filter"),
    (Fault.server_error(), False, "InternalServerError", "provider_server_error", True, None, 500,
     None),
    (Fault.unavailable(), False, "InternalServerError", "provider_overloaded", True, None, 503,
     "ServiceUnavailable"),
    (Fault.overloaded(), False, "InternalServerError", "provider_overloaded", True, None, 529,
     None),
    (Fault.stream_overloaded(), True, "APIError", "provider_overloaded", True, None, None, None),
    (Fault.drop(), False, "APIConnectionError", "provider_connection_lost", True, None, None,
     None),
    (Fault.cut_stream(), True, "APIConnectionError", "provider_connection_lost", True, None,
     None, None),
]  # fmt: skip


@pytest.mark.parametrize("case", sdk_cases(CASES))
def test_azure_openai_raises_and_we_read_it(fake: FakeProvider, case: SdkCase) -> None:
    fake.fail(case.fault)
    check_classified(raised(lambda: _call(fake, case.stream)), case, "openai")
    assert [r.path for r in fake.requests] == [f"/openai/deployments/{DEPLOYMENT}/chat/completions"]


def test_the_content_filter_body_reaches_the_caller_whole(fake: FakeProvider) -> None:
    fake.fail(Fault.content_policy())
    error = raised(lambda: _call(fake, False))
    assert isinstance(error, openai.BadRequestError)
    body: Any = error.body
    assert body["innererror"]["code"] == "ResponsibleAIPolicyViolation"
    assert body["innererror"]["content_filter_result"]["violence"] == {
        "filtered": True, "severity": "medium",
    }  # fmt: skip
    detail = rc.classify(error)
    assert detail.message.startswith("The response was filtered due to the prompt triggering")


def test_azure_429_wording_and_deployment_wording_alone_decide() -> None:
    """Azure's sentences, without a status or code (a log line, a wrapper's text)."""
    rate = rc.from_http(None, None, {"error": {"message": AZURE_RATE}})
    missing = rc.from_http(None, None, {"error": {"message": AZURE_MISSING}})
    inner = {"code": "ResponsibleAIPolicyViolation"}
    only_inner = rc.from_http(400, None, {"error": {"message": "filtered", "innererror": inner}})
    assert (rate.code, missing.code, only_inner.code) == (
        "provider_rate_limited", "provider_model_not_found", "provider_content_filtered",
    )  # fmt: skip
    quoted = rc.from_http(400, None, {"error": {"message": "user said: " + AZURE_RATE}})
    assert quoted.code == "provider_invalid_request"  # anchored: quoted text does not match


def test_a_hang_past_the_client_timeout(fake: FakeProvider) -> None:
    fake.fail(Fault.hang(5))
    error = raised(lambda: _call(fake, False, timeout=0.5))
    assert type(error).__name__ == "APITimeoutError"
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source) == ("provider_timeout", True, "openai")


def test_nothing_listening_is_unreachable() -> None:
    client = _client(f"http://127.0.0.1:{free_port()}")
    error = raised(lambda: client.chat.completions.create(model=DEPLOYMENT, messages=MESSAGES))
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.details["phase"]) == (
        "provider_unreachable", True, "connect",
    )  # fmt: skip


def test_the_async_client_reads_the_same(fake: FakeProvider) -> None:
    fake.fail(Fault.model_not_found())

    async def call() -> None:
        client = openai.AsyncAzureOpenAI(api_key="k", api_version="2024-10-21",
                                         azure_endpoint=fake.url, max_retries=0)  # fmt: skip
        await client.chat.completions.create(model=DEPLOYMENT, messages=MESSAGES)

    detail = rc.classify(raised(lambda: asyncio.run(call())))
    assert (detail.code, detail.status, detail.details["error_code"]) == (
        "provider_model_not_found", 404, "DeploymentNotFound",
    )  # fmt: skip


def test_a_normal_answer_names_the_deployment(fake: FakeProvider) -> None:
    (answer,) = _call(fake, False)
    assert (answer.model, answer.choices[0].message.content) == (
        DEPLOYMENT, "Hello from FakeProvider.",
    )  # fmt: skip
    assert rc.classify_response(answer) is None

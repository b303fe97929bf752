"""cohere: the real SDK (`ClientV2`) against FakeProvider's `/v2/chat`, every fault.

The SDK raises `ApiError` subclasses by status (`TooManyRequestsError`, ...) holding the
status, the parsed body (`{"id", "message"}`) and the headers; httpx's transport errors pass
through it. Its retries are turned off per call (it retries 429 and 5xx by default).
"""

from __future__ import annotations

from typing import Any

import cohere
import pytest

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ...support.providers import SdkCase, check_classified, free_port, raised, sdk_cases

MESSAGES: Any = [{"role": "user", "content": "hi"}]
MODEL = "command-a-03-2025"
NO_RETRIES: Any = {"max_retries": 0}


def _call(base_url: str, stream: bool, timeout: float = 10) -> list[Any]:
    client = cohere.ClientV2(api_key="fake-key", base_url=base_url, timeout=timeout)
    if stream:
        return list(client.chat_stream(model=MODEL, messages=MESSAGES,
                                       request_options=NO_RETRIES))  # fmt: skip
    return [client.chat(model=MODEL, messages=MESSAGES, request_options=NO_RETRIES)]


# (fault, stream, class, code, retryable, retry_after_ms, status)
CASES = [
    (Fault.rate_limited(retry_after=6), False, "TooManyRequestsError", "provider_rate_limited",
     True, 6000, 429),
    (Fault.rate_limited(retry_after_ms=900), True, "TooManyRequestsError",
     "provider_rate_limited", True, 900, 429),
    (Fault.insufficient_quota(), False, "ApiError", "provider_quota_exceeded", False, None, 402),
    (Fault.unauthorized(), False, "UnauthorizedError", "provider_auth_failed", False, None, 401),
    (Fault.forbidden(), False, "ForbiddenError", "provider_permission_denied", False, None, 403),
    (Fault.model_not_found(), False, "NotFoundError", "provider_model_not_found", False, None,
     404),
    (Fault.context_too_long(), True, "BadRequestError", "provider_context_too_long", False, None,
     400),
    (Fault.content_policy(), False, "BadRequestError", "provider_invalid_request", False, None,
     400),
    (Fault.server_error(), False, "InternalServerError", "provider_server_error", True, None,
     500),
    (Fault.unavailable(), False, "ServiceUnavailableError", "provider_overloaded", True, None,
     503),
    (Fault.drop(), False, "RemoteProtocolError", "provider_connection_lost", True, None, None),
    (Fault.cut_stream(), True, "RemoteProtocolError", "provider_connection_lost", True, None,
     None),
]  # fmt: skip


@pytest.mark.parametrize("case", sdk_cases(CASES))
def test_cohere_raises_and_we_read_it(fake: FakeProvider, case: SdkCase) -> None:
    fake.fail(case.fault)
    check_classified(raised(lambda: _call(fake.url, case.stream)), case, "cohere")
    assert len(fake.requests) == 1  # no retry of the SDK's own


def test_cohere_s_own_statuses() -> None:
    """498 is Cohere's invalid or expired token, 499 a request its caller cancelled."""
    from cohere.errors import ClientClosedRequestError, InvalidTokenError

    token = rc.classify(InvalidTokenError(body={"message": "invalid api token"}))
    closed = rc.classify(ClientClosedRequestError(body={"message": "request cancelled"}))
    assert (token.code, token.status, closed.code, closed.status) == (
        "provider_auth_failed", 498, "run_cancelled", 499,
    )  # fmt: skip


def test_a_hang_past_the_client_timeout(fake: FakeProvider) -> None:
    fake.fail(Fault.hang(5))
    error = raised(lambda: _call(fake.url, False, timeout=0.5))
    assert type(error).__name__ == "ReadTimeout"
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source) == ("provider_timeout", True, "cohere")


def test_nothing_listening_is_unreachable() -> None:
    detail = rc.classify(raised(lambda: _call(f"http://127.0.0.1:{free_port()}", False)))
    assert (detail.code, detail.retryable, detail.source, detail.details["phase"]) == (
        "provider_unreachable", True, "cohere", "connect",
    )  # fmt: skip


def test_a_normal_answer_and_stream(fake: FakeProvider) -> None:
    (answer,) = _call(fake.url, False)
    assert (answer.message.content[0].text, answer.finish_reason) == (
        "Hello from FakeProvider.", "COMPLETE",
    )  # fmt: skip
    events = _call(fake.url, True)
    assert [e.type for e in events] == ["message-start", "content-start", *["content-delta"] * 3,
                                        "content-end", "message-end"]  # fmt: skip

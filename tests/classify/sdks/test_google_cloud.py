"""google-api-core (Vertex AI and the Google Cloud clients): the real package's exceptions.

Its REST transports build a `GoogleAPICallError` subclass by HTTP status with
`from_http_response` (kept: the response, its JSON `details`, the ErrorInfo); here it reads a
real `requests` response from FakeProvider's Gemini route. Its gRPC transports build one by
canonical code with `from_grpc_status` (a `grpc.StatusCode`, or a bare number without grpcio).
RESOURCE_EXHAUSTED follows google-genai's rule: a PerDay quota is billing, else a rate limit.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from google.api_core import exceptions as gexc
from google.auth.credentials import AnonymousCredentials
from google.auth.transport.requests import AuthorizedSession

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ...support.providers import RPC, free_port, raised

PATH = "/v1beta/models/gemini-2.5-flash:generateContent"
BODY: Any = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def _from_fake(fake: FakeProvider) -> gexc.GoogleAPICallError:
    response = requests.post(fake.url + PATH, json=BODY, timeout=10)
    return gexc.from_http_response(response)


# (fault, class, code, retryable, retry_after_ms, status)
HTTP_CASES = [
    (Fault.rate_limited(retry_delay="38s"), "TooManyRequests", "provider_rate_limited", True,
     38000, 429),
    (Fault.rate_limited(retry_after=6), "TooManyRequests", "provider_rate_limited", True, 6000,
     429),
    (Fault.insufficient_quota(), "TooManyRequests", "provider_quota_exceeded", False, None, 429),
    (Fault.payment_required(), "GoogleAPICallError", "provider_quota_exceeded", False, None, 402),
    (Fault.unauthorized(), "BadRequest", "provider_auth_failed", False, None, 400),
    (Fault.forbidden(), "Forbidden", "provider_permission_denied", False, None, 403),
    (Fault.model_not_found(), "NotFound", "provider_model_not_found", False, None, 404),
    (Fault.context_too_long(), "BadRequest", "provider_context_too_long", False, None, 400),
    (Fault.server_error(), "InternalServerError", "provider_server_error", True, None, 500),
    (Fault.unavailable(), "ServiceUnavailable", "provider_overloaded", True, None, 503),
    (Fault.overloaded(), "GoogleAPICallError", "provider_overloaded", True, None, 529),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fault", "raised_class", "code", "retryable", "retry_after_ms", "status"),
    HTTP_CASES,
    ids=[c[0].name + (f"-{c[4]}" if c[4] else "") for c in HTTP_CASES],
)
def test_from_http_response_of_fake_provider(
    fake: FakeProvider,
    fault: Fault,
    raised_class: str,
    code: str,
    retryable: bool,
    retry_after_ms: int | None,
    status: int,
) -> None:
    fake.fail(fault)
    error = _from_fake(fake)
    assert type(error).__name__ == raised_class
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.retry_after_ms, detail.status,
            detail.source) == (code, retryable, retry_after_ms, status, "google")  # fmt: skip


def test_the_quota_ids_and_reason_of_the_answer_are_kept(fake: FakeProvider) -> None:
    fake.fail(Fault.insufficient_quota())
    detail = rc.classify(_from_fake(fake))
    assert any("PerDay" in quota for quota in detail.details["quota_ids"])
    assert detail.details["google_status"] == "RESOURCE_EXHAUSTED"


# gRPC canonical code -> (code, retryable, HTTP status google.rpc maps it to)
GRPC_CASES = [
    (8, "provider_rate_limited", True, 429),
    (14, "provider_overloaded", True, 503),
    (4, "provider_timeout", True, 504),
    (3, "provider_invalid_request", False, 400),
    (7, "provider_permission_denied", False, 403),
    (16, "provider_auth_failed", False, 401),
    (5, "provider_model_not_found", False, 404),
    (13, "provider_server_error", True, 500),
]


@pytest.mark.parametrize(("rpc_code", "code", "retryable", "status"), GRPC_CASES)
def test_from_grpc_status(rpc_code: int, code: str, retryable: bool, status: int) -> None:
    detail = rc.classify(gexc.from_grpc_status(rpc_code, "the call failed"))
    assert (detail.code, detail.retryable, detail.status, detail.source) == (
        code, retryable, status, "google")  # fmt: skip


def test_grpc_cancelled_is_the_callers_cancellation() -> None:
    detail = rc.classify(gexc.from_grpc_status(1, "Locally cancelled by application!"))
    assert (detail.code, detail.retryable, detail.source) == ("run_cancelled", False, "google")


# The gRPC classes raised directly (as google-cloud clients' generated code does).
CLASS_CASES = [
    (gexc.ResourceExhausted, "provider_rate_limited", True, 429),
    (gexc.ServiceUnavailable, "provider_overloaded", True, 503),
    (gexc.DeadlineExceeded, "provider_timeout", True, 504),
    (gexc.InvalidArgument, "provider_invalid_request", False, 400),
    (gexc.PermissionDenied, "provider_permission_denied", False, 403),
    (gexc.Unauthenticated, "provider_auth_failed", False, 401),
    (gexc.NotFound, "provider_model_not_found", False, 404),
]


@pytest.mark.parametrize(("klass", "code", "retryable", "status"), CLASS_CASES)
def test_the_grpc_classes(klass: type[Exception], code: str, retryable: bool, status: int) -> None:
    detail = rc.classify(klass("Quota exceeded for aiplatform.googleapis.com per minute"))
    assert (detail.code, detail.retryable, detail.status) == (code, retryable, status)


def test_resource_exhausted_with_a_per_day_quota_is_billing() -> None:
    violation = {"quotaId": "GenerateRequestsPerDayPerProjectPerModel"}
    details = [{"@type": RPC + "QuotaFailure", "violations": [violation]}]
    error = gexc.ResourceExhausted("Quota exceeded", details=details)
    detail = rc.classify(error)
    assert (detail.code, detail.retryable) == ("provider_quota_exceeded", False)


def test_resource_exhausted_per_minute_worded_as_quota_is_a_rate_limit() -> None:
    # Vertex words a per-minute limit "Quota exceeded" too: only a PerDay quota is billing.
    violation = {"quotaId": "GenerateRequestsPerMinutePerProjectPerModel"}
    details = [{"@type": RPC + "QuotaFailure", "violations": [violation]},
               {"@type": RPC + "RetryInfo", "retryDelay": "12s"}]  # fmt: skip
    detail = rc.classify(gexc.ResourceExhausted("You exceeded your current quota", details=details))
    assert (detail.code, detail.retryable, detail.retry_after_ms) == (
        "provider_rate_limited", True, 12000)  # fmt: skip


def test_an_error_without_a_status_is_left_to_the_generic_stages() -> None:
    detail = rc.classify(gexc.GoogleAPICallError("something"))
    assert (detail.code, detail.source) == ("unknown", None)


# Transport failures through google-auth's session (the Google Cloud REST clients' way).
def _post(url: str, timeout: float = 10) -> object:
    with AuthorizedSession(AnonymousCredentials()) as session:
        return session.post(url + PATH, json=BODY, timeout=timeout)


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        (Fault.drop(), "provider_connection_lost"),
        (Fault.cut_stream(), "provider_connection_lost"),
        (Fault.hang(), "provider_timeout"),
    ],
    ids=["drop", "cut", "hang"],
)
def test_transport_failures_through_the_session(
    fake: FakeProvider, fault: Fault, code: str
) -> None:
    fake.fail(fault)
    detail = rc.classify(raised(lambda: _post(fake.url, timeout=1)))
    assert (detail.code, detail.retryable, detail.source) == (code, True, "google")


def test_nothing_listening_is_unreachable() -> None:
    detail = rc.classify(raised(lambda: _post(f"http://127.0.0.1:{free_port()}")))
    assert (detail.code, detail.retryable, detail.source) == (
        "provider_unreachable",
        True,
        "google",
    )
    assert detail.details["phase"] == "connect"


def test_plain_requests_without_the_session_stay_generic(fake: FakeProvider) -> None:
    fake.fail(Fault.drop())
    detail = rc.classify(raised(lambda: requests.post(fake.url + PATH, json=BODY, timeout=10)))
    assert (detail.code, detail.source) == ("network_error", None)

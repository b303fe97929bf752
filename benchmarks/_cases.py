"""The 13 real SDK exceptions the classify benchmark runs, built offline as the SDKs build them.

Each case names the right answer in our vocabulary (a registry code) and the class each peer
would raise if it got the kind right. The peer tables below map a peer's class to our
vocabulary, which is how `bench_classify.py` decides right or wrong.

The HTTP errors and the timeout come from `recoverable.testing.sdk_error`: each SDK's real
client makes the call through an in-memory transport that answers as FakeProvider does (its
`Fault.status` passes a body and headers through; `Fault.hang` times out), so the exception
is the one the SDK raises in production. No socket is opened; the clients name 127.0.0.1:9.
The refused connection has no Fault (a listening fake cannot refuse): `_provider_errors.py`
builds it, with the bodies and the SDK errors the classify tests share.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must stay offline

from _provider_errors import (
    GEMINI_PER_DAY,
    GEMINI_RETRY,
    anthropic_status,
    google_status,
    openai_connect_error,
    openai_status,
)
from recoverable.testing import Fault, sdk_error


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    build: Callable[[], BaseException]
    expected: str  # our code
    provider: str  # litellm's custom_llm_provider: openai | anthropic | gemini
    model: str
    litellm_expect: str  # the litellm class that would be the right kind
    pydantic_ai_expect: str  # the pydantic-ai category that would be the right kind
    status: int | None  # the HTTP status the failure means (529 for in-stream overloaded)


GPT = "gpt-4o"
CLAUDE = "claude-sonnet-4-5"
GEMINI = "gemini-2.5-flash"

# -- the cases ----------------------------------------------------------------------------

CASES: list[Case] = [
    Case(
        "openai 429 rate limit + retry-after",
        lambda: openai_status(
            429,
            {
                "message": "Rate limit reached for gpt-4o on requests "
                "per min (RPM): Limit 500, Used 500, Requested 1.",
                "type": "requests",
                "code": "rate_limit_exceeded",
            },
            {"retry-after": "7", "x-request-id": "req_1"},
        ),
        "provider_rate_limited",
        "openai",
        GPT,
        "RateLimitError",
        "ModelRateLimitError",
        429,
    ),
    Case(
        "openai 429 insufficient_quota",
        lambda: openai_status(
            429,
            {
                "message": "You exceeded your current quota, please check "
                "your plan and billing details.",
                "type": "insufficient_quota",
                "code": "insufficient_quota",
            },
        ),
        "provider_quota_exceeded",
        "openai",
        GPT,
        "(none: litellm has no quota class)",
        "ModelQuotaExceededError",
        429,
    ),
    Case(
        "openai 400 context_length_exceeded",
        lambda: openai_status(
            400,
            {
                "message": "This model's maximum context length is 128000 "
                "tokens. However, your messages resulted in 130000 tokens.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            },
        ),
        "provider_context_too_long",
        "openai",
        GPT,
        "ContextWindowExceededError",
        "ModelContextWindowExceededError",
        400,
    ),
    Case(
        "openai 400 content_policy_violation",
        lambda: openai_status(
            400,
            {
                "message": "Your request was rejected as a result of our safety system.",
                "type": "invalid_request_error",
                "code": "content_policy_violation",
            },
        ),
        "provider_content_filtered",
        "openai",
        GPT,
        "ContentPolicyViolationError",
        "(none: no content-filter category)",
        400,
    ),
    Case(
        "openai 401 invalid key",
        lambda: openai_status(
            401,
            {
                "message": "Incorrect API key provided: sk-x.",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            },
        ),
        "provider_auth_failed",
        "openai",
        GPT,
        "AuthenticationError",
        "ModelAuthenticationError",
        401,
    ),
    Case(
        "openai APIConnectionError (httpx2.ConnectError)",
        openai_connect_error,
        "provider_unreachable",
        "openai",
        GPT,
        "APIConnectionError",
        "ModelConnectionError",
        None,
    ),
    Case(
        "openai APITimeoutError",
        lambda: sdk_error("openai", Fault.hang()),
        "provider_timeout",
        "openai",
        GPT,
        "Timeout",
        "ModelTimeoutError",
        None,
    ),
    Case(
        "anthropic 529 overloaded",
        lambda: anthropic_status(529, "overloaded_error", "Overloaded"),
        "provider_overloaded",
        "anthropic",
        CLAUDE,
        "ServiceUnavailableError",
        "ModelOverloadedError",
        529,
    ),
    Case(
        "anthropic in-stream overloaded (200)",
        lambda: sdk_error("anthropic", Fault.stream_overloaded(), stream=True),
        "provider_overloaded",
        "anthropic",
        CLAUDE,
        "ServiceUnavailableError",
        "ModelOverloadedError",
        529,
    ),
    Case(
        "anthropic 400 credit balance too low",
        lambda: anthropic_status(
            400,
            "invalid_request_error",
            "Your credit balance is too low to access the Anthropic "
            "API. Please go to Plans & Billing to upgrade or purchase "
            "credits.",
        ),
        "provider_quota_exceeded",
        "anthropic",
        CLAUDE,
        "PaymentRequiredError",
        "ModelQuotaExceededError",
        400,
    ),
    Case(
        "anthropic 400 prompt is too long",
        lambda: anthropic_status(
            400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
        ),
        "provider_context_too_long",
        "anthropic",
        CLAUDE,
        "ContextWindowExceededError",
        "ModelContextWindowExceededError",
        400,
    ),
    Case(
        "google 429 RESOURCE_EXHAUSTED + RetryInfo",
        lambda: google_status(
            429,
            "RESOURCE_EXHAUSTED",
            "Resource has been exhausted (e.g. check quota).",
            GEMINI_RETRY,
        ),
        "provider_rate_limited",
        "gemini",
        GEMINI,
        "RateLimitError",
        "ModelRateLimitError",
        429,
    ),
    Case(
        "google 429 PerDay quota",
        lambda: google_status(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota, please check your plan and billing details.",
            GEMINI_PER_DAY,
            GEMINI_RETRY,
        ),
        "provider_quota_exceeded",
        "gemini",
        GEMINI,
        "(none: litellm has no quota class)",
        "ModelQuotaExceededError",
        429,
    ),
]


# -- peers' vocabulary -> ours ------------------------------------------------------------
# Looked up over the MRO of the peer's class, most derived first. Not the library's own litellm
# table (`_classify/sdks.py`): that one reads the provider error litellm keeps inside, which
# would credit litellm with our work; this one grades the class litellm raised, as its callers
# see it (so `APIConnectionError` counts as unreachable and a bare `APIError` names nothing).

LITELLM_TO_OURS: dict[str, str] = {
    "ContextWindowExceededError": "provider_context_too_long",
    "ContentPolicyViolationError": "provider_content_filtered",
    "PaymentRequiredError": "provider_quota_exceeded",
    "RateLimitError": "provider_rate_limited",
    "AuthenticationError": "provider_auth_failed",
    "PermissionDeniedError": "provider_permission_denied",
    "NotFoundError": "provider_model_not_found",
    "UnprocessableEntityError": "provider_invalid_request",
    "BadRequestError": "provider_invalid_request",
    "Timeout": "provider_timeout",
    "APIConnectionError": "provider_unreachable",
    "ServiceUnavailableError": "provider_overloaded",
    "BadGatewayError": "provider_server_error",
    "InternalServerError": "provider_server_error",
    "APIError": "unknown",
}

PYDANTIC_AI_TO_OURS: dict[str, str] = {
    "ModelQuotaExceededError": "provider_quota_exceeded",
    "ModelRateLimitError": "provider_rate_limited",
    "ModelOverloadedError": "provider_overloaded",
    "ModelUnavailableError": "provider_overloaded",
    "ModelServerError": "provider_server_error",
    "ModelContextWindowExceededError": "provider_context_too_long",
    "ModelAuthenticationError": "provider_auth_failed",
    "ModelNotFoundError": "provider_model_not_found",
    "ModelRequestRejectedError": "provider_invalid_request",
    "ModelTimeoutError": "provider_timeout",
    "ModelConnectionError": "provider_unreachable",  # read/write phase: see bench_classify
    "ContentFilterError": "provider_content_filtered",
    "ModelHTTPError": "unknown",
    "ModelAPIError": "unknown",
}

# Codes that are the same kind of failure for a caller: retryable, server side, another
# provider may succeed. A 529 reported as a 500 gets the kind right and loses the status.
SAME_KIND: dict[str, frozenset[str]] = {
    "provider_overloaded": frozenset({"provider_overloaded", "provider_server_error"}),
}


def right_kind(expected: str, got: str) -> bool:
    return got == expected or got in SAME_KIND.get(expected, frozenset())


def peer_code(table: dict[str, str], cls: type) -> tuple[str, str]:
    """(the peer class name that decided, our code for it), most derived first."""
    for klass in cls.__mro__:
        if klass.__name__ in table:
            return klass.__name__, table[klass.__name__]
    return cls.__name__, "unknown"


def check_tables() -> None:
    """Each case's peer class, where the peer has one, means the case's expected code."""
    for case in CASES:
        for name, table in (
            (case.litellm_expect, LITELLM_TO_OURS),
            (case.pydantic_ai_expect, PYDANTIC_AI_TO_OURS),
        ):
            if not name.startswith("(none") and table[name] != case.expected:
                message = f"{case.name}: {name} means {table[name]}, not {case.expected}"
                raise AssertionError(message)

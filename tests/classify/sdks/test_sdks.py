"""Real SDK exception objects (built offline, as the SDKs build them) through classify().

The end-to-end tests against FakeProvider are in test_providers_e2e.py; this table pins each
handler on the exact objects, including the shapes a loopback run cannot easily produce.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import claude_agent_sdk
import httpx
import httpx2
import litellm
import openai
import pydantic_ai.exceptions as pai
import pytest
from benchmarks._provider_errors import (
    GEMINI_PER_DAY,
    GEMINI_RETRY,
    OPENAI_URL,
    anthropic_status,
    google_status,
    openai_connect_error,
    openai_status,
)

import recoverable as rc
from recoverable.testing import Fault, sdk_error


def _litellm_over_anthropic_529() -> Exception:
    try:
        try:
            raise anthropic_status(529, "overloaded_error", "Overloaded")
        except anthropic.APIStatusError:
            raise litellm.InternalServerError(  # noqa: B904 -- litellm drops the cause too
                message="AnthropicException - Overloaded", llm_provider="anthropic", model="claude"
            )
    except litellm.InternalServerError as error:
        return error


def _httpx_status(url: str, status: int, body: bytes, cls: Any = httpx) -> Exception:
    request = cls.Request("POST", url)
    response = cls.Response(status, request=request, content=body)
    return cls.HTTPStatusError("failed", request=request, response=response)


GEMINI_KEY = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
              "domain": "googleapis.com"}  # fmt: skip

# (id, build, code, retryable, retry_after_ms, status, source)
Case = tuple[str, Callable[[], BaseException], str, bool, int | None, int | None, str | None]
CASES: list[Case] = [
    ("openai-429-retry-after-ms",
     lambda: openai_status(429, {"message": "Rate limit reached", "type": "requests",
                                  "code": "rate_limit_exceeded"}, {"retry-after-ms": "1500"}),
     "provider_rate_limited", True, 1500, 429, "openai"),
    ("openai-429-insufficient-quota",
     lambda: openai_status(429, {"message": "You exceeded your current quota",
                                  "type": "insufficient_quota", "code": "insufficient_quota"},
                            {"retry-after": "20"}),
     "provider_quota_exceeded", False, None, 429, "openai"),
    ("openai-400-context",
     lambda: openai_status(400, {"message": "This model's maximum context length is 128000.",
                                  "type": "invalid_request_error",
                                  "code": "context_length_exceeded"}),
     "provider_context_too_long", False, None, 400, "openai"),
    ("openai-400-content-policy",
     lambda: openai_status(400, {"message": "Your request was rejected as a result of our "
                                  "safety system.", "type": "invalid_request_error",
                                  "code": "content_policy_violation"}),
     "provider_content_filtered", False, None, 400, "openai"),
    ("openai-400-mentions-429",
     lambda: openai_status(400, {"message": "Invalid value at messages[429]: rate limit text",
                                  "type": "invalid_request_error", "code": None}),
     "provider_invalid_request", False, None, 400, "openai"),
    ("openai-401", lambda: openai_status(401, {"message": "Incorrect API key provided: sk-x.",
                                                "type": "invalid_request_error",
                                                "code": "invalid_api_key"}),
     "provider_auth_failed", False, None, 401, "openai"),
    ("openai-404-model",
     lambda: openai_status(404, {"message": "The model `gpt-9` does not exist",
                                  "type": "invalid_request_error", "code": "model_not_found"}),
     "provider_model_not_found", False, None, 404, "openai"),
    ("openai-500", lambda: openai_status(500, {"message": "The server had an error",
                                                "type": "server_error", "code": None}),
     "provider_server_error", True, None, 500, "openai"),
    ("openai-connect-refused", openai_connect_error,
     "provider_unreachable", True, None, None, "openai"),
    ("openai-timeout",
     lambda: sdk_error("openai", Fault.hang()),
     "provider_timeout", True, None, None, "openai"),
    ("openai-stream-error",
     lambda: openai.APIError("stream failed", httpx2.Request("POST", OPENAI_URL),
                             body={"message": "The server had an error", "type": "server_error"}),
     "provider_server_error", True, None, None, "openai"),
    ("anthropic-529", lambda: anthropic_status(529, "overloaded_error", "Overloaded"),
     "provider_overloaded", True, None, 529, "anthropic"),
    ("anthropic-in-stream-200", lambda: sdk_error("anthropic", Fault.stream_overloaded(),
                                                  stream=True),
     "provider_overloaded", True, None, 200, "anthropic"),
    ("anthropic-credit-balance",
     lambda: anthropic_status(400, "invalid_request_error",
                               "Your credit balance is too low to access the Anthropic API."),
     "provider_quota_exceeded", False, None, 400, "anthropic"),
    ("anthropic-prompt-too-long",
     lambda: anthropic_status(400, "invalid_request_error",
                               "prompt is too long: 210000 tokens > 200000 maximum"),
     "provider_context_too_long", False, None, 400, "anthropic"),
    ("anthropic-429-retry-after",
     lambda: anthropic_status(429, "rate_limit_error", "Number of request tokens has exceeded",
                               {"retry-after": "7", "request-id": "req_1"}),
     "provider_rate_limited", True, 7000, 429, "anthropic"),
    ("google-429-retry-info",
     lambda: google_status(429, "RESOURCE_EXHAUSTED", "Resource exhausted.", GEMINI_RETRY),
     "provider_rate_limited", True, 38000, 429, "google"),
    ("google-429-per-day",
     lambda: google_status(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", GEMINI_PER_DAY,
                           GEMINI_RETRY),
     "provider_quota_exceeded", False, None, 429, "google"),
    ("google-400-api-key",
     lambda: google_status(400, "INVALID_ARGUMENT", "API key not valid.", GEMINI_KEY),
     "provider_auth_failed", False, None, 400, "google"),
    ("google-400-context",
     lambda: google_status(400, "INVALID_ARGUMENT", "The input token count (1200000) exceeds the "
                     "maximum number of tokens allowed (1048576)."),
     "provider_context_too_long", False, None, 400, "google"),
    ("google-503", lambda: google_status(503, "UNAVAILABLE", "The model is overloaded."),
     "provider_overloaded", True, None, 503, "google"),
    ("litellm-quota-as-rate-limit",
     lambda: litellm.RateLimitError(message="OpenAIException - You exceeded your current quota "
                                    "(insufficient_quota)", llm_provider="openai", model="gpt"),
     "provider_quota_exceeded", False, None, 429, "openai"),
    ("litellm-context",
     lambda: litellm.ContextWindowExceededError(message="prompt is too long", model="claude",
                                                llm_provider="anthropic"),
     "provider_context_too_long", False, None, 400, "anthropic"),
    ("litellm-over-anthropic-529", _litellm_over_anthropic_529,
     "provider_overloaded", True, None, 529, "anthropic"),
    ("pydantic-ai-rate-limit",
     lambda: pai.ModelRateLimitError("gpt", "slow down", retry_after=2.5),
     "provider_rate_limited", True, 2500, None, None),
    ("pydantic-ai-quota", lambda: pai.ModelQuotaExceededError("gpt", "no credit"),
     "provider_quota_exceeded", False, None, None, None),
    ("claude-sdk-not-found", claude_agent_sdk.CLINotFoundError,
     "cli_not_found", False, None, None, "claude"),
    ("claude-sdk-process-error",
     lambda: claude_agent_sdk.ProcessError("Command failed with exit code 3", exit_code=3),
     "cli_crashed", False, None, None, "claude"),
    ("httpx-connect", lambda: httpx.ConnectError("refused"),
     "network_error", True, None, None, None),
    ("httpx2-read-timeout", lambda: httpx2.ReadTimeout("timed out"),
     "timeout", False, None, None, None),
    ("httpx-status-openai-host",
     lambda: _httpx_status(OPENAI_URL, 429, b'{"error": {"message": "slow", "type": "requests", '
                           b'"code": "rate_limit_exceeded"}}'),
     "provider_rate_limited", True, None, 429, "openai"),
    ("httpx2-status-other-host",
     lambda: _httpx_status("http://127.0.0.1:9/items/1", 404, b"no such item", httpx2),
     "not_found", False, None, 404, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("build", "code", "retryable", "retry_after_ms", "status", "source"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_sdk_exceptions(
    build: Callable[[], BaseException],
    code: str,
    retryable: bool,
    retry_after_ms: int | None,
    status: int | None,
    source: str | None,
) -> None:
    detail = rc.classify(build())
    assert (detail.code, detail.retryable, detail.retry_after_ms, detail.status, detail.source) == (
        code,
        retryable,
        retry_after_ms,
        status,
        source,
    )
    assert detail.user_message == rc.codes[code].user_message


def test_request_id_and_upstream_type_are_kept() -> None:
    detail = rc.classify(
        anthropic_status(429, "rate_limit_error", "slow", {"request-id": "req_42"})
    )
    assert detail.details["request_id"] == "req_42"
    assert detail.details["error_type"] == "rate_limit_error"
    openai_error = openai_status(
        429,
        {"message": "m", "type": "requests", "code": "rate_limit_exceeded"},
        {"x-request-id": "req_7"},
    )
    assert rc.classify(openai_error).details == {
        "request_id": "req_7", "error_type": "requests", "error_code": "rate_limit_exceeded",
    }  # fmt: skip


def test_the_body_request_id_is_kept_when_the_headers_have_none() -> None:
    body = {"type": "error", "error": {"type": "api_error", "message": "x"}, "request_id": "req_b"}
    error = sdk_error("anthropic", Fault.status(500, body))
    assert error.request_id is None  # type: ignore[attr-defined]
    assert rc.classify(error).details == {"request_id": "req_b", "error_type": "api_error"}


def test_the_claude_sdk_install_command_is_the_fix() -> None:
    detail = rc.classify(claude_agent_sdk.CLINotFoundError())
    assert detail.fix_command == "npm install -g @anthropic-ai/claude-code"
    assert detail.recovery == "fix"


def test_litellm_keeps_the_provider_error_it_wraps() -> None:
    detail = rc.classify(_litellm_over_anthropic_529())
    assert detail.details["litellm_exception"] == "InternalServerError"
    assert detail.details["error_type"] == "overloaded_error"


def test_a_pydantic_ai_fallback_group_takes_the_terminal_failure() -> None:
    group = pai.FallbackExceptionGroup(
        "all models failed",
        [pai.ModelRateLimitError("a", "slow"), pai.ModelQuotaExceededError("b", "no credit")],
    )
    detail = rc.classify(group)
    assert (detail.code, detail.details["group_size"]) == ("provider_quota_exceeded", 2)

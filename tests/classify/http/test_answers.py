"""from_http and retry_after_ms: table tests, with an injected clock for HTTP-dates."""

from __future__ import annotations

import email.message
from datetime import UTC, datetime
from typing import Any

import httpx
import httpx2
import pytest
from benchmarks._provider_errors import anthropic_body, google_body, openai_body

import recoverable as rc
from recoverable._classify.http import MESSAGE_PHRASES, message_code
from recoverable._classify.http.messages import COMPATIBLE_PHRASES
from recoverable._classify.phrases import PhraseTable

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def _message_headers(**values: str) -> email.message.Message:
    message = email.message.Message()
    for key, value in values.items():
        message[key.replace("_", "-")] = value
    return message


@pytest.mark.parametrize(
    ("headers", "body", "expected"),
    [
        ({"retry-after-ms": "1500"}, None, 1500),
        ({"Retry-After-Ms": "1500.2"}, None, 1501),
        ({"retry-after": "7"}, None, 7000),
        ({"RETRY-AFTER": "1.5"}, None, 1500),
        ({"retry-after": "0"}, None, 0),
        ({"retry-after": "Mon, 30 Nov 2026 12:00:30 GMT"}, None, 30_000),
        ({"retry-after": "Mon, 30 Nov 2026 11:59:00 GMT"}, None, 0),  # already passed: now
        ({"retry-after": "-5"}, None, None),
        ({"retry-after": "soon"}, None, None),
        ({"retry-after": "nan"}, None, None),
        ({"retry-after": "inf"}, None, 7 * 24 * 3600 * 1000),  # "wait forever": never retried
        # Ten days: kept as the longest hint we keep, a week (too long for any retry to wait).
        ({"retry-after": str(10 * 24 * 3600)}, None, 7 * 24 * 3600 * 1000),
        ({"retry-after": "1" + "0" * 400}, None, 7 * 24 * 3600 * 1000),
        ({"retry-after": "Mon, 30 Nov 2026 12:00:30"}, None, None),  # a date with no zone
        ({"retry-after-ms": "garbage", "retry-after": "2"}, None, 2000),
        ({"retry-after-ms": "100", "retry-after": "2"}, None, 100),  # ms wins
        ([("Retry-After", "3")], None, 3000),
        ([(b"retry-after", b"4")], None, 4000),
        (_message_headers(Retry_After="5"), None, 5000),
        (httpx.Headers({"Retry-After": "6"}), None, 6000),
        (httpx2.Headers({"Retry-After-Ms": "250"}), None, 250),
        (None, {"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                       "retryDelay": "38s"}]}}, 38_000),
        (None, {"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                       "retryDelay": "0.5s"}]}}, 500),
        (None, {"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                       "retryDelay": {"seconds": 3, "nanos": 500000000}}]}},
         3500),
        (None, {"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                       "retryDelay": "-3s"}]}}, None),
        (None, {"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                       "retryDelay": "1e9s"}]}}, None),
        ({"retry-after": "1"}, {"error": {"details": [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "38s"}]}}, 1000),
        (None, b'{"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", '
               b'"retryDelay": "2s"}]}}', 2000),
        (None, None, None),
        ({}, "not json", None),
    ],
)  # fmt: skip
def test_retry_after_ms(headers: Any, body: Any, expected: int | None) -> None:
    assert rc.retry_after_ms(headers, body, now=NOW) == expected
    assert rc.retry_after_ms(headers, body, now=NOW.timestamp()) == expected


PER_MINUTE = {
    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
    "violations": [{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel"}],
}


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (429, openai_body("rate_limit_exceeded", "Rate limit reached", "requests"),
         "provider_rate_limited"),
        (429, openai_body("insufficient_quota", "You exceeded your quota", "insufficient_quota"),
         "provider_quota_exceeded"),
        (429, openai_body("billing_hard_limit_reached", "Billing hard limit"),
         "provider_quota_exceeded"),
        (400, openai_body("context_length_exceeded", "too long"), "provider_context_too_long"),
        (400, openai_body(None, "This model's maximum context length is 8192 tokens."),
         "provider_context_too_long"),
        (400, openai_body("content_policy_violation", "rejected"), "provider_content_filtered"),
        (401, openai_body("invalid_api_key", "Incorrect API key"), "provider_auth_failed"),
        (404, openai_body("model_not_found", "no such model"), "provider_model_not_found"),
        # False positives: statuses and phrases inside text do not classify.
        (400, openai_body(None, "messages[429].content: rate limit exceeded is not a valid role"),
         "provider_invalid_request"),
        (400, openai_body(None, "Error in 'foo.go:429': the prompt is too long for my taste"),
         "provider_invalid_request"),
        (400, anthropic_body("invalid_request_error", "Your credit balance is too low to access"),
         "provider_quota_exceeded"),
        (400, anthropic_body("invalid_request_error", "prompt is too long: 210000 tokens > 200000"),
         "provider_context_too_long"),
        (402, anthropic_body("billing_error", "Payment required"), "provider_quota_exceeded"),
        (503, anthropic_body("api_error", "Service unavailable"), "provider_overloaded"),
        (500, anthropic_body("api_error", "Internal server error"), "provider_server_error"),
        (529, anthropic_body("overloaded_error", "Overloaded"), "provider_overloaded"),
        # A specific body type outranks a phrase in the message.
        (529, anthropic_body("overloaded_error", "Prompt is too long to queue now"),
         "provider_overloaded"),
        (200, anthropic_body("overloaded_error", "Overloaded"), "provider_overloaded"),
        (200, anthropic_body("api_error", "stream failed"), "provider_server_error"),
        (None, anthropic_body("rate_limit_error", "slow"), "provider_rate_limited"),
        (429, google_body(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota", PER_MINUTE),
         "provider_rate_limited"),
        (400, google_body(400, "FAILED_PRECONDITION", "Billing is not enabled for this project"),
         "provider_quota_exceeded"),
        (403, google_body(403, "PERMISSION_DENIED", "denied", {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "BILLING_DISABLED"}),
         "provider_quota_exceeded"),
        (503, google_body(503, "UNAVAILABLE", "The model is overloaded."), "provider_overloaded"),
        (504, google_body(504, "DEADLINE_EXCEEDED", "Deadline"), "provider_timeout"),
        (408, None, "provider_timeout"),
        (409, None, "provider_server_error"),
        (413, None, "provider_context_too_long"),
        (418, None, "provider_invalid_request"),
        (422, None, "provider_invalid_request"),
        (502, b"<html>bad gateway</html>", "provider_server_error"),
        (599, None, "provider_server_error"),
        (200, None, "provider_bad_response"),
        (None, None, "provider_bad_response"),
    ],
)  # fmt: skip
def test_from_http(status: int | None, body: Any, code: str) -> None:
    detail = rc.from_http(status, {"retry-after": "2"}, body, source="test")
    assert (detail.code, detail.status, detail.source) == (code, status, "test")
    assert detail.retry_after_ms == (2000 if detail.retryable else None)
    assert detail.user_message == rc.codes[code].user_message


def test_from_http_keeps_the_upstream_facts() -> None:
    detail = rc.from_http(429, {"x-request-id": "req_9"}, openai_body("rate_limit_exceeded", "slow",
                                                                   "tokens"))  # fmt: skip
    assert detail.message == "slow"
    assert detail.details == {"request_id": "req_9", "error_type": "tokens",
                              "error_code": "rate_limit_exceeded"}  # fmt: skip
    per_day = {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
    }
    google = rc.from_http(429, None, google_body(429, "RESOURCE_EXHAUSTED", "q", per_day))
    assert google.code == "provider_quota_exceeded"
    assert google.details["quota_ids"] == ["GenerateRequestsPerDayPerProjectPerModel-FreeTier"]
    assert (
        rc.from_http(500, None, anthropic_body("api_error", "x", "req_b")).details["request_id"]
        == "req_b"
    )


# One real wording per entry of MESSAGE_PHRASES, in its order: each branch names its own code.
PHRASE_EXAMPLES = [
    ("prompt is too long: 210000 tokens > 200000 maximum", "provider_context_too_long"),
    ("This model's maximum context length is 128000 tokens.", "provider_context_too_long"),
    ("input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000",
     "provider_context_too_long"),
    ("The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
     "provider_context_too_long"),
    ("Input is too long for requested model.", "provider_context_too_long"),
    ("Your credit balance is too low to access the Anthropic API.", "provider_quota_exceeded"),
    ("You exceeded your current quota, please check your plan and billing details.",
     "provider_quota_exceeded"),
    ("Your request was rejected as a result of our safety system.", "provider_content_filtered"),
    ("Output blocked by content filtering policy", "provider_content_filtered"),
    ("The server is overloaded or not ready yet.", "provider_overloaded"),
    ("Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21"
     " have exceeded token rate limit of your current OpenAI S0 pricing tier.",
     "provider_rate_limited"),
    ("The API deployment for this resource does not exist.", "provider_model_not_found"),
    ("Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum"
     " context length", "provider_context_too_long"),
    ("server busy, please try again.  maximum pending requests exceeded", "provider_overloaded"),
    ('model "llama3.2" not found, try pulling it first', "provider_model_not_found"),
    ("the input length exceeds the context length", "provider_context_too_long"),
    ("too many tokens: total number of tokens in the prompt cannot exceed 4081 - received 4702.",
     "provider_context_too_long"),
]  # fmt: skip


# the services behind the openai SDK's base_url (_classify/compatible_bodies.py)
COMPATIBLE_EXAMPLES = [
    ("This endpoint's maximum context length is 131072 tokens. However, you requested about "
     "140000 tokens", "provider_context_too_long"),
    ("openai/gpt-9 is not a valid model ID", "provider_model_not_found"),
    ("No endpoints found for openai/gpt-4o.", "provider_model_not_found"),
    ("Insufficient credits. Add more using https://openrouter.ai/settings/credits",
     "provider_quota_exceeded"),
    ("Insufficient Balance", "provider_quota_exceeded"),
    ("Model Not Exist", "provider_model_not_found"),
    ("Content Exists Risk", "provider_content_filtered"),
    ("The decoder prompt (length 5000) is longer than the maximum model length of 4096.",
     "provider_context_too_long"),
    ("The number of tokens to keep from the initial prompt is greater than the context length "
     "(n_keep: 13055>= n_ctx: 4096).", "provider_context_too_long"),
    ("Trying to keep the first 111490 tokens when context the overflows.",
     "provider_context_too_long"),
    ("Context size has been exceeded.", "provider_context_too_long"),
    ("No models loaded. Please load a model in the developer page.", "provider_model_not_found"),
]  # fmt: skip


def test_every_service_sentence_names_its_own_code() -> None:
    assert [code for _, code in COMPATIBLE_EXAMPLES] == [code for _, code in COMPATIBLE_PHRASES]
    for text, code in COMPATIBLE_EXAMPLES:
        assert (message_code(text), message_code("  " + text.upper())) == (code, code)
        assert message_code("The user wrote: " + text) is None


def test_every_message_phrase_names_its_own_code() -> None:
    assert [code for _, code in PHRASE_EXAMPLES] == [code for _, code in MESSAGE_PHRASES]
    for text, code in PHRASE_EXAMPLES:
        assert (message_code(text), message_code("  " + text.upper())) == (code, code)
        assert message_code("The user wrote: " + text) is None


@pytest.mark.parametrize("body", [b'{"error": ', "{not json", b"\xff\xfe", 42, [1, 2], {"a": 1}])
def test_from_http_takes_garbage_bodies(body: Any) -> None:
    assert rc.from_http(500, None, body).code == "provider_server_error"


def test_a_phrase_table_names_the_branch_that_matched() -> None:
    table = PhraseTable([(r"^first\b", "a"), (r"^second \d+", "b")])
    assert [table.code(t) for t in ("First thing", " SECOND 42", "the second 42", "")] == [
        "a", "b", None, None,
    ]  # fmt: skip
    assert table.in_lines("noise\nsecond 7 failed \nfirst") == ("b", "second 7 failed")
    assert table.in_lines("no phrase here") is None
    with pytest.raises(ValueError, match="capturing group"):
        PhraseTable([(r"^(own) group", "a")]).code("own group")

"""recoverable.testing.FakeProvider, driven by the real openai, anthropic and google-genai SDKs.

Every client talks only to 127.0.0.1 with its own retries off; each test asserts what the
SDK really raises for each injected fault.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterable, Callable, Iterable, Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from recoverable.testing import FakeProvider, Fault, RecordedRequest, Reply, _http, _render

MSGS: Any = [{"role": "user", "content": "What is the weather in Paris?"}]
HELLO = "Hello from FakeProvider."
RPC = "type.googleapis.com/google.rpc."


def oai(fake: FakeProvider, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="sk-test-abcdef123456", base_url=fake.openai_url, max_retries=0, timeout=timeout
    )


def claude(fake: FakeProvider, timeout: float = 5.0) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="x", base_url=fake.url, max_retries=0, timeout=timeout)


@pytest.fixture
def gem(fake: FakeProvider) -> Iterator[genai.Client]:
    # Keep a reference: a garbage-collected genai.Client closes the HTTP client it lent out.
    options = genai_types.HttpOptions(base_url=fake.url, timeout=5000)
    client = genai.Client(api_key="x", http_options=options)
    yield client
    client.close()


def collect(items: Iterable[Any], into: list[Any], pick: Callable[[Any], Any]) -> None:
    """Consume a stream, keeping what arrived before any exception."""
    for item in items:
        into.append(pick(item))


async def acollect(items: AsyncIterable[Any], into: list[Any]) -> None:
    """Consume an async stream of typed events, keeping their types."""
    async for item in items:
        into.append(item.type)


def no_proxy_opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def summary(requests: list[RecordedRequest]) -> list[tuple[str, str, str | None, bool, str | None]]:
    return [(r.api, r.path, r.model, r.stream, r.fault) for r in requests]


# -- happy paths ------------------------------------------------------------------------------


def test_openai_chat_text(fake: FakeProvider) -> None:
    completion = oai(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    assert completion.choices[0].message.content == HELLO
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "gpt-4o"
    assert completion.id == "chatcmpl-fake0001"
    [request] = fake.requests
    assert summary([request]) == [("openai_chat", "/v1/chat/completions", "gpt-4o", False, None)]
    assert request.method == "POST"
    assert request.headers["authorization"] == "Bearer sk-test-abcdef123456"
    assert request.json["messages"] == MSGS
    assert json.loads(request.body) == request.json
    assert request.query == {}


def test_openai_chat_stream_text_with_usage(fake: FakeProvider) -> None:
    fake.reply(Reply.text("one two three"))
    stream = oai(fake).chat.completions.create(
        model="gpt-4o-mini", messages=MSGS, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    deltas = [c.choices[0].delta.content for c in chunks if c.choices]
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert deltas == ["", "one", " two", " three", None]
    assert finishes == [None, None, None, None, "stop"]
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 3
    assert {c.model for c in chunks} == {"gpt-4o-mini"}
    assert summary(fake.requests) == [
        ("openai_chat", "/v1/chat/completions", "gpt-4o-mini", True, None)
    ]


def test_openai_chat_tool_call(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
    client = oai(fake)
    completion = client.chat.completions.create(model="gpt-4o", messages=MSGS)
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    [call] = choice.message.tool_calls or []
    assert call.type == "function"
    assert (call.id, call.function.name, call.function.arguments) == (
        "call_fake0001",
        "get_weather",
        '{"city":"Paris"}',
    )
    with client.chat.completions.stream(model="gpt-4o", messages=MSGS) as stream:
        final = stream.get_final_completion()
    [streamed] = final.choices[0].message.tool_calls or []
    assert (streamed.id, streamed.function.name, json.loads(streamed.function.arguments)) == (
        "call_fake0002",
        "get_weather",
        {"city": "Paris"},
    )
    assert final.choices[0].finish_reason == "tool_calls"


def test_openai_responses_text_and_stream(fake: FakeProvider) -> None:
    client = oai(fake)
    response = client.responses.create(model="gpt-4.1", input="hi")
    assert (response.output_text, response.status, response.model) == (
        HELLO,
        "completed",
        "gpt-4.1",
    )
    events = list(client.responses.create(model="gpt-4.1", input="hi", stream=True))
    assert [e.type for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(11))
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == HELLO
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == HELLO
    assert summary(fake.requests) == [
        ("openai_responses", "/v1/responses", "gpt-4.1", False, None),
        ("openai_responses", "/v1/responses", "gpt-4.1", True, None),
    ]


def test_openai_responses_function_call(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
    client = oai(fake)
    [item] = client.responses.create(model="gpt-4.1", input="hi").output
    assert item.type == "function_call"
    assert (item.name, item.arguments, item.call_id) == (
        "get_weather",
        '{"city":"Paris"}',
        "call_fake0001",
    )
    events = list(client.responses.create(model="gpt-4.1", input="hi", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-3:] == [
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert "".join(deltas) == '{"city":"Paris"}'
    assert len(deltas) == 3


def test_anthropic_text_and_stream(fake: FakeProvider) -> None:
    client = claude(fake)
    message = client.messages.create(model="claude-fake-1", max_tokens=64, messages=MSGS)
    assert (message.content[0].type, message.stop_reason, message.model) == (
        "text",
        "end_turn",
        "claude-fake-1",
    )
    assert message.content[0].text == HELLO
    assert message.id == "msg_fake0001"
    events = list(
        client.messages.create(model="claude-fake-1", max_tokens=64, messages=MSGS, stream=True)
    )
    assert [e.type for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[6].delta.stop_reason == "end_turn"
    with client.messages.stream(model="claude-x", max_tokens=64, messages=MSGS) as stream:
        assert stream.get_final_text() == HELLO
    [first, second, third] = fake.requests
    assert summary([first, second]) == [
        ("anthropic", "/v1/messages", "claude-fake-1", False, None),
        ("anthropic", "/v1/messages", "claude-fake-1", True, None),
    ]
    # anthropic 2.x sends the key as a bearer token, not x-api-key.
    assert third.headers["authorization"] == "Bearer x"
    assert "anthropic-version" in third.headers


def test_anthropic_tool_use_and_count_tokens(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
    client = claude(fake)
    message = client.messages.create(model="claude-x", max_tokens=64, messages=MSGS)
    [block] = message.content
    assert message.stop_reason == "tool_use"
    assert block.type == "tool_use"
    assert (block.id, block.name, block.input) == (
        "toolu_fake0001",
        "get_weather",
        {"city": "Paris"},
    )
    with client.messages.stream(model="claude-x", max_tokens=64, messages=MSGS) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    assert final.content[0].type == "tool_use"
    assert final.content[0].input == {"city": "Paris"}
    count = client.messages.count_tokens(model="claude-x", messages=MSGS)
    request = fake.requests[-1]
    assert count.input_tokens == len(request.body) // 4
    assert (request.api, request.path, request.stream) == (
        "anthropic",
        "/v1/messages/count_tokens",
        False,
    )


def test_gemini_text_stream_tool_and_count(fake: FakeProvider, gem: genai.Client) -> None:
    client = gem
    response = client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert response.text == HELLO
    assert response.model_version == "gemini-2.5-flash"
    assert response.candidates is not None
    assert response.candidates[0].finish_reason == genai_types.FinishReason.STOP
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    assert [c.text for c in chunks] == ["Hello", " from", " FakeProvider."]
    assert [c.candidates[0].finish_reason if c.candidates else None for c in chunks] == [
        None,
        None,
        genai_types.FinishReason.STOP,
    ]
    assert chunks[-1].usage_metadata is not None
    assert chunks[-1].usage_metadata.candidates_token_count == len(HELLO) // 4
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
    [call] = (
        client.models.generate_content(model="gemini-2.5-flash", contents="hi").function_calls or []
    )
    assert (call.name, call.args) == ("get_weather", {"city": "Paris"})
    count = client.models.count_tokens(model="gemini-2.5-flash", contents="hi")
    assert count.total_tokens == len(fake.requests[-1].body) // 4
    paths = [(r.api, r.path, r.model, r.stream, r.query) for r in fake.requests]
    assert paths == [
        ("gemini", "/v1/models/gemini-2.5-flash:generateContent", "gemini-2.5-flash", False, {}),
        (
            "gemini",
            "/v1/models/gemini-2.5-flash:streamGenerateContent",
            "gemini-2.5-flash",
            True,
            {"alt": "sse"},
        ),
        ("gemini", "/v1/models/gemini-2.5-flash:generateContent", "gemini-2.5-flash", False, {}),
        ("gemini", "/v1/models/gemini-2.5-flash:countTokens", "gemini-2.5-flash", False, {}),
    ]
    assert fake.requests[0].headers["x-goog-api-key"] == "x"


def test_models_lists(fake: FakeProvider) -> None:
    assert [m.id for m in oai(fake).models.list()] == ["fake-model"]
    assert [m.id for m in claude(fake).models.list()] == ["fake-model"]
    assert [(r.api, r.method, r.path) for r in fake.requests] == [
        ("openai_models", "GET", "/v1/models"),
        ("anthropic", "GET", "/v1/models"),
    ]


# -- HTTP error faults ------------------------------------------------------------------------


def test_openai_rate_limited_retry_after(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=7))
    with pytest.raises(openai.RateLimitError) as info:
        oai(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    e = info.value
    assert e.status_code == 429
    assert e.response.headers["retry-after"] == "7"
    assert "retry-after-ms" not in e.response.headers
    assert e.code == "rate_limit_exceeded"
    assert e.type == "requests"
    assert e.request_id == "req_fake_0001"
    message = (
        "Rate limit reached for gpt-4o in organization org-fake on requests per min (RPM): Limit 3,"
        " Used 3, Requested 1. Please try again in 7s. Visit"
        " https://platform.openai.com/account/rate-limits to learn more."
    )
    assert e.body == {
        "message": message,
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    assert str(e) == f"Error code: 429 - {message}"
    assert summary(fake.requests) == [
        ("openai_chat", "/v1/chat/completions", "gpt-4o", False, "rate_limited")
    ]


def test_openai_rate_limited_retry_after_ms_raw_body(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=0.2, retry_after_ms=200))
    with pytest.raises(openai.RateLimitError) as info:
        oai(fake).responses.create(model="gpt-4.1", input="hi")
    headers = info.value.response.headers
    assert (headers["retry-after"], headers["retry-after-ms"], headers["x-request-id"]) == (
        "0.2",
        "200",
        "req_fake_0001",
    )
    raw = info.value.response.content
    assert raw.startswith(b'{\n    "error": {\n        "message": "Rate limit reached for gpt-4.1')


def test_openai_insufficient_quota(fake: FakeProvider) -> None:
    fake.fail(Fault.insufficient_quota())
    with pytest.raises(openai.RateLimitError) as info:
        oai(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    assert (info.value.status_code, info.value.code, info.value.type) == (
        429,
        "insufficient_quota",
        "insufficient_quota",
    )
    assert info.value.message == (
        "Error code: 429 - You exceeded your current quota, please check your plan and billing"
        " details. For more information on this error, read the docs:"
        " https://platform.openai.com/docs/guides/error-codes/api-errors."
    )


def test_anthropic_overloaded(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded())
    with pytest.raises(anthropic.OverloadedError) as info:
        claude(fake).messages.create(model="claude-x", max_tokens=8, messages=MSGS)
    e = info.value
    assert (e.status_code, e.type, e.request_id) == (529, "overloaded_error", "req_fake_0001")
    assert e.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": "req_fake_0001",
    }
    assert e.response.content == (
        b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},'
        b'"request_id":"req_fake_0001"}'
    )
    assert e.response.headers["request-id"] == "req_fake_0001"
    assert str(e) == (
        "Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error', 'message':"
        " 'Overloaded'}, 'request_id': 'req_fake_0001'}"
    )


def test_anthropic_credit_balance_is_a_400(fake: FakeProvider) -> None:
    fake.fail(Fault.insufficient_quota())
    with pytest.raises(anthropic.BadRequestError) as info:
        claude(fake).messages.create(model="claude-x", max_tokens=8, messages=MSGS)
    assert (info.value.status_code, info.value.type) == (400, "invalid_request_error")
    assert info.value.body["error"]["message"] == (
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing"
        " to upgrade or purchase credits."
    )


def test_gemini_rate_limited_retry_info(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.rate_limited(retry_delay="38s"))
    with pytest.raises(genai_errors.ClientError) as info:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    e = info.value
    assert (e.code, e.status) == (429, "RESOURCE_EXHAUSTED")
    details = e.details["error"]["details"]
    assert [d["@type"] for d in details] == [RPC + "QuotaFailure", RPC + "Help", RPC + "RetryInfo"]
    assert details[2] == {"@type": RPC + "RetryInfo", "retryDelay": "38s"}
    violation = details[0]["violations"][0]
    assert violation["quotaId"] == "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
    assert violation["quotaDimensions"] == {"location": "global", "model": "gemini-2.0-flash"}
    assert e.message is not None
    assert e.message.endswith("model: gemini-2.0-flash\nPlease retry in 38s.")
    assert str(e).startswith("429 RESOURCE_EXHAUSTED. {'error': {'code': 429, 'message': ")


def test_gemini_retry_delay_from_retry_after(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.rate_limited(retry_after_ms=1500))
    with pytest.raises(genai_errors.ClientError) as info:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    assert info.value.details["error"]["details"][-1] == {
        "@type": RPC + "RetryInfo",
        "retryDelay": "1.5s",
    }
    assert info.value.response.headers["retry-after-ms"] == "1500"


def test_gemini_insufficient_quota_is_per_day(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.insufficient_quota())
    with pytest.raises(genai_errors.ClientError) as info:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    assert (info.value.code, info.value.status) == (429, "RESOURCE_EXHAUSTED")
    [quota] = [
        d for d in info.value.details["error"]["details"] if d["@type"].endswith("QuotaFailure")
    ]
    assert quota["violations"][0]["quotaId"] == "GenerateRequestsPerDayPerProjectPerModel-FreeTier"


def test_gemini_invalid_key_is_a_400(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.unauthorized())
    with pytest.raises(genai_errors.ClientError) as info:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    e = info.value
    assert (e.code, e.status, e.message) == (
        400,
        "INVALID_ARGUMENT",
        "API key not valid. Please pass a valid API key.",
    )
    assert e.details["error"]["details"][0] == {
        "@type": RPC + "ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    }


def test_gemini_content_policy_is_a_200(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.content_policy(), times=2)
    client = gem
    response = client.models.generate_content(model="gemini-2.0-flash", contents="hi")
    assert response.text is None
    assert response.candidates is not None
    assert response.candidates[0].finish_reason == genai_types.FinishReason.SAFETY
    chunks = list(client.models.generate_content_stream(model="gemini-2.0-flash", contents="hi"))
    assert [c.candidates[0].finish_reason if c.candidates else None for c in chunks] == [
        genai_types.FinishReason.SAFETY
    ]
    assert [r.fault for r in fake.requests] == ["content_policy", "content_policy"]


OPENAI_ERRORS = [
    (Fault.rate_limited(), openai.RateLimitError, 429, "rate_limit_exceeded", "requests"),
    (
        Fault.insufficient_quota(),
        openai.RateLimitError,
        429,
        "insufficient_quota",
        "insufficient_quota",
    ),
    (
        Fault.payment_required(),
        openai.APIStatusError,
        402,
        "billing_not_active",
        "billing_not_active",
    ),
    (
        Fault.unauthorized(),
        openai.AuthenticationError,
        401,
        "invalid_api_key",
        "invalid_request_error",
    ),
    (Fault.forbidden(), openai.PermissionDeniedError, 403, None, "invalid_request_error"),
    (
        Fault.model_not_found(),
        openai.NotFoundError,
        404,
        "model_not_found",
        "invalid_request_error",
    ),
    (
        Fault.context_too_long(),
        openai.BadRequestError,
        400,
        "context_length_exceeded",
        "invalid_request_error",
    ),
    (
        Fault.content_policy(),
        openai.BadRequestError,
        400,
        "content_policy_violation",
        "invalid_request_error",
    ),
    (Fault.server_error(), openai.InternalServerError, 500, None, "server_error"),
    (Fault.unavailable(), openai.InternalServerError, 503, None, "server_error"),
    (Fault.overloaded(), openai.InternalServerError, 529, None, "overloaded_error"),
    (Fault.stream_overloaded(), openai.InternalServerError, 529, None, "overloaded_error"),
]


@pytest.mark.parametrize(("fault", "cls", "status", "code", "etype"), OPENAI_ERRORS)
def test_openai_error_matrix(
    fake: FakeProvider,
    fault: Fault,
    cls: type[Exception],
    status: int,
    code: str | None,
    etype: str,
) -> None:
    fake.fail(fault)
    with pytest.raises(cls) as info:
        oai(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    e = info.value
    assert isinstance(e, openai.APIStatusError)
    assert type(e) is cls
    assert (e.status_code, e.code, e.type, e.request_id) == (status, code, etype, "req_fake_0001")
    assert isinstance(e.body, dict)
    assert list(e.body) == ["message", "type", "param", "code"]
    assert fake.requests[0].fault == fault.name


ANTHROPIC_ERRORS = [
    (Fault.rate_limited(), anthropic.RateLimitError, 429, "rate_limit_error"),
    (Fault.insufficient_quota(), anthropic.BadRequestError, 400, "invalid_request_error"),
    (Fault.payment_required(), anthropic.PaymentRequiredError, 402, "billing_error"),
    (Fault.unauthorized(), anthropic.AuthenticationError, 401, "authentication_error"),
    (Fault.forbidden(), anthropic.PermissionDeniedError, 403, "permission_error"),
    (Fault.model_not_found(), anthropic.NotFoundError, 404, "not_found_error"),
    (Fault.context_too_long(), anthropic.BadRequestError, 400, "invalid_request_error"),
    (Fault.content_policy(), anthropic.BadRequestError, 400, "invalid_request_error"),
    (Fault.server_error(), anthropic.InternalServerError, 500, "api_error"),
    (Fault.unavailable(), anthropic.ServiceUnavailableError, 503, "api_error"),
    (Fault.overloaded(), anthropic.OverloadedError, 529, "overloaded_error"),
    (Fault.stream_overloaded(), anthropic.OverloadedError, 529, "overloaded_error"),
]


@pytest.mark.parametrize(("fault", "cls", "status", "etype"), ANTHROPIC_ERRORS)
def test_anthropic_error_matrix(
    fake: FakeProvider, fault: Fault, cls: type[Exception], status: int, etype: str
) -> None:
    fake.fail(fault)
    with pytest.raises(cls) as info:
        claude(fake).messages.create(model="claude-x", max_tokens=8, messages=MSGS)
    e = info.value
    assert isinstance(e, anthropic.APIStatusError)
    assert type(e) is cls
    assert (e.status_code, e.type, e.request_id) == (status, etype, "req_fake_0001")
    assert isinstance(e.body, dict)
    assert list(e.body) == ["type", "error", "request_id"]
    assert list(e.body["error"]) == ["type", "message"]


GEMINI_ERRORS = [
    (Fault.rate_limited(), genai_errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
    (Fault.insufficient_quota(), genai_errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
    (Fault.payment_required(), genai_errors.ClientError, 402, "FAILED_PRECONDITION"),
    (Fault.unauthorized(), genai_errors.ClientError, 400, "INVALID_ARGUMENT"),
    (Fault.forbidden(), genai_errors.ClientError, 403, "PERMISSION_DENIED"),
    (Fault.model_not_found("gemini-9"), genai_errors.ClientError, 404, "NOT_FOUND"),
    (Fault.context_too_long(), genai_errors.ClientError, 400, "INVALID_ARGUMENT"),
    (Fault.server_error(), genai_errors.ServerError, 500, "INTERNAL"),
    (Fault.unavailable(), genai_errors.ServerError, 503, "UNAVAILABLE"),
    (Fault.overloaded(), genai_errors.ServerError, 529, "UNAVAILABLE"),
]


@pytest.mark.parametrize(("fault", "cls", "code", "status"), GEMINI_ERRORS)
def test_gemini_error_matrix(
    fake: FakeProvider,
    gem: genai.Client,
    fault: Fault,
    cls: type[Exception],
    code: int,
    status: str,
) -> None:
    fake.fail(fault)
    with pytest.raises(cls) as info:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    e = info.value
    assert isinstance(e, genai_errors.APIError)
    assert type(e) is cls
    assert (e.code, e.status) == (code, status)
    assert list(e.details) == ["error"]
    assert list(e.details["error"])[:3] == ["code", "message", "status"]


def test_exact_messages_per_provider(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.context_too_long(), times=3)
    fake.fail(Fault.model_not_found(), times=3)
    with pytest.raises(openai.BadRequestError) as o:
        oai(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    with pytest.raises(anthropic.BadRequestError) as a:
        claude(fake).messages.create(model="claude-x", max_tokens=8, messages=MSGS)
    with pytest.raises(genai_errors.ClientError) as g:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    assert (o.value.code, o.value.param) == ("context_length_exceeded", "messages")
    assert o.value.body == {
        "message": "This model's maximum context length is 128000 tokens. However, your messages"
        " resulted in 130000 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
    assert a.value.body["error"]["message"] == (
        "prompt is too long: 210000 tokens > 200000 maximum"
    )
    assert g.value.message == (
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
    )
    with pytest.raises(openai.NotFoundError) as o404:
        oai(fake).chat.completions.create(model="gpt-9", messages=MSGS)
    with pytest.raises(anthropic.NotFoundError) as a404:
        claude(fake).messages.create(model="claude-9", max_tokens=8, messages=MSGS)
    with pytest.raises(genai_errors.ClientError) as g404:
        gem.models.generate_content(model="gemini-9", contents="hi")
    assert o404.value.message == (
        "Error code: 404 - The model `gpt-9` does not exist or you do not have access to it."
    )
    assert a404.value.body["error"]["message"] == "model: claude-9"
    assert g404.value.message == (
        "models/gemini-9 is not found for API version v1, or is not supported for"
        " generateContent. Call ListModels to see the list of available models and their"
        " supported methods."
    )
    assert [r.fault for r in fake.requests] == ["context_too_long"] * 3 + ["model_not_found"] * 3


# -- in-stream errors -------------------------------------------------------------------------


def test_anthropic_stream_overloaded_has_status_200(fake: FakeProvider) -> None:
    fake.fail(Fault.stream_overloaded())
    stream = claude(fake).messages.create(
        model="claude-x", max_tokens=8, messages=MSGS, stream=True
    )
    seen: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as info:
        collect(stream, seen, lambda e: e.type)
    e = info.value
    assert type(e) is anthropic.APIStatusError  # not OverloadedError: the status is the stream's
    assert (e.status_code, e.type, e.request_id) == (200, "overloaded_error", "req_fake_0001")
    assert e.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    assert (
        str(e)
        == "{'type': 'error', 'error': {'type': 'overloaded_error', 'message': 'Overloaded'}}"
    )
    assert seen == ["message_start", "content_block_start", "content_block_delta"]
    assert summary(fake.requests) == [
        ("anthropic", "/v1/messages", "claude-x", True, "stream_overloaded")
    ]


def test_openai_chat_stream_error_has_no_status(fake: FakeProvider) -> None:
    fake.fail(Fault.stream_overloaded())
    stream = oai(fake).chat.completions.create(model="gpt-4o", messages=MSGS, stream=True)
    seen: list[str | None] = []
    with pytest.raises(openai.APIError) as info:
        collect(stream, seen, lambda c: c.choices[0].delta.content)
    e = info.value
    assert type(e) is openai.APIError
    assert not hasattr(e, "status_code")
    assert str(e) == "The server is overloaded or not ready yet."
    assert (e.code, e.type) == (None, "server_error")
    assert e.body == {
        "message": "The server is overloaded or not ready yet.",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert seen == ["", "Hello"]


def test_openai_responses_stream_error(fake: FakeProvider) -> None:
    fake.fail(Fault.stream_overloaded())
    stream = oai(fake).responses.create(model="gpt-4.1", input="hi", stream=True)
    seen: list[str] = []
    with pytest.raises(openai.APIError) as info:
        collect(stream, seen, lambda e: e.type)
    assert type(info.value) is openai.APIError
    assert (info.value.code, info.value.type) == ("server_error", "server_error")
    assert seen == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
    ]


def test_gemini_stream_error_chunk(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.stream_overloaded())
    stream = gem.models.generate_content_stream(model="gemini-2.0-flash", contents="hi")
    seen: list[str | None] = []
    with pytest.raises(genai_errors.ServerError) as info:
        collect(stream, seen, lambda c: c.text)
    assert (info.value.code, info.value.status, info.value.message) == (
        503,
        "UNAVAILABLE",
        "The model is overloaded. Please try again later.",
    )
    assert seen == ["Hello"]


# -- transport faults -------------------------------------------------------------------------


def test_drop_is_a_connection_error_not_a_timeout(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.drop(), times=3)
    with pytest.raises(openai.APIConnectionError) as o:
        oai(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    with pytest.raises(anthropic.APIConnectionError) as a:
        claude(fake).messages.create(model="claude-x", max_tokens=8, messages=MSGS)
    # google-genai does not wrap transport errors: the raw httpx2 exception escapes.
    with pytest.raises(httpx2.RemoteProtocolError) as g:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    assert not isinstance(o.value, openai.APITimeoutError)
    assert not isinstance(a.value, anthropic.APITimeoutError)
    assert str(o.value) == str(a.value) == "Connection error."
    assert isinstance(o.value.__cause__, httpx2.RemoteProtocolError)
    assert isinstance(a.value.__cause__, httpx2.RemoteProtocolError)
    assert str(o.value.__cause__) == "Server disconnected without sending a response."
    assert str(g.value) == "Server disconnected without sending a response."
    assert [r.fault for r in fake.requests] == ["drop", "drop", "drop"]


def test_cut_stream_openai_raises_connection_error(fake: FakeProvider) -> None:
    fake.fail(Fault.cut_stream(after=2))
    stream = oai(fake).chat.completions.create(model="gpt-4o", messages=MSGS, stream=True)
    seen: list[str | None] = []
    with pytest.raises(openai.APIConnectionError) as info:
        collect(stream, seen, lambda c: c.choices[0].delta.content)
    assert seen == ["", "Hello", " from"]
    assert str(info.value.__cause__) == (
        "peer closed connection without sending complete message body (incomplete chunked read)"
    )
    assert summary(fake.requests) == [
        ("openai_chat", "/v1/chat/completions", "gpt-4o", True, "cut_stream")
    ]


def test_cut_stream_anthropic_leaks_raw_httpx2_error(fake: FakeProvider) -> None:
    fake.fail(Fault.cut_stream(after=1))
    stream = claude(fake).messages.create(
        model="claude-x", max_tokens=8, messages=MSGS, stream=True
    )
    seen: list[str] = []
    # anthropic wraps connect/read failures before the response, but not during SSE iteration.
    with pytest.raises(httpx2.RemoteProtocolError) as info:
        collect(stream, seen, lambda e: e.type)
    assert str(info.value) == (
        "peer closed connection without sending complete message body (incomplete chunked read)"
    )
    assert seen == ["message_start", "content_block_start", "content_block_delta"]


def test_cut_stream_gemini(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.cut_stream(after=2))
    stream = gem.models.generate_content_stream(model="gemini-2.0-flash", contents="hi")
    seen: list[str | None] = []
    with pytest.raises(httpx2.RemoteProtocolError):
        collect(stream, seen, lambda c: c.text)
    assert seen == ["Hello", " from"]


def test_graceful_cut_ends_streams_without_finish(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.cut_stream(after=2, graceful=True), times=None)
    client = oai(fake)
    chunks = list(client.chat.completions.create(model="gpt-4o", messages=MSGS, stream=True))
    assert [c.choices[0].delta.content for c in chunks] == ["", "Hello", " from"]
    assert [c.choices[0].finish_reason for c in chunks] == [None, None, None]
    with client.chat.completions.stream(model="gpt-4o", messages=MSGS) as stream:
        completion = stream.get_final_completion()
    assert completion.choices[0].finish_reason is None  # the helper does not notice
    assert completion.choices[0].message.content == "Hello from"
    with claude(fake).messages.stream(model="claude-x", max_tokens=8, messages=MSGS) as st:
        message = st.get_final_message()
    assert message.stop_reason is None  # neither does anthropic's
    assert message.content[0].type == "text"
    assert message.content[0].text == "Hello from"
    with (
        client.responses.stream(model="gpt-4.1", input="hi") as rs,
        pytest.raises(RuntimeError, match=r"Didn't receive a `response\.completed` event"),
    ):
        rs.get_final_response()
    chunks_g = list(gem.models.generate_content_stream(model="gemini-2.0-flash", contents="hi"))
    assert [c.candidates[0].finish_reason if c.candidates else None for c in chunks_g] == [
        None,
        None,
    ]
    assert len(fake.requests) == 5


def test_cut_non_streaming_body(fake: FakeProvider) -> None:
    fake.fail(Fault.cut_stream())
    with pytest.raises(openai.APIConnectionError) as info:
        oai(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    cause = str(info.value.__cause__)
    assert cause.startswith(
        "peer closed connection without sending complete message body (received"
    )


def test_hang_hits_the_client_timeout(fake: FakeProvider) -> None:
    fake.fail(Fault.hang())
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError) as info:
        oai(fake, timeout=0.5).chat.completions.create(model="gpt-4o", messages=MSGS)
    elapsed = time.monotonic() - started
    assert 0.45 <= elapsed < 3.0
    assert str(info.value) == "Request timed out."
    assert isinstance(info.value.__cause__, httpx2.ReadTimeout)
    assert fake.requests[0].fault == "hang"


def test_hang_with_seconds_then_close(fake: FakeProvider) -> None:
    fake.fail(Fault.hang(0.2))
    started = time.monotonic()
    with pytest.raises(anthropic.APIConnectionError) as info:
        claude(fake, timeout=5).messages.create(model="claude-x", max_tokens=8, messages=MSGS)
    elapsed = time.monotonic() - started
    # The server held the request its 0.2 s (its deadline starts after `started`), no more.
    assert 0.2 <= elapsed < 2.0
    assert not isinstance(info.value, anthropic.APITimeoutError)


def test_stop_releases_a_hanging_request() -> None:
    fake = FakeProvider(faults=[(Fault.hang(), None)]).start()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            oai(fake, timeout=10).chat.completions.create(model="gpt-4o", messages=MSGS)
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    deadline = time.monotonic() + 5
    while not fake.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    fake.stop()
    assert time.monotonic() - started < 2.0
    worker.join(5)
    assert not worker.is_alive()
    assert [type(e) for e in errors] == [openai.APIConnectionError]


def test_stop_closes_idle_keep_alive_connections() -> None:
    fake = FakeProvider().start()
    client = oai(fake)
    client.chat.completions.create(model="gpt-4o", messages=MSGS)
    client.chat.completions.create(model="gpt-4o", messages=MSGS)
    started = time.monotonic()
    fake.stop()
    assert time.monotonic() - started < 2.0
    alive = [t for t in threading.enumerate() if t.name.startswith("FakeProvider")]
    assert alive == []
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="gpt-4o", messages=MSGS)
    client.close()


# -- queueing, recording, lifecycle ----------------------------------------------------------


def test_times_one_then_success(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=0.2), times=1)
    client = oai(fake)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="gpt-4o", messages=MSGS)
    completion = client.chat.completions.create(model="gpt-4o", messages=MSGS)
    assert completion.choices[0].message.content == HELLO
    assert len(fake.requests) == 2
    assert [r.fault for r in fake.requests] == ["rate_limited", None]


def test_constructor_faults_fifo_and_reply() -> None:
    faults: list[Fault | tuple[Fault, int | None]] = [(Fault.overloaded(), 2), Fault.server_error()]
    with FakeProvider(faults=faults, reply=Reply.text("ok")) as fake:
        client = claude(fake)
        outcomes: list[str] = []
        for _ in range(4):
            try:
                outcomes.append(
                    client.messages.create(model="m", max_tokens=8, messages=MSGS).content[0].text
                )
            except anthropic.APIStatusError as exc:
                outcomes.append(str(exc.status_code))
        assert outcomes == ["529", "529", "500", "ok"]
        assert [r.fault for r in fake.requests] == [
            "overloaded",
            "overloaded",
            "server_error",
            None,
        ]


def test_times_none_applies_to_every_request(fake: FakeProvider) -> None:
    fake.fail(Fault.unavailable(), times=None)
    fake.fail(Fault.server_error())  # never reached: the head fault never runs out
    client = oai(fake)
    for _ in range(3):
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="gpt-4o", messages=MSGS)
    assert [r.fault for r in fake.requests] == ["unavailable"] * 3
    fake.reset()
    assert fake.requests == []
    completion = client.chat.completions.create(model="gpt-4o", messages=MSGS)
    assert completion.id == "chatcmpl-fake0001"  # reset restarts the ids
    assert [r.fault for r in fake.requests] == [None]


def test_request_ids_count_up(fake: FakeProvider) -> None:
    client = oai(fake)
    ids = [
        client.chat.completions.with_raw_response.create(model="m", messages=MSGS).headers[
            "x-request-id"
        ]
        for _ in range(3)
    ]
    raw = claude(fake).messages.with_raw_response.create(model="m", max_tokens=8, messages=MSGS)
    assert ids == ["req_fake_0001", "req_fake_0002", "req_fake_0003"]
    assert raw.headers["request-id"] == "req_fake_0004"


def test_status_fault_raw_answer(fake: FakeProvider) -> None:
    body = {"error": {"message": "teapot", "type": "teapot_error", "param": None, "code": "tea"}}
    fake.fail(Fault.status(418, body, {"x-custom": "yes"}))
    fake.fail(Fault.status(502, "<html>Bad Gateway</html>"))
    client = oai(fake)
    with pytest.raises(openai.APIStatusError) as info:
        client.chat.completions.create(model="gpt-4o", messages=MSGS)
    assert (info.value.status_code, info.value.code, info.value.type) == (
        418,
        "tea",
        "teapot_error",
    )
    assert info.value.response.headers["x-custom"] == "yes"
    with pytest.raises(openai.InternalServerError) as bad:
        client.chat.completions.create(model="gpt-4o", messages=MSGS)
    assert bad.value.status_code == 502
    assert bad.value.body == "<html>Bad Gateway</html>"
    assert bad.value.response.headers["content-type"] == "text/plain; charset=utf-8"
    assert [r.fault for r in fake.requests] == ["status", "status"]


def test_unknown_path_is_an_openai_404(fake: FakeProvider) -> None:
    request = urllib.request.Request(
        fake.url + "/v2/nothing?x=1", data=b"{}", headers={"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as info:
        no_proxy_opener().open(request, timeout=5)
    assert info.value.code == 404
    assert json.loads(info.value.read()) == {
        "error": {
            "message": "Invalid URL (POST /v2/nothing)",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    [recorded] = fake.requests
    assert (recorded.api, recorded.path, recorded.query, recorded.json, recorded.fault) == (
        "unknown",
        "/v2/nothing",
        {"x": "1"},
        {},
        None,
    )


def test_chunked_request_body_is_read(fake: FakeProvider) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    parts = [b'{"model": "chunky", ', b'"messages": [], ', b'"stream": false}']
    conn.request(
        "POST",
        "/v1/chat/completions",
        body=iter(parts),
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
        encode_chunked=True,
    )
    response = conn.getresponse()
    payload = json.loads(response.read())
    conn.close()
    assert response.status == 200
    assert payload["model"] == "chunky"
    assert payload["choices"][0]["message"]["content"] == HELLO
    [recorded] = fake.requests
    assert recorded.body == b"".join(parts)
    assert recorded.json == {"model": "chunky", "messages": [], "stream": False}


def test_malformed_chunked_body_is_refused(fake: FakeProvider) -> None:
    with socket.create_connection(("127.0.0.1", fake.port), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
        )
        answer = b""
        while chunk := sock.recv(4096):  # the server closes after refusing
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert answer.endswith(b"\r\n\r\nmalformed request body framing")
    assert fake.requests == []


async def test_async_context_manager() -> None:
    async with FakeProvider(faults=[Fault.stream_overloaded()]) as fake:
        client = anthropic.AsyncAnthropic(api_key="x", base_url=fake.url, max_retries=0)
        stream = await client.messages.create(model="m", max_tokens=8, messages=MSGS, stream=True)
        seen: list[str] = []
        with pytest.raises(anthropic.APIStatusError) as info:
            await acollect(stream, seen)
        assert (info.value.status_code, info.value.type) == (200, "overloaded_error")
        ok = await openai.AsyncOpenAI(
            api_key="x", base_url=fake.openai_url, max_retries=0
        ).chat.completions.create(model="gpt-4o", messages=MSGS)
        assert ok.choices[0].message.content == HELLO
        assert [r.fault for r in fake.requests] == ["stream_overloaded", None]
        await client.close()
    with pytest.raises(RuntimeError, match="not running"):
        _ = fake.url


def test_lifecycle_errors() -> None:
    fake = FakeProvider()
    with pytest.raises(RuntimeError, match="not running"):
        _ = fake.url
    fake.start()
    try:
        assert fake.url == f"http://127.0.0.1:{fake.port}"
        assert fake.openai_url == fake.url + "/v1"
        with pytest.raises(RuntimeError, match="already running"):
            fake.start()
    finally:
        fake.stop()
    fake.stop()  # idempotent


@pytest.mark.parametrize("host", ["0.0.0.0", "localhost", "192.168.1.10", "::", ""])
def test_refuses_non_loopback_hosts(host: str) -> None:
    with pytest.raises(ValueError, match="loopback only"):
        FakeProvider(host=host)


def test_ipv6_loopback() -> None:
    fake = FakeProvider(host="::1").start()
    try:
        assert fake.url == f"http://[::1]:{fake.port}"
        completion = oai(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
        assert completion.choices[0].message.content == HELLO
    finally:
        fake.stop()


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="times must be"):
        FakeProvider().fail(Fault.drop(), times=0)
    with pytest.raises(ValueError, match="after must be"):
        Fault.cut_stream(after=-1)
    with pytest.raises(ValueError, match="out of range"):
        Fault.status(99)
    with pytest.raises(ValueError, match="needs a name"):
        Reply.tool_call("")
    with pytest.raises(TypeError, match="not JSON serializable"):
        Reply.tool_call("f", {"x": object()})
    with pytest.raises(TypeError, match="expected a Fault"):
        FakeProvider().fail("drop", times=1)


# -- the pure renderer ------------------------------------------------------------------------


def test_wire_render_is_pure() -> None:
    route = _render.route(
        _http.HttpRequest("POST", "/v1beta/models/gemini-x:streamGenerateContent")
    )
    assert route == _http.Route(
        "gemini", "generate", "gemini-x", True, "v1beta", "streamGenerateContent"
    )
    ctx = _http.Context(seq=7, created=1700000000)
    first = _render.render(route, ctx, Fault.cut_stream(after=1), Reply.text("a b c"))
    second = _render.render(route, ctx, Fault.cut_stream(after=1), Reply.text("a b c"))
    assert first == second
    assert first.status == 200
    assert (first.abort, first.close) == (True, True)
    assert first.events is not None
    assert len(first.events) == 1
    assert first.events[0].endswith(b"\r\n\r\n")
    assert b"finishReason" not in first.events[0]
    assert (
        _render.route(
            _http.HttpRequest("GET", "/v1/models", {"anthropic-version": "2023-06-01"})
        ).api
        == "anthropic"
    )
    with pytest.raises(ValueError, match="sends no answer"):
        _render.render(route, ctx, Fault.drop(), Reply.text("x"))


# -- the command ------------------------------------------------------------------------------


def test_cli_serves_until_terminated() -> None:
    code = (
        "import sys; from recoverable.testing._command import main;"
        " sys.exit(main(['--fault', 'overloaded', '--reply', 'from the cli']))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        assert ready, "the command printed no URL"
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        body = json.dumps({"model": "m", "max_tokens": 8, "messages": MSGS}).encode()
        headers = {"Content-Type": "application/json"}
        opener = no_proxy_opener()
        with pytest.raises(urllib.error.HTTPError) as info:
            opener.open(urllib.request.Request(url + "/v1/messages", body, headers), timeout=5)
        assert info.value.code == 529
        with opener.open(
            urllib.request.Request(url + "/v1/messages", body, headers), timeout=5
        ) as ok:
            assert json.loads(ok.read())["content"] == [{"type": "text", "text": "from the cli"}]
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    log = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert "POST /v1/messages api=anthropic stream=False fault=overloaded" in log


def test_cli_rejects_a_public_host() -> None:
    from recoverable.testing._command import main

    with pytest.raises(SystemExit) as info:
        main(["--host", "0.0.0.0"])
    assert info.value.code == 2


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_cli_rejects_a_port_out_of_range(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    from recoverable.testing._command import main

    with pytest.raises(SystemExit) as info:
        main(["--port", port])
    assert info.value.code == 2
    assert f"expected a port number 0-65535, got {port!r}" in capsys.readouterr().err


def test_fault_named_builds_each_argument_free_fault() -> None:
    from recoverable.testing._faults import FAULT_NAMES

    assert "status" not in FAULT_NAMES  # it needs a code
    for name in FAULT_NAMES:
        assert Fault.named(name) == getattr(Fault, name)()
    with pytest.raises(ValueError, match="unknown fault 'status'"):
        Fault.named("status")


def test_a_cut_whole_body_sends_its_first_half() -> None:
    ctx = _http.Context(seq=1, created=0)
    route = _render.route(
        _http.HttpRequest.parse("POST", "/v1/chat/completions", {}, b'{"model": "m"}')
    )
    whole = _render.render(route, ctx, None, Reply.text(HELLO)).body
    graceful = _render.render(route, ctx, Fault.cut_stream(graceful=True), Reply.text(HELLO))
    aborted = _render.render(route, ctx, Fault.cut_stream(), Reply.text(HELLO))
    assert graceful.body == graceful.sent_body == whole[: len(whole) // 2]
    assert aborted.body == whole  # its Content-Length promises the whole body
    assert aborted.sent_body == whole[: len(whole) // 2]

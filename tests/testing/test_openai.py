"""FakeProvider's OpenAI APIs (Chat Completions, Responses, the model list) as the real openai
SDK reads them over loopback, its retries off: answers, errors, in-stream errors, cut streams.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest

from recoverable.testing import FakeProvider, Fault, Reply

from ..support.providers import HELLO, MSGS, collect, openai_client, summary

# -- answers ----------------------------------------------------------------------------------


def test_openai_chat_text(fake: FakeProvider) -> None:
    completion = openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
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
    stream = openai_client(fake).chat.completions.create(
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
    completion = openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
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


def test_openai_chat_stream_tool_call(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
    with openai_client(fake).chat.completions.stream(model="gpt-4o", messages=MSGS) as stream:
        final = stream.get_final_completion()
    [streamed] = final.choices[0].message.tool_calls or []
    assert (streamed.id, streamed.function.name, json.loads(streamed.function.arguments)) == (
        "call_fake0001",
        "get_weather",
        {"city": "Paris"},
    )
    assert final.choices[0].finish_reason == "tool_calls"


def test_openai_tool_call_then_answers_the_tool_result_with_text(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}, then="Sunny."))
    client = openai_client(fake)
    messages: Any = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.chat.completions.create(model="gpt-4o", messages=messages)
    [call] = first.choices[0].message.tool_calls or []
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
    ]
    second = client.chat.completions.create(model="gpt-4o", messages=messages)
    assert second.choices[0].message.content == "Sunny."
    assert second.choices[0].finish_reason == "stop"


def test_openai_responses_text(fake: FakeProvider) -> None:
    response = openai_client(fake).responses.create(model="gpt-4.1", input="hi")
    assert (response.output_text, response.status, response.model) == (
        HELLO,
        "completed",
        "gpt-4.1",
    )
    assert summary(fake.requests) == [
        ("openai_responses", "/v1/responses", "gpt-4.1", False, None),
    ]


def test_openai_responses_stream_text(fake: FakeProvider) -> None:
    events = list(openai_client(fake).responses.create(model="gpt-4.1", input="hi", stream=True))
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
        ("openai_responses", "/v1/responses", "gpt-4.1", True, None),
    ]


def test_openai_responses_function_call(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
    [item] = openai_client(fake).responses.create(model="gpt-4.1", input="hi").output
    assert item.type == "function_call"
    assert (item.name, item.arguments, item.call_id) == (
        "get_weather",
        '{"city":"Paris"}',
        "call_fake0001",
    )


def test_openai_responses_stream_function_call(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
    events = list(openai_client(fake).responses.create(model="gpt-4.1", input="hi", stream=True))
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


def test_openai_models_list(fake: FakeProvider) -> None:
    assert [m.id for m in openai_client(fake).models.list()] == ["fake-model"]
    assert [(r.api, r.method, r.path) for r in fake.requests] == [
        ("openai_models", "GET", "/v1/models"),
    ]


# -- HTTP errors ------------------------------------------------------------------------------


def test_openai_rate_limited_retry_after(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=7))
    with pytest.raises(openai.RateLimitError) as info:
        openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
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
        openai_client(fake).responses.create(model="gpt-4.1", input="hi")
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
        openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
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
        openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    e = info.value
    assert isinstance(e, openai.APIStatusError)
    assert type(e) is cls
    assert (e.status_code, e.code, e.type, e.request_id) == (status, code, etype, "req_fake_0001")
    assert isinstance(e.body, dict)
    assert list(e.body) == ["message", "type", "param", "code"]
    assert fake.requests[0].fault == fault.name


def test_openai_context_too_long_message(fake: FakeProvider) -> None:
    fake.fail(Fault.context_too_long())
    with pytest.raises(openai.BadRequestError) as o:
        openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    assert (o.value.code, o.value.param) == ("context_length_exceeded", "messages")
    assert o.value.body == {
        "message": "This model's maximum context length is 128000 tokens. However, your messages"
        " resulted in 130000 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
    assert [r.fault for r in fake.requests] == ["context_too_long"]


def test_openai_model_not_found_message(fake: FakeProvider) -> None:
    fake.fail(Fault.model_not_found())
    with pytest.raises(openai.NotFoundError) as o404:
        openai_client(fake).chat.completions.create(model="gpt-9", messages=MSGS)
    assert o404.value.message == (
        "Error code: 404 - The model `gpt-9` does not exist or you do not have access to it."
    )
    assert [r.fault for r in fake.requests] == ["model_not_found"]


# -- in-stream errors -------------------------------------------------------------------------


def test_openai_chat_stream_error_has_no_status(fake: FakeProvider) -> None:
    fake.fail(Fault.stream_overloaded())
    stream = openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS, stream=True)
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
    stream = openai_client(fake).responses.create(model="gpt-4.1", input="hi", stream=True)
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


# -- transport faults -------------------------------------------------------------------------


def test_openai_drop_is_a_connection_error_not_a_timeout(fake: FakeProvider) -> None:
    fake.fail(Fault.drop())
    with pytest.raises(openai.APIConnectionError) as o:
        openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    assert not isinstance(o.value, openai.APITimeoutError)
    assert str(o.value) == "Connection error."
    assert isinstance(o.value.__cause__, httpx2.RemoteProtocolError)
    assert str(o.value.__cause__) == "Server disconnected without sending a response."
    assert [r.fault for r in fake.requests] == ["drop"]


def test_openai_cut_stream_raises_connection_error(fake: FakeProvider) -> None:
    fake.fail(Fault.cut_stream(after=2))
    stream = openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS, stream=True)
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


def test_openai_chat_graceful_cut_ends_the_stream_without_finish(fake: FakeProvider) -> None:
    fake.fail(Fault.cut_stream(after=2, graceful=True))
    chunks = list(
        openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS, stream=True)
    )
    assert [c.choices[0].delta.content for c in chunks] == ["", "Hello", " from"]
    assert [c.choices[0].finish_reason for c in chunks] == [None, None, None]
    assert len(fake.requests) == 1


def test_openai_chat_stream_helper_misses_a_graceful_cut(fake: FakeProvider) -> None:
    fake.fail(Fault.cut_stream(after=2, graceful=True))
    with openai_client(fake).chat.completions.stream(model="gpt-4o", messages=MSGS) as stream:
        completion = stream.get_final_completion()
    assert completion.choices[0].finish_reason is None  # the helper does not notice
    assert completion.choices[0].message.content == "Hello from"
    assert len(fake.requests) == 1


def test_openai_responses_graceful_cut_has_no_completed_event(fake: FakeProvider) -> None:
    fake.fail(Fault.cut_stream(after=2, graceful=True))
    with (
        openai_client(fake).responses.stream(model="gpt-4.1", input="hi") as rs,
        pytest.raises(RuntimeError, match=r"Didn't receive a `response\.completed` event"),
    ):
        rs.get_final_response()
    assert len(fake.requests) == 1


def test_openai_cut_non_streaming_body(fake: FakeProvider) -> None:
    fake.fail(Fault.cut_stream())
    with pytest.raises(openai.APIConnectionError) as info:
        openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    cause = str(info.value.__cause__)
    assert cause.startswith(
        "peer closed connection without sending complete message body (received"
    )

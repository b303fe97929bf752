"""FakeProvider's Anthropic Messages API as the real anthropic SDK reads it over loopback, its
retries off: answers, errors, the in-stream error, cut streams.
"""

from __future__ import annotations

import anthropic
import httpx2
import pytest

from recoverable.testing import FakeProvider, Fault, Reply

from ..support.providers import HELLO, MSGS, anthropic_client, collect, summary

# -- answers ----------------------------------------------------------------------------------


def test_anthropic_text(fake: FakeProvider) -> None:
    message = anthropic_client(fake).messages.create(
        model="claude-fake-1", max_tokens=64, messages=MSGS
    )
    assert (message.content[0].type, message.stop_reason, message.model) == (
        "text",
        "end_turn",
        "claude-fake-1",
    )
    assert message.content[0].text == HELLO
    assert message.id == "msg_fake0001"
    assert summary(fake.requests) == [
        ("anthropic", "/v1/messages", "claude-fake-1", False, None),
    ]


def test_anthropic_stream_events(fake: FakeProvider) -> None:
    events = list(
        anthropic_client(fake).messages.create(
            model="claude-fake-1", max_tokens=64, messages=MSGS, stream=True
        )
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
    assert summary(fake.requests) == [
        ("anthropic", "/v1/messages", "claude-fake-1", True, None),
    ]


def test_anthropic_stream_helper_gets_the_text(fake: FakeProvider) -> None:
    with anthropic_client(fake).messages.stream(
        model="claude-x", max_tokens=64, messages=MSGS
    ) as stream:
        assert stream.get_final_text() == HELLO
    [request] = fake.requests
    # anthropic 2.x sends the key as a bearer token, not x-api-key.
    assert request.headers["authorization"] == "Bearer x"
    assert "anthropic-version" in request.headers


def test_anthropic_tool_use(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
    message = anthropic_client(fake).messages.create(model="claude-x", max_tokens=64, messages=MSGS)
    [block] = message.content
    assert message.stop_reason == "tool_use"
    assert block.type == "tool_use"
    assert (block.id, block.name, block.input) == (
        "toolu_fake0001",
        "get_weather",
        {"city": "Paris"},
    )


def test_anthropic_stream_tool_use(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
    with anthropic_client(fake).messages.stream(
        model="claude-x", max_tokens=64, messages=MSGS
    ) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    assert final.content[0].type == "tool_use"
    assert final.content[0].input == {"city": "Paris"}


def test_anthropic_count_tokens(fake: FakeProvider) -> None:
    count = anthropic_client(fake).messages.count_tokens(model="claude-x", messages=MSGS)
    request = fake.requests[-1]
    assert count.input_tokens == len(request.body) // 4
    assert (request.api, request.path, request.stream) == (
        "anthropic",
        "/v1/messages/count_tokens",
        False,
    )


def test_anthropic_models_list(fake: FakeProvider) -> None:
    assert [m.id for m in anthropic_client(fake).models.list()] == ["fake-model"]
    assert [(r.api, r.method, r.path) for r in fake.requests] == [
        ("anthropic", "GET", "/v1/models"),
    ]


# -- HTTP errors ------------------------------------------------------------------------------


def test_anthropic_overloaded(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded())
    with pytest.raises(anthropic.OverloadedError) as info:
        anthropic_client(fake).messages.create(model="claude-x", max_tokens=8, messages=MSGS)
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
        anthropic_client(fake).messages.create(model="claude-x", max_tokens=8, messages=MSGS)
    assert (info.value.status_code, info.value.type) == (400, "invalid_request_error")
    assert info.value.body["error"]["message"] == (
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing"
        " to upgrade or purchase credits."
    )


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
        anthropic_client(fake).messages.create(model="claude-x", max_tokens=8, messages=MSGS)
    e = info.value
    assert isinstance(e, anthropic.APIStatusError)
    assert type(e) is cls
    assert (e.status_code, e.type, e.request_id) == (status, etype, "req_fake_0001")
    assert isinstance(e.body, dict)
    assert list(e.body) == ["type", "error", "request_id"]
    assert list(e.body["error"]) == ["type", "message"]


def test_anthropic_context_too_long_message(fake: FakeProvider) -> None:
    fake.fail(Fault.context_too_long())
    with pytest.raises(anthropic.BadRequestError) as a:
        anthropic_client(fake).messages.create(model="claude-x", max_tokens=8, messages=MSGS)
    assert a.value.body["error"]["message"] == (
        "prompt is too long: 210000 tokens > 200000 maximum"
    )
    assert [r.fault for r in fake.requests] == ["context_too_long"]


def test_anthropic_model_not_found_message(fake: FakeProvider) -> None:
    fake.fail(Fault.model_not_found())
    with pytest.raises(anthropic.NotFoundError) as a404:
        anthropic_client(fake).messages.create(model="claude-9", max_tokens=8, messages=MSGS)
    assert a404.value.body["error"]["message"] == "model: claude-9"
    assert [r.fault for r in fake.requests] == ["model_not_found"]


# -- in-stream error --------------------------------------------------------------------------


def test_anthropic_stream_overloaded_has_status_200(fake: FakeProvider) -> None:
    fake.fail(Fault.stream_overloaded())
    stream = anthropic_client(fake).messages.create(
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


# -- transport faults -------------------------------------------------------------------------


def test_anthropic_drop_is_a_connection_error_not_a_timeout(fake: FakeProvider) -> None:
    fake.fail(Fault.drop())
    with pytest.raises(anthropic.APIConnectionError) as a:
        anthropic_client(fake).messages.create(model="claude-x", max_tokens=8, messages=MSGS)
    assert not isinstance(a.value, anthropic.APITimeoutError)
    assert str(a.value) == "Connection error."
    assert isinstance(a.value.__cause__, httpx2.RemoteProtocolError)
    assert [r.fault for r in fake.requests] == ["drop"]


def test_anthropic_cut_stream_leaks_raw_httpx2_error(fake: FakeProvider) -> None:
    fake.fail(Fault.cut_stream(after=1))
    stream = anthropic_client(fake).messages.create(
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


def test_anthropic_stream_helper_misses_a_graceful_cut(fake: FakeProvider) -> None:
    fake.fail(Fault.cut_stream(after=2, graceful=True))
    with anthropic_client(fake).messages.stream(
        model="claude-x", max_tokens=8, messages=MSGS
    ) as st:
        message = st.get_final_message()
    assert message.stop_reason is None  # the helper does not notice
    assert message.content[0].type == "text"
    assert message.content[0].text == "Hello from"
    assert len(fake.requests) == 1

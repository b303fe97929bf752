"""The pure rendering behind FakeProvider: routing, what a fault renders to, each provider's
tool-result detection. No socket, no clock: a request in, an HttpResponse out.
"""

from __future__ import annotations

import json

import pytest

from recoverable.testing import Fault, Reply, _http, _render

from ..support.providers import (
    ANTHROPIC_NOT_JSON,
    ANTHROPIC_NOT_OBJECT,
    GEMINI_NOT_JSON,
    GEMINI_NOT_OBJECT,
    HELLO,
    OPENAI_400,
    anthropic_400,
)

GEMINI_STREAM = "/v1beta/models/gemini-x:streamGenerateContent"


def chat_route() -> _http.Route:
    """The route of a Chat Completions request for model "m"."""
    request = _http.HttpRequest.parse("POST", "/v1/chat/completions", {}, b'{"model": "m"}')
    return _render.route(request)


# -- routing ----------------------------------------------------------------------------------


def test_route_reads_gemini_model_version_and_method_from_the_path() -> None:
    route = _render.route(_http.HttpRequest("POST", GEMINI_STREAM))
    assert route == _http.Route(
        "gemini", "generate", "gemini-x", True, "v1beta", "streamGenerateContent"
    )


def test_route_gives_the_model_list_to_anthropic_when_its_header_is_sent() -> None:
    request = _http.HttpRequest("GET", "/v1/models", {"anthropic-version": "2023-06-01"})
    assert _render.route(request).api == "anthropic"


# -- rendering --------------------------------------------------------------------------------


def test_render_is_pure() -> None:
    route = _render.route(_http.HttpRequest("POST", GEMINI_STREAM))
    ctx = _http.Context(seq=7, created=1700000000)
    first = _render.render(route, ctx, Fault.cut_stream(after=1), Reply.text("a b c"))
    second = _render.render(route, ctx, Fault.cut_stream(after=1), Reply.text("a b c"))
    assert first == second


def test_a_cut_gemini_stream_sends_its_first_chunks_without_finish() -> None:
    route = _render.route(_http.HttpRequest("POST", GEMINI_STREAM))
    ctx = _http.Context(seq=7, created=1700000000)
    first = _render.render(route, ctx, Fault.cut_stream(after=1), Reply.text("a b c"))
    assert first.status == 200
    assert (first.abort, first.close) == (True, True)
    assert first.events is not None
    assert len(first.events) == 1
    assert first.events[0].endswith(b"\r\n\r\n")
    assert b"finishReason" not in first.events[0]


def test_render_refuses_a_fault_that_sends_nothing() -> None:
    route = _render.route(_http.HttpRequest("POST", GEMINI_STREAM))
    ctx = _http.Context(seq=7, created=1700000000)
    with pytest.raises(ValueError, match="sends no answer"):
        _render.render(route, ctx, Fault.drop(), Reply.text("x"))


def test_a_graceful_cut_of_a_whole_body_sends_its_first_half() -> None:
    ctx = _http.Context(seq=1, created=0)
    whole = _render.render(chat_route(), ctx, None, Reply.text(HELLO)).body
    fault = Fault.cut_stream(graceful=True)
    graceful = _render.render(chat_route(), ctx, fault, Reply.text(HELLO))
    assert graceful.body == graceful.sent_body == whole[: len(whole) // 2]


def test_an_aborted_whole_body_declares_all_and_sends_its_first_half() -> None:
    ctx = _http.Context(seq=1, created=0)
    whole = _render.render(chat_route(), ctx, None, Reply.text(HELLO)).body
    aborted = _render.render(chat_route(), ctx, Fault.cut_stream(), Reply.text(HELLO))
    assert aborted.body == whole  # its Content-Length promises the whole body
    assert aborted.sent_body == whole[: len(whole) // 2]


# -- tool results, provider by provider -------------------------------------------------------


def test_anthropic_tool_result_is_a_content_block() -> None:
    found = _render.carries_tool_result
    anthropic_result = {"type": "tool_result", "tool_use_id": "t", "content": "x"}
    assert found("anthropic", {"messages": [{"role": "user", "content": [anthropic_result]}]})
    assert not found("anthropic", {"messages": [{"role": "user", "content": "hi"}]})


def test_openai_chat_tool_result_is_a_tool_message() -> None:
    found = _render.carries_tool_result
    assert found("openai_chat", {"messages": [{"role": "tool", "tool_call_id": "c"}]})
    assert not found("openai_chat", {"messages": [{"role": "user", "content": "hi"}]})


def test_openai_responses_tool_result_is_a_call_output_item() -> None:
    found = _render.carries_tool_result
    assert found("openai_responses", {"input": [{"type": "function_call_output", "output": ""}]})
    assert found("openai_responses", {"input": [{"type": "custom_tool_call_output"}]})
    assert not found("openai_responses", {"input": "hi"})


def test_gemini_tool_result_is_a_function_response_part() -> None:
    found = _render.carries_tool_result
    part = {"functionResponse": {"name": "f", "response": {}}}
    assert found("gemini", {"contents": [{"role": "user", "parts": [part]}]})
    assert not found("gemini", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})


def test_no_tool_result_without_a_body_or_a_known_api() -> None:
    found = _render.carries_tool_result
    assert not found("anthropic", None)
    assert not found("unknown", {"messages": [{"role": "tool"}]})


# -- bodies an API cannot read ----------------------------------------------------------------

NOT_UTF8 = "'utf-8' codec can't decode byte 0xff in position 1: invalid start byte"
NO_NAME = "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
INFINITY = "Infinity is not valid JSON"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"", (None, "")),
        (b'{"a": [1, 2.5, "x", null, true]}', ({"a": [1, 2.5, "x", None, True]}, "")),
        (b"[" * 100_000, (None, "nesting too deep")),
        (b"[" * 100_000 + b"]" * 100_000, (None, "nesting too deep")),
        (b'{"x": NaN}', (None, "NaN is not valid JSON")),
        (b'{"x": Infinity}', (None, INFINITY)),
        (b"[-Infinity]", (None, "-Infinity is not valid JSON")),
        (b"1" * 5000, (float("inf"), "")),  # more digits than int() converts
        (b"-" + b"9" * 4300, (-int("9" * 4300), "")),
        (b"1e999", (float("inf"), "")),
        (b'"\xff"', (None, NOT_UTF8)),
        (b"{", (None, NO_NAME)),
        (b" ", (None, "Expecting value: line 1 column 2 (char 1)")),
    ],
)  # fmt: skip
def test_read_json_never_raises_and_says_why_not(body: bytes, expected: tuple[object, str]) -> None:
    assert _http.read_json(body) == expected
    assert _http.parse_json(body) == expected[0]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"", None),
        (b"{}", None),
        (b"[" * 100_000, _http.BodyError("not_json", "nesting too deep")),
        (b"[1]", _http.BodyError("not_object", "array")),
        (b'"x"', _http.BodyError("not_object", "string")),
        (b"1.5", _http.BodyError("not_object", "number")),
        (b"false", _http.BodyError("not_object", "boolean")),
        (b"null", _http.BodyError("not_object", "null")),
    ],
)
def test_a_body_error_says_what_the_body_is(body: bytes, error: _http.BodyError | None) -> None:
    assert _http.HttpRequest.parse("POST", "/v1/messages", {}, body).body_error == error


@pytest.mark.parametrize(
    ("path", "body", "doc"),
    [
        ("/v1/chat/completions", b"[" * 100_000, OPENAI_400),
        ("/v1/chat/completions", b"[1]", OPENAI_400),
        ("/v1/responses", b'{"input": NaN}', OPENAI_400),
        ("/v1/messages", b"[" * 100_000, anthropic_400(ANTHROPIC_NOT_JSON + "nesting too deep")),
        ("/v1/messages", b'{"x": Infinity}', anthropic_400(ANTHROPIC_NOT_JSON + INFINITY)),
        ("/v1/messages/count_tokens", b"null", anthropic_400(ANTHROPIC_NOT_OBJECT + "null")),
        ("/v1beta/models/g:generateContent", b"\xff", GEMINI_NOT_JSON),
        ("/v1beta/models/g:streamGenerateContent", b'"text"', GEMINI_NOT_OBJECT),
        ("/v1/models/g:countTokens", b"[]", GEMINI_NOT_OBJECT),
    ],
)  # fmt: skip
def test_a_body_that_is_not_a_json_object_gets_the_apis_400(
    path: str, body: bytes, doc: dict[str, object]
) -> None:
    request = _http.HttpRequest.parse("POST", path, {}, body)
    route = _render.route(request)
    response = _render.render(route, _render.context(request, route, 1, 0), None, Reply.text(HELLO))
    assert (response.status, json.loads(response.body), response.events) == (400, doc, None)


def test_a_fault_comes_before_the_400_of_a_bad_body() -> None:
    request = _http.HttpRequest.parse("POST", "/v1/messages", {}, b"[1]")
    route = _render.route(request)
    ctx = _render.context(request, route, 7, 0)
    assert _render.render(route, ctx, Fault.rate_limited(), Reply.text(HELLO)).status == 429


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("GET", "/v1/models", {}, 200),
        ("GET", "/v1/models", {"anthropic-version": "2023-06-01"}, 200),
        ("POST", "/v2/nothing", {}, 404),
    ],
)
def test_a_route_that_reads_no_body_ignores_a_bad_one(
    method: str, path: str, headers: dict[str, str], status: int
) -> None:
    request = _http.HttpRequest.parse(method, path, headers, b"[" * 100_000)
    route = _render.route(request)
    ctx = _render.context(request, route, 7, 0)
    assert ctx.body_error is None
    assert _render.render(route, ctx, None, Reply.text(HELLO)).status == status

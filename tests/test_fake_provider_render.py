"""The pure rendering behind FakeProvider: routing, what a fault renders to, each provider's
tool-result detection. No socket, no clock: a request in, an HttpResponse out.
"""

from __future__ import annotations

import pytest

from recoverable.testing import Fault, Reply, _http, _render

from .provider_support import HELLO

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

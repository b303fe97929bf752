"""`classify_response`: a 200 that failed (truncated, filtered, refused), read from the real
SDK response objects parsed from FakeProvider's answers and from their dict forms."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from google import genai
from google.genai import types as genai_types
from hypothesis import given
from hypothesis import strategies as st

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ..support.providers import (
    MESSAGES,
    anthropic_client,
    ask_anthropic,
    ask_google,
    ask_openai,
    openai_client,
)

# --- the bodies each API answers with (what the real API sends, trimmed to its required keys)


def _chat(finish: str, content: str | None = "Hello", refusal: str | None = None) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, "refusal": refusal}
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
    }  # fmt: skip


def _response(status: str, output: list[Any], incomplete: str | None = None) -> dict[str, Any]:
    return {
        "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-4o",
        "status": status, "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
        "tools": [], "error": None,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
    }  # fmt: skip


def _output_message(part: dict[str, Any]) -> list[Any]:
    return [{"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
             "content": [part]}]  # fmt: skip


TEXT_PART = {"type": "output_text", "text": "Hello", "annotations": []}
REFUSAL_PART = {"type": "refusal", "refusal": "I can't help with that."}


def _message(stop: str) -> dict[str, Any]:
    return {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
        "content": [{"type": "text", "text": "Hello"}] if stop != "refusal" else [],
        "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }  # fmt: skip


def _gemini(finish: str | None, block: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"modelVersion": "gemini-2.5-flash"}
    if finish is not None:
        parts = [{"text": "Hello"}] if finish in ("STOP", "MAX_TOKENS") else []
        content = {"role": "model", "parts": parts}
        body["candidates"] = [{"content": content, "finishReason": finish, "index": 0}]
    if block is not None:
        body["promptFeedback"] = {"blockReason": block}
    return body


# --- calling each SDK against the fake ---------------------------------------------------------


def _openai_responses(fake: FakeProvider) -> object:
    return openai_client(fake).responses.create(model="gpt-4o", input="hi")


CALLS: dict[str, Callable[[FakeProvider], object]] = {
    "openai_chat": lambda fake: ask_openai(fake)[0],
    "openai_responses": _openai_responses,
    "anthropic": lambda fake: ask_anthropic(fake)[0],
    "google": lambda fake: ask_google(fake)[0],
}

# (api, body the fake answers with a 200, code or None, source)
CASES: list[tuple[str, dict[str, Any], str | None, str | None]] = [
    ("openai_chat", _chat("stop"), None, None),
    ("openai_chat", _chat("tool_calls", content=None), None, None),
    ("openai_chat", _chat("length"), "provider_output_truncated", "openai"),
    ("openai_chat", _chat("content_filter", content=None), "provider_content_filtered", "openai"),
    ("openai_chat", _chat("stop", content=None, refusal="I can't help with that."),
     "provider_refused", "openai"),
    ("openai_responses", _response("completed", _output_message(TEXT_PART)), None, None),
    ("openai_responses", _response("incomplete", _output_message(TEXT_PART), "max_output_tokens"),
     "provider_output_truncated", "openai"),
    ("openai_responses", _response("incomplete", [], "content_filter"),
     "provider_content_filtered", "openai"),
    ("openai_responses", _response("completed", _output_message(REFUSAL_PART)),
     "provider_refused", "openai"),
    ("anthropic", _message("end_turn"), None, None),
    ("anthropic", _message("tool_use"), None, None),
    ("anthropic", _message("pause_turn"), None, None),
    ("anthropic", _message("max_tokens"), "provider_output_truncated", "anthropic"),
    ("anthropic", _message("refusal"), "provider_refused", "anthropic"),
    ("anthropic", _message("model_context_window_exceeded"), "provider_context_too_long",
     "anthropic"),
    ("google", _gemini("STOP"), None, None),
    ("google", _gemini("MAX_TOKENS"), "provider_output_truncated", "google"),
    ("google", _gemini("SAFETY"), "provider_content_filtered", "google"),
    ("google", _gemini("RECITATION"), "provider_content_filtered", "google"),
    ("google", _gemini("PROHIBITED_CONTENT"), "provider_content_filtered", "google"),
    ("google", _gemini("MALFORMED_FUNCTION_CALL"), "provider_bad_response", "google"),
    ("google", _gemini(None, block="SAFETY"), "provider_content_filtered", "google"),
    ("google", _gemini(None, block="OTHER"), "provider_content_filtered", "google"),
]  # fmt: skip


def _dumped(obj: Any) -> dict[str, Any]:
    """The SDK object's dict form, as a program would keep it (`model_dump`, JSON mode)."""
    return obj.model_dump(mode="json")  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("api", "body", "code", "source"),
    CASES,
    ids=[f"{c[0]}-{c[2] or 'ok'}-{i}" for i, c in enumerate(CASES)],
)
def test_the_sdks_response_objects_and_their_dict_forms(
    fake: FakeProvider, api: str, body: dict[str, Any], code: str | None, source: str | None
) -> None:
    fake.fail(Fault.status(200, body))
    answer = CALLS[api](fake)
    assert type(answer).__module__.split(".")[0] in ("openai", "anthropic", "google")
    for form in (answer, _dumped(answer), body, json.loads(json.dumps(body))):
        detail = rc.classify_response(form)
        if code is None:
            assert detail is None
            continue
        assert detail is not None
        retryable = code == "provider_bad_response"  # a malformed call may come out right
        assert (detail.code, detail.retryable, detail.source) == (code, retryable, source)
        assert detail.user_message == rc.codes[code].user_message


def test_geminis_safety_block_from_the_fake_provider(fake: FakeProvider) -> None:
    # Gemini's content policy is a 200, not an error: FakeProvider sends it so.
    fake.fail(Fault.content_policy())
    detail = rc.classify_response(ask_google(fake)[0])
    assert detail is not None
    assert (detail.code, detail.details["finish_reason"]) == ("provider_content_filtered", "SAFETY")


def test_geminis_safety_block_in_a_stream(fake: FakeProvider) -> None:
    fake.fail(Fault.content_policy())
    client = genai.Client(api_key="fake", http_options=genai_types.HttpOptions(base_url=fake.url))
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    found = [rc.classify_response(chunk) for chunk in chunks]
    assert [d.code for d in found if d is not None] == ["provider_content_filtered"]


def test_a_normal_answer_from_each_sdk_is_none(fake: FakeProvider) -> None:
    assert [rc.classify_response(call(fake)) for call in CALLS.values()] == [None] * len(CALLS)


def _sse(*events: tuple[str | None, dict[str, Any]]) -> str:
    lines = []
    for name, data in events:
        if name:
            lines.append(f"event: {name}")
        lines.append(f"data: {json.dumps(data)}\n")
    return "\n".join(lines) + "\n"


SSE = {"content-type": "text/event-stream"}


def test_an_openai_stream_cut_at_the_token_limit(fake: FakeProvider) -> None:
    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip

    body = _sse((None, chunk({"role": "assistant", "content": "Hel"}, None)),
                (None, chunk({}, "length")))  # fmt: skip
    fake.fail(Fault.status(200, body + "data: [DONE]\n\n", SSE))
    client = openai_client(fake)
    stream = client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True)
    found = [rc.classify_response(chunk) for chunk in stream]
    assert [d.code if d else None for d in found] == [None, "provider_output_truncated"]


def test_an_anthropic_stream_stopped_at_max_tokens(fake: FakeProvider) -> None:
    start = _message("end_turn") | {"stop_reason": None}
    body = _sse(
        ("message_start", {"type": "message_start", "message": start}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "max_tokens",
                           "stop_sequence": None}, "usage": {"output_tokens": 64}}),
        ("message_stop", {"type": "message_stop"}),
    )  # fmt: skip
    fake.fail(Fault.status(200, body, SSE))
    client = anthropic_client(fake)
    with client.messages.stream(model="claude-opus-4-8", max_tokens=64, messages=MESSAGES) as s:
        events = list(s)
        final = s.get_final_message()
    found = [rc.classify_response(event) for event in events]
    assert [d.code for d in found if d is not None] == ["provider_output_truncated"]
    detail = rc.classify_response(final)
    assert detail is not None
    assert detail.code == "provider_output_truncated"


def test_a_failed_response_reads_its_error(fake: FakeProvider) -> None:
    body = _response("failed", []) | {
        "error": {"code": "rate_limit_exceeded", "message": "Rate limit reached."}
    }
    fake.fail(Fault.status(200, body))
    detail = rc.classify_response(_openai_responses(fake))
    assert detail is not None
    assert (detail.code, detail.retryable, detail.source) == (
        "provider_rate_limited", True, "openai",
    )  # fmt: skip


def test_a_claude_code_result_line_reads_as_anthropic() -> None:
    line = {"type": "result", "subtype": "success", "is_error": False, "stop_reason": "max_tokens"}
    detail = rc.classify_response(line)
    assert detail is not None
    assert detail.code == "provider_output_truncated"


def test_no_sdk_is_imported_to_read_a_dict() -> None:
    import subprocess
    import sys

    code = (
        "import sys, recoverable as rc\n"
        "d = rc.classify_response({'choices': [{'finish_reason': 'length', 'message': {}}]})\n"
        "assert d.code == 'provider_output_truncated'\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'google.genai') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


class _Hostile:
    @property
    def choices(self) -> object:
        raise RuntimeError("boom")


@pytest.mark.parametrize(
    "obj",
    [None, "", b"x", 3, 1.5, [], {}, {"choices": "x"}, {"choices": [None, 1, "a"]},
     {"candidates": [{"finishReason": 7}]}, {"stop_reason": ["max_tokens"]}, _Hostile(),
     {"type": "response", "status": "incomplete", "incomplete_details": "x"}],
)  # fmt: skip
def test_what_is_not_a_failed_answer_is_none(obj: object) -> None:
    assert rc.classify_response(obj) is None


KEYS = ["choices", "finish_reason", "message", "refusal", "stop_reason", "candidates",
        "finishReason", "promptFeedback", "blockReason", "status", "output", "type", "object",
        "incomplete_details", "reason", "error", "delta", "content", "response"]  # fmt: skip
JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["length", "max_tokens", "SAFETY", "refusal", "incomplete", "failed"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)
    ),
    max_leaves=30,
)


@given(JSONISH)
def test_any_json_never_raises_and_answers_only_known_codes(value: object) -> None:
    detail = rc.classify_response(value)
    assert detail is None or detail.code in {
        "provider_output_truncated", "provider_content_filtered", "provider_refused",
        "provider_context_too_long", "provider_bad_response", "provider_rate_limited",
        "provider_server_error", "provider_overloaded", "provider_quota_exceeded",
        "provider_auth_failed", "provider_model_not_found", "provider_invalid_request",
        "provider_timeout",
    }  # fmt: skip


def test_shared_and_cyclic_answers_are_read_once() -> None:
    cyclic: dict[str, Any] = {"type": "response.completed"}
    cyclic["response"] = cyclic
    assert rc.classify_response(cyclic) is None
    deep: Any = {"choices": []}
    for _ in range(10_000):
        deep = {"choices": [{"message": deep, "finish_reason": None}]}
    assert rc.classify_response(deep) is None
    wide = {"choices": [{"finish_reason": "stop", "message": {}}] * 100_000
            + [{"finish_reason": "length", "message": {}}]}  # fmt: skip
    assert rc.classify_response(wide) is None  # past the first 64 choices nothing is read

"""The bodies of the services behind the openai SDK's `base_url`, forged: whatever JSON (or
not JSON) OpenRouter's `metadata`, its `raw` relay, vLLM's flat object or LM Studio's string
hold, classify and `from_http` answer a registered code and never raise."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable._core.codes import codes

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                               max_size=4),
    max_leaves=20,
)  # fmt: skip
KEYS = st.sampled_from(["raw", "reasons", "flagged_input", "provider_name", "metadata", "error",
                        "code", "message", "type", "details", "innererror", "object"])  # fmt: skip
forged_objects = st.dictionaries(KEYS | st.text(max_size=6), json_values, max_size=6)
raws = json_values | forged_objects | forged_objects.map(json.dumps) | st.text(max_size=200)
statuses = st.none() | st.integers(min_value=-5, max_value=1000)


def _ok(detail: rc.ErrorDetail) -> None:
    row = codes[detail.code]
    assert detail.retryable == row.retryable or detail.code == "run_timeout"
    assert detail.status is None or 100 <= detail.status <= 599


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(status=statuses, code=json_values, message=json_values, metadata=forged_objects, raw=raws)
def test_openrouter_shaped_bodies(
    status: int | None, code: Any, message: Any, metadata: dict[str, Any], raw: Any
) -> None:
    body = {"error": {"code": code, "message": message, "metadata": {**metadata, "raw": raw}}}
    _ok(rc.from_http(status, None, body))
    _ok(rc.from_http(status, None, json.dumps(body)))


@settings(max_examples=200)
@given(body=forged_objects, text=st.text(max_size=300))
def test_vllm_and_lm_studio_shaped_bodies(body: dict[str, Any], text: str) -> None:
    _ok(rc.from_http(400, None, {"object": "error", **body}))
    _ok(rc.from_http(400, None, {"error": text}))
    _ok(rc.from_http(None, None, {"error": text, **body}))


@settings(max_examples=100, deadline=None)
@given(raw=raws, status=st.sampled_from([400, 402, 403, 404, 429, 500, 502, 503]))
def test_the_openai_sdk_holding_a_forged_relay(raw: Any, status: int) -> None:
    request = httpx.Request("POST", "http://127.0.0.1:9/api/v1/chat/completions")
    body = {"error": {"code": status, "message": "Provider returned error",
                      "metadata": {"raw": raw}}}  # fmt: skip
    response = httpx.Response(status, content=json.dumps(body).encode(), request=request)
    error = openai.APIStatusError("Provider returned error", response=response, body=body["error"])
    _ok(rc.classify(error))


def test_a_relay_nested_thousands_deep_is_read_one_level() -> None:
    raw: Any = "upstream said no"
    for _ in range(3000):
        raw = {"error": {"message": "Provider returned error", "metadata": {"raw": raw}}}
    detail = rc.from_http(502, None, {"error": {"code": 502, "metadata": {"raw": raw}}})
    assert detail.code == "provider_server_error"
    text: Any = "prompt is too long: 210000 tokens > 200000 maximum"
    for _ in range(8):  # as JSON text in JSON text (each level escapes the one inside)
        text = json.dumps({"error": {"message": "Provider returned error",
                                     "metadata": {"raw": text}}})  # fmt: skip
    assert rc.from_http(400, None, text).code == "provider_invalid_request"


def test_a_relay_that_holds_itself() -> None:
    metadata: dict[str, Any] = {}
    body = {"error": {"code": 429, "message": "Provider returned error", "metadata": metadata}}
    metadata["raw"] = body
    assert rc.from_http(429, None, body).code == "provider_rate_limited"


def test_a_relayed_sentence_cannot_plant_a_secret_or_a_command() -> None:
    raw = json.dumps({"error": {"message": "prompt is too long: sk-proj-abcdefghijklmnop1234567890"
                                " ; rm -rf /", "type": "invalid_request_error"}})  # fmt: skip
    detail = rc.from_http(400, None, {"error": {"code": 400, "metadata": {"raw": raw}}})
    assert detail.code == "provider_context_too_long"
    assert "abcdefghijklmnop1234567890" not in detail.message
    assert detail.fix_command is None
    assert "rm -rf" not in detail.user_message

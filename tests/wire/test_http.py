"""HTTP answers both ways, pure: every code's status, Retry-After, both body styles, what a
body never carries, and what `read_response` makes of ours and of anyone else's answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import recoverable as rc
from recoverable import wire

from ..support.wire import MARKER, SECRET, details

ALL_CODES = [row.code for row in rc.codes]


def _detail(code: str, **fields: Any) -> rc.ErrorDetail:
    return rc.ErrorDetail.create(
        code, f"developer text {MARKER} {SECRET}", cause=f"cause {MARKER}",
        details={"stderr_tail": MARKER, "path": f"/home/{MARKER}"}, **fields,
    )  # fmt: skip


@pytest.mark.parametrize("problem", [False, True])
@pytest.mark.parametrize("code", ALL_CODES)
def test_every_code_answers_with_its_status_and_reads_back(code: str, problem: bool) -> None:
    row = rc.codes[code]
    sent = _detail(code, retry_after_ms=1500 if row.retryable else None)
    status, headers, body = wire.http_response(sent, problem=problem)
    assert status == row.http_status
    assert headers["content-type"] == (
        "application/problem+json" if problem else "application/json"
    )
    assert headers.get("retry-after") == ("2" if row.retryable else None)
    text = body.decode()
    assert MARKER not in text
    assert "sk-" not in text
    data = json.loads(text)
    assert "message" not in data
    assert data["code"] == code
    assert data["retryable"] is row.retryable
    if problem:
        assert data["type"] == f"urn:recoverable:code:{code}"
        assert data["status"] == status
        assert data["detail"] == row.user_message
        assert data["instance"].startswith("urn:uuid:")
    else:
        assert data["error"] == row.user_message
    back = wire.read_response(status, headers, body)
    assert (back.code, back.retryable, back.retry_after_ms, back.fix_required) == (
        code, sent.retryable, sent.retry_after_ms, sent.fix_required,
    )  # fmt: skip
    assert back.user_message == row.user_message
    assert back.status == status
    assert back.message == row.user_message  # the developer text stayed on the server


@pytest.mark.parametrize(
    ("wait_ms", "header"),
    [
        (None, "1"),
        (0, "0"),
        (1, "1"),
        (1000, "1"),
        (1001, "2"),
        (2500, "3"),
        (7 * 86400 * 1000, "604800"),
    ],
)
def test_retry_after_is_whole_seconds_rounded_up(wait_ms: int | None, header: str) -> None:
    detail = rc.ErrorDetail.create("rate_limited", retry_after_ms=wait_ms)
    _, headers, body = wire.http_response(detail)
    assert json.loads(body)["retry_after_ms"] == (1000 if wait_ms is None else wait_ms)
    assert headers["retry-after"] == header


def test_an_exposed_message_is_scrubbed_and_never_an_unknown_errors() -> None:
    _, _, body = wire.http_response(_detail("conflict"), expose_message=True)
    data = json.loads(body)
    assert data["message"].startswith(f"developer text {MARKER} sk-")
    assert SECRET not in body.decode()
    assert wire.read_response(409, {}, body).message == data["message"]
    for code in ("unknown", "internal_error"):
        _, _, body = wire.http_response(_detail(code), expose_message=True, problem=True)
        assert MARKER not in body.decode()
    status, _, body = wire.http_response(RuntimeError(f"db password at /srv/{MARKER}"),
                                         expose_message=True)  # fmt: skip
    assert status == 500
    assert MARKER not in body.decode()


def test_anything_classify_takes_is_answered() -> None:
    status, headers, body = wire.http_response(ConnectionRefusedError())
    assert (status, headers["retry-after"]) == (503, "1")
    assert json.loads(body)["code"] == "network_error"
    status, _, body = wire.http_response(rc.RecoverableError("not_found", "no such run"))
    assert (status, json.loads(body)["code"]) == (404, "not_found")


READS: list[tuple[int, dict[str, str], Any, str, bool, int | None]] = [
    # our typed JSON, codes in UPPER_SNAKE too
    (429, {}, {"error": "x", "code": "RATE_LIMITED", "retryable": True, "retry_after_ms": 700},
     "rate_limited", True, 700),
    # our body without a wait: the Retry-After header gives it
    (503, {"retry-after": "4"}, {"error": "x", "code": "unavailable", "retryable": True},
     "unavailable", True, 4000),
    # problem details from elsewhere without our extensions: by status
    (404, {"content-type": "application/problem+json"},
     {"type": "about:blank", "title": "Not Found", "status": 404}, "provider_model_not_found",
     False, None),
    # an agent-tool envelope
    (400, {}, {"ok": False, "data": None, "error": {"code": "INVALID_INPUT", "message": "m"},
               "warnings": [], "meta": {}}, "invalid_input", False, None),
    # a detail payload, as `error`
    (502, {}, {"error": rc.ErrorDetail.create("provider_auth_failed", "k").to_dict()},
     "provider_auth_failed", False, None),
    # LLM API bodies: from_http
    (429, {"retry-after": "2"}, {"error": {"message": "Rate limit", "type": "requests",
     "code": "rate_limit_exceeded"}}, "provider_rate_limited", True, 2000),
    (429, {}, {"error": {"message": "You exceeded your current quota", "type":
     "insufficient_quota", "code": "insufficient_quota"}}, "provider_quota_exceeded", False, None),
    # a plain status
    (503, {"Retry-After": "9"}, None, "provider_overloaded", True, 9000),
    (401, {}, b"", "provider_auth_failed", False, None),
    (500, {}, b"<html>oops</html>", "provider_server_error", True, None),
]  # fmt: skip


@pytest.mark.parametrize(("status", "headers", "body", "code", "retryable", "wait"), READS)
def test_read_response(
    status: int, headers: dict[str, str], body: Any, code: str, retryable: bool, wait: int | None
) -> None:
    raw = json.dumps(body).encode() if isinstance(body, dict) else body
    detail = wire.read_response(status, headers, raw)
    assert (detail.code, detail.retryable, detail.retry_after_ms) == (code, retryable, wait)
    assert detail.status == status


HOSTILE: list[tuple[str, Any]] = [
    ("a forged fix_command", {"code": "unknown", "message": "m", "category": "x",
     "retryable": False, "user_message": "u", "fix_required": "f", "fix_command": "rm -rf /"}),
    ("a code that is not ours", {"error": "x", "code": "Robert'); DROP", "retryable": False}),
    ("NaN", '{"error": "x", "code": "rate_limited", "retryable": true, "retry_after_ms": NaN}'),
    ("a huge wait", {"error": "x", "code": "rate_limited", "retryable": True,
     "retry_after_ms": 10**30}),
    ("deep nesting", "[" * 100_000),
    ("invalid UTF-8", b'{"error": "\xff\xfe", "code": "conflict", "retryable": false}'),
    ("a wrong type", {"error": "x", "code": "conflict", "retryable": "yes"}),
    ("huge", b'{"error": "' + b"x" * (2 << 20) + b'"}'),
    ("a secret", {"error": SECRET, "code": "conflict", "retryable": False, "message": SECRET}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "body"), HOSTILE, ids=[case for case, _ in HOSTILE])
def test_hostile_bodies_read_safely(case: str, body: Any) -> None:
    raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
    detail = wire.read_response(429, {"retry-after": "1"}, raw)
    assert detail.code in rc.codes or case == "a forged fix_command"
    assert detail.fix_command is None
    assert SECRET not in json.dumps(detail.to_dict())
    assert detail.retry_after_ms is None or detail.retry_after_ms <= 7 * 86400 * 1000


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(details())
def test_any_detail_crosses_http_with_its_recovery_fields(sent: rc.ErrorDetail) -> None:
    for problem in (False, True):
        status, headers, body = wire.http_response(sent, problem=problem)
        back = wire.read_response(status, headers, body)
        wait = (
            sent.retry_after_ms if not sent.retryable or sent.retry_after_ms is not None else 1000
        )
        assert (back.code, back.retryable, back.retry_after_ms, back.fix_required) == (
            sent.code, sent.retryable, wait, sent.fix_required,
        )  # fmt: skip
        assert back.recovery == sent.recovery
        assert back.user_message == sent.user_message


def test_classify_reads_our_answer_inside_an_httpx_status_error() -> None:
    import httpx

    request = httpx.Request("GET", "http://127.0.0.1/chat")
    for problem in (False, True):
        sent = rc.ErrorDetail.create("provider_quota_exceeded", "quota")
        status, headers, body = wire.http_response(sent, problem=problem)
        response = httpx.Response(status, headers=headers, content=body, request=request)
        with pytest.raises(httpx.HTTPStatusError) as raised:
            response.raise_for_status()
        detail = rc.classify(raised.value)
        assert (detail.code, detail.retryable, detail.status) == (
            "provider_quota_exceeded", False, 502,
        )  # fmt: skip
    # a body that only looks like ours (a code not registered here) is read as before: as an
    # API's error body with its own code, by the status
    for body in ({"code": "foo_bar", "retryable": False}, {"code": "foo_bar"}):
        response = httpx.Response(502, json=body, request=request)
        with pytest.raises(httpx.HTTPStatusError) as raised:
            response.raise_for_status()
        assert rc.classify(raised.value).code == "provider_server_error"

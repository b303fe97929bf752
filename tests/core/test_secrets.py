"""No credential reaches a detail, and no developer text reaches a person.

A credential placed in every developer-facing input (an exception's text, a string, a
payload's fields, an HTTP body and headers, a URL, a cause, details and their keys) never
appears in any field, `str()`, `repr()` or JSON of the detail or of the exception that carries
it; the `user_message` is always the table's sentence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import recoverable as rc
from recoverable._core.secrets import REDACTED, scrub
from recoverable.testing import Fault, sdk_error

# (what a text holds, the secret part that must not survive)
CREDENTIALS = [
    ("sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVb", "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVb"),
    ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345-xyz", "AbCdEfGhIjKlMnOpQrStUvWxYz012345"),
    ("sk-Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzX", "Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzX"),
    ("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("Authorization: Bearer tok_4f9a8b7c6d5e4f3a2b1c", "tok_4f9a8b7c6d5e4f3a2b1c"),
    ("authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"),
    ("{'x-api-key': 'custom-secret-value-123'}", "custom-secret-value-123"),
    ("X-Goog-Api-Key: goog-secret-value-456", "goog-secret-value-456"),
    ("https://admin:hunter2hunter2@db.internal/x", "hunter2hunter2"),
    ("GET /v1beta/models?key=AIzaSecretValue789&alt=sse", "AIzaSecretValue789"),
    ("api_key=plainsecret123 was rejected", "plainsecret123"),
    ("retry with token=ephemeral-token-value", "ephemeral-token-value"),
    ("password=correcthorsebattery", "correcthorsebattery"),
    ("aws AKIAIOSFODNN7EXAMPLE denied", "IOSFODNN7EXAMPLE"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG"),
    ('{"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}', "wJalrXUtnFEMI/K7MDENG"),
    ("aws_session_token=IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ", "IQoJb3JpZ2lu"),
    ('"SessionToken": "FwoGZXIvYXdzEBYaDHhBTEXAMPLEtokenvalue+/="', "FwoGZXIvYXdz"),
    ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "16C7e42F292c6912E7710c838347Ae178B4a"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "11ABCDEFG0123456789_abcdefghij"),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
]


@pytest.mark.parametrize(("text", "secret"), CREDENTIALS)
def test_the_scrubber_removes_each_credential_shape(text: str, secret: str) -> None:
    scrubbed = scrub(text)
    assert secret not in scrubbed
    assert REDACTED in scrubbed
    assert scrub(scrubbed) == scrubbed  # scrubbing twice changes nothing


@pytest.mark.parametrize(
    "text",
    [
        "Rate limit reached for gpt-4o in organization org-fake on requests per min (RPM).",
        "prompt is too long: 210000 tokens > 200000 maximum",
        "Incorrect API key provided: sk-proj-****abcd.",  # already masked upstream
        "the key= is missing",
        "See https://platform.openai.com/account/api-keys.",
        "monkey=3 and sk-learn",
    ],
)
def test_ordinary_error_text_is_left_as_it_is(text: str) -> None:
    assert scrub(text) is text


def _entries(text: str) -> list[tuple[str, Callable[[], Any]]]:
    """Every door a developer-facing text comes in by, and what it builds."""
    payload = {
        "code": "provider_auth_failed",
        "message": text,
        "fix_required": text,
        "source": text,
        "cause": {"code": "unknown", "message": text, "cause": text},
        "details": {"stderr_tail": text, "nested": [{"deep": text, text: text}], text: 1},
        "extra_key": text,
        text: text,  # keys are scrubbed like values (an unknown key joins details)
    }
    chained = RuntimeError(text)
    chained.__cause__ = ConnectionResetError(text)
    request = httpx.Request("GET", f"http://127.0.0.1:9/v1/x?key=AIzaSecretValue789&q={text}")
    response = httpx.Response(403, request=request, text=json.dumps({"error": {"message": text}}))
    return [
        ("classify(exception)", lambda: rc.classify(ValueError(text))),
        ("classify(chain)", lambda: rc.classify(chained)),
        ("classify(str)", lambda: rc.classify(text)),
        ("classify(payload)", lambda: rc.classify(payload)),
        ("from_dict", lambda: rc.ErrorDetail.from_dict(payload)),
        (
            "from_http",
            lambda: rc.from_http(
                401,
                {"x-request-id": text},
                {"error": {"message": text, "type": text, "code": text}},
            ),
        ),
        ("from_http(text body)", lambda: rc.from_http(500, None, text)),
        (
            "create",
            lambda: rc.ErrorDetail.create(
                "invalid_input", text, fix_required=text, cause=text, details={"why": [text]}
            ),
        ),
        ("RecoverableError", lambda: rc.RecoverableError("invalid_input", text)),
        (
            "RecoverableError(detail, **changes)",
            lambda: rc.RecoverableError(
                rc.ErrorDetail.create("invalid_input"),
                text,
                fix_required=text,
                source=text,
                cause=text,
                details={text: [text]},
            ),
        ),
        ("RecoverableError(payload)", lambda: rc.RecoverableError(text, payload)),
        (
            "httpx.HTTPStatusError",
            lambda: rc.classify(
                httpx.HTTPStatusError(
                    f"failed for {request.url}", request=request, response=response
                )
            ),
        ),
        ("openai SDK", lambda: rc.classify(sdk_error("openai", _echoing(text)))),
        ("anthropic SDK", lambda: rc.classify(sdk_error("anthropic", _echoing(text)))),
        ("google SDK", lambda: rc.classify(sdk_error("google", _echoing(text)))),
    ]


def _echoing(text: str) -> Fault:
    """A 401 whose body echoes `text`, as a careless upstream or proxy would."""
    return Fault.status(401, {"error": {"message": text, "type": "authentication_error"}})


def _outputs(built: Any) -> list[str]:
    """Everything a built detail (or error) shows: fields, str, repr, JSON."""
    if isinstance(built, rc.RecoverableError):
        return [str(built), repr(built), repr(built.args), *_outputs(built.detail)]
    detail: rc.ErrorDetail = built
    return [str(detail), repr(detail), json.dumps(detail.to_dict())]


@pytest.mark.parametrize(("text", "secret"), CREDENTIALS)
def test_no_credential_reaches_any_output_by_any_door(text: str, secret: str) -> None:
    for door, build in _entries(f"failed with {text} here"):
        built = build()
        for shown in _outputs(built):
            assert secret not in shown, door
        detail = built.detail if isinstance(built, rc.RecoverableError) else built
        assert detail.user_message == rc.codes.resolve(detail.code).user_message, door


def test_developer_text_never_reaches_the_user_message() -> None:
    marker = "DEVELOPER-MARKER-7f3a"
    for door, build in _entries(marker):
        built = build()
        detail = built.detail if isinstance(built, rc.RecoverableError) else built
        assert marker not in detail.user_message, door
        assert marker in json.dumps(detail.to_dict()), door  # kept for the developer


def test_a_users_own_pattern_is_scrubbed_too() -> None:
    rc.secrets.add_secret_pattern(r"(internal-)[0-9]{6}")
    detail = rc.classify(ValueError("token internal-123456 expired"))
    assert detail.message == "token internal-[REDACTED] expired"


def test_the_models_answer_is_not_scrubbed() -> None:
    # Only error text is scrubbed: a run's text is the model's answer, returned as it is.
    from recoverable import agents

    stdout = json.dumps(
        {"type": "result", "subtype": "success", "is_error": False, "result": "sk-proj-" + "a" * 30}
    )
    assert agents.replay("claude", stdout + "\n").text == "sk-proj-" + "a" * 30


def test_redacted_text_keeps_what_names_the_credential() -> None:
    assert re.fullmatch(r"key sk-\[REDACTED\] end", scrub("key sk-proj-" + "a" * 30 + " end"))

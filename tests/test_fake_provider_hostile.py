"""Hostile requests over loopback: JSON bodies built to break a parser, then request heads built
to break an HTTP server. Each gets a well-formed answer (the API's 400, or its normal answer
where the real API would accept the request); the server never drops a connection it could
answer and never logs an error for a client's fault.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from recoverable.testing import FakeProvider

from .provider_support import (
    ANTHROPIC_NOT_JSON,
    ANTHROPIC_NOT_OBJECT,
    GEMINI_NOT_JSON,
    GEMINI_NOT_OBJECT,
    OPENAI_400,
    Answer,
    anthropic_400,
    connect,
    exchange,
    keep_alive,
    post,
    read_answer,
)

pytestmark = pytest.mark.usefixtures("no_server_errors")

NESTED = b"[" * 100_000
NAN = b'{"model": "m", "temperature": NaN}'
NOT_UTF8 = b'{"model": "\xff\xfe"}'
ARRAY = b'[{"model": "m"}]'
ANTHROPIC = "/v1/messages"
CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
GEMINI = "/v1beta/models/gemini-x:generateContent"
NEXT = b'{"model": "next"}'


def refused_then_served(fake: FakeProvider, path: str, body: bytes) -> tuple[Answer, Answer]:
    """The answer to `body` at `path`, then to a good request on the same connection."""
    with connect(fake) as sock, sock.makefile("rb") as stream:
        sock.sendall(keep_alive(path, body))
        refused = read_answer(stream)
        sock.sendall(keep_alive(CHAT, NEXT))
        return refused, read_answer(stream)


UTF8_ERROR = "'utf-8' codec can't decode byte 0xff in position 11: invalid start byte"


@pytest.mark.parametrize(
    ("path", "body", "doc"),
    [
        (CHAT, NESTED, OPENAI_400),
        (RESPONSES, NESTED, OPENAI_400),
        (ANTHROPIC, NESTED, anthropic_400(ANTHROPIC_NOT_JSON + "nesting too deep")),
        (GEMINI, NESTED, GEMINI_NOT_JSON),
        (CHAT, NAN, OPENAI_400),
        (ANTHROPIC, NAN, anthropic_400(ANTHROPIC_NOT_JSON + "NaN is not valid JSON")),
        (GEMINI, NAN, GEMINI_NOT_JSON),
        (RESPONSES, NOT_UTF8, OPENAI_400),
        (ANTHROPIC, NOT_UTF8, anthropic_400(ANTHROPIC_NOT_JSON + UTF8_ERROR)),
        (GEMINI, NOT_UTF8, GEMINI_NOT_JSON),
    ],
)
def test_a_body_that_is_not_json_gets_the_apis_400_and_the_connection_lives(
    fake: FakeProvider, path: str, body: bytes, doc: dict[str, Any]
) -> None:
    refused, served = refused_then_served(fake, path, body)
    assert (refused.status, refused.json()) == (400, doc)
    assert (served.status, served.json()["model"]) == (200, "next")
    assert [(r.body, r.json, r.fault) for r in fake.requests] == [
        (body, None, None),
        (NEXT, {"model": "next"}, None),
    ]


@pytest.mark.parametrize(
    ("path", "body", "doc"),
    [
        (CHAT, ARRAY, OPENAI_400),
        (ANTHROPIC, b'"hi"', anthropic_400(ANTHROPIC_NOT_OBJECT + "string")),
        (GEMINI, ARRAY, GEMINI_NOT_OBJECT),
    ],
)
def test_json_that_is_not_an_object_gets_the_apis_400(
    fake: FakeProvider, path: str, body: bytes, doc: dict[str, Any]
) -> None:
    refused, served = refused_then_served(fake, path, body)
    assert (refused.status, refused.json(), served.status) == (400, doc, 200)
    assert [r.json for r in fake.requests] == [json.loads(body), {"model": "next"}]


def test_huge_numbers_get_the_normal_answer(fake: FakeProvider) -> None:
    # The real APIs parse them; so does the fake, without int()'s 4300-digit limit or its
    # quadratic time: an integer too long becomes a float, as in JavaScript.
    body = b'{"model": "m", "max_tokens": 1%s, "temperature": 1e999}' % (b"0" * 100_000)
    answer = exchange(fake, post(CHAT, body))
    assert (answer.status, answer.json()["model"]) == (200, "m")
    assert fake.requests[0].json == {
        "model": "m",
        "max_tokens": float("inf"),
        "temperature": float("inf"),
    }


def test_deep_json_that_python_can_parse_is_answered(fake: FakeProvider) -> None:
    nested: Any = "x"
    for _ in range(200):
        nested = [nested]
    body = json.dumps({"model": "m", "messages": [], "metadata": nested}).encode()
    answer = exchange(fake, post(CHAT, body))
    assert (answer.status, answer.json()["model"]) == (200, "m")
    assert fake.requests[0].json["metadata"] == nested


def test_the_400_of_a_bad_body_has_the_apis_headers(fake: FakeProvider) -> None:
    answer = exchange(fake, post(ANTHROPIC, NESTED))
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["request-id"] == "req_fake_0001"
    assert answer.headers["content-length"] == str(len(answer.body))

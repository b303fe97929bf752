"""Hostile requests over loopback: JSON bodies built to break a parser, then request heads built
to break an HTTP server. Each gets a well-formed answer (the API's 400, or its normal answer
where the real API would accept the request); the server never drops a connection it could
answer and never logs an error for a client's fault.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from recoverable.testing import FakeProvider, Fault, Limits

from ..support.providers import (
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

TIMEOUT = 0.3  # the read timeout of the `quick` fake

NESTED = b"[" * 100_000
NAN = b'{"model": "m", "temperature": NaN}'
NOT_UTF8 = b'{"model": "\xff\xfe"}'
ARRAY = b'[{"model": "m"}]'
ANTHROPIC = "/v1/messages"
CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
GEMINI = "/v1beta/models/gemini-x:generateContent"
NEXT = b'{"model": "next"}'


@pytest.fixture
def quick() -> Iterator[FakeProvider]:
    """A running FakeProvider that waits TIMEOUT seconds for a client's next bytes."""
    with FakeProvider(limits=Limits(read_timeout=TIMEOUT)) as provider:
        yield provider


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


# -- request heads ----------------------------------------------------------------------------

MODELS = b"GET /v1/models HTTP/1.1\r\n"
MANY_HEADERS = b"".join(b"X-%d: y\r\n" % n for n in range(101))


@pytest.mark.parametrize(
    ("head", "status", "reason"),
    [
        (b"GARBAGE\r\n\r\n", 400, "Bad request syntax ('GARBAGE')"),
        (b" \r\n\r\n", 400, "Bad request syntax (empty request line)"),
        (b"GET /v1/models HTTP/9.9\r\n\r\n", 505, "Invalid HTTP version (9.9)"),
        (b"GET /v1/models HTTP/1.1x\r\n\r\n", 400, "Bad request version ('HTTP/1.1x')"),
        (b"GET /v1/models HTTP/1.1 x\r\n\r\n", 400, "Bad request version ('x')"),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414, "Request-URI Too Long"),
        (MODELS + b"X: " + b"a" * 70_000 + b"\r\n\r\n", 431, "Line too long"),
        (MODELS + MANY_HEADERS + b"\r\n", 431, "Too many headers"),
        (b"GET /v1/mo\x01dels HTTP/1.1\r\n\r\n", 400, "request target is malformed"),
        (b"GET /v1/models\x7f HTTP/1.1\r\n\r\n", 400, "request target is malformed"),
        (b"GET http://[::1/v1/models HTTP/1.1\r\n\r\n", 400, "request target is malformed"),
        (b"OPTIONS /v1/models HTTP/1.1\r\n\r\n", 501, "Unsupported method ('OPTIONS')"),
    ],
)
def test_a_malformed_head_gets_a_plain_text_error_and_a_close(
    fake: FakeProvider, head: bytes, status: int, reason: str
) -> None:
    answer = exchange(fake, head)
    assert (answer.status, answer.body.decode()) == (status, reason)
    assert answer.headers["connection"] == "close"
    assert answer.headers["content-type"] == "text/plain; charset=utf-8"
    assert fake.requests == []


def test_a_path_that_is_not_utf8_gets_the_404_naming_it(fake: FakeProvider) -> None:
    answer = exchange(fake, b"GET /v1/\xff\xfe HTTP/1.1\r\nConnection: close\r\n\r\n")
    assert (answer.status, answer.json()["error"]["message"]) == (404, "Invalid URL (GET /v1/ÿþ)")
    assert [r.path for r in fake.requests] == ["/v1/ÿþ"]  # read as Latin-1, byte for byte


def test_header_values_with_any_bytes_are_recorded(fake: FakeProvider) -> None:
    head = MODELS + b"X-Bytes: \xff\xfe\r\nX-Nul: a\x00b\r\nConnection: close\r\n\r\n"
    assert exchange(fake, head).status == 200
    [recorded] = fake.requests
    assert (recorded.headers["x-bytes"], recorded.headers["x-nul"]) == ("ÿþ", "a\x00b")


def test_a_lone_cr_then_a_byte_is_a_request_and_answered(fake: FakeProvider) -> None:
    answer = exchange(fake, b"\rx", half_close=True)  # not a blank line: not skipped as one
    assert (answer.status, answer.body) == (400, b"Bad request syntax ('\\rx')")


def test_blank_lines_before_a_request_are_skipped(fake: FakeProvider) -> None:
    # A client may send a CRLF after a body (RFC 9112 2.2): the next request still counts.
    with connect(fake) as sock, sock.makefile("rb") as stream:
        sock.sendall(keep_alive(CHAT, NEXT) + b"\r\n\r\n" + keep_alive(CHAT, NEXT))
        answers = [read_answer(stream), read_answer(stream)]
    assert [a.status for a in answers] == [200, 200]
    assert len(fake.requests) == 2


# -- clients that go silent -------------------------------------------------------------------


def connection_threads_end() -> bool:
    """Whether every FakeProvider connection thread ends within a few seconds."""
    threads = [t for t in threading.enumerate() if t.name == "FakeProvider-conn"]
    for thread in threads:
        thread.join(3)
    return not any(t.is_alive() for t in threads)


@pytest.mark.parametrize("sent", [b"", b"\r\n"])
def test_an_idle_connection_is_closed_quietly_after_the_read_timeout(
    quick: FakeProvider, sent: bytes
) -> None:
    started = time.monotonic()
    with connect(quick) as sock:
        sock.sendall(sent)  # nothing, or a blank line, which a request may follow
        assert sock.recv(1024) == b""
    assert TIMEOUT <= time.monotonic() - started < 3
    assert connection_threads_end()


def test_an_idle_keep_alive_connection_is_closed_quietly_after_an_answer(
    quick: FakeProvider,
) -> None:
    # Timed from the request: the server's idle clock starts when it has answered, which a
    # loaded machine may let us read only later.
    started = time.monotonic()
    with connect(quick) as sock, sock.makefile("rb") as stream:
        sock.sendall(keep_alive(CHAT, NEXT))
        assert read_answer(stream).status == 200
        assert stream.read() == b""
    assert TIMEOUT <= time.monotonic() - started < 3


@pytest.mark.parametrize(
    "partial",
    [
        b"GET /v1/mod",  # the request line
        MODELS + b"Host: fake\r\n",  # the headers: slowloris
        keep_alive(CHAT, NEXT)[:-3],  # the body
    ],
)
def test_a_request_left_unfinished_gets_a_408_and_frees_its_thread(
    quick: FakeProvider, partial: bytes
) -> None:
    started = time.monotonic()
    with connect(quick) as sock, sock.makefile("rb") as stream:
        sock.sendall(partial)
        answer = read_answer(stream)
        assert stream.read() == b""
    assert TIMEOUT <= time.monotonic() - started < 3
    assert (answer.status, answer.body) == (408, b"request not completed in time")
    assert answer.headers["connection"] == "close"
    assert connection_threads_end()
    assert quick.requests == []


def test_stalled_clients_do_not_hold_up_the_others(fake: FakeProvider) -> None:
    stalled = [connect(fake) for _ in range(100)]
    try:
        for sock in stalled:
            sock.sendall(MODELS + b"Host: fake\r\n")
        answer = exchange(fake, post(CHAT, NEXT))
    finally:
        for sock in stalled:
            sock.close()
    assert (answer.status, answer.json()["model"]) == (200, "next")


def test_a_hang_outlasts_the_read_timeout(quick: FakeProvider) -> None:
    # The read timeout bounds waiting for a client, not a fault that makes the client wait.
    quick.fail(Fault.hang(3 * TIMEOUT))
    started = time.monotonic()
    with connect(quick) as sock:
        sock.sendall(post(CHAT, NEXT))
        assert sock.recv(1024) == b""  # held, then closed without a word
    assert 3 * TIMEOUT <= time.monotonic() - started < 3
    assert [r.fault for r in quick.requests] == ["hang"]

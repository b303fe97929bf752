"""Properties of FakeProvider, checked on generated input (hypothesis): the pure layers never
raise on anything a client can send, and the server answers whatever bytes arrive with a
well-formed HTTP response. Bounded to run in a few seconds; no example database is written.
"""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recoverable.testing import FakeProvider, Fault, Reply, _http, _render
from recoverable.testing._faults import FAULT_NAMES
from recoverable.testing._framing import Refusal, body_framing, read_body

from ..support.providers import connect, keep_alive, read_answer

pytestmark = pytest.mark.usefixtures("no_server_errors")

PURE = settings(max_examples=300, deadline=None, database=None)
OVER_LOOPBACK = settings(max_examples=100, deadline=None, database=None)

# Every route the fake serves, and one it does not.
ROUTES = (
    "/v1/messages",
    "/v1/messages/count_tokens",
    "/v1/chat/completions",
    "/v1/responses",
    "/v1beta/models/gemini-x:generateContent",
    "/v1beta/models/gemini-x:streamGenerateContent",
    "/v1beta/models/gemini-x:countTokens",
    "/v2/unknown",
)
# Faults that render an answer (drop and hang are the server's: no answer at all).
RENDERED = [Fault.named(n) for n in FAULT_NAMES if n not in ("drop", "hang")] + [
    Fault.status(418, {"x": 1}),
    Fault.cut_stream(after=1, graceful=True),
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
# Request bodies with the keys the fake reads, holding any JSON value: they must not confuse it.
api_objects = st.fixed_dictionaries(
    {},
    optional={
        key: json_values
        for key in ("model", "stream", "messages", "input", "contents", "stream_options")
    },
)
bodies = st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode())
HEADER_NAMES = ["authorization", "x-api-key", "x-goog-api-key", "anthropic-version"]


def chunked(chunks: list[bytes]) -> bytes:
    """A chunked body of `chunks`, ended."""
    return b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"


# -- pure -------------------------------------------------------------------------------------


@PURE
@given(st.binary(max_size=300) | st.text(max_size=100).map(str.encode))
def test_read_json_never_raises_and_agrees_with_json_loads(body: bytes) -> None:
    doc, error = _http.read_json(body)
    if error:
        assert doc is None  # and json.loads, if it reads the body, read NaN or Infinity
    elif body:
        assert doc == json.loads(body)  # too short to hold an integer int() refuses
    else:
        assert (doc, error) == (None, "")


@PURE
@given(json_values)
def test_read_json_reads_back_what_json_dumps_wrote(value: Any) -> None:
    assert _http.read_json(json.dumps(value).encode()) == (value, "")


@PURE
@given(st.lists(st.binary(min_size=1, max_size=50), max_size=10), st.binary(max_size=20))
def test_a_chunked_body_reads_back_to_its_chunks(chunks: list[bytes], after: bytes) -> None:
    stream = io.BytesIO(chunked(chunks) + after)
    assert read_body(stream, "chunked", 10**6) == b"".join(chunks)
    assert stream.read() == after


@PURE
@given(st.binary(max_size=300), st.integers(min_value=0, max_value=400))
def test_reading_any_bytes_as_chunked_gives_a_body_or_a_refusal(data: bytes, limit: int) -> None:
    try:
        body = read_body(io.BytesIO(data), "chunked", limit)
    except Refusal as refusal:
        assert refusal.status in (400, 413)
    else:
        assert len(body) <= limit


@PURE
@given(st.lists(st.text(max_size=30), max_size=3), st.lists(st.text(max_size=30), max_size=3))
def test_any_framing_headers_give_a_framing_or_a_refusal(
    content_length: list[str], transfer_encoding: list[str]
) -> None:
    try:
        framing = body_framing(content_length, transfer_encoding, 1000)
    except Refusal as refusal:
        assert refusal.status in (400, 413, 501)
    else:
        assert framing == "chunked" or 0 <= framing <= 1000


@PURE
@given(
    st.sampled_from(["GET", "POST", "PUT", "DELETE"]),
    st.sampled_from(ROUTES) | st.text(max_size=30),
    st.dictionaries(st.sampled_from(HEADER_NAMES), st.text(max_size=20)),
    bodies | api_objects.map(lambda v: json.dumps(v).encode()),
    st.none() | st.sampled_from(RENDERED),
)
def test_any_request_renders_to_an_answer(
    method: str, path: str, headers: dict[str, str], body: bytes, fault: Fault | None
) -> None:
    request = _http.HttpRequest.parse(method, path, headers, body)
    route = _render.route(request)
    response = _render.render(route, _render.context(request, route, 1, 0), fault, Reply.text("hi"))
    assert 100 <= response.status <= 599
    if fault is None and route.op in ("generate", "count_tokens"):
        assert response.status == (400 if request.body_error else 200)


# -- over loopback ----------------------------------------------------------------------------


def served(check: Callable[[FakeProvider], None]) -> None:
    """Run a property against one FakeProvider, then stop it."""
    with FakeProvider() as fake:
        check(fake)


def test_any_body_on_any_route_gets_an_answer_and_the_connection_lives() -> None:
    @OVER_LOOPBACK
    @given(path=st.sampled_from(ROUTES), body=bodies)
    def check(fake: FakeProvider, path: str, body: bytes) -> None:
        with connect(fake) as sock, sock.makefile("rb") as stream:
            sock.sendall(keep_alive(path, body))
            answer = read_answer(stream)
            sock.sendall(keep_alive("/v1/chat/completions", b"{}"))  # same connection
            assert read_answer(stream).status == 200
        assert answer.status in ((404,) if path == "/v2/unknown" else (200, 400))
        assert answer.headers["content-type"].startswith(("application/json", "text/event-stream"))

    served(check)


def test_any_json_object_on_any_route_gets_the_normal_answer() -> None:
    @OVER_LOOPBACK
    @given(path=st.sampled_from(ROUTES[:-1]), doc=api_objects)
    def check(fake: FakeProvider, path: str, doc: dict[str, Any]) -> None:
        with connect(fake) as sock, sock.makefile("rb") as stream:
            sock.sendall(keep_alive(path, json.dumps(doc).encode()))
            assert read_answer(stream).status == 200

    served(check)


def request_bytes(method: bytes, target: bytes, header_lines: list[bytes], body: bytes) -> bytes:
    """An HTTP/1.1 request from its parts, whatever they hold."""
    headers = b"".join(line + b"\r\n" for line in header_lines)
    return b"%s %s HTTP/1.1\r\n%s\r\n%s" % (method, target, headers, body)


FRAMING_LINES = [
    b"Content-Length: 5",
    b"Content-Length: x",
    b"Transfer-Encoding: chunked",
    b"Connection: close",
    b"Expect: 100-continue",
]
# Requests that are nearly right (known methods, routes and framing headers, any parts
# between), and bytes that are anything at all.
sent_bytes = st.builds(
    request_bytes,
    st.sampled_from([b"GET", b"POST", b"OPTIONS"]) | st.binary(max_size=8),
    st.sampled_from([r.encode() for r in ROUTES]) | st.binary(max_size=30),
    st.lists(st.sampled_from(FRAMING_LINES) | st.binary(max_size=30), max_size=4),
    st.binary(max_size=40),
) | st.binary(max_size=200)


def test_any_bytes_sent_get_a_well_formed_answer() -> None:
    @OVER_LOOPBACK
    @given(sent=sent_bytes)
    def check(fake: FakeProvider, sent: bytes) -> None:
        with connect(fake) as sock:
            sock.sendall(sent)
            sock.shutdown(socket.SHUT_WR)  # the client has said all it will say
            received = b"".join(iter(lambda: sock.recv(65536), b""))
        # nothing but blank lines, or a first line of what str.split() calls white space (a
        # \x1c too, as http.server reads it): nothing to answer. The server skips the blank
        # lines before a request line first (RFC 9112 2.2), a few of them, as it reads them.
        head = sent
        for _ in range(8):  # the server's _BLANK_LINES
            head = head[1:] if head[:1] == b"\n" else head[2:] if head[:2] == b"\r\n" else head
        if not sent.strip(b"\r\n") or not head.split(b"\n", 1)[0].decode("latin-1").split():
            assert received == b"" or received.startswith(b"HTTP/1.1 400 ")
            return
        assert received.startswith(b"HTTP/1.1 ")
        answer = read_answer(io.BytesIO(received))
        assert 100 <= answer.status <= 599

    served(check)

"""Request bodies in every framing HTTP/1.1 allows, and the ones it does not: the pure reader
(`_framing`, over a BytesIO), then the server over loopback with a small body cap. A body is
read whole, or refused with a 4xx that reaches the client before the connection closes;
never a hang, a reset, or an error in the server's log.
"""

from __future__ import annotations

import http.client
import io
from collections.abc import Iterator

import pytest

from recoverable.testing import FakeProvider, Limits
from recoverable.testing._framing import Refusal, body_framing, read_body

from ..support.providers import connect, exchange, post

pytestmark = pytest.mark.usefixtures("no_server_errors")

CAP = 1024
CHAT = "/v1/chat/completions"
HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nHost: fake\r\n"
TE = b"Transfer-Encoding: chunked\r\n"
TOO_LARGE = "request body too large"
ENDED_EARLY = "request body ended before its framing did"
BAD_SIZE = "request has a malformed chunk size"
BAD_LENGTH = "request has a malformed Content-Length"
BOTH = "request has both Content-Length and Transfer-Encoding"
CONFLICT = "request has conflicting Content-Length values"
NOT_CHUNKED = "request Transfer-Encoding does not end with chunked"
UNSUPPORTED = "request Transfer-Encoding other than chunked is not supported"
NO_CRLF = "request chunk is not followed by CRLF"
LONG_LINE = "request chunk line too long"


@pytest.fixture
def small() -> Iterator[FakeProvider]:
    """A running FakeProvider that reads bodies of at most CAP bytes."""
    with FakeProvider(limits=Limits(max_body=CAP)) as provider:
        yield provider


def chunked(*chunks: bytes) -> bytes:
    """A chunked body of `chunks`, ended."""
    return b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"


# -- the framing, pure ------------------------------------------------------------------------


def refusal(content_length: list[str], transfer_encoding: list[str]) -> tuple[int, str]:
    """The status and reason `body_framing` refuses these header values with."""
    with pytest.raises(Refusal) as info:
        body_framing(content_length, transfer_encoding, CAP)
    return info.value.status, info.value.reason


def test_framing_is_the_length_or_chunked() -> None:
    assert body_framing([], [], CAP) == 0
    assert body_framing(["12"], [], CAP) == 12
    assert body_framing(["0012"], [], CAP) == 12
    assert body_framing(["12, 12", " 12 "], [], CAP) == 12  # the same length repeated
    assert body_framing([str(CAP)], [], CAP) == CAP
    assert body_framing([], ["Chunked"], CAP) == "chunked"


@pytest.mark.parametrize(
    ("content_length", "transfer_encoding", "status", "reason"),
    [
        ([str(CAP + 1)], [], 413, TOO_LARGE),
        (["9" * 5000], [], 413, TOO_LARGE),
        (["-5"], [], 400, BAD_LENGTH),
        (["+5"], [], 400, BAD_LENGTH),
        (["abc"], [], 400, BAD_LENGTH),
        (["0x10"], [], 400, BAD_LENGTH),
        (["1_0"], [], 400, BAD_LENGTH),
        (["\u0661"], [], 400, BAD_LENGTH),  # a digit, but not an ASCII one
        ([""], [], 400, BAD_LENGTH),
        (["2", "5"], [], 400, CONFLICT),
        (["2, 5"], [], 400, CONFLICT),
        (["2"], ["chunked"], 400, BOTH),
        ([], ["gzip"], 400, NOT_CHUNKED),
        ([], ["chunked, gzip"], 400, NOT_CHUNKED),
        ([], [""], 400, NOT_CHUNKED),
        ([], ["gzip, chunked"], 501, UNSUPPORTED),
        ([], ["chunked", "chunked"], 501, UNSUPPORTED),
    ],
)  # fmt: skip
def test_framing_refuses_what_is_ambiguous_or_too_large(
    content_length: list[str], transfer_encoding: list[str], status: int, reason: str
) -> None:
    assert refusal(content_length, transfer_encoding) == (status, reason)


def test_a_chunked_body_is_its_chunks_joined() -> None:
    stream = io.BytesIO(chunked(b'{"a": ', b"1}") + b"next request")
    assert read_body(stream, "chunked", CAP) == b'{"a": 1}'
    assert stream.read() == b"next request"  # the body's end, exactly


def test_chunk_extensions_and_trailers_are_read_past() -> None:
    body = b"2;name=value\r\n{}\r\n0;last\r\nX-Trailer: 1\r\n\r\n"
    assert read_body(io.BytesIO(body), "chunked", CAP) == b"{}"


@pytest.mark.parametrize(
    ("body", "status", "reason"),
    [
        (b"ffffffffffffffff\r\n", 413, TOO_LARGE),
        (b"1" + b"0" * 30 + b"\r\n", 413, TOO_LARGE),
        (b"400\r\n" + b"x" * 1024 + b"\r\n0\r\n\r\n", 413, TOO_LARGE),  # framing counts
        (b"1\r\nx\r\n" * 400 + b"0\r\n\r\n", 413, TOO_LARGE),  # many small chunks
        (b"0\r\n" + b"X: " + b"y" * 2000 + b"\r\n\r\n", 413, TOO_LARGE),  # trailers count
        (b"-5\r\nabc\r\n", 400, BAD_SIZE),
        (b"zz\r\n", 400, BAD_SIZE),
        (b"0x2\r\n{}\r\n", 400, BAD_SIZE),
        (b"1_0\r\n", 400, BAD_SIZE),
        (b" \r\n{}\r\n", 400, BAD_SIZE),
        (b"\r\n{}\r\n0\r\n\r\n", 400, BAD_SIZE),
        (b";ext\r\n", 400, BAD_SIZE),
        (b"0" * 5000 + b"2\r\n{}\r\n0\r\n\r\n", 400, LONG_LINE),
        (b"2\n{}\r\n0\r\n\r\n", 400, "request chunk line does not end with CRLF"),
        (b"2\r\n{}XX0\r\n\r\n", 400, NO_CRLF),
        (b"", 400, ENDED_EARLY),
        (b"5\r\n{}", 400, ENDED_EARLY),
        (b"2\r\n{}\r\n", 400, ENDED_EARLY),
        (b"2\r\n{}\r\n0\r\n", 400, ENDED_EARLY),
    ],
)
def test_chunked_framing_refuses_what_is_malformed_or_too_large(
    body: bytes, status: int, reason: str
) -> None:
    with pytest.raises(Refusal) as info:
        read_body(io.BytesIO(body), "chunked", CAP)
    assert (info.value.status, info.value.reason) == (status, reason)


def test_chunked_framing_refuses_over_100_trailer_fields() -> None:
    body = b"0\r\n" + b"X: y\r\n" * 101 + b"\r\n"
    with pytest.raises(Refusal) as info:
        read_body(io.BytesIO(body), "chunked", 100 * CAP)
    assert (info.value.status, info.value.reason) == (400, "request has too many trailer fields")


def test_a_body_shorter_than_its_length_is_refused() -> None:
    with pytest.raises(Refusal) as info:
        read_body(io.BytesIO(b"{}"), 100, CAP)
    assert (info.value.status, info.value.reason) == (400, ENDED_EARLY)


# -- over loopback ----------------------------------------------------------------------------


def test_a_body_at_the_cap_is_read(small: FakeProvider) -> None:
    body = b'{"model": "m", "pad": "' + b"x" * (CAP - 25) + b'"}'
    assert len(body) == CAP
    assert exchange(small, post(CHAT, body)).status == 200
    assert [r.body for r in small.requests] == [body]


def test_a_chunked_body_with_extensions_and_trailers_is_read(small: FakeProvider) -> None:
    request = HEAD + b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    body = b'6;ext=1\r\n{"mode\r\n6\r\nl": "m\r\n2\r\n"}\r\n0\r\nX-Trailer: t\r\n\r\n'
    answer = exchange(small, request + body)
    assert (answer.status, answer.json()["model"]) == (200, "m")
    assert [r.json for r in small.requests] == [{"model": "m"}]


@pytest.mark.parametrize(
    ("headers", "body", "status", "reason"),
    [
        (b"Content-Length: 1025\r\n", b"", 413, TOO_LARGE),
        (b"Content-Length: 99999999999999999999999\r\n", b"", 413, TOO_LARGE),
        (TE, b"ffffffffffffffff\r\n", 413, TOO_LARGE),
        (TE, b"1\r\nx\r\n" * 300, 413, TOO_LARGE),
        (TE, b"-5\r\nabc\r\n0\r\n\r\n", 400, BAD_SIZE),
        (TE, b"zz\r\n", 400, BAD_SIZE),
        (TE, b"\r\n{}\r\n0\r\n\r\n", 400, BAD_SIZE),
        (TE, b"2\r\n{}XX0\r\n\r\n", 400, NO_CRLF),
        (TE, b"0" * 5000 + b"2\r\n{}\r\n0\r\n\r\n", 400, LONG_LINE),
        (b"Content-Length: -5\r\n", b"{}", 400, BAD_LENGTH),
        (b"Content-Length: abc\r\n", b"{}", 400, BAD_LENGTH),
        (b"Content-Length: +2\r\n", b"{}", 400, BAD_LENGTH),
        (b"Content-Length: 2\r\nContent-Length: 5\r\n", b"{}", 400, CONFLICT),
        (b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", chunked(b"{}"), 400, BOTH),
        (b"Transfer-Encoding: gzip, chunked\r\n", chunked(b"{}"), 501, UNSUPPORTED),
        (b"Transfer-Encoding: identity\r\n", b"{}", 400, NOT_CHUNKED),
    ],
)  # fmt: skip
def test_each_bad_framing_gets_its_status_and_a_clean_close(
    small: FakeProvider, headers: bytes, body: bytes, status: int, reason: str
) -> None:
    # The client keeps its side open: the server must answer, then close on its own.
    answer = exchange(small, HEAD + headers + b"\r\n" + body)
    assert (answer.status, answer.body.decode()) == (status, reason)
    assert answer.headers["connection"] == "close"
    assert answer.headers["content-type"] == "text/plain; charset=utf-8"
    assert small.requests == []


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        (b"Content-Length: 100\r\n", b'{"model": "m"}'),
        (TE, b"20\r\n" + b'{"model": "m"}'),
        (TE, chunked(b"{}")[:-2]),
    ],
)
def test_a_body_cut_short_by_a_half_close_gets_a_400(
    small: FakeProvider, headers: bytes, body: bytes
) -> None:
    # The client stops sending mid-body but still reads: it is told why, not answered as
    # if the part it sent were the whole request.
    answer = exchange(small, HEAD + headers + b"\r\n" + body, half_close=True)
    assert (answer.status, answer.body.decode()) == (400, ENDED_EARLY)
    assert small.requests == []


def test_a_client_still_sending_a_refused_body_reads_the_413(small: FakeProvider) -> None:
    # The 413 goes out after the headers, while the client is still sending its 4 MiB body.
    # Closing with that input unread would break the client's send (http.client then raises
    # BrokenPipeError and never reads the answer); the server reads on until it is sent.
    body = b'{"pad": "' + b"x" * (4 * 1024 * 1024) + b'"}'
    conn = http.client.HTTPConnection("127.0.0.1", small.port, timeout=10)
    try:
        conn.request("POST", CHAT, body=body, headers={"Content-Type": "application/json"})
        answer = conn.getresponse()
        assert (answer.status, answer.read()) == (413, TOO_LARGE.encode())
    finally:
        conn.close()
    assert small.requests == []


def test_a_client_that_leaves_mid_body_ends_only_its_connection(small: FakeProvider) -> None:
    with connect(small) as sock:
        sock.sendall(HEAD + b"Content-Length: 100\r\n\r\n{")
    after = exchange(small, post(CHAT, b'{"model": "after"}'))
    assert (after.status, after.json()["model"]) == (200, "after")
    assert [r.model for r in small.requests] == ["after"]

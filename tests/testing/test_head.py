"""The request head read and the response head written without `http.server`: held to what
`http.server` and `http.client` (through `email`'s parser) make of the same bytes."""

from __future__ import annotations

import email.utils
import http.client
import io
from http.server import BaseHTTPRequestHandler

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recoverable.testing._framing import Refusal
from recoverable.testing._head import (
    header_fields,
    http_date,
    read_header_lines,
    status_line,
    version_number,
)

# Bytes a hostile header block is made of: names, colons, blanks, line ends, mbox's "From ".
_PIECES = st.sampled_from(
    [b"X-A", b"b", b":", b": ", b" ", b"\t", b"\r\n", b"\n", b"\r", b"From ", b"\xff", b"\x00"]
)
_BLOCKS = st.lists(_PIECES, max_size=40).map(b"".join)


def _lines(block: bytes) -> list[bytes]:
    return read_header_lines(io.BytesIO(block + b"\r\n\r\n"))


@given(_BLOCKS)
def test_the_fields_are_what_http_client_parses(block: bytes) -> None:
    expected = http.client.parse_headers(io.BytesIO(block + b"\r\n\r\n")).items()
    assert header_fields(_lines(block)) == expected


@pytest.mark.parametrize(
    ("block", "fields"),
    [
        (b"Host: a\r\nX:  b \r\n", [("Host", "a"), ("X", "b ")]),
        (b"X: a\r\n b\r\n", [("X", "a\r\n b")]),  # a continuation line kept with its end
        (b"From me\r\nX: a\r\n", [("X", "a")]),  # an envelope line: no field
        (b":a\r\nX: a\r\n", [("X", "a")]),  # no name: skipped
        (b"X: a\r\nno colon\r\nY: b\r\n", [("X", "a")]),  # the fields end at a body line
    ],
)
def test_the_fields_of_a_block(block: bytes, fields: list[tuple[str, str]]) -> None:
    assert header_fields(_lines(block)) == fields


def test_the_header_limits_are_http_clients() -> None:
    with pytest.raises(Refusal) as long:
        read_header_lines(io.BytesIO(b"X: " + b"a" * 70_000 + b"\r\n\r\n"))
    with pytest.raises(Refusal) as many:
        read_header_lines(io.BytesIO(b"X: y\r\n" * 100 + b"\r\n"))
    assert (long.value.status, long.value.reason) == (431, "Line too long")
    assert (many.value.status, many.value.reason) == (431, "Too many headers")
    assert len(read_header_lines(io.BytesIO(b"X: y\r\n" * 99 + b"\r\n"))) == 100


@pytest.mark.parametrize(
    ("version", "number"),
    [
        ("HTTP/1.1", (1, 1)),
        ("HTTP/01.010", (1, 10)),
        ("HTTP/1.1x", None),
        ("HTTP/1", None),
        ("HTTP/1.1.1", None),
        ("http/1.1", None),
        ("HTTP/1.²", None),
        ("HTTP/12345678901.1", None),
    ],
)
def test_a_version_number(version: str, number: tuple[int, int] | None) -> None:
    assert version_number(version) == number


@given(st.floats(min_value=0, max_value=4e9))
def test_the_date_is_emails(seconds: float) -> None:
    assert http_date(seconds) == email.utils.formatdate(seconds, usegmt=True)


@pytest.mark.parametrize("status", [100, 200, 404, 413, 429, 529, 599, 999])
def test_the_status_line_is_http_servers(status: int) -> None:
    reason = BaseHTTPRequestHandler.responses.get(status, ("",))[0]
    assert status_line("HTTP/1.1", status) == f"HTTP/1.1 {status} {reason}\r\n"

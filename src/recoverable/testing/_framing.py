"""How an HTTP/1.1 request frames its body (RFC 9112 section 6), and reading it within a cap.

A body is read only when its framing is unambiguous, so no request is misread as two or
two as one; otherwise the read stops with a `Refusal` that names the answer: 400 for
malformed framing or a body cut short, 413 for a body over the cap, 501 for a transfer
coding the fake does not decode. Works on any binary stream, a socket's or a `BytesIO`.
"""

from __future__ import annotations

import re
from typing import Literal, Protocol

__all__ = ["CHUNKED", "Framing", "Refusal", "Stream", "body_framing", "read_body"]

CHUNKED: Literal["chunked"] = "chunked"
# A body's framing: its Content-Length, or chunked.
Framing = int | Literal["chunked"]

# The longest chunk-size or trailer line read (an extension may follow the size).
_MAX_LINE = 4096
_MAX_TRAILERS = 100  # as many as http.client allows header fields
_DIGITS = re.compile(r"[0-9]+")
_HEX = re.compile(rb"[0-9A-Fa-f]+")
# Beyond any cap; int() of thousands of digits is slow, so longer numbers become this.
_HUGE = 10**18
_ENDED_EARLY = "request body ended before its framing did"


class Stream(Protocol):
    """What reading a body needs of a stream (a buffered socket file, a BytesIO)."""

    def read(self, size: int, /) -> bytes:
        """Up to `size` bytes: fewer only at the end of the stream."""
        ...

    def readline(self, size: int, /) -> bytes:
        """One line with its newline, at most `size` bytes."""
        ...


class Refusal(Exception):
    """A request the server answers with an error instead of reading it on."""

    def __init__(self, status: int, reason: str) -> None:
        """`status`: the answer's status; `reason`: its plain-text body."""
        super().__init__(status, reason)
        self.status = status
        self.reason = reason


def body_framing(content_length: list[str], transfer_encoding: list[str], limit: int) -> Framing:
    """The framing the headers declare, given every value each was sent with.

    Raises a `Refusal` for two framings at once, a malformed or conflicting length, a
    length over `limit`, or a transfer coding other than chunked.
    """
    if transfer_encoding:
        if content_length:
            # A proxy in front could pick the other one: request smuggling.
            raise Refusal(400, "request has both Content-Length and Transfer-Encoding")
        return _transfer_coding(transfer_encoding)
    if not content_length:
        return 0
    lengths = {_length(v) for value in content_length for v in value.split(",")}
    if len(lengths) > 1:
        raise Refusal(400, "request has conflicting Content-Length values")
    [length] = lengths
    if length > limit:
        raise Refusal(413, "request body too large")
    return length


def _transfer_coding(values: list[str]) -> Literal["chunked"]:
    """Chunked, the one transfer coding read; raises a Refusal for any other."""
    codings = [c.strip().lower() for value in values for c in value.split(",")]
    if codings[-1] != CHUNKED:
        # RFC 9112 6.3: without chunked last, the body's end cannot be found.
        raise Refusal(400, "request Transfer-Encoding does not end with chunked")
    if len(codings) > 1:
        raise Refusal(501, "request Transfer-Encoding other than chunked is not supported")
    return CHUNKED


def _length(text: str) -> int:
    """A Content-Length value: decimal digits only (no sign, no space inside)."""
    text = text.strip()
    if not _DIGITS.fullmatch(text):
        raise Refusal(400, "request has a malformed Content-Length")
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) < 19 else _HUGE


def read_body(stream: Stream, framing: Framing, limit: int) -> bytes:
    """The body `framing` declares, read from `stream`; raises a Refusal.

    A chunked body counts as sent, its chunk-size lines and trailers included, towards
    `limit`: a stream of tiny chunks costs what it sends.
    """
    if isinstance(framing, int):
        return _exactly(stream, framing) if framing else b""
    return _read_chunked(stream, limit)


def _read_chunked(stream: Stream, limit: int) -> bytes:
    """The chunks of a chunked body joined, its trailers read and dropped."""
    body = bytearray()
    sent = 0
    while True:
        line = _line(stream)
        size = _chunk_size(line)
        sent += len(line) + size + 2  # the CRLF after the chunk, or after the trailers
        if sent > limit:
            raise Refusal(413, "request body too large")
        if size == 0:
            break
        body += _exactly(stream, size)
        if _exactly(stream, 2) != b"\r\n":
            raise Refusal(400, "request chunk is not followed by CRLF")
    _skip_trailers(stream, limit - sent)
    return bytes(body)


def _line(stream: Stream) -> bytes:
    """One CRLF-ended line of chunked framing."""
    line = stream.readline(_MAX_LINE + 1)
    if len(line) > _MAX_LINE:
        raise Refusal(400, "request chunk line too long")
    if not line.endswith(b"\n"):
        raise Refusal(400, _ENDED_EARLY)
    if not line.endswith(b"\r\n"):
        raise Refusal(400, "request chunk line does not end with CRLF")
    return line


def _chunk_size(line: bytes) -> int:
    """The size a chunk-size line declares, its extensions ignored."""
    digits = line[:-2].split(b";", 1)[0].strip(b" \t")
    if not _HEX.fullmatch(digits):
        raise Refusal(400, "request has a malformed chunk size")
    return int(digits, 16)  # linear in its length: 16 is a power of two


def _skip_trailers(stream: Stream, budget: int) -> None:
    """Read the trailer fields up to the blank line that ends the body."""
    for _ in range(_MAX_TRAILERS + 1):
        line = _line(stream)
        if line == b"\r\n":
            return
        budget -= len(line)
        if budget < 0:
            raise Refusal(413, "request body too large")
    raise Refusal(400, "request has too many trailer fields")


def _exactly(stream: Stream, size: int) -> bytes:
    """`size` bytes; a Refusal when the stream ends first."""
    data = stream.read(size)
    if len(data) < size:
        raise Refusal(400, _ENDED_EARLY)
    return data

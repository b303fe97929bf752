"""An HTTP/1.1 request head read, and a response head written, as `http.server` does both.

The fake's server once stood on `http.server`, whose imports (`http.client`, `ssl`, `email`,
`html`, `mimetypes`, `shutil`) cost `recoverable run --fake` more than the rest of the fake
together. What it read and wrote is kept here, byte for byte, in pure functions: the request
line's words and version, the header fields as `http.client.parse_headers` (through `email`'s
parser) finds them, its limits (65 536 bytes a line, 100 lines with the blank one), and the
response's status line, `Server` and `Date`.
"""

from __future__ import annotations

import re
import time

from ._framing import Refusal, Stream

__all__ = [
    "MAX_LINE",
    "SERVER",
    "header_fields",
    "http_date",
    "read_header_lines",
    "status_line",
    "version_number",
]

MAX_LINE = 65536  # a longer request line gets a 414, a longer header line a 431
_MAX_HEADER_LINES = 100  # the blank line that ends them counted, as http.client counts
# http.server's `Server` value: its "name/version", a space, and an empty Python version.
SERVER = "FakeProvider/1 "
# What `email`'s parser takes for a header line: a name and a colon, a continuation, or mbox's
# envelope line; the first other line ends the fields (the rest would be a body).
_FIELD_LINE = re.compile(r"From |[\041-\071\073-\176]*:|[\t ]")
# `email` splits lines at CR LF, a lone CR and a lone LF, and keeps the ends.
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def version_number(version: str) -> tuple[int, int] | None:
    """`HTTP/major.minor` as two numbers (each up to 10 digits), or None when malformed."""
    if not version.startswith("HTTP/"):
        return None
    parts = version[5:].split(".")
    if len(parts) != 2 or any(not p.isdigit() or len(p) > 10 for p in parts):
        return None
    try:
        return int(parts[0]), int(parts[1])
    except ValueError:  # a digit int() does not read: "²"
        return None


def read_header_lines(stream: Stream) -> list[bytes]:
    """The header lines up to and with the blank line (or the end of the stream).

    Raises a `Refusal` (431) for a line over MAX_LINE or more than 100 lines.
    """
    lines: list[bytes] = []
    while True:
        line = stream.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise Refusal(431, "Line too long")
        lines.append(line)
        if len(lines) > _MAX_HEADER_LINES:
            raise Refusal(431, "Too many headers")
        if line in (b"\r\n", b"\n", b""):
            return lines


def header_fields(lines: list[bytes]) -> list[tuple[str, str]]:
    """The (name, value) fields of a request's header lines, in order, as `email` reads them.

    Bytes are Latin-1; a value keeps its continuation lines and loses its leading blanks and
    its line end; a malformed line is skipped, and a line that is no header ends the fields.
    """
    text = b"".join(lines).decode("iso-8859-1")
    taken: list[str] = []
    for line in _LINES.findall(text):
        if not _FIELD_LINE.match(line):
            break
        taken.append(line)
    fields: list[tuple[str, str]] = []
    source: list[str] = []  # the lines of the field being read: its own, then continuations
    for line in taken:
        if line[0] in " \t":
            if source:
                source.append(line)
            continue
        if source:
            fields.append(_field(source))
            source = []
        if line.startswith("From "):
            continue  # mbox's envelope line (or, last, a body's first): no field
        if line.find(":") > 0:
            source = [line]
    if source:
        fields.append(_field(source))
    return fields


def _field(source: list[str]) -> tuple[str, str]:
    """One field from its lines: the name before the first colon, the value after it."""
    name, value = source[0].split(":", 1)
    return name, (value.lstrip(" \t") + "".join(source[1:])).rstrip("\r\n")


def status_line(version: str, status: int) -> str:
    """`HTTP/1.1 200 OK` and its CR LF; the reason is HTTPStatus's phrase, or empty."""
    from http import HTTPStatus  # on the first answer, not at the fake's start

    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    return f"{version} {status} {phrase}\r\n"


def http_date(seconds: float) -> str:
    """An HTTP date (RFC 9110 5.6.7) in GMT: "Wed, 02 Dec 2026 17:08:21 GMT"."""
    t = time.gmtime(seconds)
    day, month = _DAYS[t.tm_wday], _MONTHS[t.tm_mon - 1]
    clock = f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    return f"{day}, {t.tm_mday:02d} {month} {t.tm_year:04d} {clock} GMT"

"""The one line splitter (`_core.lines.BoundedLines`): the lines of any chunking of any input
are the lines of a reference split of the whole, each as soon as its end arrives; an overlong
line is its size, once; memory stays bounded by the cap. Bytes (an AI CLI's stdout) and text
(the wire's NDJSON and SSE, bytes decoded on the way by `ChunkReader`)."""

from __future__ import annotations

import itertools
import re
import tracemalloc
from typing import Any, AnyStr

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recoverable import agents, wire
from recoverable._core.lines import BoundedLines
from recoverable.wire._chunks import MAX_CHUNK_CHARS, Chunk
from recoverable.wire._lines import ChunkReader

PROPERTY = settings(max_examples=400, deadline=None)


def reference(data: AnyStr, cap: int, *, cr: bool, final: bool) -> list[AnyStr | int]:
    """The lines of `data` by `str.split`/`re.split`: the complete ones, and the last one
    too when `final` (the end of the input) and it is not empty."""
    if isinstance(data, str):
        parts: list[Any] = re.split("\r\n|\r|\n", data) if cr else data.split("\n")
        cr_: Any = "\r"
    else:
        parts = re.split(b"\r\n|\r|\n", data) if cr else data.split(b"\n")
        cr_ = b"\r"
    last = parts.pop()
    if final and last:
        parts.append(last)
    # The cap counts all before the LF (the CR of a CR-LF too); with `cr`, all before the end.
    return [
        len(line) if len(line) > cap else line[:-1] if line.endswith(cr_) else line
        for line in parts
    ]


def cut(data: AnyStr, cuts: list[int]) -> list[AnyStr]:
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def fed(lines: BoundedLines[AnyStr], data: AnyStr, cuts: list[int], *, cr: bool) -> None:
    """Feed `data` cut at `cuts`; after each piece, the lines so far are the reference's
    complete lines of what was fed: none held back, none early."""
    out: list[AnyStr | int] = []
    sent = 0
    for piece in cut(data, cuts):
        out += lines.feed(piece)
        sent += len(piece)
        assert out == reference(data[:sent], lines.max_len, cr=cr, final=False)
    out += lines.close()
    assert out == reference(data, lines.max_len, cr=cr, final=True)
    assert lines.close() == []  # nothing twice


# Line ends of every kind, lone CRs, invalid UTF-8 and cut sequences, long runs.
BYTE_PARTS = st.sampled_from(
    [b"\n", b"\r", b"\r\n", b"\n\r", b"a", b"{}", b"\xff", b"\xe2\x82", b"\xac", b"x" * 40]
) | st.binary(max_size=6)
TEXT_PARTS = st.sampled_from(
    ["\n", "\r", "\r\n", "a", "é", "\u2028", "\udc80", "y" * 40]
) | st.text(max_size=6)
CUTS = st.lists(st.integers(min_value=0, max_value=10_000), max_size=12)
CAPS = st.integers(min_value=0, max_value=50)


@PROPERTY
@given(st.lists(BYTE_PARTS, max_size=30), CUTS, CAPS, st.booleans())
def test_bytes_in_any_pieces_are_the_reference_lines(
    parts: list[bytes], cuts: list[int], cap: int, cr: bool
) -> None:
    fed(BoundedLines(cap, bytes, cr=cr), b"".join(parts), cuts, cr=cr)


@PROPERTY
@given(st.lists(TEXT_PARTS, max_size=30), CUTS, CAPS, st.booleans())
def test_text_in_any_pieces_is_the_reference_lines(
    parts: list[str], cuts: list[int], cap: int, cr: bool
) -> None:
    fed(BoundedLines(cap, str, cr=cr), "".join(parts), cuts, cr=cr)


class _Recorder(ChunkReader):
    """The wire's reader, keeping the lines it is given (and making no chunk of them)."""

    __slots__ = ("seen",)

    def __init__(self, *, cr: bool) -> None:
        super().__init__(cr=cr)
        self.seen: list[str | int] = []

    def _line(self, line: str | int) -> Chunk | None:
        self.seen.append(line)
        return None


@PROPERTY
@given(st.lists(BYTE_PARTS, max_size=30), CUTS, st.booleans())
def test_the_wire_reads_any_bytes_in_any_pieces_as_their_whole_decoding(
    parts: list[bytes], cuts: list[int], cr: bool
) -> None:
    data = b"".join(parts)
    reader = _Recorder(cr=cr)
    for piece in cut(data, cuts):
        reader.feed(piece)  # a UTF-8 sequence cut between pieces is decoded whole
    reader.close()
    text = data.decode("utf-8", "replace")
    assert reader.seen == reference(text, MAX_CHUNK_CHARS, cr=cr, final=True)


@pytest.mark.parametrize(
    ("pieces", "cr", "lines"),
    [
        # A CR-LF cut between pieces is one end; the LF after it is a line of its own (before,
        # a piece that was only the LF of a CR-LF left the next LF taken for one too).
        (["a\r", "\n", "\n"], True, ["a", ""]),
        (["a\r", "\n", "\r\n", "b\n"], True, ["a", "", "b"]),
        (["a\r", "", "\nb\r"], True, ["a", "b"]),
        (["a\r\r\n"], True, ["a", ""]),
        # Without `cr`: a lone CR is text; only the CR of a CR-LF goes (one, not a run of them).
        (["a\rb\r", "\n"], False, ["a\rb"]),
        (["a\r\r\n", "c\r"], False, ["a\r", "c"]),
        # The cap counts the CR of a CR-LF without `cr`, not with it.
        (["abcd\r\n"], False, [5]),
        (["abcd\r\n"], True, ["abcd"]),
    ],
)
def test_line_ends(pieces: list[str], cr: bool, lines: list[str | int]) -> None:
    splitter = BoundedLines(4, str, cr=cr)
    assert [line for piece in pieces for line in splitter.feed(piece)] + splitter.close() == lines


def test_an_overlong_line_is_counted_not_kept_and_reported_once_at_its_end() -> None:
    cap, piece_size, pieces = 1 << 20, 1 << 20, 64
    splitter = BoundedLines(cap, bytes)
    tracemalloc.start()
    try:
        out = splitter.feed(b"first\n")
        for i in range(pieces):  # 64 MiB without a newline, each piece a fresh object
            out += splitter.feed(bytes([65 + i % 26]) * piece_size)
            assert out == [b"first"]  # nothing yet: its size is known at its end
        out += splitter.feed(b"tail\nnext\n")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == [b"first", pieces * piece_size + 4, b"next"]
    assert peak < 4 * piece_size  # a piece and the kept start of the line, not 64 of them


def test_a_last_line_over_the_cap_is_its_size_at_close() -> None:
    splitter = BoundedLines(4, str)
    assert splitter.feed("ok\nlonger") == ["ok"]
    assert splitter.close() == [6]


def test_an_sse_event_after_a_cr_lf_cut_in_two_is_dispatched() -> None:
    reader = wire.SseReader()
    chunks = [
        *reader.feed('data: {"type":"text_delta","text":"a"}\r'),
        *reader.feed("\n"),  # the LF of the CR-LF, alone in its piece
        *reader.feed("\n"),  # the blank line that ends the event
    ]
    assert [chunk.event for chunk in chunks] == [agents.TextDelta("a")]

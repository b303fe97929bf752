"""Properties of the event streams (hypothesis): every event type round-trips through NDJSON
and SSE, whole or cut into pieces anywhere, with any line ends SSE allows; any text at all
(lone surrogates, line separators, CRs) writes one line of valid UTF-8; no input makes a
reader raise, and every chunk read is a typed event."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable import agents, wire
from recoverable._core.events import Severity
from recoverable.wire._opening import Pump, open_stream, rest
from recoverable.wire._publish import published

from ..support.wire import MARKER, events

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _cut(text: str, points: list[int]) -> list[str]:
    """`text` cut at `points` (any positions, CRLF pairs and characters alike)."""
    cuts = sorted({0, len(text), *(point % (len(text) + 1) for point in points)})
    return [text[start:end] for start, end in itertools.pairwise(cuts)]


@SETTINGS
@given(st.lists(events, max_size=6))
def test_every_event_round_trips_through_ndjson(sent: list[agents.Event]) -> None:
    text = "".join(wire.to_ndjson(event, seq=number) for number, event in enumerate(sent, 1))
    assert text.count("\n") == len(sent)
    assert len(text.splitlines()) == len(sent)  # no U+2028 or the like left raw
    chunks = wire.read_ndjson_chunks(text)
    assert [chunk.event for chunk in chunks] == sent
    assert [chunk.seq for chunk in chunks] == list(range(1, len(sent) + 1))


@SETTINGS
@given(st.lists(events, max_size=6))
def test_every_event_round_trips_through_sse(sent: list[agents.Event]) -> None:
    text = "".join(wire.to_sse(event, seq=number) for number, event in enumerate(sent, 1))
    chunks = wire.read_sse_chunks(text)
    assert [chunk.event for chunk in chunks] == sent
    assert [chunk.seq for chunk in chunks] == list(range(1, len(sent) + 1))


@SETTINGS
@given(
    st.lists(events, max_size=5),
    st.lists(st.integers(min_value=0), max_size=12),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
)
def test_pieces_of_any_size_read_the_same(
    sent: list[agents.Event], points: list[int], newline: str, as_bytes: bool
) -> None:
    sse = "".join(wire.to_sse(event, seq=n) for n, event in enumerate(sent, 1))
    sse = sse.replace("\n", newline)
    ndjson = "".join(wire.to_ndjson(event) for event in sent)
    for reader, text in ((wire.SseReader(), sse), (wire.NdjsonReader(), ndjson)):
        read: list[agents.Event] = []
        for piece in _cut(text, points):
            if as_bytes:  # cut inside UTF-8 sequences too
                data = piece.encode()
                read += [c.event for part in _cut_bytes(data, points) for c in reader.feed(part)]
            else:
                read += [chunk.event for chunk in reader.feed(piece)]
        read += [chunk.event for chunk in reader.close()]
        assert read == sent


def _cut_bytes(data: bytes, points: list[int]) -> list[bytes]:
    cuts = sorted({0, len(data), *(point % (len(data) + 1) for point in points)})
    return [data[start:end] for start, end in itertools.pairwise(cuts)]


@SETTINGS
@given(st.text(st.characters(codec=None, exclude_categories=()), max_size=60))
def test_any_text_writes_one_valid_utf8_line(text: str) -> None:
    for event in (agents.TextDelta(text), agents.ToolEnd(text, False, text, text)):
        line = wire.to_ndjson(event)
        line.encode("utf-8")  # no lone surrogate left
        assert line.endswith("\n")
        assert len(line.splitlines()) == 1
        (back,) = wire.read_ndjson(line)
        assert type(back) is type(event)
        message = wire.to_sse(event, seq=1)
        assert wire.read_sse(message) == [back]


hostile_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=10,
)
TYPES = ["text_delta", "tool_start", "tool_end", "turn_end", "error", "done", "raw",
         "thinking_delta", "other", ""]  # fmt: skip
FIELDS = ["text", "tool_id", "name", "success", "usage", "severity", "detail", "result", "cli",
          "seq"]  # fmt: skip
chunk_like = st.fixed_dictionaries(
    {"type": st.sampled_from(TYPES)}, optional=dict.fromkeys(FIELDS, hostile_json)
)


@SETTINGS
@given(st.lists(chunk_like | hostile_json, max_size=5))
def test_forged_chunks_never_raise_and_the_stream_goes_on(forged: list[object]) -> None:
    lines = [json.dumps(item, allow_nan=True) for item in forged]
    read = wire.read_ndjson([*lines, '{"type":"text_delta","text":"after"}'])
    assert len(read) == len(forged) + 1
    assert read[-1] == agents.TextDelta("after")
    for event in read[:-1]:
        if isinstance(event, agents.ErrorEvent) and event.detail.code == "tool_output_invalid":
            assert event.severity == "warning"
            assert event.detail.retryable is False


EVENT_TYPES = (agents.TextDelta, agents.ThinkingDelta, agents.ToolStart, agents.ToolEnd,
               agents.TurnEnd, agents.ErrorEvent, agents.Done, agents.Raw)  # fmt: skip


@SETTINGS
@given(st.binary(max_size=200) | st.text(max_size=200))
def test_garbage_never_raises(garbage: bytes | str) -> None:
    for event in wire.read_ndjson(garbage) + wire.read_sse(garbage):
        assert isinstance(event, EVENT_TYPES)


@st.composite
def marked_details(draw: st.DrawFn) -> rc.ErrorDetail:
    """Details whose every developer field holds MARKER."""
    code = draw(st.sampled_from([row.code for row in rc.codes]))
    return rc.ErrorDetail.create(
        code, f"{draw(st.text(max_size=10))}{MARKER}", cause=f"cause {MARKER}",
        source=draw(st.sampled_from([None, "openai", "claude"])),
        details={"stderr_tail": MARKER, "nested": {"path": f"/home/{MARKER}"}},
    )  # fmt: skip


@SETTINGS
@given(marked_details(), st.sampled_from(["warning", "error"]), st.booleans())
def test_public_writers_never_carry_developer_text(
    detail: rc.ErrorDetail, severity: Severity, problem: bool
) -> None:
    result = agents.RunResult(False, "partial", detail, stderr_tail=MARKER)
    sent = [agents.ErrorEvent(detail, severity), agents.Done(result), detail,
            agents.ToolEnd("t", False, None, MARKER), agents.Raw("claude", MARKER)]  # fmt: skip
    for event in sent:
        assert MARKER not in wire.to_sse(event, public=True)
        assert MARKER not in wire.to_ndjson(event, public=True)
    assert MARKER not in wire.to_ui_message_stream([agents.ErrorEvent(detail), agents.Done(result)])
    _, _, body = wire.http_response(detail, problem=problem)
    assert MARKER.encode() not in body
    if detail.code in ("unknown", "internal_error"):
        _, _, body = wire.http_response(detail, problem=problem, expose_message=True)
        assert MARKER.encode() not in body


# --- attempts and error contexts ----------------------------------------------------------------

contexts = st.none() | st.builds(
    wire.ErrorContext,
    st.none() | st.sampled_from(["claude", "codex", "gemini", "openai", "x-y_z"]),
    st.none() | st.just("cli"),
    st.none() | st.integers(min_value=0, max_value=10**18 - 1),
    st.none() | st.integers(min_value=1, max_value=10**18 - 1),
)


@st.composite
def retried_chunks(draw: st.DrawFn) -> list[wire.Chunk]:
    """A retried stream as a publisher numbers it: attempts in order, each but the last one
    that sent something followed by the marker that supersedes it."""
    chunks: list[wire.Chunk] = []
    attempts = draw(st.integers(min_value=1, max_value=4))
    for attempt in range(1, attempts + 1):
        if attempt > 1 and chunks and chunks[-1].attempt == attempt - 1:
            chunks.append(wire.Chunk(wire.AttemptSuperseded(attempt - 1), None, attempt))
        for event in draw(st.lists(events, max_size=3)):
            context = draw(contexts) if isinstance(event, agents.ErrorEvent) else None
            if context is not None and context.agent is None:  # a kind is an agent's
                context = dataclasses.replace(context, agent_kind=None)
            context = None if context == wire.ErrorContext() else context  # (read as none)
            chunks.append(wire.Chunk(event, None, attempt, context))
    return [wire.Chunk(c.event, seq, c.attempt, c.context) for seq, c in enumerate(chunks, 1)]


@SETTINGS
@given(retried_chunks())
def test_a_retried_stream_round_trips_and_its_readers_keep_the_winner(
    sent: list[wire.Chunk],
) -> None:
    ndjson = "".join(wire.to_ndjson(chunk) for chunk in sent)
    sse = "".join(wire.to_sse(chunk) for chunk in sent)
    for chunks in (wire.read_ndjson_chunks(ndjson), wire.read_sse_chunks(sse)):
        assert chunks == sent  # the event, seq, attempt and context of each
    stale = {c.event.superseded for c in sent if isinstance(c.event, wire.AttemptSuperseded)}
    winners = [c.event for c in sent if c.attempt not in stale
               and not isinstance(c.event, wire.AttemptSuperseded)]  # fmt: skip
    assert wire.read_ndjson(ndjson) == winners
    assert wire.read_sse(sse) == winners
    assert all(not isinstance(event, wire.AttemptSuperseded) for event in winners)


@SETTINGS
@given(retried_chunks())
def test_a_retried_streams_public_chunks_name_only_our_agents(sent: list[wire.Chunk]) -> None:
    for chunk in sent:
        line = wire.to_ndjson(chunk, public=True)
        if not line:
            continue
        data = json.loads(line)
        assert data["attempt"] == chunk.attempt
        if data["type"] == "error":
            assert data.get("agent") in {None, "claude", "codex", "gemini"}
            assert set(data) <= {"type", "severity", "detail", "seq", "attempt", "agent",
                                 "agent_kind", "timestamp", "step"}  # fmt: skip


# --- how a streamed response begins (`_opening`): its status, and nothing lost --------------------


def _public_written(chunk: wire.Chunk) -> list[wire.Chunk]:
    return [] if wire.to_ndjson(chunk, public=True) == "" else [chunk]


def _expected_opening(sent: list[agents.Event]) -> str:
    """The answer the table of `_opening` gives: "failure", "empty" or "stream"."""
    written = [e for e in sent if not isinstance(e, agents.Raw)]
    if not written:
        return "empty"
    meaningful = [e for e in written if not isinstance(e, agents.TurnEnd)
                  and not (isinstance(e, agents.ErrorEvent) and e.severity != "error")]  # fmt: skip
    if not meaningful:
        return "stream"
    first = meaningful[0]
    if not (isinstance(first, agents.ErrorEvent) and first.severity == "error"):
        return "stream"
    after = meaningful[1:2]
    return "failure" if not after or isinstance(after[0], agents.Done) else "stream"


async def _open(sent: list[agents.Event]) -> tuple[Any, list[wire.Chunk]]:
    async def source() -> Any:
        for event in sent:
            yield event

    pump = Pump(published(source()))
    opening = await open_stream(pump, _public_written, 5.0)
    if opening.failure is not None or opening.empty:
        await pump.stop()
        return opening, []
    return opening, [chunk async for chunk in rest(opening, pump, _public_written)]


@SETTINGS
@given(st.lists(events, max_size=6))
def test_a_streams_opening_says_what_its_table_says_and_loses_nothing(
    sent: list[agents.Event],
) -> None:
    opening, streamed = asyncio.run(_open(sent))
    expected = _expected_opening(sent)
    if expected == "failure":
        first = next(e for e in sent if isinstance(e, agents.ErrorEvent) and e.severity == "error")
        assert opening.failure == first.detail
    elif expected == "empty":
        assert (opening.failure, opening.empty) == (None, True)
    else:
        assert opening.failure is None and not opening.empty
        # the stream sends every written event, in order, numbered from 1
        assert [chunk.event for chunk in streamed] == [
            e for e in sent if not isinstance(e, agents.Raw)
        ]
        numbers = [chunk.seq for chunk in streamed]
        assert numbers == sorted(numbers)

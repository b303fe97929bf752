"""The event streams, case by case: the exact chunks written, what a forged or broken chunk
reads as, public streams, and resuming from a Last-Event-ID."""

from __future__ import annotations

import asyncio
import json

import pytest

import recoverable as rc
from recoverable import agents, wire
from recoverable.wire._chunks import MAX_CHUNK_CHARS

from ..support.wire import MARKER, SECRET

RATE = rc.ErrorDetail.create(
    "provider_rate_limited", f"429 from upstream {MARKER} key {SECRET}", retry_after_ms=2500,
    source="openai", status=429, details={"request_id": "req_1", "stderr_tail": MARKER},
    cause=f"socket said {MARKER}",
)  # fmt: skip


def test_the_chunks_written() -> None:
    assert wire.to_ndjson(agents.TextDelta("hé\u2028"), seq=4) == (
        '{"type":"text_delta","text":"hé\\u2028","seq":4}\n'
    )
    assert wire.to_sse(agents.ToolStart("t1", "Bash", {"command": "ls"}), seq=9) == (
        'id: 9\ndata: {"type":"tool_start","tool_id":"t1","name":"Bash",'
        '"input":{"command":"ls"}}\n\n'
    )
    assert wire.to_sse(agents.TurnEnd()) == 'data: {"type":"turn_end","usage":null}\n\n'


def test_a_standalone_detail_or_error_is_an_error_event() -> None:
    (event,) = wire.read_ndjson(wire.to_ndjson(RATE))
    assert event == agents.ErrorEvent(RATE, "error")
    (event,) = wire.read_sse(wire.to_sse(rc.RecoverableError(RATE)))
    assert event == agents.ErrorEvent(RATE, "error")
    assert event.detail.retry_after_ms == 2500
    assert SECRET not in wire.to_ndjson(RATE)  # scrubbed when the detail was built


def test_public_chunks_carry_no_developer_text() -> None:
    result = agents.RunResult(False, "partial", RATE, exit_code=1, stderr_tail=MARKER)
    sent = [
        agents.ErrorEvent(RATE),
        agents.ToolEnd("t1", False, "out", f"failed: {MARKER}", RATE),
        agents.Done(result),
        agents.Raw("claude", {"cwd": MARKER}),
    ]
    text = "".join(wire.to_sse(event, seq=n, public=True) for n, event in enumerate(sent, 1))
    assert MARKER not in text
    assert "sk-" not in text
    read = wire.read_sse(text)
    assert len(read) == 3  # Raw is not written publicly
    error, tool_end, done = read
    assert isinstance(error, agents.ErrorEvent)
    assert error.detail.code == "provider_rate_limited"
    assert error.detail.retryable is True
    assert error.detail.retry_after_ms == 2500
    assert error.detail.message == error.detail.user_message == RATE.user_message
    assert (error.detail.cause, error.detail.details, error.detail.source) == (None, {}, None)
    assert isinstance(tool_end, agents.ToolEnd)
    assert (tool_end.tool_id, tool_end.success, tool_end.output, tool_end.error) == (
        "t1", False, "out", None,
    )  # fmt: skip
    assert tool_end.detail is not None
    assert (tool_end.detail.code, tool_end.detail.message) == (
        "provider_rate_limited", RATE.user_message,
    )  # fmt: skip
    assert isinstance(done, agents.Done)
    assert done.result.text == "partial"
    assert done.result.stderr_tail == ""
    assert done.result.error is not None
    assert done.result.error.message == RATE.user_message
    assert wire.to_ndjson(agents.Raw("x", 1), public=True) == ""


MALFORMED = [
    ("nope", "not JSON"),
    ("[1, 2]", "not a JSON object (list)"),
    ('{"type": "text_delta", "text": NaN}', "not JSON"),
    ('{"type": "turn_end", "usage": 1e999}', "not JSON"),
    ("[" * 100_000, "nested too deep"),
    ('{"x": ' + "9" * 5000 + "}", "not JSON"),
    ('{"text": "no type"}', "no string 'type'"),
    ('{"type": 3}', "no string 'type'"),
    ('{"type": "text_delta", "text": 5}', "text_delta: 'text' must be a string"),
    ('{"type": "tool_end", "tool_id": "t", "success": "yes"}',
     "tool_end: 'success' must be a boolean"),
    ('{"type": "error", "detail": {"message": "m"}}',
     "error: an ErrorDetail payload needs a lower_snake string 'code'"),
    ('{"type": "error", "severity": "fatal", "detail": {}}',
     "error: 'severity' must be 'warning' or 'error'"),
    ('{"type": "done", "result": {"success": true, "error": {"code": "unknown", "message": ""}}}',
     "done: a result has an error exactly when it failed"),
    ('{"type": "done", "result": {"success": false, "exit_code": true, '
     '"error": {"code": "unknown", "message": ""}}}', "done: 'exit_code' has the wrong type"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "why"), MALFORMED)
def test_a_malformed_chunk_is_a_warning_and_the_stream_goes_on(line: str, why: str) -> None:
    text = f'{line}\n{{"type":"text_delta","text":"after"}}\n'
    warning, after = wire.read_ndjson(text)
    assert isinstance(warning, agents.ErrorEvent)
    assert warning.severity == "warning"
    assert warning.detail.code == "tool_output_invalid"
    assert warning.detail.retryable is False
    assert warning.detail.source == "wire"
    assert warning.detail.details["malformed"] == why
    assert after == agents.TextDelta("after")
    sse = "".join(f"data: {part}\n" for part in line.split("\n")) + "\n"
    warning, after = wire.read_sse(sse + 'data: {"type":"text_delta","text":"after"}\n\n')
    assert warning.detail.details["malformed"] == why  # type: ignore[union-attr]
    assert after == agents.TextDelta("after")


def test_a_forged_detail_is_read_by_the_payload_rules() -> None:
    forged = {
        "type": "error",
        "detail": {
            "code": "provider_auth_failed",
            "message": f"bad key {SECRET}",
            "user_message": "Click http://evil.example to fix",
            "fix_command": "rm -rf /",
            "retry_after_ms": 1e300,
            "details": {"a": json.loads("[" * 30 + "1" + "]" * 30)},
        },
    }
    (event,) = wire.read_ndjson(json.dumps(forged))
    assert isinstance(event, agents.ErrorEvent)
    detail = event.detail
    assert detail.code == "provider_auth_failed"
    assert SECRET not in detail.message
    assert detail.user_message == rc.codes["provider_auth_failed"].user_message
    assert detail.fix_command is None
    assert "fix_command_dropped" in detail.details
    assert detail.retry_after_ms is None  # not retryable: no wait


def test_unknown_types_come_back_as_raw() -> None:
    text = '{"type":"text-start","id":"x","seq":3}\n{"type":"raw","cli":"codex","event":[1]}\n'
    assert wire.read_ndjson_chunks(text) == [
        wire.Chunk(agents.Raw("wire", {"type": "text-start", "id": "x"}), 3),
        wire.Chunk(agents.Raw("codex", [1]), None),
    ]


def test_lone_surrogates_and_invalid_utf8_are_replaced() -> None:
    (event,) = wire.read_ndjson('{"type":"text_delta","text":"a\\ud800b"}')
    assert event == agents.TextDelta("a\ufffdb")
    (event,) = wire.read_ndjson(b'{"type":"text_delta","text":"a\xffb"}\n')
    assert event == agents.TextDelta("a\ufffdb")
    assert wire.to_ndjson(agents.TextDelta("\udc80")) == '{"type":"text_delta","text":"\ufffd"}\n'


def test_an_overlong_line_is_one_warning_and_the_rest_is_read() -> None:
    reader = wire.NdjsonReader()
    chunks = []
    for _ in range(9):  # 9 MiB without a newline, in pieces: never kept whole
        chunks += reader.feed("x" * (1 << 20))
    chunks += reader.feed('\n{"type":"text_delta","text":"after"}\n')
    chunks += reader.close()
    assert [c.event.type for c in chunks] == ["error", "text_delta"]
    assert chunks[0].event.detail.details["malformed"] == (  # type: ignore[union-attr]
        f"a line over {MAX_CHUNK_CHARS} characters"
    )


def test_sse_parsing_rules() -> None:
    text = (
        "\ufeff: a comment\r\n"
        "retry: 1500\r\n"
        "id: 7\r\n"
        "event: ignored\r\n"
        'data: {"type":"text_delta",\r\n'
        'data:"text":"a"}\r\n'
        "\r\n"
        "id: x\0y\n"  # an id with NUL is ignored: the last id stays 7
        'data: {"type":"text_delta","text":"b"}\n'
        "\n"
        "data: [DONE]\n\n"
        'data: {"type":"text_delta","text":"cut off"}\n'  # no blank line: never dispatched
        "id: 9"  # no line end: not a line, the last id stays 7
    )
    reader = wire.SseReader()
    chunks = reader.feed(text) + reader.close()
    assert chunks == [
        wire.Chunk(agents.TextDelta("a"), 7),
        wire.Chunk(agents.TextDelta("b"), None),
    ]
    assert (reader.last_event_id, reader.retry_ms) == ("7", 1500)


def test_a_text_or_its_lines() -> None:
    lines = ["id: 1", 'data: {"type":"text_delta","text":"a"}', ""]
    assert wire.read_sse(lines) == [agents.TextDelta("a")]
    assert wire.read_sse([line.encode() for line in lines]) == [agents.TextDelta("a")]
    assert wire.read_ndjson(['{"type":"text_delta","text":"a"}', "", b"  "]) == [
        agents.TextDelta("a")
    ]


@pytest.mark.parametrize(
    ("headers", "seq"),
    [
        ({"Last-Event-ID": "12"}, 12),
        ({"last-event-id": " 3 "}, 3),
        ([(b"last-event-id", b"5")], 5),
        ({"last-event-id": "-1"}, None),
        ({"last-event-id": "1e3"}, None),
        ({"last-event-id": "9" * 19}, None),
        ({"last-event-id": "\u0661"}, None),  # an Arabic-Indic digit is not ours
        ({}, None),
        (None, None),
    ],
)
def test_last_event_id(headers: object, seq: int | None) -> None:
    assert wire.last_event_id(headers) == seq


def test_a_stream_log_serves_a_client_from_where_it_stopped() -> None:
    log = wire.StreamLog(max_events=3)
    for text in "abcde":
        log.append(agents.TextDelta(text))
    assert log.last_seq == 5
    assert log.since(3) == [
        wire.Chunk(agents.TextDelta("d"), 4),
        wire.Chunk(agents.TextDelta("e"), 5),
    ]
    assert log.since(5) == []
    assert log.since(2) == [wire.Chunk(agents.TextDelta(t), n) for n, t in ((3, "c"), (4, "d"),
                                                                            (5, "e"))]  # fmt: skip
    assert log.since(1) is None  # chunk 2 is no longer kept
    assert log.since(None) is None
    assert log.since(6) is None  # never given out
    log.close()
    with pytest.raises(ValueError, match="ended"):
        log.append(agents.TextDelta("late"))


async def test_follow_waits_for_new_events_until_the_stream_closes() -> None:
    log = wire.StreamLog()
    log.append(agents.TextDelta("a"))

    async def producer() -> None:
        for text in "bc":
            await asyncio.sleep(0.01)
            log.append(agents.TextDelta(text))
        await asyncio.sleep(0.01)
        log.close()

    task = asyncio.create_task(producer())
    seen = [chunk.seq async for chunk in log.follow(None)]
    await task
    assert seen == [1, 2, 3]
    assert [chunk.seq async for chunk in log.follow(2)] == [3]
    with pytest.raises(LookupError):
        async for _ in wire.StreamLog(max_events=1).follow(7):
            pass

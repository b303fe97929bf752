"""Reading and writing event streams: ours against the openai SDK's SSE decoder, sse-starlette's
writer and bare json.

Run: .venv/bin/python benchmarks/bench_wire.py [--json] [--events 20000]

Builds a realistic agent stream (text deltas, tool calls with their output, turn ends, an
error, the final Done) and times, in one process, the median of several passes of:

- reading SSE: `json.loads` of each `data:` line split out by hand (the floor: no SSE rules, no
  types); the openai SDK's `SSEDecoder.iter_bytes` + `json.loads` (dicts, what its clients
  parse); ours, `SseReader.feed` (WHATWG rules, bounded chunks, typed events, every detail
  through the payload rules);
- reading NDJSON: `json.loads` per line against `NdjsonReader.feed`;
- writing SSE: `json.dumps` + an f-string (the floor); sse-starlette's `ServerSentEvent(...)
  .encode()` of the same JSON; ours, `to_sse` of the typed event (and `public=True`).

Prints a Markdown table of MB/s and events per second. Compare ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import recoverable as rc
from recoverable import agents, wire
from recoverable._core import events as _events

REPEATS = 5
PIECE = 64 * 1024  # what one socket read hands both readers


def events(count: int) -> list[agents.Event]:
    """`count` events shaped like an agent run: mostly text, some tools, one error, Done."""
    rate = rc.ErrorDetail.create(
        "provider_rate_limited",
        "429 from upstream",
        retry_after_ms=2000,
        source="claude",
        details={"request_id": "req_0123"},
    )
    made: list[agents.Event] = []
    for number in range(count - 1):
        kind = number % 20
        if kind == 5:
            made.append(agents.ToolStart(f"toolu_{number}", "Bash", {"command": f"ls {number}"}))
        elif kind == 6:
            made.append(agents.ToolEnd(f"toolu_{number - 1}", True, f"file_{number}.py\n" * 4))
        elif kind == 12:
            made.append(agents.TurnEnd({"input_tokens": number, "output_tokens": 12}))
        elif kind == 19:
            made.append(agents.ErrorEvent(rate, "warning"))
        else:
            made.append(agents.TextDelta(f"word{number} and some more text, "))
    made.append(agents.Done(agents.RunResult(True, "the answer", usage={"output_tokens": 9})))
    return made


def _pieces(text: str) -> list[bytes]:
    data = text.encode()
    return [data[start : start + PIECE] for start in range(0, len(data), PIECE)]


def _timed(run: Callable[[], int], expected: int) -> float:
    """The median seconds of REPEATS passes (after one warm-up); each must see every event."""
    assert run() == expected
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        count = run()
        times.append(time.perf_counter() - start)
        assert count == expected, (count, expected)
    return statistics.median(times)


def _read_rows(sent: list[agents.Event]) -> dict[str, tuple[float, int]]:
    from openai._streaming import SSEDecoder

    sse = "".join(wire.to_sse(event, seq=n) for n, event in enumerate(sent, 1))
    ndjson = "".join(wire.to_ndjson(event, seq=n) for n, event in enumerate(sent, 1))
    sse_pieces, ndjson_pieces = _pieces(sse), _pieces(ndjson)

    def floor_sse() -> int:
        lines = b"".join(sse_pieces).decode().split("\n")
        return len([json.loads(line[6:]) for line in lines if line.startswith("data: ")])

    def openai_sse() -> int:
        return len([json.loads(e.data) for e in SSEDecoder().iter_bytes(iter(sse_pieces))])

    def ours_sse() -> int:
        reader = wire.SseReader()
        return sum(len(reader.feed(piece)) for piece in sse_pieces) + len(reader.close())

    def floor_ndjson() -> int:
        lines = b"".join(ndjson_pieces).decode().split("\n")
        return len([json.loads(line) for line in lines if line])

    def ours_ndjson() -> int:
        reader = wire.NdjsonReader()
        return sum(len(reader.feed(piece)) for piece in ndjson_pieces) + len(reader.close())

    rows = {}
    for name, run, size in (
        ("read SSE: json.loads per data line (floor)", floor_sse, len(sse)),
        ("read SSE: openai SSEDecoder + json.loads", openai_sse, len(sse)),
        ("read SSE: ours, typed (SseReader)", ours_sse, len(sse)),
        ("read NDJSON: json.loads per line (floor)", floor_ndjson, len(ndjson)),
        ("read NDJSON: ours, typed (NdjsonReader)", ours_ndjson, len(ndjson)),
    ):
        rows[name] = (_timed(run, len(sent)), size)
    return rows


def _write_rows(sent: list[agents.Event]) -> dict[str, tuple[float, int]]:
    from sse_starlette import ServerSentEvent

    size = len("".join(wire.to_sse(event, seq=n) for n, event in enumerate(sent, 1)))

    def floor() -> int:
        out = [
            f"id: {n}\ndata: {json.dumps(_events.event_to_dict(e))}\n\n"
            for n, e in enumerate(sent, 1)
        ]
        return len(out)

    def sse_starlette() -> int:
        out = [
            ServerSentEvent(json.dumps(_events.event_to_dict(e)), id=str(n), sep="\n").encode()
            for n, e in enumerate(sent, 1)
        ]
        return len(out)

    def ours() -> int:
        return len([wire.to_sse(event, seq=n) for n, event in enumerate(sent, 1)])

    def ours_public() -> int:
        return len([wire.to_sse(event, seq=n, public=True) for n, event in enumerate(sent, 1)])

    return {
        name: (_timed(run, len(sent)), size)
        for name, run in (
            ("write SSE: json.dumps + f-string (floor)", floor),
            ("write SSE: sse-starlette ServerSentEvent", sse_starlette),
            ("write SSE: ours (to_sse)", ours),
            ("write SSE: ours, public (to_sse public=True)", ours_public),
        )
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sent = events(args.events)
    rows = {**_read_rows(sent), **_write_rows(sent)}
    report: dict[str, Any] = {
        "events": len(sent),
        "rows": {
            name: {"seconds": s, "mb_per_s": size / s / 1e6, "events_per_s": len(sent) / s}
            for name, (s, size) in rows.items()
        },
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{len(sent)} events, median of {REPEATS} passes\n")
    print("| path | MB/s | events/s |")
    print("|---|---:|---:|")
    for name, row in report["rows"].items():
        print(f"| {name} | {row['mb_per_s']:.1f} | {row['events_per_s']:,.0f} |")


if __name__ == "__main__":
    main()

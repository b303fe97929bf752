"""Parsing Claude Code's stream-json stdout: ours against json.loads and claude-agent-sdk.

Run: .venv/bin/python benchmarks/bench_parse.py [--json] [--mb 5] [--profile]

Builds ~5 MB of realistic NDJSON from the real lines in tests/data/cli/claude/{tool,text}.stdout
(fresh ids and text in every repetition, with `--include-partial-messages` stream_event lines
shaped like a captured run), then times, in one process, the median of several passes of:
json.loads per line (the floor), our parser (`agents.replay`, the `parse_line` loop, and the
run path's framing without a subprocess), and claude-agent-sdk's stdout path on the same bytes
(its real `_LineFramer`, `_parse_stdout_line` and `parse_message`; and its real transport
generator over an in-memory byte stream). Prints a Markdown table of MB/s. No subprocess, no
network.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from _claude_stream import CHUNK, build_stream
from recoverable import agents
from recoverable.agents import _claude
from recoverable.agents._process import RunContext

__all__ = ["CHUNK", "build_stream"]  # bench_scale's and bench_flood's imports, from here

REPEATS = 7  # timed passes per path; the median is reported
TARGET_RATIO = 0.70  # ours >= 70% of json.loads

# -- the paths --------------------------------------------------------------------------------

Pass = Callable[[], int]  # runs once over the data, returns how many events/messages it made


def path_json_loads(text_lines: list[str]) -> Pass:
    loads = json.loads

    def run() -> int:
        n = 0
        for line in text_lines:
            loads(line)
            n += 1
        return n

    return run


def path_json_loads_kept(text_lines: list[str]) -> Pass:
    """The floor plus keeping every dict, as every parser below keeps what it made."""
    loads = json.loads

    def run() -> int:
        kept = [loads(line) for line in text_lines]
        return len(kept)

    return run


def path_replay(data: bytes) -> Pass:
    def run() -> int:
        result = agents.replay("claude", data)
        assert result.success, result.error
        return len(result.events)

    return run


def path_parse_line(text_lines: list[str]) -> Pass:
    parse_line = _claude.parse_line

    def run() -> int:
        state = _claude.new_state()
        events: list[Any] = []
        for line in text_lines:
            events.extend(parse_line(line, state))
        return len(events)

    return run


def path_run_reader(chunks: list[bytes]) -> Pass:
    """Our run path minus the subprocess: what a runner does with each 64 KiB stdout read
    (`RunContext.chunk_events`: framing, decoding, parsing, the events the result keeps)."""
    options = agents.RunOptions(max_tool_failures=None, keep_events=None)  # keep every event

    def run() -> int:
        context = RunContext(_claude, options, time.monotonic)
        count = 0
        for chunk in [*chunks, b""]:
            count += len(context.chunk_events(chunk))
        return count

    return run


def path_sdk_sync(chunks: list[bytes]) -> Pass:
    """claude-agent-sdk's stdout path, its sync parts called directly, per 64 KiB chunk."""
    from claude_agent_sdk._internal.message_parser import parse_message
    from claude_agent_sdk._internal.transport.subprocess_cli import (
        _DEFAULT_MAX_BUFFER_SIZE,
        _LineFramer,
        _parse_stdout_line,
    )

    limit = _DEFAULT_MAX_BUFFER_SIZE

    def run() -> int:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")  # TextReceiveStream's
        framer = _LineFramer()
        messages: list[Any] = []  # kept, as ours keeps its events
        for chunk in chunks:
            for line in framer.push(decoder.decode(chunk)):
                if len(line) > limit:  # its guard()
                    raise ValueError("over the SDK's buffer limit")
                data = _parse_stdout_line(line)
                if data is not None and (message := parse_message(data)) is not None:
                    messages.append(message)
            if framer.pending_len > limit:
                raise ValueError("over the SDK's buffer limit")
        tail = _parse_stdout_line(framer.flush() + decoder.decode(b"", final=True))
        if tail is not None and (message := parse_message(tail)) is not None:
            messages.append(message)
        return len(messages)

    return run


def path_sdk_transport(chunks: list[bytes]) -> Pass:
    """The SDK's real `SubprocessCLITransport.read_messages()` over an in-memory byte stream."""
    import anyio
    from anyio.streams.text import TextReceiveStream
    from claude_agent_sdk import ClaudeAgentOptions
    from claude_agent_sdk._internal.message_parser import parse_message
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    class Bytes:  # what anyio's Process.stdout is to TextReceiveStream: receive() -> bytes
        def __init__(self) -> None:
            self.it = iter(chunks)

        async def receive(self) -> bytes:
            try:
                return next(self.it)
            except StopIteration:
                raise anyio.EndOfStream from None

    class Exited:
        async def wait(self) -> int:
            return 0

    async def main() -> tuple[int, float]:
        transport = SubprocessCLITransport(prompt="x", options=ClaudeAgentOptions(cli_path="x"))
        transport._process = Exited()  # type: ignore[assignment]
        transport._stdout_stream = TextReceiveStream(Bytes())  # type: ignore[arg-type]
        messages: list[Any] = []
        start = time.perf_counter_ns()
        async for data in transport.read_messages():
            if (message := parse_message(data)) is not None:
                messages.append(message)
        return len(messages), time.perf_counter_ns() - start

    return _timed_async(main)


_ASYNC_NS: dict[int, float] = {}


def _timed_async(main: Callable[[], Any]) -> Pass:
    """An async path: time only the loop inside `main` (not the event loop's start)."""

    def run() -> int:
        count, elapsed = asyncio.run(main())
        _ASYNC_NS[id(run)] = elapsed
        return int(count)

    return run


def time_paths(runs: list[Pass]) -> list[tuple[float, int]]:
    """(median seconds per pass, count) per path: one warm-up pass each, then REPEATS rounds.

    Round robin, so that load from other jobs falls on every path alike, and a full
    collection before each pass, so that no pass inherits another's garbage.
    """
    counts = [run() for run in runs]
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(REPEATS):
        for i, run in enumerate(runs):
            gc.collect()
            start = time.perf_counter_ns()
            run()
            elapsed = time.perf_counter_ns() - start
            times[i].append(_ASYNC_NS.pop(id(run), elapsed) / 1e9)
    return [(statistics.median(t), n) for t, n in zip(times, counts, strict=True)]


def profile(run: Pass, top: int = 25) -> str:
    """cProfile of one pass, sorted by own time, our code first."""
    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    parser.add_argument("--mb", type=float, default=5.0, help="size of the stream (default 5)")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also print a cProfile of agents.replay (always when it misses the target)",
    )
    args = parser.parse_args(argv)

    data, mix = build_stream(int(args.mb * 1_000_000))
    text_lines = data.decode("utf-8").splitlines()
    chunks = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]
    mb = len(data) / 1_000_000

    import claude_agent_sdk

    sdk = f"claude-agent-sdk {claude_agent_sdk.__version__}"
    # (label, key, path); the key names a row for the verdict and --json.
    paths: list[tuple[str, str, Pass]] = [
        (
            "json.loads per line (the floor), dicts discarded",
            "json_loads",
            path_json_loads(text_lines),
        ),
        (
            "json.loads per line, dicts kept in a list",
            "json_loads_kept",
            path_json_loads_kept(text_lines),
        ),
        (
            'ours: agents.replay("claude", data), every event kept in the result',
            "ours_replay",
            path_replay(data),
        ),
        (
            "ours: _claude.parse_line loop over str lines, events kept in a list",
            "ours_parse_line",
            path_parse_line(text_lines),
        ),
        (
            "ours: run path without the process (RunContext.chunk_events per 64 KiB read), "
            "every event kept in its log",
            "ours_run_path",
            path_run_reader(chunks),
        ),
        (
            f"{sdk}: _LineFramer + _parse_stdout_line + parse_message, messages kept in a list",
            "sdk_sync",
            path_sdk_sync(chunks),
        ),
        (
            f"{sdk}: SubprocessCLITransport.read_messages() + parse_message, messages kept in "
            "a list",
            "sdk_transport",
            path_sdk_transport(chunks),
        ),
    ]
    rows: dict[str, dict[str, Any]] = {}
    timed = time_paths([run for _, _, run in paths])
    for (label, key, _), (seconds, count) in zip(paths, timed, strict=True):
        rows[key] = {"path": label, "seconds": seconds, "mb_per_s": mb / seconds, "count": count}
    floor = rows["json_loads"]["mb_per_s"]
    for row in rows.values():
        row["pct_of_json_loads"] = 100 * row["mb_per_s"] / floor
    replay, run_path = rows["ours_replay"], rows["ours_run_path"]
    verdict = {
        "replay_pct_of_json_loads": round(replay["pct_of_json_loads"], 1),
        "meets_70pct": replay["pct_of_json_loads"] >= 100 * TARGET_RATIO,
        "replay_over_sdk_sync": round(replay["mb_per_s"] / rows["sdk_sync"]["mb_per_s"], 2),
        "run_path_over_sdk_transport": round(
            run_path["mb_per_s"] / rows["sdk_transport"]["mb_per_s"], 2
        ),
    }
    report = None
    if args.profile or not verdict["meets_70pct"]:
        report = profile(path_replay(data))

    if args.json:
        payload = {
            "python": platform.python_version(),
            "bytes": len(data),
            "lines": len(text_lines),
            "mix": mix,
            "repeats": REPEATS,
            "rows": rows,
            "verdict": verdict,
            "profile": report,
        }
        print(json.dumps(payload, indent=2))
        return 0
    print("# Claude stream-json parsing\n")
    print(
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} "
        f"CPUs; {mb:.2f} MB, {len(text_lines)} lines "
        f"({', '.join(f'{k} {v}' for k, v in sorted(mix.items(), key=lambda kv: -kv[1]))}); "
        f"median of {REPEATS} passes, one process.\n"
    )
    print("| path | MB/s | % of json.loads | events/messages produced |")
    print("|---|---:|---:|---:|")
    for row in rows.values():
        print(
            f"| {row['path']} | {row['mb_per_s']:.1f} | {row['pct_of_json_loads']:.0f}% "
            f"| {row['count']} |"
        )
    ok = "yes" if verdict["meets_70pct"] else "NO"
    print(
        f"\nTargets: replay >= 70% of json.loads: {ok} "
        f"({verdict['replay_pct_of_json_loads']:.0f}%); replay / SDK sync path: "
        f"{verdict['replay_over_sdk_sync']:.2f}x; run path / SDK transport: "
        f"{verdict['run_path_over_sdk_transport']:.2f}x (> 1: faster than the SDK)."
    )
    print(
        "\nEvery parser row keeps what it produced in a list (ours: the events, Done not "
        "counted; the SDK: the typed messages parse_message returns, one per line), so each "
        "pays the garbage collector for the objects it keeps, as the second row does. "
        "Async rows time only the read loop, not the event loop's start."
    )
    if report is not None:
        print("\n## cProfile of one agents.replay pass (by own time)\n")
        print("```\n" + report.strip() + "\n```")
    return 0


if __name__ == "__main__":
    sys.exit(main())

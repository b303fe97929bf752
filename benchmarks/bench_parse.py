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
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recoverable import agents
from recoverable.agents import _claude
from recoverable.agents._process import RunContext

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "cli" / "claude"
REPEATS = 7  # timed passes per path; the median is reported
CHUNK = 64 * 1024  # what one pipe read returns to both readers (asyncio's and anyio's limit)
TARGET_RATIO = 0.70  # ours >= 70% of json.loads

# -- the data -------------------------------------------------------------------------------

_PROSE = (
    "the test fails because parse_line returns a list of events while the runner expects "
    "an iterator so I will change the caller in _runner.py and add a regression test for "
    "the empty line case then run pytest again to confirm nothing else broke; the fixture "
    "reads tests/data/cli/claude/tool.stdout and asserts on ToolStart ToolEnd TextDelta"
)
_WORDS = _PROSE.split(" ")
_CODE = [
    "def parse_line(line: str, state: ParseState) -> list[Event]:",
    '    """One stdout line to events, updating `state`."""',
    "    return dispatch(line, state, NAME, _HANDLERS)",
    '    if data.get("subtype") == "init":',
    '        state.session_id = as_str(data.get("session_id")) or state.session_id',
    "    for block in blocks if isinstance(blocks, list) else ():",
    '        kind = block.get("type") if isinstance(block, dict) else None',
    "tests/test_agents.py::test_a_tool_call PASSED                       [ 42%]",
    "\tassert result.success is True  # \u2713 caf\u00e9 \u2014 na\u00efve",
    '{"key": "value", "nested": {"list": [1, 2, 3]}}',
]
_TOOLS = (
    (
        "Bash",
        lambda r: {
            "command": f"pytest -q tests/test_{r.choice(_WORDS)}.py -x",
            "description": "Run the tests",
        },
    ),
    ("Read", lambda r: {"file_path": f"/project/src/recoverable/agents/_{r.choice(_WORDS)}.py"}),
    ("Grep", lambda r: {"pattern": r.choice(_WORDS), "path": "src", "output_mode": "content"}),
    (
        "Edit",
        lambda r: {
            "file_path": "/project/src/x.py",
            "old_string": r.choice(_CODE),
            "new_string": r.choice(_CODE),
        },
    ),
)


def _lines(name: str) -> list[dict[str, Any]]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class _Maker:
    """Fresh ids and text for each repetition, from a seeded generator (the same every run)."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        tool, text = _lines("tool.stdout"), _lines("text.stdout")
        self.init, self.tool_use, self.tool_result, _, self.result = tool
        self.text_message = text[1]
        self.session = self.init["session_id"]

    def uuid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def words(self, low: int, high: int) -> str:
        return " ".join(self.rng.choices(_WORDS, k=self.rng.randint(low, high)))

    def line(self, data: dict[str, Any]) -> str:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    def event(self, event: dict[str, Any], **extra: Any) -> str:
        return self.line(
            {
                "type": "stream_event",
                "event": event,
                "session_id": self.session,
                "parent_tool_use_id": None,
                "uuid": self.uuid(),
                **extra,
            }
        )

    def block_start(self, block: dict[str, Any]) -> str:
        return self.event({"type": "content_block_start", "index": 0, "content_block": block})

    def block_delta(self, delta: dict[str, Any]) -> str:
        return self.event({"type": "content_block_delta", "index": 0, "delta": delta})

    def status(self) -> str:
        return self.line(
            {
                "type": "system",
                "subtype": "status",
                "status": "requesting",
                "uuid": self.uuid(),
                "session_id": self.session,
            }
        )

    def assistant(self, template: dict[str, Any], msg_id: str, block: dict[str, Any]) -> str:
        data = json.loads(json.dumps(template))
        data["message"]["id"] = msg_id
        data["message"]["content"] = [block]
        data["message"]["usage"]["input_tokens"] = self.rng.randint(19_000, 150_000)
        data["uuid"] = self.uuid()
        data["session_id"] = self.session
        data["request_id"] = f"req_{self.rng.getrandbits(64):016x}"
        return self.line(data)

    def message_start(self, msg_id: str) -> str:
        message: dict[str, Any] = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": self.rng.randint(19_000, 150_000),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 1,
            },
        }
        return self.event(
            {"type": "message_start", "message": message}, ttft_ms=self.rng.randint(5, 900)
        )

    def message_end(self, stop_reason: str) -> list[str]:
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": self.rng.randint(10, 900)},
        }
        return [
            self.event({"type": "content_block_stop", "index": 0}),
            self.event(delta),
            self.event({"type": "message_stop"}),
        ]

    def tool_turn(self) -> list[str]:
        """A tool_use message streamed as input_json_delta, then its tool_result."""
        msg_id = f"msg_{self.rng.getrandbits(96):024x}"
        tool_id = f"toolu_{self.rng.getrandbits(96):024x}"
        name, make_input = self.rng.choice(_TOOLS)
        tool_input = make_input(self.rng)
        partial = json.dumps(tool_input)
        cuts = sorted(self.rng.sample(range(1, len(partial)), k=min(4, len(partial) - 1)))
        pieces = [partial[a:b] for a, b in zip([0, *cuts], [*cuts, len(partial)], strict=True)]
        out = [self.status(), self.message_start(msg_id)]
        out.append(self.block_start({"type": "tool_use", "id": tool_id, "name": name, "input": {}}))
        for piece in pieces:
            out.append(self.block_delta({"type": "input_json_delta", "partial_json": piece}))
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
        out.append(self.assistant(self.tool_use, msg_id, block))
        out += self.message_end("tool_use")
        # The tool's output: 0 to ~60 lines of code-like text (quotes, tabs, non-ASCII).
        output = "\n".join(self.rng.choices(_CODE, k=self.rng.randint(0, 60)))
        result = json.loads(json.dumps(self.tool_result))
        result["message"]["content"][0].update(
            tool_use_id=tool_id, content=output, is_error=self.rng.random() < 0.05
        )
        result["uuid"] = self.uuid()
        result["session_id"] = self.session
        result["tool_use_result"]["stdout"] = output
        out.append(self.line(result))
        return out

    def text_turn(self, kind: str) -> list[str]:
        """A text (or thinking) message streamed as many small deltas, then the full line."""
        msg_id = f"msg_{self.rng.getrandbits(96):024x}"
        deltas = [" " + self.words(1, 4) for _ in range(self.rng.randint(10, 60))]
        out = [self.status(), self.message_start(msg_id)]
        start = {"type": kind, kind: ""} | ({"signature": ""} if kind == "thinking" else {})
        out.append(self.block_start(start))
        for piece in deltas:
            out.append(self.block_delta({"type": f"{kind}_delta", kind: piece}))
        block: dict[str, Any] = {"type": kind, kind: "".join(deltas)}
        if kind == "thinking":
            signature = f"{self.rng.getrandbits(512):0128x}"
            out.append(self.block_delta({"type": "signature_delta", "signature": signature}))
            block["signature"] = signature
        out.append(self.assistant(self.text_message, msg_id, block))
        out += self.message_end("end_turn")
        return out


def build_stream(target_bytes: int) -> tuple[bytes, dict[str, int]]:
    """One long run: init, then thinking/text/tool turns until `target_bytes`, then result."""
    maker = _Maker()
    lines = [maker.line(maker.init)]
    size = len(lines[0]) + 1
    while size < target_bytes:
        turn = maker.rng.choice(("thinking", "text", "tool", "tool"))
        new = maker.tool_turn() if turn == "tool" else maker.text_turn(turn)
        lines += new
        size += sum(len(line.encode("utf-8")) + 1 for line in new)
    result = json.loads(json.dumps(maker.result))
    result["num_turns"] = sum(1 for line in lines if line.startswith('{"type":"user"'))
    lines.append(maker.line(result))
    mix: dict[str, int] = {}
    for line in lines:
        kind = json.loads(line)["type"]
        mix[kind] = mix.get(kind, 0) + 1
    return ("\n".join(lines) + "\n").encode("utf-8"), mix


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

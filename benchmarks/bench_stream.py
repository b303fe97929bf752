"""Streaming parse of Claude, Codex and Gemini stdout: ours against claude-agent-sdk's path.

Run: .venv/bin/python benchmarks/bench_stream.py [--json] [--mb 3] [--quick]

For each CLI, ~`--mb` MB of its stream built from the real lines of
tests/data/cli/NAME/{tool,text}.stdout (Claude's: bench_parse's generator, with
`--include-partial-messages`; Codex's and Gemini's: their captured lines repeated with fresh
ids and text from a seeded generator, a tool's start and end on one id), cut into 64 KiB
reads. Timed side by side in one process, median of several passes, round robin:

- *ours, stream*: what `stream` / `stream_sync` do with each read (`RunContext.chunk_events`:
  framing with the line cap, decoding, parsing, the guardrail, the answer's text compacted)
  with their default options, every event handed to a consumer that keeps nothing; then
  `end()`, which makes the result (it keeps no event, as a stream's does).
- *ours, replay*: `agents.replay(cli, data)`, every event kept in the result.
- the same two with the standard JSON parser alone (`json`, no `fast` extra): the goal is
  judged with the accelerator (msgspec, the `fast` extra, as the issue allows); these rows
  show what a plain install gets.
- *claude-agent-sdk, discarded*: its stdout path on the same reads (a UTF-8 incremental
  decoder, `_LineFramer.push`, its buffer guard, `_parse_stdout_line` = `json.loads`,
  `parse_message`), each message handed to a consumer that keeps nothing.
- *claude-agent-sdk, kept*: the same, every message kept in a list.

The SDK reads Claude's format only. On Codex and Gemini lines `parse_message` returns None
(a type it does not know; it raises on Gemini's `result` line, caught here), so on those
bytes its path is its framing and `json.loads` per line, and it keeps nothing (its "kept"
list stays empty): the baseline there is the SDK's framing and JSON decoding alone, less
work than ours, which maps every line to events (and keeps them all in *replay*).

Ratios: stream over SDK discarded (goals: >= 1.5x with msgspec, >= 1.2x with the standard
parser alone), replay over SDK kept (goal >= 1.2x). With `--callgrind KB` (full mode's default
when valgrind is installed: 120), `callgrind_stream.py`'s instruction counts of the same paths
come beside them (`callgrind` in each CLI's JSON): repeatable where the wall ratios move with
the machine's load.
"""

from __future__ import annotations

import argparse
import codecs
import gc
import json
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _claude_stream import CHUNK, WORDS, build_stream
from recoverable import agents
from recoverable._core.config import CONFIG
from recoverable.agents import _line_json
from recoverable.agents._cli_modules import module_for
from recoverable.agents._process import RunContext

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "cli"
STREAM_GOAL, STANDARD_GOAL, REPLAY_GOAL = 1.5, 1.2, 1.2

Pass = Callable[[], int]


# -- the data ---------------------------------------------------------------------------------


def _captured(cli: str, name: str) -> list[dict[str, Any]]:
    text = (DATA / cli / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _refresh(value: Any, rng: random.Random, ids: dict[str, str], counter: list[int]) -> Any:
    """A copy with new text in every prose field and new ids (ids end in a counter; `ids`
    maps each id of this repetition to its new one, so that an item's or a tool's start and
    end lines still name the same id, as a real run's do)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(item, str) and key in ("text", "content", "output", "aggregated_output"):
                out[key] = " ".join(rng.choices(WORDS, k=rng.randint(1, 12)))
            elif isinstance(item, str) and key.endswith("id") and key != "session_id":
                if item not in ids:
                    counter[0] += 1
                    ids[item] = f"{item.rsplit('_', 1)[0]}_{counter[0]}"
                out[key] = ids[item]
            else:
                out[key] = _refresh(item, rng, ids, counter)
        return out
    if isinstance(value, list):
        return [_refresh(item, rng, ids, counter) for item in value]
    return value


def build_repeated(cli: str, target_bytes: int) -> bytes:
    """The CLI's captured run: its first line, then the middle lines of its tool and text
    runs repeated (fresh ids and text each time), then its last line."""
    tool, text = _captured(cli, "tool.stdout"), _captured(cli, "text.stdout")
    first, last = tool[0], tool[-1]
    rng, counter = random.Random(1), [0]
    dump = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    out = [dump(first)]
    size = len(out[0])
    while size < target_bytes:
        for run in (tool, text):  # the ids of each run apart: both have an `item_0`
            ids: dict[str, str] = {}
            for line in run[1:-1]:
                out.append(dump(_refresh(line, rng, ids, counter)))
                size += len(out[-1]) + 1
    out.append(dump(last))
    return ("\n".join(out) + "\n").encode("utf-8")


def corpus(cli: str, target_bytes: int) -> bytes:
    return build_stream(target_bytes)[0] if cli == "claude" else build_repeated(cli, target_bytes)


# -- the paths --------------------------------------------------------------------------------


@contextmanager
def _parser(standard: bool) -> Iterator[None]:
    """The standard JSON parser alone while inside, when `standard` (as without `fast`); else
    the accelerator from the first line (a process looks it up only after its first MB of
    lines, `ACCELERATE_AFTER_BYTES`: a corpus smaller than that would time the standard one)."""
    saved = CONFIG.json_decoder
    CONFIG.set_json_decoder(None if standard else _line_json.json_accelerator())
    try:
        yield
    finally:
        CONFIG.set_json_decoder(saved)


def path_stream(cli: str, chunks: list[bytes], *, standard: bool = False) -> Pass:
    module, options = module_for(cli), agents.RunOptions()

    def run() -> int:
        with _parser(standard):
            context = RunContext(module, options, time.monotonic)
            count = 0
            for chunk in chunks:
                for _ in context.chunk_events(chunk):  # delivered, not kept
                    count += 1
            count += len(context.chunk_events(b""))
            context.end(0)
            return count

    return run


def path_replay(cli: str, data: bytes, *, standard: bool = False) -> Pass:
    def run() -> int:
        with _parser(standard):
            return len(agents.replay(cli, data).events)

    return run


def path_sdk(chunks: list[bytes], *, keep: bool) -> Pass:
    from claude_agent_sdk._errors import MessageParseError
    from claude_agent_sdk._internal.message_parser import parse_message as sdk_parse
    from claude_agent_sdk._internal.transport.subprocess_cli import (
        _DEFAULT_MAX_BUFFER_SIZE,
        _LineFramer,
        _parse_stdout_line,
    )

    limit = _DEFAULT_MAX_BUFFER_SIZE

    def parse_message(data: dict[str, Any]) -> Any:
        # Gemini's `result` line is not shaped as Claude's: the SDK raises (its reader would
        # end); counted as a line it made nothing of, so the rest of the stream is timed.
        try:
            return sdk_parse(data)
        except MessageParseError:
            return None

    def run() -> int:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
        framer = _LineFramer()
        kept: list[Any] = []
        count = 0
        for chunk in chunks:
            for line in framer.push(decoder.decode(chunk)):
                if len(line) > limit:
                    raise ValueError("over the SDK's buffer limit")
                data = _parse_stdout_line(line)
                if data is not None:
                    message = parse_message(data)
                    count += 1
                    if keep and message is not None:
                        kept.append(message)
            if framer.pending_len > limit:
                raise ValueError("over the SDK's buffer limit")
        tail = _parse_stdout_line(framer.flush() + decoder.decode(b"", final=True))
        if tail is not None:
            message = parse_message(tail)
            count += 1
            if keep and message is not None:
                kept.append(message)
        return count

    return run


def time_paths(runs: list[Pass], repeats: int) -> list[tuple[float, int]]:
    counts = [run() for run in runs]
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for i, run in enumerate(runs):
            gc.collect()
            start = time.perf_counter_ns()
            run()
            times[i].append((time.perf_counter_ns() - start) / 1e9)
    return [(statistics.median(t), n) for t, n in zip(times, counts, strict=True)]


def measure(mb: float, repeats: int, clis: tuple[str, ...]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for cli in clis:
        data = corpus(cli, int(mb * 1_000_000))
        chunks = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]
        paths = {
            "ours_stream": path_stream(cli, chunks),
            "ours_replay": path_replay(cli, data),
            "ours_stream_standard": path_stream(cli, chunks, standard=True),
            "ours_replay_standard": path_replay(cli, data, standard=True),
            "sdk_discarded": path_sdk(chunks, keep=False),
            "sdk_kept": path_sdk(chunks, keep=True),
        }
        timed = time_paths(list(paths.values()), repeats)
        size = len(data) / 1_000_000
        rows = {
            key: {"mb_per_s": size / seconds, "count": count}
            for key, (seconds, count) in zip(paths, timed, strict=True)
        }
        stream = rows["ours_stream"]["mb_per_s"] / rows["sdk_discarded"]["mb_per_s"]
        replay = rows["ours_replay"]["mb_per_s"] / rows["sdk_kept"]["mb_per_s"]
        stream_standard = (
            rows["ours_stream_standard"]["mb_per_s"] / rows["sdk_discarded"]["mb_per_s"]
        )
        replay_standard = rows["ours_replay_standard"]["mb_per_s"] / rows["sdk_kept"]["mb_per_s"]
        results[cli] = {
            "mb": round(size, 2),
            "lines": data.count(b"\n"),
            "rows": rows,
            "stream_over_sdk": round(stream, 2),
            "replay_over_sdk": round(replay, 2),
            "stream_standard_over_sdk": round(stream_standard, 2),
            "replay_standard_over_sdk": round(replay_standard, 2),
            "stream_met": stream >= STREAM_GOAL,
            "stream_standard_met": stream_standard >= STANDARD_GOAL,
            "replay_met": replay >= REPLAY_GOAL,
        }
    return results


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "| CLI | MB | lines | ours stream MB/s (every event delivered, none kept) "
        "| SDK discarded MB/s (every message delivered, none kept) | **stream / SDK** "
        "| ours replay MB/s (every event kept) | SDK kept MB/s (every message kept) "
        "| **replay / SDK** | standard `json` only: stream / SDK, replay / SDK |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for cli, r in results.items():
        rows = r["rows"]
        lines.append(
            f"| {cli} | {r['mb']} | {r['lines']} | {rows['ours_stream']['mb_per_s']:.1f} "
            f"| {rows['sdk_discarded']['mb_per_s']:.1f} | **{r['stream_over_sdk']:.2f}x** "
            f"| {rows['ours_replay']['mb_per_s']:.1f} | {rows['sdk_kept']['mb_per_s']:.1f} "
            f"| **{r['replay_over_sdk']:.2f}x** | {r['stream_standard_over_sdk']:.2f}x, "
            f"{r['replay_standard_over_sdk']:.2f}x |"
        )
    counted = {cli: r["callgrind"] for cli, r in results.items() if "callgrind" in r}
    if counted:
        lines.append(
            "\nIn instructions (callgrind, each CLI's stream "
            f"{next(iter(counted.values()))['kb']} KB; ratio SDK / ours):\n\n"
            "| CLI | stream, msgspec | replay, msgspec | stream, `json` | replay, `json` |\n"
            "|---|---:|---:|---:|---:|"
        )
        for cli, c in counted.items():
            m = c["instructions_m"]
            lines.append(
                f"| {cli} | {c['stream_over_sdk']:.2f}x ({m['stream']} M) "
                f"| {c['replay_over_sdk']:.2f}x ({m['replay']} M) "
                f"| {c['stream_standard_over_sdk']:.2f}x ({m['stream_standard']} M) "
                f"| {c['replay_standard_over_sdk']:.2f}x ({m['replay_standard']} M) |"
            )
    lines.append(
        "\nOurs with msgspec (the `fast` extra); the last column with the standard parser "
        "alone. claude-agent-sdk parses Claude's format only: on Codex's and Gemini's bytes "
        "its path is its framing and `json.loads` per line (parse_message makes nothing of "
        "their lines, so its kept list stays empty), while ours maps every line to events."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--mb", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="0.2 MB, 2 repeats (CI)")
    parser.add_argument(
        "--callgrind",
        type=int,
        metavar="KB",
        help="also count instructions (callgrind_stream.py, each CLI's stream in KB; 0: not; "
        "default: 120 when valgrind is installed, 0 with --quick)",
    )
    args = parser.parse_args(argv)
    mb, repeats = (0.2, 2) if args.quick else (args.mb, args.repeats)
    results = measure(mb, repeats, ("claude", "codex", "gemini"))
    kb = args.callgrind
    if kb is None:
        kb = 0 if args.quick or shutil.which("valgrind") is None else 120
    if kb:
        import callgrind_stream  # after the timed passes: its child runs alone

        for cli, counted in callgrind_stream.measure(kb).items():
            results[cli]["callgrind"] = {"kb": kb, **counted}
    print(json.dumps(results, indent=2) if args.json else markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

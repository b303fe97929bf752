"""Bounded memory under a flood: 1 GiB of a CLI's stdout through the runners, peak RSS.

Run: .venv/bin/python benchmarks/bench_flood.py [--size MIB] [--json]

A stand-in for `claude` (a Python script) writes --size MiB (default 1024) of stream-json to
stdout, then its `result` line. Two kinds of lines:

  short  bench_parse's realistic mix (text and thinking deltas, tool turns streamed as
         input_json_delta, status lines, whole assistant and user lines) with one line in
         twenty of a type no parser knows (a `Raw` event); ~300 bytes a line
  1MiB   a text delta of 1 MiB, then a line of 1 MiB of a type no parser knows, in turn

Each run is consumed by a fresh Python (so this process's memory does not count), one of:

  stream_sync  `agents.stream_sync`, keeping nothing it was given (the default: its result
               keeps no event); the consumer counts the events and drops them
  run_sync     `agents.run_sync` with its default bound: the last 10,000 events, within
               32 MiB of the lines they came from, and the last 1,000,000 characters of text

and reports its own peak RSS: VmHWM, the high-water mark of its own memory (not ru_maxrss,
which Linux starts at the parent's peak on exec). Prints a Markdown table: MiB/s, events,
peak RSS against its limit (64 MB for stream_sync; 64 MB plus twice the 32 MiB of kept lines
for run_sync), and whether the run ended well.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_parse import build_stream
from recoverable.agents._options import KEPT_EVENT_BYTES

MIB = 1024 * 1024
STREAM_LIMIT_MB = 64.0
RUN_LIMIT_MB = STREAM_LIMIT_MB + 2 * KEPT_EVENT_BYTES / 1e6
BLOCK_BYTES = 4 * MIB  # the short lines' block, written again and again

# The stand-in: argv[1] MiB of the block file, its first and last line around them.
WRITER = """
import sys
head, block, tail = (open(path, "rb").read() for path in sys.argv[2:5])
size, out = int(sys.argv[1]) * 1024 * 1024, sys.stdout.buffer
out.write(head)
written = len(head)
while written < size:
    out.write(block)
    written += len(block)
out.write(tail)
out.flush()
"""

# The consumer, in a fresh Python: one run, then its peak RSS and what it saw, as JSON.
CONSUMER = """
import json, sys, time
from recoverable import agents
how, executable = sys.argv[1], sys.argv[2]
options = agents.RunOptions(executable=executable, max_tool_failures=None, idle_timeout=None)
started = time.perf_counter()
if how == "stream_sync":
    events = 0
    for event in agents.stream_sync("flood", "claude", options=options):
        events += 1
    result = event.result
else:
    result = agents.run_sync("flood", "claude", options=options)
    events = None
seconds = time.perf_counter() - started
hwm = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
print(json.dumps({"seconds": seconds, "events": events, "kept": len(result.events),
                  "text_chars": len(result.text), "success": result.success,
                  "error": result.error.code if result.error else None, "peak_kb": hwm}))
"""


def short_lines() -> tuple[bytes, bytes, bytes]:
    """(first line, a block of lines to repeat, the result line) of realistic short lines."""
    data, _ = build_stream(BLOCK_BYTES)
    lines = data.splitlines(keepends=True)
    body = []
    for n, line in enumerate(lines[1:-1]):
        body.append(line)
        if n % 19 == 0:  # one line in twenty: a type no parser knows
            unknown = {"type": "telemetry_sample", "n": n, "note": line[:120].decode()}
            body.append(json.dumps(unknown).encode() + b"\n")
    return lines[0], b"".join(body), lines[-1]


def huge_lines() -> tuple[bytes, bytes, bytes]:
    """The same first and last lines around lines of 1 MiB: a text delta, an unknown type."""
    head, _, tail = short_lines()
    prose = ("the runner keeps nothing it has yielded " * 30_000)[: MIB - 200]
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": prose},
    }
    text = {"type": "stream_event", "event": delta, "parent_tool_use_id": None}
    unknown = {"type": "telemetry_dump", "payload": prose}
    block = json.dumps(text).encode() + b"\n" + json.dumps(unknown).encode() + b"\n"
    return head, block, tail


def consume(how: str, kind: str, size_mib: int, folder: Path) -> dict[str, Any]:
    """One flood of `kind` through `how`, in a fresh Python; what it reported."""
    writer = folder / f"claude-{kind}"
    parts = short_lines() if kind == "short" else huge_lines()  # kind: "short" or "1MiB"
    paths = []
    for name, part in zip(("head", "block", "tail"), parts, strict=True):
        path = folder / f"{kind}.{name}"
        path.write_bytes(part)
        paths.append(str(path))
    launcher = folder / f"claude-{kind}-{size_mib}"
    writer.write_text(WRITER)
    quoted = " ".join(f'"{path}"' for path in (sys.executable, writer, size_mib, *paths))
    launcher.write_text(f"#!/bin/sh\nexec {quoted}\n")
    launcher.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-c", CONSUMER, how, str(launcher)],
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    row: dict[str, Any] = json.loads(done.stdout)
    peak_mb = row["peak_kb"] * 1024 / 1e6
    limit = STREAM_LIMIT_MB if how == "stream_sync" else RUN_LIMIT_MB
    row.update(
        how=how,
        kind=kind,
        mib=size_mib,
        mib_per_s=size_mib / row["seconds"],
        peak_mb=peak_mb,
        limit_mb=limit,
        within=peak_mb < limit,
    )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="MiB of stdout (default 1024)")
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-flood-") as tmp:
        rows = [
            consume(how, kind, args.size, Path(tmp))
            for kind in ("short", "1MiB")
            for how in ("stream_sync", "run_sync")
        ]
    if args.json:
        print(json.dumps({"rows": rows}, indent=2))
        return 0 if all(row["within"] and row["success"] for row in rows) else 1
    print(
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; "
        f"{args.size} MiB of stdout a run\n"
    )
    print("| lines | consumer | MiB/s | events | kept | peak RSS MB | limit MB | ok |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for row in rows:
        events = row["events"] if row["events"] is not None else "-"
        ok = "yes" if row["within"] and row["success"] else f"NO ({row['error']})"
        print(
            f"| {row['kind']} | {row['how']} | {row['mib_per_s']:.0f} | {events} | "
            f"{row['kept']} | {row['peak_mb']:.1f} | {row['limit_mb']:.0f} | {ok} |"
        )
    return 0 if all(row["within"] and row["success"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

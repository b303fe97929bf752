"""bench_stream's paths in instructions (callgrind): the stream and replay ratios, repeatable
under load.

Run: .venv/bin/python benchmarks/callgrind_stream.py [--kb 120] [--json]   # ~2 min

A child Python under `valgrind --tool=callgrind` runs each path of `bench_stream.py` once
(after one warm-up pass of every path) between two calls of `os.getppid()`, a C function
nothing else here calls: callgrind dumps its counters before each, so each interval is one
pass. Ratios as bench_stream's: SDK discarded / ours stream, SDK kept / ours replay (with
msgspec, then with the standard `json` alone); more than 1 means fewer instructions for ours.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from _callgrind import marked_counts

HERE = Path(__file__).resolve().parent
CLIS = ("claude", "codex", "gemini")


def child(kb: int) -> None:
    sys.path.insert(0, str(HERE))
    import bench_stream
    from _claude_stream import CHUNK

    plan = []
    for cli in CLIS:
        data = bench_stream.corpus(cli, kb * 1000)
        chunks = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]
        plan += [
            (cli, "stream", bench_stream.path_stream(cli, chunks)),
            (cli, "stream_standard", bench_stream.path_stream(cli, chunks, standard=True)),
            (cli, "replay", bench_stream.path_replay(cli, data)),
            (cli, "replay_standard", bench_stream.path_replay(cli, data, standard=True)),
            (cli, "sdk_discarded", bench_stream.path_sdk(chunks, keep=False)),
            (cli, "sdk_kept", bench_stream.path_sdk(chunks, keep=True)),
        ]
    for _, _, run in plan:  # warm-up: imports, lookups, caches
        run()
    mark = os.getppid
    mark()
    for _, _, run in plan:
        run()
        mark()
    print(json.dumps([[cli, key] for cli, key, _ in plan]))


def measure(kb: int) -> dict[str, Any]:
    names, totals = marked_counts(__file__, ["--kb", str(kb)])
    # Dump 1 holds the start-up and the warm-up; dump k + 1 the k-th pass.
    counts: dict[str, dict[str, int]] = {cli: {} for cli in CLIS}
    for (cli, key), total in zip(names, totals[1:], strict=False):
        counts[cli][key] = total
    results: dict[str, Any] = {}
    for cli, c in counts.items():
        results[cli] = {
            "instructions_m": {key: round(total / 1e6, 2) for key, total in c.items()},
            "stream_over_sdk": round(c["sdk_discarded"] / c["stream"], 2),
            "replay_over_sdk": round(c["sdk_kept"] / c["replay"], 2),
            "stream_standard_over_sdk": round(c["sdk_discarded"] / c["stream_standard"], 2),
            "replay_standard_over_sdk": round(c["sdk_kept"] / c["replay_standard"], 2),
        }
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=120, help="each CLI's stream, in KB")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.kb)
        return 0
    results = measure(args.kb)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print("| CLI | stream, msgspec | replay, msgspec | stream, json | replay, json |")
    print("|---|---:|---:|---:|---:|")
    for cli, r in results.items():
        print(
            f"| {cli} | {r['stream_over_sdk']:.2f}x | {r['replay_over_sdk']:.2f}x "
            f"| {r['stream_standard_over_sdk']:.2f}x | {r['replay_standard_over_sdk']:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

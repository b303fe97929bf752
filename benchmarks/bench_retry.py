"""Per-call overhead of a retry wrapper whose function succeeds the first time.

Side by side in one process: recoverable, tenacity, stamina, backoff and a hand-written loop,
sync and async. Prints a Markdown table of medians (µs per call) and ratios to ours.

    .venv/bin/python benchmarks/bench_retry.py [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import backoff
import stamina
import tenacity

import recoverable as rc

SYNC_CALLS = 200_000
ASYNC_CALLS = 50_000
REPEATS = 7


def plain() -> int:
    return 1


async def aplain() -> int:
    return 1


def hand_loop() -> int:
    for attempt in range(4):
        try:
            return plain()
        except ConnectionError:
            if attempt == 3:
                raise
    raise AssertionError


async def ahand_loop() -> int:
    for attempt in range(4):
        try:
            return await aplain()
        except ConnectionError:
            if attempt == 3:
                raise
    raise AssertionError


# Each wrapper as a decorator, with the same policy: 4 attempts, exponential backoff.
DECORATORS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "recoverable @retry": rc.retry,
    "tenacity @retry(stop=4, wait=exp+jitter)": tenacity.retry(
        stop=tenacity.stop_after_attempt(4),
        wait=tenacity.wait_exponential_jitter(),
        retry=tenacity.retry_if_exception_type(ConnectionError),
    ),
    "stamina @retry(on=ConnectionError, attempts=4)": stamina.retry(on=ConnectionError, attempts=4),
    "backoff @on_exception(expo, max_tries=4)": backoff.on_exception(
        backoff.expo, ConnectionError, max_tries=4
    ),
}

SYNC: dict[str, Callable[[], Any]] = {
    "undecorated": plain,
    "hand-written loop": hand_loop,
    **{name: decorate(plain) for name, decorate in DECORATORS.items()},
}
ASYNC: dict[str, Callable[[], Awaitable[Any]]] = {
    "undecorated": aplain,
    "hand-written loop": ahand_loop,
    **{name: decorate(aplain) for name, decorate in DECORATORS.items()},
}


def time_sync(fn: Callable[[], Any]) -> float:
    """Median µs per call over REPEATS runs of SYNC_CALLS calls."""
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter_ns()
        for _ in range(SYNC_CALLS):
            fn()
        runs.append((time.perf_counter_ns() - start) / SYNC_CALLS / 1000)
    return statistics.median(runs)


def time_async(fn: Callable[[], Awaitable[Any]]) -> float:
    async def loop() -> float:
        start = time.perf_counter_ns()
        for _ in range(ASYNC_CALLS):
            await fn()
        return (time.perf_counter_ns() - start) / ASYNC_CALLS / 1000

    return statistics.median(asyncio.run(loop()) for _ in range(REPEATS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for fn in SYNC.values():  # warm up
        fn()
    sync = {name: time_sync(fn) for name, fn in SYNC.items()}
    asyn = {name: time_async(fn) for name, fn in ASYNC.items()}
    if args.json:
        print(json.dumps({"sync_us": sync, "async_us": asyn}, indent=2))
        return
    base_s, base_a = sync["undecorated"], asyn["undecorated"]
    ours_s = sync["recoverable @retry"] - base_s
    ours_a = asyn["recoverable @retry"] - base_a
    print(f"# retry overhead, success path (CPython {sys.version.split()[0]}, µs per call)\n")
    print("| wrapper | sync µs | sync overhead | x ours | async µs | async overhead | x ours |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in SYNC:
        over_s, over_a = sync[name] - base_s, asyn[name] - base_a
        ratio_s = f"{over_s / ours_s:.0f}x" if name != "undecorated" else ""
        ratio_a = f"{over_a / ours_a:.0f}x" if name != "undecorated" else ""
        print(
            f"| {name} | {sync[name]:.3f} | {over_s:.3f} | {ratio_s} | {asyn[name]:.3f} | "
            f"{over_a:.3f} | {ratio_a} |"
        )


if __name__ == "__main__":
    main()

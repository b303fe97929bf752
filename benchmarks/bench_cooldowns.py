"""What consulting the fleet's state costs per call, on the success path.

`rc.retry(...).call(fn)` without cooldowns, then with `Cooldowns.memory()`,
`Cooldowns.sqlite(path)` and `Cooldowns.redis(url)` (a real redis-server on 127.0.0.1), each
on a key nobody failed on (one read before the call), on a key with a state (a failure the
breaker counts: one read and the rules), and with a task budget (one atomic update more), in
one process; then the same keys through `acall` (the store's async face: memory direct,
SQLite in a worker thread, Redis through redis.asyncio). Prints a Markdown table of medians,
µs per call.

    .venv/bin/python benchmarks/bench_cooldowns.py [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import recoverable as rc
from bench_fleet import redis_server

REPEATS = 5


def ok() -> int:
    return 1


async def aok() -> int:
    return 1


def per_acall_us(retrying: rc.Retrying, count: int) -> float:
    """µs per `await retrying.acall(aok)`, on one event loop."""

    async def calls() -> float:
        runs = []
        for _ in range(REPEATS):
            start = time.perf_counter_ns()
            for _ in range(count):
                await retrying.acall(aok)
            runs.append((time.perf_counter_ns() - start) / count / 1000)
        return statistics.median(runs)

    return asyncio.run(calls())


def per_call_us(call: Callable[[], object], count: int) -> float:
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter_ns()
        for _ in range(count):
            call()
        runs.append((time.perf_counter_ns() - start) / count / 1000)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="fewer calls (a smoke run)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    rows: dict[str, float] = {}
    plain = rc.retry()
    rows["retry(), no cooldowns"] = per_call_us(lambda: plain.call(ok), 200_000 // scale)
    rows["acall, no cooldowns"] = per_acall_us(plain, 100_000 // scale)
    with tempfile.TemporaryDirectory() as folder, redis_server() as url:
        stores = {
            "memory": (rc.fleet.Cooldowns.memory(), 100_000),
            "sqlite": (rc.fleet.Cooldowns.sqlite(Path(folder) / "fleet.sqlite3"), 5_000),
            "redis": (rc.fleet.Cooldowns.redis(url), 5_000),
        }
        for name, (cooldowns, count) in stores.items():
            key = cooldowns.key(source="openai", model="gpt-4o", credential="sk-bench")
            keyed = rc.retry(cooldowns=key)
            rows[f"{name}: a key nobody failed on"] = per_call_us(
                functools.partial(keyed.call, ok), count // scale
            )
            # One server error: the breaker counts it, so the key has a state to read.
            key.after_failure(
                rc.RecoverableError("provider_server_error").detail, key.before_call(0)
            )
            rows[f"{name}: a key with state"] = per_call_us(
                functools.partial(keyed.call, ok), count // scale
            )
            budget = rc.retry(cooldowns=key.task("bench", max_attempts=10**9))
            rows[f"{name}: + a task budget"] = per_call_us(
                functools.partial(budget.call, ok), count // scale
            )
            rows[f"{name}, acall: a key with state"] = per_acall_us(keyed, count // scale)
            key.reset()
            rows[f"{name}, acall: a key nobody failed on"] = per_acall_us(keyed, count // scale)
            cooldowns.close()
    if args.json:
        print(json.dumps({"us_per_call": rows}, indent=2))
        return
    base, abase = rows["retry(), no cooldowns"], rows["acall, no cooldowns"]
    print(f"# consulting the fleet's state, success path (CPython {sys.version.split()[0]})\n")
    print("| what | µs per call | over retry() alone |")
    print("|---|---:|---:|")
    for name, us in rows.items():
        over = us - (abase if "acall" in name else base)
        print(f"| {name} | {us:.2f} | {over:+.2f} |")


if __name__ == "__main__":
    main()

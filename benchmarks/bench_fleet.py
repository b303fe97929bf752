"""A fleet against one rate-limited key: shared cooldowns vs each worker on its own.

8 worker processes make 400 chat completions with the real openai client (its retries off)
against FakeProvider's rate-limit mode (a token bucket per API key, 20 requests per second),
all with the same key, each call under `rc.retry`: once with each worker on its own (it
obeys every retry-after it is given), once with `cooldowns=rc.fleet.Cooldowns.redis(...)` (a
real redis-server on 127.0.0.1), each call a task with a budget. Then both again with half
the workers killed (SIGKILL) mid-run and started again, as a supervisor would: they skip
the calls already done (a Redis set) and the budgets go on counting. Prints a Markdown table:
429s the fleet received, requests, total time, calls completed.

    .venv/bin/python benchmarks/bench_fleet.py [--calls 400] [--workers 8] [--rate 20] [--json]

Needs redis-server (Debian's package) and the `test` extra (openai, redis).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

API_KEY = "sk-fleet-shared-key-0123456789"
MODEL = "gpt-4o-mini"


# --- the worker process --------------------------------------------------------------------


def worker(spec: dict[str, Any]) -> None:
    """Make this worker's calls (index, index + workers, ...), skipping those already done."""
    import openai
    import redis

    import recoverable as rc

    bookkeeping = redis.Redis.from_url(spec["redis"])
    client = openai.OpenAI(api_key=API_KEY, base_url=spec["openai_url"], max_retries=0)
    policy = rc.RetryPolicy(attempts=100_000)
    fleet = None
    if spec["shared"]:
        fleet = rc.fleet.Cooldowns.redis(spec["redis"], prefix=spec["prefix"]).key(
            source="openai", model=MODEL, credential=API_KEY
        )
    done_key = spec["prefix"] + "done"
    bookkeeping.sadd(spec["prefix"] + "ready", spec["index"])
    while not bookkeeping.exists(spec["prefix"] + "go"):
        time.sleep(0.005)
    for call in range(spec["index"], spec["calls"], spec["workers"]):
        if bookkeeping.sismember(done_key, str(call)):
            continue
        cooldowns = None if fleet is None else fleet.task(f"call-{call}", max_attempts=1000)

        def complete(call: int = call) -> object:
            return client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": f"call {call}"}]
            )

        rc.retry(policy, cooldowns=cooldowns, after_failure=None).call(complete)
        bookkeeping.sadd(done_key, str(call))


# --- the run ---------------------------------------------------------------------------------


@dataclass
class Row:
    """One run's figures."""

    mode: str
    killed: int
    rate_limited: int
    requests: int
    seconds: float
    completed: int
    calls: int
    budget_attempts: int | None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def redis_server() -> Iterator[str]:
    """Debian's redis-server on 127.0.0.1, no persistence, stopped at the end."""
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("redis-server is missing (apt-get install redis-server)")
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        proc = subprocess.Popen(
            [
                exe,
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                folder,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        try:
            import redis

            client = redis.Redis(port=port, socket_connect_timeout=0.2)
            for _ in range(500):
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.02)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            proc.terminate()
            proc.wait(10)


def _spawn(spec: dict[str, Any]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", json.dumps(spec)],
        stdin=subprocess.DEVNULL,
        env={**os.environ, "NO_PROXY": "127.0.0.1"},
    )


@dataclass(frozen=True)
class Sizes:
    """How big a run is."""

    calls: int
    workers: int
    rate: int


RUNS = {  # name -> (shared cooldowns, kill half the workers)
    "local": (False, False), "shared": (True, False),
    "local-kill": (False, True), "shared-kill": (True, True),
}  # fmt: skip


def run(redis_url: str, sizes: Sizes, *, shared: bool, kill: bool) -> Row:
    """One fleet run against a fresh FakeProvider; returns its figures."""
    calls, workers = sizes.calls, sizes.workers
    import redis

    from recoverable.testing import FakeProvider, Limits, RateLimit

    prefix = f"bench-{time.monotonic_ns()}:"
    bookkeeping = redis.Redis.from_url(redis_url)
    with FakeProvider(limits=Limits(max_recorded=None)) as fake:
        fake.rate_limit(RateLimit(sizes.rate, per=1.0))
        base = {
            "redis": redis_url,
            "openai_url": fake.openai_url,
            "prefix": prefix,
            "shared": shared,
            "calls": calls,
            "workers": workers,
        }
        procs = {i: _spawn({**base, "index": i}) for i in range(workers)}
        while bookkeeping.scard(prefix + "ready") < workers:
            time.sleep(0.01)
        started = time.perf_counter()
        bookkeeping.set(prefix + "go", 1)
        killed = 0
        if kill:  # when 40% of the calls are done, kill half the workers, then restart them
            while bookkeeping.scard(prefix + "done") < calls * 0.4:
                time.sleep(0.005)
            for i in range(workers // 2):
                procs[i].send_signal(signal.SIGKILL)
                procs[i].wait()
                killed += 1
                procs[i] = _spawn({**base, "index": i})
        for proc in procs.values():
            proc.wait()
        seconds = time.perf_counter() - started
        faults = [r.fault for r in fake.requests]
    completed = int(bookkeeping.scard(prefix + "done"))
    budget = None
    if shared:
        budget = 0
        for key in bookkeeping.scan_iter(prefix + "task:*"):
            budget += int(json.loads(bookkeeping.get(key) or b"[0, 0]")[0])
    return Row(
        "shared cooldowns (Redis)" if shared else "each worker on its own",
        killed,
        faults.count("rate_limited"),
        len(faults),
        round(seconds, 2),
        completed,
        calls,
        budget,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--rate", type=int, default=20, help="requests per second per key")
    parser.add_argument("--runs", default=",".join(RUNS), help="which runs, comma-separated")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    sizes = Sizes(args.calls, args.workers, args.rate)
    with redis_server() as url:
        rows = [
            run(url, sizes, shared=RUNS[name][0], kill=RUNS[name][1])
            for name in args.runs.split(",")
        ]
    if args.json:
        print(json.dumps({"sizes": asdict(sizes), "rows": [asdict(r) for r in rows]}, indent=2))
        return
    print(
        f"# {args.workers} workers, {args.calls} calls, one key limited to {args.rate} "
        f"requests/s (CPython {sys.version.split()[0]})\n"
    )
    print(
        "| mode | workers killed | 429s | requests | seconds | calls completed |"
        " attempts in budgets |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        budget = "" if row.budget_attempts is None else str(row.budget_attempts)
        print(
            f"| {row.mode} | {row.killed} | {row.rate_limited} | {row.requests} | "
            f"{row.seconds:.2f} | {row.completed}/{row.calls} | {budget} |"
        )


if __name__ == "__main__":
    main()

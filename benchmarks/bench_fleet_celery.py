"""A fleet of Celery workers against one rate-limited key: shared cooldowns vs none.

8 Celery worker processes (`celery worker --pool=solo`, a real redis-server on 127.0.0.1 as
broker) run 400 tasks, each one chat completion with the real openai client (its retries
off) against FakeProvider's rate-limit mode (a token bucket per API key, 20 requests per
second), all with the same key. Each task is a `rcc.ClassifiedTask`: a 429 is retried by
Celery after the server's hint. Once with no cooldowns (every worker learns the limit by
hitting it), once with `recoverable_cooldowns=` a `Cooldowns.redis` key (in the same
Redis) and a budget per task (the task's id). Then the shared run again with half the workers
killed (SIGKILL) when 40% of the calls are done and started again, as a supervisor would;
their tasks come back to the queue (`acks_late`, the broker's visibility timeout). Prints a
Markdown table: 429s the fleet received, requests, total time, calls completed, and calls
sent again (kombu's Redis transport loses a task that a worker killed at that instant had
just popped: the run notices the stall and sends the missing calls again, and says so).

    .venv/bin/python benchmarks/bench_fleet_celery.py [--calls 400] [--workers 8] [--json]

Needs redis-server (Debian's package) and the `test` extra (celery, openai, redis). This file
is also the workers' Celery app (`celery -A bench_fleet_celery worker`).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from celery import Celery
from celery.signals import worker_ready

import recoverable as rc
from recoverable.integrations import celery as rcc

API_KEY = "sk-fleet-shared-key-0123456789"
MODEL = "gpt-4o-mini"
REDIS_VARIABLE = "RECOVERABLE_FLEET_REDIS"
VISIBILITY_S = 4  # a killed worker's unacknowledged task is handed out again after this
STALL_S = 2 * VISIBILITY_S + 2  # no call finished for this long: the broker lost some
HERE = Path(__file__).resolve().parent

# --- the workers' app ------------------------------------------------------------------------

REDIS_URL = os.environ.get(REDIS_VARIABLE, "redis://127.0.0.1:1/0")
app = Celery("fleet", broker=REDIS_URL)
app.conf.update(
    task_serializer="json",
    accept_content=["json"],
    task_ignore_result=True,
    task_acks_late=True,  # a task whose worker died goes back to the queue
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    worker_enable_remote_control=False,
    broker_connection_retry_on_startup=True,
    broker_transport_options={  # and a live worker looks for such tasks every second
        "visibility_timeout": VISIBILITY_S,
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    },
)


@functools.cache
def _bookkeeping() -> Any:
    import redis

    return redis.Redis.from_url(REDIS_URL)


@functools.cache
def _fleet(prefix: str) -> rc.fleet.Cooldowns:
    # Short waits (a pace of a few slots) are waited in the worker; longer ones are countdowns.
    return rc.fleet.Cooldowns.redis(REDIS_URL, prefix=prefix, max_wait_ms=1000).key(
        source="openai", model=MODEL, credential=API_KEY
    )


@functools.cache
def _client(url: str) -> Any:
    import openai

    return openai.OpenAI(api_key=API_KEY, base_url=url, max_retries=0)


def call_key(task: Any) -> rc.fleet.Cooldowns | None:
    """The shared key with a budget for this task (its id: the same after a redelivery)."""
    _call, _url, prefix, shared = task.request.args
    if not shared:
        return None
    return _fleet(prefix).task(task.request.id, max_attempts=1000)


def _complete(self: Any, call: int, url: str, prefix: str, shared: bool) -> None:
    """One chat completion; then the call is marked done (a set: a redelivery counts once)."""
    _client(url).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": f"call {call}"}]
    )
    _bookkeeping().sadd(prefix + "done", call)


complete: Any = app.task(
    bind=True, base=rcc.ClassifiedTask, name="complete", recoverable_cooldowns=call_key,
    recoverable_policy=rc.RetryPolicy(attempts=10_000),
)(_complete)  # fmt: skip


def _ready(**_: Any) -> None:
    """Warm up (the openai client's lazy parts load here, not in the first task), then say
    so."""
    loaded = _client("http://127.0.0.1:9/v1").chat.completions
    assert loaded is not None
    _bookkeeping().incr("fleet:ready")


worker_ready.connect(_ready, weak=False)


# --- the run -----------------------------------------------------------------------------------


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
    resent: int
    """Calls sent again after the fleet stalled: the task a killed worker had just taken
    from Redis (kombu's BRPOP, before it recorded it as unacknowledged) is lost."""


def start_worker(name: str, redis_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["NO_PROXY"] = "127.0.0.1,::1,localhost"
    env[REDIS_VARIABLE] = redis_url
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent / "src"), str(HERE)])
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "bench_fleet_celery",
        "worker",
        "--pool=solo",
        "-n",
        f"{name}@127.0.0.1",
        "--without-heartbeat",
        "--without-mingle",
        "--without-gossip",
        "--loglevel=WARNING",
    ]
    with log.open("ab") as out:
        return subprocess.Popen(
            argv, cwd=HERE, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )


class Fleet:
    """The worker processes, started once for every run; always stopped."""

    def __init__(self, redis_url: str, workers: int, folder: Path, timeout_s: float) -> None:
        import redis

        self.timeout_s = timeout_s
        self.redis_url = redis_url
        self.folder = folder
        self.bookkeeping = redis.Redis.from_url(redis_url)
        self.procs = {i: self._start(i) for i in range(workers)}
        self.wait_ready(workers)

    def _start(self, index: int) -> subprocess.Popen[bytes]:
        return start_worker(f"w{index}", self.redis_url, self.folder / f"w{index}.log")

    def wait_ready(self, count: int, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while int(self.bookkeeping.get("fleet:ready") or 0) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the Celery workers did not start: see {self.folder}")
            time.sleep(0.05)

    def kill_and_restart(self, count: int) -> None:
        """SIGKILL `count` workers mid-task, then start new ones in their place."""
        for index in range(count):
            self.procs[index].send_signal(signal.SIGKILL)
            self.procs[index].wait()
            self.procs[index] = self._start(index)

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)  # a worker's warm shutdown
        for proc in self.procs.values():
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def run(fleet: Fleet, calls: int, rate: int, *, shared: bool, kill: bool) -> Row:
    """One run against a fresh FakeProvider; returns its figures."""
    from recoverable.testing import FakeProvider, Limits, RateLimit

    prefix = f"fleet-{time.monotonic_ns()}:"
    done = prefix + "done"
    books = fleet.bookkeeping
    killed = 0
    with FakeProvider(limits=Limits(max_recorded=None)) as fake:
        fake.rate_limit(RateLimit(rate, per=1.0))
        started = time.perf_counter()
        for call in range(calls):
            complete.apply_async(args=[call, fake.openai_url, prefix, shared])
        deadline = time.monotonic() + fleet.timeout_s
        progress, last_done, resent = time.monotonic(), 0, 0
        while (finished := books.scard(done)) < calls and time.monotonic() < deadline:
            if kill and not killed and finished >= calls * 0.4:
                killed = len(fleet.procs) // 2
                fleet.kill_and_restart(killed)
            if finished != last_done:
                progress, last_done = time.monotonic(), finished
            elif finished and time.monotonic() - progress > STALL_S:  # the broker lost some
                missing = set(range(calls)) - {int(c) for c in books.smembers(done)}
                for call in missing:
                    complete.apply_async(args=[call, fake.openai_url, prefix, shared])
                resent += len(missing)
                progress = time.monotonic()
            time.sleep(0.005)
        seconds = time.perf_counter() - started
        faults = [r.fault for r in fake.requests]
    budget = None
    if shared:
        budget = sum(
            int(json.loads(books.get(key) or b"[0, 0]")[0])
            for key in books.scan_iter(prefix + "task:*")
        )
    mode = "shared cooldowns (Redis)" if shared else "no cooldowns"
    return Row(
        mode,
        killed,
        faults.count("rate_limited"),
        len(faults),
        round(seconds, 2),
        int(books.scard(done)),
        calls,
        budget,
        resent,
    )


RUNS = {"local": (False, False), "shared": (True, False), "shared-kill": (True, True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--rate", type=int, default=20, help="requests per second per key")
    parser.add_argument("--runs", default=",".join(RUNS), help="which runs, comma-separated")
    parser.add_argument("--timeout", type=float, default=300, help="seconds a run may take")
    parser.add_argument("--logs", help="keep the workers' logs in this folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from bench_fleet import redis_server

    with redis_server() as url, tempfile.TemporaryDirectory() as folder:
        app.conf.broker_url = url  # the sending side: this process
        logs = Path(args.logs or folder)
        logs.mkdir(parents=True, exist_ok=True)
        starting = time.perf_counter()
        fleet = Fleet(url, args.workers, logs, args.timeout)
        startup_s = round(time.perf_counter() - starting, 2)
        try:
            rows = [
                run(fleet, args.calls, args.rate, shared=RUNS[name][0], kill=RUNS[name][1])
                for name in args.runs.split(",")
            ]
        finally:
            fleet.close()
            app.close()
    if args.json:
        rows_out = [asdict(r) for r in rows]
        print(json.dumps({"workers": args.workers, "startup_s": startup_s, "rows": rows_out}))
        return
    print(
        f"# {args.workers} Celery workers, {args.calls} tasks, one key limited to {args.rate} "
        f"requests/s (CPython {sys.version.split()[0]}; the workers started in {startup_s} s)\n"
    )
    print(
        "| mode | workers killed | 429s | requests | seconds | calls completed |"
        " attempts in budgets | sent again |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        budget = "" if row.budget_attempts is None else str(row.budget_attempts)
        print(
            f"| {row.mode} | {row.killed} | {row.rate_limited} | {row.requests} | "
            f"{row.seconds:.2f} | {row.completed}/{row.calls} | {budget} | {row.resent} |"
        )


if __name__ == "__main__":
    main()

"""Recovery end to end: the real openai, anthropic and google-genai clients against FakeProvider.

Two tables, each row a fresh FakeProvider and a real client, real sleeps, wall time measured:

- *rate limit*: the server answers 429 with `retry-after: W` (Gemini's body also carries
  `RetryInfo` W s) to every request for W seconds, then answers. Ours is `rc.retry().call`
  around the client with its own retries off; beside it each SDK's own retries (openai and
  anthropic: their default `max_retries=2`; google-genai: none by default, so its
  `HttpRetryOptions()` defaults, 5 attempts from 1 s). Goal: recovered in <= W + 0.1 s with
  exactly one extra call.
- *futile calls*: quota, auth and context faults that last (every request). A call after the
  first is futile: the answer cannot change. Ours vs each SDK's defaults.

    .venv/bin/python benchmarks/bench_recovery.py [--window 2] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import anthropic
import openai
from google import genai
from google.genai import types as genai_types

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

MESSAGES: Any = [{"role": "user", "content": "hi"}]
Ask = Callable[[], object]
Client = Callable[[FakeProvider], Ask]
"""A client made for one FakeProvider (outside the time), and its one call."""


def _openai(retries: bool) -> Client:
    def client(fake: FakeProvider) -> Ask:
        options: dict[str, Any] = {} if retries else {"max_retries": 0}
        sdk = openai.OpenAI(api_key="sk-fake", base_url=fake.openai_url, **options)
        return lambda: sdk.chat.completions.create(model="gpt-4o", messages=MESSAGES)

    return client


def _anthropic(retries: bool) -> Client:
    def client(fake: FakeProvider) -> Ask:
        options: dict[str, Any] = {} if retries else {"max_retries": 0}
        sdk = anthropic.Anthropic(api_key="sk-ant-fake", base_url=fake.url, **options)
        return lambda: sdk.messages.create(
            model="claude-opus-4-8", max_tokens=64, messages=MESSAGES
        )

    return client


def _google(retries: bool, initial_delay: float | None = None) -> Client:
    def client(fake: FakeProvider) -> Ask:
        # google-genai retries nothing unless asked; asked, its defaults (5 attempts, 1 s
        # doubling, 408/429/5xx) read neither retry-after nor RetryInfo.
        retry = genai_types.HttpRetryOptions(initial_delay=initial_delay) if retries else None
        options = genai_types.HttpOptions(base_url=fake.url, retry_options=retry)
        sdk = genai.Client(api_key="fake", http_options=options)
        return lambda: sdk.models.generate_content(model="gemini-2.5-flash", contents="hi")

    return client


@dataclass(frozen=True, slots=True)
class Row:
    sdk: str
    fault: str
    who: str
    """`recoverable` (rc.retry, the SDK's retries off) or the SDK's own retries."""
    calls: int
    """HTTP requests the server saw."""
    futile: int
    """Requests that could not succeed, after the first."""
    wall_s: float
    recovered: bool


class RateWindow:
    """Every request is answered 429 until `window` seconds after the first, then the answer."""

    def __init__(self, fake: FakeProvider, window: float) -> None:
        self.fake, self.window = fake, window
        self.earlier: list[str | None] = []
        fake.fail(Fault.rate_limited(retry_after=window), times=None)
        self.timer: threading.Timer | None = None

    def started(self) -> None:
        self.timer = threading.Timer(self.window, self._close)
        self.timer.start()

    def _close(self) -> None:
        self.earlier = [r.fault for r in self.fake.requests]
        self.fake.reset()  # the faults go (and the record: counted above)

    def calls(self) -> list[str | None]:
        if self.timer is not None:
            self.timer.join()
        return self.earlier + [r.fault for r in self.fake.requests]


def _caller(who: str, ask: Ask) -> Ask:
    """Ours: rc.retry around the call (the client's retries off); else the call alone."""
    if who == "recoverable":
        return lambda: rc.retry().call(ask)
    return ask


def _timed(call: Callable[[], object]) -> tuple[bool, float]:
    started = time.perf_counter()
    try:
        call()
    except Exception:  # a failed call is a row too (recovered: False)
        return False, time.perf_counter() - started
    return True, time.perf_counter() - started


WARM_CLASSIFY_MS: list[float] = []
"""Each warm-up's classification, ms: the first in the process pays the lazy imports."""


def _warm(fake: FakeProvider, ask: Ask) -> None:
    """One answered call and one classified failure first: the client's connection and the
    lazy imports (the SDK's, our classifier's handler for it) happen outside the time."""
    ask()
    fake.fail(Fault.unauthorized())
    try:
        ask()
    except Exception as error:  # any failure: only its classification matters
        started = time.perf_counter()
        rc.classify(error)
        WARM_CLASSIFY_MS.append(round((time.perf_counter() - started) * 1000, 2))
    fake.reset()


def rate_limit_row(sdk: str, client: Client, who: str, window: float) -> Row:
    with FakeProvider() as fake:
        ask = client(fake)
        _warm(fake, ask)
        gate = RateWindow(fake, window)
        gate.started()
        ok, wall = _timed(_caller(who, ask))
        faults = gate.calls()
    futile = sum(1 for f in faults[1:] if f is not None)
    return Row(sdk, f"429 retry-after {window:g}", who, len(faults), futile, round(wall, 3), ok)


def futile_row(sdk: str, client: Client, who: str, fault: Fault) -> Row:
    with FakeProvider() as fake:
        ask = client(fake)
        _warm(fake, ask)
        fake.fail(fault, times=None)
        ok, wall = _timed(_caller(who, ask))
        calls = len(fake.requests)
    return Row(sdk, fault.name, who, calls, calls - 1, round(wall, 3), ok)


def sdk_clients(quick: bool) -> dict[str, tuple[Client, Client, str]]:
    """Each SDK: its call with retries off, with its own retries, and what those are."""
    google_delay = 0.05 if quick else None  # quick: the same count of calls, shorter waits
    return {
        "openai": (_openai(False), _openai(True), "openai max_retries=2 (default)"),
        "anthropic": (_anthropic(False), _anthropic(True), "anthropic max_retries=2 (default)"),
        "google-genai": (
            _google(False),
            _google(True, google_delay),
            "google-genai HttpRetryOptions()" + (" initial_delay=0.05" if quick else ""),
        ),
    }


FUTILE_FAULTS = (Fault.insufficient_quota(), Fault.unauthorized(), Fault.context_too_long())


def measure(window: float, quick: bool) -> dict[str, Any]:
    rate: list[Row] = []
    futile: list[Row] = []
    for sdk, (plain, own, own_name) in sdk_clients(quick).items():
        rate.append(rate_limit_row(sdk, plain, "recoverable", window))
        rate.append(rate_limit_row(sdk, own, own_name, window))
        for fault in FUTILE_FAULTS:
            futile.append(futile_row(sdk, plain, "recoverable", fault))
            futile.append(futile_row(sdk, own, own_name, fault))
        # google-genai's default is no retry at all: its default row, for the futile count.
        if sdk == "google-genai":
            futile.extend(
                futile_row(sdk, plain, "none (google-genai default)", fault)
                for fault in FUTILE_FAULTS
            )
    ours = [r for r in rate if r.who == "recoverable"]
    return {
        "window_s": window,
        "load": os.getloadavg()[0],
        "rate_limit": [asdict(r) for r in rate],
        "futile": [asdict(r) for r in futile],
        "first_classify_ms": WARM_CLASSIFY_MS[0],
        "goal": {
            "worst_recovery_s": max(r.wall_s for r in ours),
            "limit_s": window + 0.1,
            "all_one_extra_call": all(r.calls == 2 and r.recovered for r in ours),
            "ours_futile": sum(r.futile for r in futile if r.who == "recoverable"),
        },
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"Rate limit: every request answered 429 `retry-after: {report['window_s']:g}` "
        f"for {report['window_s']:g} s, then the answer (load {report['load']:.1f}). Clients "
        "warmed first; the process's first classification (lazy imports) took "
        f"{report['first_classify_ms']:.0f} ms, outside the time.\n",
        "| SDK | who retries | calls | futile | recovered | wall s |",
        "|---|---|---:|---:|---|---:|",
    ]
    lines += [
        f"| {r['sdk']} | {r['who']} | {r['calls']} | {r['futile']} | "
        f"{'yes' if r['recovered'] else 'no'} | {r['wall_s']:.2f} |"
        for r in report["rate_limit"]
    ]
    lines += [
        "\nFaults that last (every request): a call after the first is futile.\n",
        "| SDK | fault | who retries | calls | futile | wall s |",
        "|---|---|---|---:|---:|---:|",
    ]
    lines += [
        f"| {r['sdk']} | {r['fault']} | {r['who']} | {r['calls']} | {r['futile']} | "
        f"{r['wall_s']:.2f} |"
        for r in report["futile"]
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=2.0, help="the retry-after, seconds")
    parser.add_argument("--quick", action="store_true", help="a 0.2 s window, short SDK waits")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    window = 0.2 if args.quick else args.window
    report = measure(window, args.quick)
    print(json.dumps(report, indent=1) if args.json else markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

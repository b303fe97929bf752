"""How cost grows with the work: four small curves (issue 15, goal 5).

- classify µs vs the cause-chain depth (an openai 429 under N `raise ... from` links; the
  walk stops at MAX_CAUSE_DEPTH) and vs the message size (an openai 400 whose message is N
  characters; the body is read up to 64,000);
- streaming parse MB/s vs the stream size (a Claude stream from bench_parse's generator,
  64 KiB reads through `RunContext.chunk_events`, every event delivered, none kept);
- FakeProvider requests/s vs concurrent clients (FakeProvider in its own process, httpx
  async clients posting OpenAI chat completions, each client its own connection);
- `agents.run` wall vs concurrent runs (asyncio.gather of N runs of a stand-in Claude, a
  shell script printing the captured stdout; full mode only).

    .venv/bin/python benchmarks/bench_scale.py [--quick] [--json] [--png DIR]

`--png DIR` writes one matplotlib PNG per curve (the `bench` extra); full mode of
benchmarks/run writes them to benchmarks/scale/.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

import recoverable as rc
from _provider_errors import openai_status
from _run_procs import fake_server, stand_in
from bench_parse import CHUNK, build_stream
from recoverable import agents
from recoverable._core.detail import MAX_CAUSE_DEPTH
from recoverable.agents._cli_modules import module_for
from recoverable.agents._process import RunContext
from recoverable.testing import Fault, sdk_error

Curve = list[dict[str, Any]]


def _per_call_us(call: Callable[[], object], calls: int, repeats: int) -> float:
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(calls):
            call()
        timings.append((time.perf_counter() - started) / calls * 1e6)
    return round(statistics.median(timings), 3)


def _chained(depth: int) -> BaseException:
    """An openai 429 under `depth` wrappers, each raised from the one below."""
    error = sdk_error("openai", Fault.rate_limited(retry_after=1))
    for level in range(depth):
        try:
            raise RuntimeError(f"wrapper {level}") from error
        except RuntimeError as wrapper:
            error = wrapper
    return error


def classify_vs_depth(depths: list[int], calls: int, repeats: int) -> Curve:
    curve = []
    for depth in depths:
        error = _chained(depth)
        # Past the cap the 429 is out of reach: the outer RuntimeError is what is classified.
        found = rc.classify(error).code == "provider_rate_limited"
        assert found == (depth < MAX_CAUSE_DEPTH), depth
        us = _per_call_us(functools.partial(rc.classify, error), calls, repeats)
        curve.append({"x": depth, "us": us, "found": found})
    return curve


def _long_message(chars: int) -> str:
    words = ("the request", "was refused", "by policy", "for field", "messages[0]")
    text = " ".join(words[i % len(words)] for i in range(chars // 8 + 1))
    return text[:chars]


def classify_vs_message(sizes: list[int], calls: int, repeats: int) -> Curve:
    curve = []
    for size in sizes:
        body = {"message": _long_message(size), "type": "invalid_request_error", "code": None}
        error = openai_status(400, body)
        assert rc.classify(error).code == "provider_invalid_request", size
        us = _per_call_us(functools.partial(rc.classify, error), calls, repeats)
        curve.append({"x": size, "us": us})
    return curve


def parse_vs_size(sizes_kb: list[int], repeats: int) -> Curve:
    module, options = module_for("claude"), agents.RunOptions()
    curve = []
    for size_kb in sizes_kb:
        data, _ = build_stream(size_kb * 1024)
        chunks = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]
        timings = []
        for _ in range(repeats):
            started = time.perf_counter()
            context = RunContext(module, options, time.monotonic)
            for chunk in chunks:
                for _event in context.chunk_events(chunk):
                    pass
            context.chunk_events(b"")
            context.end(0)
            timings.append(time.perf_counter() - started)
        mb_per_s = len(data) / statistics.median(timings) / 1e6
        curve.append({"x": size_kb, "mb_per_s": round(mb_per_s, 1)})
    return curve


async def _requests_per_s(base_url: str, clients: int, per_client: int) -> float:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    url = base_url + "/v1/chat/completions"

    async def client() -> None:
        async with httpx.AsyncClient(trust_env=False, timeout=60) as http:
            for _ in range(per_client):
                answer = await http.post(url, json=body, headers={"authorization": "Bearer sk"})
                assert answer.status_code == 200, answer.status_code

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return clients * per_client / (time.perf_counter() - started)


def fake_provider_vs_clients(counts: list[int], total: int) -> Curve:
    curve = []
    with fake_server() as fake:
        asyncio.run(_requests_per_s(fake.url, 1, 5))  # warm
        for clients in counts:
            per_client = max(2, total // clients)
            rate = asyncio.run(_requests_per_s(fake.url, clients, per_client))
            curve.append({"x": clients, "requests_per_s": round(rate, 1)})
    return curve


async def _runs_wall(executable: str, runs: int, cwd: str) -> float:
    async def one() -> None:
        result = await agents.run(
            "Say hello", "claude", executable=executable, cwd=cwd, timeout=120
        )
        assert result.success, result.error

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(runs)))
    return time.perf_counter() - started


def runs_vs_concurrency(counts: list[int]) -> Curve:
    curve = []
    with tempfile.TemporaryDirectory() as root:
        executable = stand_in("claude", root).executable
        asyncio.run(_runs_wall(executable, 1, root))  # warm
        for runs in counts:
            wall = asyncio.run(_runs_wall(executable, runs, root))
            curve.append(
                {
                    "x": runs,
                    "wall_ms": round(wall * 1000, 1),
                    "ms_per_run": round(wall * 1000 / runs, 2),
                }
            )
    return curve


MESSAGE_SIZES = [100, 1_000, 10_000, 64_000, 100_000, 1_000_000, 4_000_000]


def measure(quick: bool) -> dict[str, Any]:
    calls, repeats = (200, 2) if quick else (2000, 5)
    report: dict[str, Any] = {
        "load": os.getloadavg()[0],
        "classify_vs_depth": classify_vs_depth(
            [0, 1, 4, 8, 16] if quick else [0, 1, 2, 4, 8, 16, 32, 64, 128], calls, repeats
        ),
        "classify_vs_message": classify_vs_message(
            [100, 10_000, 100_000] if quick else MESSAGE_SIZES, calls // 4, repeats
        ),
        "parse_vs_size": parse_vs_size(
            [64, 512] if quick else [64, 256, 1024, 4096, 16384], 2 if quick else 5
        ),
        "fake_provider_vs_clients": fake_provider_vs_clients(
            [1, 10] if quick else [1, 2, 5, 10, 20, 50, 100, 200], 20 if quick else 1000
        ),
    }
    if not quick:
        report["runs_vs_concurrency"] = runs_vs_concurrency([1, 2, 5, 10, 20, 50])
    return report


PLOTS = {
    "classify_vs_depth": ("cause-chain depth (links)", "us", "classify µs per call", False),
    "classify_vs_message": ("message size (characters)", "us", "classify µs per call", True),
    "parse_vs_size": ("stream size (KiB)", "mb_per_s", "streaming parse MB/s", True),
    "fake_provider_vs_clients": ("concurrent clients", "requests_per_s", "requests/s", True),
    "runs_vs_concurrency": ("concurrent agents.run", "ms_per_run", "wall ms per run", True),
}


def write_pngs(report: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib  # the `bench` extra; only full mode draws

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (xlabel, key, ylabel, log_x) in PLOTS.items():
        if name not in report:
            continue
        points = report[name]
        figure, axes = plt.subplots(figsize=(4.5, 3), dpi=100)
        axes.plot([p["x"] for p in points], [p[key] for p in points], marker="o")
        if log_x:
            axes.set_xscale("log")
        axes.set_xlabel(xlabel)
        axes.set_ylabel(ylabel)
        axes.set_ylim(bottom=0)
        axes.set_title(f"{name} (load {report['load']:.1f})", fontsize=9)
        axes.grid(alpha=0.3)
        figure.tight_layout()
        path = out / f"{name}.png"
        figure.savefig(path)
        plt.close(figure)
        written.append(path)
    return written


def markdown(report: dict[str, Any]) -> str:
    lines = [f"Load average {report['load']:.1f} at the start.\n"]
    for name, (xlabel, key, ylabel, _) in PLOTS.items():
        if name in report:
            points = ", ".join(f"{p['x']:g}: {p[key]:g}" for p in report[name])
            lines.append(f"- {name} ({xlabel} → {ylabel}): {points}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny curves, no agents.run one")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--png", type=Path, help="write one PNG per curve into this folder")
    args = parser.parse_args(argv)
    report = measure(args.quick)
    if args.png is not None:
        report["pngs"] = [f"{args.png.name}/{path.name}" for path in write_pngs(report, args.png)]
    print(json.dumps(report, indent=1) if args.json else markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

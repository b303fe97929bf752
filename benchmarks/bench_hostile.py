"""classify on hostile input (the worst case over a corpus), and what the secret scrubber costs.

Run: .venv/bin/python benchmarks/bench_hostile.py [--json] [--quick]

Table 1 times `classify` (and `ErrorDetail.create` for the payload rows) over a corpus of
hostile values: shared and cyclic structure, deep nesting, exception groups that repeat a
sub-group, cause chains 100k deep, huge arguments, absurd hints, credentials in the text.
The figure that matters is the worst row: nothing may take long, whatever its shape.
Table 2 times `rc.secrets.scrub` on clean text of three lengths and on text that holds a key, and
`classify` on three real SDK exceptions with the scrubber on and swapped for an identity, in
the same process, so the ratio is the scrubber's share of a classification.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import recoverable as rc
from recoverable._core import secrets as _secrets
from recoverable._core import untrusted as _untrusted


def _self_referencing() -> dict[str, Any]:
    node: dict[str, Any] = {}
    node["a"], node["b"], node["c"] = node, [node, node], {"x": node}
    return node


def _doubling() -> list[Any]:
    node: list[Any] = ["leaf"]
    for _ in range(60):
        node = [node, node]
    return node


def _group() -> BaseException:
    group: Exception = ConnectionRefusedError("refused")
    for level in range(8):
        group = ExceptionGroup(f"level {level}", [group] * 16)
    return group


def _chain() -> BaseException:
    exc: BaseException = ValueError("bottom")
    for index in range(100_000):
        top = RuntimeError(f"link {index}")
        top.__cause__ = exc
        exc = top
    return exc


def _deep() -> Any:
    deep: Any = "bottom"
    for _ in range(100_000):
        deep = {"d": deep}
    return deep


KEY = "sk-proj-" + "Ab3" * 12


def _create(details: dict[str, Any]) -> rc.ErrorDetail:
    return rc.ErrorDetail.create("unknown", "m", details=details)


def corpus() -> list[tuple[str, Callable[[], object]]]:
    """(name, the call timed): each value built once, outside the timing."""
    loop, doubling, group, chain, deep = (
        _self_referencing(),
        _doubling(),
        _group(),
        _chain(),
        _deep(),
    )
    huge = ValueError([list(range(1000))] * 10_000)
    wide = {"many": list(range(100_000))}
    payload = {"code": "provider_rate_limited", "message": "m", "retry_after_ms": 10**400}
    long_text = f"failed with {KEY} " + "x" * 20_000
    return [
        ("details: three-way self-reference", lambda: _create({"p": loop})),
        ("details: shared structure, 2**60 paths", lambda: _create({"t": doubling})),
        ("details: 100,000 values", lambda: _create(wide)),
        ("details: nested 100,000 deep", lambda: _create({"d": deep})),
        ("exception group: 16 copies x 8 levels", lambda: rc.classify(group)),
        ("cause chain 100,000 deep", lambda: rc.classify(chain)),
        ("exception holding a 10M-item list", lambda: rc.classify(huge)),
        ("payload: a 400-digit hint", lambda: rc.classify(payload)),
        ("text: 20,000 chars with a key", lambda: rc.classify(long_text)),
    ]


def _best_us(call: Callable[[], object], budget_s: float) -> float:
    """The fastest of repeated calls within `budget_s` (at least 3), in µs."""
    best, spent, runs = float("inf"), 0.0, 0
    while runs < 3 or spent < budget_s:
        started = time.perf_counter()
        call()
        took = time.perf_counter() - started
        best, spent, runs = min(best, took), spent + took, runs + 1
    return best * 1e6


def _per_call_us(call: Callable[[], object], calls: int) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - started) / calls)
    return best * 1e6


def _bound(function: Callable[[Any], object], value: object) -> Callable[[], object]:
    return lambda: function(value)


def _identity(text: str) -> str:
    return text


def _cold(text: str) -> Callable[[], object]:
    """The scrubber on a text it has not seen lately (it remembers the last texts)."""
    forget, scrub = _secrets.forget, rc.secrets.scrub
    return lambda: (forget(), scrub(text))


def scrubber_rows(calls: int) -> list[dict[str, Any]]:
    from _cases import CASES

    texts = {
        "clean, 20 chars": "Connection refused.",
        "clean, 200 chars": (
            "Rate limit reached for gpt-4o in organization org-fake on requests"
            " per min (RPM): Limit 3, Used 3, Requested 1. Please try again in"
            " 20s. Visit https://platform.openai.com/account/rate-limits."
        ),
        "clean, 2,000 chars": "The server had an error while processing your request. " * 36,
        "with a key, 200 chars": f"Incorrect API key provided: {KEY}. You can find your key.",
    }
    rows: list[dict[str, Any]] = []
    for name, text in texts.items():
        rows.append(
            {"what": f"scrub: {name}", "us": _per_call_us(_bound(rc.secrets.scrub, text), calls)}
        )
        rows.append({"what": f"scrub, first sight: {name}", "us": _per_call_us(_cold(text), calls)})
    for case in (CASES[0], CASES[1], CASES[7]):
        error = case.build()
        on = _per_call_us(_bound(rc.classify, error), calls)
        # The scrubber swapped out where text enters a detail, this process only.
        namespace = vars(_untrusted)
        real, namespace["scrub"] = namespace["scrub"], _identity
        try:
            off = _per_call_us(_bound(rc.classify, error), calls)
        finally:
            namespace["scrub"] = real
        rows.append({"what": f"classify: {case.name}", "us": on, "without_scrub_us": off})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    parser.add_argument("--quick", action="store_true", help="a short run (for the test suite)")
    args = parser.parse_args(argv)
    budget, calls = (0.05, 200) if args.quick else (1.0, 20_000)
    rc.classify(ValueError("warm-up"))
    hostile: list[dict[str, Any]] = [
        {"what": name, "us": _best_us(call, budget)} for name, call in corpus()
    ]
    scrubber = scrubber_rows(calls)
    if args.json:
        print(json.dumps({"hostile": hostile, "scrubber": scrubber}, indent=2))
        return 0
    print("## classify on hostile input (best of repeated calls)\n")
    print("| input | µs |\n|---|---:|")
    for row in hostile:
        print(f"| {row['what']} | {row['us']:.0f} |")
    worst = max(hostile, key=lambda row: row["us"])
    print(f"| **worst: {worst['what']}** | **{worst['us']:.0f}** |\n")
    print("## The secret scrubber's cost\n")
    print("| call | µs | without the scrubber | share |\n|---|---:|---:|---:|")
    for row in scrubber:
        off = row.get("without_scrub_us")
        share = f"{1 - off / row['us']:.0%}" if off else ""
        print(f"| {row['what']} | {row['us']:.2f} | {f'{off:.2f}' if off else ''} | {share} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

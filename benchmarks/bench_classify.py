"""classify() against LiteLLM's and pydantic-ai's exception mapping, in one process.

Run: .venv/bin/python benchmarks/bench_classify.py [--json] [--skip-imports]

Prints Markdown tables: per SDK case (our code and time, each peer's verdict and time), a
summary, Python builtins through classify, and import times. Ratios matter, not absolute
times. Nothing leaves 127.0.0.1: the SDK clients only build exceptions, and litellm reads
its bundled model cost map.
"""

from __future__ import annotations

import os

# Before anything imports litellm: otherwise it downloads the model cost map at import.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import argparse
import asyncio
import json
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import recoverable as rc
from _cases import (
    CASES,
    LITELLM_TO_OURS,
    PYDANTIC_AI_TO_OURS,
    Case,
    check_tables,
    peer_code,
    right_kind,
)


@dataclass(frozen=True)
class Timing:
    """How long each measurement runs."""

    repeats: int = 7  # median of this many timed repeats
    repeat_ns: int = 40_000_000  # each repeat runs about this long (calls per repeat calibrated)


FULL = Timing()
QUICK = Timing(repeats=2, repeat_ns=2_000_000)  # --quick (CI: it runs)
IMPORT_RUNS = 21  # subprocess runs per import command, fewer when one run is slow
IMPORT_BUDGET_S = 12.0  # ... so that no command takes much longer than this
IMPORT_MIN_RUNS = 5

Loop = Callable[[int], int]  # runs the operation n times, returns elapsed ns


def _median_ns(loop: Loop, timing: Timing) -> float:
    """Median ns per call over `timing.repeats` repeats, after a warm-up and a calibration."""
    loop(3)  # warm up: first use loads lazy modules and compiles patterns
    n = 1
    while (elapsed := loop(n)) < timing.repeat_ns // 8 and n < 10_000_000:
        n *= 2
    n = max(1, int(n * timing.repeat_ns / max(elapsed, 1)))
    return statistics.median(loop(n) / n for _ in range(timing.repeats))


# -- the three classifiers, as a loop each (no per-call closure overhead) ------------------


def ours_loop(exc: BaseException) -> Loop:
    classify = rc.classify

    def loop(n: int) -> int:
        start = time.perf_counter_ns()
        for _ in range(n):
            classify(exc)
        return time.perf_counter_ns() - start

    return loop


def _litellm() -> Callable[..., Any]:
    import litellm
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type

    # Otherwise every call prints a "Give Feedback / Get Help" banner to stdout.
    litellm.suppress_debug_info = True
    return exception_type


def litellm_once(case: Case, exc: BaseException) -> BaseException | None:
    exception_type = _litellm()
    try:
        exception_type(model=case.model, original_exception=exc, custom_llm_provider=case.provider)
    except Exception as mapped:
        return mapped
    return None


def litellm_loop(case: Case, exc: BaseException) -> Loop:
    exception_type = _litellm()
    model, provider = case.model, case.provider

    def loop(n: int) -> int:
        start = time.perf_counter_ns()
        for _ in range(n):
            try:  # noqa: SIM105 -- suppress() would add a context manager to every call timed
                exception_type(model=model, original_exception=exc, custom_llm_provider=provider)
            except Exception:
                pass
        return time.perf_counter_ns() - start

    return loop


def _pydantic_ai_mapper(case: Case) -> Callable[[], AbstractContextManager[None]]:
    """The context manager pydantic-ai's model class wraps each SDK call in."""
    if case.provider == "openai":
        from pydantic_ai.models.openai._errors import map_api_errors

        return lambda: map_api_errors(case.model, "openai")
    if case.provider == "anthropic":
        from pydantic_ai.models.anthropic._errors import map_api_errors as anthropic_map

        return lambda: anthropic_map(case.model, "anthropic")
    from pydantic_ai.models.google import _map_api_errors

    return lambda: _map_api_errors(case.model, "google-gla")


def pydantic_ai_once(case: Case, exc: BaseException) -> BaseException | None:
    mapper = _pydantic_ai_mapper(case)
    try:
        with mapper():
            raise exc.with_traceback(None)
    except Exception as mapped:
        return mapped
    return None


def pydantic_ai_loop(case: Case, exc: BaseException) -> Loop:
    mapper = _pydantic_ai_mapper(case)

    def loop(n: int) -> int:
        start = time.perf_counter_ns()
        for _ in range(n):
            try:
                with mapper():
                    # Each raise would otherwise prepend a frame to the same traceback.
                    raise exc.with_traceback(None)
            except Exception:
                pass
        return time.perf_counter_ns() - start

    return loop


def raise_catch_loop(exc: BaseException) -> Loop:
    """The floor any raising mapper pays: raise a built exception and catch it."""

    def loop(n: int) -> int:
        start = time.perf_counter_ns()
        for _ in range(n):
            try:
                raise exc.with_traceback(None)
            except Exception:
                pass
        return time.perf_counter_ns() - start

    return loop


# -- verdicts -------------------------------------------------------------------------------


@dataclass
class Verdict:
    cls: str  # what the classifier answered: our code, or the peer's class name
    code: str  # in our vocabulary
    right: bool  # the right kind (overloaded reported as a server error counts)
    exact: bool  # exactly the expected code
    status: int | None  # the HTTP status it reports
    us: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "class": self.cls,
            "code": self.code,
            "right_kind": self.right,
            "exact": self.exact,
            "status": self.status,
            "us_per_call": round(self.us, 3),
        }


def _peer_verdict(case: Case, mapped: BaseException | None, table: dict[str, str]) -> Verdict:
    if mapped is None:
        return Verdict("(returned, did not raise)", "unknown", False, False, None)
    name, code = peer_code(table, type(mapped))
    if code == "provider_unreachable" and getattr(mapped, "phase", None) in ("read", "write"):
        code = "provider_connection_lost"  # pydantic-ai knows the request may have been sent
    status = getattr(mapped, "status_code", None)
    status = status if isinstance(status, int) else None
    return Verdict(name, code, right_kind(case.expected, code), code == case.expected, status)


@dataclass
class Row:
    case: Case
    ours: Verdict
    litellm: Verdict
    pydantic_ai: Verdict
    notes: list[str] = field(default_factory=list)


def run_cases(timing: Timing = FULL) -> tuple[list[Row], float]:
    check_tables()
    rows: list[Row] = []
    for case in CASES:
        exc = case.build()
        detail = rc.classify(exc)
        ours = Verdict(
            detail.code,
            detail.code,
            detail.code == case.expected,
            detail.code == case.expected,
            detail.status,
        )
        lite = _peer_verdict(case, litellm_once(case, exc), LITELLM_TO_OURS)
        pai = _peer_verdict(case, pydantic_ai_once(case, exc), PYDANTIC_AI_TO_OURS)
        ours.us = _median_ns(ours_loop(exc), timing) / 1000
        lite.us = _median_ns(litellm_loop(case, exc), timing) / 1000
        pai.us = _median_ns(pydantic_ai_loop(case, exc), timing) / 1000
        # Mapping must not depend on having run before (no state kept on the exception).
        assert rc.classify(exc).code == detail.code, case.name
        row = Row(case, ours, lite, pai)
        for label, verdict in (("ours", ours), ("litellm", lite), ("pydantic-ai", pai)):
            if verdict.right and not verdict.exact:
                row.notes.append(f"{label}: right kind as {verdict.code}")
            if (
                verdict.status is not None
                and case.status is not None
                and verdict.status != case.status
            ):
                row.notes.append(f"{label}: status {verdict.status}, was {case.status}")
        rows.append(row)
    floor = _median_ns(raise_catch_loop(CASES[0].build()), timing) / 1000
    return rows, floor


# -- builtins ---------------------------------------------------------------------------------


def _chain_of_three() -> BaseException:
    try:
        try:
            try:
                raise ConnectionResetError(104, "Connection reset by peer")
            except ConnectionResetError as reset:
                raise OSError("reading the reply failed") from reset
        except OSError as io:
            raise RuntimeError("tool step failed") from io
    except RuntimeError as error:
        return error


BUILTINS: list[tuple[str, Callable[[], BaseException]]] = [
    ("ConnectionRefusedError", lambda: ConnectionRefusedError(111, "Connection refused")),
    ("TimeoutError", lambda: TimeoutError("timed out")),
    ("asyncio.CancelledError", asyncio.CancelledError),
    ("KeyError", lambda: KeyError("missing")),
    ("PermissionError", lambda: PermissionError(13, "Permission denied", "/etc/shadow")),
    ("RuntimeError <- OSError <- ConnectionResetError", _chain_of_three),
]


def run_builtins(timing: Timing = FULL) -> list[dict[str, Any]]:
    out = []
    for name, build in BUILTINS:
        exc = build()
        detail = rc.classify(exc)
        cause = detail.cause.code if isinstance(detail.cause, rc.ErrorDetail) else None
        out.append(
            {
                "exception": name,
                "code": detail.code,
                "retryable": detail.retryable,
                "cause": cause,
                "us_per_call": round(_median_ns(ours_loop(exc), timing) / 1000, 3),
            }
        )
    return out


# -- import time ------------------------------------------------------------------------------

IMPORTS: list[tuple[str, str]] = [
    ("python -c pass", "pass"),
    ("import recoverable", "import recoverable"),
    ("import recoverable + first classify", "import recoverable as rc; rc.classify(ValueError())"),
    ("import tenacity", "import tenacity"),
    ("import openai", "import openai"),
    ("import anthropic", "import anthropic"),
    ("import litellm", "import litellm"),
]


def run_imports() -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

    def once(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        return time.perf_counter() - start

    runs: list[int] = []
    for _label, code in IMPORTS:
        first = once(code)  # writes the .pyc files, as a user's machine has them
        runs.append(max(IMPORT_MIN_RUNS, min(IMPORT_RUNS, int(IMPORT_BUDGET_S / max(first, 1e-3)))))
    # Round robin, so that load from anything else on the machine falls on every command alike.
    times: list[list[float]] = [[] for _ in IMPORTS]
    for round_ in range(max(runs)):
        for i, (_label, code) in enumerate(IMPORTS):
            if round_ < runs[i]:
                times[i].append(once(code))
    out: list[dict[str, Any]] = [
        {"what": label, "runs": runs[i], "median_ms": statistics.median(times[i]) * 1000}
        for i, (label, _code) in enumerate(IMPORTS)
    ]
    bare = out[0]["median_ms"]
    for entry in out:
        entry["over_bare_ms"] = round(entry["median_ms"] - bare, 1)
        entry["median_ms"] = round(entry["median_ms"], 1)
    return out


# -- output -----------------------------------------------------------------------------------


def _us(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def _verdict(v: Verdict) -> str:
    mark = "right" if v.right else "WRONG"
    return f"{v.cls} ({mark})"


def print_tables(
    rows: list[Row],
    floor: float,
    builtins: list[dict[str, Any]],
    imports: list[dict[str, Any]],
    timing: Timing = FULL,
) -> None:
    print("# classify benchmark\n")
    print(
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs; "
        f"µs per call, median of {timing.repeats} repeats, one process.\n"
    )
    print("## 13 real SDK exceptions\n")
    print(
        "| case | expected | ours code | ours µs | litellm verdict | litellm µs "
        "| pydantic-ai verdict | pydantic-ai µs | notes |"
    )
    print("|---|---|---|---:|---|---:|---|---:|---|")
    for r in rows:
        ours = r.ours.code if r.ours.right else f"{r.ours.code} (WRONG)"
        print(
            f"| {r.case.name} | {r.case.expected} | {ours} | {_us(r.ours.us)} "
            f"| {_verdict(r.litellm)} | {_us(r.litellm.us)} "
            f"| {_verdict(r.pydantic_ai)} | {_us(r.pydantic_ai.us)} | {'; '.join(r.notes)} |"
        )
    s = summary(rows)
    print(
        f"| **median / right** | | **{s['ours']['right']}/13** | **{_us(s['ours']['median_us'])}** "
        f"| **{s['litellm']['right']}/13** ({s['litellm']['exact']}/13 exact) "
        f"| **{_us(s['litellm']['median_us'])}** "
        f"| **{s['pydantic_ai']['right']}/13** ({s['pydantic_ai']['exact']}/13 exact) "
        f"| **{_us(s['pydantic_ai']['median_us'])}** | |"
    )
    print(
        f"| **ratio to ours** | | | 1.0x | | **{s['litellm']['ratio']:.0f}x** "
        f"| | **{s['pydantic_ai']['ratio']:.1f}x** | |"
    )
    print(
        f"\nBoth peers raise the mapped exception; a bare raise + catch of a built exception "
        f"costs {floor:.2f} µs here. Right = the peer's class, mapped to our codes by the tables "
        "in `_cases.py`, names the expected kind (a 529 reported as a 500 counts as right, "
        "status noted); exact = the same code."
    )
    if builtins:
        print("\n## Python builtins through classify (no peer applies)\n")
        print("| exception | code | retryable | cause | µs |")
        print("|---|---|---|---|---:|")
        for b in builtins:
            cause = b["cause"] or ""
            print(
                f"| {b['exception']} | {b['code']} | {b['retryable']} | {cause} "
                f"| {_us(b['us_per_call'])} |"
            )
        med = statistics.median(b["us_per_call"] for b in builtins)
        print(f"| **median** | | | | **{_us(med)}** |")
    if imports:
        print("\n## Import time (fresh interpreter, .pyc present; median wall time)\n")
        print("| command | runs | median ms | over bare python, ms |")
        print("|---|---:|---:|---:|")
        for i in imports:
            print(
                f"| `{i['what']}` | {i['runs']} | {i['median_ms']:.1f} | {i['over_bare_ms']:.1f} |"
            )


def summary(rows: list[Row]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    ours_median = statistics.median(r.ours.us for r in rows)
    for name in ("ours", "litellm", "pydantic_ai"):
        verdicts = [getattr(r, name) for r in rows]
        median = statistics.median(v.us for v in verdicts)
        out[name] = {
            "right": sum(v.right for v in verdicts),
            "exact": sum(v.exact for v in verdicts),
            "median_us": round(median, 3),
            "ratio": round(median / ours_median, 2),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    parser.add_argument("--skip-imports", action="store_true", help="skip the import-time table")
    parser.add_argument("--quick", action="store_true", help="2 short repeats (CI: it runs)")
    args = parser.parse_args(argv)
    timing = QUICK if args.quick else FULL

    rows, floor = run_cases(timing)
    builtins = run_builtins(timing)
    imports = [] if args.skip_imports else run_imports()
    if args.json:
        payload = {
            "python": platform.python_version(),
            "repeats": timing.repeats,
            "cases": [
                {
                    "case": r.case.name,
                    "expected": r.case.expected,
                    "litellm_expected_class": r.case.litellm_expect,
                    "pydantic_ai_expected_class": r.case.pydantic_ai_expect,
                    "ours": r.ours.to_dict(),
                    "litellm": r.litellm.to_dict(),
                    "pydantic_ai": r.pydantic_ai.to_dict(),
                    "notes": r.notes,
                }
                for r in rows
            ],
            "summary": summary(rows),
            "raise_catch_floor_us": round(floor, 3),
            "builtins": builtins,
            "imports": imports,
        }
        print(json.dumps(payload, indent=2))
    else:
        print_tables(rows, floor, builtins, imports, timing)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The benchmarks still run against the current code (mypy checks them too).

Speed is not asserted here (that is what the benchmarks print); only that each measured
path runs and handles every line of a small stream, so a refactor cannot leave one broken.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def test_bench_parse_runs_every_path_over_every_line() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_parse.py"), "--mb", "0.05", "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    report = json.loads(result.stdout)
    assert report["lines"] > 100
    assert set(report["rows"]) == {
        "json_loads", "json_loads_kept", "ours_replay", "ours_parse_line", "ours_run_path",
        "sdk_sync", "sdk_transport",
    }  # fmt: skip
    assert {row["count"] for row in report["rows"].values()} == {report["lines"]}


def test_bench_flood_runs_every_consumer_over_both_kinds_of_lines() -> None:
    """A few MiB instead of the GiB: every row ends well and within its memory limit."""
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_flood.py"), "--size", "4", "--json"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    rows = json.loads(result.stdout)["rows"]
    assert [(row["kind"], row["how"]) for row in rows] == [
        ("short", "stream_sync"), ("short", "run_sync"), ("1MiB", "stream_sync"),
        ("1MiB", "run_sync"),
    ]  # fmt: skip
    assert [(row["success"], row["within"]) for row in rows] == [(True, True)] * 4
    assert [row["kept"] for row in rows if row["how"] == "stream_sync"] == [0, 0]
    assert all(row["events"] > 4 for row in rows if row["how"] == "stream_sync")


def test_bench_hostile_times_every_hostile_input_and_the_scrubber() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_hostile.py"), "--quick", "--json"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    report = json.loads(result.stdout)
    assert len(report["hostile"]) == 9
    assert all(row["us"] > 0 for row in report["hostile"])
    classified = [row for row in report["scrubber"] if "without_scrub_us" in row]
    assert len(classified) == 3


def test_bench_wire_runs_every_path_over_every_event() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_wire.py"), "--events", "300", "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    report = json.loads(result.stdout)
    assert report["events"] == 300
    assert len(report["rows"]) == 9  # each row asserted it saw every event

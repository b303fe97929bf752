"""The benchmarks still run against the current code (mypy checks them too).

Speed is not asserted here (that is what the benchmarks print); only that each measured
path runs and handles every line of a small stream, so a refactor cannot leave one broken.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


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


def test_benchmarks_run_quick_makes_the_report_with_every_goal(tmp_path: Path) -> None:
    """`benchmarks/run --quick`: every table runs and the report names each goal (its
    figures are noise here, and no goal is asserted)."""
    out = tmp_path / "report.md"
    subprocess.run(
        [sys.executable, str(BENCHMARKS / "run.py"), "--quick", "--out", str(out)],
        capture_output=True, text=True, timeout=900, check=True,
    )  # fmt: skip
    report = out.read_text()
    for goal in ("1. stream", "1. replay", "2. classify, every case", "2. classify, the mix",
                 "3. `recoverable run` wall", "3. `recoverable run` RSS", "4. recovery",
                 "4. futile calls", "3. `recoverable run` CPU",
                 "5. scale"):  # fmt: skip
        assert goal in report
    assert "| 2. classify, right | 13/13 | all | **met** |" in report
    assert "## Accuracy on the breadth corpus" in report


def test_bench_breadth_grades_every_library_on_real_exceptions() -> None:
    """Quick mode's subset: each failure from each SDK is a real exception of that SDK, and
    every library gets a verdict (pydantic-ai none for ollama: it has no model for it)."""
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_breadth.py"), "--quick", "--json"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    report = json.loads(result.stdout)
    raised = {(c["sdk"], c["failure"]): c["raised"].split(".")[0] for c in report["cases"]}
    assert raised[("openai", "quota")] == "openai"
    assert raised[("anthropic", "content filter")] == "anthropic"
    assert raised[("ollama", "model not found")] == "ollama"
    assert len(raised) == 26
    overall = report["accuracy"]["overall"]
    assert overall["ours"] == [26, 26]
    assert overall["pydantic_ai"][1] == 18  # openai and anthropic only
    assert "| **overall** |" in report["markdown"]


def test_bench_stream_runs_every_path_for_every_cli() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_stream.py"), "--quick", "--json"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    report = json.loads(result.stdout)
    assert sorted(report) == ["claude", "codex", "gemini"]
    for cli, r in report.items():
        counts = {key: row["count"] for key, row in r["rows"].items()}
        assert counts["ours_stream"] >= r["lines"] - 1, cli  # every line makes an event
        assert counts["sdk_discarded"] == counts["sdk_kept"] == r["lines"], cli
        # The standard parser alone makes the same events as msgspec.
        assert counts["ours_stream_standard"] == counts["ours_stream"], cli
        assert counts["ours_replay_standard"] == counts["ours_replay"], cli


def test_bench_recovery_counts_every_call_with_the_real_sdks() -> None:
    """A 0.2 s rate-limit window: ours recovers with one extra call on each SDK; a lasting
    quota, auth or context fault costs ours no second call (the SDKs' retries: openai's 2 on
    quota, google-genai's 4)."""
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_recovery.py"), "--quick", "--json"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    report = json.loads(result.stdout)
    ours = [r for r in report["rate_limit"] if r["who"] == "recoverable"]
    assert [(r["sdk"], r["calls"], r["futile"], r["recovered"]) for r in ours] == [
        ("openai", 2, 0, True), ("anthropic", 2, 0, True), ("google-genai", 2, 0, True),
    ]  # fmt: skip
    calls = {(r["sdk"], r["fault"], r["who"].split()[0]): r["calls"] for r in report["futile"]}
    assert {key: n for key, n in calls.items() if key[2] == "recoverable"} == {
        (sdk, fault, "recoverable"): 1
        for sdk in ("openai", "anthropic", "google-genai")
        for fault in ("insufficient_quota", "unauthorized", "context_too_long")
    }
    assert calls[("openai", "insufficient_quota", "openai")] == 3
    assert calls[("google-genai", "insufficient_quota", "google-genai")] == 5


def test_bench_scale_draws_every_quick_curve() -> None:
    """The quick curves (no PNG, no agents.run one): every point measured; the 429 found
    through its wrappers up to the walk's cap, and not past it."""
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_scale.py"), "--quick", "--json"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    report = json.loads(result.stdout)
    assert [(p["x"], p["found"]) for p in report["classify_vs_depth"]] == [
        (0, True), (1, True), (4, True), (8, False), (16, False),
    ]  # fmt: skip
    assert [p["x"] for p in report["classify_vs_message"]] == [100, 10_000, 100_000]
    assert [p["x"] for p in report["parse_vs_size"]] == [64, 512]
    assert [p["x"] for p in report["fake_provider_vs_clients"]] == [1, 10]
    assert all(p["us"] > 0 for p in report["classify_vs_depth"] + report["classify_vs_message"])
    assert all(p["mb_per_s"] > 0 for p in report["parse_vs_size"])
    assert all(p["requests_per_s"] > 0 for p in report["fake_provider_vs_clients"])
    assert "runs_vs_concurrency" not in report and "pngs" not in report

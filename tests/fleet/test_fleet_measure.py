"""The fleet measurement, small: 8 worker processes, 160 calls, one key at 20 requests/s.

Counts, not times: every call completes, sharing cooldowns cuts the 429s at least tenfold,
and with half the workers killed and restarted mid-run the cooldowns and the budgets hold
(each request the fake received was counted by a budget).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_fleet.py"


def test_shared_cooldowns_cut_a_fleets_429s_tenfold_and_survive_kills() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--calls", "160", "--workers", "8", "--rate", "20",
         "--runs", "local,shared,shared-kill", "--json"],
        capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    local, shared, killed = json.loads(result.stdout)["rows"]
    assert [(r["completed"], r["calls"]) for r in (local, shared, killed)] == [(160, 160)] * 3
    assert local["rate_limited"] >= 10 * max(1, shared["rate_limited"]), (local, shared)
    assert local["rate_limited"] >= 10 * max(1, killed["rate_limited"]), (local, killed)
    assert killed["killed"] == 4
    # Every request a shared worker sent was claimed from its call's budget first; a worker
    # killed between its claim and its request leaves a claim without a request.
    assert shared["budget_attempts"] == shared["requests"]
    assert killed["requests"] <= killed["budget_attempts"] <= killed["requests"] + 4


def test_bench_cooldowns_times_every_store() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH.parent / "bench_cooldowns.py"), "--quick", "--json"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    rows = json.loads(result.stdout)["us_per_call"]
    assert len(rows) == 17  # sync and async, every store
    assert all(us > 0 for us in rows.values())

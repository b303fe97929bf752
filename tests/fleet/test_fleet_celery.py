"""The fleet through real Celery workers, small: 8 worker processes (`--pool=solo`, a real
redis-server as broker), 120 tasks against one key at 10 requests/s (the benchmark: 400 at
20); then the shared run
again with half the workers killed (SIGKILL) mid-run and started again.

Counts, not times: every call completes, shared cooldowns (`recoverable_cooldowns=`) cut the
429s at least tenfold, and with workers killed the cooldowns and the budgets hold (each
request the fake received was claimed from its task's budget first).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_fleet_celery.py"


def test_celery_workers_sharing_cooldowns_get_a_tenth_of_the_429s_and_survive_kills() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--calls", "120", "--workers", "8", "--rate", "10",
         "--timeout", "60", "--json"],
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    local, shared, killed = json.loads(result.stdout)["rows"]
    assert [(r["completed"], r["calls"]) for r in (local, shared, killed)] == [(120, 120)] * 3
    assert (local["budget_attempts"], local["resent"], shared["resent"]) == (None, 0, 0)
    assert local["rate_limited"] >= 10 * max(1, shared["rate_limited"]), (local, shared)
    assert local["rate_limited"] >= 10 * max(1, killed["rate_limited"]), (local, killed)
    assert killed["killed"] == 4
    # A killed worker's task comes back (acks_late): at most one per killed worker is lost
    # by the broker and sent again by the run.
    assert killed["resent"] <= 4
    # Every request was claimed from its task's budget first, across redeliveries; a worker
    # killed between its claim and its request leaves a claim without a request.
    assert shared["budget_attempts"] == shared["requests"]
    assert killed["requests"] <= killed["budget_attempts"] <= killed["requests"] + 4

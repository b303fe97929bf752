"""`recoverable exec -- true` over a bare Python start, and the instructions each command's own
process runs: the load-proof figures of bench_run.py.

CPU time is user + sys of the process and all it waited for (`os.wait4`), in rounds that pair
`python -c pass` with `recoverable exec -- true`; the instructions are callgrind's count of the
Python process alone (its children, `true` or the stand-in CLI, are not traced), one run each
after a warm run (its .pyc files written): repeatable to well under 1%.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path
from typing import Any

from _run_procs import cpu_ms, instructions, python_env, spawn, throwaway_home

VENV_BIN = Path(sys.executable).parent
RECOVERABLE = str(VENV_BIN / "recoverable")
# Issue 27: `recoverable exec -- true` <= a bare Python start + 15 ms (CPU).
TARGET_EXEC_MS = 15.0


def exec_rounds(root: str, runs: int) -> dict[str, Any]:
    """`runs` interleaved rounds (after a warm-up) of `python -c pass` and `recoverable exec --
    true`: each one's median wall and CPU ms, and the median over rounds of exec - python."""
    steps = {
        "python": [sys.executable, "-c", "pass"],
        "exec": [RECOVERABLE, "exec", "--", "true"],
    }
    walls: dict[str, list[float]] = {name: [] for name in steps}
    cpus: dict[str, list[float]] = {name: [] for name in steps}
    for index in range(runs + 1):
        for name, argv in steps.items():
            wall, _, usage, _, _ = spawn(argv, python_env(), root)
            if index:  # round 0 warms the page cache and writes the .pyc files
                walls[name].append(wall)
                cpus[name].append(cpu_ms(usage))
    paired = [e - p for e, p in zip(cpus["exec"], cpus["python"], strict=True)]
    return {
        "runs": runs,
        "python_cpu_ms": statistics.median(cpus["python"]),
        "exec_cpu_ms": statistics.median(cpus["exec"]),
        "python_wall_ms": statistics.median(walls["python"]),
        "exec_wall_ms": statistics.median(walls["exec"]),
        "added_cpu_ms": statistics.median(paired),
        "added_wall_ms": statistics.median(
            e - p for e, p in zip(walls["exec"], walls["python"], strict=True)
        ),
    }


def instruction_counts(stand_in_bin: Path | None, cli: str, root: str) -> dict[str, int | None]:
    """The instructions of `python -c pass`, `recoverable exec -- true` and, with a stand-in
    CLI in `stand_in_bin`, `recoverable run` over it without and with `--fake` (None without
    valgrind)."""
    commands = {
        "python": [sys.executable, "-c", "pass"],
        "exec": [sys.executable, RECOVERABLE, "exec", "--", "true"],
    }
    if stand_in_bin is not None:
        run = [sys.executable, RECOVERABLE, "run", "Say hello", "--cli", cli]
        commands["run"] = run
        commands["run_fake"] = [*run, "--fake"]
    counts: dict[str, int | None] = {}
    for name, argv in commands.items():
        with throwaway_home(root) as cwd:
            env = python_env()
            if stand_in_bin is not None:
                env["PATH"] = f"{stand_in_bin}{os.pathsep}{env.get('PATH', '')}"
            env["TMPDIR"] = cwd
            spawn(argv, env, cwd)  # warm: its .pyc files written, as a user's machine has them
            counts[name] = instructions(argv, env, cwd)
    return counts


def print_exec(data: dict[str, Any]) -> None:
    """The exec table and its goal's verdict."""
    print("## `recoverable exec -- true`, an agent's tool call\n")
    print("| path | median CPU ms | median wall ms |\n|---|---:|---:|")
    print(f"| `python -c pass` | {data['python_cpu_ms']:.1f} | {data['python_wall_ms']:.1f} |")
    print(
        f"| `recoverable exec -- true` | {data['exec_cpu_ms']:.1f} | {data['exec_wall_ms']:.1f} |"
    )
    added = data["added_cpu_ms"]
    verdict = "ok" if added <= TARGET_EXEC_MS else "OVER"
    print(
        f"\nIssue 27, over a bare Python start, median of {data['runs']} paired rounds: CPU "
        f"{added:+.1f} ms {verdict} (<= +{TARGET_EXEC_MS:.0f} ms), "
        f"wall {data['added_wall_ms']:+.1f} ms.\n"
    )

"""Running a command with every read and wait bounded (`run_bounded`): the I/O edge under
`recoverable exec` and the fix runner."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from recoverable.tools._run_process import run_bounded

from ..support.runner import alive


def test_stdout_is_kept_up_to_its_cap_and_the_rest_counted() -> None:
    done = run_bounded(["head", "-c", "50000000", "/dev/zero"], max_stdout=1024 * 1024)
    assert (done.returncode, len(done.stdout), done.stdout_dropped) == (
        0, 1024 * 1024, 50_000_000 - 1024 * 1024,
    )  # fmt: skip


def test_stderr_keeps_its_tail() -> None:
    done = run_bounded(["sh", "-c", "seq 100000 >&2; echo last >&2; exit 3"])
    assert done.returncode == 3
    assert done.stderr_tail.endswith("100000\nlast\n")
    assert len(done.stderr_tail) == 8192


def test_a_command_that_closes_its_pipes_and_runs_on_meets_its_deadline() -> None:
    started = time.monotonic()
    done = run_bounded(["sh", "-c", "exec >&- 2>&-; sleep 30"], timeout=0.5)
    assert (done.returncode, done.timed_out) == (None, True)
    assert time.monotonic() - started < 10


def test_a_child_left_holding_stdout_is_stopped_after_a_short_drain(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    done = run_bounded(["sh", "-c", f"sleep 30 & echo $! > {pid_file}; echo hi"], timeout=20)
    assert (done.returncode, done.stdout, done.timed_out) == (0, b"hi\n", False)
    assert done.duration_ms < 15_000
    assert not alive(int(pid_file.read_text()))


def test_a_deadline_stops_the_whole_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    done = run_bounded(["sh", "-c", f"sleep 30 & echo $! > {pid_file}; sleep 30"], timeout=0.5)
    assert done.timed_out
    assert not alive(int(pid_file.read_text()))


def test_a_spawn_failure_raises_its_os_error() -> None:
    with pytest.raises(FileNotFoundError):
        run_bounded(["no-such-program-for-recoverable"])


def test_a_sigterm_while_a_fix_runs_stops_its_group_then_ends_this_process(
    tmp_path: Path,
) -> None:
    import os
    import signal
    import subprocess
    import sys

    import recoverable as rc

    script = (
        "import recoverable as rc, sys\n"
        "rc.tools.run_fix(sys.argv[1])\n"
        "print('not reached: the signal ends the process once the fix is stopped')\n"
    )
    source = str(Path(rc.__file__).resolve().parent.parent)
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)  # an inherited "ignore" is kept
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", script, "sleep 61"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": source},
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
    deadline = time.monotonic() + 30
    fix = None
    while fix is None and time.monotonic() < deadline:  # the fix's own group: its sleep
        fix = next((int(pid) for pid in os.listdir("/proc") if pid.isdigit()
                    and _parent(pid) == process.pid), None)  # fmt: skip
        time.sleep(0.05)
    assert fix is not None
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGTERM  # the exit the supervisor asked for
    assert out == ""
    assert not alive(fix)


def _parent(pid: str) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None

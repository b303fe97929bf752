"""What the `recoverable run` and `recoverable exec` benchmarks share: processes run to their
end and measured (wall, CPU of the whole tree, peak RSS), a fake provider served by a process of
its own, throwaway homes that no process may outlive, and instruction counts under callgrind.

Every process started is waited for and its process group killed.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REPLY = "Hello from FakeProvider."
TIMEOUT_S = 90.0


@dataclass
class Sample:
    wall_ms: float
    cli_rss_mb: float | None = None  # largest single process of the CLI's tree (wait4)
    python_rss_mb: float | None = None  # peak RSS of the Python process around the CLI
    cpu_ms: float | None = None  # user + sys of the process and all it waited for: load-proof


def cpu_ms(usage: resource.struct_rusage) -> float:
    """CPU time, user + sys, in ms: what the work costs whatever else runs on the machine
    (wall time grows with the load, CPU time barely)."""
    return (usage.ru_utime + usage.ru_stime) * 1000


# -- processes ------------------------------------------------------------------------------


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def leftovers(marker: str) -> list[int]:
    """Pids whose environment names `marker` (a run's home): kill them, return them."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return found


def vm_hwm_kb(pid: int) -> int | None:
    """The peak RSS the kernel has seen for `pid` so far (VmHWM), or None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return None


def spawn(
    argv: list[str], env: dict[str, str], cwd: str, *, watch_hwm: bool = False
) -> tuple[float, int, resource.struct_rusage, int | None, str]:
    """Run `argv` in its own session, wait with wait4: (ms, exit code, rusage, hwm kb, stdout).

    `watch_hwm` samples the process's own VmHWM every 2 ms from a thread (the main thread
    blocks in wait4, so the exit is seen at once and the timing is not quantised).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        done = threading.Event()
        peak = [0]

        def sample() -> None:
            while not done.wait(0.002):
                kb = vm_hwm_kb(process.pid)
                if kb is not None:
                    peak[0] = max(peak[0], kb)

        sampler = threading.Thread(target=sample, daemon=True) if watch_hwm else None
        if sampler is not None:
            sampler.start()
        watchdog = threading.Timer(TIMEOUT_S, kill_group, (process.pid,))
        watchdog.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            wall_ms = (time.perf_counter() - start) * 1000
            watchdog.cancel()
            done.set()
            kill_group(process.pid)  # anything it left in its group
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if sampler is not None:
            sampler.join()
        out.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        if process.returncode != 0:
            err.seek(0)
            tail = err.read().decode("utf-8", "replace")[-2000:]
            raise RuntimeError(f"{argv[:3]} exited {process.returncode}: {tail}")
    return wall_ms, process.returncode, usage, (peak[0] or None) if watch_hwm else None, stdout


@contextlib.contextmanager
def fake_server() -> Iterator[types.SimpleNamespace]:
    """A FakeProvider in its own process (`python -m recoverable fake-provider`)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "recoverable", "fake-provider", "--reply", REPLY],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the fake provider did not start: {url!r}")
        yield types.SimpleNamespace(url=url, openai_url=url + "/v1")
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        kill_group(process.pid)


@contextlib.contextmanager
def throwaway_home(root: str) -> Iterator[str]:
    home = tempfile.mkdtemp(prefix="home-", dir=root)
    try:
        yield home
    finally:
        left = leftovers(home)
        shutil.rmtree(home, ignore_errors=True)
        if left:
            raise RuntimeError(f"processes left behind by a run: {left}")


def python_env() -> dict[str, str]:
    """This environment, but letting Python write .pyc files, as a user's machine has them."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def instructions(argv: list[str], env: dict[str, str], cwd: str) -> int | None:
    """The instructions the process `argv` itself runs (not its children), counted by callgrind
    with the hash seed fixed: repeatable to a fraction of a percent whatever the machine's load;
    None without valgrind. Run once warm, so that its .pyc files exist."""
    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
            env={**env, "PYTHONHASHSEED": "0"},
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT_S * 4,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{argv[:3]} under callgrind exited {done.returncode}")
        found = re.search(r"^(?:summary|totals):\s*(\d+)", Path(out).read_text(), re.M)
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class Target:
    """A CLI to run: the real one, or a stand-in that prints its captured output."""

    cli: str
    bin_dir: Path  # holds an executable named `cli`; first on PATH for (c)
    real: bool

    @property
    def executable(self) -> str:
        return str(self.bin_dir / self.cli)


def stand_in(cli: str, root: str) -> Target:
    """`cli` as a shell script that prints tests/data/cli/<cli>/text.stdout: no Node start."""
    bin_dir = Path(root) / "stand-in"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / cli
    script.write_text(f"#!/bin/sh\nexec cat '{REPO / 'tests/data/cli' / cli / 'text.stdout'}'\n")
    script.chmod(0o755)
    return Target(cli, bin_dir, real=False)

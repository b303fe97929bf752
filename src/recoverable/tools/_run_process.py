"""Running a command to its end, with every read and wait bounded: the I/O edge under
`recoverable exec` and the fix runner.

No shell: argv as given. The command gets its own process group, so every way a run ends
stops everything it started (SIGTERM, a grace period, SIGKILL): a deadline, a cancel, a
SIGTERM or SIGHUP to this process (a supervisor's stop, a closed terminal), and its normal
end too (a background job that closed its pipes does not outlive it). Memory is bounded
whatever it prints: the first `max_stdout` bytes of stdout are kept (the rest counted), and
the last STDERR_TAIL_CHARS of stderr (all of it may also be copied through as it comes).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal as signals
import subprocess
import threading
import time
from collections import deque

from .._core.processes import STDERR_TAIL_CHARS

# Not `typing.TYPE_CHECKING`: this module is on the path of `recoverable exec`, which imports
# neither typing nor dataclasses (~10 ms of a ~25 ms command) unless a command fails.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import IO

__all__ = ["TERMINATING", "Finished", "Terminated", "run_bounded", "terminations_raise"]

TERMINATING = (signals.SIGTERM, signals.SIGHUP)
"""The signals a supervisor stops a process with: docker stop, systemd, timeout(1), a closed
SSH session."""

_CHUNK = 64 * 1024
_TICK_S = 0.5
_GRACE_S = 2.0  # between SIGTERM and SIGKILL
_DRAIN_S = 2.0  # reading on after the command exited, while something it started holds a pipe


class Finished:
    """How a command ended, and what it printed (bounded). A plain slotted class, read-only by
    convention, not a dataclass: it is on the path of `recoverable exec`."""

    __slots__ = (
        "duration_ms",
        "returncode",
        "stderr_tail",
        "stdout",
        "stdout_dropped",
        "timed_out",
    )

    def __init__(  # noqa: PLR0913, PLR0917 -- one per field, positional as before
        self,
        returncode: int | None,
        stdout: bytes,
        stdout_dropped: int,
        stderr_tail: str,
        duration_ms: int,
        timed_out: bool = False,
    ) -> None:
        self.returncode = returncode
        """As `subprocess` reports it (minus the signal for a signal death); None when we
        stopped it at its deadline."""
        self.stdout = stdout
        """The start of its stdout (at most `max_stdout` bytes)."""
        self.stdout_dropped = stdout_dropped
        """How many bytes of stdout were printed past `max_stdout` and not kept."""
        self.stderr_tail = stderr_tail
        """The end of its stderr (the last STDERR_TAIL_CHARS characters)."""
        self.duration_ms = duration_ms
        """From the spawn to the end, in ms."""
        self.timed_out = timed_out
        """Whether it was stopped at its deadline."""

    def __repr__(self) -> str:
        return (
            f"Finished(returncode={self.returncode!r}, stdout=<{len(self.stdout)} bytes>, "
            f"stdout_dropped={self.stdout_dropped}, duration_ms={self.duration_ms}, "
            f"timed_out={self.timed_out})"
        )


class Terminated(BaseException):
    """A SIGTERM or SIGHUP reached this process while a command ran (its group is stopped
    first). A BaseException, as KeyboardInterrupt: nothing retries it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        """The signal's number."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def terminations_raise() -> Iterator[bool]:
    """While inside, SIGTERM and SIGHUP raise `Terminated` where they would have ended the
    process at once (the main thread, the signal's default handler): what the process started
    can then be stopped. Yields whether it installed a handler (a program's own handlers, and
    other threads, are left as they are)."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    mine = [sig for sig in TERMINATING if signals.getsignal(sig) is signals.SIG_DFL]
    for sig in mine:
        signals.signal(sig, _raise_terminated)
    try:
        yield bool(mine)
    finally:
        for sig in mine:
            signals.signal(sig, signals.SIG_DFL)


def run_bounded(
    argv: Sequence[str],
    *,
    timeout: float | None = None,
    max_stdout: int = 8 * 1024 * 1024,
    stderr_copy: IO[bytes] | None = None,
    stdin: int | None = None,
) -> Finished:
    """Run `argv` to its end (or its deadline). A spawn failure raises its OSError; a
    KeyboardInterrupt or a `Terminated` stops the command's group and is raised again. Where
    the signal would have ended this process at once, it still does, once the group is
    stopped (the supervisor gets the exit it asked for)."""
    installed = False
    try:
        with terminations_raise() as installed:
            return _run(argv, timeout, max_stdout, stderr_copy, stdin)
    except Terminated as end:
        if installed:  # the default disposition is back: the signal now does what it would have
            os.kill(os.getpid(), end.signum)
        raise


def _run(
    argv: Sequence[str],
    timeout: float | None,
    max_stdout: int,
    stderr_copy: IO[bytes] | None,
    stdin: int | None,
) -> Finished:
    started = time.monotonic()
    process = subprocess.Popen(
        list(argv),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    reader = _Reader(max_stdout, stderr_copy)
    deadline = None if timeout is None else started + timeout
    try:
        # Both pipes closed is not the end: the command may have closed them and run on.
        timed_out = reader.read(process, deadline) or not _exited_by(process, deadline)
    except BaseException:
        _stop_group(process)
        raise
    finally:
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    if timed_out:
        _stop_group(process)
    returncode = process.wait()
    _stop_leftovers(process.pid)
    return Finished(
        None if timed_out else returncode,
        bytes(reader.stdout),
        reader.dropped,
        b"".join(reader.stderr).decode("utf-8", "replace")[-STDERR_TAIL_CHARS:],
        round((time.monotonic() - started) * 1000),
        timed_out,
    )


class _Reader:
    """Both pipes of one command, read until EOF or a deadline: bounded memory."""

    def __init__(self, max_stdout: int, stderr_copy: IO[bytes] | None) -> None:
        self.max_stdout = max_stdout
        self.stdout = bytearray()
        self.dropped = 0
        self.stderr: deque[bytes] = deque()
        self.stderr_size = 0
        self.stderr_copy = stderr_copy

    def read(self, process: subprocess.Popen[bytes], deadline: float | None) -> bool:
        """Read until both pipes close; True when the deadline passed first."""
        assert process.stdout is not None
        assert process.stderr is not None
        out, err = process.stdout.fileno(), process.stderr.fileno()
        drain_until: float | None = None
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            selector.register(err, selectors.EVENT_READ)
            while selector.get_map():
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    return True
                if drain_until is None and process.poll() is not None:
                    drain_until = now + _DRAIN_S
                if drain_until is not None and now >= drain_until:
                    _signal_group(process.pid, signals.SIGKILL)  # what it left holding a pipe
                    return False
                waits = [_TICK_S, *(t - now for t in (deadline, drain_until) if t is not None)]
                for key, _ in selector.select(max(min(waits), 0)):
                    chunk = os.read(key.fd, _CHUNK)
                    if not chunk:
                        selector.unregister(key.fd)
                    elif key.fd == out:
                        self._stdout(chunk)
                    else:
                        self._stderr(chunk)
        return False

    def _stdout(self, chunk: bytes) -> None:
        room = self.max_stdout - len(self.stdout)
        self.stdout += chunk[: max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)

    def _stderr(self, chunk: bytes) -> None:
        if self.stderr_copy is not None:
            with contextlib.suppress(OSError, ValueError):
                self.stderr_copy.write(chunk)
                self.stderr_copy.flush()
        self.stderr.append(chunk)
        self.stderr_size += len(chunk)
        while (
            len(self.stderr) > 1 and self.stderr_size - len(self.stderr[0]) > 4 * STDERR_TAIL_CHARS
        ):
            self.stderr_size -= len(self.stderr.popleft())


def _exited_by(process: subprocess.Popen[bytes], deadline: float | None) -> bool:
    """Wait for the command until `deadline` (None: as long as it takes); whether it exited."""
    try:
        process.wait(None if deadline is None else max(deadline - time.monotonic(), 0))
    except subprocess.TimeoutExpired:
        return False
    return True


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the command's group, a grace period, then SIGKILL; waited for."""
    _signal_group(process.pid, signals.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(_GRACE_S)
    _signal_group(process.pid, signals.SIGKILL)
    process.wait()
    _stop_leftovers(process.pid)


def _stop_leftovers(pgid: int) -> None:
    """What the command left running in its group after it ended (a background job that
    closed its pipes): SIGTERM, a grace period while any is alive, then SIGKILL."""
    if not _group_alive(pgid):
        return
    _signal_group(pgid, signals.SIGTERM)
    until = time.monotonic() + _GRACE_S
    while _group_alive(pgid) and time.monotonic() < until:
        time.sleep(0.02)
    _signal_group(pgid, signals.SIGKILL)


def _group_alive(pgid: int) -> bool:
    """Whether a process of group `pgid` runs: not only exists, since an orphan's zombie stays
    in the group until some init reaps it (/proc says which, where there is one)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True  # no /proc: what exists may be alive
    return any(entry.isdigit() and _live_member(entry, pgid) for entry in entries)


def _live_member(pid: str, pgid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return False
    # After the command's name: state, ppid, pgrp.
    return len(fields) > 2 and fields[0] not in (b"Z", b"X") and fields[2] == str(pgid).encode()

"""The CLI's process as both runners hold it, from its spawn to its end. Nothing here waits:
each runner waits its own way (selectors; asyncio's add_reader) on `Child.watched()`.

The CLI gets its own session and process group (a stop reaches the tools it starts), stdin
closed, stdout and stderr piped; we read them without blocking. On Linux a pidfd shows its
exit (the pipes may outlive it: a process it started can hold them), and a parent-death
signal kills it if the thread that started it dies (our caller was killed).

Its end (`close`): SIGKILL to the group for whatever the CLI left running, then to any process
that still holds the write end of our pipes (one that left the group with `setsid`: the group
signal misses it; only what the CLI started can hold them), then our ends are closed. A
process that left the group and let go of our pipes cannot be found from here: it is left.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal as signals
import subprocess
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from .._core.events import Event
from ._options import RunOptions
from ._process import CHUNK, RunContext, StderrTail, environment, signal_group

if TYPE_CHECKING:
    from .._core.cancel import CancelSignal

__all__ = ["Child", "kill_pipe_holders"]

EXIT_POLL_S = 0.02  # how often to look for the exit with no pidfd and no pipe to wait on
_EOF_READS = 16  # reads of a pipe, at the end, to see whether anyone still writes to it
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


class Child:
    """The CLI's process, its pipes (ours: non-blocking) and its exit fd (a pidfd; None where
    there is none)."""

    __slots__ = ("exit_fd", "files", "open_pipes", "process")

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        assert process.stdout is not None
        assert process.stderr is not None
        self.files: list[IO[bytes]] = [process.stdout, process.stderr]
        """Our ends of stdout and stderr: open until `close`."""
        self.open_pipes: dict[int, IO[bytes]] = {file.fileno(): file for file in self.files}
        """The pipes not at EOF yet, by fd (kept open after EOF: an fd is never reused while a
        selector may still know it)."""
        for fd in self.open_pipes:
            os.set_blocking(fd, False)
        self.exit_fd = _pidfd(process.pid)

    @classmethod
    def spawn(cls, argv: list[str], options: RunOptions, *, parent_death: bool) -> Child:
        """Start `argv` (OSError when it cannot start). `parent_death`: kill the CLI when the
        calling thread dies, where Linux can; only for a thread that outlives the run."""
        preexec = _die_with_parent() if parent_death else None
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=options.cwd,
            env=environment(options),
            start_new_session=True,
            # Safe with threads as preexec_fns go: it calls prctl and getppid, nothing that
            # takes a lock another thread may have held at the fork.
            preexec_fn=preexec,  # noqa: PLW1509
        )
        return cls(process)

    def exited(self) -> bool:
        """Whether the CLI has exited (and was reaped: its `returncode` is known)."""
        return self.process.poll() is not None

    @property
    def returncode(self) -> int:
        """How it ended, as subprocess says; SIGKILL when it could not be reaped even after
        that signal (uninterruptible I/O): we sent it, it is what will end it."""
        code = self.process.returncode
        return code if code is not None else -signals.SIGKILL

    def watched(self) -> list[int]:
        """The fds to wait on: the pipes not at EOF, and the exit fd until the exit."""
        fds = list(self.open_pipes)
        if self.exit_fd is not None and self.process.returncode is None:
            fds.append(self.exit_fd)
        return fds

    def next_wait(
        self, run: RunContext[Any], cancel: CancelSignal | None, tick: float
    ) -> float | None:
        """How long to wait on `watched()`; None: stop reading (why: `run.stopped_by`, or the
        CLI has exited and its pipes are at EOF or drained)."""
        if cancel is not None and cancel.is_set():
            run.record_cancel()
            return None
        if run.stopped_by is not None:  # the guardrail
            return None
        exited = self.exited()
        if exited and not self.open_pipes:
            return None
        if not exited and self.exit_fd is None and not self.open_pipes:
            tick = min(tick, EXIT_POLL_S)  # nothing to wake us at the exit: look often
        return run.next_wait(exited=exited, tick=tick)

    def read(self, fd: int, run: RunContext[Any]) -> list[Event]:
        """`fd` is readable: stdout's events (at EOF its last line's), stderr into its tail."""
        file = self.open_pipes.get(fd)
        if file is None:
            return []  # the exit fd: `next_wait` sees the exit
        try:
            chunk = os.read(fd, CHUNK)
        except BlockingIOError:
            return []
        if not chunk:
            del self.open_pipes[fd]
        if file is self.files[0]:
            return run.chunk_events(chunk)
        return run.stderr_events(chunk) if chunk else []

    def wait(self, seconds: float) -> bool:
        """Block until the CLI exits, at most `seconds`; whether it did (the sync runner's)."""
        try:
            self.process.wait(seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def close(self, stderr: StderrTail) -> None:
        """The end of the run, once the CLI is gone (or SIGKILL could not reap it): whatever
        is left of its group, and whatever still holds our pipes, is killed; what stderr still
        holds goes to `stderr`; our ends are closed. Idempotent."""
        signal_group(self.process.pid, signals.SIGKILL)
        err = self.files[1]
        held = [
            fd
            for fd, file in self.open_pipes.items()
            if not _at_eof(fd, stderr if file is err else None)
        ]
        if held:
            kill_pipe_holders(held)
        self.open_pipes.clear()
        for file in self.files:
            file.close()
        if self.exit_fd is not None:
            os.close(self.exit_fd)
            self.exit_fd = None


def _at_eof(fd: int, tail: StderrTail | None) -> bool:
    """Whether nobody holds this pipe's write end any more. What it still had goes to `tail`
    (stderr's); stdout's, after we stopped reading it, is dropped."""
    for _ in range(_EOF_READS):
        try:
            chunk = os.read(fd, CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            return True
        if not chunk:
            return True
        if tail is not None:
            tail.add(chunk)
    return False  # still writing: someone holds it


def _pidfd(pid: int) -> int | None:
    """A pidfd of `pid` (readable once it exits), where the OS has them (Linux 5.3+)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def kill_pipe_holders(fds: list[int]) -> None:
    """SIGKILL every process but ours that holds the write end of one of these pipes (Linux,
    through /proc; nothing elsewhere). Only the CLI and what it started inherited it: a
    process that left the group with `setsid` is found by it too."""
    try:
        pipes = {f"pipe:[{os.fstat(fd).st_ino}]" for fd in fds}
        entries = os.listdir("/proc")
    except OSError:
        return
    ours = str(os.getpid())
    for entry in entries:
        if entry.isdigit() and entry != ours and _holds_write_end(entry, pipes):
            _kill(int(entry), pipes)


def _holds_write_end(pid: str, pipes: set[str]) -> bool:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False  # gone, or not ours to look at (then not one the CLI started)
    for fd in fds:
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{fd}") in pipes and _write_only(pid, fd):
                return True
    return False


def _write_only(pid: str, fd: str) -> bool:
    """Whether that fd is open for writing only (the write end of a pipe)."""
    with open(f"/proc/{pid}/fdinfo/{fd}") as info:
        for line in info:
            if line.startswith("flags:"):
                return int(line.split()[1], 8) & os.O_ACCMODE == os.O_WRONLY
    return False


def _kill(pid: int, pipes: set[str]) -> None:
    """SIGKILL `pid` through a pidfd, once it is sure the pid is still that process."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        with contextlib.suppress(OSError):
            os.kill(pid, signals.SIGKILL)
        return
    try:
        if _holds_write_end(str(pid), pipes):  # not a new process with a reused pid
            signals.pidfd_send_signal(pidfd, signals.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(pidfd)


# --- the parent-death signal -------------------------------------------------------------------


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's prctl, on Linux (ctypes is imported here, at the first spawn: ~3 ms)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError, ImportError):
        return None
    return prctl


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn that has the kernel SIGKILL the CLI when the thread that spawns it dies;
    None where there is no prctl. (Any preexec_fn makes subprocess fork instead of vfork:
    ~2 ms for a small Python, more for a big one.)"""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def die_with_parent() -> None:  # in the child, between fork and exec
        prctl(_PR_SET_PDEATHSIG, signals.SIGKILL)
        if os.getppid() != parent:  # the parent died before the signal was set
            os._exit(1)

    return die_with_parent

"""A server process of a test's own (the MCP example over HTTP, the redis-server): started,
waited for until it answers, and always stopped."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any


def listening(port: int) -> bool:
    """Whether something accepts a connection on 127.0.0.1:`port` now."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
        return True
    return False


@contextlib.contextmanager
def server_process(
    argv: list[str],
    answers: Callable[[], bool],
    what: str,
    *,
    start_s: float,
    stop_s: float,
    poll_s: float = 0.05,
    **popen: Any,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run `argv` (its stdio on /dev/null) until `answers()`; yields it; always stops it.

    Raises if it exits before it answers or does not answer within `start_s`; on exit it is
    terminated, and killed if it is still there after `stop_s`.
    """
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        **popen,
    )
    try:
        deadline = time.monotonic() + start_s
        while not answers():
            if process.poll() is not None:
                raise RuntimeError(f"{what} exited at start")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not answer within {start_s:g} s")
            time.sleep(poll_s)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(stop_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)

"""A real redis-server on loopback for the tests that need one (the fleet's stores, Celery's
broker and result backend): Debian's binary, a free port, no persistence, always stopped."""

from __future__ import annotations

import functools
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .processes import server_process
from .providers import free_port


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """Debian's redis-server on 127.0.0.1 and a free port, no persistence; always stopped."""
    exe = shutil.which("redis-server")
    assert exe is not None, "redis-server is missing: scripts/test installs it (apt)"
    port = free_port()
    argv = [exe, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
            "--dir", str(folder), "--protected-mode", "yes"]  # fmt: skip
    with server_process(
        argv, functools.partial(_pongs, port), "redis-server", start_s=10, stop_s=10, poll_s=0.02
    ):
        yield f"redis://127.0.0.1:{port}/0"


def _pongs(port: int) -> bool:
    """Whether a redis-server on `port` answers PING now."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False

"""What the tests that call a provider (real or fake) share: catching what a call raises, and
a loopback port with nothing listening."""

from __future__ import annotations

import socket
from collections.abc import Callable


def raised(call: Callable[[], object]) -> BaseException:
    """The exception `call` raises; fails the test when it raises nothing."""
    try:
        call()
    except Exception as exc:
        return exc
    raise AssertionError(f"{call!r} raised nothing")


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released, so a connect is refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port

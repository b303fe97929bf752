"""A real uvicorn server on 127.0.0.1 in a thread of the test process, started and always
stopped by a context manager (the port is chosen by the kernel, the socket bound first): the
wire's apps and the MCP server's streamable-HTTP app alike."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

import uvicorn


@contextlib.contextmanager
def serving(app: Any, *, lifespan: Literal["on", "off"] = "off") -> Iterator[str]:
    """Serve `app`; yields its base URL; stops the server (and its streams) on exit.

    `lifespan="on"` for an app that starts something in it (the MCP app's session manager).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app, log_level="warning", lifespan=lifespan, timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"

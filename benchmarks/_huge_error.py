"""A server on 127.0.0.1 that answers every GET with a huge 429 body, written 64 KiB at a time
as a misbehaving proxy would, and records how much of it it could send before the client hung
up. `bench_client_memory.py` measures with it; tests/wire/test_client_bounded.py asserts with
it (the tests import it from here: the benchmarks import nothing of the tests)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PIECE_BYTES = 64 * 1024


@contextmanager
def huge_error(
    mib: int, piece: bytes = b"x" * PIECE_BYTES, headers: Mapping[str, str] | None = None
) -> Iterator[tuple[str, list[int]]]:
    """Serve a 429 that announces `mib` MiB and writes `piece` `mib * 16` times (about 64 KiB
    each), with `headers` (the content type first, `text/plain` unless given). Yields the URL
    and the list of bytes sent, one entry a finished request; stops the server on exit."""
    sent: list[int] = []
    extra = {"content-type": "text/plain", **(headers or {})}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(429)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("content-length", str(mib * 1024 * 1024))
            self.end_headers()
            written = 0
            try:
                for _ in range(mib * 16):
                    self.wfile.write(piece)
                    written += len(piece)
            except OSError:  # the client hung up: what it did not want
                pass
            sent.append(written)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", sent
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

"""The fake provider's HTTP side: a loopback threading TCP server that tracks its connections,
and the handler that reads each request, asks the provider (`Desk`) for its fault or reply, and
writes the answer. Every request that has begun gets an answer.

HTTP/1.1 is read and written by `_head`, as `http.server` did, without its imports; what only
an answer needs (`_render`, `_http`, `urllib.parse`) is imported by the first request.
"""

from __future__ import annotations

import contextlib
import io
import re
import select
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ._framing import Refusal, body_framing, read_body
from ._head import (
    MAX_LINE,
    SERVER,
    header_fields,
    http_date,
    read_header_lines,
    status_line,
    version_number,
)
from ._limits import BACKLOG, Limits

if TYPE_CHECKING:
    import logging
    from urllib.parse import SplitResult

    from ._faults import Fault, Reply
    from ._http import Context, HttpRequest, HttpResponse, Route

__all__ = ["Desk", "Server"]


@dataclass(frozen=True, slots=True)
class Desk:
    """What the server asks of the provider it answers for."""

    limits: Limits
    """What it accepts from its clients."""
    admit: Callable[[HttpRequest, dict[str, str], Route], tuple[int, Fault | None, Reply]]
    """Under the provider's lock: number a request (its query, its route), record it, and
    give it the head fault (None: answered) and the reply."""
    stopping: threading.Event
    """Set while the provider stops: a hanging request lets go."""


class _Log:
    """The `recoverable.testing` logger, `logging` imported only when a message could show.

    While nothing has imported `logging`, nothing has configured a handler or a level, so a
    debug or info message would go nowhere (its defaults show WARNING and above): it is dropped
    without loading `logging` (~5 ms of `recoverable run --fake`). Failures always log."""

    __slots__ = ()

    def debug(self, msg: str, *args: Any) -> None:
        if "logging" in sys.modules:
            _logger().debug(msg, *args, stacklevel=2)

    def info(self, msg: str, *args: Any) -> None:
        if "logging" in sys.modules:
            _logger().info(msg, *args, stacklevel=2)

    def exception(self, msg: str, *args: Any) -> None:
        _logger().exception(msg, *args, stacklevel=2)


def _logger() -> logging.Logger:
    import logging

    return logging.getLogger("recoverable.testing")


log = _Log()


# How long a refused client may go on sending before its connection is closed anyway.
_LINGER = 2.0
_BLANK_LINES = 8  # skipped before a request line, as RFC 9112 2.2 asks (within reason)
# Control characters and spaces in a request target: refused, as the target is logged.
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
# The methods the APIs use; any other gets a 501.
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})


def _split_target(target: str) -> SplitResult | None:
    """A request target split into path and query; None when it is malformed."""
    from urllib.parse import urlsplit

    if _CONTROL.search(target):
        return None
    try:
        return urlsplit(target)
    except ValueError:  # an absolute-form target with a bad host: "http://[::1/v1/models"
        return None


def _rendered(route: Route, ctx: Context, fault: Fault | None, reply: Reply) -> HttpResponse:
    """The response to send; a failure to render becomes a 500 that names it."""
    from . import _render
    from ._http import HttpResponse

    try:
        return _render.render(route, ctx, fault, reply)
    except Exception as exc:  # a bug here must reach the test, not hang the client
        log.exception("FakeProvider could not render an answer")
        return HttpResponse(
            500,
            (("content-type", "text/plain; charset=utf-8"),),
            f"FakeProvider internal error: {exc!r}".encode(),
            close=True,
        )


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """A threading TCP server that tracks its connections so stop() can close them."""

    daemon_threads = True
    allow_reuse_address = True  # as http.server's: a test's port is free again at once
    request_queue_size = BACKLOG

    def __init__(self, address: tuple[str, int], desk: Desk, family: socket.AddressFamily) -> None:
        """Bind `address` for the provider behind `desk` with the given address family."""
        self.address_family = family
        self.desk = desk
        self._conn_lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._workers: set[threading.Thread] = set()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        """Bind, and note the host and port (no reverse DNS lookup, which can stall offline)."""
        super().server_bind()
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve a new connection in a tracked daemon thread."""
        thread = threading.Thread(
            target=self._work, args=(request, client_address), daemon=True, name="FakeProvider-conn"
        )
        with self._conn_lock:
            self._conns.add(request)
            self._workers.add(thread)
        thread.start()

    def _work(self, request: Any, client_address: Any) -> None:
        """Run one connection, then forget it."""
        try:
            self.process_request_thread(request, client_address)
        finally:
            with self._conn_lock:
                self._conns.discard(request)
                self._workers.discard(threading.current_thread())

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Log handler failures; a vanished client is only debug noise."""
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):  # the client went away: expected with faults
            log.debug("connection from %s ended: %r", client_address, exc)
        else:
            log.exception("FakeProvider handler failed for %s", client_address)

    def close_connections(self) -> None:
        """Shut every open connection so blocked handler threads return."""
        with self._conn_lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def join_workers(self, timeout: float) -> None:
        """Wait (bounded) for the connection threads to finish."""
        deadline = time.monotonic() + timeout
        with self._conn_lock:
            workers = list(self._workers)
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))


class _Handler(socketserver.StreamRequestHandler):
    """Reads each request of a connection, asks the provider for a fault or reply, and writes
    the answer; HTTP/1.1 keep-alive, as the SDKs' connection pools expect.

    Every request that has begun gets an answer: a malformed one a plain-text 4xx, then the
    connection closes. Only an idle connection, or one the client closed, ends without one.
    """

    _VERSION = "HTTP/1.1"  # what it speaks, and what a request without a version is read as

    def setup(self) -> None:
        """Set up the connection streams, reads bounded by read_timeout, Nagle disabled."""
        super().setup()
        self.connection.settimeout(self._desk.limits.read_timeout)
        # Real servers disable Nagle; without it small SSE writes stall on delayed ACKs.
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.close_connection = True
        self.requestline = ""
        self.request_version = self._VERSION
        self.command = self.path = ""
        self.fields: list[tuple[str, str]] = []

    @property
    def _desk(self) -> Desk:
        """What the provider this server answers for gives a request."""
        return cast(Server, self.server).desk

    def handle(self) -> None:
        """Answer requests until one closes the connection."""
        self.close_connection = True
        self.handle_one_request()
        while not self.close_connection:
            self.handle_one_request()

    def handle_one_request(self) -> None:
        """Read one request and answer it.

        A request line too long gets a 414, a malformed one a 400, a request not finished
        within read_timeout a 408; an idle connection is closed quietly.
        """
        self.close_connection = True
        self.command, self.requestline = "", ""
        self.request_version = self._VERSION
        try:
            if self._request_arrives() and self._read_head():
                self._dispatch()
        except TimeoutError:  # the client began a request, then went silent
            self._refuse(408, "request not completed in time")

    def _request_arrives(self) -> bool:
        """Whether a request begins within read_timeout (False: idle, or closed).

        Blank lines before it are skipped (RFC 9112 2.2: a client may send one after a body)
        and count as idle: a 408 on a connection the client thinks idle could be taken for
        the answer to its next request.
        """
        rfile = cast(io.BufferedReader, self.rfile)
        try:
            for _ in range(_BLANK_LINES):
                ahead = rfile.peek(2)[:2]  # what is buffered, else one read: never waits twice
                if ahead[:1] == b"\n" or ahead == b"\r\n":
                    rfile.readline(2)
                else:
                    break
            return bool(rfile.peek(1))
        except TimeoutError:
            return False

    def _read_head(self) -> bool:
        """Read the request line and headers; False once refused, or when the client left."""
        line = self.rfile.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            self._refuse(414, "Request-URI Too Long")
            return False
        if line and not line.strip():
            self._refuse(400, "Bad request syntax (empty request line)")
            return False
        return self._read_request_line(line) and self._read_fields()

    def _read_request_line(self, line: bytes) -> bool:
        """Read the method, target and version (http.server's rules and words); False once
        refused, or for a line of blanks only."""
        self.requestline = requestline = str(line, "iso-8859-1").rstrip("\r\n")
        words = requestline.split()
        if not words:
            return False
        if len(words) >= 3:  # the last word is the version
            version = words[-1]
            number = version_number(version)
            if number is None:
                self._refuse(400, f"Bad request version ({version!r})")
                return False
            if number >= (1, 1):
                self.close_connection = False
            if number >= (2, 0):
                self._refuse(505, f"Invalid HTTP version ({version.split('/', 1)[1]})")
                return False
            self.request_version = version
        if not 2 <= len(words) <= 3:
            self._refuse(400, f"Bad request syntax ({requestline!r})")
            return False
        command, path = words[:2]
        if len(words) == 2:  # HTTP/0.9: GET only, and the connection closes
            self.close_connection = True
            if command != "GET":
                self._refuse(400, f"Bad HTTP/0.9 request type ({command!r})")
                return False
        # A target starting "//" would be read as a host by a client (gh-87389): one slash.
        self.command = command
        self.path = "/" + path.lstrip("/") if path.startswith("//") else path
        return True

    def _read_fields(self) -> bool:
        """Read the header fields; `Connection` and `Expect: 100-continue` as they ask."""
        try:
            self.fields = header_fields(read_header_lines(self.rfile))
        except Refusal as refusal:
            self._refuse(refusal.status, refusal.reason)
            return False
        connection = self._field("connection").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        if self._field("expect").lower() == "100-continue" and self.request_version >= "HTTP/1.1":
            self.wfile.write(f"{self._VERSION} 100 Continue\r\n\r\n".encode())
        return True

    def _field(self, name: str) -> str:
        """The first value of the header field `name` (any case), else ""."""
        return next((value for key, value in self.fields if key.lower() == name), "")

    def _all_fields(self, name: str) -> list[str]:
        """Every value of the header field `name` (any case), in order."""
        return [value for key, value in self.fields if key.lower() == name]

    def _dispatch(self) -> None:
        """Serve a request of a known method with a well-formed target; refuse the rest."""
        if self.command not in _METHODS:
            self._refuse(501, f"Unsupported method ({self.command!r})")
            return
        target = _split_target(self.path)
        if target is None:
            self._refuse(400, "request target is malformed")
            return
        self._serve(target)

    def _serve(self, split: SplitResult) -> None:
        """Read, record and answer one request."""
        from urllib.parse import parse_qsl

        from . import _render
        from ._http import HttpRequest

        body = self._read_body()
        if body is None:
            return
        headers = {k.lower(): v for k, v in self.fields}
        request = HttpRequest.parse(self.command, split.path, headers, body)
        route = _render.route(request)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        seq, fault, reply = self._desk.admit(request, query, route)
        name = fault.name if fault else None
        log.info(
            "%s %s api=%s stream=%s fault=%s",
            request.method,
            request.path,
            route.api,
            route.stream,
            name,
        )
        if fault is not None and fault.name in ("drop", "hang"):
            self._withhold(fault)
            return
        ctx = _render.context(request, route, seq, int(time.time()))
        self._send(_rendered(route, ctx, fault, reply))

    def _withhold(self, fault: Fault) -> None:
        """Answer nothing, then close: at once (`drop`) or after waiting (`hang`)."""
        if fault.name == "hang":
            self._hang(fault.seconds)
        self.close_connection = True  # nothing written: the client sees a bare close

    def _read_body(self) -> bytes | None:
        """The whole request body (Content-Length or chunked); None after refusing it."""
        limit = self._desk.limits.max_body
        try:
            framing = body_framing(
                self._all_fields("content-length"), self._all_fields("transfer-encoding"), limit
            )
            return read_body(self.rfile, framing, limit)
        except Refusal as refusal:
            self._refuse(refusal.status, refusal.reason)
            return None

    def _refuse(self, status: int, reason: str) -> None:
        """Answer a client error in plain text, then close once the client has read it."""
        from ._http import HttpResponse

        text = (("content-type", "text/plain; charset=utf-8"),)
        self._send(HttpResponse(status, text, reason.encode(), close=True))
        self._discard_input()

    def _discard_input(self) -> None:
        """End our side, then drop what the client still sends until it ends its side too.

        Closing a socket with unread input resets the connection, and the reset can destroy
        the answer before the client reads it: a client still sending a refused body would
        see a reset, not the 413. Bounded by `_LINGER` (or read_timeout, if shorter).
        """
        deadline = time.monotonic() + min(_LINGER, self._desk.limits.read_timeout)
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_WR)
            while (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(left)
                if not self.connection.recv(65536):
                    return

    def _hang(self, seconds: float | None) -> None:
        """Answer nothing until `seconds` pass, the server stops, or the client leaves."""
        stopping = self._desk.stopping
        deadline = None if seconds is None else time.monotonic() + seconds
        sock = self.connection
        while not stopping.is_set():
            wait = 0.05
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                wait = min(wait, remaining)
            try:
                readable, _, _ = select.select([sock], [], [], wait)
                if readable and not sock.recv(1, socket.MSG_PEEK):
                    return  # the client closed its end (it timed out): stop holding a thread
            except (OSError, ValueError):
                return
            if readable:
                stopping.wait(wait)  # pipelined bytes are pending: don't spin

    def _send(self, response: HttpResponse) -> None:
        """Write an HttpResponse: its head, then a body or chunked SSE events."""
        log.debug('%s "%s" %s -', self.client_address[0], self.requestline, response.status)
        head = self._head(response)
        try:
            if response.events is None:
                self.wfile.write(head + response.sent_body)
                return
            self.wfile.write(head)
            for event in response.events:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            if not response.abort:
                self.wfile.write(b"0\r\n\r\n")
        except OSError as exc:  # the client hung up mid-response
            log.debug("client left during the response: %r", exc)
            self.close_connection = True

    def _head(self, response: HttpResponse) -> bytes:
        """The status line and header fields of `response` (nothing to an HTTP/0.9 request);
        a `Connection` field among them decides whether the connection stays open."""
        fields = [("Server", SERVER), ("Date", http_date(time.time())), *response.headers]
        if response.events is None:
            fields.append(("content-length", str(len(response.body))))
        else:
            fields.append(("transfer-encoding", "chunked"))
        if response.close or response.abort:
            fields.append(("connection", "close"))
        for key, value in fields:
            if key.lower() == "connection" and value.lower() in ("close", "keep-alive"):
                self.close_connection = value.lower() == "close"
        if self.request_version == "HTTP/0.9":
            return b""
        lines = [status_line(self._VERSION, response.status)]
        lines.extend(f"{key}: {value}\r\n" for key, value in fields)
        return "".join([*lines, "\r\n"]).encode("latin-1")  # a field beyond Latin-1: a bug

"""The fake provider's HTTP server: a loopback `ThreadingHTTPServer` in a daemon thread."""

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
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import SplitResult, parse_qsl, urlsplit

from . import _render
from ._faults import DEFAULT_REPLY, Fault, Reply
from ._framing import Refusal, body_framing, read_body
from ._http import Context, HttpRequest, HttpResponse, Route
from ._limits import BACKLOG, Limits
from ._rate_limit import RateLimit, TokenBuckets, api_key

if TYPE_CHECKING:
    import logging

__all__ = ["LOOPBACK_HOSTS", "FakeProvider", "RecordedRequest"]


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

LOOPBACK_HOSTS = ("127.0.0.1", "::1")
_JOIN_TIMEOUT = 5.0
# How long a refused client may go on sending before its connection is closed anyway.
_LINGER = 2.0
_MAX_REQUEST_LINE = 65536  # as http.server: longer gets a 414
_BLANK_LINES = 8  # skipped before a request line, as RFC 9112 2.2 asks (within reason)
# Control characters and spaces in a request target: refused, as the target is logged.
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
# The methods the APIs use; any other gets a 501.
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the fake received, with the fault it was given (None: it was answered)."""

    method: str
    """The HTTP method ("POST", "GET", ...)."""
    path: str
    """The path, without the query string."""
    query: dict[str, str]
    """The query string's parameters."""
    headers: dict[str, str]
    """The request headers, names lower-case."""
    body: bytes
    """The raw body."""
    json: Any
    """The body as JSON, or None when it is empty or not JSON."""
    api: str
    """The API it addressed: "anthropic", "openai_chat", "openai_responses", "openai_models",
    "gemini", another provider's ("azure_chat", "groq_chat", "ollama_chat", "cohere_chat",
    "bedrock_converse", "openrouter_chat", "deepseek_chat", "vllm_chat", "lmstudio_chat"), or
    "unknown" (any other path, answered with a 404)."""
    model: str | None
    """The model it named (in the body, or in Gemini's path), if any."""
    stream: bool
    """Whether it asked for a stream."""
    fault: str | None
    """The name of the fault it was given, or None when the reply was served."""


class FakeProvider:
    """A fault-injecting fake of the Anthropic, OpenAI and Gemini HTTP APIs on loopback.

    Built for load: a listen backlog of 1024 and a thread per connection, so hundreds of
    concurrent clients (keep-alive or not) are each answered. `limits` bounds what a client
    can make it hold: the body size (64 MiB: a 413), each wait for a client's next bytes
    (30 s: then a quiet close, or a 408 for a request left half-sent), and the recorded
    requests (the newest 10 000). Any request it has begun to read gets an answer: a
    malformed one a plain-text 4xx, a body that is not a JSON object the API's own 400.
    """

    def __init__(
        self,
        *,
        faults: Iterable[Fault | tuple[Fault, int | None]] = (),
        reply: Reply | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        limits: Limits | None = None,
    ) -> None:
        """Configure; nothing listens until `start()` or `with`. `limits`: see `Limits`."""
        if host not in LOOPBACK_HOSTS:
            # A fault injector must never be reachable from another machine.
            raise ValueError(
                f"FakeProvider binds loopback only ({', '.join(LOOPBACK_HOSTS)}), not {host!r}"
            )
        if not 0 <= port <= 65535:
            raise ValueError(f"port out of range: {port}")
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._faults: deque[tuple[Fault, int | None]] = deque()  # (fault, remaining or None)
        self._limits = limits or Limits()
        self._requests: deque[RecordedRequest] = deque(maxlen=self._limits.max_recorded)
        self._seq = 0
        self._reply = reply or DEFAULT_REPLY
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._buckets: TokenBuckets | None = None
        for item in faults:
            if isinstance(item, Fault):
                self.fail(item)
            else:
                self.fail(*item)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeProvider:
        """Bind and serve in a daemon thread; returns self."""
        if self._server is not None:
            raise RuntimeError("FakeProvider is already running")
        self._stopping.clear()
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        server = _Server((self._host, self._port), self, family)
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.005},  # how long stop() waits for the loop to notice
            name=f"FakeProvider:{server.server_port}",
            daemon=True,
        )
        self._server, self._thread = server, thread
        thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: release hanging requests, close connections, join the threads."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.close_connections()  # idle keep-alive and mid-stream handlers see EOF
        server.server_close()
        if thread is not None:
            thread.join(_JOIN_TIMEOUT)
        server.join_workers(_JOIN_TIMEOUT)
        self._server = self._thread = None

    def __enter__(self) -> FakeProvider:
        """Start serving; returns self."""
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop serving."""
        self.stop()

    async def __aenter__(self) -> FakeProvider:
        """Start serving from async code; returns self."""
        import asyncio  # here, not at the top: `recoverable run --fake` must not load asyncio

        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop serving from async code."""
        import asyncio  # see __aenter__

        # stop() joins threads: keep that off the event loop.
        await asyncio.to_thread(self.stop)

    # -- addresses -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        if self._server is None:
            raise RuntimeError("FakeProvider is not running; call start() or use `with`")
        return self._server.server_port

    @property
    def url(self) -> str:
        """Base URL for Anthropic and Gemini clients, e.g. "http://127.0.0.1:PORT"."""
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAI clients: `url` + "/v1"."""
        return self.url + "/v1"

    @property
    def limits(self) -> Limits:
        """What the server accepts from its clients (see `Limits`)."""
        return self._limits

    # -- behaviour -------------------------------------------------------------------------

    def fail(self, fault: Fault, times: int | None = 1) -> None:
        """Queue `fault` for the next `times` requests (None: every request from then on)."""
        if not isinstance(fault, Fault):
            raise TypeError(f"expected a Fault, got {type(fault).__name__}")
        if times is not None and times < 1:
            raise ValueError("times must be >= 1 or None")
        with self._lock:
            self._faults.append((fault, times))

    def rate_limit(self, limit: RateLimit | None) -> None:
        """Answer like a rate-limited API: a token bucket per API key (`RateLimit`), a 429
        with the wait until the next token when it is empty; None: no limit. A queued fault
        is served first and takes no token."""
        if limit is not None and not isinstance(limit, RateLimit):
            raise TypeError(f"expected a RateLimit, got {type(limit).__name__}")
        with self._lock:
            self._buckets = None if limit is None else TokenBuckets(limit)

    def reply(self, reply: Reply) -> None:
        """Set the answer given when no fault is pending."""
        if not isinstance(reply, Reply):
            raise TypeError(f"expected a Reply, got {type(reply).__name__}")
        with self._lock:
            self._reply = reply

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of the requests received so far, in arrival order: the newest
        `limits.max_recorded` of them."""
        with self._lock:
            return list(self._requests)

    def reset(self) -> None:
        """Forget pending faults and recorded requests, and restart request ids at 1."""
        with self._lock:
            self._faults.clear()
            self._requests.clear()
            self._seq = 0

    def _admit(self, request: RecordedRequest) -> tuple[int, Fault | None, Reply]:
        """Under one lock: number the request, take the head fault, record it with it."""
        with self._lock:
            self._seq += 1
            fault: Fault | None = None
            if self._faults:
                fault, remaining = self._faults[0]
                if remaining == 1:
                    self._faults.popleft()
                elif remaining is not None:
                    self._faults[0] = (fault, remaining - 1)
            elif self._buckets is not None:
                fault = self._buckets.take(api_key(request.headers, request.query))
            self._requests.append(replace(request, fault=fault.name if fault else None))
            return self._seq, fault, self._reply


def _recorded(request: HttpRequest, query: dict[str, str], route: Route) -> RecordedRequest:
    """What `fake.requests` keeps of a request, before it is given a fault."""
    return RecordedRequest(
        method=request.method,
        path=request.path,
        query=query,
        headers=dict(request.headers),
        body=request.body,
        json=request.json,
        api=route.api,
        model=route.model,
        stream=route.stream,
        fault=None,
    )


def _split_target(target: str) -> SplitResult | None:
    """A request target split into path and query; None when it is malformed."""
    if _CONTROL.search(target):
        return None
    try:
        return urlsplit(target)
    except ValueError:  # an absolute-form target with a bad host: "http://[::1/v1/models"
        return None


def _rendered(route: Route, ctx: Context, fault: Fault | None, reply: Reply) -> HttpResponse:
    """The response to send; a failure to render becomes a 500 that names it."""
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


class _Server(ThreadingHTTPServer):
    """ThreadingHTTPServer that tracks its connections so stop() can close them."""

    daemon_threads = True
    request_queue_size = BACKLOG

    def __init__(
        self, address: tuple[str, int], provider: FakeProvider, family: socket.AddressFamily
    ) -> None:
        """Bind `address` for `provider` with the given address family."""
        self.address_family = family
        self.provider = provider
        self._conn_lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._workers: set[threading.Thread] = set()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse DNS lookup."""
        # HTTPServer.server_bind calls socket.getfqdn(), a DNS lookup that can stall offline.
        socketserver.TCPServer.server_bind(self)
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


class _Handler(BaseHTTPRequestHandler):
    """Reads one request, asks the provider for a fault or reply, and writes the answer.

    Every request that has begun gets an answer: a malformed one a plain-text 4xx, then the
    connection closes. Only an idle connection, or one the client closed, ends without one.
    """

    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
    # Answer even a malformed request line as HTTP/1.1, not as HTTP/0.9 (no status line).
    default_request_version = "HTTP/1.1"
    server_version = "FakeProvider/1"
    sys_version = ""

    def setup(self) -> None:
        """Set up the connection streams, reads bounded by read_timeout, Nagle disabled."""
        super().setup()
        self.connection.settimeout(self._provider.limits.read_timeout)
        # Real servers disable Nagle; without it small SSE writes stall on delayed ACKs.
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @property
    def _provider(self) -> FakeProvider:
        """The FakeProvider this server answers for."""
        return cast(_Server, self.server).provider

    def log_message(self, format: str, *args: Any) -> None:
        """Send http.server's access log to `logging` at debug level."""
        log.debug("%s " + format, self.address_string(), *args)

    def handle_one_request(self) -> None:
        """Read one request and answer it (http.server's, made to answer what it drops).

        A request line too long gets a 414, a malformed one a 400, a request not finished
        within read_timeout a 408; an idle connection is closed quietly.
        """
        self.close_connection = True
        self.command, self.requestline = "", ""
        self.request_version = self.default_request_version
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
        line = self.rfile.readline(_MAX_REQUEST_LINE + 1)
        self.raw_requestline = line
        if len(line) > _MAX_REQUEST_LINE:
            self.send_error(414)
            return False
        if line and not line.strip():
            self.send_error(400, "Bad request syntax (empty request line)")
            return False
        return self.parse_request()  # it answers what it refuses (400, 431, 505)

    def _dispatch(self) -> None:
        """Serve a request of a known method with a well-formed target; refuse the rest."""
        if self.command not in _METHODS:
            self.send_error(501, f"Unsupported method ({self.command!r})")
            return
        target = _split_target(self.path)
        if target is None:
            self._refuse(400, "request target is malformed")
            return
        self._serve(target)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Answer what http.server refuses as every refusal is answered: plain text, then close."""
        self._refuse(code, message or self.responses[code][0])

    def _serve(self, split: SplitResult) -> None:
        """Read, record and answer one request."""
        body = self._read_body()
        if body is None:
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = HttpRequest.parse(self.command, split.path, headers, body)
        route = _render.route(request)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        seq, fault, reply = self._provider._admit(_recorded(request, query, route))
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
        limit = self._provider.limits.max_body
        try:
            framing = body_framing(
                self.headers.get_all("content-length", []),
                self.headers.get_all("transfer-encoding", []),
                limit,
            )
            return read_body(self.rfile, framing, limit)
        except Refusal as refusal:
            self._refuse(refusal.status, refusal.reason)
            return None

    def _refuse(self, status: int, reason: str) -> None:
        """Answer a client error in plain text, then close once the client has read it."""
        text = (("content-type", "text/plain; charset=utf-8"),)
        self._send(HttpResponse(status, text, reason.encode(), close=True))
        self._discard_input()

    def _discard_input(self) -> None:
        """End our side, then drop what the client still sends until it ends its side too.

        Closing a socket with unread input resets the connection, and the reset can destroy
        the answer before the client reads it: a client still sending a refused body would
        see a reset, not the 413. Bounded by `_LINGER` (or read_timeout, if shorter).
        """
        deadline = time.monotonic() + min(_LINGER, self._provider.limits.read_timeout)
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_WR)
            while (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(left)
                if not self.connection.recv(65536):
                    return

    def _hang(self, seconds: float | None) -> None:
        """Answer nothing until `seconds` pass, the server stops, or the client leaves."""
        stopping = self._provider._stopping
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
        """Write an HttpResponse: headers, then a body or chunked SSE events."""
        try:
            self.send_response(response.status)
            for key, value in response.headers:
                self.send_header(key, value)
            if response.events is None:
                self.send_header("content-length", str(len(response.body)))
            else:
                self.send_header("transfer-encoding", "chunked")
            if response.close or response.abort:
                self.send_header("connection", "close")
                self.close_connection = True
            self.end_headers()
            if response.events is None:
                self.wfile.write(response.sent_body)
                return
            for event in response.events:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            if not response.abort:
                self.wfile.write(b"0\r\n\r\n")
        except OSError as exc:  # the client hung up mid-response
            log.debug("client left during the response: %r", exc)
            self.close_connection = True

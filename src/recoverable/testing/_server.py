"""The fake provider: faults queued, requests recorded, the HTTP server (`_handler`) run in a
daemon thread on loopback."""

from __future__ import annotations

import socket
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ._faults import DEFAULT_REPLY, Fault, Reply
from ._handler import Desk, Server
from ._limits import Limits

if TYPE_CHECKING:  # what only a request, or a rate limit, needs: loaded by it
    from types import TracebackType

    from ._http import HttpRequest, Route
    from ._rate_limit import RateLimit, TokenBuckets

__all__ = ["LOOPBACK_HOSTS", "FakeProvider", "RecordedRequest"]

LOOPBACK_HOSTS = ("127.0.0.1", "::1")
_JOIN_TIMEOUT = 5.0


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
    idempotency_key: str | None = None
    """The `Idempotency-Key` header it carried (`rc.request_headers()`), None without one:
    the same on every attempt of one `rc.retry` call, new on the next call."""


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
        self._server: Server | None = None
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
        desk = Desk(self._limits, self._admit, self._stopping)
        server = Server((self._host, self._port), desk, family)
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
        from ._rate_limit import RateLimit, TokenBuckets

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

    def _admit(
        self, http: HttpRequest, query: dict[str, str], route: Route
    ) -> tuple[int, Fault | None, Reply]:
        """Under one lock: number the request, take the head fault, record it with it."""
        request = _recorded(http, query, route)
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
                from ._rate_limit import api_key

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
        idempotency_key=request.headers.get("idempotency-key"),
    )

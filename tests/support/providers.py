"""What the tests that call a provider (real or fake) share: catching what a call raises, a
loopback port with nothing listening, clients and helpers for FakeProvider's tests (SDK
clients, one call from each core SDK, raw HTTP/1.1 over a socket for what no SDK sends), and
the case type of the provider tests (`SdkCase`: one fault through one SDK, checked by
`check_classified`)."""

from __future__ import annotations

import http.client
import json
import socket
import urllib.request
from collections.abc import AsyncIterable, Callable, Iterable
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, BinaryIO, NamedTuple

import anthropic
import openai
import pytest
from google import genai
from google.genai import types as genai_types

import recoverable as rc
from recoverable.testing import FakeProvider, Fault, RecordedRequest

MSGS: Any = [{"role": "user", "content": "What is the weather in Paris?"}]
HELLO = "Hello from FakeProvider."
RPC = "type.googleapis.com/google.rpc."


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


# The keys `sdk_error` sends, so that an error online and the same one offline read the same.
SDK_ERROR_KEYS = {"openai": "sk-fake", "anthropic": "sk-ant-fake", "google": "fake"}


def openai_client(
    fake: FakeProvider, timeout: float = 5.0, api_key: str = "sk-test-abcdef123456"
) -> openai.OpenAI:
    """An OpenAI client of `fake`, its retries off."""
    return openai.OpenAI(api_key=api_key, base_url=fake.openai_url, max_retries=0, timeout=timeout)


def anthropic_client(
    fake: FakeProvider, timeout: float = 5.0, api_key: str = "x"
) -> anthropic.Anthropic:
    """An Anthropic client of `fake`, its retries off."""
    return anthropic.Anthropic(api_key=api_key, base_url=fake.url, max_retries=0, timeout=timeout)


def google_client(fake: FakeProvider, timeout: float = 5.0) -> genai.Client:
    """A google-genai client of `fake` (its timeout in whole milliseconds, as it takes it)."""
    options = genai_types.HttpOptions(base_url=fake.url, timeout=int(timeout * 1000))
    return genai.Client(api_key=SDK_ERROR_KEYS["google"], http_options=options)


# -- one call from each core SDK (what `sdk_error` asks, so the errors compare) -----------------

MESSAGES: Any = [{"role": "user", "content": "hi"}]
MODELS = {"openai": "gpt-4o", "anthropic": "claude-opus-4-8", "google": "gemini-2.5-flash"}


def ask_openai(fake: FakeProvider, stream: bool = False, timeout: float = 5.0) -> list[Any]:
    """One chat completion: `[the answer]`, or the stream's chunks, read to the end."""
    client = openai_client(fake, timeout, SDK_ERROR_KEYS["openai"])
    create = client.chat.completions.create
    if stream:
        return list(create(model=MODELS["openai"], messages=MESSAGES, stream=True))
    return [create(model=MODELS["openai"], messages=MESSAGES)]


def ask_anthropic(fake: FakeProvider, stream: bool = False, timeout: float = 5.0) -> list[Any]:
    """One message: `[the answer]`, or the stream's events, read to the end."""
    client = anthropic_client(fake, timeout, SDK_ERROR_KEYS["anthropic"])
    kwargs: dict[str, Any] = {"model": MODELS["anthropic"], "max_tokens": 64, "messages": MESSAGES}
    if stream:
        return list(client.messages.create(stream=True, **kwargs))
    return [client.messages.create(**kwargs)]


def ask_google(fake: FakeProvider, stream: bool = False, timeout: float = 5.0) -> list[Any]:
    """One generate_content: `[the answer]`, or the stream's chunks, read to the end."""
    # The client is held in a name: a genai.Client closes its transport when it is collected.
    client = google_client(fake, timeout)
    if stream:
        return list(client.models.generate_content_stream(model=MODELS["google"], contents="hi"))
    return [client.models.generate_content(model=MODELS["google"], contents="hi")]


def collect(items: Iterable[Any], into: list[Any], pick: Callable[[Any], Any]) -> None:
    """Consume a stream, keeping what arrived before any exception."""
    for item in items:
        into.append(pick(item))


async def acollect(items: AsyncIterable[Any], into: list[Any]) -> None:
    """Consume an async stream of typed events, keeping their types."""
    async for item in items:
        into.append(item.type)


def no_proxy_opener() -> urllib.request.OpenerDirector:
    """A urllib opener that ignores proxy settings."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def summary(requests: list[RecordedRequest]) -> list[tuple[str, str, str | None, bool, str | None]]:
    """Each recorded request's API, path, model, stream flag and fault."""
    return [(r.api, r.path, r.model, r.stream, r.fault) for r in requests]


# -- raw HTTP/1.1 -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One HTTP response as read off the socket."""

    status: int
    headers: dict[str, str]
    """Names lower-case."""
    body: bytes

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)


def post(path: str, body: bytes, *headers: str) -> bytes:
    """A POST with a Content-Length body and `headers` ("Name: value"), asking to close after."""
    head = [f"POST {path} HTTP/1.1", "Host: fake", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join([*head, "Connection: close"]) + "\r\n\r\n").encode() + body


def keep_alive(path: str, body: bytes) -> bytes:
    """A POST with a Content-Length body that leaves its connection open for the next one."""
    head = f"POST {path} HTTP/1.1\r\nHost: fake\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def connect(fake: FakeProvider, timeout: float = 5.0) -> socket.socket:
    """A TCP connection to `fake`, its reads bounded by `timeout`."""
    return socket.create_connection(("127.0.0.1", fake.port), timeout=timeout)


def read_answer(stream: BinaryIO) -> Answer:
    """The next response on `stream`, body and all (Content-Length or chunked)."""
    status_line = stream.readline()
    if not status_line:
        raise ConnectionError("the server closed without answering")
    _version, status, _reason = status_line.decode("latin-1").split(" ", 2)
    message = http.client.parse_headers(stream)
    headers = {name.lower(): value for name, value in message.items()}
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while size := int(stream.readline(), 16):
            body += stream.read(size)
            stream.readline()
        stream.readline()
    else:
        body = stream.read(int(headers.get("content-length", "0")))
    return Answer(int(status), headers, body)


def exchange(fake: FakeProvider, request: bytes, *, half_close: bool = False) -> Answer:
    """Send raw bytes on a new connection; the one answer, checked to be followed by a close.

    `half_close` ends the sending side after the bytes, as a client that has nothing more
    to send does.
    """
    with connect(fake) as sock, sock.makefile("rb") as stream:
        sock.sendall(request)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        answer = read_answer(stream)
        assert stream.read() == b"", "the server kept the connection open after its answer"
    return answer


# -- the 400 of a body that is not a JSON object, API by API ---------------------------------

OPENAI_400 = {
    "error": {
        "message": (
            "We could not parse the JSON body of your request. (HINT: This likely means you"
            " aren't using your HTTP library correctly. The OpenAI API expects a JSON payload,"
            " but what was sent was not valid JSON. If you have trouble figuring out how to fix"
            " this, please contact us through our help center at help.openai.com.)"
        ),
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
}
GEMINI_NOT_JSON = {
    "error": {
        "code": 400,
        "message": "Invalid JSON payload received. Unexpected token.",
        "status": "INVALID_ARGUMENT",
    }
}
GEMINI_NOT_OBJECT = {
    "error": {
        "code": 400,
        "message": (
            'Invalid JSON payload received. Unknown name "": Root element must be a message.'
        ),
        "status": "INVALID_ARGUMENT",
    }
}
ANTHROPIC_NOT_JSON = "The request body is not valid JSON: "
ANTHROPIC_NOT_OBJECT = "The request body is not a JSON object: it is a JSON "


def anthropic_400(message: str, seq: int = 1) -> dict[str, object]:
    """Anthropic's 400 for a body it cannot read, to request number `seq`."""
    error = {"type": "invalid_request_error", "message": message}
    return {"type": "error", "error": error, "request_id": f"req_fake_{seq:04d}"}


# -- one SDK's real exception per fault: the case type and its check ---------------------------


class SdkCase(NamedTuple):
    """One fault through one SDK: what the SDK raises and what we make of it."""

    fault: Fault
    stream: bool
    raised: str
    """The class name the SDK raises."""
    code: str
    retryable: bool
    retry_after_ms: int | None
    status: int | None
    error_code: str | EllipsisType | None = ...
    """`details["error_code"]` (`...`: not checked)."""


def sdk_cases(rows: Iterable[tuple[Any, ...]]) -> list[Any]:
    """`rows` as SdkCase parameters, each named by its fault (and `-stream`)."""
    return [
        pytest.param(SdkCase(*row), id=f"{row[0].name}{'-stream' if row[1] else ''}")
        for row in rows
    ]


def check_classified(error: BaseException, case: SdkCase, source: str) -> rc.ErrorDetail:
    """`error` is the case's class, and classify reads it as the case says; the detail."""
    assert type(error).__name__ == case.raised
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.retry_after_ms, detail.status,
            detail.source) == (case.code, case.retryable, case.retry_after_ms, case.status,
                               source)  # fmt: skip
    if case.error_code is not ...:
        assert detail.details.get("error_code") == case.error_code
    return detail

"""The exception an SDK raises for a `Fault`, made without a server.

The SDK's real client sends one real request through an in-memory transport (httpx's
`MockTransport`; for boto3, botocore's `before-send` event, whose answer botocore reads as it
reads one from the network) that answers as `FakeProvider` would, with the same pure
rendering. So the exception is the one the SDK raises in production, built by the SDK itself,
through public APIs only, and no socket is opened. A unit test of error handling needs
nothing more.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import time
from collections.abc import Callable, Iterator
from typing import Any, Literal

from . import _render
from ._faults import DEFAULT_REPLY, Fault
from ._http import DEFAULT_MODEL, HttpRequest, HttpResponse, Route

__all__ = ["sdk_error"]

Sdk = Literal["openai", "anthropic", "google", "bedrock"]

# Never contacted: the transport answers in memory. Loopback so that a mistake stays local.
_BASE = "http://127.0.0.1:9"

# How httpx words the failures that have no HTTP response.
_NO_ANSWER = "Server disconnected without sending a response."
_CUT = "peer closed connection without sending complete message body (incomplete chunked read)"


def sdk_error(
    sdk: Sdk, fault: Fault, *, stream: bool = False, model: str = DEFAULT_MODEL
) -> Exception:
    """What `sdk`'s client raises when a generate call meets `fault`.

    `sdk` is "openai" (Chat Completions), "anthropic" (Messages), "google" (Gemini
    generateContent) or "bedrock" (boto3's bedrock-runtime Converse; `model` is then a
    Bedrock model id), each client with its own retries off; `stream=True` makes the
    streaming call and reads it to the end. `Fault.drop` gives the SDK's connection error,
    `Fault.hang` its timeout, `Fault.cut_stream` its error for a body cut short. A fault
    the API answers with success (Gemini's `content_policy` is a 200) raises ValueError,
    as does an unknown `sdk`.
    """
    call = _CALLS.get(sdk)
    if call is None and sdk != "bedrock":
        raise ValueError(f"unknown sdk {sdk!r}: expected one of {[*sorted(_CALLS), 'bedrock']}")
    try:
        if call is None:
            _bedrock(fault, model, stream)
        else:
            call(lambda httpx: httpx.MockTransport(_answering(httpx, fault)), model, stream)
    except Exception as error:
        _close_generators(error)
        return error
    raise ValueError(f"{sdk} answers {fault.name!r} with success, not an error")


_MAX_CHAIN = 8  # causes and contexts looked through


def _close_generators(error: BaseException) -> None:
    """Close the generators a streaming call left suspended in the frames of `error`'s
    traceback (and its causes'). openai's `Stream` keeps its SSE reader in such a frame: the
    exception would keep it alive until the interpreter's exit, which then closes it and
    prints "Exception ignored in: <generator ...>"."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(seen) < _MAX_CHAIN:
        seen.add(id(current))
        tb = current.__traceback__
        while tb is not None:
            for value in list(tb.tb_frame.f_locals.values()):
                if inspect.isgenerator(value) and value.gi_frame is not None:
                    with contextlib.suppress(Exception):
                        value.close()
            tb = tb.tb_next
        current = current.__cause__ or current.__context__


def _answering(httpx: Any, fault: Fault) -> Callable[[Any], Any]:
    """A MockTransport handler: FakeProvider's response to the request, or its transport error."""

    def handle(request: Any) -> Any:
        if fault.name == "drop":
            raise httpx.RemoteProtocolError(_NO_ANSWER, request=request)
        if fault.name == "hang":
            raise httpx.ReadTimeout("timed out", request=request)
        http = HttpRequest.parse(request.method, request.url.path, request.headers, request.content)
        route = _render.route(http)
        context = _render.context(http, route, 1, int(time.time()))
        response = _render.render(route, context, fault, DEFAULT_REPLY)
        chunks = list(response.events) if response.events is not None else [response.sent_body]
        cut = httpx.RemoteProtocolError(_CUT, request=request) if response.abort else None
        return httpx.Response(
            response.status, headers=response.headers, stream=_body(httpx, chunks, cut)
        )

    return handle


def _rendered(
    method: str, url: str, headers: Any, body: bytes, fault: Fault
) -> tuple[Route, HttpResponse]:
    """FakeProvider's route and response for one request."""
    from urllib.parse import urlsplit

    lowered = {str(k).lower(): str(v) for k, v in dict(headers).items()}
    http = HttpRequest.parse(method, urlsplit(url).path, lowered, body)
    route = _render.route(http)
    context = _render.context(http, route, 1, int(time.time()))
    return route, _render.render(route, context, fault, DEFAULT_REPLY)


def _body(httpx: Any, chunks: list[bytes], cut: Exception | None) -> Any:
    """A response body that yields `chunks`, then raises `cut` (a dropped connection) if set."""

    class Body(httpx.SyncByteStream):  # type: ignore[misc]
        def __iter__(self) -> Iterator[bytes]:
            yield from chunks
            if cut is not None:
                raise cut

    return Body()


def _httpx_of(client_class: type) -> Any:
    """The httpx flavour (httpx or httpx2) whose Client `client_class` extends."""
    base = next(k for k in client_class.__mro__ if k.__name__ == "Client" and k is not client_class)
    return importlib.import_module(base.__module__.partition(".")[0])


Transport = Callable[[Any], Any]


def _openai(transport: Transport, model: str, stream: bool) -> None:
    import openai

    http = openai.DefaultHttpxClient(transport=transport(_httpx_of(openai.DefaultHttpxClient)))
    client = openai.OpenAI(
        api_key="sk-fake", base_url=f"{_BASE}/v1", max_retries=0, http_client=http
    )
    messages: Any = [{"role": "user", "content": "hi"}]
    if stream:
        with client.chat.completions.create(model=model, messages=messages, stream=True) as chunks:
            for _ in chunks:
                pass
    else:
        client.chat.completions.create(model=model, messages=messages)


def _anthropic(transport: Transport, model: str, stream: bool) -> None:
    import anthropic

    http = anthropic.DefaultHttpxClient(
        transport=transport(_httpx_of(anthropic.DefaultHttpxClient))
    )
    client = anthropic.Anthropic(
        api_key="sk-ant-fake", base_url=_BASE, max_retries=0, http_client=http
    )
    messages: Any = [{"role": "user", "content": "hi"}]
    if stream:
        with client.messages.create(
            model=model, max_tokens=16, messages=messages, stream=True
        ) as events:
            for _ in events:
                pass
    else:
        client.messages.create(model=model, max_tokens=16, messages=messages)


def _google(transport: Transport, model: str, stream: bool) -> None:
    from google import genai
    from google.genai import types

    try:
        httpx = importlib.import_module("httpx2")  # google-genai's choice when both are there
    except ImportError:
        httpx = importlib.import_module("httpx")
    http = httpx.Client(transport=transport(httpx))
    options = types.HttpOptions(base_url=_BASE, httpx_client=http)
    client = genai.Client(api_key="fake", http_options=options)
    if stream:
        chunks = client.models.generate_content_stream(model=model, contents="hi")
        try:
            for _ in chunks:
                pass
        finally:  # a generator: close it here, not when the interpreter collects it
            getattr(chunks, "close", lambda: None)()
    else:
        client.models.generate_content(model=model, contents="hi")


# The model `sdk_error` names when the caller gives none: a Bedrock model id.
_BEDROCK_MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


def _bedrock(fault: Fault, model: str, stream: bool) -> None:
    """boto3's bedrock-runtime client; botocore's `before-send` event answers each request."""
    import boto3
    import botocore.exceptions
    import urllib3
    from botocore.awsrequest import AWSResponse
    from botocore.config import Config

    def send(request: Any, **_: Any) -> Any:
        if fault.name == "drop":  # what botocore makes of urllib3's "Connection aborted."
            raise botocore.exceptions.ConnectionClosedError(endpoint_url=request.url)
        if fault.name == "hang":
            raise botocore.exceptions.ReadTimeoutError(endpoint_url=request.url)
        body = request.body if isinstance(request.body, bytes) else b""
        route, response = _rendered(request.method, request.url, request.headers, body, fault)
        chunks = list(response.events) if response.events is not None else [response.sent_body]
        # A stream cut mid-body: urllib3's error, which botocore's event-stream reader lets
        # through (a whole body cut short is read as what arrived, as over a socket).
        cut = urllib3.exceptions.ProtocolError("Response ended prematurely")
        raw = _RawBody(chunks, cut if response.abort and route.stream else None)
        return AWSResponse(request.url, response.status, dict(response.headers), raw)

    config = Config(retries={"total_max_attempts": 1})
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=_BASE,
        region_name="us-east-1",
        aws_access_key_id="AKIAFAKEFAKEFAKEFAKE",
        aws_secret_access_key="fake-secret",
        config=config,
    )
    client.meta.events.register("before-send.bedrock-runtime", send)
    messages: Any = [{"role": "user", "content": [{"text": "hi"}]}]
    model_id = _BEDROCK_MODEL if model == DEFAULT_MODEL else model
    if stream:
        for _ in client.converse_stream(modelId=model_id, messages=messages)["stream"]:
            pass
    else:
        client.converse(modelId=model_id, messages=messages)


class _RawBody:
    """What botocore reads a response body from (urllib3's response: `stream()`)."""

    def __init__(self, chunks: list[bytes], cut: Exception | None) -> None:
        self._chunks, self._cut = chunks, cut

    def stream(self, *_: Any, **__: Any) -> Iterator[bytes]:
        yield from self._chunks
        if self._cut is not None:
            raise self._cut

    def close(self) -> None:
        """Nothing to release."""


_CALLS: dict[str, Callable[[Transport, str, bool], None]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "google": _google,
}

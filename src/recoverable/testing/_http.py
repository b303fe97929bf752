"""What every provider API shares: the request, its route and context, the response, encoders.

Pure data and pure functions: no sockets, no clocks, no threads. A provider module (see
`_providers`) builds its answers from these; `_render` dispatches a request to it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "DEFAULT_MODEL",
    "UNKNOWN_API",
    "BodyError",
    "Context",
    "HttpRequest",
    "HttpResponse",
    "Op",
    "Route",
    "WireFormat",
    "dumps",
    "first_half",
    "json_response",
    "objects_in",
    "parse_json",
    "read_json",
    "seconds_text",
    "sse",
    "stream_response",
]

Op = Literal["generate", "count_tokens", "list_models", "not_found"]

DEFAULT_MODEL = "fake-model"
# The API of a request no provider recognizes (it gets a 404).
UNKNOWN_API = "unknown"
# Python's own cap on the digits int() converts (converting more takes quadratic time).
_MAX_INT_DIGITS = 4300


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One request as the renderer reads it."""

    method: str
    path: str
    """The path without the query string."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Lower-case names (or a case-insensitive mapping)."""
    body: bytes = b""
    json: Any = None
    """The body as JSON, or None when it is empty or not JSON."""
    json_error: str = ""
    """Why the body is not JSON ("" when it is, or is empty)."""

    @classmethod
    def parse(cls, method: str, path: str, headers: Mapping[str, str], body: bytes) -> HttpRequest:
        """The request with its body parsed as JSON."""
        doc, error = read_json(body)
        return cls(method, path, headers, body, doc, error)

    @property
    def body_error(self) -> BodyError | None:
        """Why the body cannot be an API's request (None: a JSON object, or no body)."""
        if self.json_error:
            return BodyError("not_json", self.json_error)
        if self.body and not isinstance(self.json, dict):
            return BodyError("not_object", _json_type(self.json))
        return None

    @property
    def model(self) -> str | None:
        """The model the JSON body names, if any."""
        doc = self.json if isinstance(self.json, Mapping) else {}
        model = doc.get("model")
        return model if isinstance(model, str) else None

    @property
    def asks_stream(self) -> bool:
        """Whether the JSON body asks for a stream (`"stream": true`)."""
        return isinstance(self.json, Mapping) and self.json.get("stream") is True


@dataclass(frozen=True, slots=True)
class BodyError:
    """Why a request body cannot be an API's request: it is not JSON, or not a JSON object."""

    kind: Literal["not_json", "not_object"]
    detail: str
    """The JSON parser's complaint ("not_json"), or the JSON type the body is ("not_object":
    "array", "string", "number", "boolean" or "null")."""


@dataclass(frozen=True, slots=True)
class Route:
    """Which API and operation a request addresses."""

    api: str
    """A registered wire API's name (`_providers.PROVIDERS`), or UNKNOWN_API."""
    op: Op
    model: str | None
    stream: bool
    """Only a "generate" op streams."""
    version: str = ""
    """Gemini API version from the path ("v1beta")."""
    action: str = ""
    """Gemini method from the path ("generateContent")."""

    @property
    def model_or_default(self) -> str:
        """The model an answer names: the requested one, else DEFAULT_MODEL."""
        return self.model or DEFAULT_MODEL


@dataclass(frozen=True, slots=True)
class Context:
    """Per-request facts a rendering needs: counter, clock reading, request details."""

    seq: int
    created: int
    method: str = "POST"
    path: str = "/"
    input_tokens: int = 1
    include_usage: bool = False
    api_key: str = ""
    tool_result: bool = False
    """The request sends a tool's output back."""
    body_error: BodyError | None = None
    """Why the body of a request that needs one cannot be read (None: it can)."""

    @property
    def request_id(self) -> str:
        """The request id sent in `x-request-id` / `request-id` headers."""
        return f"req_fake_{self.seq:04d}"

    def ident(self, prefix: str) -> str:
        """A deterministic object id such as `msg_fake0001`."""
        return f"{prefix}fake{self.seq:04d}"


@dataclass(frozen=True, slots=True)
class HttpResponse:
    """What to send: a whole body (Content-Length) or SSE events (chunked), and how to end."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    events: tuple[bytes, ...] | None = None
    abort: bool = False
    """Stop mid-body and close, as a dropped connection does."""
    close: bool = False
    """Send `Connection: close` and close after the response."""

    @property
    def sent_body(self) -> bytes:
        """The part of the whole body actually sent: its first half when aborted.

        `body` stays whole because its length is the Content-Length the response declares.
        """
        return first_half(self.body) if self.abort else self.body


@dataclass(frozen=True, slots=True)
class WireFormat:
    """How one API frames its responses: content types, JSON layout, request-id header."""

    json_type: str = "application/json"
    body_indent: int | None = None
    """JSON of a success: compact (None) or pretty-printed with this indent."""
    error_indent: int | None = None
    """JSON of an error (status >= 400), likewise."""
    stream_type: str = "text/event-stream; charset=utf-8"
    id_header: str | None = None
    """The header that carries the request id (None: the API sends none)."""


def first_half(body: bytes) -> bytes:
    """The part of a non-streamed body that `Fault.cut_stream` sends, graceful or not."""
    return body[: len(body) // 2]


def parse_json(body: bytes) -> Any:
    """A request body as JSON, or None when it is empty or not JSON; never raises."""
    return read_json(body)[0]


def read_json(body: bytes) -> tuple[Any, str]:
    """A request body as JSON and "", or None and why it is not JSON; never raises.

    Strict where Python's parser is lenient: NaN and Infinity are not JSON. An integer too
    long for int() becomes a float, as a JavaScript parser reads it.
    """
    if not body:
        return None, ""
    try:
        return json.loads(body, parse_int=_integer, parse_constant=_no_constant), ""
    except RecursionError:  # a body nested deeper than Python can recurse: "[" * 100000
        return None, "nesting too deep"
    except ValueError as exc:  # not JSON, not UTF-8 (UnicodeDecodeError), NaN
        return None, str(exc)


def _integer(text: str) -> int | float:
    """A JSON integer: an int, or a float when it has more digits than int() converts."""
    return int(text) if len(text.lstrip("-")) <= _MAX_INT_DIGITS else float(text)


def _no_constant(name: str) -> Any:
    """Refuse NaN, Infinity and -Infinity, which Python's parser accepts and JSON does not."""
    raise ValueError(f"{name} is not valid JSON")


def _json_type(value: Any) -> str:
    """The JSON type name of a parsed value that is not an object."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "null" if value is None else "number"


def objects_in(value: Any) -> list[Mapping[str, Any]]:
    """The objects in a JSON list (nothing for a non-list)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def dumps(obj: Any, indent: int | None = None) -> bytes:
    """JSON bytes: compact, or pretty-printed with `indent` and a trailing newline."""
    if indent is None:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
    return (json.dumps(obj, indent=indent, ensure_ascii=False) + "\n").encode()


def sse(event: str | None, data: Any, end: str = "\n\n") -> bytes:
    """One server-sent event: optional `event:` line, `data:` line, then `end`."""
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + dumps(data).decode() + end).encode()


def seconds_text(value: float) -> str:
    """Seconds as given: 7 -> "7", 0.2 -> "0.2"."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _id_headers(fmt: WireFormat, ctx: Context) -> tuple[tuple[str, str], ...]:
    """The request-id header of this format, if it has one."""
    return ((fmt.id_header, ctx.request_id),) if fmt.id_header else ()


def json_response(
    fmt: WireFormat,
    ctx: Context,
    status: int,
    doc: Any,
    extra: tuple[tuple[str, str], ...] = (),
) -> HttpResponse:
    """A JSON response laid out as this API lays it out, with `extra` headers last."""
    indent = fmt.error_indent if status >= 400 else fmt.body_indent
    headers = (("content-type", fmt.json_type), *_id_headers(fmt, ctx), *extra)
    return HttpResponse(status, headers, dumps(doc, indent))


def stream_response(
    fmt: WireFormat, ctx: Context, events: list[bytes], *, abort: bool = False, close: bool = False
) -> HttpResponse:
    """A 200 SSE response with this API's headers."""
    headers = (
        ("content-type", fmt.stream_type),
        ("cache-control", "no-cache"),
        *_id_headers(fmt, ctx),
    )
    return HttpResponse(200, headers, events=tuple(events), abort=abort, close=close)

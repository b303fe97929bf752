"""Pure rendering of replies and faults for each wire API: no sockets, no clocks, no threads.

`route()` names the API a request speaks; `render()` turns (route, context, fault, reply)
into an `Answer`: a status, headers and either one body or a list of SSE events. Bodies
copy the shape each provider really sends (field order, envelopes, request ids).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._faults import Fault, Reply

__all__ = [
    "Answer",
    "Api",
    "Context",
    "Route",
    "carries_tool_result",
    "context",
    "first_half",
    "parse_json",
    "render",
    "route",
]

Api = Literal["anthropic", "openai_chat", "openai_responses", "gemini", "openai_models", "unknown"]
Op = Literal["generate", "count_tokens", "list_models", "not_found"]

DEFAULT_MODEL = "fake-model"

_GEMINI_PATH = re.compile(r"^/(v1|v1beta|v1alpha)/((?:models|tunedModels)/[^:/]+):([A-Za-z]+)$")
_GEMINI_OPS: dict[str, tuple[Op, bool]] = {
    "generateContent": ("generate", False),
    "streamGenerateContent": ("generate", True),
    "countTokens": ("count_tokens", False),
}


@dataclass(frozen=True, slots=True)
class Route:
    """Which API and operation a request addresses."""

    api: Api
    op: Op
    model: str | None
    stream: bool  # only a "generate" op streams
    version: str = ""  # Gemini API version from the path ("v1beta")
    action: str = ""  # Gemini method from the path ("generateContent")


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
    tool_result: bool = False  # the request sends a tool's output back

    @property
    def request_id(self) -> str:
        """The request id sent in `x-request-id` / `request-id` headers."""
        return f"req_fake_{self.seq:04d}"

    def ident(self, prefix: str) -> str:
        """A deterministic object id such as `msg_fake0001`."""
        return f"{prefix}fake{self.seq:04d}"


@dataclass(frozen=True, slots=True)
class Answer:
    """What to send: a whole body (Content-Length) or SSE events (chunked), and how to end."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    events: tuple[bytes, ...] | None = None
    abort: bool = False  # stop mid-body and close, as a dropped connection does
    close: bool = False  # send `Connection: close` and close after the answer

    @property
    def sent_body(self) -> bytes:
        """The part of the whole body actually sent: its first half when aborted.

        `body` stays whole because its length is the Content-Length the answer declares.
        """
        return first_half(self.body) if self.abort else self.body


def first_half(body: bytes) -> bytes:
    """The part of a non-streamed body that `Fault.cut_stream` sends, graceful or not."""
    return body[: len(body) // 2]


def parse_json(body: bytes) -> Any:
    """A request body as JSON, or None when it is empty or not JSON."""
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def route(method: str, path: str, headers: Mapping[str, str], body: Any) -> Route:
    """Name the API and operation of a request from its method, path and JSON body."""
    doc: Mapping[str, Any] = body if isinstance(body, Mapping) else {}
    model = doc.get("model")
    model = model if isinstance(model, str) else None
    stream = doc.get("stream") is True
    if method == "POST":
        if path == "/v1/messages":
            return Route("anthropic", "generate", model, stream)
        if path == "/v1/messages/count_tokens":
            return Route("anthropic", "count_tokens", model, False)
        if path == "/v1/chat/completions":
            return Route("openai_chat", "generate", model, stream)
        if path == "/v1/responses":
            return Route("openai_responses", "generate", model, stream)
        match = _GEMINI_PATH.match(path)
        if match and match.group(3) in _GEMINI_OPS:
            op, streamed = _GEMINI_OPS[match.group(3)]
            name = match.group(2).split("/", 1)[1]
            return Route("gemini", op, name, streamed, match.group(1), match.group(3))
    if method == "GET" and path == "/v1/models":
        # Both OpenAI and Anthropic list models here; Anthropic clients send this header.
        api: Api = "anthropic" if "anthropic-version" in headers else "openai_models"
        return Route(api, "list_models", None, False)
    return Route("unknown", "not_found", model, False)


def context(
    route: Route,
    seq: int,
    created: int,
    method: str,
    path: str,
    headers: Mapping[str, str],
    body: bytes,
    doc: Any,
) -> Context:
    """The facts of one request that its answer needs (`doc` is the body's JSON, or None)."""
    return Context(
        seq=seq,
        created=created,
        method=method,
        path=path,
        input_tokens=max(1, len(body) // 4),
        include_usage=_include_usage(doc),
        api_key=_api_key(headers),
        tool_result=carries_tool_result(route.api, doc),
    )


def _include_usage(doc: Any) -> bool:
    """Whether an OpenAI chat stream asked for a final usage chunk."""
    if not isinstance(doc, dict):
        return False
    options = doc.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _api_key(headers: Mapping[str, str]) -> str:
    """The API key a client sent (bearer token, x-api-key or x-goog-api-key)."""
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return headers.get("x-api-key") or headers.get("x-goog-api-key") or ""


def carries_tool_result(api: Api, body: Any) -> bool:
    """Whether a request body sends a tool's output back to the model, in this API's form."""
    if not isinstance(body, Mapping):
        return False
    if api == "gemini":
        contents = body.get("contents")
        return any(
            "functionResponse" in part
            for content in _dicts(contents)
            for part in _dicts(content.get("parts"))
        )
    if api == "openai_responses":
        items = body.get("input")
        return any(str(item.get("type", "")).endswith("_call_output") for item in _dicts(items))
    messages = _dicts(body.get("messages"))
    if api == "openai_chat":
        return any(message.get("role") in ("tool", "function") for message in messages)
    if api == "anthropic":
        return any(
            block.get("type") == "tool_result"
            for message in messages
            for block in _dicts(message.get("content"))
        )
    return False


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    """The mappings in a JSON list (nothing for a non-list)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def render(route: Route, ctx: Context, fault: Fault | None, reply: Reply) -> Answer:
    """The answer to one request: the fault's form for this API, else the reply's."""
    reply = reply.answering(ctx.tool_result)
    if fault is None:
        return _success(route, ctx, reply)
    name = fault.name
    if name in ("drop", "hang"):
        raise ValueError(f"{name} sends no answer; the server handles it")
    if name == "status":
        return _raw(fault)
    if name == "cut_stream":
        if route.stream:
            return _stream(route, ctx, reply, cut=fault.after, graceful=fault.graceful)
        whole = _success(route, ctx, reply)
        if fault.graceful:
            # A clean HTTP answer whose JSON stops halfway (Content-Length matches).
            return Answer(whole.status, whole.headers, first_half(whole.body), close=True)
        # Declares the whole body's length, then sends only `sent_body`.
        return Answer(whole.status, whole.headers, whole.body, abort=True)
    if name == "stream_overloaded":
        if route.stream:
            return _stream(route, ctx, reply, cut=1, in_stream_error=True)
        return _error(route, ctx, Fault.overloaded())
    if name == "content_policy" and route.api == "gemini":
        # Gemini blocks with a 200 whose candidate finished for SAFETY, not an HTTP error.
        return _gemini_blocked(route, ctx)
    return _error(route, ctx, fault)


# -- helpers -----------------------------------------------------------------------------


def _dumps(obj: Any, indent: int | None = None) -> bytes:
    """JSON bytes: compact, or pretty-printed with `indent` and a trailing newline."""
    if indent is None:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
    return (json.dumps(obj, indent=indent, ensure_ascii=False) + "\n").encode()


def _sse(event: str | None, data: Any, sep: str = "\n\n") -> bytes:
    """One server-sent event: optional `event:` line, `data:` line, separator."""
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + _dumps(data).decode() + sep).encode()


def _pieces(text: str) -> list[str]:
    """Split text into word-sized deltas whose concatenation is the text."""
    parts = re.findall(r"\s*\S+", text)
    tail = text[len("".join(parts)) :]
    if tail:
        if parts:
            parts[-1] += tail
        else:
            parts = [tail]
    return parts


def _arg_pieces(arguments: str) -> list[str]:
    """Split a JSON arguments string into a few deltas, as the APIs stream them."""
    size = max(1, -(-len(arguments) // 3))
    return [arguments[i : i + size] for i in range(0, len(arguments), size)] or [""]


def _args_json(reply: Reply) -> str:
    """A tool call's arguments as the compact JSON string the APIs send."""
    return json.dumps(dict(reply.tool_arguments), separators=(",", ":"), ensure_ascii=False)


def _out_tokens(reply: Reply) -> int:
    """A rough output token count for usage fields."""
    text = reply.content if reply.kind == "text" else _args_json(reply)
    return max(1, len(text) // 4)


def _num(value: float) -> str:
    """Render seconds as given: 7 -> "7", 0.2 -> "0.2"."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _model(route: Route) -> str:
    """The requested model, or the default one."""
    return route.model or DEFAULT_MODEL


def _mask_key(key: str) -> str:
    """Mask an API key the way OpenAI echoes it back: first 3 and last 4 characters."""
    if len(key) <= 8:
        return key
    return key[:3] + "*" * (len(key) - 7) + key[-4:]


def _id_header(route: Route, ctx: Context) -> tuple[tuple[str, str], ...]:
    """The request-id header this API sends (Gemini sends none)."""
    if route.api == "anthropic":
        return (("request-id", ctx.request_id),)
    if route.api == "gemini":
        return ()
    return (("x-request-id", ctx.request_id),)


def _json_answer(
    route: Route, ctx: Context, status: int, doc: Any, *extra: tuple[str, str]
) -> Answer:
    """A JSON answer formatted the way this API formats it."""
    if route.api == "gemini":
        ctype, body = "application/json; charset=UTF-8", _dumps(doc, indent=2)
    elif route.api == "anthropic":
        ctype, body = "application/json", _dumps(doc)
    else:
        # OpenAI pretty-prints: errors with 4 spaces, objects with 2.
        ctype, body = "application/json", _dumps(doc, indent=4 if status >= 400 else 2)
    return Answer(status, (("content-type", ctype), *_id_header(route, ctx), *extra), body)


def _stream_answer(
    route: Route, ctx: Context, events: list[bytes], *, abort: bool = False, close: bool = False
) -> Answer:
    """A 200 SSE answer with this API's headers."""
    ctype = "text/event-stream" if route.api == "gemini" else "text/event-stream; charset=utf-8"
    headers = (("content-type", ctype), ("cache-control", "no-cache"), *_id_header(route, ctx))
    return Answer(200, headers, events=tuple(events), abort=abort, close=close)


def _raw(fault: Fault) -> Answer:
    """The answer of `Fault.status`: exactly the given status, body and headers."""
    headers: list[tuple[str, str]] = []
    body = b""
    if isinstance(fault.body, Mapping):
        headers.append(("content-type", "application/json"))
        body = _dumps(dict(fault.body))
    elif isinstance(fault.body, str):
        headers.append(("content-type", "text/plain; charset=utf-8"))
        body = fault.body.encode()
    given = {k.lower() for k in fault.headers}
    headers = [h for h in headers if h[0] not in given]
    headers.extend((k, v) for k, v in fault.headers.items())
    return Answer(fault.status_code or 500, tuple(headers), body)


# -- errors --------------------------------------------------------------------------------


def _retry_headers(fault: Fault) -> tuple[tuple[str, str], ...]:
    """The `retry-after` / `retry-after-ms` headers a rate limit fault asks for."""
    out: list[tuple[str, str]] = []
    if fault.retry_after is not None:
        out.append(("retry-after", _num(fault.retry_after)))
    if fault.retry_after_ms is not None:
        out.append(("retry-after-ms", str(fault.retry_after_ms)))
    return tuple(out)


def _error(route: Route, ctx: Context, fault: Fault) -> Answer:
    """The HTTP error answer of `fault` in this API's envelope."""
    extra = _retry_headers(fault) if fault.name == "rate_limited" else ()
    if route.api == "anthropic":
        status, etype, message = _anthropic_error(route, fault)
        doc = {"type": "error", "error": {"type": etype, "message": message}}
        doc["request_id"] = ctx.request_id
        return _json_answer(route, ctx, status, doc, *extra)
    if route.api == "gemini":
        status, doc = _gemini_error(route, fault)
        return _json_answer(route, ctx, status, doc, *extra)
    status, err = _openai_error(route, ctx, fault)
    return _json_answer(route, ctx, status, {"error": err}, *extra)


def _wait_text(fault: Fault) -> str:
    """The wait OpenAI quotes in its rate limit message ("7s", "200ms")."""
    if fault.retry_after_ms is not None:
        return f"{fault.retry_after_ms}ms"
    if fault.retry_after is not None:
        return f"{_num(fault.retry_after)}s"
    return "20s"


_OPENAI_SERVER_ERROR = (
    "The server had an error while processing your request. Sorry about that! You can retry"
    " your request, or contact us through our help center at help.openai.com if the error"
    " persists. (Please include the request ID {rid} in your message.)"
)
_OPENAI_FORBIDDEN = (
    "You have insufficient permissions for this operation. Missing scopes: model.request."
    " Check that you have the correct role in your organization (Reader, Writer, Owner) and"
    " project (Member, Owner), and if you're using a restricted API key, that it has the"
    " necessary scopes."
)
_OPENAI_OVERLOADED = "The server is overloaded or not ready yet."


def _openai_error(route: Route, ctx: Context, fault: Fault) -> tuple[int, dict[str, Any]]:
    """Status and inner `error` object of an OpenAI error."""

    def err(message: str, etype: str, param: str | None, code: str | None) -> dict[str, Any]:
        """One error in this API's shape."""
        return {"message": message, "type": etype, "param": param, "code": code}

    model = fault.model or _model(route)
    name = fault.name
    if name == "rate_limited":
        return 429, err(
            f"Rate limit reached for {model} in organization org-fake on requests per min"
            f" (RPM): Limit 3, Used 3, Requested 1. Please try again in {_wait_text(fault)}."
            " Visit https://platform.openai.com/account/rate-limits to learn more.",
            "requests",
            None,
            "rate_limit_exceeded",
        )
    if name == "insufficient_quota":
        return 429, err(
            "You exceeded your current quota, please check your plan and billing details. For"
            " more information on this error, read the docs:"
            " https://platform.openai.com/docs/guides/error-codes/api-errors.",
            "insufficient_quota",
            None,
            "insufficient_quota",
        )
    if name == "payment_required":
        return 402, err(
            "Your account is not active, please check your billing details on our website.",
            "billing_not_active",
            None,
            "billing_not_active",
        )
    if name == "unauthorized":
        return 401, err(
            f"Incorrect API key provided: {_mask_key(ctx.api_key)}. You can find your API key"
            " at https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            None,
            "invalid_api_key",
        )
    if name == "forbidden":
        return 403, err(_OPENAI_FORBIDDEN, "invalid_request_error", None, None)
    if name == "model_not_found":
        return 404, err(
            f"The model `{model}` does not exist or you do not have access to it.",
            "invalid_request_error",
            None,
            "model_not_found",
        )
    if name == "context_too_long":
        if route.api == "openai_responses":
            return 400, err(
                "Your input exceeds the context window of this model. Please adjust your input"
                " and try again.",
                "invalid_request_error",
                "input",
                "context_length_exceeded",
            )
        return 400, err(
            "This model's maximum context length is 128000 tokens. However, your messages"
            " resulted in 130000 tokens. Please reduce the length of the messages.",
            "invalid_request_error",
            "messages",
            "context_length_exceeded",
        )
    if name == "content_policy":
        return 400, err(
            "Your request was rejected as a result of our safety system. Your prompt may"
            " contain text that is not allowed by our safety system.",
            "invalid_request_error",
            None,
            "content_policy_violation",
        )
    if name == "server_error":
        return 500, err(_OPENAI_SERVER_ERROR.format(rid=ctx.request_id), "server_error", None, None)
    if name == "unavailable":
        return 503, err(_OPENAI_OVERLOADED, "server_error", None, None)
    if name == "overloaded":
        return 529, err("Overloaded", "overloaded_error", None, None)
    raise ValueError(f"no OpenAI error form for fault {name!r}")


_ANTHROPIC_RATE_LIMIT = (
    "This request would exceed the rate limit for your organization of 50 requests per minute."
    " For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the"
    " response headers for current usage. Please reduce the prompt length or the maximum"
    " tokens requested, or try again later. You may also contact sales at"
    " https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."
)


def _anthropic_error(route: Route, fault: Fault) -> tuple[int, str, str]:
    """Status, error type and message of an Anthropic error."""
    name = fault.name
    if name == "rate_limited":
        return 429, "rate_limit_error", _ANTHROPIC_RATE_LIMIT
    if name == "insufficient_quota":
        return (
            400,
            "invalid_request_error",
            "Your credit balance is too low to access the Anthropic API. Please go to Plans &"
            " Billing to upgrade or purchase credits.",
        )
    if name == "payment_required":
        return (
            402,
            "billing_error",
            "Your organization has an unpaid balance. Please go to Plans & Billing to update"
            " your payment method.",
        )
    if name == "unauthorized":
        return 401, "authentication_error", "invalid x-api-key"
    if name == "forbidden":
        return (
            403,
            "permission_error",
            "Your API key does not have permission to use the specified resource.",
        )
    if name == "model_not_found":
        return 404, "not_found_error", f"model: {fault.model or _model(route)}"
    if name == "context_too_long":
        return 400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
    if name == "content_policy":
        return 400, "invalid_request_error", "Output blocked by content filtering policy"
    if name == "server_error":
        return 500, "api_error", "Internal server error"
    if name == "unavailable":
        return 503, "api_error", "Service unavailable"
    if name == "overloaded":
        return 529, "overloaded_error", "Overloaded"
    raise ValueError(f"no Anthropic error form for fault {name!r}")


_RPC = "type.googleapis.com/google.rpc."
_GEMINI_QUOTA = (
    "You exceeded your current quota, please check your plan and billing details. For more"
    " information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
    " To monitor your current usage, head to: https://ai.dev/usage?tab=rate-limit. \n"
    "* Quota exceeded for metric: generativelanguage.googleapis.com/"
    "generate_content_free_tier_requests, limit: {limit}, model: {model}{retry}"
)
_GEMINI_OVERLOADED = "The model is overloaded. Please try again later."


def _duration(seconds: float) -> str:
    """A google.protobuf.Duration in JSON form: 38 -> "38s", 0.2 -> "0.2s"."""
    return f"{_num(round(seconds, 9))}s"


def _retry_delay(fault: Fault) -> str | None:
    """Gemini's RetryInfo delay: given, or derived from the retry headers."""
    if fault.retry_delay is not None:
        return fault.retry_delay
    if fault.retry_after is not None:
        return _duration(fault.retry_after)
    if fault.retry_after_ms is not None:
        return _duration(fault.retry_after_ms / 1000)
    return None


def _quota_details(model: str, quota_id: str, limit: str, delay: str | None) -> list[Any]:
    """google.rpc details of a Gemini quota error: QuotaFailure, Help, RetryInfo."""
    details: list[Any] = [
        {
            "@type": _RPC + "QuotaFailure",
            "violations": [
                {
                    "quotaMetric": "generativelanguage.googleapis.com/"
                    "generate_content_free_tier_requests",
                    "quotaId": quota_id,
                    "quotaDimensions": {"location": "global", "model": model},
                    "quotaValue": limit,
                }
            ],
        },
        {
            "@type": _RPC + "Help",
            "links": [
                {
                    "description": "Learn more about Gemini API quotas",
                    "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                }
            ],
        },
    ]
    if delay is not None:
        details.append({"@type": _RPC + "RetryInfo", "retryDelay": delay})
    return details


def _gemini_error(route: Route, fault: Fault) -> tuple[int, dict[str, Any]]:
    """Status and body of a Gemini (google.rpc.Status) error."""

    def err(
        code: int, message: str, status: str, details: list[Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        """One error in this API's shape."""
        body: dict[str, Any] = {"code": code, "message": message, "status": status}
        if details:
            body["details"] = details
        return code, {"error": body}

    model = fault.model or _model(route)
    name = fault.name
    if name in ("rate_limited", "insufficient_quota"):
        daily = name == "insufficient_quota"
        # The real API says "exceeded your current quota" for per-minute limits too: only the
        # QuotaFailure's quotaId tells a daily quota (PerDay) from a rate limit (PerMinute).
        delay = "43s" if daily else _retry_delay(fault)
        limit = "250" if daily else "10"
        quota_id = (
            "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
            if daily
            else "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
        )
        retry = f"\nPlease retry in {delay}." if delay else ""
        message = _GEMINI_QUOTA.format(limit=limit, model=model, retry=retry)
        details = _quota_details(model, quota_id, limit, delay)
        return err(429, message, "RESOURCE_EXHAUSTED", details)
    if name == "unauthorized":
        message = "API key not valid. Please pass a valid API key."
        details = [
            {
                "@type": _RPC + "ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            },
            {"@type": _RPC + "LocalizedMessage", "locale": "en-US", "message": message},
        ]
        return err(400, message, "INVALID_ARGUMENT", details)
    if name == "payment_required":
        details = [
            {
                "@type": _RPC + "ErrorInfo",
                "reason": "BILLING_DISABLED",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }
        ]
        message = "Billing is not enabled for this project. Enable billing to use this model."
        return err(402, message, "FAILED_PRECONDITION", details)
    table: dict[str, tuple[int, str, str]] = {
        "forbidden": (403, "The caller does not have permission", "PERMISSION_DENIED"),
        "model_not_found": (
            404,
            f"models/{model} is not found for API version {route.version or 'v1beta'}, or is"
            f" not supported for {route.action or 'generateContent'}. Call ListModels to see"
            " the list of available models and their supported methods.",
            "NOT_FOUND",
        ),
        "context_too_long": (
            400,
            "The input token count (1200000) exceeds the maximum number of tokens allowed"
            " (1048576).",
            "INVALID_ARGUMENT",
        ),
        "server_error": (
            500,
            "An internal error has occurred. Please retry or report in"
            " https://developers.generativeai.google/guide/troubleshooting",
            "INTERNAL",
        ),
        "unavailable": (503, _GEMINI_OVERLOADED, "UNAVAILABLE"),
        "overloaded": (529, _GEMINI_OVERLOADED, "UNAVAILABLE"),
    }
    if name in table:
        code, message, status = table[name]
        return err(code, message, status)
    raise ValueError(f"no Gemini error form for fault {name!r}")


# -- successful answers --------------------------------------------------------------------


def _success(route: Route, ctx: Context, reply: Reply) -> Answer:
    """The normal answer of an operation: a reply, a count, a list or a 404."""
    if route.op == "not_found":
        err = {
            "message": f"Invalid URL ({ctx.method} {ctx.path})",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
        return _json_answer(route, ctx, 404, {"error": err})
    if route.op == "list_models":
        return _json_answer(route, ctx, 200, _models_list(route))
    if route.op == "count_tokens":
        if route.api == "gemini":
            return _json_answer(route, ctx, 200, {"totalTokens": ctx.input_tokens})
        return _json_answer(route, ctx, 200, {"input_tokens": ctx.input_tokens})
    if route.stream:
        return _stream(route, ctx, reply)
    if route.api == "anthropic":
        return _json_answer(route, ctx, 200, _anthropic_message(route, ctx, reply))
    if route.api == "openai_chat":
        return _json_answer(route, ctx, 200, _chat_completion(route, ctx, reply))
    if route.api == "openai_responses":
        doc = _response_obj(route, ctx, "completed", [_responses_item(ctx, reply)], reply)
        return _json_answer(route, ctx, 200, doc)
    return _json_answer(route, ctx, 200, _gemini_body(route, ctx, reply))


def _models_list(route: Route) -> dict[str, Any]:
    """The model list of OpenAI or Anthropic."""
    if route.api == "anthropic":
        model = {
            "type": "model",
            "id": DEFAULT_MODEL,
            "display_name": "Fake Model",
            "created_at": "2025-01-01T00:00:00Z",
        }
        return {
            "data": [model],
            "has_more": False,
            "first_id": DEFAULT_MODEL,
            "last_id": DEFAULT_MODEL,
        }
    entry = {"id": DEFAULT_MODEL, "object": "model", "created": 1735689600, "owned_by": "system"}
    return {"object": "list", "data": [entry]}


def _stream(
    route: Route,
    ctx: Context,
    reply: Reply,
    *,
    cut: int | None = None,
    graceful: bool = False,
    in_stream_error: bool = False,
) -> Answer:
    """An SSE answer; `cut` keeps only that many content events and drops the finish."""
    err: dict[str, Any]
    if route.api == "anthropic":
        events = list(_anthropic_events(route, ctx, reply, cut))
        if in_stream_error:
            err = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
            events.append(_sse("error", err))
    elif route.api == "openai_chat":
        events = list(_chat_events(route, ctx, reply, cut))
        if in_stream_error:
            err = {
                "message": _OPENAI_OVERLOADED,
                "type": "server_error",
                "param": None,
                "code": None,
            }
            events.append(_sse(None, {"error": err}))
    elif route.api == "openai_responses":
        events = list(_responses_events(route, ctx, reply, cut))
        if in_stream_error:
            # The shape the real API sends (the error nested under "error"), not the flat
            # `ResponseErrorEvent` the OpenAPI spec documents.
            err = {
                "type": "error",
                "sequence_number": len(events),
                "error": {
                    "type": "server_error",
                    "code": "server_error",
                    "message": _OPENAI_OVERLOADED,
                    "param": None,
                },
            }
            events.append(_sse("error", err))
    else:
        events = list(_gemini_events(route, ctx, reply, cut))
        if in_stream_error:
            err = {"error": {"code": 503, "message": _GEMINI_OVERLOADED, "status": "UNAVAILABLE"}}
            events.append(_sse(None, err, "\r\n\r\n"))
    if in_stream_error:
        return _stream_answer(route, ctx, events, close=True)
    if cut is not None:
        return _stream_answer(route, ctx, events, abort=not graceful, close=True)
    return _stream_answer(route, ctx, events)


# Anthropic Messages


def _anthropic_usage(ctx: Context, output_tokens: int) -> dict[str, Any]:
    """An Anthropic usage object."""
    return {
        "input_tokens": ctx.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


def _anthropic_message(route: Route, ctx: Context, reply: Reply) -> dict[str, Any]:
    """A complete Anthropic Message."""
    if reply.kind == "text":
        content: list[Any] = [{"type": "text", "text": reply.content}]
    else:
        content = [
            {
                "type": "tool_use",
                "id": ctx.ident("toolu_"),
                "name": reply.tool_name,
                "input": dict(reply.tool_arguments),
            }
        ]
    return {
        "id": ctx.ident("msg_"),
        "type": "message",
        "role": "assistant",
        "model": _model(route),
        "content": content,
        "stop_reason": "end_turn" if reply.kind == "text" else "tool_use",
        "stop_sequence": None,
        "usage": _anthropic_usage(ctx, _out_tokens(reply)),
    }


def _anthropic_events(route: Route, ctx: Context, reply: Reply, cut: int | None) -> Iterator[bytes]:
    """Anthropic Messages SSE events; `cut` stops after that many deltas."""
    start = _anthropic_message(route, ctx, reply)
    start.update(content=[], stop_reason=None, usage=_anthropic_usage(ctx, 1))
    yield _sse("message_start", {"type": "message_start", "message": start})
    if reply.kind == "text":
        block: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in _pieces(reply.content)]
    else:
        block = {
            "type": "tool_use",
            "id": ctx.ident("toolu_"),
            "name": reply.tool_name,
            "input": {},
        }
        deltas = [
            {"type": "input_json_delta", "partial_json": p} for p in _arg_pieces(_args_json(reply))
        ]
    yield _sse(
        "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
    )
    yield _sse("ping", {"type": "ping"})
    for delta in deltas[:cut]:
        yield _sse(
            "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        )
    if cut is not None:
        return
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    stop = "end_turn" if reply.kind == "text" else "tool_use"
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": _out_tokens(reply)},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


# OpenAI Chat Completions


def _chat_usage(ctx: Context, reply: Reply) -> dict[str, Any]:
    """An OpenAI chat usage object."""
    out = _out_tokens(reply)
    return {
        "prompt_tokens": ctx.input_tokens,
        "completion_tokens": out,
        "total_tokens": ctx.input_tokens + out,
    }


def _chat_completion(route: Route, ctx: Context, reply: Reply) -> dict[str, Any]:
    """A complete OpenAI chat.completion."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "annotations": [],
    }
    if reply.kind == "text":
        message["content"] = reply.content
    else:
        message["tool_calls"] = [
            {
                "id": ctx.ident("call_"),
                "type": "function",
                "function": {"name": reply.tool_name, "arguments": _args_json(reply)},
            }
        ]
    return {
        "id": ctx.ident("chatcmpl-"),
        "object": "chat.completion",
        "created": ctx.created,
        "model": _model(route),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "stop" if reply.kind == "text" else "tool_calls",
            }
        ],
        "usage": _chat_usage(ctx, reply),
        "service_tier": "default",
        "system_fingerprint": None,
    }


def _chat_events(route: Route, ctx: Context, reply: Reply, cut: int | None) -> Iterator[bytes]:
    """OpenAI chat.completion.chunk SSE events ending in [DONE]; `cut` drops the end."""

    def chunk(delta: dict[str, Any], finish: str | None) -> bytes:
        """One chat.completion.chunk event."""
        doc: dict[str, Any] = {
            "id": ctx.ident("chatcmpl-"),
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": _model(route),
            "service_tier": "default",
            "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if ctx.include_usage:
            doc["usage"] = None
        return _sse(None, doc)

    if reply.kind == "text":
        yield chunk({"role": "assistant", "content": "", "refusal": None}, None)
        deltas: list[dict[str, Any]] = [{"content": p} for p in _pieces(reply.content)]
    else:
        call = {
            "index": 0,
            "id": ctx.ident("call_"),
            "type": "function",
            "function": {"name": reply.tool_name, "arguments": ""},
        }
        yield chunk({"role": "assistant", "content": None, "tool_calls": [call]}, None)
        deltas = [
            {"tool_calls": [{"index": 0, "function": {"arguments": p}}]}
            for p in _arg_pieces(_args_json(reply))
        ]
    for delta in deltas[:cut]:
        yield chunk(delta, None)
    if cut is not None:
        return
    yield chunk({}, "stop" if reply.kind == "text" else "tool_calls")
    if ctx.include_usage:
        yield _sse(
            None,
            {
                "id": ctx.ident("chatcmpl-"),
                "object": "chat.completion.chunk",
                "created": ctx.created,
                "model": _model(route),
                "service_tier": "default",
                "system_fingerprint": None,
                "choices": [],
                "usage": _chat_usage(ctx, reply),
            },
        )
    yield b"data: [DONE]\n\n"


# OpenAI Responses


def _responses_item(ctx: Context, reply: Reply, *, done: bool = True) -> dict[str, Any]:
    """A Responses output item (message or function_call), done or in progress."""
    status = "completed" if done else "in_progress"
    if reply.kind == "text":
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": reply.content}
        return {
            "id": ctx.ident("msg_"),
            "type": "message",
            "status": status,
            "content": [part] if done else [],
            "role": "assistant",
        }
    return {
        "id": ctx.ident("fc_"),
        "type": "function_call",
        "status": status,
        "arguments": _args_json(reply) if done else "",
        "call_id": ctx.ident("call_"),
        "name": reply.tool_name,
    }


def _response_obj(
    route: Route, ctx: Context, status: str, output: list[Any], reply: Reply
) -> dict[str, Any]:
    """An OpenAI Responses `response` object."""
    usage = None
    if status == "completed":
        out = _out_tokens(reply)
        usage = {
            "input_tokens": ctx.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": ctx.input_tokens + out,
        }
    return {
        "id": ctx.ident("resp_"),
        "object": "response",
        "created_at": ctx.created,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": _model(route),
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


def _responses_events(route: Route, ctx: Context, reply: Reply, cut: int | None) -> Iterator[bytes]:
    """OpenAI Responses SSE events with sequence numbers; `cut` drops the end."""
    seq = 0

    def event(kind: str, **fields: Any) -> bytes:
        """One Responses event with the next sequence number."""
        nonlocal seq
        doc = {"type": kind, "sequence_number": seq, **fields}
        seq += 1
        return _sse(kind, doc)

    pending = _response_obj(route, ctx, "in_progress", [], reply)
    yield event("response.created", response=pending)
    yield event("response.in_progress", response=pending)
    item = _responses_item(ctx, reply, done=False)
    item_id = item["id"]
    yield event("response.output_item.added", output_index=0, item=item)
    where = {"item_id": item_id, "output_index": 0}
    if reply.kind == "text":
        empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        yield event("response.content_part.added", **where, content_index=0, part=empty)
        for piece in _pieces(reply.content)[:cut]:
            yield event(
                "response.output_text.delta", **where, content_index=0, delta=piece, logprobs=[]
            )
        if cut is not None:
            return
        yield event(
            "response.output_text.done", **where, content_index=0, text=reply.content, logprobs=[]
        )
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": reply.content}
        yield event("response.content_part.done", **where, content_index=0, part=part)
    else:
        for piece in _arg_pieces(_args_json(reply))[:cut]:
            yield event("response.function_call_arguments.delta", **where, delta=piece)
        if cut is not None:
            return
        yield event(
            "response.function_call_arguments.done",
            **where,
            name=reply.tool_name,
            arguments=_args_json(reply),
        )
    done_item = _responses_item(ctx, reply)
    yield event("response.output_item.done", output_index=0, item=done_item)
    final = _response_obj(route, ctx, "completed", [done_item], reply)
    yield event("response.completed", response=final)


# Gemini


def _gemini_usage(ctx: Context, out: int | None) -> dict[str, Any]:
    """Gemini usageMetadata; without output tokens for a partial chunk."""
    if out is None:
        return {"promptTokenCount": ctx.input_tokens, "totalTokenCount": ctx.input_tokens}
    return {
        "promptTokenCount": ctx.input_tokens,
        "candidatesTokenCount": out,
        "totalTokenCount": ctx.input_tokens + out,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": ctx.input_tokens}],
    }


def _gemini_chunk(
    route: Route, ctx: Context, parts: list[Any], finish: bool, out: int | None
) -> dict[str, Any]:
    """One GenerateContentResponse (a whole reply or a stream chunk)."""
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish:
        candidate["finishReason"] = "STOP"
    candidate["index"] = 0
    return {
        "candidates": [candidate],
        "usageMetadata": _gemini_usage(ctx, out),
        "modelVersion": _model(route),
        "responseId": ctx.ident(""),
    }


def _gemini_parts(reply: Reply) -> list[Any]:
    """The content parts of a reply: text or a functionCall."""
    if reply.kind == "text":
        return [{"text": reply.content}]
    return [{"functionCall": {"name": reply.tool_name, "args": dict(reply.tool_arguments)}}]


def _gemini_body(route: Route, ctx: Context, reply: Reply) -> dict[str, Any]:
    """A complete Gemini GenerateContentResponse."""
    return _gemini_chunk(route, ctx, _gemini_parts(reply), True, _out_tokens(reply))


def _gemini_events(route: Route, ctx: Context, reply: Reply, cut: int | None) -> Iterator[bytes]:
    """Gemini SSE chunks; the last carries finishReason unless `cut`."""
    if reply.kind == "text":
        chunks = [[{"text": p}] for p in _pieces(reply.content)] or [[{"text": ""}]]
    else:
        chunks = [_gemini_parts(reply)]  # Gemini sends a function call whole, in one chunk
    if cut is not None:
        for parts in chunks[:cut]:
            yield _sse(None, _gemini_chunk(route, ctx, parts, False, None), "\r\n\r\n")
        return
    last = len(chunks) - 1
    for i, parts in enumerate(chunks):
        final = i == last
        doc = _gemini_chunk(route, ctx, parts, final, _out_tokens(reply) if final else None)
        yield _sse(None, doc, "\r\n\r\n")


def _gemini_blocked(route: Route, ctx: Context) -> Answer:
    """A 200 whose only candidate finished for SAFETY, JSON or SSE."""
    ratings = [
        {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
    ]
    doc = {
        "candidates": [{"finishReason": "SAFETY", "index": 0, "safetyRatings": ratings}],
        "usageMetadata": _gemini_usage(ctx, None),
        "modelVersion": _model(route),
        "responseId": ctx.ident(""),
    }
    if route.stream:
        return _stream_answer(route, ctx, [_sse(None, doc, "\r\n\r\n")])
    return _json_answer(route, ctx, 200, doc)

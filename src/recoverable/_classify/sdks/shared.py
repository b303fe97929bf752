"""What the SDK families share: the phase of a transport error, the headers an SDK's error
keeps, its HTTP answer with the SDK's own request id, and the SDK a bare transport error came
through."""

from __future__ import annotations

from ..._core.detail import MAX_CAUSE_DEPTH, ErrorDetail, from_row
from ..._core.untrusted import is_clean
from ..http import (
    ProviderBody,
    decide,
    header_value,
    hint_ms,
    httpx_header_map,
    httpx_lacks,
    latin1,
    provider_detail,
)
from ..http.remembered import remembered
from ..pipeline import Handler, raised_by

__all__ = [
    "OPENAI_COMPATIBLE",
    "SDK_SOURCES",
    "headers_of",
    "phase_of",
    "sdk_answer_detail",
    "sdk_source",
    "sdk_status_detail",
    "status_error",
]

# Transport classes (httpx and httpx2 share the names; then urllib3's, under requests) by the
# one question a wrapper's error needs answered: nothing sent (connect), or maybe sent (read).
# The handlers of `http_clients` name the finer phase of an error raised bare (pool, write).
_PHASES = {
    **dict.fromkeys(("ConnectError", "ConnectTimeout", "PoolTimeout", "UnsupportedProtocol",
                     "NewConnectionError", "ConnectTimeoutError"), "connect"),
    **dict.fromkeys(("ReadError", "ReadTimeout", "WriteError", "WriteTimeout",
                     "RemoteProtocolError", "CloseError", "ProtocolError", "ReadTimeoutError"),
                    "read"),
}  # fmt: skip
_phase_by_type: dict[type, str | None] = {}


def _phase_of_type(kind: type) -> str | None:
    phase = _phase_by_type.get(kind, "")
    if phase == "":
        phase = next((_PHASES[k.__name__] for k in kind.__mro__ if k.__name__ in _PHASES), None)
        if len(_phase_by_type) < 1024:  # bounded: classes made at run time must not grow it
            _phase_by_type[kind] = phase
    return phase


def phase_of(exc: BaseException) -> str | None:
    """`connect` when the request never left, `read` when it may have; None when unknown."""
    link: BaseException | None = exc
    for _ in range(MAX_CAUSE_DEPTH):  # the chain as `cause_chain` walks it, without the list
        if link is None:
            break
        kind = type(link)
        phase = _phase_by_type.get(kind, "")
        if phase == "":
            phase = _phase_of_type(kind)
        if phase is not None:
            return phase
        cause = link.__cause__
        if cause is None and not link.__suppress_context__:
            cause = link.__context__
        link = cause
    return None


def headers_of(exc: BaseException) -> object:
    """The headers an SDK's error keeps: its response's, else its own."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    # `is None`, not `or`: the truth of httpx's Headers is a Python-level `__len__` call.
    return getattr(exc, "headers", None) if headers is None else headers


def _call_facts(
    exc: BaseException, retryable: bool, body: ProviderBody
) -> tuple[int | None, str | None]:
    """What an SDK's HTTP error says of its own call: (the wait hint when the row is
    retryable, the request id: the SDK's, else the body's, else the headers')."""
    request_id = getattr(exc, "request_id", None)  # the SDK's, from the headers
    if type(request_id) is not str:
        request_id = body.request_id or None
    if not retryable and request_id is not None:
        return None, request_id
    # The headers are read only when needed: for a wait hint, or a request id that neither the
    # SDK nor the body has (groq, together, ...); httpx's in one pass over its own list.
    headers = headers_of(exc)
    if not retryable and (headers is None or httpx_lacks(headers, b"x-request-id")):
        return None, None  # only a request id was wanted, and the headers hold none
    found = httpx_header_map(headers)
    hint = hint_ms(headers, body, None, found) if retryable else None
    if request_id is None and headers is not None:
        request_id = (
            header_value(headers, "x-request-id")
            if found is None
            else latin1(found.get(b"x-request-id"))
        )
    return hint, request_id


def sdk_status_detail(
    exc: BaseException, status: int, body: ProviderBody, source: str
) -> ErrorDetail:
    """An SDK's HTTP error, its body read: the shared decision, with the SDK's own request id."""
    row = decide(status, body)
    hint, request_id = _call_facts(exc, row.retryable, body)
    return provider_detail(row, status, body, source=source, hint=hint, request_id=request_id)


def sdk_answer_detail(exc: BaseException, status: int, raw: object, source: str) -> ErrorDetail:
    """An SDK's HTTP error from its status and raw body: the decision remembered for them
    (`http.remembered`), filled in with this error's request id and wait; else the full path."""
    decision = remembered(status, raw) if type(status) is int else None
    if decision is None:
        return sdk_status_detail(exc, status, ProviderBody.read(raw), source)
    row = decision.row
    hint, request_id = _call_facts(exc, row.retryable, decision.body)
    if request_id is None:
        details = dict(decision.details)
    elif is_clean(request_id):
        details = {"request_id": request_id, **decision.details}
    else:  # the full path cleans the message and the details with it
        return sdk_status_detail(exc, status, decision.body, source)
    for name in decision.lists:  # lists of texts (Google's quota_ids): a list of its own each
        details[name] = list(details[name])
    return from_row(row, decision.message, hint, decision.status, source, details=details)


def status_error(source: str) -> Handler:
    """The handler of an SDK's HTTP error class (`status_code`, `body`): None without a status."""

    def handler(exc: BaseException) -> ErrorDetail | None:
        status = getattr(exc, "status_code", None)
        if not isinstance(status, int):
            return None
        return sdk_answer_detail(exc, status, getattr(exc, "body", None), source)

    return handler


# groq, together, fireworks-ai and cerebras-cloud-sdk (its classes live in `cerebras.cloud.sdk`):
# the package is the source.
OPENAI_COMPATIBLE = ("groq", "together", "fireworks", "cerebras")


# Where a transport error escapes an SDK unwrapped (anthropic's stream iterator, google-genai),
# the SDK's frames in its traceback are the provider context.
SDK_SOURCES = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google.genai": "google",
    "google.api_core": "google",
    "google.auth": "google",  # the Google Cloud REST clients' requests session
    **{package: package for package in OPENAI_COMPATIBLE},
    "mistralai": "mistral",
    "ollama": "ollama",
    "cohere": "cohere",
    "huggingface_hub": "huggingface",
}


def sdk_source(exc: BaseException) -> str | None:
    """The provider whose SDK's frames are in the error's traceback, or None."""
    package = raised_by(exc, SDK_SOURCES)
    return None if package is None else SDK_SOURCES[package]

"""Handlers for the provider SDKs' and HTTP clients' exceptions, by (package, class name).

No SDK is imported: each handler reads the attributes the SDK documents (`status_code`,
`body`, `response.headers`, Google `code` / `status` / `details`, ...) and hands them to the
same HTTP decision tables a raw HTTP answer goes through. litellm's classes subclass openai's,
and the MRO puts them first; pydantic-ai, claude-agent-sdk and the HTTP client libraries
(httpx/httpx2, requests, aiohttp) have their own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..._core.detail import MAX_CAUSE_DEPTH, ErrorDetail, copy_with, unvalidated, with_details
from ..._core.untrusted import MAX_HINT_MS, clean_hint_ms, clean_text
from ..credentials import missing_key, missing_key_in_chain
from ..http import (
    ProviderBody,
    decide,
    from_http,
    header_value,
    hint_ms,
    httpx_header_map,
    latin1,
    message_code,
    parse_body,
    parsed_http,
    provider_detail,
    retry_after_ms,
)
from ..http.clients import client_status_error
from ..pipeline import (
    Handler,
    always,
    cause_chain,
    classify_by_class,
    error_message,
    package_of,
    raised_by,
)
from ..text import status_line
from .bedrock import BOTOCORE_CLASSES, URLLIB3_CLASSES
from .grpc import GRPC_CLASSES, RPC_CODES, RPC_STATUS, rpc_error

__all__ = ["HANDLERS"]

# Transport classes (httpx and httpx2 share the names; then urllib3's, under requests) by the
# one question a wrapper's error needs answered: nothing sent (connect), or maybe sent (read).
# The handlers below name the finer phase of an error raised bare (pool, write).
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


def _phase_of(exc: BaseException) -> str | None:
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


def _headers_of(exc: BaseException) -> object:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    # `is None`, not `or`: the truth of httpx's Headers is a Python-level `__len__` call.
    return getattr(exc, "headers", None) if headers is None else headers


# --- openai and anthropic (one shape: APIStatusError / APIConnectionError / APITimeoutError) -----


def _sdk_status_detail(
    exc: BaseException, status: int, body: ProviderBody, source: str
) -> ErrorDetail:
    """An SDK's HTTP error: the shared decision, with the SDK's own request id."""
    row = decide(status, body)
    request_id = getattr(exc, "request_id", None)  # the SDK's, from the headers
    if type(request_id) is not str:
        request_id = body.request_id or None
    # The headers are read only when needed: for a wait hint, or a request id that neither the
    # SDK nor the body has (groq, together, ...); httpx's in one pass over its own list.
    if row.retryable or request_id is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)  # `_headers_of`
        if headers is None:
            headers = getattr(exc, "headers", None)
        found = httpx_header_map(headers)
        hint = hint_ms(headers, body, None, found) if row.retryable else None
        if request_id is None and headers is not None:
            request_id = (
                header_value(headers, "x-request-id")
                if found is None
                else latin1(found.get(b"x-request-id"))
            )
    else:
        hint = None
    return provider_detail(row, status, body, source=source, hint=hint, request_id=request_id)


def _status_error(source: str) -> Handler:
    def handler(exc: BaseException) -> ErrorDetail | None:
        status = getattr(exc, "status_code", None)
        if not isinstance(status, int):
            return None
        return _sdk_status_detail(
            exc, status, ProviderBody.read(getattr(exc, "body", None)), source
        )

    return handler


def _stream_error(source: str) -> Handler:
    """An error event inside a stream: a body and no status (openai's bare APIError)."""

    def handler(exc: BaseException) -> ErrorDetail:
        body = ProviderBody.read(getattr(exc, "body", None))
        if not body.message:
            body = body._replace(message=error_message(exc))
        return parsed_http(None, None, body, source)

    return handler


def _connection_error(source: str) -> Handler:
    def handler(exc: BaseException) -> ErrorDetail:
        phase = _phase_of(exc)
        code = "provider_unreachable" if phase == "connect" else "provider_connection_lost"
        return unvalidated(
            code, error_message(exc), source=source, details={"phase": phase} if phase else None
        )

    return handler


def _openai_family(source: str) -> dict[str, Handler]:
    """openai's classes, and anthropic's of the same names (both SDKs are generated alike)."""
    return {
        "APIStatusError": _status_error(source),
        "APIError": _stream_error(source),
        "APIConnectionError": _connection_error(source),
        "APITimeoutError": always("provider_timeout", source=source),
        "APIResponseValidationError": always("provider_bad_response", source=source),
        "LengthFinishReasonError": always("provider_output_truncated", source=source),
        "ContentFilterFinishReasonError": always("provider_content_filtered", source=source),
    }


# groq, together, fireworks-ai and cerebras-cloud-sdk (its classes live in `cerebras.cloud.sdk`):
# the package is the source.
_OPENAI_COMPATIBLE = ("groq", "together", "fireworks", "cerebras")


# --- mistralai (Speakeasy-generated: one HTTP error class, the body as text) -----------------


def _mistral_unreadable(exc: BaseException) -> ErrorDetail:
    """An answer the SDK could not read: a stream's error event (which mistralai has no class
    for, so it fails to parse it as a chunk and keeps it as `{"data": event}`), else a bad
    response."""
    data = parse_body(getattr(exc, "body", None))
    event = data.get("data") if type(data) is dict else None
    if type(event) is dict and event.get("error"):
        return parsed_http(None, None, ProviderBody.read(event), "mistral")
    return unvalidated("provider_bad_response", error_message(exc), source="mistral")


_MISTRAL_CLASSES: dict[str, Handler] = {
    "MistralError": _status_error("mistral"),  # SDKError, HTTPValidationError: status, body
    "ResponseValidationError": _mistral_unreadable,
    "NoResponseError": always("provider_connection_lost", source="mistral"),
}


# --- ollama ---------------------------------------------------------------------------------


def _ollama_response_error(exc: BaseException) -> ErrorDetail:
    """`ResponseError`: Ollama's one sentence and the status (-1 for a stream's error line).
    The SDK keeps no headers, so no wait hint can be read."""
    status = getattr(exc, "status_code", None)
    text = getattr(exc, "error", None)
    message = text if isinstance(text, str) else error_message(exc)
    known = isinstance(status, int) and not isinstance(status, bool) and status > 0
    body = ProviderBody(message=message, has_error=True)
    return parsed_http(status if known else None, None, body, "ollama")


# --- cohere (Fern-generated: ApiError with status_code, body and headers) -------------------

# Cohere's own statuses: 498 an invalid or expired key, 499 a request its caller cancelled.
_COHERE_STATUS = {498: "provider_auth_failed", 499: "run_cancelled"}


def _cohere_api_error(exc: BaseException) -> ErrorDetail | None:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):  # raised before any request: a client with no key
        return missing_key("cohere", exc)
    own = _COHERE_STATUS.get(status)
    if own is not None:
        return unvalidated(own, error_message(exc), status=status, source="cohere")
    body = ProviderBody.read(getattr(exc, "body", None))
    return _sdk_status_detail(exc, status, body, "cohere")


# --- google-genai ----------------------------------------------------------------------------


def _google_api_error(exc: BaseException) -> ErrorDetail | None:
    status = getattr(exc, "code", None)
    if not isinstance(status, int):
        return None
    body = getattr(exc, "details", None)
    if type(body) is not dict:
        body = {
            "error": {
                "code": status,
                "status": getattr(exc, "status", None),
                "message": getattr(exc, "message", None),
            }
        }
    return _sdk_status_detail(exc, status, ProviderBody.read(body), "google")


# --- google-api-core (Vertex AI and the Google Cloud clients) --------------------------------

# The gRPC classes' canonical names, for when grpcio is absent (their `grpc_status_code` is None).
_RPC_CLASSES = {
    "ResourceExhausted": "RESOURCE_EXHAUSTED", "ServiceUnavailable": "UNAVAILABLE",
    "DeadlineExceeded": "DEADLINE_EXCEEDED", "InvalidArgument": "INVALID_ARGUMENT",
    "PermissionDenied": "PERMISSION_DENIED", "Unauthenticated": "UNAUTHENTICATED",
    "FailedPrecondition": "FAILED_PRECONDITION", "OutOfRange": "OUT_OF_RANGE",
    "Unknown": "UNKNOWN", "Cancelled": "CANCELLED", "Aborted": "ABORTED",
    "DataLoss": "DATA_LOSS",
}  # fmt: skip


def _rpc_name(exc: BaseException) -> str | None:
    """The google.rpc canonical name: grpcio's enum, a bare number, else the class's own."""
    code = getattr(exc, "grpc_status_code", None)
    name = getattr(code, "name", None)  # grpc.StatusCode
    if isinstance(name, str):
        return name
    if type(code) is int and code in RPC_CODES:
        return RPC_CODES[code][0]
    names = (klass.__name__ for klass in type(exc).__mro__)
    return next((_RPC_CLASSES[n] for n in names if n in _RPC_CLASSES), None)


def _wrapped_rpc_error(exc: BaseException) -> ErrorDetail | None:
    """The gRPC error a Google Cloud client's transport wrapped (`grpc_helpers.wrap_errors`
    keeps it as `response` and `__cause__`): its trailing `google.rpc.Status` holds the
    quota's id and the RetryInfo wait, which the wrapper keeps only with grpcio-status
    installed, and then as proto messages."""
    for inner in (getattr(exc, "response", None), exc.__cause__):
        if isinstance(inner, BaseException) and package_of(type(inner).__module__) == "grpc":
            found = rpc_error(inner)
            if found is not None:
                return found
    return None


def _google_call_error(exc: BaseException) -> ErrorDetail | None:
    """`GoogleAPICallError`: the answer's own body when the error came from an HTTP response
    (`from_http_response` keeps it), else its message, status and JSON details; the gRPC
    name lets RESOURCE_EXHAUSTED go through google-genai's quota-vs-rate rule."""
    name = _rpc_name(exc)
    if name == "CANCELLED":  # the caller's own cancellation, not the provider's answer
        return unvalidated("run_cancelled", error_message(exc), source="google")
    wrapped = _wrapped_rpc_error(exc)
    if wrapped is not None:
        return copy_with(wrapped, source="google")
    status = getattr(exc, "code", None)
    if not isinstance(status, int) or isinstance(status, bool):
        status = RPC_STATUS.get(name) if name else None
    if status is None:
        return None
    data = parse_body(getattr(getattr(exc, "response", None), "_content", None))
    error = data.get("error") if type(data) is dict else None
    if type(error) is not dict:
        details = getattr(exc, "details", None)
        error = {
            "code": status,
            "message": getattr(exc, "message", None),
            "details": [d for d in details if type(d) is dict] if type(details) is list else [],
        }
    if name and not error.get("status"):
        error = {**error, "status": name}
    return _sdk_status_detail(exc, status, ProviderBody.read({"error": error}), "google")


# --- huggingface-hub (InferenceClient: httpx2 underneath) ------------------------------------


def _hf_http_error(exc: BaseException) -> ErrorDetail | None:
    """`HfHubHTTPError` and its subclasses: the response it keeps (status, body, headers)."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if not isinstance(status, int) or isinstance(status, bool):
        return None
    try:
        content: object = response.content  # type: ignore[union-attr]
    except Exception:  # a streamed response that was never read
        content = None
    body = ProviderBody.read(content)
    if not body.message:
        server = getattr(exc, "server_message", None)
        text = server if isinstance(server, str) and server else error_message(exc)
        body = body._replace(message=text, has_error=True)
    return parsed_http(status, getattr(response, "headers", None), body, "huggingface")


def _hf_stream_error(exc: BaseException) -> ErrorDetail:
    """A stream's error line: the `error` it carried (a dict from an OpenAI-compatible server,
    Text Generation Inference's sentence) is the exception's argument."""
    error = exc.args[0] if exc.args else None
    if type(error) is dict:
        return parsed_http(None, None, ProviderBody.read({"error": error}), "huggingface")
    body = ProviderBody(message=error_message(exc), has_error=True)
    return parsed_http(None, None, body, "huggingface")


_HF_CLASSES: dict[str, Handler] = {
    "HfHubHTTPError": _hf_http_error,
    "TextGenerationError": _hf_stream_error,
    "OverloadedError": always("provider_overloaded", source="huggingface"),
    "ValidationError": always("provider_invalid_request", source="huggingface"),  # TGI's
    "IncompleteGenerationError": always("provider_output_truncated", source="huggingface"),
    "InferenceTimeoutError": always("provider_timeout", source="huggingface"),
}


# --- langchain-core ----------------------------------------------------------------------------

# An integration's own error subclasses its SDK's class first (langchain-openai's
# OpenAIRateLimitError is an openai.RateLimitError), so the SDK's handler reads it; these
# langchain-core bases decide only when no SDK class is known. A bad model output is the
# provider's bad response.
_LANGCHAIN_CLASSES: dict[str, Handler] = {
    name: always(code, source="langchain")
    for name, code in {
        "OutputParserException": "provider_bad_response",
        "ContextOverflowError": "provider_context_too_long",
        "ModelRateLimitError": "provider_rate_limited",
        "ModelAuthenticationError": "provider_auth_failed",
        "ModelPermissionDeniedError": "provider_permission_denied",
        "ModelNotFoundError": "provider_model_not_found",
        "ModelInvalidRequestError": "provider_invalid_request",
        "ModelRefusalError": "provider_content_filtered",
        "ModelTimeoutError": "provider_timeout",
        "ModelConnectionError": "provider_connection_lost",
    }.items()
}


# --- litellm ---------------------------------------------------------------------------------

_LITELLM_PROVIDERS = {"gemini": "google", "vertex_ai": "google", "vertex_ai_beta": "google"}
_LITELLM_PREFIX = "litellm."


_GENERIC_PROVIDER_CODES = frozenset({"provider_invalid_request", "provider_server_error"})


def _litellm(default: str) -> Handler:
    """The provider's own answer when litellm kept it; litellm's class only when it knows more.

    litellm drops the provider's status (an Anthropic 529 becomes a 500) and calls billing a
    rate limit, but keeps the provider's error as `__context__` (an SDK exception, or its own
    wrapper holding the raw status and body) and sometimes the parsed body as `.body`.
    """

    def handler(exc: BaseException) -> ErrorDetail:
        provider = getattr(exc, "llm_provider", None)
        source = _LITELLM_PROVIDERS.get(provider, provider) if isinstance(provider, str) else None
        inner = exc.__cause__ or exc.__context__
        detail = classify_by_class(inner) if inner is not None else None
        if detail is None:
            detail = missing_key_in_chain(inner)
        if detail is None:
            detail = _litellm_structured(exc, inner, source)
        if detail is None or (
            detail.code in _GENERIC_PROVIDER_CODES and default not in _GENERIC_PROVIDER_CODES
        ):
            detail = _litellm_by_class(exc, default, source, detail)
        if detail.source is None and source is not None:
            detail = copy_with(detail, source=source)
        return with_details(detail, litellm_exception=type(exc).__name__)

    return handler


def _litellm_structured(
    exc: BaseException, inner: BaseException | None, source: str | None
) -> ErrorDetail | None:
    status = getattr(inner, "status_code", None)
    if isinstance(status, int):  # litellm's wrapper of the provider's raw answer
        text = getattr(inner, "message", None)
        found = status_line(text) if isinstance(text, str) else None
        body = found[1] if found is not None else text
        return from_http(status, getattr(inner, "headers", None), body, source=source)
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    if isinstance(status, int) and isinstance(body, Mapping):
        return from_http(status, _headers_of(exc), body, source=source)
    return None


def _litellm_by_class(
    exc: BaseException, default: str, source: str | None, structured: ErrorDetail | None
) -> ErrorDetail:
    message = error_message(exc)
    text = message.split(": ", 1)[1] if message.startswith(_LITELLM_PREFIX) else message
    code = default
    if default in _GENERIC_PROVIDER_CODES or default == "provider_rate_limited":
        # litellm calls billing a rate limit; its message still names the quota code.
        if "insufficient_quota" in text or "billing_hard_limit_reached" in text:
            code = "provider_quota_exceeded"
        else:
            code = message_code(text) or default
    status = structured.status if structured is not None else getattr(exc, "status_code", None)
    hint = retry_after_ms(_headers_of(exc)) if code == "provider_rate_limited" else None
    return ErrorDetail.create(
        code,
        text,
        retry_after_ms=hint,
        status=status if isinstance(status, int) else None,
        source=source,
    )


_LITELLM_CLASSES = {
    "ContextWindowExceededError": "provider_context_too_long",
    "ContentPolicyViolationError": "provider_content_filtered",
    "RateLimitError": "provider_rate_limited",
    "Timeout": "provider_timeout",
    "APIConnectionError": "provider_connection_lost",
    "ServiceUnavailableError": "provider_overloaded",
    "MidStreamFallbackError": "provider_connection_lost",
    "BadGatewayError": "provider_server_error",
    "InternalServerError": "provider_server_error",
    "APIError": "provider_server_error",
    "AuthenticationError": "provider_auth_failed",
    "PermissionDeniedError": "provider_permission_denied",
    "NotFoundError": "provider_model_not_found",
    "BadRequestError": "provider_invalid_request",
    "UnprocessableEntityError": "provider_invalid_request",
    "UnsupportedParamsError": "provider_invalid_request",
    "PaymentRequiredError": "provider_quota_exceeded",
    "BudgetExceededError": "run_budget_exceeded",
    "JSONSchemaValidationError": "provider_bad_response",
    "APIResponseValidationError": "provider_bad_response",
}


# --- pydantic-ai ------------------------------------------------------------------------------

_PYDANTIC_AI_CLASSES = {
    "ModelRateLimitError": "provider_rate_limited",
    "ModelQuotaExceededError": "provider_quota_exceeded",
    "ModelUnavailableError": "provider_overloaded",
    "ModelOverloadedError": "provider_overloaded",
    "ModelServerError": "provider_server_error",
    "ModelTimeoutError": "provider_timeout",
    "ModelContextWindowExceededError": "provider_context_too_long",
    "ModelAuthenticationError": "provider_auth_failed",
    "ModelNotFoundError": "provider_model_not_found",
    "ModelRequestRejectedError": "provider_invalid_request",
    "ModelRequestTimeout": "provider_timeout",
    "ContentFilterError": "provider_content_filtered",
    "OutputTokenLimitExceeded": "provider_output_truncated",
    "UnexpectedModelBehavior": "provider_bad_response",
    "UsageLimitExceeded": "run_budget_exceeded",
    "RunCancelled": "run_cancelled",
    "RunTimedOut": "run_timeout",
}


def _pydantic_ai(code: str) -> Handler:
    def handler(exc: BaseException) -> ErrorDetail:
        status = getattr(exc, "status_code", None)
        retry_after = getattr(exc, "retry_after", None)  # seconds
        hint = None
        if isinstance(retry_after, (int, float)) and retry_after >= 0:
            hint = clean_hint_ms(min(retry_after, MAX_HINT_MS / 1000) * 1000)
        extra = {
            "error_code": getattr(exc, "provider_error_code", None),
            "error_type": getattr(exc, "provider_error_type", None),
            "model": getattr(exc, "model_name", None),
            "in_stream": getattr(exc, "in_stream", None) or None,
        }
        cause = exc.__cause__  # pydantic-ai keeps the provider SDK's error here
        source = _SDK_SOURCES.get(package_of(type(cause).__module__)) if cause else None
        return ErrorDetail.create(
            code,
            error_message(exc),
            retry_after_ms=hint,
            status=status if isinstance(status, int) else None,
            source=source,
            details={key: value for key, value in extra.items() if value is not None},
        )

    return handler


def _pydantic_ai_connection(exc: BaseException) -> ErrorDetail:
    phase = getattr(exc, "phase", None) or _phase_of(exc)
    code = "provider_unreachable" if phase in ("pool", "connect") else "provider_connection_lost"
    return ErrorDetail.create(code, error_message(exc), details={"phase": phase} if phase else None)


def _pydantic_ai_http(exc: BaseException) -> ErrorDetail | None:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        return None
    return from_http(status, getattr(exc, "headers", None), getattr(exc, "body", None))


# --- claude-agent-sdk -------------------------------------------------------------------------


def _claude_process_error(exc: BaseException) -> ErrorDetail:
    exit_code = getattr(exc, "exit_code", None)
    stderr = getattr(exc, "stderr", None)
    details: dict[str, Any] = {"exit_code": exit_code}
    if isinstance(exit_code, int) and exit_code < 0:
        # subprocess reports a signal death as -N: that is a signal, not an exit code.
        details = {"signal": -exit_code}
    killed = "signal" in details
    # claude-agent-sdk puts a placeholder here, not the stderr (its issue #798).
    if isinstance(stderr, str) and stderr and stderr != "Check stderr output for details":
        details["stderr_tail"] = stderr[-2000:]
    code = "cli_killed" if killed else "cli_crashed"
    return ErrorDetail.create(code, error_message(exc), source="claude", details=details)


_EXIT_CODE_IN_TEXT = re.compile(r"\(exit code: (-?\d+)\)$")


def _claude_connection_error(exc: BaseException) -> ErrorDetail:
    """The SDK lost its CLI: it had exited ("Cannot write to terminated process (exit code:
    N)") or never answered. Spawn failures are its subclass CLINotFoundError."""
    message = error_message(exc)
    found = _EXIT_CODE_IN_TEXT.search(message)
    if found is None:
        return unvalidated("cli_crashed", message, source="claude")
    exit_code = int(found.group(1))
    if exit_code < 0:
        return unvalidated("cli_killed", message, source="claude", details={"signal": -exit_code})
    return unvalidated("cli_crashed", message, source="claude", details={"exit_code": exit_code})


_CLAUDE_RESULT_SUBTYPES = {
    "error_max_turns": "run_max_turns",
    "error_max_budget_usd": "run_budget_exceeded",
    "max_turns": "run_max_turns",
}


def _claude_result_error(exc: BaseException) -> ErrorDetail:
    api_status = getattr(exc, "api_error_status", None)
    reason = getattr(exc, "terminal_reason", None) or getattr(exc, "subtype", None)
    extra = {
        "subtype": getattr(exc, "subtype", None),
        "terminal_reason": reason,
        "session_id": getattr(exc, "session_id", None),
    }
    if isinstance(api_status, int):
        errors = getattr(exc, "errors", None)
        text = "; ".join(str(e) for e in errors) if isinstance(errors, list) else None
        return with_details(from_http(api_status, None, text, source="claude"), **extra)
    code = _CLAUDE_RESULT_SUBTYPES.get(str(reason), "cli_crashed")
    return with_details(ErrorDetail.create(code, error_message(exc), source="claude"), **extra)


# --- the OpenAI Agents SDK (package `agents`) -----------------------------------------------

# The SDK raises its own classes for what the loop around the model decides; the model's HTTP
# failures reach the caller as openai's own exceptions, read above. A UserError is a misuse of
# the SDK by the program (a tool or model that does not exist, bad settings): its bug, never
# retried.
_GUARDRAIL_KINDS = {
    "InputGuardrailTripwireTriggered": "input",
    "OutputGuardrailTripwireTriggered": "output",
    "ToolInputGuardrailTripwireTriggered": "tool_input",
    "ToolOutputGuardrailTripwireTriggered": "tool_output",
}


def _guardrail(kind: str) -> Handler:
    """A tripwire: which guardrail (by the name its author gave it) and where it sits."""

    def handler(exc: BaseException) -> ErrorDetail:
        holder = getattr(getattr(exc, "guardrail_result", None), "guardrail", None)
        name = getattr(holder if holder is not None else getattr(exc, "guardrail", None),
                       "name", None)  # fmt: skip
        details: dict[str, Any] = {"guardrail": kind}
        if isinstance(name, str):
            details["guardrail_name"] = clean_text(name)
        return unvalidated("run_guardrail_triggered", error_message(exc), details=details)

    return handler


_AGENTS_CLASSES: dict[str, Handler] = {
    "MaxTurnsExceeded": always("run_max_turns"),
    "ModelBehaviorError": always("provider_bad_response"),
    "ModelRefusalError": always("provider_refused"),
    "ModelTimeoutError": always("provider_timeout"),
    "UserError": always("internal_error"),
    "ToolTimeoutError": always("tool_timeout"),
    "MCPToolCancellationError": always("tool_execution_failed"),
    **{name: _guardrail(kind) for name, kind in _GUARDRAIL_KINDS.items()},
}


# --- HTTP client libraries: httpx and httpx2, requests, aiohttp -------------------------------


def _httpx_status_error(exc: BaseException) -> ErrorDetail | None:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if not isinstance(status, int):
        return None
    url = getattr(getattr(response, "request", None), "url", None)
    try:
        body: object = response.content  # type: ignore[union-attr]
    except Exception:  # a streamed response that was never read
        body = None
    return client_status_error(status, response.headers, body, url, error_message(exc))  # type: ignore[union-attr]


def _requests_status_error(exc: BaseException) -> ErrorDetail | None:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if not isinstance(status, int):
        return None
    body = getattr(response, "_content", None)  # what was read; `.content` would read a stream
    return client_status_error(
        status,
        getattr(response, "headers", None),
        body if isinstance(body, bytes) else None,
        getattr(response, "url", None),
        error_message(exc),
    )


# Where a transport error escapes an SDK unwrapped (anthropic's stream iterator, google-genai),
# the SDK's frames in its traceback are the provider context.
_SDK_SOURCES = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google.genai": "google",
    "google.api_core": "google",
    "google.auth": "google",  # the Google Cloud REST clients' requests session
    **{package: package for package in _OPENAI_COMPATIBLE},
    "mistralai": "mistral",
    "ollama": "ollama",
    "cohere": "cohere",
    "huggingface_hub": "huggingface",
}


def _sdk_source(exc: BaseException) -> str | None:
    package = raised_by(exc, _SDK_SOURCES)
    return None if package is None else _SDK_SOURCES[package]


def _transport(code: str, provider_code: str, phase: str | None) -> Handler:
    """A transport failure: `provider_code` when raised through an SDK, else `code`."""

    def handler(exc: BaseException) -> ErrorDetail:
        source = _sdk_source(exc)
        return unvalidated(
            provider_code if source else code,
            error_message(exc),
            source=source,
            details={"phase": phase} if phase else None,
        )

    return handler


_CONNECT = ("network_error", "provider_unreachable")
_READ = ("network_error", "provider_connection_lost")
# A timeout after the request may have been sent: side effects unknown, so the generic code is
# not retryable; an SDK's request timeout is (the SDKs retry it themselves).
_TIMEOUT = ("timeout", "provider_timeout")

_HTTPX_CLASSES: dict[str, Handler] = {
    "ConnectError": _transport(*_CONNECT, "connect"),
    "ConnectTimeout": _transport(*_CONNECT, "connect"),
    "PoolTimeout": _transport(*_CONNECT, "pool"),
    "ProxyError": _transport(*_CONNECT, "connect"),
    "ReadError": _transport(*_READ, "read"),
    "WriteError": _transport(*_READ, "write"),
    "CloseError": _transport(*_READ, "read"),
    "RemoteProtocolError": _transport(*_READ, "read"),
    "ReadTimeout": _transport(*_TIMEOUT, "read"),
    "WriteTimeout": _transport(*_TIMEOUT, "write"),
    "TimeoutException": _transport(*_TIMEOUT, None),
    "UnsupportedProtocol": _transport("invalid_input", "invalid_input", None),
    "InvalidURL": _transport("invalid_input", "invalid_input", None),
    "HTTPStatusError": _httpx_status_error,
}


def _requests_connection_error(exc: BaseException) -> ErrorDetail:
    """requests raises one class for both phases: urllib3's error in the chain tells them apart.
    Raised through an SDK (Google Cloud's REST session), the phase names the provider code."""
    phase = _phase_of(exc)
    source = _sdk_source(exc)
    code = "network_error"
    if source is not None:
        code = "provider_unreachable" if phase == "connect" else "provider_connection_lost"
    return unvalidated(
        code, error_message(exc), source=source, details={"phase": phase} if phase else None
    )


def _requests_tls_error(exc: BaseException) -> ErrorDetail:
    # A certificate that does not verify will not verify on the next try either.
    names = {klass.__name__ for link in cause_chain(exc) for klass in type(link).__mro__}
    code = "precondition_failed" if "SSLCertVerificationError" in names else "network_error"
    return unvalidated(code, error_message(exc), details={"phase": "tls"})


_REQUESTS_CLASSES: dict[str, Handler] = {
    "ConnectionError": _requests_connection_error,
    "ConnectTimeout": _transport(*_CONNECT, "connect"),
    "ReadTimeout": _transport(*_TIMEOUT, "read"),
    "Timeout": _transport(*_TIMEOUT, None),
    "SSLError": _requests_tls_error,
    "ChunkedEncodingError": _transport(*_READ, "read"),
    "HTTPError": _requests_status_error,
    **dict.fromkeys(("InvalidURL", "MissingSchema", "InvalidSchema", "URLRequired",
                     "InvalidHeader"), always("invalid_input")),
}  # fmt: skip


def _aiohttp_status_error(exc: BaseException) -> ErrorDetail | None:
    """aiohttp's `raise_for_status()`: the body is already released, so status and host decide."""
    status = getattr(exc, "status", None)
    if not isinstance(status, int):
        return None
    url = getattr(getattr(exc, "request_info", None), "real_url", None)
    return client_status_error(status, getattr(exc, "headers", None), None, url, error_message(exc))


# google-genai's async streams run on aiohttp.
_AIOHTTP_CLASSES: dict[str, Handler] = {
    "ClientResponseError": _aiohttp_status_error,
    "ClientConnectorError": _transport(*_CONNECT, "connect"),
    "ConnectionTimeoutError": _transport(*_CONNECT, "connect"),
    "ServerDisconnectedError": _transport(*_READ, "read"),
    "ClientPayloadError": _transport(*_READ, "read"),
    "ClientOSError": _transport(*_READ, "read"),
    "ServerTimeoutError": _transport(*_TIMEOUT, "read"),
}


_GOOGLE_CLASSES: dict[str, Handler] = {
    "APIError": _google_api_error,
    "UnknownFunctionCallArgumentError": always("tool_input_invalid", source="google"),
    "UnsupportedFunctionError": always("tool_input_invalid", source="google"),
    "FunctionInvocationError": always("tool_execution_failed", source="google"),
    "UnknownApiResponseError": always("provider_bad_response", source="google"),
}

_CLAUDE_AGENT_SDK_CLASSES: dict[str, Handler] = {
    "CLINotFoundError": always("cli_not_found", source="claude"),
    "CLIConnectionError": _claude_connection_error,
    "ProcessError": _claude_process_error,
    "ResultError": _claude_result_error,
    "CLIJSONDecodeError": always("cli_output_invalid", source="claude"),
    "MessageParseError": always("cli_output_invalid", source="claude"),
}

_PYDANTIC_AI_OTHER_CLASSES: dict[str, Handler] = {
    "ModelConnectionError": _pydantic_ai_connection,
    "ModelHTTPError": _pydantic_ai_http,
}

# package -> {class name -> handler}
_PACKAGES: dict[str, dict[str, Handler]] = {
    "openai": _openai_family("openai"),
    "anthropic": _openai_family("anthropic"),
    # OpenAI-compatible APIs whose SDKs are generated like openai's, with their own classes.
    **{package: _openai_family(package) for package in _OPENAI_COMPATIBLE},
    "google.genai": _GOOGLE_CLASSES,
    "google.api_core": {"GoogleAPICallError": _google_call_error},
    "grpc": GRPC_CLASSES,
    "mistralai": _MISTRAL_CLASSES,
    "ollama": {"ResponseError": _ollama_response_error},
    "cohere": {"ApiError": _cohere_api_error},
    "huggingface_hub": _HF_CLASSES,
    "langchain_core": _LANGCHAIN_CLASSES,
    "litellm": {name: _litellm(code) for name, code in _LITELLM_CLASSES.items()},
    "pydantic_ai": {
        **{name: _pydantic_ai(code) for name, code in _PYDANTIC_AI_CLASSES.items()},
        **_PYDANTIC_AI_OTHER_CLASSES,
    },
    "claude_agent_sdk": _CLAUDE_AGENT_SDK_CLASSES,
    "agents": _AGENTS_CLASSES,
    "httpx": _HTTPX_CLASSES,
    "httpx2": _HTTPX_CLASSES,
    "requests": _REQUESTS_CLASSES,
    "aiohttp": _AIOHTTP_CLASSES,
    "botocore": BOTOCORE_CLASSES,  # boto3's errors; Amazon Bedrock's answers (`bedrock.py`)
    "urllib3": URLLIB3_CLASSES,  # only as raised through botocore's event-stream reader
}

HANDLERS: dict[tuple[str, str], Handler] = {
    (package, name): handler
    for package, classes in _PACKAGES.items()
    for name, handler in classes.items()
}

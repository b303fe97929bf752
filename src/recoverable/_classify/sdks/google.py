"""google-genai (the Gemini API) and google-api-core (Vertex AI and the Google Cloud clients).

Both read into the same HTTP decision; an api-core error that wraps a gRPC one is read from
the gRPC error's trailing `google.rpc.Status` (`grpc.py`).
"""

from __future__ import annotations

from ..._core.detail import ErrorDetail, copy_with, unvalidated
from ..http import ProviderBody, parse_body
from ..pipeline import Handler, always, error_message, package_of
from .grpc import RPC_CODES, RPC_STATUS, rpc_error
from .shared import sdk_answer_detail, sdk_status_detail

__all__ = ["API_CORE_CLASSES", "GENAI_CLASSES"]

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
    return sdk_answer_detail(exc, status, body, "google")


GENAI_CLASSES: dict[str, Handler] = {
    "APIError": _google_api_error,
    "UnknownFunctionCallArgumentError": always("tool_input_invalid", source="google"),
    "UnsupportedFunctionError": always("tool_input_invalid", source="google"),
    "FunctionInvocationError": always("tool_execution_failed", source="google"),
    "UnknownApiResponseError": always("provider_bad_response", source="google"),
}


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
    return sdk_status_detail(exc, status, ProviderBody.read({"error": error}), "google")


API_CORE_CLASSES: dict[str, Handler] = {"GoogleAPICallError": _google_call_error}

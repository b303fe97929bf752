"""botocore (boto3) and Amazon Bedrock, by (package, class name): no AWS package is imported.

A `ClientError` (and botocore's modeled subclasses, `ThrottlingException`, ...) carries the
parsed answer in `response`: `Error.Code` (the `x-amzn-ErrorType`), `Error.Message`, and
`ResponseMetadata` (`HTTPStatusCode`, `HTTPHeaders`, `RequestId`). A ConverseStream's
in-stream exception is an `EventStreamError` (a ClientError) whose code is lowerCamel
(`throttlingException`) and which has no status. Bedrock's codes are coarse (every bad
request is a `ValidationException`), so its own anchored sentences refine them: a context
window, an invalid model id, a daily token quota, a missing payment instrument.

Only the Bedrock operations are a model provider's answers (`source` "bedrock"); another AWS
service's error keeps the generic codes of its status, except a credential failure, which is
AWS's whichever service it reached (`source` "aws"). botocore's transport errors follow the
phase rule of httpx's: a connect-phase failure sent nothing (`provider_unreachable`), a read
may have been served (`provider_connection_lost`, `provider_timeout`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..._core.codes import codes
from ..._core.detail import ErrorDetail, unvalidated, with_details
from ..http import (
    MESSAGE_PHRASES,
    ProviderBody,
    decide,
    generic_from_status,
    hint_ms,
    provider_detail,
)
from ..phrases import PhraseTable
from ..pipeline import Handler, always, error_message, package_of

if TYPE_CHECKING:
    from ..._core.code_names import BuiltinCode

__all__ = ["BOTOCORE_CLASSES", "URLLIB3_CLASSES"]

# The operations of bedrock-runtime and bedrock-agent-runtime: a model provider's answers.
_BEDROCK_OPERATIONS = frozenset({
    "Converse", "ConverseStream", "InvokeModel", "InvokeModelWithResponseStream",
    "InvokeModelWithBidirectionalStream", "CountTokens", "ApplyGuardrail", "StartAsyncInvoke",
    "GetAsyncInvoke", "ListAsyncInvokes", "InvokeAgent", "InvokeInlineAgent", "InvokeFlow",
    "Retrieve", "RetrieveAndGenerate", "RetrieveAndGenerateStream", "Rerank",
})  # fmt: skip

_CREDENTIAL_CODES = {
    "UnrecognizedClientException": "invalid",
    "InvalidClientTokenId": "invalid",
    "InvalidSignatureException": "invalid",
    "SignatureDoesNotMatch": "invalid",
    "IncompleteSignature": "invalid",
    "MissingAuthenticationTokenException": "missing",
    "ExpiredTokenException": "expired",
    "ExpiredToken": "expired",
    "RequestExpired": "expired",
}

# Other AWS services' throttles (S3's `SlowDown` is a 503, EC2's `RequestLimitExceeded` a 400):
# by the code, whatever the status.
_AWS_THROTTLES = frozenset({
    "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
    "TooManyRequestsException", "ProvisionedThroughputExceededException", "RequestLimitExceeded",
    "BandwidthLimitExceeded", "RequestThrottled", "SlowDown", "EC2ThrottledException",
})  # fmt: skip

# Bedrock's error codes; an in-stream exception's lowerCamel name is read with its first
# letter upper-cased. ValidationException is left to its sentence, then its status.
_ERROR_CODES: dict[str, BuiltinCode] = {
    "ThrottlingException": "provider_rate_limited",
    "TooManyRequestsException": "provider_rate_limited",
    "ServiceQuotaExceededException": "provider_quota_exceeded",
    "AccessDeniedException": "provider_permission_denied",
    "ResourceNotFoundException": "provider_model_not_found",
    # "not ready to serve inference requests": the SDK itself retries it.
    "ModelNotReadyException": "provider_overloaded",
    "ModelTimeoutException": "provider_timeout",
    "ModelErrorException": "provider_server_error",
    "ModelStreamErrorException": "provider_server_error",
    "ServiceUnavailableException": "provider_overloaded",
    "InternalServerException": "provider_server_error",
    **dict.fromkeys(_CREDENTIAL_CODES, "provider_auth_failed"),
}

# Bedrock's own sentences, anchored at the start of the message (after the prefix Bedrock puts
# before a model's own words), so quoted user text never matches. A throttle "per day" is a new
# account's daily token quota: waiting minutes does not help.
_PHRASES = PhraseTable((
    (r"^input is too long\b", "provider_context_too_long"),
    (r"^too many input tokens\b", "provider_context_too_long"),
    (r"^the provided model identifier is invalid\b", "provider_model_not_found"),
    (r"^too many (?:tokens|requests) per day\b", "provider_quota_exceeded"),
    (r"^model access is denied due to invalid_payment_instrument\b", "provider_quota_exceeded"),
    *MESSAGE_PHRASES,  # the models' own words behind Bedrock ("prompt is too long", ...)
))  # fmt: skip
# The codes a sentence refines (and an unknown code); the others say all there is to say.
_REFINED = frozenset({"ValidationException", "ThrottlingException", "AccessDeniedException"})
_MODEL_SAID = "the model returned the following errors:"
_MAX_CODE = 128  # longer is no AWS error code


def _phrase(message: str) -> BuiltinCode | None:
    text = message.lstrip()
    if text[: len(_MODEL_SAID)].lower() == _MODEL_SAID:
        text = text[len(_MODEL_SAID) :]
    return _PHRASES.code(text)


def _error_code(code: object) -> str | None:
    if type(code) is not str or not code or len(code) > _MAX_CODE:
        return None
    return code if code[0].isupper() else code[0].upper() + code[1:]


def _client_error(exc: BaseException) -> ErrorDetail | None:
    """A ClientError: Bedrock's answer by its code and sentence, else another service's."""
    # botocore builds plain dicts: anything else in their place is read as nothing.
    response = getattr(exc, "response", None)
    if type(response) is not dict:
        response = {}
    error, meta = response.get("Error"), response.get("ResponseMetadata")
    if type(error) is not dict:
        error = {}
    if type(meta) is not dict:
        meta = {}
    code = _error_code(error.get("Code"))
    message = error.get("Message")
    if type(message) is not str or not message:
        message = error_message(exc)
    status = meta.get("HTTPStatusCode")
    status = status if type(status) is int else None
    headers, request_id = meta.get("HTTPHeaders"), meta.get("RequestId")
    operation = getattr(exc, "operation_name", None)
    if operation not in _BEDROCK_OPERATIONS:  # a str or not, it is no Bedrock operation
        return _other_service(
            code,
            message,
            status,
            headers if type(headers) is dict else None,
            operation if type(operation) is str else None,
        )
    found = _ERROR_CODES.get(code) if code is not None else None
    if found is None or code in _REFINED:
        found = _phrase(message) or found
    body = ProviderBody(message=message, code=code, has_error=True)
    row = codes[found] if found is not None else decide(status, body)
    hint = None
    # botocore lower-cases HTTPHeaders' names, and Bedrock seldom sends a wait: look first.
    if (
        row.retryable
        and type(headers) is dict
        and ("retry-after" in headers or "retry-after-ms" in headers)
    ):
        hint = hint_ms(headers, None, None)
    request_id = request_id if type(request_id) is str else None
    detail = provider_detail(row, status, body, source="bedrock", hint=hint, request_id=request_id)
    # provider_detail made this dict for this detail alone: filled in place, not copied.
    extra = detail.details
    extra["operation"] = operation
    if type(exc).__name__ == "EventStreamError":
        extra["in_stream"] = True
    if code in _CREDENTIAL_CODES:
        extra["credentials"] = _CREDENTIAL_CODES[code]
    return detail


def _other_service(
    code: str | None, message: str, status: int | None, headers: object, operation: str | None
) -> ErrorDetail | None:
    """Another AWS service's ClientError: a credential failure is AWS's, the rest generic."""
    credentials = _CREDENTIAL_CODES.get(code or "")
    if credentials is not None:
        return unvalidated(
            "provider_auth_failed",
            message,
            status=status,
            source="aws",
            details={"credentials": credentials, "error_code": code},
        )
    if code in _AWS_THROTTLES:
        detail: ErrorDetail | None = unvalidated(
            "rate_limited",
            message,
            retry_after_ms=hint_ms(headers, None, None),
            status=status if status is not None and 400 <= status <= 599 else None,
        )
    elif status is None or not 400 <= status <= 599:
        return None
    else:
        detail = generic_from_status(status, message, headers)
    if detail is None or code is None:
        return detail
    return with_details(detail, error_code=code, operation=operation)


# --- transport: the phase rule ------------------------------------------------------------

# A string: `re` compiles and caches it on first use, keeping the first classify fast.
_BEDROCK_PATH = (r"/model/[^/?#]{1,2048}/(?:converse|converse-stream|invoke|"
                 r"invoke-with-response-stream|count-tokens)(?:[?#]|$)")  # fmt: skip


def _source_of_url(exc: BaseException) -> str:
    """`bedrock` when the URL botocore names is Bedrock's (its host, or a runtime path behind
    an `endpoint_url`), else `aws`."""
    kwargs = getattr(exc, "kwargs", None)
    url = kwargs.get("endpoint_url") if type(kwargs) is dict else None
    if type(url) is not str:
        return "aws"
    url = url[:4096]
    host = url.partition("://")[2].partition("/")[0].lower()
    if host.startswith(("bedrock-runtime.", "bedrock-agent-runtime.", "bedrock.")):
        return "bedrock"
    return "bedrock" if re.search(_BEDROCK_PATH, url) else "aws"


def _transport(code: BuiltinCode, phase: str) -> Handler:
    def handler(exc: BaseException) -> ErrorDetail:
        return unvalidated(
            code, error_message(exc), source=_source_of_url(exc), details={"phase": phase}
        )

    return handler


def _credentials(kind: str) -> Handler:
    """No, partial or expired credentials: nothing was sent; the fix is the caller's."""
    return always("provider_auth_failed", source="aws", credentials=kind)


BOTOCORE_CLASSES: dict[str, Handler] = {
    "ClientError": _client_error,  # EventStreamError and every modeled error subclass it
    # The connect phase: nothing was sent, safe to repeat.
    "EndpointConnectionError": _transport("provider_unreachable", "connect"),
    "ConnectTimeoutError": _transport("provider_unreachable", "connect"),
    "ProxyConnectionError": _transport("provider_unreachable", "connect"),
    # The read phase: the request may have been served.
    "ReadTimeoutError": _transport("provider_timeout", "read"),
    "ConnectionClosedError": _transport("provider_connection_lost", "read"),
    "ResponseStreamingError": _transport("provider_connection_lost", "read"),
    "IncompleteReadError": _transport("provider_connection_lost", "read"),
    "HTTPClientError": _transport("provider_connection_lost", "read"),
    "NoCredentialsError": _credentials("missing"),
    "PartialCredentialsError": _credentials("partial"),
    "NoAuthTokenError": _credentials("missing"),  # a bearer token (a Bedrock API key)
    "CredentialRetrievalError": _credentials("unavailable"),
    "TokenRetrievalError": _credentials("expired"),
    "SSOTokenLoadError": _credentials("expired"),
    "UnauthorizedSSOTokenError": _credentials("expired"),
    "ParamValidationError": always("provider_invalid_request", source="aws"),
}


# --- urllib3's errors that escape botocore's event-stream reader ------------------------------

_MAX_FRAMES = 64


def _event_stream_operation(exc: BaseException) -> str | None:
    """The operation of the botocore EventStream whose read raised `exc`, else None: botocore
    hands a stream's raw urllib3 errors through unwrapped."""
    frame, seen = exc.__traceback__, 0
    while frame is not None and seen < _MAX_FRAMES:
        if package_of(frame.tb_frame.f_globals.get("__name__", "")) == "botocore":
            try:  # the reader's `self`, an EventStream, names its operation
                operation = getattr(frame.tb_frame.f_locals.get("self"), "_operation_name", None)
            except Exception:  # a hostile `self`: the operation is unknown
                operation = None
            return operation if type(operation) is str else ""
        frame, seen = frame.tb_next, seen + 1
    return None


def _stream_read(code: BuiltinCode) -> Handler:
    def handler(exc: BaseException) -> ErrorDetail | None:
        operation = _event_stream_operation(exc)
        if operation is None:
            return None  # not raised through botocore: the other stages decide
        source = "bedrock" if operation in _BEDROCK_OPERATIONS else "aws"
        details: dict[str, Any] = {"phase": "read", "in_stream": True}
        if operation:
            details["operation"] = operation
        return unvalidated(code, error_message(exc), source=source, details=details)

    return handler


URLLIB3_CLASSES: dict[str, Handler] = {
    "ProtocolError": _stream_read("provider_connection_lost"),
    "ReadTimeoutError": _stream_read("provider_timeout"),
}

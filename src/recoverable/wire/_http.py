"""A detail as an HTTP answer, and an HTTP answer read back as a detail. Pure.

Writing (`http_response`): the registry's status for the code (or the one the caller
answers with, `status=`: the body's `status` member is always the status sent),
`Retry-After` in whole seconds (rounded up) on every retryable answer, its `retry_after_ms`
in the body (a retryable detail without a wait is answered with 1 s, the envelope's reading
rule), and a body a person may see, built from the detail's public view
(`recoverable._core.public`, as the stream chunks are): codes, numbers and this registry's
sentences; never developer text unless exposed (and never for `unknown` or
`internal_error`, whose text is whatever an unclassified exception said), never a cause,
details, fix command, stack trace, or anything of the request. Two body styles:

    typed JSON                          RFC 9457 application/problem+json
    {"error": user_message,             {"type": "urn:recoverable:code:rate_limited",
     "code": "rate_limited",             "title": "Rate limited", "status": 429,
     "retryable": true,                  "detail": user_message, "instance": "urn:uuid:...",
     "retry_after_ms": 2000,             "code": ..., "retryable": ..., "retry_after_ms": ...,
     "fix_required": null}               "fix_required": ...}

A problem's `instance` is always a `urn:uuid:` (a fresh one, or the UUID the caller gives to
find the occurrence in its logs): never the request's path, which may hold a credential,
markup or 60 KB.

Reading (`read_response`), by the evidence the body gives, most specific first: our typed
JSON or problem details (a `code` in lower or UPPER_SNAKE, read by the envelope's mapping);
an agent-tool envelope (`Envelope.parse`); a detail payload (`to_dict`, bare or as `error`);
else the status, headers and body as any HTTP answer (`from_http`). Every path goes through
`ErrorDetail.from_dict`'s payload rules, and the detail read carries this registry's
sentences (`own_sentences`): a peer's own sentence for a code not registered here is kept in
`details` as developer text, never read as ours.
"""

from __future__ import annotations

import json
import math
import uuid
from typing import Any

from .._classify import classify, from_http
from .._classify.http.ours import read_object, read_ours
from .._core.detail import ErrorDetail
from .._core.envelope import load_json_object
from .._core.public import own_sentences, public_view, stated_wait_ms
from .._core.untrusted import clean_status

__all__ = [
    "JSON_TYPE",
    "PROBLEM_TYPE",
    "PROBLEM_TYPE_PREFIX",
    "checked_status",
    "http_body",
    "http_response",
    "problem_instance",
    "read_ours",
    "read_response",
    "retry_after_header",
]

JSON_TYPE = "application/json"
PROBLEM_TYPE = "application/problem+json"
PROBLEM_TYPE_PREFIX = "urn:recoverable:code:"
"""A problem's `type` is this and its code: stable per code, the same in every deployment."""
MAX_BODY_BYTES = 1024 * 1024
"""What of an error body is read: the rest is never read (a client stops there)."""


def retry_after_header(detail: ErrorDetail) -> str | None:
    """`Retry-After` for a detail: its stated wait in whole seconds, rounded up."""
    wait = stated_wait_ms(detail)
    return None if wait is None else str(math.ceil(wait / 1000))


def http_body(
    detail: ErrorDetail,
    *,
    problem: bool = False,
    expose_message: bool = False,
    instance: str | uuid.UUID | None = None,
    status: int | None = None,
) -> dict[str, Any]:
    """The body of `http_response`, as data."""
    view = public_view(detail, expose_message=expose_message)
    fields: dict[str, Any] = {
        "code": view.code,
        "retryable": view.retryable,
        "retry_after_ms": stated_wait_ms(view),
        "fix_required": view.fix_required,
    }
    if view.message is not None:
        fields["message"] = view.message
    if not problem:
        return {"error": view.user_message, **fields}
    return {
        "type": PROBLEM_TYPE_PREFIX + view.code,
        "title": view.code.replace("_", " ").capitalize(),
        "status": view.http_status if status is None else checked_status(status),
        "detail": view.user_message,
        "instance": problem_instance(instance),
        **fields,
    }


def problem_instance(instance: str | uuid.UUID | None = None) -> str:
    """A problem's `instance`: `urn:uuid:` and a fresh UUID, or the one given (a UUID, or a
    `urn:uuid:` string, written in its canonical form). ValueError for anything else."""
    if instance is None:
        return f"urn:uuid:{uuid.uuid4()}"
    if isinstance(instance, uuid.UUID):
        return instance.urn
    if isinstance(instance, str) and instance[:9].lower() == "urn:uuid:" and len(instance) <= 45:
        try:
            return uuid.UUID(instance[9:]).urn
        except ValueError:
            pass
    raise ValueError("a problem's instance is a UUID or a urn:uuid: URI, never request text")


def checked_status(status: object) -> int:
    """An error status to answer with: an int from 400 to 599 (TypeError, ValueError)."""
    if type(status) is not int:
        raise TypeError(f"status must be an int, not {type(status).__name__}")
    if not 400 <= status <= 599:
        raise ValueError("an error answer's status is from 400 to 599")
    return status


def http_response(
    detail: object,
    *,
    problem: bool = False,
    expose_message: bool = False,
    instance: str | uuid.UUID | None = None,
    status: int | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) answering a failure: a detail, or anything `classify` takes.

    `problem=True`: an RFC 9457 problem details body (`instance`: the occurrence's
    `urn:uuid:`, by default a fresh one). `expose_message=True` adds the developer `message`
    (scrubbed of credentials; never for `unknown` or `internal_error`). `status`: answer with
    it (400-599) rather than the code's (a framework's own 405, say); the body says the same."""
    if not isinstance(detail, ErrorDetail):
        detail = classify(detail)
    sent = public_view(detail).http_status if status is None else checked_status(status)
    body = http_body(
        detail, problem=problem, expose_message=expose_message, instance=instance, status=sent
    )
    headers = {"content-type": PROBLEM_TYPE if problem else JSON_TYPE}
    wait = retry_after_header(detail)
    if wait is not None:
        headers["retry-after"] = wait
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return sent, headers, data.encode("utf-8", "replace")


# --- reading ---------------------------------------------------------------------------------


def read_response(status: int, headers: object = None, body: object = None) -> ErrorDetail:
    """An HTTP error answer read as a detail: ours (typed JSON or problem details), an
    envelope, a detail payload, else any HTTP answer (`from_http`). Never raises."""
    try:
        return own_sentences(_read(status, headers, body))
    except Exception:  # a bug of ours must not become the caller's exception
        return from_http(clean_status(status), headers, None)


def _read(status: int, headers: object, body: object) -> ErrorDetail:
    if isinstance(body, (bytes, bytearray)) and len(body) > MAX_BODY_BYTES:
        body = bytes(body[:MAX_BODY_BYTES])
    data, _ = load_json_object(body) if body is not None else (None, "")
    if data is not None:
        detail = read_object(data, status, headers)
        if detail is not None:
            return detail
    return from_http(clean_status(status), headers, body)

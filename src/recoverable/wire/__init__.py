"""The detail on the wire: event streams (NDJSON, SSE), HTTP answers (typed JSON and RFC 9457
problem details), an ASGI adapter and a client reader.

    from recoverable import wire

    line = wire.to_ndjson(event, seq=3)          # any agents event, or an ErrorDetail
    events = wire.read_ndjson(text_or_lines)     # the same typed events back
    message = wire.to_sse(event, seq=3)          # `id: 3` + `data: {...}`
    events = wire.read_sse(text_or_lines)

Writers give the whole event by default, so a service reading it gets a detail equal to the
one sent. `public=True` writes what a person's browser may see: codes, numbers and this
process's sentences, the model's answer and tool parts (credentials scrubbed), and nothing
else. An error is its detail's public view (`recoverable._core.public.public_view`: the code's
row sentence; a code not registered here as `unknown`, with its category's generic sentence;
no cause, details, fix command or stderr), a tool's error text is left out, a `Done` keeps
the run's text, usage and cost and the public views of its error and of the failures before
a fallback (never stderr, exit status, session id or CLI), and `Raw` events (the CLI's own
lines) are not written. A `seq` is an int from 0 to `MAX_SEQ`; anything else is a TypeError
or ValueError, never text in the stream's framing.

Readers treat what they read as untrusted: a detail goes through `ErrorDetail.from_dict`'s
payload rules, then carries this process's sentences (a peer's own sentence for a code not
registered here is kept in `details["peer_user_message"]`, scrubbed: developer text, never
shown as ours); a chunk is at most MAX_CHUNK_CHARS, numbers are finite; a malformed chunk is
an `ErrorEvent` warning (`tool_output_invalid`, `details["malformed"]` says why) and the stream
goes on; an unknown `type` is `Raw` (cli "wire"). Nothing a peer sends makes a reader raise.

HTTP: `http_response(detail, problem=False, expose_message=False)` -> (status, headers,
body) with the registry's status (or `status=`, which the body states too), `Retry-After` on
retryable answers, typed JSON or RFC 9457 problem details (its `instance` a `urn:uuid:`,
never the request's path); `read_response(status, headers, body)` -> the detail back,
whatever style (else `from_http`). Clients: `raise_for_error(response)` and
`iter_events(response)` / `aiter_events(response)` over an httpx (or httpx2) response.

The Vercel AI SDK's UI message stream: `to_ui_message_stream(events)` / `UiMessageStream`
(text, reasoning and tool parts; a failure as a `data-recoverable-error` part, its code,
`retryable` and wait, then `{"type": "error", "errorText": sentence}`), served by
`asgi.ui_message_response` so a `useChat` front end works unchanged and can branch on the code.

`StreamLog` keeps a stream's numbered events so a client reconnecting with `Last-Event-ID`
(`last_event_id(headers)`) is served from where it stopped (`asgi.resume_response`: 404, 400,
410 when it cannot be, 204 when the stream has ended); `Sessions` keeps one live run a session
(`state_already_running`; `supersede=True`: `state_run_superseded`), and a run start sent
again with its request key (`idempotency_key(headers)`, `Sessions.start(request_key=...)`)
served the run it started (`state_request_key_conflict` for the key with other input). The
ASGI streams answer a failure before their first byte with its own status (`_opening`). A
retried stream marks its attempts (`Attempt`, `Retrying.stream`'s `on_attempt`): each chunk's
`attempt`, and an `AttemptSuperseded` marker the readers drop the stale attempt by
(`winning`). An error chunk
carries its agent, kind, timestamp and step (`ErrorContext`, on `Chunk.context`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core.exports import Face

__all__ = [
    "MAX_CHUNK_CHARS",
    "MAX_SEQ",
    "PROBLEM_TYPE_PREFIX",
    "Attempt",
    "AttemptSuperseded",
    "Chunk",
    "ErrorContext",
    "NdjsonReader",
    "NotResumable",
    "Sessions",
    "SseReader",
    "StreamEvent",
    "StreamLog",
    "UiMessageStream",
    "aiter_chunks",
    "aiter_events",
    "araise_for_error",
    "http_body",
    "http_response",
    "idempotency_key",
    "iter_chunks",
    "iter_events",
    "last_event_id",
    "public_payload",
    "raise_for_error",
    "read_ndjson",
    "read_ndjson_chunks",
    "read_response",
    "read_sse",
    "read_sse_chunks",
    "to_ndjson",
    "to_sse",
    "to_ui_message_stream",
    "winning",
]

if TYPE_CHECKING:
    from . import asgi as asgi
    from ._ai_sdk import UiMessageStream, to_ui_message_stream
    from ._attempts import Attempt, AttemptSuperseded, winning
    from ._chunks import MAX_CHUNK_CHARS, MAX_SEQ, Chunk, StreamEvent
    from ._client import (
        aiter_chunks,
        aiter_events,
        araise_for_error,
        iter_chunks,
        iter_events,
        raise_for_error,
    )
    from ._error_context import ErrorContext
    from ._http import PROBLEM_TYPE_PREFIX, http_body, http_response, read_response
    from ._ndjson import NdjsonReader, read_ndjson, read_ndjson_chunks, to_ndjson
    from ._public_events import public_payload
    from ._resume import NotResumable, StreamLog, last_event_id
    from ._sessions import Sessions, idempotency_key
    from ._sse import SseReader, read_sse, read_sse_chunks, to_sse


# public name -> the module that defines it (loaded on first use); `asgi` (with Starlette) too
_FACE = Face(
    __name__,
    {
        "MAX_CHUNK_CHARS": "recoverable.wire._chunks",
        "MAX_SEQ": "recoverable.wire._chunks",
        "Chunk": "recoverable.wire._chunks",
        "StreamEvent": "recoverable.wire._chunks",
        "Attempt": "recoverable.wire._attempts",
        "AttemptSuperseded": "recoverable.wire._attempts",
        "winning": "recoverable.wire._attempts",
        "ErrorContext": "recoverable.wire._error_context",
        "NotResumable": "recoverable.wire._resume",
        "Sessions": "recoverable.wire._sessions",
        "idempotency_key": "recoverable.wire._sessions",
        "public_payload": "recoverable.wire._public_events",
        "NdjsonReader": "recoverable.wire._ndjson",
        "read_ndjson": "recoverable.wire._ndjson",
        "read_ndjson_chunks": "recoverable.wire._ndjson",
        "to_ndjson": "recoverable.wire._ndjson",
        "SseReader": "recoverable.wire._sse",
        "read_sse": "recoverable.wire._sse",
        "read_sse_chunks": "recoverable.wire._sse",
        "to_sse": "recoverable.wire._sse",
        "StreamLog": "recoverable.wire._resume",
        "UiMessageStream": "recoverable.wire._ai_sdk",
        "to_ui_message_stream": "recoverable.wire._ai_sdk",
        "PROBLEM_TYPE_PREFIX": "recoverable.wire._http",
        "http_body": "recoverable.wire._http",
        "http_response": "recoverable.wire._http",
        "read_response": "recoverable.wire._http",
        "aiter_chunks": "recoverable.wire._client",
        "aiter_events": "recoverable.wire._client",
        "araise_for_error": "recoverable.wire._client",
        "iter_chunks": "recoverable.wire._client",
        "iter_events": "recoverable.wire._client",
        "raise_for_error": "recoverable.wire._client",
        "last_event_id": "recoverable.wire._resume",
        "asgi": "recoverable.wire.asgi",
    },
)


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()

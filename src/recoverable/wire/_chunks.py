"""Events as chunks: one JSON object per event, with its `type` and a sequence number. Pure.

Writing: `chunk_dict` (the agents event, its `type` in snake_case, `seq` when given: an int
from 0 to MAX_SEQ, anything else is refused); `chunk_data` writes a whole `Chunk`: its `seq`,
its `attempt` in a retried stream (`_attempts`) and an error's context (`_error_context`:
agent, kind, timestamp, step). A standalone `ErrorDetail` (or `RecoverableError`) is written
as an `Error` event. `public=True` writes what a person's browser may see, and only that
(`_public_events`: no developer text, stderr, session ids or a peer's words; `Raw` events not
at all).

Reading: `read_chunk` over an untrusted object. A known `type` with fields of the wrong type,
an error whose detail `ErrorDetail.from_dict` refuses, anything that is not a JSON object: a
malformed chunk, read as an `Error` warning (`tool_output_invalid`, not retryable) so the
stream goes on. An unknown `type` comes back as `Raw` (cli "wire"), never dropped. Every
detail read carries this registry's sentences (`own_sentences`): a peer's own words for a
code not registered here stay in its `details`, as developer text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .._core.codes import codes
from .._core.detail import ErrorDetail, PayloadError, unvalidated
from .._core.error import RecoverableError
from .._core.events import (
    Done,
    ErrorEvent,
    Event,
    Raw,
    RunResult,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolStart,
    TurnEnd,
    event_to_dict,
)
from .._core.public import own_sentences
from .._core.strict_json import STRICT_JSON
from .._core.untrusted import clean_text, safe_str, valid_unicode
from ._attempts import MAX_ATTEMPT, AttemptSuperseded, checked_attempt
from ._error_context import ErrorContext, context_fields, read_context
from ._public_events import public_event

__all__ = [
    "MAX_CHUNK_CHARS",
    "MAX_SEQ",
    "WIRE_SOURCE",
    "Chunk",
    "StreamEvent",
    "as_event",
    "checked_seq",
    "chunk_data",
    "chunk_dict",
    "chunk_json",
    "load_chunk",
    "malformed",
    "read_chunk",
]

MAX_CHUNK_CHARS = 8 * 1024 * 1024
"""The longest chunk read (one NDJSON line, one SSE event's data); a longer one is malformed."""
MAX_SEQ = 10**18 - 1
"""The highest sequence number written and read (18 digits: what every reader holds)."""
WIRE_SOURCE = "wire"
"""The `Raw.cli` of an unknown chunk, and the `source` of a malformed one."""
_MAX_QUOTED = 200  # how much of a malformed chunk its warning quotes (scrubbed)


StreamEvent = Event | AttemptSuperseded
"""What a chunk carries: an agents event, or the marker of a superseded attempt."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One event of a stream, with the sequence number it was sent with."""

    event: StreamEvent
    """The event, typed (a malformed chunk is an `Error` warning; an unknown one `Raw`)."""
    seq: int | None = None
    """Its sequence number (SSE `id:`, NDJSON `seq`), when it carried one."""
    attempt: int | None = None
    """The attempt of a retried stream it belongs to, from 1 (`_attempts`); None outside one."""
    context: ErrorContext | None = None
    """An error's agent, kind, timestamp and step (`_error_context`), when it was stamped."""


# --- writing ---------------------------------------------------------------------------------


def as_event(value: StreamEvent | ErrorDetail | RecoverableError) -> StreamEvent:
    """An event; a detail (or the error carrying one) as a standalone `Error` event."""
    if isinstance(value, ErrorDetail):
        return ErrorEvent(value)
    if isinstance(value, RecoverableError):
        return ErrorEvent(value.detail)
    return value


def checked_seq(seq: object) -> int | None:
    """A sequence number to write: None, or an int from 0 to MAX_SEQ (what every reader of
    ours takes back). TypeError for anything else (a bool, a str: text would be written into
    the stream's framing), ValueError for an int out of range."""
    if seq is None:
        return None
    if type(seq) is not int:
        raise TypeError(f"seq must be an int or None, not {type(seq).__name__}")
    if not 0 <= seq <= MAX_SEQ:
        raise ValueError(f"seq must be from 0 to {MAX_SEQ}")
    return seq


def chunk_dict(
    value: StreamEvent | ErrorDetail | RecoverableError,
    *,
    seq: int | None = None,
    public: bool = False,
) -> dict[str, Any] | None:
    """The chunk of an event as JSON data (None: a `Raw` event is not written publicly)."""
    seq = checked_seq(seq)
    event = as_event(value)
    if isinstance(event, AttemptSuperseded):
        data: dict[str, Any] | None = event.to_dict()
    elif public:
        data = public_event(event)
    else:
        data = event_to_dict(event)
    if data is not None and seq is not None:
        data["seq"] = seq
    return data


def chunk_data(chunk: Chunk, *, public: bool = False, seq: bool = True) -> dict[str, Any] | None:
    """A whole chunk as JSON data: its event, `seq` (unless `seq=False`: SSE sends it as the
    `id:`), `attempt` and an error's context (see the module's docstring)."""
    data = chunk_dict(chunk.event, seq=chunk.seq if seq else None, public=public)
    if data is None:
        return None
    if chunk.attempt is not None:
        data["attempt"] = checked_attempt(chunk.attempt)
    if isinstance(chunk.event, ErrorEvent):
        data.update(context_fields(chunk.context, public=public))
    return data


def chunk_json(data: dict[str, Any]) -> str:
    """A chunk as one line of JSON: no newline in it (U+2028 and the like are escaped too,
    so no line splitter cuts it), valid UTF-8 whatever its strings hold, no NaN."""
    text = json.dumps(
        data, ensure_ascii=False, separators=(",", ":"), default=safe_str, allow_nan=False
    )
    if not text.isascii():
        text = valid_unicode(text)
        text = _LINE_BREAKS.sub(_escape, text)
    return text


# Characters `str.splitlines` (and JavaScript before ES2019) break lines at, that JSON leaves
# raw. (This module is imported only when the wire is used: compiling here is first use.)
_LINE_BREAKS = re.compile("[\x85\u2028\u2029]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


# --- reading ---------------------------------------------------------------------------------


def malformed(why: str, text: str = "") -> Chunk:
    """The warning a malformed chunk is read as: the stream goes on."""
    details: dict[str, Any] = {"malformed": why}
    if text:
        details["chunk"] = clean_text(text, _MAX_QUOTED)
    detail = unvalidated(
        codes["tool_output_invalid"],
        f"malformed stream chunk: {why}",
        source=WIRE_SOURCE,
        details=details,
    )
    return Chunk(ErrorEvent(detail, "warning"))


def load_chunk(text: str, seq: int | None = None) -> Chunk:
    """One chunk's JSON text, read (never raises: what cannot be read is `malformed`)."""
    if len(text) > MAX_CHUNK_CHARS:
        return malformed(f"over {MAX_CHUNK_CHARS} characters")
    if not text.isascii():
        text = valid_unicode(text)
    try:
        data = STRICT_JSON.decode(text)
    except RecursionError:
        return malformed("nested too deep", text)
    except ValueError:
        return malformed("not JSON", text)
    if _SURROGATE_ESCAPE.search(text):
        data = _valid_strings(data)
    return read_chunk(data, seq)


# A lone surrogate can only come out of a JSON escape: walk the strings only then.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _valid_strings(value: Any) -> Any:
    """`value` (parsed JSON, so a tree) with lone surrogates in its strings replaced."""
    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, list):
        return [_valid_strings(item) for item in value]
    if isinstance(value, dict):
        return {valid_unicode(key): _valid_strings(item) for key, item in value.items()}
    return value


def read_chunk(data: object, seq: int | None = None) -> Chunk:
    """A parsed chunk as its event (never raises). Its own `seq` is used when `seq` is None."""
    if not isinstance(data, Mapping):
        return malformed(f"not a JSON object ({type(data).__name__})")
    if seq is None:
        own = data.get("seq")
        seq = own if type(own) is int and 0 <= own <= MAX_SEQ else None
    number = data.get("attempt")
    attempt = number if type(number) is int and 1 <= number <= MAX_ATTEMPT else None
    kind = data.get("type")
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        if not isinstance(kind, str):
            return malformed("no string 'type'")
        fields = {key: value for key, value in data.items() if key not in _CHUNK_KEYS}
        return Chunk(Raw(WIRE_SOURCE, fields), seq, attempt)
    try:
        event = reader(data)
    except (_Refused, PayloadError) as refused:
        return malformed(f"{kind}: {refused}")
    context = read_context(data) if isinstance(event, ErrorEvent) else None
    return Chunk(event, seq, attempt, context)


_CHUNK_KEYS = frozenset({"seq", "attempt"})  # the chunk's own fields, not its event's


class _Refused(ValueError):
    """A chunk field of the wrong type."""


def _str(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise _Refused(f"{key!r} must be a string")
    return value


def _optional(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Refused(f"{key!r} has the wrong type")
    return value


def _bool(data: Mapping[str, Any], key: str) -> bool:
    value = data.get(key)
    if not isinstance(value, bool):
        raise _Refused(f"{key!r} must be a boolean")
    return value


def _detail(data: object) -> ErrorDetail:
    if not isinstance(data, Mapping):
        raise _Refused("a detail must be an object")
    return own_sentences(ErrorDetail.from_dict(data))


def _error(data: Mapping[str, Any]) -> ErrorEvent:
    severity = data.get("severity", "error")
    if severity not in ("warning", "error"):
        raise _Refused("'severity' must be 'warning' or 'error'")
    return ErrorEvent(_detail(data.get("detail")), severity)


def _done(data: Mapping[str, Any]) -> Done:
    result = data.get("result")
    if not isinstance(result, Mapping):
        raise _Refused("'result' must be an object")
    success = _bool(result, "success")
    error = None if result.get("error") is None else _detail(result["error"])
    if success != (error is None):
        raise _Refused("a result has an error exactly when it failed")
    cost = _optional(result, "cost_usd", (int, float))
    return Done(
        RunResult(
            success=success,
            text=_optional(result, "text", str) or "",
            error=error,
            exit_code=_optional(result, "exit_code", int),
            signal=_optional(result, "signal", int),
            session_id=_optional(result, "session_id", str),
            usage=_optional(result, "usage", dict),
            cost_usd=None if cost is None or isinstance(cost, bool) else float(cost),
            stderr_tail=clean_text(_optional(result, "stderr_tail", str) or ""),
        )
    )


def _tool_end(data: Mapping[str, Any]) -> ToolEnd:
    return ToolEnd(
        _str(data, "tool_id"),
        _bool(data, "success"),
        _optional(data, "output", str),
        _optional(data, "error", str),
        None if data.get("detail") is None else _detail(data["detail"]),
    )


def _raw(data: Mapping[str, Any]) -> Raw:
    return Raw(_str(data, "cli"), data.get("event"))


def _superseded(data: Mapping[str, Any]) -> AttemptSuperseded:
    number = data.get("superseded")
    if type(number) is not int or not 1 <= number <= MAX_ATTEMPT:
        raise _Refused(f"'superseded' must be an attempt number (1 to {MAX_ATTEMPT})")
    return AttemptSuperseded(number)


_READERS: dict[str, Callable[[Mapping[str, Any]], StreamEvent]] = {
    TextDelta.type: lambda data: TextDelta(_str(data, "text")),
    ThinkingDelta.type: lambda data: ThinkingDelta(_str(data, "text")),
    ToolStart.type: lambda data: ToolStart(
        _str(data, "tool_id"), _str(data, "name"), data.get("input")
    ),
    ToolEnd.type: _tool_end,
    TurnEnd.type: lambda data: TurnEnd(_optional(data, "usage", dict)),
    ErrorEvent.type: _error,
    Done.type: _done,
    Raw.type: _raw,
    AttemptSuperseded.type: _superseded,
}

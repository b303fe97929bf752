"""Events as the Vercel AI SDK's UI message stream (protocol v1), so `useChat` works unchanged.

    data: {"type":"start"}
    data: {"type":"start-step"}
    data: {"type":"text-start","id":"text-1"}
    data: {"type":"text-delta","id":"text-1","delta":"Hel"}
    ...
    data: {"type":"data-recoverable-error","data":{"code":"provider_rate_limited", ...}}
    data: {"type":"error","errorText":"The AI service is busy right now. ..."}
    data: [DONE]

Text and reasoning deltas open a part and add to it; a tool start is a `tool-input-available`
(a dynamic tool: the CLI's own), its end `tool-output-available` or `tool-output-error`; a
turn's end ends the step; the run's `Done` ends the last step with `finish` (its
`finishReason` "stop" or "error"). Tool inputs and outputs are sent with credentials
scrubbed, as the public stream chunks are. Warnings and `Raw` events are not sent. Pure.

A failure is two chunks. First a data part, `data-recoverable-error`, whose `data` is the
detail's public view (`_public_events.public_payload`: code, category, retryable, the wait,
fix_required, the sentence) with the stream's context (`_error_context`: agent, agent_kind,
timestamp, step; and the attempt in a retried stream): the AI SDK's schema takes any
`data-*` part, and `useChat` keeps it in the message's `parts`, so a page branches on
`part.data.code`. Then `{"type": "error", "errorText": sentence}`, which `useChat` shows as
its `error`: this registry's sentence for the code (`recoverable._core.public`), never developer
text nor a peer's own words; a failed tool's `errorText` likewise.

A retried stream (`_attempts`): each attempt is one step (a turn's end does not end it), and
when an attempt is superseded its step is reset (`reset-step`, which drops the parts it
added) after a transient `data-attempt-superseded` part (`onData` sees it), so the message
shows only the attempt that won.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._core.codes import codes
from .._core.detail import ErrorDetail
from .._core.events import (
    Done,
    ErrorEvent,
    Event,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolStart,
    TurnEnd,
)
from .._core.public import public_sentence
from ._attempts import AttemptSuperseded
from ._chunks import Chunk, chunk_json
from ._error_context import ErrorContext, context_fields
from ._public_events import public_payload, public_tool_input, public_tool_text

__all__ = [
    "ERROR_PART",
    "SUPERSEDED_PART",
    "UI_MESSAGE_STREAM_HEADERS",
    "UiMessageStream",
    "to_ui_message_stream",
]

UI_MESSAGE_STREAM_HEADERS = {
    "cache-control": "no-cache",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
"""The headers the AI SDK sends with a UI message stream (and `text/event-stream`)."""
DONE = "[DONE]"
ERROR_PART = "data-recoverable-error"
"""The data part before a failure's `error` chunk: the detail's public view and context."""
SUPERSEDED_PART = "data-attempt-superseded"
"""The transient data part before a superseded attempt's `reset-step`."""


class UiMessageStream:
    """Turns one run's events into UI message chunks (`start`, each event's `write`, `end`)."""

    def __init__(self, message_id: str | None = None) -> None:
        self._message_id = message_id
        self._open: tuple[str, str] | None = None  # the open text/reasoning part: (kind, id)
        self._parts = 0
        self._in_step = False
        self._finished = False
        self._attempts = False  # a retried stream: one step per attempt
        self._chunk: Chunk | None = None  # the chunk being written, when one is

    def start(self) -> list[dict[str, Any]]:
        """The chunk that opens the message."""
        start: dict[str, Any] = {"type": "start"}
        if self._message_id is not None:
            start["messageId"] = self._message_id
        return [start]

    def write(self, item: Event | AttemptSuperseded | Chunk) -> list[dict[str, Any]]:
        """The chunks of one event, or of a stream's chunk (with its attempt and an error's
        context); none for a warning or a `Raw` event."""
        chunk = self._chunk = item if isinstance(item, Chunk) else None
        event = item if chunk is None else chunk.event
        if chunk is not None and chunk.attempt is not None:
            self._attempts = True
        writer = _WRITERS.get(type(event))
        if self._finished or writer is None:
            return []
        return writer(self, event)

    def _text(self, event: TextDelta) -> list[dict[str, Any]]:
        return self._delta("text", event.text)

    def _thinking(self, event: ThinkingDelta) -> list[dict[str, Any]]:
        return self._delta("reasoning", event.text)

    def _tool_start(self, event: ToolStart) -> list[dict[str, Any]]:
        return [
            *self._step(),
            *self._close(),
            {
                "type": "tool-input-available",
                "toolCallId": public_tool_text(event.tool_id) or "",
                "toolName": public_tool_text(event.name) or "",
                "input": public_tool_input(event.input),
                "dynamic": True,
            },
        ]

    def _tool_end(self, event: ToolEnd) -> list[dict[str, Any]]:
        return [*self._step(), *self._close(), _tool_end(event)]

    def _turn_end(self, event: TurnEnd) -> list[dict[str, Any]]:
        return [] if self._attempts else self._end_step()

    def _error(self, event: ErrorEvent) -> list[dict[str, Any]]:
        if event.severity != "error":
            return []
        chunk = self._chunk
        if chunk is None:
            data = error_data(event.detail)
        else:
            data = error_data(event.detail, chunk.context, chunk.attempt)
        failure = {"type": "error", "errorText": public_sentence(event.detail)}
        return [*self._close(), {"type": ERROR_PART, "data": data}, failure]

    def _superseded(self, event: AttemptSuperseded) -> list[dict[str, Any]]:
        data: dict[str, Any] = {"superseded": event.superseded}
        if self._chunk is not None and self._chunk.attempt is not None:
            data["attempt"] = self._chunk.attempt
        chunks = [*self._close(), {"type": SUPERSEDED_PART, "data": data, "transient": True}]
        if self._in_step:  # (with no step open, `reset-step` would drop every part)
            chunks.append({"type": "reset-step"})
        return chunks

    def _done(self, event: Done) -> list[dict[str, Any]]:
        self._finished = True
        reason = "stop" if event.result.success else "error"
        return [*self._end_step(), {"type": "finish", "finishReason": reason}]

    def end(self) -> list[dict[str, Any]]:
        """What closes a stream that ended without `Done` (the open part, the step)."""
        return [] if self._finished else self._end_step()

    def _delta(self, kind: str, text: str) -> list[dict[str, Any]]:
        chunks = self._step()
        if self._open is None or self._open[0] != kind:
            chunks += self._close()
            self._parts += 1
            self._open = (kind, f"{kind}-{self._parts}")
            chunks.append({"type": f"{kind}-start", "id": self._open[1]})
        chunks.append({"type": f"{kind}-delta", "id": self._open[1], "delta": text})
        return chunks

    def _step(self) -> list[dict[str, Any]]:
        if self._in_step:
            return []
        self._in_step = True
        return [{"type": "start-step"}]

    def _close(self) -> list[dict[str, Any]]:
        if self._open is None:
            return []
        kind, part = self._open
        self._open = None
        return [{"type": f"{kind}-end", "id": part}]

    def _end_step(self) -> list[dict[str, Any]]:
        chunks = self._close()
        if self._in_step:
            self._in_step = False
            chunks.append({"type": "finish-step"})
        return chunks


_WRITERS: dict[type, Callable[[UiMessageStream, Any], list[dict[str, Any]]]] = {
    TextDelta: UiMessageStream._text,
    ThinkingDelta: UiMessageStream._thinking,
    ToolStart: UiMessageStream._tool_start,
    ToolEnd: UiMessageStream._tool_end,
    TurnEnd: UiMessageStream._turn_end,
    ErrorEvent: UiMessageStream._error,
    Done: UiMessageStream._done,
    AttemptSuperseded: UiMessageStream._superseded,
}


def error_data(
    detail: ErrorDetail, context: ErrorContext | None = None, attempt: int | None = None
) -> dict[str, Any]:
    """The `data` of a failure's data part: its public view, context and attempt."""
    data = public_payload(detail)
    data.update(context_fields(context, public=True))
    if attempt is not None:
        data["attempt"] = attempt
    return data


def _tool_end(event: ToolEnd) -> dict[str, Any]:
    call = public_tool_text(event.tool_id) or ""
    if event.success is True:
        return {
            "type": "tool-output-available",
            "toolCallId": call,
            "output": public_tool_text(event.output),
            "dynamic": True,
        }
    # The tool's own error text is developer text: its classified sentence instead.
    detail = event.detail
    text = (
        codes["tool_execution_failed"].user_message
        if not isinstance(detail, ErrorDetail)
        else public_sentence(detail)
    )
    return {"type": "tool-output-error", "toolCallId": call, "errorText": text, "dynamic": True}


def sse_data(data: dict[str, Any] | str) -> str:
    """One data-only SSE message (the AI SDK's framing)."""
    return f"data: {data if isinstance(data, str) else chunk_json(data)}\n\n"


def to_ui_message_stream(
    events: Iterable[Event | AttemptSuperseded | Chunk], *, message_id: str | None = None
) -> str:
    """A whole run's events (or a stream's chunks) as the UI message stream's SSE text,
    `[DONE]` last."""
    writer = UiMessageStream(message_id)
    chunks = writer.start()
    for event in events:
        chunks += writer.write(event)
    chunks += writer.end()
    return "".join(sse_data(chunk) for chunk in chunks) + sse_data(DONE)

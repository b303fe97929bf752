"""Where and when a stream's failure happened: the fields an error chunk carries beside its
detail (the seed's ErrorChunk: the agent and its kind, a timestamp, the step). Pure.

    {"type":"error","severity":"error","detail":{...},"seq":7,"attempt":1,
     "agent":"claude","agent_kind":"cli","timestamp":1767225600000,"step":2}

The publisher (`_publish`) stamps every `Error` chunk it numbers: the agent is the AI CLI that
ran (its detail's `source`, else the CLI the stream's events came from), `agent_kind` says
what kind of agent it is (`cli`), `timestamp` the milliseconds since the epoch when it was
sent, `step` the turn it happened in (1 + the turns that ended before it, in its attempt).

Written publicly too: a CLI name is written only when it is one of this library's CLIs (its
own word, never a peer's), and the rest are numbers. Read back from untrusted chunks: a field
of the wrong type or out of range is left out, never a reason to refuse the chunk.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._classify.process_exit import AI_CLIS

__all__ = ["CLI_KIND", "ErrorContext", "context_fields", "read_context"]

CLI_KIND = "cli"
"""The `agent_kind` of an AI CLI (claude, codex, gemini)."""
_KINDS = frozenset({CLI_KIND})
_MAX_NUMBER = 10**18 - 1  # what every reader holds, as a sequence number
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")


@dataclass(frozen=True, slots=True)
class ErrorContext:
    """Where and when an error chunk's failure happened, as far as the publisher knew."""

    agent: str | None = None
    """The agent that ran: an AI CLI's name (`claude`, `codex`, `gemini`)."""
    agent_kind: str | None = None
    """What kind of agent it is: `cli`."""
    timestamp_ms: int | None = None
    """When the chunk was sent: milliseconds since the Unix epoch."""
    step: int | None = None
    """The turn it happened in, from 1 (its attempt's, in a retried stream)."""


def agent_of(name: object) -> tuple[str, str] | None:
    """(name, kind) for an agent this library runs, else None."""
    return (name, CLI_KIND) if isinstance(name, str) and name in AI_CLIS else None


def context_fields(context: ErrorContext | None, *, public: bool) -> dict[str, Any]:
    """The chunk fields of `context` (only what is set; publicly, only our CLIs' names)."""
    if context is None:
        return {}
    fields: dict[str, Any] = {}
    agent = context.agent
    if isinstance(agent, str) and (not public or agent in AI_CLIS):
        fields["agent"] = agent
        if isinstance(context.agent_kind, str) and context.agent_kind in _KINDS:
            fields["agent_kind"] = context.agent_kind
    for key, value in (("timestamp", context.timestamp_ms), ("step", context.step)):
        if type(value) is int and 0 <= value <= _MAX_NUMBER:
            fields[key] = value
    return fields


def read_context(data: Mapping[str, Any]) -> ErrorContext | None:
    """The context of an untrusted error chunk's fields; None when it has none."""
    agent = data.get("agent")
    name = agent if isinstance(agent, str) and _NAME.fullmatch(agent) else None
    kind = data.get("agent_kind") if name is not None else None
    context = ErrorContext(
        agent=name,
        agent_kind=kind if isinstance(kind, str) and kind in _KINDS else None,
        timestamp_ms=_number(data.get("timestamp"), 0),
        step=_number(data.get("step"), 1),
    )
    return None if context == ErrorContext() else context


def _number(value: object, least: int) -> int | None:
    return value if type(value) is int and least <= value <= _MAX_NUMBER else None

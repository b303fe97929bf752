"""A retried stream's attempts on the wire: which attempt each chunk belongs to, and the marker
that says an attempt's output is stale. Pure.

A retry after output started (`rc.retry(...).stream(open, retry_after_output=True,
on_attempt=wire.Attempt)`) relays every attempt's output as it comes; the reader must be told
which to keep. The source yields `Attempt(n)` before attempt n's items (`on_attempt`); the
publisher (`_publish`) numbers each chunk of attempt n with `attempt: n`, and when attempt n+1
starts after attempt n sent anything, it sends one marker chunk first:

    {"type":"text_delta","text":"Hel","seq":1,"attempt":1}
    {"type":"attempt_superseded","superseded":1,"seq":2,"attempt":2}
    {"type":"text_delta","text":"Hello","seq":3,"attempt":2}

Readers of a whole stream (`read_sse`, `read_ndjson`) keep only the attempts not superseded
(`winning`); the iterators (`iter_events`, `iter_chunks`) yield the marker where it comes, so a
live reader drops what it kept of that attempt; the AI SDK stream resets the step
(`reset-step`) after a `data-attempt-superseded` part.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from .._core.events import Event
    from ._chunks import Chunk

__all__ = ["Attempt", "AttemptSuperseded", "checked_attempt", "winning", "winning_events"]

MAX_ATTEMPT = 10**6
"""The highest attempt number written and read (no retry loop makes more)."""


def checked_attempt(number: object) -> int:
    """An attempt number to write: an int from 1 to MAX_ATTEMPT (TypeError, ValueError)."""
    if type(number) is not int:
        raise TypeError(f"an attempt number is an int, not {type(number).__name__}")
    if not 1 <= number <= MAX_ATTEMPT:
        raise ValueError(f"an attempt number is from 1 to {MAX_ATTEMPT}")
    return number


@dataclass(frozen=True, slots=True)
class Attempt:
    """What a retried source yields before attempt `number`'s items: pass the class as
    `Retrying.stream`'s `on_attempt`. Never written itself: the chunks after it carry it."""

    number: int
    """The attempt that starts here, from 1."""

    def __post_init__(self) -> None:
        checked_attempt(self.number)


@dataclass(frozen=True, slots=True)
class AttemptSuperseded:
    """The output of attempt `superseded` is stale: a later attempt replaces it."""

    superseded: int
    """The attempt whose output a reader drops (every chunk that carried this number)."""
    type: ClassVar[str] = "attempt_superseded"

    def __post_init__(self) -> None:
        checked_attempt(self.superseded)

    def to_dict(self) -> dict[str, object]:
        """The marker as chunk data (the chunk's own `attempt` is the one that replaces it)."""
        return {"type": self.type, "superseded": self.superseded}


def winning(chunks: Iterable[Chunk]) -> list[Chunk]:
    """The chunks a whole stream's reader keeps: none of an attempt a marker superseded, and
    no marker; a chunk that names no attempt is kept."""
    kept = list(chunks)
    stale = {chunk.event.superseded for chunk in kept if isinstance(chunk.event, AttemptSuperseded)}
    if not stale:  # no marker: nothing to drop
        return kept
    return [
        chunk
        for chunk in kept
        if not isinstance(chunk.event, AttemptSuperseded) and chunk.attempt not in stale
    ]


def winning_events(chunks: Iterable[Chunk]) -> list[Event]:
    """The events of `winning(chunks)`."""
    return [c.event for c in winning(chunks) if not isinstance(c.event, AttemptSuperseded)]

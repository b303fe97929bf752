"""Decisions remembered per HTTP answer: what a status and an error body decide, worked out once
and filled in on each call with that call's own facts (its request id, its wait).

An SDK's error carries the same few bodies again and again (the same rate limit, the same
context window): reading one (`ProviderBody.read`), deciding it (`decide`) and checking what
the upstream wrote for credentials (`answer_facts`) cost most of classifying it. The key is
the status (a plain int) and the body's content written out by `marshal`, which writes only
values of the exact built-in types (a subclass may lie in `==`, and the reading reads a str
subclass as no text: marshal refuses it) and writes them faithfully (the same bytes are the
same values, of the same types, in the same order). So a body changed after a first call is
a new key, and a key met again is a body the full path would read the same. A body with any
other value, an answer whose upstream text holds what the scrubber cleans, or a request id it
would clean, takes the full path, each time: what is remembered is what the full path decides
(tests/classify/http/test_remembered.py holds them equal, hostile bodies too).

The decisions are forgotten with the scrubber's memo (a pattern added, `forget`, a code
registered or removed): the message kept was scrubbed by the patterns of its time, the row
kept is the table's of its time. Bounded twice: short bodies only, and emptied
when full.
"""

from __future__ import annotations

import marshal
from typing import Any, NamedTuple

from ..._core.codes import CodeRow
from ..._core.secrets import ScrubbedMemo
from .answers import answer_facts, decide
from .bodies import ProviderBody

__all__ = ["Decision", "answer_key", "remembered"]

_ENTRIES = 1024
_KEY_BYTES = 4096  # a key's body written out, at most
# Version 2 writes each value whole (later versions write a value met twice as a reference, by
# its reference count): the same content is the same bytes, whoever else holds its parts.
_MARSHAL_VERSION = 2
_UNKNOWN = object()  # not met yet (None is remembered too: the full path, each time)


class Decision(NamedTuple):
    """What one answer decides, but for the facts of the call that met it."""

    row: CodeRow
    """The table's row, as registered when it was decided (registering or removing a code
    forgets the decisions, with the scrubber's memo: a code registered anew is read anew)."""
    body: ProviderBody
    """The body's facts: its request id, Google's retry delay for a wait hint."""
    message: str
    """The developer text, as the full path keeps it."""
    status: int | None
    """The status, as the full path keeps it."""
    details: dict[str, Any]
    """The upstream's names for it (`error_type`, `error_code`, ...): copied on each use."""
    lists: tuple[str, ...]
    """The names in `details` whose values are lists (Google's `quota_ids`, a list of texts):
    each answer copies them too, so a caller changing one answer's changes no other's."""


_memo = ScrubbedMemo(_ENTRIES)


def answer_key(status: int, body: object) -> tuple[int, bytes] | None:
    """The key of a plain int status and a body (a dict), or None when they are not
    remembered: the body holds a value of any other type, or is nested past marshal's limit."""
    if type(body) is not dict:
        return None
    try:
        return (status, marshal.dumps(body, _MARSHAL_VERSION))
    except ValueError:  # a subclass, an object of a class of its own, too deep
        return None


def remembered(status: int, body: object) -> Decision | None:
    """The decision for a plain int status and a raw body (worked out at the first meeting),
    or None when the full path must read them: a body not remembered, or one whose upstream
    text holds what the scrubber cleans."""
    key = answer_key(status, body)
    if key is None:
        return None
    entries = _memo.entries()  # read before the decision: `keep` writes to these
    decision = entries.get(key, _UNKNOWN)
    if decision is _UNKNOWN:
        decision = _decided(status, body)
        if len(key[1]) <= _KEY_BYTES:
            _memo.keep(entries, key, decision)
    return decision  # type: ignore[return-value]


def _decided(status: int, raw: object) -> Decision | None:
    """The full path's decision, made once; None when the upstream's text must be cleaned
    (the full path runs for it each time)."""
    body = ProviderBody.read(raw)
    message, kept_status, details, clean = answer_facts(status, body)
    if not clean:
        return None
    lists = tuple(name for name, value in details.items() if type(value) is list)
    return Decision(decide(status, body), body, message, kept_status, details, lists)

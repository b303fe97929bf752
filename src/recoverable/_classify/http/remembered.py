"""Decisions remembered per HTTP answer: what a status and an error body decide, worked out once
and filled in on each call with that call's own facts (its request id, its wait).

An SDK's error carries the same few bodies again and again (the same rate limit, the same
context window): reading one (`ProviderBody.read`), deciding it (`decide`) and checking what
the upstream wrote for credentials (`answer_facts`) cost most of classifying it. The key is
the body's content, so a body changed after a first call is a new key: the status (a plain
int), and the members of what `ProviderBody.read` reads, each value a plain `str` or None (a
subclass may lie in `==`, and the reading reads it as no text; a nested value is read only
by the full reading). For a body whose `error` member is an object, that object's members and
the body's `request_id`, which is all the reading reads of it; for any other body, all of its
members. A member's name needs no check: the reading finds it by the same `==` and hash as
the key does. Anything else, an answer whose upstream text holds what the scrubber cleans, or
a request id it would clean, takes the full path, each time: what is remembered is what the
full path decides (tests/classify/http/test_remembered.py holds them equal, hostile bodies
too).

The decisions are forgotten with the scrubber's memo (a pattern added, `forget`): the message
kept was scrubbed by the patterns of its time. Bounded twice: keys of short texts only, and
emptied when full.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..._core.secrets import ScrubbedMemo
from .answers import answer_facts, decide
from .bodies import ProviderBody

__all__ = ["Decision", "answer_key", "remembered"]

_ENTRIES = 1024
_KEY_CHARS = 4096  # the texts of one key, at most
_KEY_MEMBERS = 32
_PLAIN = frozenset((str, type(None)))
_FLAT = object()  # stands for the request id in the key of a body with no `error` object
_UNKNOWN = object()  # not met yet (None is remembered too: the full path, each time)


class Decision(NamedTuple):
    """What one answer decides, but for the facts of the call that met it."""

    code: str
    """The row's code (its row is read on each use: a code registered anew is read anew)."""
    body: ProviderBody
    """The body's facts: its request id, Google's retry delay for a wait hint."""
    message: str
    """The developer text, as the full path keeps it."""
    status: int | None
    """The status, as the full path keeps it."""
    details: dict[str, Any]
    """The upstream's names for it (`error_type`, `error_code`, ...): copied on each use."""


_memo = ScrubbedMemo(_ENTRIES)


def answer_key(status: int, body: object) -> tuple[object, ...] | None:
    """The key of a plain int status and a body, or None when they are not remembered."""
    if type(body) is not dict:
        return None
    error = body.get("error")
    if type(error) is dict:
        request_id = body.get("request_id")
        if request_id is not None and type(request_id) is not str:
            return None
        members: dict[Any, Any] = error
    else:
        request_id, members = _FLAT, body
    if _PLAIN.issuperset(map(type, members.values())):
        return (status, request_id, *members.items())
    return None


def remembered(status: int, body: object) -> Decision | None:
    """The decision for a plain int status and a raw body (worked out at the first meeting),
    or None when the full path must read them: a body not remembered, or one whose upstream
    text holds what the scrubber cleans."""
    key = answer_key(status, body)
    if key is None:
        return None
    decision = _memo.entries().get(key, _UNKNOWN)
    if decision is _UNKNOWN:
        decision = _decided(status, body)
        if len(key) <= _KEY_MEMBERS and _chars(key) <= _KEY_CHARS:
            _memo.keep(key, decision)
    return decision  # type: ignore[return-value]


def _chars(key: tuple[Any, ...]) -> int:
    """How many characters the texts of a key hold (its values: plain texts or None)."""
    request_id = key[1]
    chars = len(request_id) if type(request_id) is str else 0
    return chars + sum(len(member[1] or "") for member in key[2:])


def _decided(status: int, raw: object) -> Decision | None:
    """The full path's decision, made once; None when the upstream's text must be cleaned
    (the full path runs for it each time)."""
    body = ProviderBody.read(raw)
    message, kept_status, details, clean = answer_facts(status, body)
    if not clean:
        return None
    return Decision(decide(status, body).code, body, message, kept_status, details)

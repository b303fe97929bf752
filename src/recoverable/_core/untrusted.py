"""Values from elsewhere, made safe to keep: bounded, valid, JSON-safe, scrubbed.

Whatever reaches a detail (an exception's text, an HTTP body, a CLI line, a payload from
another process) may be hostile: huge, cyclic, deeply nested, invalid Unicode, NaN, a
credential. Every door into `ErrorDetail` applies these functions, so no input can make
building or serialising a detail slow, raise, or leak.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from .secrets import REDACTED, entry_name, scrub

__all__ = [
    "MAX_HINT_MS",
    "MAX_MESSAGE_CHARS",
    "clean_hint_ms",
    "clean_status",
    "clean_text",
    "clip",
    "is_clean",
    "json_safe_dict",
    "safe_str",
]

MAX_MESSAGE_CHARS = 4000
"""The longest developer text a detail keeps (messages, causes, details' strings)."""
MAX_HINT_MS = 7 * 24 * 3600 * 1000
"""The longest wait hint kept: a longer one is kept as this (still too long for any retry)."""
MAX_NODES = 10_000
"""The most values one `json_safe_dict` call visits; the rest become a marker."""
_MAX_DEPTH = 16
_MAX_INT = 2**63 - 1  # what every JSON reader holds exactly enough; longer ints become text
TRUNCATED = "<truncated>"
REPEATED = "<repeated>"  # a container met again (shared or cyclic): visited once, then this
_MARKERS = frozenset({TRUNCATED, REPEATED, REDACTED})


def clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text`, cut to `limit` characters, the last three "...", when longer (so clipping a
    clipped text changes nothing)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clean_text(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Developer text as a detail keeps it: valid Unicode, credentials scrubbed, clipped.

    Scrubbed before the final clip, so a credential cut in half is not left behind; the
    scrubber sees at most a few times `limit`.
    """
    if len(text) > 4 * limit:  # first: what follows costs O(4 * limit), whatever came in
        text = clip(text, 4 * limit)
    if not text.isascii():
        text = valid_unicode(text)
    text = scrub(text)
    return text if len(text) <= limit else clip(text, limit)


def is_clean(text: str) -> bool:
    """Whether `clean_text` would leave `text` as it is (for several short fields of one
    upstream answer at once, joined: one check instead of one per field)."""
    return len(text) <= MAX_MESSAGE_CHARS and text.isascii() and scrub(text) is text


def valid_unicode(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (they cannot be encoded; JSON
    readers refuse them)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        import re  # rare: only text that holds a lone surrogate

        return re.sub("[\ud800-\udfff]", "\ufffd", text)
    return text


def safe_str(value: object) -> str:
    """`str(value)`, or a placeholder when its `__str__` raises."""
    try:
        text = str(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"
    return text if type(text) is str else f"<unprintable {type(value).__name__}>"


def clean_hint_ms(value: object) -> int | None:
    """A wait hint in ms: a non-negative number, at most MAX_HINT_MS (infinity too: "never"
    is too long for any retry); None for anything else (NaN, negative, not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not value >= 0:  # NaN too
        return None
    if value >= MAX_HINT_MS:
        return MAX_HINT_MS
    return value if isinstance(value, int) else math.ceil(value)


def clean_status(value: object) -> int | None:
    """An HTTP status: an int from 100 to 999 (bool is not one); else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 999:
        return value
    return None


def json_safe_dict(data: Mapping[Any, Any], more: Iterable[tuple[Any, Any]] = ()) -> dict[str, Any]:
    """A copy of `data` that `json.dumps` accepts, in time bounded by MAX_NODES whatever its
    shape: containers met twice (shared or cyclic) become REPEATED, deeper than 16 levels or
    past the budget TRUNCATED; strings are cleaned, numbers kept finite and bounded.

    Keys are cleaned as text is, at every level (a non-str key as its `str`, scrubbed,
    clipped), and a value under a name that says it is a credential (`api_key`,
    `Authorization`, `password`: `names_credential`) is kept as REDACTED. Two keys that become
    the same are both kept: the later one as `key#2` (`#3`, ...), so nothing is lost unsaid.
    `more`, pairs read lazily after `data` (a payload's unknown keys), joins the same copy.
    """
    copier = _Copier()
    copier.seen.add(id(data))  # met again inside itself: REPEATED, as any container
    copy = copier.mapping(data.items(), 0)
    if more:
        copier.mapping(more, 0, copy)
    return copy


def _entry(key: object) -> tuple[str, bool]:
    """A key as kept, and whether the value under it is a credential by that name."""
    if type(key) is not str:
        # A str subclass becomes a plain str (its own methods are not called).
        key = str.__getitem__(key, slice(None)) if isinstance(key, str) else safe_str(key)
    if len(key) > 4 * MAX_MESSAGE_CHARS:  # `clean_text`'s bound, before the scrubber sees it
        key = clip(key, 4 * MAX_MESSAGE_CHARS)
    if not key.isascii():
        key = valid_unicode(key)
    name, secret = entry_name(key)
    return (name if len(name) <= MAX_MESSAGE_CHARS else clip(name)), secret


def _redactable(item: object) -> bool:
    """A scalar under a credential's name, but not one of our own markers (a copy of a copy
    is the same copy)."""
    if type(item) is str:
        return item not in _MARKERS
    return isinstance(item, (str, int, float)) and not isinstance(item, bool)


def _unique(copy: dict[str, Any], name: str, numbers: dict[str, int]) -> str:
    """`name#2`, `#3`, ... (clipped to the cap): the first one `copy` does not hold; `numbers`
    remembers where each name's count is, so that n colliding keys cost O(n), not O(n**2)."""
    number = numbers.get(name, 1)
    while True:
        number += 1
        suffix = f"#{number}"
        candidate = clip(name, MAX_MESSAGE_CHARS - len(suffix)) + suffix
        if candidate not in copy:
            numbers[name] = number
            return candidate


class _Copier:
    """One `json_safe_dict` call: its budget and the containers it has met."""

    __slots__ = ("budget", "made", "seen")

    def __init__(self) -> None:
        self.budget = MAX_NODES
        self.seen: set[int] = set()  # ids of the containers met: each is alive while we copy
        self.made: list[object] = []  # ... so are the ones made here (an id is never reused)

    def mapping(
        self, items: Iterable[tuple[Any, Any]], depth: int, copy: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        if copy is None:
            copy = {}
        numbers: dict[str, int] = {}
        for key, item in items:
            if self.budget <= 0:
                copy[TRUNCATED] = TRUNCATED
                break
            name, secret = _entry(key)
            if name in copy:  # two keys that scrubbing, clipping or `str` made one
                name = _unique(copy, name, numbers)
            if secret and _redactable(item):
                self.budget -= 1
                copy[name] = REDACTED
            else:
                copy[name] = self.value(item, depth + 1)
        return copy

    def value(self, value: object, depth: int) -> Any:
        self.budget -= 1
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, (int, float, str)):
            return _scalar(value)
        if self.budget <= 0 or depth >= _MAX_DEPTH:
            return TRUNCATED
        if id(value) in self.seen:
            return REPEATED
        return self.container(value, depth)

    def container(self, value: object, depth: int) -> Any:
        """A mapping, a sequence or a detail, copied; anything else as (clean) text."""
        if isinstance(value, Mapping):
            self.seen.add(id(value))
            return self.mapping(value.items(), depth)
        if isinstance(value, (list, tuple)):
            self.seen.add(id(value))
            return [self.value(item, depth + 1) for item in value[: max(self.budget, 0)]]
        to_dict = getattr(type(value), "to_dict", None)
        if getattr(type(value), "__recoverable_detail__", None) is not None and to_dict:
            self.seen.add(id(value))
            as_dict = to_dict(value)
            self.made.append(as_dict)
            return self.value(as_dict, depth)
        return clean_text(safe_str(value))


def _scalar(value: int | float | str) -> Any:
    if isinstance(value, str):
        # A str subclass becomes a plain str (its own methods are not called).
        return clean_text(value if type(value) is str else str.__getitem__(value, slice(None)))
    if isinstance(value, int):
        if -_MAX_INT <= value <= _MAX_INT:
            return int(value)  # an int subclass (an enum) becomes a plain int
        return f"<{value.bit_length()}-bit integer>"
    return float(value) if math.isfinite(value) else str(float(value))

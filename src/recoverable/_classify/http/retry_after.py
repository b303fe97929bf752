"""Retry-After: the wait a server states, in headers (seconds, HTTP dates, milliseconds) or in the
body (Google's `RetryInfo`), as milliseconds, bounded."""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..._core.untrusted import MAX_HINT_MS
from .bodies import ProviderBody

if TYPE_CHECKING:
    from datetime import datetime


# --- Retry-After ---------------------------------------------------------------------------


def header_value(headers: object, name: str) -> str | None:
    """A header by lower-case name from a mapping, an email Message or (name, value) pairs."""
    if headers is None:
        return None
    if type(headers) is dict:  # a plain dict may hold any case: scan it
        value = headers.get(name)
        if value is None:
            for key, item in headers.items():
                if isinstance(key, str) and key.lower() == name:
                    value = item
                    break
        return None if value is None else str(value)
    getter = getattr(headers, "get", None)
    if getter is not None:  # httpx / httpx2 Headers, Message, CIMultiDict: case-insensitive
        try:
            value = getter(name)
        except Exception:
            return None
        return None if value is None else str(value)
    if isinstance(headers, (list, tuple)):
        for pair in headers:
            if isinstance(pair, (list, tuple)) and len(pair) == 2:
                key, value = pair
                if isinstance(key, bytes):
                    key = key.decode("latin-1")
                if isinstance(key, str) and key.lower() == name:
                    return value.decode("latin-1") if isinstance(value, bytes) else str(value)
    return None


def _to_ms(seconds: float) -> int | None:
    """Seconds as ms: None for NaN or a negative; at most MAX_HINT_MS (a longer hint, an
    infinite one too, stays too long for any retry rather than vanishing)."""
    if not seconds >= 0:  # NaN too
        return None
    if seconds >= MAX_HINT_MS / 1000:
        return MAX_HINT_MS
    return math.ceil(seconds * 1000)


def _parse_number(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def _now_seconds(now: float | datetime | None) -> float:
    if now is None:
        return time.time()
    if isinstance(now, (int, float)):
        return float(now)
    return now.timestamp()


def _retry_after_header(value: str, now: float | datetime | None) -> int | None:
    seconds = _parse_number(value)
    if seconds is not None:
        return _to_ms(seconds)
    import email.utils  # only HTTP-dates need it, and it is slow to import

    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        return None
    return _to_ms(max(0.0, when.timestamp() - _now_seconds(now)))


# b"7" -> 7000: the whole seconds of a Retry-After met lately (the waits a server states recur;
# only digits: an HTTP-date's wait depends on the time it is read)
_second_waits: dict[bytes, int] = {}
_durations: dict[str, int | None] = {}  # "38s" -> 38000: the delays a server gives recur


def _keep_wait(digits: bytes, ms: int) -> None:
    """Remember the wait of a Retry-After of whole seconds (bounded: emptied when full)."""
    if len(_second_waits) >= 256:
        _second_waits.clear()
    _second_waits[digits] = ms


def _duration_ms(delay: object) -> int | None:
    """A protobuf Duration (`RetryInfo.retryDelay`) in ms: "38s" / "0.5s" or {seconds, nanos}."""
    if type(delay) is str:
        if delay in _durations:
            return _durations[delay]
        ms = _text_duration_ms(delay)
        if len(delay) <= 32:  # bounded twice: short texts, and emptied when full
            if len(_durations) >= 256:
                _durations.clear()
            _durations[delay] = ms
        return ms
    if isinstance(delay, Mapping):
        seconds = delay.get("seconds", 0)
        nanos = delay.get("nanos", 0)
        if isinstance(seconds, (int, float, str)) and isinstance(nanos, (int, float)):
            number = _parse_number(str(seconds))
            if number is not None:
                return _to_ms(number + nanos / 1e9)
    return None


def _text_duration_ms(delay: str) -> int | None:
    text = delay.strip()
    digits = text[:-1] if text.endswith("s") else ""
    if digits.replace(".", "", 1).isdigit() and digits.isascii():
        return _to_ms(float(digits))
    return None


def retry_after_ms(
    headers: object = None, body: object = None, *, now: float | datetime | None = None
) -> int | None:
    """The server's wait hint in ms: `retry-after-ms`, `retry-after` (seconds or HTTP-date),
    then Google `RetryInfo`. Negative or garbage values are ignored; a hint over a week is
    read as a week (still longer than any retry waits).
    """
    return hint_ms(headers, ProviderBody.read(body) if body is not None else None, now)


_LOWER_AND_VALUE = operator.itemgetter(1, 2)


def httpx_header_map(headers: object) -> dict[object, object] | None:
    """httpx/httpx2's headers as {lower-case name: value} (bytes), built in C from their own
    list of (name, lower-case name, value): one pass instead of a `get` per header at about a
    microsecond each. None when the headers are not shaped that way (any other version)."""
    entries = getattr(headers, "_list", None)
    if type(entries) is not list:
        return None
    try:
        return dict(map(_LOWER_AND_VALUE, entries))
    except (TypeError, IndexError, KeyError, ValueError):
        return None


_LOWER = operator.itemgetter(1)


def httpx_lacks(headers: object, lower: bytes) -> bool:
    """Whether `headers` are httpx/httpx2's and hold no header of that lower-case name: one
    pass in C over their own list, where building `httpx_header_map` would cost twice that."""
    entries = getattr(headers, "_list", None)
    if type(entries) is not list:
        return False
    try:
        return lower not in map(_LOWER, entries)
    except (TypeError, IndexError, KeyError):
        return False


def latin1(value: object) -> str | None:
    """A header value as text (httpx keeps bytes)."""
    if value is None:
        return None
    return value.decode("latin-1") if type(value) is bytes else str(value)


def hint_ms(
    headers: object,
    body: ProviderBody | None,
    now: float | datetime | None,
    found: dict[object, object] | None = None,
) -> int | None:
    """`retry_after_ms` over a body already read (and httpx's headers as `httpx_header_map`
    gives them, when the caller has read them already)."""
    if headers is not None:
        if found is None:
            found = httpx_header_map(headers)
        raw_seconds = None
        if found is not None:
            ms_text, raw_seconds = found.get(b"retry-after-ms"), found.get(b"retry-after")
            if ms_text is None and type(raw_seconds) is bytes:
                wait = _second_waits.get(raw_seconds)
                if wait is not None:  # whole seconds, met before
                    return wait
            ms_text = None if ms_text is None else latin1(ms_text)
            seconds_text = None if raw_seconds is None else latin1(raw_seconds)
        else:
            ms_text = header_value(headers, "retry-after-ms")
            seconds_text = header_value(headers, "retry-after")
        if ms_text is not None:
            number = _parse_number(ms_text)
            ms = _to_ms(number / 1000) if number is not None else None
            if ms is not None:
                return ms
        if seconds_text is not None:
            ms = _retry_after_header(seconds_text, now)
            if ms is not None:
                if type(raw_seconds) is bytes and raw_seconds.isdigit() and len(raw_seconds) <= 16:
                    _keep_wait(raw_seconds, ms)
                return ms
    return _duration_ms(body.retry_delay) if body is not None and body.retry_delay else None

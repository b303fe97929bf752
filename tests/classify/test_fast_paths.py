"""classify's fast paths agree with the slow paths they short-cut, on arbitrary inputs.

The hot path of `classify` skips work where the usual input makes it unnecessary: an
exception's one short ASCII argument is scrubbed without the checks `clean_text` makes,
httpx's headers are read in one pass over their own list instead of a `get` per header, a
plain int status is checked by a set lookup, a `RetryInfo` delay seen lately is remembered.
Each is compared here with the general path on arbitrary (hostile) values (hypothesis).
"""

from __future__ import annotations

import enum
from typing import Any

import httpx2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable._classify.http import (
    ProviderBody,
    decide,
    hint_ms,
    httpx_header_map,
    provider_detail,
)
from recoverable._classify.http.answers import _is_status
from recoverable._classify.http.retry_after import _duration_ms, _text_duration_ms
from recoverable._classify.pipeline import _text_of, error_message
from recoverable._core.untrusted import MAX_MESSAGE_CHARS, clean_text

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text with everything in it: lone surrogates, credentials of every shape, cut points.
_SECRETS = [
    "sk-" + "a" * 20, "sk-proj-" + "b" * 24, "AIza" + "c" * 35, "AKIA" + "D" * 16,
    "ghp_" + "e" * 36, "eyJhbGciOi.eyJzdWIiOi.sig", "Bearer " + "t" * 12, "key=abc",
    "api_key=x", "https://user:pw@host/", "x-api-key: k", "Authorization: Basic dXNlcg==",
]  # fmt: skip
texts = (
    st.text(max_size=60)
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
    | st.sampled_from(_SECRETS)
    | st.tuples(st.text(max_size=20), st.sampled_from(_SECRETS), st.text(max_size=20)).map("".join)
    | st.integers(MAX_MESSAGE_CHARS - 20, MAX_MESSAGE_CHARS + 20).map(lambda n: "k=v " * (n // 4))
)


class _Shouting(ValueError):
    def __str__(self) -> str:
        return "SHOUT"


@SETTINGS
@given(texts, st.sampled_from([ValueError, ConnectionError, TimeoutError, _Shouting]))
def test_error_message_fast_path_is_clean_text(text: str, kind: type[Exception]) -> None:
    error = kind(text)
    assert error_message(error) == clean_text(_text_of(error) or type(error).__name__)


@SETTINGS
@given(st.lists(st.one_of(st.none(), st.integers(), texts), max_size=3))
def test_error_message_of_any_arguments_is_clean_text(args: list[Any]) -> None:
    error = RuntimeError(*args)
    assert error_message(error) == clean_text(_text_of(error) or "RuntimeError")


_NAMES = st.sampled_from(
    ["retry-after", "Retry-After", "RETRY-AFTER-MS", "retry-after-ms", "x-request-id", "other"]
)
_VALUES = st.one_of(
    st.integers(-5, 10**13).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12),
    st.sampled_from(["Wed, 21 Oct 2015 07:28:00 GMT", "Thu, 01 Jan 2099 00:00:00 GMT", " 7 "]),
)


@SETTINGS
@given(st.lists(st.tuples(_NAMES, _VALUES), max_size=6), st.none() | st.sampled_from(["38s", "x"]))
def test_httpx_headers_read_in_one_pass_give_the_same_hint(
    pairs: list[tuple[str, str]], delay: str | None
) -> None:
    headers = httpx2.Headers(pairs)
    body = ProviderBody(retry_delay=delay)
    last = {name.lower(): value for name, value in pairs}  # httpx's list, read to its end
    found = httpx_header_map(headers)
    assert found is not None
    assert hint_ms(headers, body, 1e9, found) == hint_ms(last, body, 1e9)
    assert hint_ms(headers, body, 1e9) == hint_ms(last, body, 1e9)


@SETTINGS
@given(
    st.text(max_size=12)
    | st.from_regex(r"\s?[0-9]{0,6}(\.[0-9]{0,4})?s?\s?", fullmatch=True)
    | st.sampled_from(["38s", "0.5s", "1e9s", "nans", "infs", "-1s", "\u0661\u0662s"])
)
def test_a_remembered_retry_delay_is_the_delay_read_again(delay: str) -> None:
    expected = _text_duration_ms(delay)
    assert _duration_ms(delay) == expected
    assert _duration_ms(delay) == expected  # now from the memo


class _Status(enum.IntEnum):
    TOO_MANY = 429
    FORGED = 999


@SETTINGS
@given(
    st.integers(-(2**70), 2**70)
    | st.integers(90, 610)
    | st.booleans()
    | st.floats(allow_nan=True)
    | st.sampled_from(list(_Status))
)
def test_the_status_set_lookup_is_the_status_check(status: Any) -> None:
    body = ProviderBody.read({"error": {"message": "m"}})
    row = decide(status, body)
    assert (row.code == "unknown") == (not _is_status(status))
    detail = provider_detail(row, status, body, source=None, hint=None, request_id=None)
    assert detail.status == (status if _is_status(status) else None)


@SETTINGS
@given(texts, st.sampled_from(["req_1", None, "sk-" + "r" * 20]))
def test_an_sdk_error_is_scrubbed_whatever_its_text(message: str, request_id: str | None) -> None:
    """The SDK path checks all upstream text at once and cleans only when needed: the result is
    the cleaned text whichever way it went."""
    from recoverable.testing import Fault, sdk_error

    headers = {"x-request-id": request_id} if request_id else None
    body = {"error": {"message": message, "type": "requests", "code": "rate_limit_exceeded"}}
    detail = rc.classify(sdk_error("openai", Fault.status(429, body, headers)))
    assert detail.code == "provider_rate_limited"
    assert detail.message == (clean_text(message) if message else "HTTP 429")
    if request_id is not None:
        assert detail.details["request_id"] == clean_text(request_id)

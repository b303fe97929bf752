"""Remembered decisions equal the full path's: over hostile bodies (nested, unhashable, huge,
str subclasses, mutated after a first call), hostile statuses (NaN, bools, int subclasses),
headers that differ only in Retry-After, request ids that hold a credential, and a scrubber
pattern added after a first call. And a remembered chain equals the chain walked anew."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace
from typing import Any

import httpx
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable._classify import pipeline
from recoverable._classify.http import ProviderBody
from recoverable._classify.http.remembered import answer_key, remembered
from recoverable._classify.sdks.shared import sdk_answer_detail, sdk_status_detail


class Text(str):
    """A str subclass: the reading reads it as no text; the memo must not take it for one."""


class Lying(str):
    """A str subclass equal to every str, hashed as a str."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


class Status(int):
    """An int subclass as a status."""


class _Answer(Exception):
    """An SDK's HTTP error, as the handlers read one: a request id and its response's headers."""

    def __init__(self, request_id: object, headers: object) -> None:
        super().__init__("answer")
        self.request_id = request_id
        self.response = SimpleNamespace(headers=headers)


NAMES = st.sampled_from(
    ["message", "code", "type", "status", "details", "error_code", "innererror", "metadata",
     "request_id", "error", "param"]
) | st.text(max_size=6)  # fmt: skip
TEXTS = st.sampled_from(
    ["insufficient_quota", "context_length_exceeded", "rate_limit_error", "overloaded_error",
     "RESOURCE_EXHAUSTED", "invalid_request_error", "prompt is too long: 9 tokens",
     "Your credit balance is too low", "key sk-abcdefghijklmnopqrstuvwx1234", "x" * 5000, ""]
) | st.text(max_size=40)  # fmt: skip
LEAVES = (
    st.none()
    | TEXTS
    | TEXTS.map(Text)
    | TEXTS.map(Lying)
    | st.integers()
    | st.booleans()
    | st.floats(allow_nan=True)
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=4),
    max_leaves=12,
)
MEMBERS = st.dictionaries(NAMES, VALUES, max_size=6)
BODIES = (
    MEMBERS | st.builds(lambda error, rest: {**rest, "error": error}, MEMBERS, MEMBERS) | VALUES
)
STATUSES = (
    st.integers(min_value=-3, max_value=1000)
    | st.integers(min_value=100, max_value=599).map(Status)
    | st.booleans()
    | st.just(math.nan)
)
REQUEST_IDS = st.none() | TEXTS | TEXTS.map(Text) | st.just("sk-abcdefghijklmnopqrstuvwx1234")
HEADERS = st.none() | st.dictionaries(
    st.sampled_from(["retry-after", "x-request-id", "retry-after-ms"]),
    st.sampled_from(["7", "30", "1.5", "-1", "nonsense", "Wed, 21 Oct 2015 07:28:00 GMT", "req_9"])
    | st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=10),
    max_size=3,
).map(httpx.Headers)


def _same(cached: rc.ErrorDetail, full: rc.ErrorDetail) -> None:
    assert cached == full
    assert cached.to_dict() == full.to_dict()
    assert list(cached.details) == list(full.details)  # the same order too


def _full(exc: BaseException, status: Any, body: object) -> rc.ErrorDetail:
    return sdk_status_detail(exc, status, ProviderBody.read(body), "openai")


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(status=STATUSES, body=BODIES, request_id=REQUEST_IDS, headers=HEADERS)
def test_a_remembered_decision_is_the_full_paths(
    status: Any, body: Any, request_id: object, headers: object
) -> None:
    exc = _Answer(request_id, headers)
    first = sdk_answer_detail(exc, status, body, "openai")  # remembers
    again = sdk_answer_detail(exc, status, body, "openai")  # reads what it remembered
    full = _full(exc, status, body)
    _same(first, full)
    _same(again, full)
    assert again.details is not first.details  # each detail has a details of its own


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(body=MEMBERS, name=NAMES, value=VALUES)
def test_a_body_changed_after_a_first_call_is_decided_anew(
    body: dict[str, Any], name: str, value: Any
) -> None:
    exc = _Answer(None, None)
    wrapped = {"error": body}
    sdk_answer_detail(exc, 429, wrapped, "openai")
    body[name] = value  # the same dict, mutated
    _same(sdk_answer_detail(exc, 429, wrapped, "openai"), _full(exc, 429, wrapped))


def test_a_lying_or_subclassed_text_never_matches_a_plain_one() -> None:
    plain = {"code": "insufficient_quota", "message": "m"}
    exc = _Answer(None, None)
    assert sdk_answer_detail(exc, 429, plain, "openai").code == "provider_quota_exceeded"
    for forged in (Text("insufficient_quota"), Lying("anything")):
        body = {"code": forged, "message": "m"}
        assert answer_key(429, body) is None
        got = sdk_answer_detail(exc, 429, body, "openai")
        assert got.code == "provider_rate_limited" == _full(exc, 429, body).code


def test_statuses_that_are_no_plain_int_are_not_remembered() -> None:
    body = {"code": "rate_limit_exceeded", "message": "slow down"}
    exc = _Answer(None, None)
    for status in (Status(429), True, math.nan, 429.0):
        _same(sdk_answer_detail(exc, status, body, "openai"), _full(exc, status, body))  # type: ignore[arg-type]
    assert sdk_answer_detail(exc, True, body, "openai").status is None  # type: ignore[arg-type]


def test_headers_that_differ_only_in_retry_after_give_their_own_waits() -> None:
    body = {"code": "rate_limit_exceeded", "message": "Rate limit reached"}
    waits = []
    for seconds in ("7", "30", "nonsense", None):
        headers = httpx.Headers({"retry-after": seconds} if seconds else {})
        exc = _Answer("req_1", headers)
        got = sdk_answer_detail(exc, 429, body, "openai")
        _same(got, _full(exc, 429, body))
        waits.append(got.retry_after_ms)
    assert waits == [7000, 30000, None, None]


def test_a_request_id_holding_a_credential_is_scrubbed_as_the_full_path_does() -> None:
    body = {"code": "invalid_api_key", "message": "Incorrect API key"}
    sdk_answer_detail(_Answer("req_2", None), 401, body, "openai")
    exc = _Answer("sk-abcdefghijklmnopqrstuvwx1234", None)
    got = sdk_answer_detail(exc, 401, body, "openai")
    _same(got, _full(exc, 401, body))
    assert "abcdefghijkl" not in got.details["request_id"]


def test_a_pattern_added_after_a_first_call_scrubs_what_was_remembered() -> None:
    body = {"code": "server_error", "message": "internal failure for tenant ACME-4242"}
    exc = _Answer(None, None)
    assert "ACME-4242" in sdk_answer_detail(exc, 500, body, "openai").message
    rc.secrets.add_secret_pattern(r"ACME-4242")  # the process's, as tests/core/test_config's
    got = sdk_answer_detail(exc, 500, body, "openai")
    assert "ACME-4242" not in got.message
    _same(got, _full(exc, 500, body))


def test_huge_bodies_are_decided_but_not_kept() -> None:
    # Its long text lies deeper than the count before writing reads: written, then measured.
    body = {"code": "server_error", "message": "m", "extra": {"deeper": {"y": "y" * 5000}}}
    exc = _Answer(None, None)
    _same(sdk_answer_detail(exc, 500, body, "openai"), _full(exc, 500, body))
    key = answer_key(500, body)
    assert key is not None and remembered(500, body) is not None  # decided...
    from recoverable._classify.http import remembered as module

    assert key not in module._memo.entries()  # ...and not kept


def test_a_real_sdk_error_is_classified_the_same_the_first_time_and_after() -> None:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    answers = []
    for request_id in ("req_a", "req_b"):
        response = httpx.Response(
            429,
            headers={"retry-after": "3", "x-request-id": request_id},
            json={"error": {"code": "rate_limit_exceeded", "message": "Rate limit reached"}},
            request=request,
        )
        error = openai.RateLimitError(
            "rate limited", response=response, body=response.json()["error"]
        )
        answers.append(rc.classify(error))
    assert [a.details["request_id"] for a in answers] == ["req_a", "req_b"]
    assert {a.code for a in answers} == {"provider_rate_limited"}
    assert [a.retry_after_ms for a in answers] == [3000, 3000]


# --- chains ---------------------------------------------------------------------------------


def _timeout(text: str, cause_text: str) -> BaseException:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    try:
        try:
            raise httpx.ReadTimeout(cause_text, request=request)
        except httpx.ReadTimeout as cause:
            raise openai.APITimeoutError(request=request) from cause
    except openai.APITimeoutError as error:
        error.args = (text,)
        return error


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, cause_text=TEXTS)
def test_a_remembered_chain_is_the_chain_walked_anew(text: str, cause_text: str) -> None:
    first = rc.classify(_timeout(text, cause_text))
    again = rc.classify(_timeout(text, cause_text))
    walked = pipeline._resolve_links(_timeout(text, cause_text))
    assert walked is not None
    assert first == again == walked
    assert again.details is not first.details


def test_a_chain_changed_after_a_first_call_is_walked_anew() -> None:
    error = _timeout("Request timed out.", "timed out")
    assert rc.classify(error).cause == "httpx.ReadTimeout: timed out"
    assert error.__cause__ is not None
    error.__cause__.args = ("read timed out after 30 s",)
    assert rc.classify(error).cause == "httpx.ReadTimeout: read timed out after 30 s"
    error.__cause__ = ValueError("other")
    assert rc.classify(error).cause == "ValueError: other"


def test_a_users_stage_added_after_a_first_call_is_asked() -> None:
    error = _timeout("Request timed out.", "timed out")
    assert rc.classify(error).code == "provider_timeout"
    remove = rc.add_classifier(lambda exc: rc.ErrorDetail.create("provider_overloaded"))
    try:
        assert rc.classify(error).code == "provider_overloaded"
    finally:
        remove()
    assert rc.classify(error).code == "provider_timeout"


def test_a_cycle_or_a_long_chain_is_walked_each_time() -> None:
    first, second = ValueError("a"), ValueError("b")
    first.__cause__, second.__cause__ = second, first
    assert pipeline._chain_key(first) is None
    links: list[BaseException] = [TimeoutError(str(n)) for n in range(6)]
    for outer, inner in itertools.pairwise(links):
        outer.__cause__ = inner
    assert pipeline._chain_key(links[0]) is None
    assert rc.classify(links[0]).code == rc.classify(links[0]).code


# --- what one answer hands out, and when a decision is kept -----------------------------------

_PER_DAY = {
    "error": {
        "code": 429,
        "status": "RESOURCE_EXHAUSTED",
        "message": "Quota exceeded",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel"}],
            }
        ],
    }
}


def test_an_answers_nested_details_are_its_own() -> None:
    exc = _Answer(None, None)
    first = sdk_answer_detail(exc, 429, _PER_DAY, "google")
    assert first.details["quota_ids"] == ["GenerateRequestsPerDayPerProjectPerModel"]
    first.details["quota_ids"].append("changed by a caller")
    with_id = sdk_answer_detail(_Answer("req_1", None), 429, _PER_DAY, "google")
    with_id.details["quota_ids"].clear()
    again = sdk_answer_detail(exc, 429, _PER_DAY, "google")
    assert again.details["quota_ids"] == ["GenerateRequestsPerDayPerProjectPerModel"]
    _same(again, sdk_status_detail(exc, 429, ProviderBody.read(_PER_DAY), "google"))


def test_a_decision_made_while_a_pattern_is_added_is_not_kept_under_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another thread adds a pattern while this one decides under the old ones: what it
    decided goes with the old memo, and the next call decides under the new pattern."""
    from recoverable._classify.http import remembered as module

    body = {"code": "server_error", "message": "failure for tenant QZ-7781-race"}
    decided = module._decided

    def racing(status: int, raw: object) -> object:
        decision = decided(status, raw)  # under the old patterns: clean
        rc.secrets.add_secret_pattern(r"QZ-7781-race")  # meanwhile, in another thread
        return decision

    monkeypatch.setattr(module, "_decided", racing)
    assert remembered(500, body) is not None
    monkeypatch.setattr(module, "_decided", decided)
    assert remembered(500, body) is None  # the upstream's text now holds what is scrubbed
    got = sdk_answer_detail(_Answer(None, None), 500, body, "openai")
    assert "QZ-7781" not in got.message


@pytest.fixture
def timeout_row_anew(monkeypatch: pytest.MonkeyPatch) -> rc.CodeRow:
    """`provider_timeout` registered anew (another user message); the original rows come
    back whole after the test (the very table, so no row is left a copy)."""
    monkeypatch.setattr(rc.codes, "_rows", rc.codes._rows)  # restored on teardown
    row = rc.codes["provider_timeout"]
    return rc.codes.register(
        "provider_timeout",
        category=row.category,
        retryable=row.retryable,
        fallback=row.fallback,
        exit_code=row.exit_code,
        http_status=row.http_status,
        user_message="The provider took too long (registered anew).",
        when=row.when,
        replace=True,
    )


def test_a_remembered_chain_reads_its_codes_row_anew(timeout_row_anew: rc.CodeRow) -> None:
    original = rc.codes["provider_timeout"]
    assert original is timeout_row_anew
    error = _timeout("Request timed out.", "timed out, row test")
    assert rc.classify(error).user_message == timeout_row_anew.user_message  # remembered now
    newer = rc.codes.register(
        "provider_timeout",
        category=original.category,
        retryable=original.retryable,
        fallback=original.fallback,
        exit_code=original.exit_code,
        http_status=original.http_status,
        user_message="Registered anew, twice.",
        when=original.when,
        replace=True,
    )
    again = rc.classify(error)
    assert again.user_message == "Registered anew, twice."
    assert again == pipeline._resolve_links(error)
    assert rc.codes["provider_timeout"] is newer


SECONDS = st.text(alphabet="0123456789 .-x", max_size=6) | st.integers(0, 10**20).map(str)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(SECONDS, st.none() | SECONDS), min_size=1, max_size=6))
def test_remembered_whole_second_waits_equal_the_waits_read_anew(
    answers: list[tuple[str, str | None]],
) -> None:
    """The waits of Retry-After's whole seconds kept from earlier answers are the ones each
    answer's own headers give, read with nothing kept."""
    from recoverable._classify.http import retry_after

    for seconds, ms in answers:
        headers = httpx.Headers(
            {"retry-after": seconds, **({"retry-after-ms": ms} if ms is not None else {})}
        )
        got = retry_after.hint_ms(headers, None, 0.0)
        retry_after._second_waits.clear()
        assert got == retry_after.hint_ms(headers, None, 0.0)

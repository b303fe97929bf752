"""Properties of classify and ErrorDetail over arbitrary values (hypothesis).

- `classify` never raises, whatever it is given (values, exception graphs with cycles and
  groups), and answers a registered code (or the code a payload names);
- every detail serialises to strict JSON (no NaN, no lone surrogate) and round-trips through
  JSON and pickle unchanged;
- `from_dict` raises nothing but `PayloadError`; the scrubber never raises and is idempotent;
- `user_message` is always the registry's sentence (a row's, or a foreign code's category's).
"""

from __future__ import annotations

import asyncio
import json
import pickle
from collections.abc import Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable._core.categories import category_sentence
from recoverable._core.secrets import scrub
from recoverable._core.untrusted import MAX_MESSAGE_CHARS

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text with everything in it: lone surrogates, control characters, credentials' prefixes.
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=80) | st.sampled_from(
    ["sk-" + "a" * 20, "key=x", "Bearer " + "t" * 10, "", "\udcff", "nan"]
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**300, max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | texts
)
json_like = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4)
        | st.tuples(inner, inner)
    ),
    max_leaves=25,
)
codes = st.sampled_from([row.code for row in rc.codes])


def _exception(kind: int, text: str) -> BaseException:
    makers = [
        ValueError,
        ConnectionRefusedError,
        TimeoutError,
        asyncio.CancelledError,
        KeyboardInterrupt,
        lambda t: OSError(111, t),
        lambda t: rc.RecoverableError("provider_overloaded", t),
        lambda t: ValueError([t] * 3),
    ]
    return makers[kind % len(makers)](text)


@st.composite
def exception_graphs(draw: st.DrawFn) -> BaseException:
    """A few exceptions whose causes and contexts point anywhere among them (cycles too),
    some of them wrapped in groups."""
    count = draw(st.integers(1, 6))
    errors = [_exception(draw(st.integers(0, 100)), draw(texts)) for _ in range(count)]
    for error in errors:
        error.__cause__ = draw(st.none() | st.sampled_from(errors))
        error.__context__ = draw(st.none() | st.sampled_from(errors))
        error.__suppress_context__ = draw(st.booleans())
    plain = [error for error in errors if isinstance(error, Exception)]
    if plain and draw(st.booleans()):
        members = draw(st.lists(st.sampled_from(plain), min_size=1, max_size=5))
        group = ExceptionGroup("group", members)
        errors.append(ExceptionGroup("outer", [group, group, *members]))
    return draw(st.sampled_from(errors))


def _strict_json(detail: rc.ErrorDetail) -> str:
    text = json.dumps(detail.to_dict(), allow_nan=False)
    text.encode("utf-8")  # no lone surrogate survives
    return text


def _assert_sound(detail: rc.ErrorDetail, given_code: object = None) -> None:
    assert type(detail) is rc.ErrorDetail
    assert detail.code in rc.codes or detail.code == given_code
    row = rc.codes.get(detail.code)  # a person reads only this process's sentences
    assert detail.user_message == (row.user_message if row else category_sentence(detail.category))
    assert all(type(key) is str and len(key) <= MAX_MESSAGE_CHARS for key in detail.details)
    assert detail.retry_after_ms is None or detail.retryable
    assert detail.fix_command is None or not detail.retryable
    _strict_json(detail)


@SETTINGS
@given(json_like)
def test_classify_any_value_never_raises(value: Any) -> None:
    given_code = value.get("code") if isinstance(value, Mapping) else None
    _assert_sound(rc.classify(value), given_code)


@SETTINGS
@given(exception_graphs())
def test_classify_any_exception_graph_never_raises(error: BaseException) -> None:
    _assert_sound(rc.classify(error))


@SETTINGS
@given(
    code=codes,
    message=texts,
    details=st.dictionaries(st.text(max_size=8), json_like, max_size=4),
    cause=st.none() | texts,
    retry_after_ms=st.none() | st.integers() | st.floats(),
    status=st.none() | st.integers(),
)
def test_a_created_detail_round_trips_through_json_and_pickle(
    code: str,
    message: str,
    details: dict[str, Any],
    cause: str | None,
    retry_after_ms: Any,
    status: int | None,
) -> None:
    detail = rc.ErrorDetail.create(
        code, message, details=details, cause=cause, retry_after_ms=retry_after_ms, status=status
    )
    _assert_sound(detail)
    assert rc.ErrorDetail.from_dict(json.loads(_strict_json(detail))) == detail
    assert pickle.loads(pickle.dumps(detail)) == detail
    error = pickle.loads(pickle.dumps(rc.RecoverableError(detail)))
    assert error.detail == detail


@SETTINGS
@given(json_like)
def test_from_dict_raises_nothing_but_a_payload_error(value: Any) -> None:
    payload = value if isinstance(value, dict) else {"code": "unknown", "message": "m", "x": value}
    try:
        detail = rc.ErrorDetail.from_dict(payload)
    except rc.PayloadError:
        return
    _assert_sound(detail, payload.get("code"))


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "code",
                "message",
                "retryable",
                "retry_after_ms",
                "fix_command",
                "cause",
                "details",
                "status",
                "user_message",
                "category",
                "source",
            ]
        ),
        json_like,
    )
)
def test_a_forged_payload_of_known_fields_is_read_or_refused(payload: dict[str, Any]) -> None:
    payload.setdefault("code", "provider_overloaded")
    payload.setdefault("message", "m")
    try:
        detail = rc.ErrorDetail.from_dict(payload)
    except rc.PayloadError:
        return
    _assert_sound(detail, payload["code"])


@SETTINGS
@given(texts | st.text(max_size=400))
def test_the_scrubber_never_raises_and_is_idempotent(text: str) -> None:
    once = scrub(text)
    assert scrub(once) == once

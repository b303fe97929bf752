"""The seeds' message helpers (Helix's `extractErrorMessage` and `ensureError`): the message
of any value, and any value as an exception carrying its detail."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import recoverable as rc

MESSAGES: list[tuple[Any, str]] = [
    ({"message": "fail"}, "fail"),
    (ValueError("fail"), "fail"),
    ("string error", "string error"),
    ({"foo": "bar"}, "{'foo': 'bar'}"),
    ({"message": ""}, "{'message': ''}"),  # an empty message says nothing: the value's text
    ({"message": {"nested": 1}}, "{'message': {'nested': 1}}"),
    (None, "no error was given"),
    ({"message": "sk-proj-" + "A" * 40 + " leaked"}, "sk-[REDACTED] leaked"),
]


@pytest.mark.parametrize(("value", "message"), MESSAGES)
def test_the_message_of_any_value(value: object, message: str) -> None:
    assert rc.classify(value).message == message


def test_ensure_turns_any_value_into_an_exception_carrying_its_detail() -> None:
    error = rc.RecoverableError.ensure("string error")
    assert isinstance(error, Exception)
    assert (error.code, error.message, error.__cause__) == ("unknown", "string error", None)
    original = ConnectionRefusedError(111, "Connection refused")
    wrapped = rc.RecoverableError.ensure(original)
    assert (wrapped.code, wrapped.retryable) == ("network_error", True)
    assert wrapped.__cause__ is original  # the original value preserved
    own = rc.RecoverableError("invalid_input", "bad")
    assert rc.RecoverableError.ensure(own) is own
    assert rc.RecoverableError.ensure({"message": "fail"}).message == "fail"
    assert pickle.loads(pickle.dumps(wrapped)).detail == wrapped.detail


ANY_VALUE = st.recursive(
    st.none() | st.text() | st.integers() | st.floats(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
)


@given(ANY_VALUE)
def test_ensure_never_raises(value: object) -> None:
    error = rc.RecoverableError.ensure(value)
    assert isinstance(error.message, str)


class _SpoofedClass:
    """Claims to be a detail through `__class__`, which `isinstance` believes."""

    __class__ = rc.ErrorDetail  # type: ignore[assignment]


class _RaisingMarker:
    __recoverable_error__ = 1

    @property
    def detail(self) -> object:
        raise RuntimeError("a marker whose attributes raise")


@pytest.mark.parametrize("forged", [_SpoofedClass(), _RaisingMarker()])
def test_a_forged_detail_or_marker_is_read_as_no_detail(forged: object) -> None:
    detail = rc.classify(forged)
    assert type(detail) is rc.ErrorDetail
    assert detail.code == "unknown"
    assert rc.RecoverableError.ensure(forged).code == "unknown"

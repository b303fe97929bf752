"""DBOS's readers on forged values: `rdb.read_error` and `rdb.should_retry` read what
DBOS gives back (another process's pickle, a portable-JSON error, a peer's copy of our marker
classes) and never raise on it, whatever its attributes do: wrong types, huge ints, NaN,
cycles, raising properties, forged markers and forged `DBOSMaxStepRetriesExceeded`s. A
`rdb.classified` function whose own code raises such an object still fails with a
`RecoverableStepError`. A table of the attacks, then hypothesis over their combinations.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import pytest
from dbos import PortableWorkflowError
from dbos._error import DBOSMaxStepRetriesExceeded
from hypothesis import given
from hypothesis import strategies as st

import recoverable as rc
from recoverable.integrations import dbos as rdb

from ..core.test_detail_properties import SETTINGS, _assert_sound, json_like, texts


class Raising:
    """A descriptor whose every read raises (a property that misbehaves)."""

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        raise RuntimeError("the attribute raised")


def forged(
    name: str = "Forged", module: str = "peer", bases: tuple[type, ...] = (Exception,),
    **attributes: Any,
) -> BaseException:  # fmt: skip
    """An exception of a class built here: `name` and `module` as a peer's would be, each
    attribute a class attribute (a `Raising()` raises on every read)."""
    kind = type(name, bases, {"__module__": module, **attributes})
    error: BaseException = kind("forged")
    return error


def portable(data: Any) -> PortableWorkflowError:
    return PortableWorkflowError("m", "RecoverableStepError", "provider_overloaded", data)


def cyclic_dict() -> dict[str, Any]:
    payload: dict[str, Any] = {"code": "provider_rate_limited", "retry_after_ms": 5}
    payload["cause"] = payload
    payload["details"] = {"self": payload}
    return payload


def deep_dict(depth: int) -> dict[str, Any]:
    payload: dict[str, Any] = {"code": "provider_rate_limited"}
    node = payload
    for _ in range(depth):
        node["cause"] = {"code": "provider_rate_limited"}
        node = node["cause"]
    return payload


class RaisingDict(dict[str, Any]):
    """A dict whose lookups raise (a mapping forged to look like a payload)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("lookup raised")

    def get(self, key: str, default: Any = None) -> Any:
        raise RuntimeError("get raised")

    def items(self) -> Any:
        raise RuntimeError("items raised")


class RaisingHeaders:
    def get(self, key: str, default: Any = None) -> Any:
        raise RuntimeError("headers raised")


class Request:
    def __init__(self, headers: Any) -> None:
        self.headers = headers


def exceeded(errors: Any) -> BaseException:
    error = DBOSMaxStepRetriesExceeded("call_model", 3, [])
    error.errors = errors
    return error


def self_exceeded() -> BaseException:
    error = exceeded([])
    error.errors.append(error)  # its own last attempt: a cycle
    return error


MARKER = {"__recoverable_error__": True}
DETAIL_MARKER = {"__recoverable_detail__": True}

# (what is forged, the error, the code read back)
ATTACKS: list[tuple[str, BaseException, str]] = [
    ("a marker whose detail raises", forged(**MARKER, detail=Raising()), "unknown"),
    ("a marker whose detail is a number", forged(**MARKER, detail=10**400), "unknown"),
    ("a detail marker whose to_dict raises",
     forged(**DETAIL_MARKER, to_dict=Raising()), "unknown"),
    ("a detail marker whose to_dict returns NaN",
     forged(**DETAIL_MARKER, to_dict=lambda self: {"code": math.nan}), "unknown"),
    ("a marker whose detail is a detail marker that raises",
     forged(**MARKER, detail=forged(**DETAIL_MARKER, to_dict=Raising())), "unknown"),
    ("data that raises", forged(data=Raising()), "unknown"),
    ("data whose lookups raise", forged(data=RaisingDict(code="x")), "unknown"),
    ("data with a NaN hint", portable({"code": "provider_rate_limited",
                                       "retry_after_ms": math.nan}), "unknown"),
    ("data with a 400-digit hint", portable({"code": "provider_rate_limited", "retryable": True,
                                             "retry_after_ms": 10**400}), "unknown"),
    ("data with a code of the wrong type", portable({"code": ["provider_overloaded"]}),
     "unknown"),
    ("data that contains itself", portable(cyclic_dict()), "unknown"),  # from_dict refuses
    ("data nested 5000 deep", portable(deep_dict(5000)), "unknown"),
    ("an exceeded error whose errors raise",
     forged("DBOSMaxStepRetriesExceeded", "dbos._error", errors=Raising()), "unknown"),
    ("an exceeded error with errors of numbers", exceeded([1, 2, 10**400]), "unknown"),
    ("an exceeded error with a tuple of errors", exceeded((ValueError(),)), "unknown"),
    ("an exceeded error that is its own last attempt", self_exceeded(), "unknown"),
    ("an exceeded error whose last attempt raises everywhere",
     exceeded([forged(**MARKER, detail=Raising(), data=Raising())]), "unknown"),
    ("a class whose __class__ raises", forged(__class__=Raising()), "unknown"),
    ("a cause that raises", forged(__cause__=Raising()), "unknown"),
    ("a request that raises", forged("RateLimitError", "openai", request=Raising()), "unknown"),
    ("headers that raise",
     forged("RateLimitError", "openai", request=Request(RaisingHeaders())), "unknown"),
    ("a retry count of a hundred digits",
     forged("RateLimitError", "openai", request=Request({"x-stainless-retry-count": "9" * 100})),
     "unknown"),
    ("a module that is not a string", forged(module=5), "unknown"),  # type: ignore[arg-type]
    ("a message that raises", forged(__str__=Raising()), "unknown"),
]  # fmt: skip


# by name: pytest's own isinstance on a parameter would trip on a forged __class__
NAMES = [name for name, _, _ in ATTACKS]
BY_NAME = {name: (error, code) for name, error, code in ATTACKS}


@pytest.mark.parametrize("name", NAMES)
def test_the_readers_never_raise_on_a_forged_error(name: str) -> None:
    error, code = BY_NAME[name]
    detail = rdb.read_error(error)
    _assert_sound(detail)
    assert detail.code == code
    assert rdb.should_retry(error) in (True, False)


@pytest.mark.parametrize("name", NAMES)
def test_a_classified_function_raising_a_forged_error_fails_classified(name: str) -> None:
    error = BY_NAME[name][0]

    @rdb.classified
    def step() -> None:
        raise error

    with pytest.raises(rdb.RecoverableStepError) as raised:
        step()
    _assert_sound(raised.value.detail)
    assert raised.value.__cause__ is error


# --- hypothesis: any combination of forged attributes ------------------------------------

values = (
    json_like
    | st.builds(Raising)
    | st.builds(cyclic_dict)
    | st.builds(RaisingDict, st.dictionaries(st.text(max_size=4), json_like, max_size=2))
    | st.builds(Request, json_like | st.builds(RaisingHeaders))
    | st.sampled_from([ValueError("x"), rc.RecoverableError("provider_overloaded")])
)
MARKERS = (MARKER, DETAIL_MARKER, {**MARKER, **DETAIL_MARKER})
CLASS_NAMES = ("DBOSMaxStepRetriesExceeded", "RecoverableStepError", "RateLimitError",
               "APIStatusError", "ClientError", "Forged")  # fmt: skip
MODULES = ("dbos._error", "openai", "anthropic", "google.genai.errors", "httpx",
           "recoverable._core.error", "peer")  # fmt: skip
ATTRIBUTES = ("detail", "data", "errors", "request", "__cause__", "to_dict", "code",
              "status_code", "body", "response", "message", "args")  # fmt: skip


@st.composite
def forged_errors(draw: st.DrawFn) -> BaseException:
    attributes = draw(st.dictionaries(st.sampled_from(ATTRIBUTES), values, max_size=5))
    if draw(st.booleans()):
        attributes.update(draw(st.sampled_from(MARKERS)))
    name, module = draw(st.sampled_from(CLASS_NAMES)), draw(st.sampled_from(MODULES))
    error = forged(name, module, **attributes)
    if name == "DBOSMaxStepRetriesExceeded" and draw(st.booleans()):
        error.errors = draw(st.lists(values | st.just(error), max_size=3))  # type: ignore[attr-defined]
    return error


@SETTINGS
@given(forged_errors())
def test_any_forged_error_is_read_without_raising(error: BaseException) -> None:
    _assert_sound(rdb.read_error(error))
    assert rdb.should_retry(error) in (True, False)


@SETTINGS
@given(json_like, texts)
def test_any_portable_payload_is_read_without_raising(data: Any, name: str) -> None:
    error = PortableWorkflowError("m", name, None, data)
    _assert_sound(rdb.read_error(error))
    assert rdb.should_retry(error) in (True, False)
    assert rdb.should_retry(exceeded([error, error])) in (True, False)


def test_the_warning_about_a_raw_error_names_a_package_and_no_text(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rdb, "_unclassified_warned", set())
    with caplog.at_level(logging.WARNING, logger="recoverable"):
        rdb.should_retry(forged(module="sk-live-0123456789abcdef\nforged log line"))
        rdb.should_retry(forged(module="openai._exceptions"))
    said = [record.getMessage() for record in caplog.records]
    assert [line.split(" that ")[0] for line in said] == [
        "rdb.should_retry got an exception of package unknown",
        "rdb.should_retry got an exception of package openai",
    ]
    assert not any("sk-live" in line or "\n" in line for line in said)

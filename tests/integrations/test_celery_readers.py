"""The Celery readers on forged values: `read_error`, `read_result` (over a
real redis-server holding forged task metas) and the attempt read from a task's message
headers never raise, whatever they are given, and answer an `ErrorDetail` of a registered
code (a table of attacks, then hypothesis).

What arrives is untrusted: a result backend holds what any producer wrote, an exception can
be any object (a forged `__recoverable_error__` marker whose attributes raise, a spoofed
`__class__`, args that are cycles, 400-digit integers or NaN).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import redis
from celery import Celery
from hypothesis import given
from hypothesis import strategies as st

import recoverable as rc
from recoverable.fleet._rules import GO
from recoverable.integrations import celery as rcc

from ..core.test_detail_properties import SETTINGS, codes, json_like, texts
from ..support.redis import redis_server


def _raise(*_: object) -> Any:
    raise RuntimeError("a forged attribute")


class RaisingMarker(Exception):
    """Says it is ours; every attribute we would read raises."""

    __recoverable_error__ = True
    detail = property(_raise)


class LookAlike:
    """A detail look-alike another copy of the library would answer to_dict on."""

    __recoverable_detail__ = True

    def __init__(self, made: Callable[[], Any]) -> None:
        self.made = made

    def to_dict(self) -> Any:
        return self.made()


def marker_with(detail: Any) -> BaseException:
    kind = type("RecoverableError", (Exception,), {"__recoverable_error__": True})
    error = kind("m")
    error.detail = detail  # type: ignore[attr-defined]
    return error


class SpoofedClass(Exception):
    """`isinstance(x, RecoverableError)` is True; its `detail` is no detail."""

    @property
    def __class__(self) -> type:
        return rc.RecoverableError

    detail = "not a detail"


class SpoofedDetail:
    """`isinstance(x, ErrorDetail)` is True; it is nothing of the kind."""

    @property
    def __class__(self) -> type:
        return rc.ErrorDetail


class RaisingClass(Exception):
    @property
    def __class__(self) -> type:
        raise RuntimeError("no class")


class RaisingMeta(type):
    def __getattr__(cls, name: str) -> Any:
        raise RuntimeError(f"no {name}")


class MetaRaising(Exception, metaclass=RaisingMeta):
    pass


class RaisingArgs(Exception):
    args = property(_raise)


class RaisingStr(Exception):
    __str__ = _raise
    __repr__ = _raise


class RaisingMapping(dict[str, Any]):
    keys = _raise
    items = _raise
    __iter__ = _raise
    __getitem__ = _raise


def _cycle() -> dict[str, Any]:
    payload: dict[str, Any] = {"code": "provider_rate_limited"}
    payload["details"] = payload
    payload["cause"] = payload
    return payload


def _deep(depth: int = 50_000) -> dict[str, Any]:
    node: dict[str, Any] = {"code": "provider_overloaded"}
    for _ in range(depth):
        node = {"code": "provider_overloaded", "cause": node}
    return node


def _self_caused() -> BaseException:
    error = Exception("m", {"code": "provider_overloaded"})
    error.__cause__ = error
    error.__context__ = error
    return error


def _payload(**fields: Any) -> BaseException:
    return Exception("m", {"code": "provider_rate_limited", "message": "m", **fields})


# name -> (the forged object, the code it must read as; None: any registered code)
FORGED: dict[str, tuple[Callable[[], object], str | None]] = {
    "a marker whose detail raises": (lambda: RaisingMarker("m"), "unknown"),
    "a marker whose detail is a string": (lambda: marker_with("provider_overloaded"), None),
    "a marker whose detail's to_dict raises": (lambda: marker_with(LookAlike(_raise)), None),
    "a marker whose detail's to_dict is a cycle": (lambda: marker_with(LookAlike(_cycle)), None),
    "a marker whose detail's to_dict is a list": (lambda: marker_with(LookAlike(list)), None),
    "a marker whose detail's to_dict is deep": (lambda: marker_with(LookAlike(_deep)), None),
    "a spoofed RecoverableError class": (SpoofedClass, None),
    "a spoofed ErrorDetail class": (SpoofedDetail, "unknown"),
    "a __class__ that raises": (RaisingClass, None),
    "a metaclass whose attributes raise": (MetaRaising, None),
    "args that raise": (RaisingArgs, None),
    "str and repr that raise": (RaisingStr, None),
    "a payload mapping that raises": (lambda: Exception("m", RaisingMapping(code="x")), None),
    "a payload that is a cycle": (lambda: Exception("m", _cycle()), None),
    "a payload deeper than the recursion limit": (lambda: Exception("m", _deep()), None),
    "a 400-digit wait": (lambda: _payload(retry_after_ms=10**400), None),
    "a NaN wait": (lambda: _payload(retry_after_ms=math.nan), None),
    "an infinite wait": (lambda: _payload(retry_after_ms=math.inf), None),
    "a negative wait": (lambda: _payload(retry_after_ms=-5), None),
    "a boolean wait": (lambda: _payload(retry_after_ms=True), None),
    "a wait as text": (lambda: _payload(retry_after_ms="1e9"), None),
    "a forged user sentence": (lambda: _payload(user_message="<script>x</script>"),
                               "provider_rate_limited"),
    "an unregistered command": (lambda: _payload(fix_command="rm -rf ~"), None),
    "a code that is no text": (lambda: Exception("m", {"code": 5}), None),
    "a code of 100 kB": (lambda: Exception("m", {"code": "x" * 100_000}), None),
    "an exception caused by itself": (_self_caused, None),
    "None": (lambda: None, "unknown"),
    "an integer": (lambda: 10**400, "unknown"),
    "a bare payload dict": (lambda: {"code": "provider_rate_limited"}, None),
}  # fmt: skip


def assert_sound(detail: object, code: str | None = None) -> None:
    """A real ErrorDetail of a registered code, strict JSON, the registry's sentence."""
    assert type(detail) is rc.ErrorDetail
    row = rc.codes.get(detail.code)
    assert row is not None, detail.code
    if code is not None:
        assert detail.code == code
    assert detail.user_message == row.user_message
    json.dumps(detail.to_dict(), allow_nan=False)
    assert detail.fix_command != "rm -rf ~"


@pytest.mark.parametrize("name", sorted(FORGED))
def test_detail_from_exception_never_raises_on_a_forged_object(name: str) -> None:
    made, code = FORGED[name]
    assert_sound(rcc.read_error(made()), code)  # type: ignore[arg-type]


def test_a_payload_that_is_ours_is_still_read() -> None:
    detail = rc.ErrorDetail.create("provider_overloaded", "busy", details={"attempt": 2})
    assert rcc.read_error(Exception(detail.message, detail.to_dict())) == detail
    assert rcc.read_error(rc.RecoverableError(detail)) == detail


# --- hypothesis: any object built from hostile parts -------------------------------------

hostile_parts = st.sampled_from(
    [RaisingMapping(code="x"), _cycle(), LookAlike(_raise), SpoofedDetail(), math.nan, 10**400]
)
values = json_like | hostile_parts
payloads = st.fixed_dictionaries(
    {"code": codes | texts | values},
    optional={name: values for name in ("retry_after_ms", "details", "cause", "message",
                                        "retryable", "status", "fix_command")},
)  # fmt: skip


@st.composite
def forged_exceptions(draw: st.DrawFn) -> BaseException:
    args = draw(st.tuples(texts, payloads | values) | st.lists(values, max_size=3).map(tuple))
    kind = draw(st.sampled_from([Exception, ValueError, RaisingStr, RaisingMarker]))
    error = kind(*args)
    if draw(st.booleans()):
        error.__cause__ = error if draw(st.booleans()) else kind(*args)
    return error


@SETTINGS
@given(forged_exceptions())
def test_detail_from_exception_never_raises_on_any_forged_exception(error: BaseException) -> None:
    assert_sound(rcc.read_error(error))


@SETTINGS
@given(payloads | values)
def test_detail_from_exception_never_raises_on_any_marker(detail: Any) -> None:
    assert_sound(rcc.read_error(marker_with(detail)))
    assert_sound(rcc.read_error(marker_with(LookAlike(lambda: detail))))


# --- the attempt a forged message says -----------------------------------------------------

# the request's retries, its custom headers -> the attempt read
HEADERS: list[tuple[object, object, int]] = [
    (0, None, 1),
    (3, {}, 4),
    (3, {rcc.TURNED_BACK_HEADER: 2}, 2),
    (3, {rcc.TURNED_BACK_HEADER: 9}, 1),  # more turn-backs than retries: clamped
    (3, {rcc.TURNED_BACK_HEADER: -1}, 4),
    (3, {rcc.TURNED_BACK_HEADER: 10**400}, 4),
    (3, {rcc.TURNED_BACK_HEADER: math.nan}, 4),
    (3, {rcc.TURNED_BACK_HEADER: True}, 4),
    (3, {rcc.TURNED_BACK_HEADER: "2"}, 4),
    (3, {rcc.TURNED_BACK_HEADER: [2]}, 4),
    ("3", None, 1),
    (10**400, None, 1),
    (math.inf, None, 1),
    (-4, None, 1),
    (None, None, 1),
    (2, RaisingMapping(), 3),
    (2, ["not", "a", "mapping"], 3),
]  # fmt: skip


@pytest.mark.parametrize(("retries", "headers", "attempt"), HEADERS)
def test_the_attempt_a_forged_message_says(retries: object, headers: object, attempt: int) -> None:
    assert rcc.attempt_of(SimpleNamespace(retries=retries, headers=headers)) == attempt


class RaisingRequest:
    retries = property(_raise)
    headers = property(_raise)

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(name)


def test_a_request_whose_attributes_raise_is_a_first_attempt() -> None:
    assert rcc.attempt_of(RaisingRequest()) == 1
    assert rcc.attempt_of(object()) == 1


@SETTINGS
@given(values, values, values)
def test_the_attempt_is_always_between_1_and_retries_plus_1(
    retries: Any, turned_back: Any, since: Any
) -> None:
    headers = {rcc.TURNED_BACK_HEADER: turned_back, rcc.WAITING_SINCE_HEADER: since}
    attempt = rcc.attempt_of(SimpleNamespace(retries=retries, headers=headers))
    counted = retries if type(retries) is int and 0 <= retries <= 1_000_000 else 0
    assert 1 <= attempt <= counted + 1


# --- read_result over forged metas in a real redis-server ---------------------------

_EXC = {"exc_type": "RecoverableError", "exc_module": "recoverable._core.error"}
# name -> the raw meta stored for the task, the code read (None: the task did not fail;
# "unread": Celery could not rebuild it, read as `unknown`; a payload with a forged field is
# refused whole by `from_dict`, and the exception Celery rebuilt is classified: `unknown`)
METAS: dict[str, tuple[bytes, str | None]] = {
    "not JSON": (b"{not json", "unread"),
    "a list": (b"[1, 2]", "unread"),
    "no status": (json.dumps({"result": 1}).encode(), "unread"),
    "a failure that is a number": (json.dumps({"status": "FAILURE", "result": 5}).encode(),
                                   "unread"),
    "a failure that is text": (json.dumps({"status": "FAILURE", "result": "x"}).encode(),
                               "unread"),
    "no exception type": (json.dumps({"status": "FAILURE", "result": {"exc_message": []}})
                          .encode(), "unread"),
    "a type that is a number": (json.dumps({"status": "FAILURE", "result": {
        "exc_type": 5, "exc_message": [], "exc_module": "builtins"}}).encode(), "unread"),
    "a function for a class": (json.dumps({"status": "FAILURE", "result": {
        "exc_type": "system", "exc_message": ["echo hi"], "exc_module": "os"}}).encode(),
        "unread"),
    "JSON deeper than the decoder": (
        b'{"status": "FAILURE", "result": ' + b"[" * 5000 + b"]" * 5000 + b"}", "unread"),
    "a 400-digit wait": (b'{"status": "FAILURE", "result": {"exc_type": "RecoverableError", '
                         b'"exc_module": "recoverable._core.error", "exc_message": ["m", {"code": '
                         b'"provider_rate_limited", "retry_after_ms": 1' + b"0" * 400 + b"}]}}",
                         "unknown"),
    "a NaN wait": (b'{"status": "FAILURE", "result": {"exc_type": "RecoverableError", '
                   b'"exc_module": "recoverable._core.error", "exc_message": ["m", {"code": '
                   b'"provider_rate_limited", "retry_after_ms": NaN}]}}', "unknown"),
    "ours": (json.dumps({"status": "FAILURE", "result": {**_EXC, "exc_message": [
        "busy", {"code": "provider_overloaded", "message": "busy"}]}}).encode(),
        "provider_overloaded"),
    "a retry that is a list": (json.dumps({"status": "RETRY", "result": [1]}).encode(),
                               "unread"),
    "a status that is a number": (json.dumps({"status": 5, "result": None}).encode(), None),
    "a success": (json.dumps({"status": "SUCCESS", "result": {"exc_type": "X"}}).encode(), None),
}  # fmt: skip


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Celery, redis.Redis]]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        app = Celery("forged", broker=url, backend=url)
        app.conf.update(
            result_serializer="json", accept_content=["json"], result_accept_content=["json"]
        )
        client = redis.Redis.from_url(url)
        try:
            yield app, client
        finally:
            client.close()
            app.close()


@pytest.mark.parametrize("name", sorted(METAS))
def test_detail_from_result_never_raises_on_a_forged_meta(
    backend: tuple[Celery, redis.Redis], name: str
) -> None:
    app, client = backend
    raw, code = METAS[name]
    task_id = "forged-" + name.replace(" ", "-")
    client.set(f"celery-task-meta-{task_id}", raw)
    detail = rcc.read_result(app.AsyncResult(task_id))
    if code is None:
        assert detail is None
        return
    assert_sound(detail, "unknown" if code == "unread" else code)
    if code == "unread":  # named by the class Celery raised, never the stored text
        assert detail.message.startswith("the task's stored result could not be read (")
        assert "echo hi" not in detail.message


def test_a_result_that_is_not_read_from_a_backend_is_read_too(tmp_path: Path) -> None:
    class Broken:
        result = property(_raise)

    detail = rcc.read_result(Broken())  # type: ignore[arg-type]
    assert_sound(detail, "unknown")
    assert rcc.read_result(SimpleNamespace(result=ValueError("x"))) is not None  # type: ignore[arg-type]


FORGED_SINCE = [math.nan, math.inf, -math.inf, 10**400, -(10**400), "1e9", True, None, [1.0],
                {"a": 1}, -1e308, 1e308, 0, -1]  # fmt: skip


@pytest.mark.parametrize("since", FORGED_SINCE, ids=repr)
def test_a_forged_waiting_since_header_never_raises(since: object) -> None:
    """A run whose message says it has waited since a forged time still runs, or stops with
    `cooldown_too_long` (a time long past): never an exception of its own."""
    eager = Celery("forged-since", broker="memory://", backend="cache+memory://")
    eager.conf.task_always_eager = True
    fleet = rc.fleet.Cooldowns.memory().key("forged-since")

    @eager.task(bind=True, base=rcc.ClassifiedTask, recoverable_cooldowns=fleet, name="since")
    def ask(self: Any) -> int:
        return int(self.recoverable_attempt)

    result = ask.apply(headers={rcc.WAITING_SINCE_HEADER: since, rcc.TURNED_BACK_HEADER: since})
    assert result.get() == 1
    fleet.after_failure(
        rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=100).detail,
        GO,
    )
    waited = ask.apply(headers={rcc.WAITING_SINCE_HEADER: since})
    if waited.state == "SUCCESS":
        assert waited.get() == 1
    else:  # a time long past: this attempt has waited its policy's longest already
        detail = rcc.read_result(waited)
        assert detail is not None and detail.details["gave_up"] == "cooldown_too_long"
        assert type(since) in (int, float) and since < 1e9

"""DBOS: steps retry as the classification says, and stored errors keep the detail.

    from recoverable.integrations import dbos as rdb

    @rdb.step(rc.RetryPolicy(attempts=3))       # a DBOS step; recoverable's retry inside
    def call_model(prompt): ...

    # or DBOS's own loop, deciding by the classification:
    @DBOS.step(retries_allowed=True, max_attempts=3, should_retry=rdb.should_retry)
    @rdb.classified
    def call_model(prompt): ...

    @DBOS.workflow()
    def answer(prompt):
        try:
            return call_model(prompt)
        except rc.RecoverableError as e:          # a RecoverableStepError
            return e.detail.to_dict()

    # later, in another process:
    rdb.read_error(error)                        # pickled or portable JSON alike

What crosses DBOS's store is the classification, never the provider's exception: DBOS pickles
a step's failure and rebuilds it when it is read back (a restart, `retrieve_workflow`), and
most SDK exceptions cannot be rebuilt (`openai.APIStatusError.__init__() missing ...
'response'`); its portable JSON keeps only `{name, message, code, data}`. So a step fails
with a `RecoverableStepError`: it pickles whole (`args == (message, payload)`), its `data` is
the whole detail (what portable JSON stores), and in the process that ran it the original is
its `__cause__`.

`step` registers a DBOS step with DBOS's own retries off and runs recoverable's retry inside
it: the server's `retry_after_ms` is waited (DBOS's loop has no Retry-After and no jitter),
quota and the like stop at once, and an `unknown` failure is not retried (DBOS's default too).

`classified` is for users who keep DBOS's loop (`should_retry=rdb.should_retry`): each attempt
fails with a `RecoverableStepError`; the next attempt starts no sooner than the server's hint
(DBOS's own interval still applies: the later of the two); the last attempt's failure is
marked exhausted, so `should_retry` stops it and DBOS raises (and stores) it as it is, not a
`DBOSMaxStepRetriesExceeded` whose portable JSON would keep none of it.

Exactly one retry layer (principle 12): inside either step `rc.retry` defers, and a failure the
SDK's own client already retried (`x-stainless-retry-count`) is not retried again: it carries
`details["sdk_retries"]`, and a warning names the fix (`rc.without_sdk_retries(client)`).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast, overload

from dbos import DBOS

from .._classify import classify
from .._classify.pipeline import package_of
from .._core.detail import ErrorDetail, mark_exhausted, with_details
from .._core.error import RecoverableError, foreign_detail
from .._core.exports import Face
from .._retry.engine_scope import engine_retries
from .._retry.keys import engine_key
from .._retry.loop import Retrying
from .._retry.policy import DEFAULT_MAX_RETRY_AFTER_MS, RetryPolicy
from .._retry.sdk_retries import sdk_retries, warn_once
from .._retry.waits import waits_are_off

if TYPE_CHECKING:
    from ..fleet._cooldowns import Cooldowns

__all__ = ["RecoverableStepError", "classified", "read_error", "should_retry", "step"]

# The readers' old names (`read_*` is the library's verb for "untrusted thing -> detail").
_FACE = Face(
    __name__,
    {},
    moved={
        "detail_from_error": "recoverable.integrations.dbos.read_error",
    },
)


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


P = ParamSpec("P")
T = TypeVar("T")

logger = logging.getLogger("recoverable")
_MAX_LINKS = 16
_MAX_HOLDS = 4096  # steps waiting out a hint at once, in this process
_DBOS_OPTIONS_REFUSED = frozenset({"retries_allowed", "max_attempts", "interval_seconds",
                                   "backoff_rate"})  # fmt: skip


class RecoverableStepError(RecoverableError):
    """What a step raises: a `RecoverableError` whose `data` is the whole detail, so DBOS's
    portable-JSON error (`{name, message, code, data}`) keeps every field."""

    @property
    def data(self) -> dict[str, Any]:
        """The detail as a plain dict (what DBOS's portable JSON stores)."""
        return self.detail.to_dict()


# --- one attempt's failure, decided for DBOS's loop (pure) --------------------------------


def _attempt_detail(
    detail: ErrorDetail,
    *,
    attempt: int = 1,
    attempts: int | None = None,
    sdk_retried: int = 0,
    max_retry_after_ms: int = DEFAULT_MAX_RETRY_AFTER_MS,
) -> ErrorDetail:
    """The detail attempt `attempt` of `attempts` (None: no retry loop counts them) failed
    with, as DBOS's loop is to read it: marked exhausted (not retryable, `gave_up`) when no
    retry should follow: the SDK already retried it `sdk_retried` times, the server's hint is
    longer than `max_retry_after_ms`, or this was the last attempt. `unknown` counts as
    retryable here (a step that allows retries asked for them)."""
    detail = with_details(detail, attempt=attempt, sdk_retries=sdk_retried or None)
    if not (detail.retryable or detail.code == "unknown"):
        return detail
    hint = detail.retry_after_ms
    if sdk_retried:
        reason = "sdk_retries"
    elif hint is not None and hint > max_retry_after_ms:
        reason = "retry_after_too_long"
    elif attempts is not None and attempt >= attempts:
        reason = "attempts"
    else:
        return detail
    exhausted = mark_exhausted(detail, attempt)
    return with_details(exhausted, gave_up=reason, server_retry_after_ms=hint)


def _retries(detail: ErrorDetail) -> bool:
    exhausted = detail.details.get("retries_exhausted") is True
    return (detail.retryable or detail.code == "unknown") and not exhausted


# --- DBOS's own loop: the hook and the function's wrapper ---------------------------------


def should_retry(error: BaseException) -> bool:
    """For `@DBOS.step(retries_allowed=True, should_retry=rdb.should_retry)`: retry what is
    retryable and what nobody recognised (`unknown`: the step asked for retries); stop on the
    rest, on an exhausted failure, and on one the SDK's own client already retried.

    Put `@rdb.classified` under the step: without it DBOS stores the SDK's exception as it
    is, which it may not rebuild (a warning says so once). Never raises."""
    found = _stored_detail(error)
    if found is None:  # raw: no `classified` under the step
        _warn_unclassified(error)
        found = _attempt_detail(classify(error), sdk_retried=_sdk_retried(error))
    return _retries(found)


@overload
def classified(fn: Callable[P, T], /) -> Callable[P, T]: ...
@overload
def classified(
    fn: None = None, /, *, max_retry_after_ms: int = DEFAULT_MAX_RETRY_AFTER_MS
) -> Callable[[Callable[P, T]], Callable[P, T]]: ...
def classified(fn: Any = None, /, *, max_retry_after_ms: int = DEFAULT_MAX_RETRY_AFTER_MS) -> Any:
    """Decorate a function (sync or async; put it under `@DBOS.step(...)`) whose failures
    DBOS's own loop retries: each attempt fails with a `RecoverableStepError`, which DBOS
    stores and rebuilds, marked exhausted when no retry should follow (the last attempt, a
    failure the SDK already retried, a hint over the cap); a retry starts no sooner than the
    server's hint; `rc.retry` inside defers to DBOS's loop.

    `max_retry_after_ms`: a longer hint is not waited; the failure stops there (as
    `RetryPolicy.max_retry_after_ms`)."""
    RetryPolicy(max_retry_after_ms=max_retry_after_ms)  # refuses a bad cap, as a policy does

    def decorate(func: Callable[P, T]) -> Callable[P, T]:
        if inspect.iscoroutinefunction(func):
            return cast(Callable[P, T], _async_attempts(func, max_retry_after_ms))
        return _sync_attempts(func, max_retry_after_ms)

    return decorate if fn is None else decorate(fn)


@dataclass(frozen=True, slots=True)
class _Attempt:
    """Where an attempt stands in DBOS's loop, read from DBOS's context."""

    key: tuple[str, int] | None
    """(workflow id, step id): whose hint to wait out; None outside a workflow."""
    number: int
    """This attempt, from 1."""
    of: int | None
    """DBOS's `max_attempts`; None when no loop of DBOS's counts (retries off, no step)."""


def _current_attempt() -> _Attempt:
    status = DBOS.step_status
    workflow_id = DBOS.workflow_id
    if status is None or workflow_id is None:
        return _Attempt(None, 1, None)
    key = (workflow_id, status.step_id)
    if status.current_attempt is None or status.max_attempts is None:
        return _Attempt(key, 1, None)
    return _Attempt(key, status.current_attempt + 1, status.max_attempts)


def _request_key(where: _Attempt) -> str | None:
    """The step's request key (`rc.request_key()` inside it): from its workflow's id and its
    step id, the same on every attempt (a recovered workflow keeps both ids); None outside."""
    return None if where.key is None else engine_key("dbos", *where.key)


class _Holds:
    """When each step's next attempt may start (the server's hint), in this process."""

    def __init__(self) -> None:
        self._until: dict[tuple[str, int], float] = {}
        self._lock = threading.Lock()

    def hold(self, key: tuple[str, int], seconds: float) -> None:
        with self._lock:
            if len(self._until) >= _MAX_HOLDS:  # steps another should_retry stopped
                self._until.pop(next(iter(self._until)))
            self._until[key] = time.monotonic() + seconds

    def remaining(self, where: _Attempt) -> float:
        """Seconds left before this attempt may start (0: now); the hold is used up."""
        if where.key is None:
            return 0.0
        with self._lock:
            until = self._until.pop(where.key, None)
        if until is None or where.number == 1 or waits_are_off():  # 1: a fresh run of the step
            return 0.0
        return max(0.0, until - time.monotonic())


_holds = _Holds()


def _attempt_failed(exc: Exception, where: _Attempt, cap: int) -> RecoverableStepError:
    detail = _attempt_detail(
        classify(exc),
        attempt=where.number,
        attempts=where.of,
        sdk_retried=_sdk_retried(exc),
        max_retry_after_ms=cap,
    )
    hint = detail.retry_after_ms
    if where.key is not None and hint and _retries(detail):
        _holds.hold(where.key, hint / 1000)
    return RecoverableStepError(detail)  # raised `from` the original: reachable in this process


def _sync_attempts(fn: Callable[P, T], cap: int) -> Callable[P, T]:
    @functools.wraps(fn)
    def attempt(*args: P.args, **kwargs: P.kwargs) -> T:
        where = _current_attempt()
        time.sleep(_holds.remaining(where))
        try:
            with engine_retries("dbos", _request_key(where)):
                return fn(*args, **kwargs)
        except Exception as exc:
            raise _attempt_failed(exc, where, cap) from exc

    return attempt


def _async_attempts(fn: Callable[P, Awaitable[T]], cap: int) -> Callable[P, Awaitable[T]]:
    @functools.wraps(fn)
    async def attempt(*args: P.args, **kwargs: P.kwargs) -> T:
        where = _current_attempt()
        await asyncio.sleep(_holds.remaining(where))
        try:
            with engine_retries("dbos", _request_key(where)):
                return await fn(*args, **kwargs)
        except Exception as exc:
            raise _attempt_failed(exc, where, cap) from exc

    return attempt


# --- recoverable's loop inside the step ---------------------------------------------------


def step(
    policy: RetryPolicy | None = None,
    /,
    *,
    cooldowns: Cooldowns | None = None,
    **dbos_options: Any,
) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Decorate a function (sync or async) as a DBOS step retried by recoverable under
    `policy`.

    `cooldowns`: a `Cooldowns` key consulted before every attempt and told how it ended, as
    `rc.retry(policy, cooldowns=...)` does (the step's retry is that retry). `dbos_options`
    go to `DBOS.step` (`name`, ...); its retry options are refused, since DBOS's loop is the
    layer switched off.
    """
    refused = _DBOS_OPTIONS_REFUSED & dbos_options.keys()
    if refused:
        raise TypeError(f"rdb.step retries by its policy; drop {sorted(refused)}")
    retrying = Retrying(policy or RetryPolicy(), defer_to_engine=False, cooldowns=cooldowns)

    def decorate(fn: Callable[P, T]) -> Callable[P, T]:
        wrapped = _async_step if inspect.iscoroutinefunction(fn) else _sync_step
        run_step: Callable[P, T] = wrapped(fn, retrying)
        registered: Callable[P, T] = DBOS.step(retries_allowed=False, **dbos_options)(run_step)
        return registered

    return decorate


def _failed(exc: Exception, attempts: int) -> RecoverableStepError:
    detail = with_details(classify(exc), attempt=attempts)
    retried = _sdk_retried(exc)
    if retried and "sdk_retries" not in detail.details:  # a stop the loop did not count
        detail = with_details(detail, sdk_retries=retried)
    return RecoverableStepError(detail)


def _sync_step(fn: Callable[P, T], retrying: Retrying) -> Callable[P, T]:
    @functools.wraps(fn)
    def run_step(*args: P.args, **kwargs: P.kwargs) -> T:
        attempts = 0
        key = _request_key(_current_attempt())  # every attempt of the loop keeps it

        def attempt() -> T:
            nonlocal attempts
            attempts += 1
            with engine_retries("dbos", key):  # as under DBOS's own loop (`_sync_attempts`)
                return fn(*args, **kwargs)

        try:
            return retrying.call(attempt)
        except Exception as exc:
            raise _failed(exc, attempts) from exc

    return run_step


def _async_step(fn: Callable[P, Any], retrying: Retrying) -> Callable[P, Any]:
    afn = cast(Callable[P, Awaitable[Any]], fn)

    @functools.wraps(fn)
    async def run_step(*args: P.args, **kwargs: P.kwargs) -> Any:
        attempts = 0
        key = _request_key(_current_attempt())

        async def attempt() -> Any:
            nonlocal attempts
            attempts += 1
            with engine_retries("dbos", key):
                return await afn(*args, **kwargs)

        try:
            return await retrying.acall(attempt)
        except Exception as exc:
            raise _failed(exc, attempts) from exc

    return run_step


# --- reading what DBOS gives back (never raises) ------------------------------------------


def read_error(error: BaseException) -> ErrorDetail:
    """The detail of an error DBOS gives back (from a step, a workflow's result, a stored
    workflow after a restart): ours, pickled or as portable JSON (`PortableWorkflowError`'s
    `data`, read as an untrusted payload); after DBOS's own retries ran out
    (`DBOSMaxStepRetriesExceeded`), the last attempt's, not retryable; else `classify`.
    Never raises, whatever the error's attributes do."""
    link: BaseException = error
    exhausted = 0  # DBOS's own retries ran out after this many attempts
    for _ in range(_MAX_LINKS):
        found = _stored_detail(link)
        if found is not None:
            return mark_exhausted(found, exhausted) if exhausted and found.retryable else found
        last = _last_attempt(link)
        if last is None:
            break
        exhausted = exhausted or last[0]
        link = last[1]
    return classify(error)


def _last_attempt(error: BaseException) -> tuple[int, BaseException] | None:
    """A `DBOSMaxStepRetriesExceeded`'s attempt count and last error, if it holds one."""
    if type(error).__name__ != "DBOSMaxStepRetriesExceeded":
        return None
    try:
        errors = error.__dict__.get("errors")  # the instance's, never a property's answer
        if type(errors) is not list or not errors:
            return None
        last = errors[-1]
        if isinstance(last, BaseException):
            return len(errors), last
    except Exception:  # a forged error whose __dict__ or __class__ misbehaves
        return None
    return None


def _stored_detail(error: BaseException) -> ErrorDetail | None:
    """Ours (this copy's or another's), or a portable error's `data` read as a payload."""
    try:
        found = foreign_detail(error)
        if found is not None:
            return found
        data = getattr(error, "data", None)
        if isinstance(data, dict) and "code" in data:
            return ErrorDetail.from_dict(data)
    except Exception:  # a forged value: a raising attribute, a payload from_dict refuses
        return None
    return None


def _sdk_retried(exc: BaseException) -> int:
    """How often the SDK retried `exc` (or the failure a retry of ours stopped on) itself;
    said once (`warn_once`). Never raises: 0 for a forged error that misbehaves."""
    try:
        retried, source = sdk_retries(exc), exc
        if not retried and isinstance(exc, RecoverableError):
            cause = exc.__cause__
            if isinstance(cause, BaseException):
                retried, source = sdk_retries(cause), cause
        if retried:
            warn_once(source, retried)
    except Exception:  # a raising `request`, `__cause__` or `__class__`
        return 0
    return retried


_unclassified_warned: set[str] = set()
_warning = threading.Lock()


def _warn_unclassified(error: BaseException) -> None:
    """Say once per package that DBOS's loop got a raw exception (`classified` missing)."""
    module = getattr(type(error), "__module__", None)
    package = package_of(module) if isinstance(module, str) else ""
    if not package.replace(".", "_").isidentifier():  # a log line carries a name, no text
        package = "unknown"
    with _warning:
        if package in _unclassified_warned:
            return
        _unclassified_warned.add(package)
    logger.warning(
        "rdb.should_retry got an exception of package %s that no rdb.classified converted: "
        "DBOS stores it as it is and may not rebuild it from its store (the detail is then "
        "lost). Put @rdb.classified under @DBOS.step so that the step fails with a "
        "RecoverableStepError",
        package,
    )

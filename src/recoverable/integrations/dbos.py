"""DBOS: steps retry as the classification says, and stored errors keep the detail.

    from recoverable.integrations import dbos as rdb

    @rdb.step(rc.RetryPolicy(attempts=3))       # a DBOS step; recoverable's retry inside
    def call_model(prompt): ...

    @DBOS.workflow()
    def answer(prompt):
        try:
            return call_model(prompt)
        except rc.RecoverableError as e:          # a RecoverableStepError
            return e.detail.to_dict()

    # later, in another process:
    rdb.detail_from_error(error)                 # pickled or portable JSON alike

`step` registers a DBOS step with DBOS's own retries off and runs recoverable's retry inside
it: the server's `retry_after_ms` is waited (DBOS's loop has no Retry-After and no jitter),
quota and the like stop at once, and an `unknown` failure is not retried (DBOS's default too).
That is the one retry layer: a `rc.retry` inside the step defers to it. Users who keep DBOS's
own loop pass `should_retry=rdb.should_retry` to `@DBOS.step(retries_allowed=True)`, and read
the end with `detail_from_error` (it reads `DBOSMaxStepRetriesExceeded.errors`).

A step fails with a `RecoverableStepError`: it pickles whole (DBOS's default), and in
portable-JSON mode DBOS stores its `code` and its `data`, which is the whole detail.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from dbos import DBOS

from .._classify import classify
from .._detail import (
    ErrorDetail,
    PayloadError,
    RecoverableError,
    foreign_detail,
    mark_exhausted,
    with_details,
)
from .._engine_scope import engine_retries
from .._policy import RetryPolicy
from .._retry import Retrying

if TYPE_CHECKING:
    from .._cooldowns import Cooldowns

__all__ = ["RecoverableStepError", "detail_from_error", "should_retry", "step"]

P = ParamSpec("P")
T = TypeVar("T")

_MAX_LINKS = 16


class RecoverableStepError(RecoverableError):
    """What a `step` raises: a `RecoverableError` whose `data` is the whole detail, so DBOS's
    portable-JSON error (`{name, message, code, data}`) keeps every field."""

    @property
    def data(self) -> dict[str, Any]:
        """The detail as a plain dict (what DBOS's portable JSON stores)."""
        return self.detail.to_dict()


def should_retry(error: BaseException) -> bool:
    """For `@DBOS.step(retries_allowed=True, should_retry=...)`: retry what is retryable and
    what nobody recognised (`unknown`: the step asked for retries); stop on the rest."""
    detail = classify(error)
    return detail.retryable or detail.code == "unknown"


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
    refused = {"retries_allowed", "max_attempts", "interval_seconds", "backoff_rate"}
    if refused & dbos_options.keys():
        drop = sorted(refused & dbos_options.keys())
        raise TypeError(f"rdb.step retries by its policy; drop {drop}")
    retrying = Retrying(policy or RetryPolicy(), defer_to_engine=False, cooldowns=cooldowns)

    def decorate(fn: Callable[P, T]) -> Callable[P, T]:
        wrapped = _async_step if inspect.iscoroutinefunction(fn) else _sync_step
        run_step: Callable[P, T] = wrapped(fn, retrying)
        registered: Callable[P, T] = DBOS.step(retries_allowed=False, **dbos_options)(run_step)
        return registered

    return decorate


def _failed(exc: Exception, attempts: int) -> RecoverableStepError:
    return RecoverableStepError(with_details(classify(exc), attempt=attempts))


def _sync_step(fn: Callable[P, T], retrying: Retrying) -> Callable[P, T]:
    @functools.wraps(fn)
    def run_step(*args: P.args, **kwargs: P.kwargs) -> T:
        attempts = 0

        def attempt() -> T:
            nonlocal attempts
            attempts += 1
            with engine_retries("dbos"):
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

        async def attempt() -> Any:
            nonlocal attempts
            attempts += 1
            with engine_retries("dbos"):
                return await afn(*args, **kwargs)

        try:
            return await retrying.acall(attempt)
        except Exception as exc:
            raise _failed(exc, attempts) from exc

    return run_step


def detail_from_error(error: BaseException) -> ErrorDetail:
    """The detail of an error DBOS gives back (from a step, a workflow's result, a stored
    workflow after a restart): ours, pickled or as portable JSON (`PortableWorkflowError`'s
    `data`, read as an untrusted payload); after DBOS's own retries ran out
    (`DBOSMaxStepRetriesExceeded`), the last attempt's, not retryable; else `classify`."""
    link: BaseException = error
    exhausted = 0  # DBOS's own retries ran out after this many attempts
    for _ in range(_MAX_LINKS):
        found = _stored_detail(link)
        if found is not None:
            return mark_exhausted(found, exhausted) if exhausted and found.retryable else found
        errors = getattr(link, "errors", None)
        if type(link).__name__ != "DBOSMaxStepRetriesExceeded" or not isinstance(errors, list):
            break
        if not errors or not isinstance(errors[-1], BaseException):
            break
        exhausted = exhausted or len(errors)
        link = errors[-1]
    return classify(error)


def _stored_detail(error: BaseException) -> ErrorDetail | None:
    found = foreign_detail(error)
    if found is not None:
        return found
    data = getattr(error, "data", None)
    if isinstance(data, dict) and "code" in data:
        try:
            return ErrorDetail.from_dict(data)
        except PayloadError:
            return None
    return None

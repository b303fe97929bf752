"""Celery: tasks retry as the classification says, and the caller reads the detail back.

    from recoverable.integrations import celery as rcc

    @app.task(base=rcc.ClassifiedTask, bind=True, recoverable_policy=rc.RetryPolicy(attempts=4))
    def ask(self, prompt): ...

    result = ask.delay("hi")
    result.get(propagate=False)
    detail = rcc.detail_from_result(result)      # None when the task succeeded

A failure is classified. A retryable one is retried by Celery (`self.retry`) after the
server's `retry_after_ms`, else after the policy's backoff with jitter, up to the policy's
attempts; anything else stops at once. What is stored is a `RecoverableError`, whose
`args == (message, payload)` round-trip through the JSON result backend. Celery is the only
retry layer: `rc.retry` inside the task defers to it (`_engine_scope`), and the task's own
`autoretry_for` should stay unset (Celery would retry before the classification is read).
An `unknown` failure gets Celery's default, which is not to retry.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from celery import Task
from celery.result import AsyncResult

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
from .._instrumentation import FailureEvent, FailureKind, report
from .._policy import RetryPolicy

if TYPE_CHECKING:
    from .._cooldown_rules import Gate
    from .._cooldowns import Cooldowns

__all__ = ["ClassifiedTask", "detail_from_exception", "detail_from_result", "next_retry"]

_CELERY_PACKAGES = ("celery", "billiard", "kombu")


def next_retry(detail: ErrorDetail, attempt: int, policy: RetryPolicy) -> float | None:
    """Seconds to wait before attempt `attempt + 1`, or None to stop (pure).

    Retryable only; the server's hint first (a hint over `policy.max_retry_after_ms` stops,
    so a fallback can act instead of a long sleep), else the policy's backoff with jitter.
    """
    if not detail.retryable or attempt >= policy.attempts:
        return None
    hint = detail.retry_after_ms
    if hint is not None:
        return None if hint > policy.max_retry_after_ms else hint / 1000
    return policy.backoff(attempt)


def _stopped(detail: ErrorDetail, attempt: int, policy: RetryPolicy) -> ErrorDetail:
    """The detail that ends the task: a retryable one comes back exhausted."""
    if not detail.retryable:
        return detail
    too_long = (detail.retry_after_ms or 0) > policy.max_retry_after_ms
    return with_details(
        mark_exhausted(detail, attempt),
        gave_up="retry_after_too_long" if too_long else "attempts",
        server_retry_after_ms=detail.retry_after_ms,
    )


class ClassifiedTask(Task):  # type: ignore[misc]  # celery ships no types
    """A Celery task base class: failures are classified, retried only when retryable.

    Set `recoverable_policy` on the task (`@app.task(base=ClassifiedTask, recoverable_policy=...)`):
    its `attempts`, backoff and `max_retry_after_ms` decide; Celery's `max_retries` is
    set from it.
    """

    recoverable_policy: ClassVar[RetryPolicy] = RetryPolicy()
    """How many attempts, which backoff, and the longest server hint worth sleeping."""
    recoverable_cooldowns: ClassVar[Cooldowns | Callable[..., Cooldowns | None] | None] = None
    """A `Cooldowns` key consulted before each attempt, or a function of the task giving
    one (or None) for this call: e.g. `lambda task: fleet.task(task.request.id,
    max_attempts=20)`, a budget per call that survives a worker's crash. A quiet key (or an
    open circuit) is waited out in the worker only up to the key's `max_wait_ms` (default
    0); longer, the attempt fails at once with the remaining time as `retry_after_ms`, which
    becomes the countdown (or stops the task when over the policy's `max_retry_after_ms`, so
    a fallback can act); a stopped key or a spent budget stops it. The attempt's outcome is
    recorded on the key."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with engine_retries("celery"):
            key = self._cooldown_key()  # a wrong setting raises as itself, not classified
            gate: Gate | None = None
            try:
                if key is not None:
                    gate = key.before_call(key.max_wait_ms or 0)
                    if gate.wait_s > 0:
                        time.sleep(gate.wait_s)  # a short wait, within the key's max_wait_ms
                value = super().__call__(*args, **kwargs)
            except Exception as exc:
                if type(exc).__module__.split(".", 1)[0] in _CELERY_PACKAGES:
                    raise  # Retry, Ignore, Reject, time limits: Celery's own
                if key is not None and gate is not None:
                    key.after_failure(classify(exc), gate)
                # Not chained: Celery stores the traceback text in the result backend, and the
                # original's text is unscrubbed; the detail's `cause` keeps a scrubbed summary.
                raise self._after_failure(exc) from None
            if key is not None and gate is not None:
                key.after_success(gate)
            return value

    def _cooldown_key(self) -> Cooldowns | None:
        """This attempt's key: the one set on the task, or what its function gives."""
        chosen = self.recoverable_cooldowns
        if chosen is None:
            return None
        from .._cooldowns import Cooldowns

        if isinstance(chosen, Cooldowns):
            return chosen
        # A function set on the task class is a method of the task: it has the task already.
        key = chosen() if getattr(chosen, "__self__", None) is self else chosen(self)
        if key is not None and not isinstance(key, Cooldowns):
            raise TypeError(
                f"recoverable_cooldowns must give a Cooldowns or None, not {type(key).__name__}"
            )
        return key

    def _after_failure(self, exc: Exception) -> Exception:
        policy = self.recoverable_policy
        attempt = int(self.request.retries or 0) + 1
        detail = with_details(classify(exc), attempt=attempt)
        wait_s = next_retry(detail, attempt, policy)
        if wait_s is None:
            final = _stopped(detail, attempt, policy)
            kind: FailureKind = "give_up" if detail.retryable else "stop"
            report(FailureEvent(kind, final, attempt=attempt, name=self.name))
            return RecoverableError(final)
        report(FailureEvent("retry", detail, attempt=attempt, wait_s=wait_s, name=self.name))
        retry: Exception = self.retry(
            exc=RecoverableError(detail),
            countdown=wait_s,
            max_retries=policy.attempts - 1,
            throw=False,
        )
        return retry


def detail_from_exception(exc: BaseException) -> ErrorDetail:
    """The detail of an exception read back from a result backend: ours when its args are
    our `(message, payload)` (whichever class Celery rebuilt), else `classify`."""
    found = foreign_detail(exc)
    if found is not None:
        return found
    args = getattr(exc, "args", ())
    if isinstance(args, tuple) and len(args) == 2 and isinstance(args[1], dict):
        try:
            return ErrorDetail.from_dict(args[1])
        except PayloadError:
            pass
    return classify(exc)


def detail_from_result(result: AsyncResult) -> ErrorDetail | None:
    """The detail of a failed (or retrying) task's result; None when it did not fail.

    Reads what is stored now and does not wait: call `result.get(propagate=False)` first
    to wait for the end.
    """
    value = result.result
    if not isinstance(value, BaseException):
        return None
    return detail_from_exception(value)

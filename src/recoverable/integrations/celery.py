"""Celery: tasks retry as the classification says, and the caller reads the detail back.

    from recoverable.integrations import celery as rcc

    @app.task(base=rcc.ClassifiedTask, bind=True, recoverable_policy=rc.RetryPolicy(attempts=4))
    def ask(self, prompt): ...

    result = ask.delay("hi")
    result.get(propagate=False)
    detail = rcc.read_result(result)             # None when it succeeded

A failure is classified. A retryable one is retried by Celery (`self.retry`) after the
server's `retry_after_ms`, else after the policy's backoff with jitter, up to the policy's
attempts; anything else stops at once. What is stored is a `RecoverableError`, whose
`args == (message, payload)` round-trip through the JSON result backend.

Exactly one retry layer (principle 12): `rc.retry` inside the task defers to Celery
(`_engine_scope`); a failure the SDK's client already retried itself (`_sdk_retries`: the
openai client's default `max_retries=2` makes one 429 three requests) is not retried again,
and a warning names the fix (`rc.without_sdk_retries(client)`); the task's own
`autoretry_for` should stay unset (Celery would retry before the classification is read).
An `unknown` failure gets Celery's default, which is not to retry.

An attempt is a run of the task's body. With `recoverable_cooldowns=`, a run the fleet's key
keeps quiet for longer than the worker waits in place is turned back: retried with a
countdown of the time left, which is no attempt. Celery counts every retry in
`request.retries`; the turn-backs are counted in the task's own message header
`recoverable_turned_back`, so the attempt is `retries - turned_back + 1` (`attempt_of`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from celery import Task
from celery.result import AsyncResult

from .._classify import classify
from .._core.detail import ErrorDetail, mark_exhausted, with_details
from .._core.error import RecoverableError, foreign_detail
from .._core.exports import Face
from .._core.failures import FailureEvent, FailureKind, report
from .._retry.engine_scope import engine_retries
from .._retry.keys import engine_key
from .._retry.policy import RetryPolicy
from .._retry.sdk_retries import sdk_retries, warn_once

if TYPE_CHECKING:
    from ..fleet._cooldowns import Cooldowns
    from ..fleet._rules import Gate

__all__ = [
    "TURNED_BACK_HEADER",
    "WAITING_SINCE_HEADER",
    "ClassifiedTask",
    "attempt_of",
    "next_retry",
    "read_error",
    "read_result",
]

# The readers' old names (`read_*` is the library's verb for "untrusted thing -> detail").
_FACE = Face(
    __name__,
    {},
    moved={
        "detail_from_exception": "recoverable.integrations.celery.read_error",
        "detail_from_result": "recoverable.integrations.celery.read_result",
    },
)


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


TURNED_BACK_HEADER = "recoverable_turned_back"
"""The message header counting the runs the fleet turned back (Celery retries, no attempts)."""
WAITING_SINCE_HEADER = "recoverable_waiting_since"
"""The message header holding when (wall clock) the fleet first turned this attempt back."""

_CELERY_PACKAGES = frozenset({"celery", "billiard", "kombu"})
_MAX_COUNT = 1_000_000  # a count past this in a message is no count (forged or corrupt)


# --- what a message says (read defensively: a message is written by any producer) --------


def _count(value: object) -> int:
    """A count read from a message: an integer in [0, _MAX_COUNT], else 0."""
    return value if type(value) is int and 0 <= value <= _MAX_COUNT else 0


def _headers(request: object) -> dict[str, Any]:
    """The task's custom message headers as a plain dict (empty when none or not a dict)."""
    try:
        headers = getattr(request, "headers", None)
        return {str(k): v for k, v in headers.items()} if isinstance(headers, Mapping) else {}
    except Exception:  # a forged request: no headers
        return {}


def _header(request: object, name: str) -> object:
    """One custom header: from `request.headers`, else the request's attribute of that name
    (a worker's request carries each custom header both ways)."""
    value = _headers(request).get(name)
    if value is not None:
        return value
    try:
        return getattr(request, name, None)
    except Exception:
        return None


def attempt_of(request: object) -> int:
    """The attempt a task's run is (from 1): Celery's retries less the runs the fleet turned
    back. Never raises; a forged count reads as none."""
    try:
        retries = _count(getattr(request, "retries", 0))
    except Exception:
        retries = 0
    return retries - min(_count(_header(request, TURNED_BACK_HEADER)), retries) + 1


def _waited_ms(request: object, now: float) -> int:
    """How long this attempt has been turned back so far (0: not yet), from its header."""
    since = _header(request, WAITING_SINCE_HEADER)
    if isinstance(since, bool) or not isinstance(since, (int, float)):
        return 0
    try:
        elapsed = (now - since) * 1000
    except OverflowError:  # a huge integer: no time
        return 0
    return int(min(elapsed, _MAX_COUNT * 1000.0)) if math.isfinite(elapsed) and elapsed > 0 else 0


# --- the decisions (pure) -------------------------------------------------------------------


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


def _fleets(detail: ErrorDetail) -> bool:
    """Whether the detail is a `Cooldowns` key's refusal: its wait was computed here (from
    what the fleet stored), not said by a server."""
    return "cooldown_key" in detail.details


def _stopped(
    detail: ErrorDetail, attempt: int, policy: RetryPolicy, reason: str | None = None
) -> ErrorDetail:
    """The detail that ends the task: a retryable one comes back exhausted, with the wait it
    asked for kept as a fact: a server's as `server_retry_after_ms`, a fleet's (a key's
    refusal) as `fleet_wait_ms`, never one for the other."""
    if not detail.retryable:
        return detail
    wait_ms, fleets = detail.retry_after_ms, _fleets(detail)
    if reason is None and (wait_ms or 0) > policy.max_retry_after_ms:
        reason = "cooldown_too_long" if fleets else "retry_after_too_long"
    return with_details(
        mark_exhausted(detail, attempt),
        gave_up=reason or "attempts",
        server_retry_after_ms=None if fleets else wait_ms,
        fleet_wait_ms=wait_ms if fleets else None,
    )


def _is_celerys(exc: BaseException) -> bool:
    """Retry, Ignore, Reject, the time limits: Celery's own, passed through as raised."""
    module = getattr(type(exc), "__module__", None)
    return isinstance(module, str) and module.partition(".")[0] in _CELERY_PACKAGES


class ClassifiedTask(Task):  # type: ignore[misc]  # celery ships no types
    """A Celery task base class: failures are classified, retried only when retryable.

    Set `recoverable_policy` on the task (`@app.task(base=ClassifiedTask, recoverable_policy=...)`):
    its `attempts`, backoff and `max_retry_after_ms` decide; Celery's own `max_retries` is
    not consulted (each retry is decided here and passed to `self.retry`).
    """

    recoverable_policy: ClassVar[RetryPolicy] = RetryPolicy()
    """How many attempts, which backoff, and the longest server hint worth sleeping."""
    recoverable_cooldowns: ClassVar[Cooldowns | Callable[..., Cooldowns | None] | None] = None
    """A `Cooldowns` key consulted before each run, or a function of the task giving one (or
    None) for this call: e.g. `lambda task: fleet.task(task.request.id, max_attempts=20)`, a
    budget per call that survives a worker's crash. A quiet key (or an open circuit) is
    waited out in the worker up to the key's `max_wait_ms` (None, the default: the policy's
    `max_retry_after_ms`, as in `rc.retry`; the wait claims the key's next paced slot);
    longer, the run is turned back: retried with a countdown of the time left, which is no
    attempt (eager mode and a direct call have no broker to wait it: they wait in place).
    An attempt kept waiting longer than the policy's `max_retry_after_ms` in all stops
    (`gave_up="cooldown_too_long"`, so a fallback can act); a stopped key or a spent budget
    stops it. The attempt's outcome is recorded on the key; a turn-back is no failure and is
    not reported to the failure hooks."""

    @property
    def recoverable_attempt(self) -> int:
        """This run's attempt number (from 1); a run the fleet turned back was none."""
        return attempt_of(self.request)

    def _request_key(self) -> str | None:
        """The run's request key (`rc.request_key()` inside it): from its task id, which
        Celery keeps on every retry; None for a direct call (no id)."""
        task_id = getattr(self.request, "id", None)
        return engine_key("celery", task_id) if isinstance(task_id, str) and task_id else None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with engine_retries("celery", self._request_key()):
            key = self._cooldown_key()  # a wrong setting raises as itself, not classified
            gate = None if key is None else self._admit(key)
            try:
                value = super().__call__(*args, **kwargs)
            except Exception as exc:
                if _is_celerys(exc):
                    raise
                detail = classify(exc)
                if key is not None and gate is not None:
                    key.after_failure(detail, gate)
                # Not chained: Celery stores the traceback text in the result backend, and the
                # original's text is unscrubbed; the detail's `cause` keeps a scrubbed summary.
                raise self._after_failure(exc, detail) from None
            if key is not None and gate is not None:
                key.after_success(gate)
            return value

    def _cooldown_key(self) -> Cooldowns | None:
        """This attempt's key: the one set on the task, or what its function gives."""
        chosen = self.recoverable_cooldowns
        if chosen is None:
            return None
        from ..fleet._cooldowns import Cooldowns

        if isinstance(chosen, Cooldowns):
            return chosen
        # A function set on the task class is a method of the task: it has the task already.
        key = chosen() if getattr(chosen, "__self__", None) is self else chosen(self)
        if key is not None and not isinstance(key, Cooldowns):
            raise TypeError(
                f"recoverable_cooldowns must give a Cooldowns or None, not {type(key).__name__}"
            )
        return key

    def _admit(self, key: Cooldowns) -> Gate:
        """The key's gate before this run, its short wait slept here; raises Celery's Retry
        (turned back: the broker waits) or a RecoverableError (stopped)."""
        request = self.request
        longest = self.recoverable_policy.max_retry_after_ms
        left_ms = max(0, longest - _waited_ms(request, time.time()))
        cap = key.max_wait_ms
        # Eager or called as a function: no broker waits a countdown (eager mode retries at
        # once), so every wait is waited here.
        brokered = not (request.is_eager or request.called_directly)
        in_place = min(cap, left_ms) if cap is not None and brokered else left_ms
        try:
            gate = key.before_call(in_place)
        except RecoverableError as refused:
            raise self._turned_back(refused.detail, left_ms) from None
        except Exception as exc:  # the gate's own failure: classified as any other
            raise self._after_failure(exc, classify(exc)) from None
        if gate.wait_s > 0:
            time.sleep(gate.wait_s)
        return gate

    def _turned_back(self, refusal: ErrorDetail, left_ms: int) -> Exception:
        """A run the key refused: a countdown that is no attempt, or the end of the task."""
        attempt = self.recoverable_attempt
        detail = with_details(refusal, attempt=attempt)
        wait_ms = detail.retry_after_ms
        if not detail.retryable or wait_ms is None:  # a stopped key, a spent budget
            report(FailureEvent("stop", detail, attempt=attempt, name=self.name))
            return RecoverableError(detail)
        if wait_ms > left_ms:  # with what this attempt waited already, past the policy's max
            final = _stopped(detail, attempt, self.recoverable_policy, "cooldown_too_long")
            report(FailureEvent("give_up", final, attempt=attempt, name=self.name))
            return RecoverableError(final)
        request, now = self.request, time.time()
        since = _header(request, WAITING_SINCE_HEADER) if _waited_ms(request, now) else now
        headers = {
            **_headers(request),
            TURNED_BACK_HEADER: _count(_header(request, TURNED_BACK_HEADER)) + 1,
            WAITING_SINCE_HEADER: since,
        }
        return self._retry(detail, wait_ms / 1000, headers)

    def _after_failure(self, exc: Exception, classified: ErrorDetail) -> Exception:
        policy = self.recoverable_policy
        attempt = self.recoverable_attempt
        detail = with_details(classified, attempt=attempt)
        retried = sdk_retries(exc)
        if retried:  # the client's own retries were a retry layer: none on top of them
            warn_once(exc, retried)
            detail = with_details(detail, sdk_retries=retried)
        wait_s = None if retried else next_retry(detail, attempt, policy)
        if wait_s is None:
            final = _stopped(detail, attempt, policy, "sdk_retries" if retried else None)
            kind: FailureKind = "give_up" if detail.retryable else "stop"
            report(FailureEvent(kind, final, attempt=attempt, name=self.name))
            return RecoverableError(final)
        report(FailureEvent("retry", detail, attempt=attempt, wait_s=wait_s, name=self.name))
        headers = _headers(self.request)
        headers.pop(WAITING_SINCE_HEADER, None)  # the next attempt has not waited yet
        return self._retry(detail, wait_s, headers)

    def _retry(self, detail: ErrorDetail, countdown: float, headers: dict[str, Any]) -> Exception:
        """Celery's retry, decided here: its own `max_retries` never refuses it."""
        retry: Exception = self.retry(
            exc=RecoverableError(detail),
            countdown=countdown,
            max_retries=_count(self.request.retries) + 1,
            throw=False,
            headers=headers,
        )
        return retry


# --- the readers (never raise: a result backend holds what any producer wrote) -------------


def _stored_payload(exc: object) -> dict[str, Any] | None:
    """Our `(message, payload)` args as Celery's JSON backend rebuilds them, else None."""
    try:
        args = getattr(exc, "args", None)
        if type(args) is tuple and len(args) == 2 and isinstance(args[1], Mapping):
            return dict(args[1])
    except Exception:  # raising attributes, a mapping that will not copy
        pass
    return None


def read_error(exc: BaseException) -> ErrorDetail:
    """The detail of an exception read back from a result backend: ours when its args are
    our `(message, payload)` (whichever class Celery rebuilt), else `classify`. Never
    raises, whatever the object."""
    try:
        found = foreign_detail(exc)
    except Exception:  # a forged marker whose attributes raise
        found = None
    if type(found) is ErrorDetail:  # not a look-alike (a forged `__class__`)
        return found
    payload = _stored_payload(exc)
    if payload is not None:
        try:
            return ErrorDetail.from_dict(payload)
        except Exception:  # PayloadError, or whatever else a forged payload breaks
            pass
    detail = classify(exc)
    if type(detail) is not ErrorDetail:  # classify answered a look-alike it was given
        return ErrorDetail.create("unknown", "the error could not be described")
    return detail


def read_result(result: AsyncResult) -> ErrorDetail | None:
    """The detail of a failed (or retrying) task's result; None when it did not fail.

    Reads what is stored now and does not wait: call `result.get(propagate=False)` first
    to wait for the end. A stored value Celery cannot rebuild is read as that failure.
    """
    try:
        value = result.result
    except Exception as exc:  # a stored value Celery could not rebuild (or read at all)
        return ErrorDetail.create(
            "unknown",  # named by its class only: Celery's text quotes the stored value
            f"the task's stored result could not be read ({_class_name(exc)})",
        )
    if not isinstance(value, BaseException):
        return None
    return read_error(value)


def _class_name(exc: BaseException) -> str:
    name = getattr(type(exc), "__qualname__", None)
    return name[:100] if isinstance(name, str) else "an exception"

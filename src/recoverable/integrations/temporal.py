"""Temporal: activities fail with the classification, and Temporal's retry obeys it.

    from recoverable.integrations import temporal as rt

    worker = Worker(client, task_queue="q", activities=[...], workflows=[...],
                    interceptors=[rt.ClassifyInterceptor()])
    # shared quiet times for every activity:  rt.ClassifyInterceptor(cooldowns=fleet_key)
    # or, per activity:  @activity.defn  @rt.classified  async def call_model(...): ...

    # in the workflow:
    try:
        await workflow.execute_activity(call_model, ..., retry_policy=RetryPolicy(
            maximum_attempts=4, non_retryable_error_types=rt.non_retryable_codes()))
    except ActivityError as e:
        detail = rt.read_error(e)               # the activity's ErrorDetail, intact

Whatever an activity raises becomes an `ApplicationError` whose `type` is the code,
`non_retryable` is `not retryable`, `next_retry_delay` is the server's `retry_after_ms`, and
whose first detail is the `ErrorDetail` as a plain dict. The original exception is not
chained: Temporal would store its text and stack unscrubbed in the workflow's history; the
detail's `cause` keeps a scrubbed summary of it. Temporal alone retries: inside the
activity `rc.retry` defers to it (`_engine_scope`), and a failure the SDK's own client already
retried (`x-stainless-retry-count`: the openai client's default `max_retries=2`) reaches
Temporal not retryable, with `details["sdk_retries"]`, and a warning names the fix
(`rc.without_sdk_retries(client)`). An `unknown` failure is left to the engine's own policy
(retried as the workflow's `RetryPolicy` says): recoverable does not know whether it is worth
repeating, and Temporal's default is what the user configured.

Workflow code may import this module (and `recoverable`) as it is: the worker's sandbox
re-imports them, and nothing they run at import or in `read_error` is refused there.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ParamSpec, TypeAlias, TypeVar, cast, overload

from temporalio import activity
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
    RetryState,
    TemporalError,
    TimeoutError,
    TimeoutType,
)
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from .._classify import classify
from .._core.codes import codes
from .._core.detail import ErrorDetail, PayloadError, mark_exhausted, with_details
from .._core.exports import Face
from .._core.failures import FailureEvent, report
from .._core.untrusted import safe_str
from .._retry.engine_scope import engine_retries
from .._retry.keys import engine_key
from .._retry.policy import DEFAULT_MAX_RETRY_AFTER_MS
from .._retry.sdk_retries import sdk_retries, warn_once

if TYPE_CHECKING:
    from ..fleet._cooldowns import Cooldowns
    from ..fleet._rules import Gate

__all__ = [
    "ActivityCooldowns",
    "ClassifyInterceptor",
    "classified",
    "non_retryable_codes",
    "read_error",
    "to_application_error",
]

# The readers' old names (`read_*` is the library's verb for "untrusted thing -> detail").
_FACE = Face(
    __name__,
    {},
    moved={
        "detail_from_failure": "recoverable.integrations.temporal.read_error",
    },
)


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


P = ParamSpec("P")
T = TypeVar("T")

_MAX_LINKS = 16  # failures nest (workflow -> child -> activity -> cause); a bounded walk

# Temporal's timeouts that end an attempt (the attempt itself ran too long, or never
# started); a schedule-to-close timeout ends the retries between failed attempts instead.
_ATTEMPT_TIMEOUTS = frozenset(
    {TimeoutType.START_TO_CLOSE, TimeoutType.HEARTBEAT, TimeoutType.SCHEDULE_TO_START}
)

# The engine gave up retrying: the detail must not invite an outer layer to retry again.
_ENGINE_GAVE_UP = frozenset({RetryState.MAXIMUM_ATTEMPTS_REACHED, RetryState.TIMEOUT})


def non_retryable_codes() -> list[str]:
    """Every registered code whose default is not retryable (but `unknown`, left to the
    engine): for `RetryPolicy(non_retryable_error_types=...)`, which matches the exact
    `type` string. A detail marked non-retryable stops anyway; this also stops a code whose
    error was raised by hand as `ApplicationError(type=code)`."""
    return [row.code for row in codes if not row.retryable and row.code != "unknown"]


def to_application_error(
    detail: ErrorDetail, *, max_retry_after_ms: int = DEFAULT_MAX_RETRY_AFTER_MS
) -> ApplicationError:
    """The `ApplicationError` that carries `detail` through Temporal.

    `type` is the code, `non_retryable` is `not detail.retryable` (but for an `unknown` no
    retry layer gave up on: the engine's policy decides), `next_retry_delay` the server's
    hint, and `details[0]` the
    detail as a plain dict (Temporal's JSON payload converter keeps it whole). A hint above
    `max_retry_after_ms` stops instead of sleeping, as `rc.retry` does, so a fallback can act.
    """
    if detail.retryable and (detail.retry_after_ms or 0) > max_retry_after_ms:
        detail = _gave_up(detail, "retry_after_too_long")
    delay = None
    if detail.retryable and detail.retry_after_ms is not None:
        delay = timedelta(milliseconds=detail.retry_after_ms)  # at most MAX_HINT_MS: a week
    return ApplicationError(
        detail.message,
        detail.to_dict(),
        type=detail.code,
        non_retryable=not detail.retryable and not _left_to_engine(detail),
        next_retry_delay=delay,
    )


def _left_to_engine(detail: ErrorDetail) -> bool:
    """An `unknown` failure no retry layer has given up on yet: the workflow's policy decides."""
    return detail.code == "unknown" and detail.details.get("retries_exhausted") is not True


def _gave_up(detail: ErrorDetail, reason: str, **facts: Any) -> ErrorDetail:
    """`detail` after a retry layer stopped on it (`reason`): not retryable, the attempts it
    took (`details["attempt"]` when it is a count, else 1) and the server's hint kept as facts."""
    return with_details(
        mark_exhausted(detail, _attempts(detail)),
        gave_up=reason,
        server_retry_after_ms=detail.retry_after_ms,
        **facts,
    )


def _after_sdk_retries(exc: BaseException, detail: ErrorDetail) -> ErrorDetail:
    """Exactly one retry layer: when the SDK's client already retried `exc` itself, its loop
    was the layer and Temporal retries no further (a failure not worth retrying keeps its
    stop and gains the count); a warning, once per SDK, names the fix. The SDK's exception
    may be the cause of the one raised (`rc.retry` stopping on it raises a RecoverableError)."""
    retried = max(map(sdk_retries, _chain(exc)))
    if not retried:
        return detail
    warn_once(exc, retried)
    if detail.retryable or _left_to_engine(detail):
        return _gave_up(detail, "sdk_retries", sdk_retries=retried)
    return with_details(detail, sdk_retries=retried)


def read_error(exc: BaseException) -> ErrorDetail:
    """The `ErrorDetail` inside a Temporal failure (`ActivityError`, `ChildWorkflowError`,
    `WorkflowFailureError`, `ApplicationError`, nested): the innermost detail of ours, read
    as an untrusted payload; else `classify`.

    Temporal's own endings come first: a cancel is `run_cancelled`, and an attempt that
    timed out (start-to-close, heartbeat, schedule-to-start) is `timeout`, even when an
    earlier attempt failed otherwise (Temporal nests that failure under the timeout: it
    becomes the detail's `cause`). A schedule-to-close timeout between failed attempts is
    the engine giving up: the last failure's detail, or `timeout` when there is none.

    When the engine gave up retrying (maximum attempts, timeout), the detail comes back
    not retryable, with `details["retries_exhausted"]`, so no outer layer retries again.

    Never raises: a failure is read as untrusted, down to its attributes (a link whose
    attribute raises, or holds a value of the wrong type, carries nothing and ends the walk).
    """
    chain = _chain(exc)
    for index, link in enumerate(chain):
        ended = _temporal_ending(link, attempt_only=True)
        if ended is not None:
            earlier = _innermost_detail(chain[index + 1 :])
            return ended if earlier is None else ended.with_cause(earlier)
    found = _innermost_detail(chain)
    if found is None:
        found = next(filter(None, (_temporal_ending(link) for link in chain)), None)
    if found is None:
        return classify(exc)
    if found.retryable and any(map(_engine_gave_up, chain)):
        found = mark_exhausted(found, _attempts(found))
    return found


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and its causes, outermost first: bounded, cycles cut, ended by a cause that is
    not an exception or cannot be read (a forged failure's property)."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    link: object = exc
    while _is(link, BaseException) and id(link) not in seen and len(chain) < _MAX_LINKS:
        failure = cast(BaseException, link)
        seen.add(id(failure))
        chain.append(failure)
        try:
            link = failure.__cause__
        except Exception:
            break
    return chain


def _is(link: object, kind: type[Any] | tuple[type[Any], ...]) -> bool:
    """`link` is a `kind` by its real type (`isinstance` would ask its `__class__`, which
    a forged object may answer, or raise from)."""
    return issubclass(type(link), kind)


def _engine_gave_up(link: BaseException) -> bool:
    if not _is(link, (ActivityError, ChildWorkflowError)):
        return False
    try:
        state = cast(ActivityError, link).retry_state
    except Exception:
        return False
    return type(state) is RetryState and state in _ENGINE_GAVE_UP


def _carried_detail(link: BaseException) -> ErrorDetail | None:
    """The detail in an `ApplicationError`'s first detail, when it reads as one of ours."""
    if not _is(link, ApplicationError):
        return None
    try:
        details = cast(ApplicationError, link).details
        payload = details[0] if type(details) is tuple and details else None
        if type(payload) is not dict or "code" not in payload:
            return None  # not a plain dict: a subclass could run its own code on every read
        return ErrorDetail.from_dict(payload)
    except PayloadError:
        return None
    except Exception:  # a forged value made in this process (JSON never holds one): its
        return None  # property, a key's __eq__, a value whose __class__ raises (from_dict asks)


def _innermost_detail(chain: list[BaseException]) -> ErrorDetail | None:
    return next(filter(None, map(_carried_detail, reversed(chain))), None)


def _temporal_ending(link: BaseException, *, attempt_only: bool = False) -> ErrorDetail | None:
    """Temporal's cancel (`run_cancelled`) or timeout (`timeout`) as a detail; with
    `attempt_only`, only a cancel or a timeout that ended an attempt."""
    if _is(link, CancelledError):
        code = "run_cancelled"
    elif _is(link, TimeoutError):
        if attempt_only and _timeout_type(cast(TimeoutError, link)) not in _ATTEMPT_TIMEOUTS:
            return None
        code = "timeout"
    else:
        return None
    return ErrorDetail.create(code, safe_str(link) or None, source="temporal")


def _timeout_type(link: TimeoutError) -> TimeoutType | None:
    try:
        kind = link.type
    except Exception:  # a forged failure's property
        return None
    return kind if type(kind) is TimeoutType else None


def _attempts(detail: ErrorDetail) -> int:
    attempt = detail.details.get("attempt")
    return attempt if type(attempt) is int and attempt > 0 else 1


def _request_key() -> str | None:
    """The activity's request key (`rc.request_key()` inside it): from its workflow's id, its
    run's id and its own, which Temporal keeps on every attempt; None outside an activity.
    The run id, since activity ids restart with each run: a workflow id reused, continued as
    new or run by a schedule must not send its first activity under the last run's key."""
    if not activity.in_activity():
        return None
    info = activity.info()
    return engine_key(
        "temporal", info.workflow_id or "", info.workflow_run_id or "", info.activity_id
    )


def _application_error(exc: Exception) -> Exception:
    """What an activity raises instead of `exc`: Temporal's own errors pass unchanged."""
    if isinstance(exc, TemporalError) or type(exc).__module__.startswith("temporalio."):
        return exc  # the author's ApplicationError, a heartbeat cancel, CompleteAsyncError
    detail = classify(exc)
    if not activity.in_activity():
        return to_application_error(_after_sdk_retries(exc, detail))
    info = activity.info()
    detail = _after_sdk_retries(exc, with_details(detail, attempt=info.attempt))
    error = to_application_error(detail)
    report(_failure_event(error, detail, info))
    return error


def _failure_event(
    error: ApplicationError, detail: ErrorDetail, info: activity.Info
) -> FailureEvent:
    """What the failure hooks hear: `stop` when not retried, `give_up` on the policy's last
    attempt, else `retry` (the wait: the server's hint; None: Temporal's backoff)."""
    name = info.activity_type
    if error.non_retryable:
        return FailureEvent("stop", detail, attempt=info.attempt, name=name)
    policy = info.retry_policy
    if policy is not None and 0 < policy.maximum_attempts <= info.attempt:
        return FailureEvent("give_up", detail, attempt=info.attempt, name=name)
    delay = error.next_retry_delay
    wait_s = delay.total_seconds() if delay is not None else None
    return FailureEvent("retry", detail, attempt=info.attempt, wait_s=wait_s, name=name)


@overload
def classified(fn: Callable[P, T], /) -> Callable[P, T]: ...
@overload
def classified(
    fn: None = None, /, *, cooldowns: Cooldowns | None = None
) -> Callable[[Callable[P, T]], Callable[P, T]]: ...
def classified(fn: Any = None, /, *, cooldowns: Cooldowns | None = None) -> Any:
    """Decorate an activity (sync or async; put it under `@activity.defn`): whatever it
    raises reaches Temporal classified, and `rc.retry` inside defers to Temporal's retry.

    `@rt.classified(cooldowns=key)`: the `Cooldowns` key is consulted before the activity
    runs and told how it ended. A quiet key (or an open circuit) is not waited out in the
    worker: the attempt fails at once with the remaining time as `retry_after_ms`, which is
    Temporal's `next_retry_delay` (or a stop, over the longest hint worth sleeping); a
    stopped key or a spent budget fails it not retryable.
    """
    if fn is None:
        return functools.partial(_classified, cooldowns=cooldowns)
    return _classified(fn, cooldowns=cooldowns)


def _classified(fn: Callable[P, T], *, cooldowns: Cooldowns | None) -> Callable[P, T]:
    if inspect.iscoroutinefunction(fn):
        afn = cast(Callable[..., Any], fn)

        @functools.wraps(fn)
        async def async_activity(*args: Any, **kwargs: Any) -> Any:
            with engine_retries("temporal", _request_key()):
                gate = None
                try:
                    gate = None if cooldowns is None else await cooldowns.abefore_call(0)
                    value = await afn(*args, **kwargs)
                except Exception as exc:
                    await _arecord(cooldowns, gate, exc)
                    raise _application_error(exc) from None
                await _arecord(cooldowns, gate, None)
                return value

        return cast(Callable[P, T], async_activity)

    @functools.wraps(fn)
    def activity_fn(*args: P.args, **kwargs: P.kwargs) -> T:
        with engine_retries("temporal", _request_key()):
            gate = None
            try:
                gate = None if cooldowns is None else cooldowns.before_call(0)
                value = fn(*args, **kwargs)
            except Exception as exc:
                _record(cooldowns, gate, exc)
                raise _application_error(exc) from None
            _record(cooldowns, gate, None)
            return value

    return activity_fn


def _record(cooldowns: Cooldowns | None, gate: Gate | None, error: Exception | None) -> None:
    """Tell the key how an attempt that passed its gate ended."""
    if cooldowns is None or gate is None:
        return
    if error is None:
        cooldowns.after_success(gate)
    else:
        cooldowns.after_failure(classify(error), gate)


async def _arecord(cooldowns: Cooldowns | None, gate: Gate | None, error: Exception | None) -> None:
    """`_record` on the worker's event loop: the store is awaited."""
    if cooldowns is None or gate is None:
        return
    if error is None:
        await cooldowns.aafter_success(gate)
    else:
        await cooldowns.aafter_failure(classify(error), gate)


ActivityCooldowns: TypeAlias = (
    "Cooldowns | Mapping[str, Cooldowns] | Callable[[activity.Info], Cooldowns | None]"
)
"""What `ClassifyInterceptor(cooldowns=...)` takes: one key for every activity, a key per
activity type, or a function of the activity's `Info` (None: no key for that activity)."""


def _activity_key(cooldowns: ActivityCooldowns | None) -> Cooldowns | None:
    if cooldowns is None:
        return None
    from ..fleet._cooldowns import Cooldowns

    if isinstance(cooldowns, Cooldowns):
        return cooldowns
    info = activity.info()
    if isinstance(cooldowns, Mapping):
        return cooldowns.get(info.activity_type)
    key = cooldowns(info)
    if key is not None and not isinstance(key, Cooldowns):
        raise TypeError(
            f"cooldowns(info) must return a Cooldowns or None, not {type(key).__name__}"
        )
    return key


class _ClassifyActivity(ActivityInboundInterceptor):
    def __init__(
        self, next: ActivityInboundInterceptor, cooldowns: ActivityCooldowns | None
    ) -> None:
        super().__init__(next)
        self._cooldowns = cooldowns

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        with engine_retries("temporal", _request_key()):
            key = _activity_key(self._cooldowns)  # a wrong setting raises as itself
            gate = None
            try:
                if key is not None:
                    gate = await key.abefore_call(0)  # a quiet key refuses: Temporal waits
                value = await self.next.execute_activity(input)
            except Exception as exc:
                await _arecord(key, gate, exc)
                error = _application_error(exc)
                if error is exc:
                    raise
                raise error from None
            await _arecord(key, gate, None)
            return value


class ClassifyInterceptor(Interceptor):
    """A worker interceptor: every activity of the worker is `classified`.

    `cooldowns`: shared quiet times consulted before every attempt of an activity and told
    how it ended (a `Cooldowns` key, a mapping of activity type to key, or a function of the
    activity's `Info`). A quiet key (or an open circuit) fails the attempt at once, without
    running the activity, with the time left as `next_retry_delay`: Temporal waits it out,
    holding no worker slot; a stopped key or a spent budget fails it not retryable.
    """

    def __init__(self, *, cooldowns: ActivityCooldowns | None = None) -> None:
        self._cooldowns = cooldowns

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _ClassifyActivity(next, self._cooldowns)

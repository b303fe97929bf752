"""Retry and fallback that obey the classification.

`retry` repeats a call only while `classify(error).retryable` holds, waits the server's
`retry_after_ms` when it gave one (else exponential backoff with full jitter), never retries a
cancel. However it stops on a failure (not retryable at once, or the budget spent) it raises
one thing: a `RecoverableError` whose detail is the last attempt's (an exhausted retry with
`retryable=False`, so an outer layer does not retry again) and the original as `__cause__`.
`fallback` moves to the next provider only when the failure says another could succeed, and
stops the same way. Only a cancel (a BaseException) and an engine's own retries (which need
the original) pass through as raised.

The success path is one `try` around the call: nothing is allocated until something fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, NoReturn, ParamSpec, TypeVar, overload

from .._classify import classify
from .._core.cancel import CancelSignal
from .._core.config import CONFIG
from .._core.detail import ErrorDetail, copy_with, mark_exhausted, with_details
from .._core.error import RecoverableError
from .._core.failures import FailureEvent, report
from .engine_scope import retrying_engine
from .policy import RetryPolicy
from .sdk_retries import sdk_retries, warn_once

if TYPE_CHECKING:
    from ..fleet._cooldowns import Cooldowns
    from ..fleet._rules import Gate

__all__ = [
    "Answer",
    "RetryPolicy",
    "Retrying",
    "afallback",
    "fallback",
    "retry",
    "set_testing",
    "waits_are_off",
]

P = ParamSpec("P")
T = TypeVar("T")
A = TypeVar("A")  # what marks an attempt in a stream (`on_attempt`)

_CANCEL_POLL_S = 0.02  # how often an async wait looks at a cancel it cannot await


def set_testing(on: bool = True) -> None:
    """Turn every retry wait off (tests of code that uses `retry` or `recover` then run
    instantly)."""
    CONFIG.set_testing(on)


def waits_are_off() -> bool:
    """Whether `set_testing` turned the waits off."""
    return CONFIG.testing


@dataclass(frozen=True, slots=True)
class _Decision:
    """What to do after a failed attempt: wait `wait_s` and retry, or give up with `detail`."""

    detail: ErrorDetail
    wait_s: float | None  # None: give up
    reason: str = ""


def _report_failure(detail: ErrorDetail, attempt: int, wait_s: float) -> None:
    report(FailureEvent("retry", detail, attempt=attempt, wait_s=wait_s))


def _report_give_up(detail: ErrorDetail, attempts: int) -> None:
    report(FailureEvent("give_up", detail, attempt=attempts))


async def _async_sleep(seconds: float) -> None:
    """`asyncio.sleep`, or `trio.sleep` when the caller runs under trio."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no asyncio loop: trio (imported only then), or a loop we don't know
        try:
            import trio
        except ImportError:
            raise RuntimeError(
                "recoverable's async retry runs under asyncio or trio; "
                "pass asleep= to retry() for another event loop"
            ) from None
        await trio.sleep(seconds)
        return
    await asyncio.sleep(seconds)


@dataclass(frozen=True)
class Retrying:
    """A configured retry: a decorator, a call form (`call`, `acall`) and a block form.

    Build it with `retry(...)`. Hooks: `before_attempt(n)`, `after_failure(detail, n, wait_s)`,
    `on_give_up(detail, attempts)` (by default the last two report to the process-wide
    failure hooks, `rc.set_failure_hooks`, which log to `recoverable.retry` unless changed).
    `sleep`, `asleep`, `clock` and `rng` are injectable for tests; `cancel` is an Event (or
    any object with `is_set()`) checked before each attempt and while waiting.
    """

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    """How often and how long."""
    before_attempt: Callable[[int], None] | None = None
    """Called with the attempt number (from 1) before every attempt."""
    after_failure: Callable[[ErrorDetail, int, float], None] | None = _report_failure
    """Called with the failure, its attempt number and the wait before the next one."""
    on_give_up: Callable[[ErrorDetail, int], None] | None = _report_give_up
    """Called with the final (non-retryable) detail and the number of attempts made."""
    sleep: Callable[[float], None] = time.sleep
    """How the sync forms wait (seconds)."""
    asleep: Callable[[float], Awaitable[None]] = _async_sleep
    """How the async forms wait (seconds): asyncio's or trio's sleep by default."""
    clock: Callable[[], float] = time.monotonic
    """The clock the deadline is measured on."""
    rng: Callable[[], float] = random.random
    """The jitter's source of numbers in [0, 1)."""
    cancel: CancelSignal | None = None
    """A threading.Event, an asyncio.Event or anything with `is_set()`: set, it stops the
    retries and wakes the wait between them."""
    defer_to_engine: bool = True
    """Inside a step that an engine retries (run by recoverable's Temporal, Celery or DBOS
    adapter), let a retryable failure through at once: the engine's retry is the only one.
    False: retry here too (the engine then sees only what is left when this gives up)."""
    cooldowns: Cooldowns | None = None
    """Quiet times, circuit breakers and budgets shared with other processes (`Cooldowns`):
    consulted before every attempt of every form (see `_cooldowns`)."""

    # --- the decision (pure but for the clock) -------------------------------------------

    def _decide(
        self, exc: BaseException, attempt: int, started: float, detail: ErrorDetail | None
    ) -> _Decision:
        if detail is None:
            detail = classify(exc)
        stop = self._stop_before_waiting(exc, detail, attempt)
        if stop is not None:
            return stop
        hint = detail.retry_after_ms
        if hint is not None and hint > self.policy.max_retry_after_ms:
            return _Decision(detail, None, "retry_after_too_long")
        wait_s = hint / 1000 if hint is not None else self.policy.backoff(attempt, self.rng)
        if CONFIG.testing:
            wait_s = 0.0
        deadline = self.policy.deadline
        if deadline is not None and self.clock() - started + wait_s > deadline:
            return _Decision(detail, None, "deadline")
        return _Decision(detail, wait_s)

    def _stop_before_waiting(
        self, exc: BaseException, detail: ErrorDetail, attempt: int
    ) -> _Decision | None:
        """A stop no wait changes: not retryable, another layer's to retry (exactly one retry
        layer: an engine's, or the SDK's own that already retried), or the attempts spent."""
        if not detail.retryable:
            return _Decision(detail, None, "not_retryable")
        if self.defer_to_engine and retrying_engine() is not None:
            return _Decision(detail, None, "engine_retries")
        retried = sdk_retries(exc)
        if retried:  # the SDK's own retries were the retry layer: none on top of them
            warn_once(exc, retried)
            return _Decision(with_details(detail, sdk_retries=retried), None, "sdk_retries")
        if attempt >= self.policy.attempts:
            return _Decision(detail, None, "attempts")
        return None

    def _after_failure(
        self,
        exc: BaseException,
        attempt: int,
        started: float,
        detail: ErrorDetail | None = None,
        *,
        gate_waits: bool = False,
    ) -> float:
        """The wait before the next attempt; raises when there is none. `detail`: `exc`
        already classified by the caller (not classified again). `gate_waits`: the next
        attempt's cooldown gate waits the key's quiet time, not this loop (reported so:
        `details["waited_by"]`), and may refuse it at once when the quiet time is too long."""
        decision = self._decide(exc, attempt, started, detail)
        wait_s = decision.wait_s
        if wait_s is None:
            if decision.reason == "not_retryable" and self.on_give_up is _report_give_up:
                report(FailureEvent("stop", decision.detail, attempt=attempt))
            if decision.reason == "engine_retries":
                raise exc  # the engine's own retry layer reads the original
            if decision.reason == "not_retryable":
                raise stopped_on(exc, decision.detail)
            self._give_up(exc, decision, attempt)
        if self.after_failure is not None:
            told = with_details(decision.detail, waited_by="cooldowns") if gate_waits else None
            self.after_failure(told or decision.detail, attempt, wait_s)
        return wait_s

    def _give_up(self, exc: BaseException, decision: _Decision, attempts: int) -> NoReturn:
        detail = with_details(
            mark_exhausted(decision.detail, attempts),
            gave_up=decision.reason,
            server_retry_after_ms=decision.detail.retry_after_ms,  # the hint, kept as a fact
        )
        if self.on_give_up is not None:
            self.on_give_up(detail, attempts)
        raise RecoverableError(detail) from exc

    def _check_cancel(self, attempt: int) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise RecoverableError(
                "run_cancelled", f"cancelled before attempt {attempt}", details={"attempt": attempt}
            )

    def _begin(self, attempt: int) -> None:
        """Before every attempt: a set cancel stops here; then the hook."""
        self._check_cancel(attempt)
        if self.before_attempt is not None:
            self.before_attempt(attempt)

    def _wait(self, seconds: float) -> None:
        if seconds <= 0:
            return
        wait = getattr(self.cancel, "wait", None)
        if wait is not None and self.sleep is time.sleep and not inspect.iscoroutinefunction(wait):
            wait(seconds)  # a threading.Event: wakes at once on cancel
        else:
            self.sleep(seconds)

    async def _await_wait(self, seconds: float) -> None:
        """The async wait before a retry; a set `cancel` ends it at once (an asyncio.Event
        wakes it; anything else with `is_set()` is looked at every _CANCEL_POLL_S)."""
        if seconds <= 0:
            return
        cancel = self.cancel
        if cancel is None:
            await self.asleep(seconds)
        elif isinstance(cancel, asyncio.Event) and self.asleep is _async_sleep:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(cancel.wait(), seconds)
        else:
            left = seconds
            while left > 0 and not cancel.is_set():
                step = min(left, _CANCEL_POLL_S)
                await self.asleep(step)
                left -= step

    # --- the cooldowns' gate (only with `cooldowns`: without, no attempt pays for it) ------

    def _gate_cap(self, cooldowns: Cooldowns, started: float) -> int:
        """The longest a gate may wait: the cooldowns' cap, else the policy's, within the
        deadline."""
        policy = self.policy
        cap = cooldowns.max_wait_ms
        if cap is None:
            cap = policy.max_retry_after_ms
        if policy.deadline is not None:
            left = policy.deadline - (self.clock() - started)
            cap = min(cap, max(0, int(left * 1000)))
        return cap

    def _gate(self, started: float) -> Gate | None:
        """Before an attempt: the cooldowns' gate, waited out (None without cooldowns);
        raises when the key refuses the attempt (stopped, open, quiet past the cap, budget
        spent)."""
        cooldowns = self.cooldowns
        if cooldowns is None:
            return None
        gate = cooldowns.before_call(self._gate_cap(cooldowns, started))
        if not CONFIG.testing:
            self._wait(gate.wait_s)
        return gate

    async def _agate(self, started: float) -> Gate | None:
        """`_gate` for the async forms: the store is awaited, then the wait."""
        cooldowns = self.cooldowns
        if cooldowns is None:
            return None
        gate = await cooldowns.abefore_call(self._gate_cap(cooldowns, started))
        if not CONFIG.testing:
            await self._await_wait(gate.wait_s)
        return gate

    def _failed(self, gate: Gate | None, exc: BaseException, attempt: int, started: float) -> float:
        """After a failed attempt: its outcome told to the gate (if any); the wait before the
        next attempt (0 when the next gate waits this failure out); raises when there is none."""
        cooldowns = self.cooldowns
        if gate is None or cooldowns is None:
            return self._after_failure(exc, attempt, started)
        detail = classify(exc)  # once: the gate and the decision read the same detail
        cooldowns.after_failure(detail, gate)
        gate_waits = cooldowns.waits_out(detail)
        wait_s = self._after_failure(exc, attempt, started, detail, gate_waits=gate_waits)
        return 0.0 if gate_waits else wait_s

    async def _afailed(
        self, gate: Gate | None, exc: BaseException, attempt: int, started: float
    ) -> float:
        """`_failed` for the async forms."""
        cooldowns = self.cooldowns
        if gate is None or cooldowns is None:
            return self._after_failure(exc, attempt, started)
        detail = classify(exc)
        await cooldowns.aafter_failure(detail, gate)
        gate_waits = cooldowns.waits_out(detail)
        wait_s = self._after_failure(exc, attempt, started, detail, gate_waits=gate_waits)
        return 0.0 if gate_waits else wait_s

    def _succeeded(self, gate: Gate | None) -> None:
        if gate is not None and self.cooldowns is not None:
            self.cooldowns.after_success(gate)

    async def _asucceeded(self, gate: Gate | None) -> None:
        if gate is not None and self.cooldowns is not None:
            await self.cooldowns.aafter_success(gate)

    # --- call forms ----------------------------------------------------------------------

    def call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Call `fn(*args, **kwargs)` under this policy."""
        if self.cooldowns is not None:
            return self._gated_call(fn, args, kwargs)
        started = self.clock()
        self._begin(1)
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            return self._continue(exc, functools.partial(fn, *args, **kwargs), started)

    def _gated_call(self, fn: Callable[..., T], args: Any, kwargs: Any) -> T:
        """`call` with cooldowns: the gate before the first attempt, its outcome recorded."""
        started = self.clock()
        self._begin(1)
        gate = self._gate(started)
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:
            return self._continue(exc, functools.partial(fn, *args, **kwargs), started, gate)
        self._succeeded(gate)
        return value

    async def acall(self, fn: Callable[P, Awaitable[T]], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Await `fn(*args, **kwargs)` under this policy; a task cancel is never retried."""
        if self.cooldowns is not None:
            return await self._gated_acall(fn, args, kwargs)
        started = self.clock()
        self._begin(1)
        try:
            return await fn(*args, **kwargs)
        except Exception as exc:
            return await self._acontinue(exc, functools.partial(fn, *args, **kwargs), started)

    async def _gated_acall(self, fn: Callable[..., Awaitable[T]], args: Any, kwargs: Any) -> T:
        """`acall` with cooldowns: the store awaited, never called on the loop."""
        started = self.clock()
        self._begin(1)
        gate = await self._agate(started)
        try:
            value = await fn(*args, **kwargs)
        except Exception as exc:
            return await self._acontinue(exc, functools.partial(fn, *args, **kwargs), started, gate)
        await self._asucceeded(gate)
        return value

    @overload
    def __call__(self, fn: Callable[P, Awaitable[T]], /) -> Callable[P, Awaitable[T]]: ...
    @overload
    def __call__(self, fn: Callable[P, T], /) -> Callable[P, T]: ...
    def __call__(self, fn: Callable[P, Any], /) -> Callable[P, Any]:
        """Decorate `fn` (sync or async)."""
        # The fast path reads no clock until a failure: only right when no deadline counts.
        fast = (
            self.before_attempt is None
            and self.cancel is None
            and self.policy.deadline is None
            and self.cooldowns is None
        )
        if inspect.iscoroutinefunction(fn):
            acall = self.acall

            @functools.wraps(fn)
            async def async_wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
                if not fast:
                    return await acall(fn, *args, **kwargs)
                try:
                    return await fn(*args, **kwargs)
                except Exception as exc:
                    return await self._acontinue(exc, functools.partial(fn, *args, **kwargs), None)

            return async_wrapper
        call = self.call

        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
            if not fast:
                return call(fn, *args, **kwargs)
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                return self._continue(exc, functools.partial(fn, *args, **kwargs), None)

        return wrapper

    def _continue(
        self,
        exc: Exception,
        again: Callable[[], T],
        started: float | None,
        gate: Gate | None = None,
    ) -> T:
        """Attempts 2, 3, ... once the first failed with `exc` (the only loop of `call`).
        `gate`: the first attempt's, with cooldowns (each attempt then passes the gate and
        its outcome is recorded); None without."""
        if started is None:  # the decorator's success path reads no clock
            started = self.clock()
        attempt = 1
        while True:
            self._wait(self._failed(gate, exc, attempt, started))
            attempt += 1
            self._begin(attempt)
            if gate is not None:
                gate = self._gate(started)
            try:
                value = again()
            except Exception as error:
                exc = error
                continue
            self._succeeded(gate)
            return value

    async def _acontinue(
        self,
        exc: Exception,
        again: Callable[[], Awaitable[T]],
        started: float | None,
        gate: Gate | None = None,
    ) -> T:
        """Attempts 2, 3, ... once the first failed with `exc` (the only loop of `acall`);
        `gate` as in `_continue`, the store awaited."""
        if started is None:
            started = self.clock()
        attempt = 1
        while True:
            await self._await_wait(await self._afailed(gate, exc, attempt, started))
            attempt += 1
            _check_task_cancel(attempt)
            self._begin(attempt)
            if gate is not None:
                gate = await self._agate(started)
            try:
                value = await again()
            except Exception as error:
                exc = error
                continue
            await self._asucceeded(gate)
            return value

    # --- block form ----------------------------------------------------------------------

    def __iter__(self) -> Iterator[Attempt]:
        """`for attempt in retry(...): with attempt: ...` retries the block (with `cooldowns`,
        the gate runs before each attempt and its outcome is recorded after it)."""
        started = self.clock()
        attempt = Attempt(1)
        while True:
            self._begin(attempt.number)
            gate = self._gate(started)
            yield attempt
            if attempt.error is None:
                self._succeeded(gate)
                return
            self._wait(self._failed(gate, attempt.error, attempt.number, started))
            attempt = Attempt(attempt.number + 1)

    async def __aiter__(self) -> AsyncIterator[Attempt]:
        """`async for attempt in retry(...): with attempt: ...` retries the block (with
        `cooldowns`, as the sync block form)."""
        started = self.clock()
        attempt = Attempt(1)
        while True:
            _check_task_cancel(attempt.number)
            self._begin(attempt.number)
            gate = await self._agate(started)
            yield attempt
            if attempt.error is None:
                await self._asucceeded(gate)
                return
            await self._await_wait(
                await self._afailed(gate, attempt.error, attempt.number, started)
            )
            attempt = Attempt(attempt.number + 1)

    # --- streams: hold the error until the outcome is known ---------------------------------

    @overload
    def stream(
        self,
        open_stream: Callable[[], AsyncIterator[T]],
        *,
        on_error: Callable[[ErrorDetail], T] | None = None,
        retry_after_output: bool = False,
        on_attempt: None = None,
    ) -> AsyncIterator[T]: ...
    @overload
    def stream(
        self,
        open_stream: Callable[[], AsyncIterator[T]],
        *,
        on_error: Callable[[ErrorDetail], T] | None = None,
        retry_after_output: bool = False,
        on_attempt: Callable[[int], A],
    ) -> AsyncIterator[T | A]: ...
    async def stream(
        self,
        open_stream: Callable[[], AsyncIterator[T]],
        *,
        on_error: Callable[[ErrorDetail], T] | None = None,
        retry_after_output: bool = False,
        on_attempt: Callable[[int], A] | None = None,
    ) -> AsyncIterator[T | A]:
        """Relay `open_stream()`'s items, retrying failed attempts; emit one error, at the end.

        A retried attempt emits nothing; only a terminal failure is reported, once: as the
        item `on_error(detail)` when given, else raised as `RecoverableError`. Once an attempt
        has yielded output it is not retried (the reader would see it twice) unless
        `retry_after_output` is set; `on_attempt(n)` is then yielded before attempt n's items
        (`wire.Attempt`: the wire marks each chunk's attempt and tells its readers which
        attempt's output to drop). With `cooldowns`, the gate runs before each attempt (a
        refusal is the terminal failure) and each attempt's outcome is recorded.
        """
        started = self.clock()
        attempt = 1
        while True:
            _check_task_cancel(attempt)
            self._begin(attempt)  # the same prelude as every other form: cancel, then hook
            if on_attempt is not None:
                yield on_attempt(attempt)
            produced = False
            try:
                gate = await self._agate(started)
            except RecoverableError as refused:
                if on_error is None:
                    raise
                yield on_error(refused.detail)
                return
            try:
                async for item in open_stream():
                    produced = True
                    yield item
                await self._asucceeded(gate)
                return
            except Exception as exc:
                terminal: BaseException | None = None
                wait_s = 0.0
                try:
                    if produced and not retry_after_output:
                        # Not retryable from here: an outer layer must not replay it either.
                        detail = classify(exc)
                        if gate is not None and self.cooldowns is not None:
                            await self.cooldowns.aafter_failure(detail, gate)
                        stopped = mark_exhausted(detail, attempt)
                        raise RecoverableError(with_details(stopped, output_started=True)) from exc
                    wait_s = await self._afailed(gate, exc, attempt, started)
                except Exception as final:
                    terminal = final
                if terminal is not None:
                    if on_error is None:
                        raise terminal from terminal.__cause__
                    yield on_error(classify(terminal))
                    return
                await self._await_wait(wait_s)
            attempt += 1


def stopped_on(exc: BaseException, detail: ErrorDetail) -> BaseException:
    """What a retry or a fallback raises when it stops on `exc`: always a `RecoverableError`
    (one `except` for every way it ends), the original as its `__cause__`; a
    `RecoverableError` already is one and is raised as it is."""
    if isinstance(exc, RecoverableError):
        return exc
    error = RecoverableError(detail)
    error.__cause__ = exc
    return error


def _check_task_cancel(attempt: int) -> None:
    """Raise if our task was asked to cancel and swallowed it (a cancel is never retried)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return
    if task is not None and task.cancelling():
        raise asyncio.CancelledError(f"cancelled before attempt {attempt}")


class Attempt:
    """One attempt of the block form: a context manager that records the failure."""

    __slots__ = ("error", "number")

    def __init__(self, number: int) -> None:
        self.number = number
        self.error: Exception | None = None

    def __enter__(self) -> Attempt:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        if isinstance(error, Exception):
            self.error = error
            return True  # the loop decides: retry, or re-raise
        return False  # success, or a BaseException (cancel) that must propagate


@overload
def retry(fn: Callable[P, T], /) -> Callable[P, T]: ...
@overload
def retry(policy: RetryPolicy | None = None, /, **options: Any) -> Retrying: ...
def retry(policy: Any = None, /, **options: Any) -> Any:
    """`@retry`, `@retry(policy)`, `@retry(attempts=5)`, `retry(policy).call(fn, ...)`.

    Keyword options are `RetryPolicy` fields or `Retrying` hooks and injections.
    """
    if policy is not None and not isinstance(policy, RetryPolicy) and callable(policy):
        return Retrying()(policy)
    policy_fields = {k: options.pop(k) for k in list(options) if k in RetryPolicy.__slots__}
    base = policy if policy is not None else RetryPolicy()
    if policy_fields:
        base = replace(base, **policy_fields)
    return Retrying(base, **options)


# --- fallback ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Answer(Generic[T]):
    """What `fallback` returns: the value, which candidate gave it, and who failed before."""

    value: T
    """What the candidate returned."""
    name: str
    """The name of the candidate that answered."""
    index: int
    """Its position among the candidates."""
    failures: tuple[ErrorDetail, ...] = ()
    """The candidates that failed before it, in order (each with `details["candidate"]`)."""


Candidates = (
    Sequence[Callable[..., Any] | tuple[str, Callable[..., Any]]] | Mapping[str, Callable[..., Any]]
)


def _named(candidates: Candidates) -> list[tuple[str, Callable[..., Any]]]:
    if isinstance(candidates, Mapping):
        named = list(candidates.items())
    else:
        named = [
            candidate
            if isinstance(candidate, tuple)
            else (getattr(candidate, "__name__", repr(candidate)), candidate)
            for candidate in candidates
        ]
    if not named:
        raise ValueError("fallback needs at least one candidate")
    return named


class _FallbackRun:
    """The bookkeeping of one `fallback` run (sync or async): who failed, and why."""

    def __init__(self, candidates: Candidates, retry: Retrying | RetryPolicy | None) -> None:
        self.candidates = _named(candidates)
        self.retrying = Retrying(retry) if isinstance(retry, RetryPolicy) else retry
        self.failures: list[ErrorDetail] = []
        self.last: Exception | None = None

    def failed(self, exc: Exception, name: str) -> None:
        """Record a candidate's failure; re-raise it when no other could do better."""
        detail = with_details(classify(exc), candidate=name)
        self.failures.append(detail)
        if detail.code == "run_cancelled" or not detail.fallback:
            raise stopped_on(exc, detail)
        self.last = exc

    def total_failure(self) -> RecoverableError:
        """One error for the whole run: the last failure's code, every failure in its causes."""
        chain: ErrorDetail | None = None
        for detail in self.failures:  # the last failure outermost, the first one deepest
            chain = detail if chain is None else copy_with(detail, cause=chain)
        assert chain is not None
        names = ", ".join(f"{d.details.get('candidate')}: {d.code}" for d in self.failures)
        top = copy_with(
            mark_exhausted(chain, len(self.failures)),
            message=f"every candidate failed ({names})",
            details={"candidates": [d.details.get("candidate") for d in self.failures]},
        ).with_cause(chain)
        error = RecoverableError(top)
        error.__cause__ = self.last
        return error


def fallback(
    candidates: Candidates,
    /,
    *args: Any,
    retry: Retrying | RetryPolicy | None = None,
    **kwargs: Any,
) -> Answer[Any]:
    """Call each candidate in order (each under `retry`, if given) until one answers.

    Moves on only when the failure's `fallback` flag says another could succeed (after the
    candidate's retries, or at once when its retry-after exceeds the cap); stops on anything
    else (a bad request, a cancel) by re-raising it.
    """
    run = _FallbackRun(candidates, retry)
    for index, (name, candidate) in enumerate(run.candidates):
        try:
            if run.retrying is None:
                value = candidate(*args, **kwargs)
            else:
                value = run.retrying.call(candidate, *args, **kwargs)
        except Exception as exc:
            run.failed(exc, name)
            continue
        return Answer(value, name, index, tuple(run.failures))
    raise run.total_failure()


async def afallback(
    candidates: Candidates,
    /,
    *args: Any,
    retry: Retrying | RetryPolicy | None = None,
    **kwargs: Any,
) -> Answer[Any]:
    """`fallback` for async candidates."""
    run = _FallbackRun(candidates, retry)
    for index, (name, candidate) in enumerate(run.candidates):
        try:
            if run.retrying is None:
                value = await candidate(*args, **kwargs)
            else:
                value = await run.retrying.acall(candidate, *args, **kwargs)
        except Exception as exc:
            run.failed(exc, name)
            continue
        return Answer(value, name, index, tuple(run.failures))
    raise run.total_failure()

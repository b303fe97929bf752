"""Retry that obeys the classification: `retry` and its `Retrying` forms.

`retry` repeats a call only while `classify(error).retryable` holds, waits the server's
`retry_after_ms` when it gave one (else exponential backoff with full jitter), never retries a
cancel. However it stops on a failure (not retryable at once, or the budget spent) it raises
one thing: a `RecoverableError` whose detail is the last attempt's (an exhausted retry with
`retryable=False`, so an outer layer does not retry again) and the original as `__cause__`.
Only a cancel (a BaseException) and an engine's own retries (which need the original) pass
through as raised.

Every form runs one loop of attempts: what follows a failure is its decider's (`decide`: the
policy's by default, the ladder's for `recover`), every wait is `waits`', the cooldowns
around each attempt are `gate`'s. The success path is one `try` around the call: nothing is
allocated until something fails.
"""

from __future__ import annotations

import functools
import inspect
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

from .._core.detail import ErrorDetail
from .decide import Decider, decide_by_policy, report_failure, report_give_up
from .gate import (
    apass_gate,
    attempt_afailed,
    attempt_asucceeded,
    attempt_failed,
    attempt_succeeded,
    begin_attempt,
    pass_gate,
)
from .keys import (
    KeyCell,
    KeyToken,
    call_cell,
    check_request_key,
    close_key,
    enter_cell,
    key_cell,
    open_key,
    restart_calls,
)
from .policy import RetryPolicy
from .waits import async_sleep, await_wait, check_task_cancel, wait

if TYPE_CHECKING:
    from .._core.cancel import CancelSignal
    from ..fleet._cooldowns import Cooldowns
    from ..fleet._rules import Gate

__all__ = ["Attempt", "Retrying", "after_first_failure", "retry"]

P = ParamSpec("P")
T = TypeVar("T")
A = TypeVar("A")  # what marks an attempt in a stream (`on_attempt`)


@dataclass(frozen=True)
class Retrying:
    """A configured retry: a decorator, a call form (`call`, `acall`) and a block form.

    Build it with `retry(...)`. Hooks: `before_attempt(n)`, `after_failure(detail, n, wait_s)`,
    `on_give_up(detail, attempts)` (by default the last two report to the process-wide
    failure hooks, `rc.instrumentation.set_failure_hooks`, which log to `recoverable.retry`
    unless changed).
    `sleep`, `asleep`, `clock` and `rng` are injectable for tests; `cancel` is an Event (or
    any object with `is_set()`) checked before each attempt and while waiting.
    """

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    """How often and how long."""
    before_attempt: Callable[[int], None] | None = None
    """Called with the attempt number (from 1) before every attempt."""
    after_failure: Callable[[ErrorDetail, int, float], None] | None = report_failure
    """Called with the failure, its attempt number and the wait before the next one."""
    on_give_up: Callable[[ErrorDetail, int], None] | None = report_give_up
    """Called with the final (non-retryable) detail and the number of attempts made."""
    sleep: Callable[[float], None] = time.sleep
    """How the sync forms wait (seconds)."""
    asleep: Callable[[float], Awaitable[None]] = async_sleep
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
    decide: Decider = decide_by_policy
    """What follows a failed attempt: the wait before the next one, or the stop, raised
    (`Decider`). By default the policy's decision; the ladder (`recover`) brings its own."""
    request_key: str | None = None
    """The request key of every attempt (`rc.request_key()`, sent as `Idempotency-Key`):
    None, the default, makes one per call (a retry inside another has a sub-key of the outer
    one, `keys`; the first inside an engine's step uses the step's). A key given here is
    every call's, so give it to a `Retrying` made for one call:
    `rc.retry(request_key=order_id).call(send, order)`. 1 to 128 characters of `[A-Za-z0-9._:-]`."""

    def __post_init__(self) -> None:
        if self.request_key is not None:
            check_request_key(self.request_key)

    # --- call forms ----------------------------------------------------------------------

    def call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Call `fn(*args, **kwargs)` under this policy (one request key for its attempts)."""
        key = open_key(self.request_key)
        try:
            if self.cooldowns is not None:
                return self._gated_call(fn, args, kwargs)
            started = self.clock()
            begin_attempt(self, 1)
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                return self._continue(exc, functools.partial(fn, *args, **kwargs), started)
        finally:
            close_key(key)

    def _gated_call(self, fn: Callable[..., T], args: Any, kwargs: Any) -> T:
        """`call` with cooldowns: the gate before the first attempt, its outcome recorded."""
        started = self.clock()
        begin_attempt(self, 1)
        gate = pass_gate(self, started)
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:
            return self._continue(exc, functools.partial(fn, *args, **kwargs), started, gate)
        attempt_succeeded(self, gate)
        return value

    async def acall(self, fn: Callable[P, Awaitable[T]], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Await `fn(*args, **kwargs)` under this policy (one request key for its attempts);
        a task cancel is never retried."""
        key = open_key(self.request_key)
        try:
            if self.cooldowns is not None:
                return await self._gated_acall(fn, args, kwargs)
            started = self.clock()
            begin_attempt(self, 1)
            try:
                return await fn(*args, **kwargs)
            except Exception as exc:
                return await self._acontinue(exc, functools.partial(fn, *args, **kwargs), started)
        finally:
            close_key(key)

    async def _gated_acall(self, fn: Callable[..., Awaitable[T]], args: Any, kwargs: Any) -> T:
        """`acall` with cooldowns: the store awaited, never called on the loop."""
        started = self.clock()
        begin_attempt(self, 1)
        gate = await apass_gate(self, started)
        try:
            value = await fn(*args, **kwargs)
        except Exception as exc:
            return await self._acontinue(exc, functools.partial(fn, *args, **kwargs), started, gate)
        await attempt_asucceeded(self, gate)
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
        given, cell = self.request_key, key_cell
        if inspect.iscoroutinefunction(fn):
            acall = self.acall

            @functools.wraps(fn)
            async def async_wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
                if not fast:
                    return await acall(fn, *args, **kwargs)
                # The call's key scope, inline (`keys.open_key`): a call costs no more
                outer = cell.get()
                key = cell.set(KeyCell(given) if given or outer is None else call_cell())
                try:
                    return await fn(*args, **kwargs)
                except Exception as exc:
                    return await self._acontinue(exc, functools.partial(fn, *args, **kwargs), None)
                finally:
                    close_key(key)  # which a coroutine closed from another context cannot reset

            return async_wrapper
        call = self.call

        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
            if not fast:
                return call(fn, *args, **kwargs)
            outer = cell.get()
            key = cell.set(KeyCell(given) if given or outer is None else call_cell())
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                return self._continue(exc, functools.partial(fn, *args, **kwargs), None)
            finally:
                cell.reset(key)  # a sync call ends in the context it began in

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
            wait(attempt_failed(self, gate, exc, attempt, started), self.cancel, self.sleep)
            attempt += 1
            begin_attempt(self, attempt)
            if gate is not None:
                gate = pass_gate(self, started)
            restart_calls()  # its nested calls get the last attempt's sub-keys again
            try:
                value = again()
            except Exception as error:
                exc = error
                continue
            attempt_succeeded(self, gate)
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
            wait_s = await attempt_afailed(self, gate, exc, attempt, started)
            await await_wait(wait_s, self.cancel, self.asleep)
            attempt += 1
            check_task_cancel(attempt)
            begin_attempt(self, attempt)
            if gate is not None:
                gate = await apass_gate(self, started)
            restart_calls()
            try:
                value = await again()
            except Exception as error:
                exc = error
                continue
            await attempt_asucceeded(self, gate)
            return value

    # --- block form ----------------------------------------------------------------------

    def __iter__(self) -> Iterator[Attempt]:
        """`for attempt in retry(...): with attempt: ...` retries the block (with `cooldowns`,
        the gate runs before each attempt and its outcome is recorded after it); one request
        key for every attempt of the block."""
        cell = call_cell(self.request_key)  # entered by each attempt, never across a yield
        started = self.clock()
        attempt = Attempt(1, cell)
        while True:
            begin_attempt(self, attempt.number)
            gate = pass_gate(self, started)
            yield attempt
            if attempt.error is None:
                attempt_succeeded(self, gate)
                return
            wait_s = attempt_failed(self, gate, attempt.error, attempt.number, started)
            wait(wait_s, self.cancel, self.sleep)
            attempt = Attempt(attempt.number + 1, cell)

    async def __aiter__(self) -> AsyncIterator[Attempt]:
        """`async for attempt in retry(...): with attempt: ...` retries the block (with
        `cooldowns`, as the sync block form; one request key for every attempt)."""
        cell = call_cell(self.request_key)  # entered by each attempt, never across a yield
        started = self.clock()
        attempt = Attempt(1, cell)
        while True:
            check_task_cancel(attempt.number)
            begin_attempt(self, attempt.number)
            gate = await apass_gate(self, started)
            yield attempt
            if attempt.error is None:
                await attempt_asucceeded(self, gate)
                return
            wait_s = await attempt_afailed(self, gate, attempt.error, attempt.number, started)
            await await_wait(wait_s, self.cancel, self.asleep)
            attempt = Attempt(attempt.number + 1, cell)

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
    def stream(
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
        from .stream import relay  # its own module, loaded by the first stream

        return relay(self, open_stream, on_error, retry_after_output, on_attempt)


class Attempt:
    """One attempt of the block form: a context manager that records the failure, its call's
    request key current inside it (entered and closed by the attempt itself, so a block left
    by a timeout or a cancel leaves no key behind in its task)."""

    __slots__ = ("_token", "cell", "error", "number")

    def __init__(self, number: int, cell: KeyCell | None = None) -> None:
        self.number = number
        """Which attempt this is, from 1."""
        self.error: Exception | None = None
        """The failure the block raised, None while it has not failed."""
        self.cell = cell
        """The call's request key (`rc.request_key()` inside), None: the current one."""
        self._token: KeyToken | None = None

    def __enter__(self) -> Attempt:
        if self.cell is not None:
            restart_calls(self.cell)  # its nested calls get the last attempt's sub-keys again
            self._token = enter_cell(self.cell)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        token, self._token = self._token, None
        close_key(token)
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


def after_first_failure(retrying: Retrying, exc: Exception, again: Callable[[], T]) -> T:
    """Attempts 2, 3, ... of `again` under `retrying`, its first attempt made by the caller
    and failed with `exc`: the decorator's own path (nothing is built while the call
    succeeds), for the ladder's `recover`."""
    return retrying._continue(exc, again, None)

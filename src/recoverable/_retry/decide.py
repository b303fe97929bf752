"""What follows a failed attempt: the wait before the next one, or the stop. A `Decider`
says it; the loop (`Retrying`) only carries it out, so every way of retrying (the policy's,
the ladder's `recover`) shares one loop, one wait, one cancel and the cooldowns' gate.

The default decider is the policy's (`decide_by_policy`), pure but for the clock (and the
engine's scope, read from a context variable): the policy's attempts, backoff, deadline and
retry-after cap, the one retry layer (an engine's, or the SDK's own), and what each way of
stopping raises. A stop is always a `RecoverableError` (the original as its `__cause__`), but
for an engine's own retry, which reads the original.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn, Protocol

import recoverable._classify as classification  # the module: its stages load on first use

from .._core.config import CONFIG
from .._core.detail import ErrorDetail, mark_exhausted, with_details
from .._core.error import RecoverableError
from .._core.failures import FailureEvent, report
from .engine_scope import retrying_engine
from .sdk_retries import sdk_retries, warn_once

if TYPE_CHECKING:
    from .loop import Retrying

__all__ = [
    "Decider",
    "Decision",
    "decide_by_policy",
    "report_failure",
    "report_give_up",
    "stopped_on",
]


class Decider(Protocol):
    """What follows a failed attempt of `retrying` (`Retrying.decide`)."""

    def __call__(  # noqa: PLR0913 -- a failed attempt: its run, error, number, start, gate
        self,
        retrying: Retrying,
        exc: BaseException,
        attempt: int,
        started: float,
        /,
        *,
        detail: ErrorDetail | None,
        gate_waits: bool,
    ) -> float:
        """The wait in seconds before attempt `attempt + 1`; raises to stop (what it raises
        is what the call raises). `started`: the run's start on `retrying.clock`. `detail`:
        `exc` already classified (with cooldowns), else None. `gate_waits`: the next
        attempt's cooldown gate waits the key's quiet time, not the loop (the loop then waits
        0 whatever is returned)."""
        ...


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do after a failed attempt: wait `wait_s` and retry, or give up with `detail`."""

    detail: ErrorDetail
    """The failure, classified (with what the decision adds to it)."""
    wait_s: float | None
    """The wait before the next attempt; None: give up."""
    reason: str = ""
    """Why it gives up (`details["gave_up"]`): `not_retryable`, `engine_retries`,
    `sdk_retries`, `attempts`, `retry_after_too_long` or `deadline`."""


def report_failure(detail: ErrorDetail, attempt: int, wait_s: float) -> None:
    """The default `after_failure`: a `retry` event to the failure hooks."""
    report(FailureEvent("retry", detail, attempt=attempt, wait_s=wait_s))


def report_give_up(detail: ErrorDetail, attempts: int) -> None:
    """The default `on_give_up`: a `give_up` event to the failure hooks."""
    report(FailureEvent("give_up", detail, attempt=attempts))


def _policy_decision(
    retrying: Retrying,
    exc: BaseException,
    attempt: int,
    started: float,
    detail: ErrorDetail | None,
) -> Decision:
    """The decision after attempt `attempt` failed with `exc` (`detail`: already classified,
    or None)."""
    if detail is None:
        detail = classification.classify(exc)
    stop = _stop_before_waiting(retrying, exc, detail, attempt)
    if stop is not None:
        return stop
    policy = retrying.policy
    hint = detail.retry_after_ms
    if hint is not None and hint > policy.max_retry_after_ms:
        return Decision(detail, None, "retry_after_too_long")
    wait_s = hint / 1000 if hint is not None else policy.backoff(attempt, retrying.rng)
    if CONFIG.testing:
        wait_s = 0.0
    deadline = policy.deadline
    if deadline is not None and retrying.clock() - started + wait_s > deadline:
        return Decision(detail, None, "deadline")
    return Decision(detail, wait_s)


def _stop_before_waiting(
    retrying: Retrying, exc: BaseException, detail: ErrorDetail, attempt: int
) -> Decision | None:
    """A stop no wait changes: not retryable, another layer's to retry (exactly one retry
    layer: an engine's, or the SDK's own that already retried), or the attempts spent."""
    if not detail.retryable:
        return Decision(detail, None, "not_retryable")
    if retrying.defer_to_engine and retrying_engine() is not None:
        return Decision(detail, None, "engine_retries")
    retried = sdk_retries(exc)
    if retried:  # the SDK's own retries were the retry layer: none on top of them
        warn_once(exc, retried)
        return Decision(with_details(detail, sdk_retries=retried), None, "sdk_retries")
    if attempt >= retrying.policy.attempts:
        return Decision(detail, None, "attempts")
    return None


def decide_by_policy(  # noqa: PLR0913 -- a failed attempt: its run, error, number, start, gate
    retrying: Retrying,
    exc: BaseException,
    attempt: int,
    started: float,
    /,
    *,
    detail: ErrorDetail | None = None,
    gate_waits: bool = False,
) -> float:
    """The default `Decider`: the wait before the next attempt under `retrying.policy`;
    raises when there is none. `detail`: `exc` already classified by the caller (not
    classified again). `gate_waits`: the next attempt's cooldown gate waits the key's quiet
    time, not the loop (reported so: `details["waited_by"]`), and may refuse it at once when
    the quiet time is too long."""
    decision = _policy_decision(retrying, exc, attempt, started, detail)
    wait_s = decision.wait_s
    if wait_s is None:
        if decision.reason == "not_retryable" and retrying.on_give_up is report_give_up:
            report(FailureEvent("stop", decision.detail, attempt=attempt))
        if decision.reason == "engine_retries":
            raise exc  # the engine's own retry layer reads the original
        if decision.reason == "not_retryable":
            raise stopped_on(exc, decision.detail)
        _give_up(retrying, exc, decision, attempt)
    if retrying.after_failure is not None:
        told = with_details(decision.detail, waited_by="cooldowns") if gate_waits else None
        retrying.after_failure(told or decision.detail, attempt, wait_s)
    return wait_s


def _give_up(retrying: Retrying, exc: BaseException, decision: Decision, attempts: int) -> NoReturn:
    detail = with_details(
        mark_exhausted(decision.detail, attempts),
        gave_up=decision.reason,
        server_retry_after_ms=decision.detail.retry_after_ms,  # the hint, kept as a fact
    )
    if retrying.on_give_up is not None:
        retrying.on_give_up(detail, attempts)
    raise RecoverableError(detail) from exc


def stopped_on(exc: BaseException, detail: ErrorDetail) -> BaseException:
    """What a retry or a fallback raises when it stops on `exc`: always a `RecoverableError`
    (one `except` for every way it ends), the original as its `__cause__`; a
    `RecoverableError` already is one and is raised as it is."""
    if isinstance(exc, RecoverableError):
        return exc
    error = RecoverableError(detail)
    error.__cause__ = exc
    return error

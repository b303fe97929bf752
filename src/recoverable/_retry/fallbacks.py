"""Fallback that obeys the classification: `fallback` and `afallback` call each candidate in
turn (each under a retry, if given) until one answers.

A run moves to the next candidate only when the ledger's rule says another could succeed
(`ledger.FallbackLedger`: the failure's `fallback` flag, after the candidate's retries, or at
once when its retry-after exceeds the cap); it stops on anything else (a bad request, a
cancel) by raising it as a `RecoverableError`. When every candidate failed, one
`RecoverableError` says so: the last failure's code, every failure in its cause chain (the
ledger's, the first failure deepest). The answer says which candidate gave it and who failed
before (`FallbackResult`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .._classify import classify
from .._core.detail import ErrorDetail, copy_with, mark_exhausted, with_details
from .._core.error import RecoverableError
from .decide import stopped_on
from .ledger import FallbackLedger
from .loop import Retrying
from .policy import RetryPolicy

__all__ = ["Candidates", "FallbackResult", "afallback", "fallback"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FallbackResult(Generic[T]):
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
        self.ledger = FallbackLedger()
        self.last: Exception | None = None

    def failed(self, exc: Exception, name: str) -> None:
        """Record a candidate's failure; re-raise it when no other could do better."""
        detail = with_details(classify(exc), candidate=name)
        if not self.ledger.moves_on(detail):
            raise stopped_on(exc, detail)
        self.last = exc

    def total_failure(self) -> RecoverableError:
        """One error for the whole run: the last failure's code, every failure in its causes."""
        failures = self.ledger.failures
        chain = self.ledger.chain()
        names = ", ".join(f"{d.details.get('candidate')}: {d.code}" for d in failures)
        top = copy_with(
            mark_exhausted(chain, len(failures)),
            message=f"every candidate failed ({names})",
            details={"candidates": [d.details.get("candidate") for d in failures]},
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
) -> FallbackResult[Any]:
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
        return FallbackResult(value, name, index, tuple(run.ledger.failures))
    raise run.total_failure()


async def afallback(
    candidates: Candidates,
    /,
    *args: Any,
    retry: Retrying | RetryPolicy | None = None,
    **kwargs: Any,
) -> FallbackResult[Any]:
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
        return FallbackResult(value, name, index, tuple(run.ledger.failures))
    raise run.total_failure()


Answer = FallbackResult  # its name before 0.2.0 (`recoverable.Answer` warns and reads this)

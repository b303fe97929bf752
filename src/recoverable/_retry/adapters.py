"""Keep your retry library: hooks that make tenacity and stamina obey the classification.

    from recoverable.adapters import retry_if_retryable, stamina_on, wait_retry_after

    tenacity.retry(retry=retry_if_retryable, wait=wait_retry_after(wait_exponential()))
    stamina.retry(on=stamina_on, attempts=4)

Neither library is imported: tenacity calls these with its RetryCallState, stamina with the
exception.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._classify import classify
from .._core.detail import ErrorDetail
from .policy import DEFAULT_MAX_RETRY_AFTER_MS

__all__ = ["retry_if_retryable", "stamina_on", "wait_retry_after"]


def _failure(retry_state: Any) -> BaseException | None:
    outcome = getattr(retry_state, "outcome", None)
    if outcome is None or not outcome.failed:
        return None
    error: BaseException | None = outcome.exception()
    return error


def _worth_retrying(detail: ErrorDetail, max_retry_after_ms: int) -> bool:
    hint = detail.retry_after_ms
    return detail.retryable and (hint is None or hint <= max_retry_after_ms)


def retry_if_retryable(retry_state: Any) -> bool:
    """tenacity `retry=`: only failures classified retryable (and hints under a minute)."""
    error = _failure(retry_state)
    return error is not None and _worth_retrying(classify(error), DEFAULT_MAX_RETRY_AFTER_MS)


def wait_retry_after(
    otherwise: Callable[[Any], float] | None = None,
    *,
    max_retry_after_ms: int = DEFAULT_MAX_RETRY_AFTER_MS,
) -> Callable[[Any], float]:
    """tenacity `wait=`: the server's retry-after when it gave one (never more than
    `max_retry_after_ms`: `retry_if_retryable` stops on a longer one), else `otherwise` (or 0).
    """

    def wait(retry_state: Any) -> float:
        error = _failure(retry_state)
        hint = classify(error).retry_after_ms if error is not None else None
        if hint is not None:
            return min(hint, max_retry_after_ms) / 1000
        return otherwise(retry_state) if otherwise is not None else 0.0

    return wait


def stamina_on(error: Exception) -> bool | float:
    """stamina `on=`: False for what must not be retried, the retry-after (s) when given."""
    detail = classify(error)
    if not _worth_retrying(detail, DEFAULT_MAX_RETRY_AFTER_MS):
        return False
    return detail.retry_after_ms / 1000 if detail.retry_after_ms is not None else True

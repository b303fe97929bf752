"""Exactly one retry layer: while an engine runs a step, `rc.retry` inside it defers.

Temporal, Celery and DBOS retry a failed step themselves. When recoverable's adapter runs the
step (an activity, a task, a DBOS step), it marks the context here; a `rc.retry` inside then
lets a retryable failure through at once instead of retrying it too, so attempts are the
engine's alone, never the engine's times ours. `Retrying(defer_to_engine=False)` opts out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["engine_retries", "retrying_engine"]

_engine: ContextVar[str | None] = ContextVar("recoverable_retrying_engine", default=None)


def retrying_engine() -> str | None:
    """The engine that retries the step running now (`temporal`, `celery`, `dbos`), if any."""
    return _engine.get()


@contextlib.contextmanager
def engine_retries(engine: str) -> Iterator[None]:
    """Mark the block as a step that `engine` retries."""
    token = _engine.set(engine)
    try:
        yield
    finally:
        _engine.reset(token)

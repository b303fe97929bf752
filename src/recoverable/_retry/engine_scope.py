"""Exactly one retry layer: while an engine runs a step, `rc.retry` inside it defers.

Temporal, Celery and DBOS retry a failed step themselves. When recoverable's adapter runs the
step (an activity, a task, a DBOS step), it marks the context here; a `rc.retry` inside then
lets a retryable failure through at once instead of retrying it too, so attempts are the
engine's alone, never the engine's times ours. `Retrying(defer_to_engine=False)` opts out.
The adapter also gives the step its request key (`keys.engine_key`, from the engine's ids), so
`rc.request_key()` inside is the same on every attempt the engine makes (the first
`rc.retry` inside uses it, the next ones its sub-keys: `keys`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from .keys import close_key, open_step

__all__ = ["engine_retries", "retrying_engine"]

_engine: ContextVar[str | None] = ContextVar("recoverable_retrying_engine", default=None)


def retrying_engine() -> str | None:
    """The engine that retries the step running now (`temporal`, `celery`, `dbos`), if any."""
    return _engine.get()


@contextlib.contextmanager
def engine_retries(engine: str, request_key: str | None = None) -> Iterator[None]:
    """Mark the block as a step that `engine` retries, `request_key` its key when given (the
    same on each of the engine's attempts: `keys.engine_key`)."""
    token = _engine.set(engine)
    key = open_step(request_key) if request_key is not None else None
    try:
        yield
    finally:
        close_key(key)
        _engine.reset(token)

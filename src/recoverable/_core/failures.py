"""Where failures are reported: one list of hooks, set once, for logs, traces and metrics.

`rc.retry` reports every failed attempt it retries, every give-up and every stop on a
failure not worth retrying; the agents runner reports a run that ended in error; the Temporal
and Celery adapters report each failed attempt of an activity or a task. Each report is a
`FailureEvent` passed to every hook in `set_failure_hooks(...)`, in order. By default the one
hook logs retries and give-ups to the `recoverable.retry` logger (as before hooks existed).
OpenTelemetry users call `integrations.otel.instrument()`; a structlog or Prometheus user
adds a function of their own:

    hooks = rc.instrumentation
    hooks.set_failure_hooks([*hooks.get_failure_hooks(), lambda e: log.warning(e.kind)])

A hook that raises is logged and skipped: an exporter's fault never changes what a retry
does. Reporting costs nothing on the success path (only failures are reported). Kept light
(no dataclass, logging imported on first use): the agents runner imports it.

What a hook hears is clean, whoever built the event: `detail` is a detail that passed a door
(anything else, an exception included, is classified first), `name` is scrubbed and clipped,
`attempt` an int and `wait_s` a finite number or None. The library's own records (the default
hook's lines, a failing hook's) carry codes, numbers and scrubbed names only: no traceback, and
never an exception's own text unscrubbed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal, TypeGuard

from .config import CONFIG

if TYPE_CHECKING:
    from .detail import ErrorDetail

__all__ = [
    "FailureEvent",
    "FailureHook",
    "FailureKind",
    "get_failure_hooks",
    "report",
    "set_failure_hooks",
]

FailureKind = Literal["retry", "give_up", "stop", "run_failed"]


class FailureEvent:
    """One reported failure (read-only by convention; slotted, cheap to make)."""

    __slots__ = ("attempt", "detail", "kind", "name", "wait_s")

    kind: FailureKind
    """`retry`: an attempt failed and is retried after `wait_s`; `give_up`: a retry layer
    ran out (attempts, deadline, a hint too long) and `detail` is the final one; `stop`: an
    attempt failed with what is not worth repeating (quota, a bad request), so no retry;
    `run_failed`: an agents run ended in error."""
    detail: ErrorDetail
    """The classified failure."""
    attempt: int | None
    """The failed attempt's number (from 1), or the attempts made when giving up."""
    wait_s: float | None
    """The wait before the next attempt (`retry` only; None: the engine's own backoff)."""
    name: str | None
    """What failed, when the reporter knows: an activity's type, a task's name, a CLI's name."""

    def __init__(
        self,
        kind: FailureKind,
        detail: ErrorDetail,
        *,
        attempt: int | None = None,
        wait_s: float | None = None,
        name: str | None = None,
    ) -> None:
        self.kind, self.detail = kind, _detail_of(detail)
        self.attempt = attempt if type(attempt) is int else None
        self.wait_s = float(wait_s) if _finite(wait_s) else None
        self.name = None if name is None else _clean_name(name)

    @property
    def code(self) -> str:
        """`detail.code`."""
        return self.detail.code

    def __repr__(self) -> str:
        return (
            f"FailureEvent({self.kind!r}, {self.detail.code!r}, attempt={self.attempt!r}, "
            f"wait_s={self.wait_s!r}, name={self.name!r})"
        )


FailureHook = Callable[[FailureEvent], None]

_MAX_NAME = 100  # an activity's type, a task's or a CLI's name, a hook's name


def _detail_of(given: object) -> ErrorDetail:
    """Our detail as given; anything else (an exception, another copy's detail) classified."""
    from .detail import ErrorDetail

    if type(given) is ErrorDetail:
        return given
    return CONFIG.classify(given)


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _clean_name(value: object) -> str:
    from .untrusted import clean_text, safe_str

    return clean_text(value if type(value) is str else safe_str(value), _MAX_NAME)


def log_failure(event: FailureEvent) -> None:
    """The default hook: retries and give-ups as warnings on `recoverable.retry`."""
    import logging

    logger = logging.getLogger("recoverable.retry")
    code = event.detail.code
    if event.kind == "retry":
        wait = "an engine's backoff" if event.wait_s is None else f"{event.wait_s:.3f} s"
        line = "attempt %s failed with %s; retrying in %s"
        if event.detail.details.get("waited_by") == "cooldowns":  # the gate waits, or refuses
            line = (
                "attempt %s failed with %s; the next attempt waits the key's shared quiet time"
                " (hint %s), or fails at once if that is longer than its max_wait_ms"
            )
        logger.warning(
            line,
            event.attempt,
            code,
            wait,
            extra={"error_code": code, "attempt": event.attempt, "wait_s": event.wait_s},
        )
    elif event.kind == "give_up":
        logger.warning(
            "giving up after %s attempt(s): %s",
            event.attempt,
            code,
            extra={"error_code": code, "attempts": event.attempt},
        )


_DEFAULT_HOOKS: tuple[FailureHook, ...] = (log_failure,)


def set_failure_hooks(hooks: Iterable[FailureHook] | None) -> None:
    """Replace the hooks every failure report goes to. None: the default (logging);
    an empty list: report nothing."""
    if hooks is None:
        CONFIG.set_failure_hooks(None)
        return
    chosen = tuple(hooks)
    for hook in chosen:
        if not callable(hook):
            raise TypeError(f"a failure hook must be callable, not {hook!r}")
    CONFIG.set_failure_hooks(chosen)


def get_failure_hooks() -> tuple[FailureHook, ...]:
    """The hooks failures are reported to, in order."""
    hooks = CONFIG.failure_hooks
    return _DEFAULT_HOOKS if hooks is None else hooks


def report(event: FailureEvent) -> None:
    """Pass `event` to every hook; a hook's own error is logged, never raised."""
    for hook in get_failure_hooks():
        try:
            hook(event)
        except Exception as exc:
            _hook_failed(hook, exc)


def _hook_failed(hook: FailureHook, exc: Exception) -> None:
    """One warning: the hook's name and what it raised, scrubbed and short. No traceback:
    its frames' text and the exception's own words are not the library's to write out."""
    import logging

    from .untrusted import clean_text, safe_str

    name = getattr(hook, "__qualname__", None) or type(hook).__qualname__
    logging.getLogger("recoverable.instrumentation").warning(
        "failure hook %s raised %s: %s; skipped",
        _clean_name(name),
        type(exc).__qualname__,
        clean_text(safe_str(exc), 300),
    )

"""OpenTelemetry: a failure on its span, retries as span events, a counter by code.

    from recoverable.integrations import otel

    otel.instrument()                    # once, at start-up: rc.retry, the agents runner and
                                         # the Celery adapter report to the current span
    otel.record_error(detail)            # or by hand, on the current span (or `span=`)

`record_error` follows the semantic conventions for errors: `error.type` is the code and the
span's status is ERROR (its description the code too). Our fields go under `recoverable.*`.
Developer text (`message`) is left out unless `include_message=True`: it may quote upstream
text, which is scrubbed but not meant for every trace backend.

`instrument()` adds one hook to `rc.set_failure_hooks` (keeping the others, the logging one
included): each retried attempt becomes a `recoverable.retry` span event; a give-up, a stop
on a failure not worth retrying and a failed agent run are recorded with `record_error`; and
every report adds 1 to the counter `recoverable.failures` with `error.type` and
`recoverable.event` (retry, give_up, stop, run_failed) as attributes.
"""

from __future__ import annotations

from opentelemetry import metrics, trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from .._detail import ErrorDetail
from .._instrumentation import FailureEvent, get_failure_hooks, set_failure_hooks

__all__ = ["attributes", "instrument", "record_error", "uninstrument"]

COUNTER = "recoverable.failures"


def attributes(detail: ErrorDetail, *, include_message: bool = False) -> dict[str, AttributeValue]:
    """The span attributes of a failure: `error.type` and our fields (None fields left out;
    the developer text only when asked)."""
    found: dict[str, AttributeValue] = {
        "error.type": detail.code,
        "recoverable.category": detail.category,
        "recoverable.retryable": detail.retryable,
        "recoverable.recovery": detail.recovery,
    }
    optional: dict[str, AttributeValue | None] = {
        "recoverable.retry_after_ms": detail.retry_after_ms,
        "recoverable.upstream_status": detail.status,
        "recoverable.source": detail.source,
        "recoverable.fix_required": detail.fix_required,
        "recoverable.fix_command": detail.fix_command,
        "recoverable.message": detail.message if include_message else None,
    }
    found.update((key, value) for key, value in optional.items() if value is not None)
    return found


def record_error(
    detail: ErrorDetail, span: Span | None = None, *, include_message: bool = False
) -> None:
    """Mark `span` (default: the current one) as failed with `detail`."""
    target = span if span is not None else trace.get_current_span()
    target.set_attributes(attributes(detail, include_message=include_message))
    target.set_status(Status(StatusCode.ERROR, detail.code))


class _OtelHook:
    """The failure hook `instrument` installs (one at a time)."""

    def __init__(self, meter_provider: MeterProvider | None, include_message: bool) -> None:
        provider = meter_provider if meter_provider is not None else metrics.get_meter_provider()
        self.failures = provider.get_meter("recoverable").create_counter(
            COUNTER, unit="{failure}", description="Failures reported by recoverable, by code"
        )
        self.include_message = include_message

    def __call__(self, event: FailureEvent) -> None:
        counted: dict[str, AttributeValue] = {
            "error.type": event.code,
            "recoverable.event": event.kind,
        }
        if event.name is not None:
            counted["recoverable.name"] = event.name
        self.failures.add(1, counted)
        span = trace.get_current_span()
        if event.kind == "retry":
            seen: dict[str, AttributeValue] = {"error.type": event.code}
            if event.attempt is not None:
                seen["recoverable.attempt"] = event.attempt
            if event.wait_s is not None:
                seen["recoverable.wait_s"] = event.wait_s
            span.add_event("recoverable.retry", seen)
            return
        record_error(event.detail, span, include_message=self.include_message)


def instrument(
    *, meter_provider: MeterProvider | None = None, include_message: bool = False
) -> None:
    """Report every failure recoverable sees to OpenTelemetry (spans and the counter), from
    now on. Calling it again replaces the hook it installed before."""
    others = [hook for hook in get_failure_hooks() if not isinstance(hook, _OtelHook)]
    set_failure_hooks([*others, _OtelHook(meter_provider, include_message)])


def uninstrument() -> None:
    """Remove the hook `instrument` installed (the others stay)."""
    set_failure_hooks([hook for hook in get_failure_hooks() if not isinstance(hook, _OtelHook)])

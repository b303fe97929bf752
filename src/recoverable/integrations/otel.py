"""OpenTelemetry: a failure on its span, retries as span events, a counter by code.

    from recoverable.integrations import otel

    otel.instrument()                    # once, at start-up: rc.retry, the agents runner and
                                         # the Celery adapter report to the current span
    otel.record_error(detail)            # or by hand, on the current span (or `span=`)

`record_error` follows the semantic conventions for errors: `error.type` is the code and the
span's status is ERROR (its description the code too). Our fields go under `recoverable.*`.
Developer text (`message`) is left out unless `include_message=True`: it may quote upstream
text, which is scrubbed but not meant for every trace backend. Nothing else a span or the
counter carries is free text: codes, a known category, numbers, the (validated) fix and the
scrubbed source and name; each text is scrubbed once more as it is written, whoever built the
detail. No exception is recorded on a span (`record_exception` would write its traceback and
its own words): give `record_error` an exception and it is classified first.

`instrument()` adds one hook to `rc.instrumentation.set_failure_hooks` (keeping the others,
the logging one included): each retried attempt becomes a `recoverable.retry` span event; a
give-up, a stop on a failure not worth retrying and a failed agent run are recorded with
`record_error`; and
every report adds 1 to the counter `recoverable.failures` with `error.type` and
`recoverable.event` (retry, give_up, stop, run_failed) as attributes.
"""

from __future__ import annotations

from opentelemetry import metrics, trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from .._classify import classify
from .._core.detail import ErrorDetail
from .._core.failures import FailureEvent, get_failure_hooks, set_failure_hooks
from .._core.untrusted import MAX_MESSAGE_CHARS, clean_text

__all__ = ["attributes", "instrument", "record_error", "uninstrument"]

COUNTER = "recoverable.failures"
_MAX_FIELD = 500  # a code, category, source, fix or name on a span; the message's cap below
_MAX_MESSAGE = MAX_MESSAGE_CHARS


def attributes(detail: ErrorDetail, *, include_message: bool = False) -> dict[str, AttributeValue]:
    """The span attributes of a failure: `error.type` and our fields (None fields left out;
    the developer text only when asked). Each text scrubbed and clipped as it is written."""
    detail = _detail_of(detail)
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
    return {
        key: _written(value, _MAX_MESSAGE if key == "recoverable.message" else _MAX_FIELD)
        for key, value in found.items()
    }


def _written(value: AttributeValue, limit: int) -> AttributeValue:
    # The fields were cleaned when the detail was made; a detail built by hand elsewhere
    # (another copy, a test double) is held to the same rule here.
    return clean_text(value, limit) if isinstance(value, str) else value


def _detail_of(given: object) -> ErrorDetail:
    """Our detail as given; an exception or another copy's detail, classified first."""
    return given if type(given) is ErrorDetail else classify(given)


def record_error(
    detail: ErrorDetail, span: Span | None = None, *, include_message: bool = False
) -> None:
    """Mark `span` (default: the current one) as failed with `detail`."""
    detail = _detail_of(detail)
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
            counted["recoverable.name"] = clean_text(event.name, _MAX_FIELD)
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

"""OpenTelemetry that stays in memory: a tracer and a meter provider whose spans and metrics
the OpenTelemetry tests read back (the integration's own tests, and the public-output scans)."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from recoverable.integrations import otel


class Telemetry:
    """A tracer and a meter provider whose spans and metrics stay in memory."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.tracer = provider.get_tracer("tests")
        self.reader = InMemoryMetricReader()
        self.meters = MeterProvider(metric_readers=[self.reader])

    def finished(self) -> list[ReadableSpan]:
        """The spans ended so far."""
        return list(self.spans.get_finished_spans())

    def counts(self) -> dict[tuple[str, str], int]:
        """The `recoverable.failures` counter by (error.type, recoverable.event)."""
        found: dict[tuple[str, str], int] = {}
        for metric in self._metrics():
            if metric.name != otel.COUNTER:
                continue
            for point in metric.data.data_points:
                attrs: Any = point.attributes
                key = (attrs["error.type"], attrs["recoverable.event"])
                found[key] = found.get(key, 0) + int(point.value)
        return found

    def written(self) -> str:
        """Every span's name, attributes, status and events, and every metric's attributes."""
        parts: list[str] = []
        for span in self.spans.get_finished_spans():
            parts += [span.name, repr(dict(span.attributes or {})), repr(span.status)]
            parts += [repr((e.name, dict(e.attributes or {}))) for e in span.events]
        for metric in self._metrics():
            parts += [repr(dict(p.attributes or {})) for p in metric.data.data_points]
        return "\n".join(parts)

    def _metrics(self) -> list[Any]:
        data = self.reader.get_metrics_data()
        return [
            metric
            for resource in (data.resource_metrics if data else ())
            for scope in resource.scope_metrics
            for metric in scope.metrics
        ]

"""Adapters for the engines users move to when one machine is not enough: Temporal, Celery,
DBOS, and OpenTelemetry for seeing every failure.

One module per engine (`temporal`, `celery`, `dbos`, `otel`), each an optional extra imported
only by its own module, so `import recoverable` never loads an engine. What they share lives
in the core: which engine retries the step running now (`_engine_scope`, so there is exactly
one retry layer) and where failures are reported (`_instrumentation`).
"""

__all__: list[str] = []

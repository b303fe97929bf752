"""Adapters for the engines users move to when one machine is not enough: Temporal, Celery,
DBOS, and OpenTelemetry for seeing every failure.

Empty for now: the engines issue adds one module per engine here (`temporal.py`,
`celery.py`, `dbos.py`, `otel.py`), each an optional extra imported only by its own module,
so `import recoverable` never loads an engine.
"""

__all__: list[str] = []

"""Adapters for the engines users move to when one machine is not enough: Temporal, Celery,
DBOS, and OpenTelemetry for seeing every failure.

One module per engine (`temporal`, `celery`, `dbos`, `otel`), each an optional extra imported
only by its own module, so `import recoverable` never loads an engine. What they share lives
in the core: which engine retries the step running now (`_retry.engine_scope`, so there is
exactly one retry layer) and where failures are reported (`_core.failures`).
"""

from .._core.exports import Face

TYPE_CHECKING = False

__all__: list[str] = []  # one module per engine, each imported by name

# `integrations.temporal` after `from recoverable import integrations`: the module, on use
_FACE = Face(
    __name__,
    {
        "celery": "recoverable.integrations.celery",
        "dbos": "recoverable.integrations.dbos",
        "mcp": "recoverable.integrations.mcp",
        "otel": "recoverable.integrations.otel",
        "temporal": "recoverable.integrations.temporal",
    },
)

if TYPE_CHECKING:
    from . import celery as celery
    from . import dbos as dbos
    from . import mcp as mcp
    from . import otel as otel
    from . import temporal as temporal


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()

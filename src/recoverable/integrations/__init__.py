"""Adapters for the engines users move to when one machine is not enough (Temporal, Celery,
DBOS, OpenTelemetry) and for the places agents run (MCP, LangGraph, pydantic-ai, the OpenAI
Agents SDK).

One module per engine (`temporal`, `celery`, `dbos`, `otel`), each an optional extra imported
only by its own module, so `import recoverable` never loads an engine. What they share lives
in the core: which engine retries the step running now (`_retry.engine_scope`, so there is
exactly one retry layer) and where failures are reported (`_core.failures`).

The agent frameworks have one module each too (`langgraph`, `pydantic_ai`, `openai_agents`):
their retries, fallbacks and tool failures read the classification, and what a model reads of
a failed tool is `_model_text`'s (our sentence and the next step).
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
        "langgraph": "recoverable.integrations.langgraph",
        "mcp": "recoverable.integrations.mcp",
        "openai_agents": "recoverable.integrations.openai_agents",
        "pydantic_ai": "recoverable.integrations.pydantic_ai",
        "otel": "recoverable.integrations.otel",
        "temporal": "recoverable.integrations.temporal",
    },
)

if TYPE_CHECKING:
    from . import celery as celery
    from . import dbos as dbos
    from . import langgraph as langgraph
    from . import mcp as mcp
    from . import openai_agents as openai_agents
    from . import otel as otel
    from . import pydantic_ai as pydantic_ai
    from . import temporal as temporal


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()

"""Where failures are reported: one list of hooks for logs, traces and metrics.

    from recoverable.instrumentation import get_failure_hooks, set_failure_hooks

    set_failure_hooks([*get_failure_hooks(), lambda e: log.warning(e.kind, code=e.code)])

Each retry, give-up, stop and failed run is a `FailureEvent` passed to every hook in order; by
default the one hook logs retries and give-ups (`integrations.otel.instrument()` adds spans).
"""

from ._core.exports import Face

TYPE_CHECKING = False

__all__ = ["FailureEvent", "get_failure_hooks", "set_failure_hooks"]

_FACE = Face(
    __name__,
    {
        "FailureEvent": "recoverable._core.failures",
        "get_failure_hooks": "recoverable._core.failures",
        "set_failure_hooks": "recoverable._core.failures",
    },
)

if TYPE_CHECKING:
    from ._core.failures import FailureEvent, get_failure_hooks, set_failure_hooks


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()

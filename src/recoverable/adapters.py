"""recoverable's classification inside another retry layer: tenacity and stamina.

    from recoverable.adapters import retry_if_retryable, stamina_on, wait_retry_after

    tenacity.retry(retry=retry_if_retryable, wait=wait_retry_after(wait_exponential()))
    stamina.retry(on=stamina_on, attempts=4)

Each classifies the failure and reads its `retryable` and `retry_after_ms`, so the other library
retries what recoverable would, after the wait the server asked for. Neither library is imported.
"""

from ._core.exports import Face

TYPE_CHECKING = False

__all__ = ["retry_if_retryable", "stamina_on", "wait_retry_after"]

_FACE = Face(
    __name__,
    {
        "retry_if_retryable": "recoverable._retry",
        "stamina_on": "recoverable._retry",
        "wait_retry_after": "recoverable._retry",
    },
)

if TYPE_CHECKING:
    from ._retry import retry_if_retryable, stamina_on, wait_retry_after


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()

"""Retry and fallback that obey a classification: the loop, its policy, the adapters.

This face is what the other packages and the public faces take these names from, so the
modules behind it may move without them changing.
"""

from .._core.exports import Face

TYPE_CHECKING = False

__all__ = [
    "FallbackResult",
    "RetryPolicy",
    "Retrying",
    "afallback",
    "fallback",
    "request_headers",
    "request_key",
    "retry",
    "retry_if_retryable",
    "set_testing",
    "stamina_on",
    "wait_retry_after",
    "without_sdk_retries",
]

# public name -> the module that defines it (loaded on first use)
_FACE = Face(
    __name__,
    {
        "FallbackResult": "recoverable._retry.fallbacks",
        "Retrying": "recoverable._retry.loop",
        "afallback": "recoverable._retry.fallbacks",
        "fallback": "recoverable._retry.fallbacks",
        "retry": "recoverable._retry.loop",
        "request_headers": "recoverable._retry.keys",
        "request_key": "recoverable._retry.keys",
        "set_testing": "recoverable._retry.waits",
        "RetryPolicy": "recoverable._retry.policy",
        "without_sdk_retries": "recoverable._retry.sdk_retries",
        "retry_if_retryable": "recoverable._retry.adapters",
        "stamina_on": "recoverable._retry.adapters",
        "wait_retry_after": "recoverable._retry.adapters",
    },
    moved={"Answer": "recoverable.FallbackResult"},
)

if TYPE_CHECKING:
    from .adapters import retry_if_retryable, stamina_on, wait_retry_after
    from .fallbacks import FallbackResult, afallback, fallback
    from .keys import request_headers, request_key
    from .loop import Retrying, retry
    from .policy import RetryPolicy
    from .sdk_retries import without_sdk_retries
    from .waits import set_testing

if TYPE_CHECKING:  # the name that moved, typed for the release that still has it
    from .fallbacks import Answer as Answer


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()

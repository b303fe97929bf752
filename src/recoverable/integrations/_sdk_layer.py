"""The SDK under a framework's retry: how often it retried a failure itself, over the chain.

A framework wraps the provider SDK's exception in its own (pydantic-ai's `ModelHTTPError`
keeps openai's as `__cause__`); the SDK's count of its own attempts is on the original's
request (`_retry.sdk_retries`). A framework hook that retries reads it here, so that a failure
the SDK already retried is not retried again (one retry layer, principle 12).
"""

from __future__ import annotations

from .._retry.sdk_retries import sdk_retries, warn_once

__all__ = ["sdk_retried"]

_MAX_LINKS = 8  # as deep as a detail's cause chain


def sdk_retried(exc: BaseException) -> int:
    """How often the SDK under `exc` (it, or an error it was raised from) retried the request
    itself before raising (0: never, or nothing says so); said once per SDK (`warn_once`)."""
    link: BaseException | None = exc
    for _ in range(_MAX_LINKS):
        if link is None:
            break
        count = sdk_retries(link)
        if count:
            warn_once(link, count)
            return count
        link = link.__cause__
    return 0

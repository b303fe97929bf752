"""An SDK's own retries, seen from its exception: exactly one retry layer by default
(principle 12).

The generated SDKs (openai, anthropic, groq, together, fireworks, cerebras: Stainless's) stamp
every attempt of a request with `x-stainless-retry-count`, and their exception keeps the last
attempt's request: a count above 0 means the SDK already retried this failure (at its default
`max_retries=2`, a 429 costs 3 requests before any layer of ours sees it). A retry layer of
ours that sees it then retries no further (the SDK's was the retry layer) and says once how to
make ours the only one: build the client with its retries off (`without_sdk_retries`).
"""

from __future__ import annotations

import threading
from typing import Any, TypeVar

from .._classify.http import header_value
from .._classify.pipeline import package_of

__all__ = ["RETRY_COUNT_HEADER", "sdk_retries", "warn_once", "without_sdk_retries"]

RETRY_COUNT_HEADER = "x-stainless-retry-count"
"""The request header the generated SDKs count their own attempts in (0 on the first)."""
_MAX_COUNTED = 1000  # a forged header is no count

C = TypeVar("C")
_warned: set[str] = set()
_warning = threading.Lock()


def sdk_retries(exc: BaseException) -> int:
    """How many times the SDK behind `exc` retried the request itself before raising (0:
    none, or nothing says so). Never raises."""
    try:  # a forged or broken exception: its request, or the request's headers, may raise
        request = getattr(exc, "request", None)
        if request is None:
            return 0
        value = header_value(getattr(request, "headers", None), RETRY_COUNT_HEADER)
        count = int(value) if isinstance(value, str) and value.isdigit() else 0
    except Exception:
        return 0
    return count if count <= _MAX_COUNTED else 0


def warn_once(exc: BaseException, count: int) -> None:
    """Say once per SDK that its client retries on its own, and what turns that off."""
    module = getattr(type(exc), "__module__", None)
    package = package_of(module) if isinstance(module, str) else "an SDK's"
    with _warning:
        if package in _warned:
            return
        _warned.add(package)
    import logging  # once per SDK: a program whose SDKs never retry never loads it for this

    logging.getLogger("recoverable").warning(
        "the %s client retried this request %d time(s) itself before raising: recoverable "
        "retries no further (one retry layer). Build the client with max_retries=0, or pass "
        "it through recoverable.without_sdk_retries(client), to let recoverable's retry "
        "(Retry-After, quotas, cooldowns) be the only one",
        package,
        count,
    )


def without_sdk_retries(client: C) -> C:
    """The same client with its SDK's own retries off (`with_options(max_retries=0)`: openai,
    anthropic and the other generated SDKs), so that recoverable's retry is the only layer.
    A client with no such option is returned as it is."""
    with_options: Any = getattr(client, "with_options", None)
    if not callable(with_options):
        return client
    try:
        copy: C = with_options(max_retries=0)
    except TypeError:  # a client whose options have no max_retries
        return client
    return copy

"""The last resort: anchored, case-insensitive phrases of an error's text.

Only phrases that open the text (or a whole `Error code: NNN - {...}` line, as openai 2.x
prints it) are read, so a status or phrase quoted inside other text ("foo.go:429", a user's
message mentioning a rate limit) never matches.
"""

from __future__ import annotations

import functools
import re

from .._detail import ErrorDetail
from .http import from_http, message_code

__all__ = ["classify_text"]

_MAX_TEXT = 64_000

# openai 2.x: "Error code: 429 - {'error': {...}}" (the body is a Python repr).
_SDK_STATUS_LINE = r"^error code: (\d{3})(?: - (.*))?$"

_PHRASES = (
    (r"^(error:\s*)?not logged in\b", "cli_not_authenticated"),
    (r"^(error:\s*)?invalid api key\b", "provider_auth_failed"),
    (r"^overloaded\.?$", "provider_overloaded"),
    (r"^(\[errno \d+\] )?connection refused\.?$", "network_error"),
    (r"^(\[errno \d+\] )?connection reset by peer\.?$", "network_error"),
)


@functools.cache
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    # Compiled on first use: `import recoverable` must stay fast.
    return tuple((re.compile(pattern, re.IGNORECASE), code) for pattern, code in _PHRASES)


def _body_of(text: str | None) -> object:
    if not text:
        return None
    text = text.strip()
    import ast  # rare path; keeps `import recoverable` fast

    try:
        return ast.literal_eval(text) if text[:1] == "{" else text
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def classify_text(text: str) -> ErrorDetail | None:
    """A detail when the text opens with a phrase we know; else None."""
    text = text.strip()[:_MAX_TEXT]
    if not text:
        return None
    match = re.match(_SDK_STATUS_LINE, text, re.IGNORECASE | re.DOTALL)
    if match:
        return from_http(int(match.group(1)), body=_body_of(match.group(2)))
    named = message_code(text)
    if named is not None:
        return ErrorDetail.create(named, text)
    for pattern, code in _patterns():
        if pattern.match(text):
            return ErrorDetail.create(code, text)
    return None

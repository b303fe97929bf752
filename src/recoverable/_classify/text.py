"""The last resort: anchored, case-insensitive phrases of an error's text.

Only phrases that open the text (or a whole `Error code: NNN - {...}` line, as openai 2.x
prints it) are read, so a status or phrase quoted inside other text ("foo.go:429", a user's
message mentioning a rate limit) never matches.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .._core.detail import ErrorDetail, unvalidated
from .._core.untrusted import clean_text
from .http import MESSAGE_PHRASES, from_http
from .phrases import PhraseTable

if TYPE_CHECKING:
    from .._core.code_names import BuiltinCode

__all__ = ["classify_text"]

_MAX_TEXT = 64_000

# openai 2.x: "Error code: 429 - {'error': {...}}" (the body is a Python repr); any case, the
# body over lines. Compiled on first use, and kept, by `re`'s own cache.
_SDK_STATUS_LINE = r"(?is)^error code: (\d{3})(?: - (.*))?$"

# Phrases of CLIs and sockets; the providers' own phrases come from `http`.
_PHRASES: tuple[tuple[str, BuiltinCode], ...] = (
    (r"^(?:error:\s*)?not logged in\b", "cli_not_authenticated"),
    (r"^(?:error:\s*)?invalid api key\b", "provider_auth_failed"),
    (r"^overloaded\.?$", "provider_overloaded"),
    (r"^(?:\[errno \d+\] )?connection refused\.?$", "network_error"),
    (r"^(?:\[errno \d+\] )?connection reset by peer\.?$", "network_error"),
)


# The providers' phrases first: a text is classified as its upstream would be.
_TEXT_PHRASES = PhraseTable((*MESSAGE_PHRASES, *_PHRASES))


def status_line(text: str) -> tuple[int, object] | None:
    """The status and body of an SDK's `Error code: NNN - {body}` line (openai 2.x prints the
    body as a Python repr, litellm keeps that text); None for any other text."""
    if text[:10].lower() != "error code":
        return None
    match = re.match(_SDK_STATUS_LINE, text)
    return None if match is None else (int(match.group(1)), _body_of(match.group(2)))


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
    text = text.strip()
    if not text:
        return None
    if len(text) > _MAX_TEXT:
        text = text[:_MAX_TEXT]
    found = status_line(text)
    if found is not None:
        return from_http(found[0], body=found[1])
    code = _TEXT_PHRASES.code(text)
    return None if code is None else unvalidated(code, clean_text(text))

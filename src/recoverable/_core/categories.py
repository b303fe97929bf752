"""The sentences a person reads for a code this process does not know: its category's.

A code registered only in the process that sent it (a peer's payload, a tool's envelope) has
no row here, and its sender's own words are not ours to show (principle 6). What a person
reads for it is its category's generic sentence, when the category is one of ours, else the
generic sentence of all.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["CATEGORY_SENTENCES", "GENERIC_USER_MESSAGE", "category_sentence"]

GENERIC_USER_MESSAGE = "Something went wrong. Please try again later."
"""The sentence of `unknown` and `internal_error`, and of a category this process does not know."""

CATEGORY_SENTENCES: Mapping[str, str] = MappingProxyType(
    {
        "provider": "The AI service could not complete the request.",
        "cli": "The AI assistant tool could not complete the request.",
        "run": "The request could not be completed.",
        "tool": "A tool the assistant used did not work.",
        "caller": "The request could not be completed as given.",
        "auth": "You are not allowed to do this right now.",
        "billing": "This needs an active plan or more credit.",
        "rate": "Too many requests right now. Please wait a moment and try again.",
        "service": "The service could not complete the request. Please try again later.",
        "network": "A network problem interrupted the request. Please try again.",
        "state": "This conversation cannot do that right now.",
    }
)
"""Each category's sentence, for a code of that category this process does not know."""


def category_sentence(category: object) -> str:
    """The generic sentence of a category (of a code this process does not know); the generic
    sentence of all for a category it does not know either."""
    if isinstance(category, str):
        return CATEGORY_SENTENCES.get(category, GENERIC_USER_MESSAGE)
    return GENERIC_USER_MESSAGE

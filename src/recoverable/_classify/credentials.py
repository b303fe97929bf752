"""A client built or called without its credentials: the first error most users meet.

No request was sent, so nothing on the wire says 401: each SDK raises before it calls, with a
class of its own (openai's base `OpenAIError`, groq's `GroqError`, ...) or a builtin
(anthropic's `TypeError`, google-genai's `ValueError`, raised from the SDK's own frames), and
its own words. Matched by (package, class name) and those words, read as
`provider_auth_failed` with `details["credentials"] = "missing"` and a `fix_required` naming
the variable to set, chosen from the table below (never taken from the text).
"""

from __future__ import annotations

from .._core.detail import ErrorDetail
from .pipeline import Handler, cause_chain, error_message, package_of, raised_by

__all__ = ["BUILTIN_HANDLERS", "HANDLERS", "missing_key", "missing_key_in_chain"]

# source -> the environment variable its client reads the key from (the SDKs' own names).
_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "azure-openai": "AZURE_OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "google": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY",
    "together": "TOGETHER_API_KEY",
    "fireworks": "FIREWORKS_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "cohere": "CO_API_KEY",
}
# The SDKs' own opening words for a missing key (lower case), by package.
_WORDS = {
    "openai": ("missing credentials", "the api_key client option must be set"),
    "groq": ("the api_key client option must be set",),
    "together": ("the api_key client option must be set",),
    "fireworks": ("the api_key client option must be set",),
    "cerebras": ("the api_key client option must be set",),
    "cohere": ("the client must be instantiated be either passing in token",),
    "anthropic": ("could not resolve authentication method",),
    "google.genai": ("no api key was provided", "missing key inputs argument"),
}
_SOURCES = {"google.genai": "google", "cerebras": "cerebras"}


def missing_key(package: str, exc: BaseException) -> ErrorDetail | None:
    """The detail when `exc`'s text opens with `package`'s words for a missing key."""
    message = error_message(exc)
    said = message.lower().lstrip("\"'")
    if not any(words in said for words in _WORDS[package]):
        return None
    source = _SOURCES.get(package, package)
    variable = _VARIABLES[source]
    if source == "openai" and "AZURE_OPENAI_API_KEY" in message:
        source, variable = "azure-openai", _VARIABLES["azure-openai"]
    return ErrorDetail.create(
        "provider_auth_failed",
        message,
        source=source,
        fix_required=f"Set {variable} in the environment (or pass the key to the client)",
        details={"credentials": "missing", "variable": variable},
    )


def _by_class(package: str) -> Handler:
    def handler(exc: BaseException) -> ErrorDetail | None:
        return missing_key(package, exc)

    return handler


# The SDKs whose missing key is a builtin (anthropic's TypeError, google-genai's ValueError).
_BUILTIN_RAISERS = ("anthropic", "google.genai")


def _builtin(exc: BaseException) -> ErrorDetail | None:
    """anthropic's TypeError and google-genai's ValueError, raised from their own frames. The
    words are read first (every TypeError and ValueError classified comes here; few say
    them), the traceback only then."""
    said = error_message(exc).lower().lstrip("\"'")
    if not any(words in said for package in _BUILTIN_RAISERS for words in _WORDS[package]):
        return None
    package = raised_by(exc, _BUILTIN_RAISERS)
    return None if package is None else missing_key(package, exc)


HANDLERS: dict[tuple[str, str], Handler] = {
    ("openai", "OpenAIError"): _by_class("openai"),
    ("groq", "GroqError"): _by_class("groq"),
    ("together", "TogetherError"): _by_class("together"),
    ("fireworks", "FireworksError"): _by_class("fireworks"),
    ("cerebras", "CerebrasError"): _by_class("cerebras"),
}
"""The SDKs' own base classes, raised plain when the client has no key."""

BUILTIN_HANDLERS: dict[tuple[str, str], Handler] = {
    ("builtins", "TypeError"): _builtin,
    ("builtins", "ValueError"): _builtin,
}
"""Builtins an SDK raises for a missing key: recognised only from that SDK's frames."""


def missing_key_in_chain(exc: BaseException | None) -> ErrorDetail | None:
    """A missing key anywhere in a wrapper's chain (litellm wraps openai's `OpenAIError` in its
    own, with a status of 500 it made up: the SDK's error below it is the evidence)."""
    for link in cause_chain(exc) if exc is not None else ():
        handler = HANDLERS.get((package_of(type(link).__module__), type(link).__name__))
        found = handler(link) if handler is not None else None
        if found is not None:
            return found
    return None

"""Error bodies of the services reached through the openai SDK with a `base_url`.

OpenRouter, DeepSeek, vLLM and LM Studio answer in OpenAI's envelope, or nearly: what they
add is read here, so that `http_answers` keeps one cheap path for OpenAI's own bodies.

- OpenRouter's `error.metadata` (its `code` is the status, a number): a moderation refusal
  names its `reasons` and `flagged_input` (content filtered, whatever the status); an upstream
  provider's failure is relayed as `raw` (the upstream's body as JSON text, a sentence, or an
  object), read as the upstream's own body.
- Their sentences (`PHRASES`, anchored at the start of the message like the others, read
  after the main table misses and behind a cheap gate on the opening words): DeepSeek's
  short titles, OpenRouter's context window and model id, vLLM's and LM Studio's context
  overflows. vLLM's flat `{"object": "error", ...}` and LM Studio's `{"error": "<sentence>"}`
  need nothing else: the envelope reader already takes both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .answers import ProviderBody

from ..phrases import PhraseTable

__all__ = ["PHRASES", "compatible_phrase_code", "read_metadata"]

PHRASES = (
    # OpenRouter
    (r"^this endpoint's maximum context length is \d+", "provider_context_too_long"),
    (r"^\S{1,200} is not a valid model id\b", "provider_model_not_found"),
    (r"^no endpoints found for\b", "provider_model_not_found"),
    (r"^insufficient credits\b", "provider_quota_exceeded"),
    # DeepSeek
    (r"^insufficient balance\b", "provider_quota_exceeded"),
    (r"^model not exist\b", "provider_model_not_found"),
    (r"^content exists risk\b", "provider_content_filtered"),
    # vLLM (its other wording is OpenAI's "This model's maximum context length is")
    (r"^the decoder prompt \(length \d+\) is longer than the maximum model length",
     "provider_context_too_long"),
    # LM Studio
    (r"^the number of tokens to keep from the initial prompt is greater than the context length",
     "provider_context_too_long"),
    (r"^trying to keep the first \d+ tokens when context (?:the )?overflows",
     "provider_context_too_long"),
    (r"^context size has been exceeded", "provider_context_too_long"),
    (r"^no models loaded\b", "provider_model_not_found"),
)  # fmt: skip

_TABLE = PhraseTable(PHRASES)
# A message can only match a phrase above when it opens with one of these words, or holds
# OpenRouter's model-id sentence: a cheap gate keeps every other message off the table.
_OPENINGS = ("this endpoint", "no ", "insufficient", "model not", "content ", "context size",
             "the ", "trying ")  # fmt: skip


def compatible_phrase_code(message: str) -> str | None:
    """The code one of these services' sentences names in `message`'s opening words."""
    if message[:24].lstrip().lower().startswith(_OPENINGS) or _names_a_model_id(message):
        return _TABLE.code(message)
    return None


def _names_a_model_id(message: str) -> bool:
    """OpenRouter's "<model> is not a valid model ID", as written or upper-cased (no copy)."""
    return message.find("valid model", 0, 300) >= 0 or message.find("VALID MODEL", 0, 300) >= 0


# A moderation refusal's code, as we name it in `details["error_code"]` (OpenRouter sends
# none): the name OpenAI and Azure give a filtered answer.
MODERATION_CODE = "content_filter"


def read_metadata(
    body_class: type[ProviderBody], error: Mapping[str, Any], metadata: object
) -> ProviderBody | None:
    """What OpenRouter's `error.metadata` says, when it says more than the envelope."""
    if type(metadata) is not dict:
        return None
    message = error.get("message")
    message = message if type(message) is str else None
    if "flagged_input" in metadata or type(metadata.get("reasons")) is list:
        return body_class(message, MODERATION_CODE, has_error=True)
    raw = metadata.get("raw")
    if raw is None:
        return None
    return _upstream(body_class, raw, message)


def _upstream(
    body_class: type[ProviderBody], raw: object, message: str | None
) -> ProviderBody | None:
    """The upstream's own body, when it names the failure; None leaves OpenRouter's status."""
    from .answers import message_code, parse_body

    data = parse_body(raw) if isinstance(raw, str) else raw
    if isinstance(data, str):  # a sentence: only a known phrase in it says more
        return body_class(data, has_error=True) if message_code(data) else None
    if not isinstance(data, Mapping):
        return None
    upstream = body_class.read(_without_metadata(data))
    if not (upstream.code or upstream.type or upstream.google_status or upstream.reason
            or message_code(upstream.message)):  # fmt: skip
        return None
    return upstream._replace(message=upstream.message or message, has_error=True)


def _without_metadata(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` without a `metadata` of its own: an upstream body is read one level deep only."""
    out = {key: value for key, value in data.items() if key != "metadata"}
    error = out.get("error")
    if isinstance(error, Mapping) and "metadata" in error:
        out["error"] = {key: value for key, value in error.items() if key != "metadata"}
    return out

"""What the services reached through the openai SDK with a `base_url` add to OpenAI's body.

OpenRouter, DeepSeek, vLLM and LM Studio answer in OpenAI's envelope, or nearly: what they
add is read here, so that the HTTP answers keep one cheap path for OpenAI's own bodies.
OpenRouter's `error.metadata` (its `code` is the status, a number): a moderation refusal
names its `reasons` and `flagged_input` (content filtered, whatever the status); an upstream
provider's failure is relayed as `raw` (the upstream's body as JSON text, a sentence, or an
object), read as the upstream's own body. Their sentences are `messages.COMPATIBLE_PHRASES`.
vLLM's flat `{"object": "error", ...}` and LM Studio's `{"error": "<sentence>"}` need nothing
else: the envelope reader already takes both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .messages import message_code
from .raw import parse_body

if TYPE_CHECKING:
    from .bodies import ProviderBody

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
    data = parse_body(raw) if isinstance(raw, str) else raw
    if isinstance(data, str):  # a sentence: only a known phrase in it says more
        return body_class(data, has_error=True) if message_code(data) else None
    if not isinstance(data, Mapping):
        return None
    upstream = body_class.read(_without_metadata(data))
    if not (
        upstream.code
        or upstream.type
        or upstream.google_status
        or upstream.reason
        or message_code(upstream.message)
    ):
        return None
    return upstream._replace(message=upstream.message or message, has_error=True)


def _without_metadata(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` without a `metadata` of its own: an upstream body is read one level deep only."""
    out = {key: value for key, value in data.items() if key != "metadata"}
    error = out.get("error")
    if isinstance(error, Mapping) and "metadata" in error:
        out["error"] = {key: value for key, value in error.items() if key != "metadata"}
    return out

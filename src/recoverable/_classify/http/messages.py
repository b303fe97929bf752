"""The failures only an upstream message names: phrases anchored at its opening words (OpenAI's,
Anthropic's, Gemini's, Azure's, Mistral's, Ollama's, Cohere's wording, then the services
reached through the openai SDK's `base_url`: OpenRouter, DeepSeek, vLLM, LM Studio)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..phrases import PhraseTable

if TYPE_CHECKING:
    from ..._core.code_names import BuiltinCode


# Phrases that only the message carries, anchored at its start so quoted user text does not
# match (OpenAI, Anthropic and Gemini wording).
MESSAGE_PHRASES: tuple[tuple[str, BuiltinCode], ...] = (
    (r"^prompt is too long\b", "provider_context_too_long"),
    (r"^this model's maximum context length is \d+", "provider_context_too_long"),
    (r"^input length and `?max_tokens`? exceed context limit", "provider_context_too_long"),
    (r"^the input token count \(\d+\) exceeds the maximum", "provider_context_too_long"),
    # Anthropic's models on Bedrock (anthropic's AnthropicBedrock client).
    (r"^input is too long for requested model", "provider_context_too_long"),
    (r"^your credit balance is too low", "provider_quota_exceeded"),
    (r"^you exceeded your current quota", "provider_quota_exceeded"),
    (r"^your request was rejected as a result of our safety system", "provider_content_filtered"),
    (r"^output blocked by content filtering policy", "provider_content_filtered"),
    # OpenAI's 503 wording, also its in-stream error's (whose type is the generic server_error).
    (r"^the server is overloaded or not ready yet", "provider_overloaded"),
    # Azure OpenAI's 429 and 404 wording.
    (
        r"^requests to the \w+ operation under azure openai api version \S+ have exceeded",
        "provider_rate_limited",
    ),
    (r"^the api deployment for this resource does not exist", "provider_model_not_found"),
    # Mistral's context window wording.
    (r"^prompt contains \d+ tokens\b.{0,80}\btoo large for model", "provider_context_too_long"),
    # Ollama's sentences (its errors carry nothing else but the status).
    (r"^server busy, please try again", "provider_overloaded"),
    (r"^model [\"'][^\"']{1,200}[\"'] not found, try pulling it first", "provider_model_not_found"),
    (r"^(?:the )?input length exceeds the context length", "provider_context_too_long"),
    # Cohere's context window wording.
    (r"^too many tokens: ", "provider_context_too_long"),
)


_PROVIDER_PHRASES = PhraseTable(MESSAGE_PHRASES)


def message_code(message: str | None) -> BuiltinCode | None:
    """The code an upstream message names in its opening words, if any (the services behind
    the openai SDK's `base_url` last: their table costs a gate, not a match, on others)."""
    if not message:
        return None
    return _PROVIDER_PHRASES.code(message) or compatible_phrase_code(message)


COMPATIBLE_PHRASES: tuple[tuple[str, BuiltinCode], ...] = (
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

_COMPATIBLE_TABLE = PhraseTable(COMPATIBLE_PHRASES)
# A message can only match a phrase above when it opens with one of these words, or holds
# OpenRouter's model-id sentence: a cheap gate keeps every other message off the table.
_OPENINGS = ("this endpoint", "no ", "insufficient", "model not", "content ", "context size",
             "the ", "trying ")  # fmt: skip


def compatible_phrase_code(message: str) -> BuiltinCode | None:
    """The code one of these services' sentences names in `message`'s opening words."""
    if message[:24].lstrip().lower().startswith(_OPENINGS) or _names_a_model_id(message):
        return _COMPATIBLE_TABLE.code(message)
    return None


def _names_a_model_id(message: str) -> bool:
    """OpenRouter's "<model> is not a valid model ID", as written or upper-cased (no copy)."""
    return message.find("valid model", 0, 300) >= 0 or message.find("VALID MODEL", 0, 300) >= 0

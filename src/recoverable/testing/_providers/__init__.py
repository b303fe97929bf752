"""The provider APIs the fake speaks: one module each, registered below.

A new provider is one module here that ends with a `Provider` (see `.._wire_api`), plus its
entry in PROVIDERS.
"""

from . import (
    anthropic,
    azure,
    bedrock,
    cohere,
    deepseek,
    gemini,
    groq,
    lmstudio,
    ollama,
    openai,
    openrouter,
    vllm,
)

__all__ = ["PROVIDERS"]

# Asked in this order; Anthropic before OpenAI: both serve GET /v1/models.
PROVIDERS = (
    anthropic.PROVIDER,
    openai.PROVIDER,
    gemini.PROVIDER,
    groq.PROVIDER,
    azure.PROVIDER,
    ollama.PROVIDER,
    cohere.PROVIDER,
    bedrock.PROVIDER,
    openrouter.PROVIDER,
    deepseek.PROVIDER,
    vllm.PROVIDER,
    lmstudio.PROVIDER,
)

"""A client with no API key, the first error most users meet: each real SDK raises before any
request (no server is needed, nothing is sent), and each reads as `provider_auth_failed` with
the variable to set, by the SDK's class and its own words."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import recoverable as rc

_KEYS = (
    "OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN",
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "GROQ_API_KEY", "TOGETHER_API_KEY", "FIREWORKS_API_KEY", "CEREBRAS_API_KEY", "CO_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
)  # fmt: skip
_NOWHERE = "http://127.0.0.1:9"  # never reached: every client fails before it sends


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in _KEYS:
        monkeypatch.delenv(key, raising=False)


def _openai() -> object:
    import openai

    return openai.OpenAI()


def _async_openai() -> object:
    import openai

    return openai.AsyncOpenAI()


def _azure() -> object:
    import openai

    return openai.AzureOpenAI(api_version="2024-10-21", azure_endpoint=_NOWHERE)


def _anthropic() -> object:
    import anthropic

    client = anthropic.Anthropic(base_url=_NOWHERE, max_retries=0)
    return client.messages.create(
        model="claude-x", max_tokens=1, messages=[{"role": "user", "content": "hi"}]
    )


def _genai() -> object:
    from google import genai

    return genai.Client()


def _groq() -> object:
    import groq

    return groq.Groq()


def _together() -> object:
    import together

    return together.Together()


def _fireworks() -> object:
    import fireworks

    return fireworks.Fireworks()


def _cerebras() -> object:
    from cerebras.cloud.sdk import Cerebras

    return Cerebras()


def _cohere() -> object:
    import cohere

    return cohere.ClientV2()


def _litellm() -> object:
    import litellm

    return litellm.completion(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}], api_base=_NOWHERE
    )


CASES: list[tuple[Callable[[], object], str, str]] = [
    (_openai, "openai", "OPENAI_API_KEY"),
    (_async_openai, "openai", "OPENAI_API_KEY"),
    (_azure, "azure-openai", "AZURE_OPENAI_API_KEY"),
    (_anthropic, "anthropic", "ANTHROPIC_API_KEY"),
    (_genai, "google", "GEMINI_API_KEY"),
    (_groq, "groq", "GROQ_API_KEY"),
    (_together, "together", "TOGETHER_API_KEY"),
    (_fireworks, "fireworks", "FIREWORKS_API_KEY"),
    (_cerebras, "cerebras", "CEREBRAS_API_KEY"),
    (_cohere, "cohere", "CO_API_KEY"),
    (_litellm, "openai", "OPENAI_API_KEY"),  # litellm's made-up 500 around openai's error
]


@pytest.mark.parametrize(("build", "source", "variable"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_client_without_its_key_is_a_credentials_failure_naming_the_variable(
    build: Callable[[], object], source: str, variable: str
) -> None:
    with pytest.raises(Exception) as raised:  # noqa: PT011 -- each SDK raises its own class
        build()
    detail = rc.classify(raised.value)
    assert (detail.code, detail.retryable, detail.source) == ("provider_auth_failed", False, source)
    assert (
        detail.fix_required == f"Set {variable} in the environment (or pass the key to the client)"
    )
    assert detail.fix_command is None
    assert detail.details["credentials"] == "missing"
    assert detail.details["variable"] == variable
    assert rc.retry_after_ms(None) is None


def test_the_same_words_outside_an_sdk_are_not_a_missing_key() -> None:
    # A builtin with anthropic's sentence, raised by our own code: no SDK frame, so unknown.
    for exc in (
        TypeError("Could not resolve authentication method. Expected one of api_key"),
        ValueError("No API key was provided. Please pass a valid API key."),
    ):
        try:
            raise exc
        except (TypeError, ValueError) as caught:
            assert rc.classify(caught).code == "unknown"


def test_an_sdk_base_error_with_other_words_is_not_read_as_a_missing_key() -> None:
    import openai

    assert rc.classify(openai.OpenAIError("something else went wrong")).code == "unknown"

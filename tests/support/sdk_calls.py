"""One call from each of the three core SDKs (openai, anthropic, google-genai) to a
FakeProvider, their own retries off: the classify, responses and fault-matrix tests share them.
The clients send the keys and models `sdk_error` sends, so an error online and offline read
the same."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
from google import genai
from google.genai import types as genai_types

from recoverable.testing import FakeProvider

MESSAGES: Any = [{"role": "user", "content": "hi"}]
OPENAI_MODEL = "gpt-4o"
ANTHROPIC_MODEL = "claude-opus-4-8"
GOOGLE_MODEL = "gemini-2.5-flash"


def openai_client(fake: FakeProvider, timeout: float | None = None) -> openai.OpenAI:
    """The openai client on `fake` (with the SDK's own timeout unless one is given)."""
    options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    return openai.OpenAI(api_key="sk-fake", base_url=fake.openai_url, max_retries=0, **options)


def anthropic_client(fake: FakeProvider, timeout: float | None = None) -> anthropic.Anthropic:
    """The anthropic client on `fake` (with the SDK's own timeout unless one is given)."""
    options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    return anthropic.Anthropic(api_key="sk-ant-fake", base_url=fake.url, max_retries=0, **options)


def google_client(fake: FakeProvider, timeout: float | None = None) -> genai.Client:
    """The google-genai client on `fake` (its timeout in whole milliseconds, as it takes it)."""
    milliseconds = None if timeout is None else int(timeout * 1000)
    options = genai_types.HttpOptions(base_url=fake.url, timeout=milliseconds)
    return genai.Client(api_key="fake", http_options=options)


def ask_openai(fake: FakeProvider, stream: bool = False, timeout: float | None = None) -> list[Any]:
    """One chat completion: `[the answer]`, or the stream's chunks, read to the end."""
    client = openai_client(fake, timeout)
    if stream:
        chunks = client.chat.completions.create(model=OPENAI_MODEL, messages=MESSAGES, stream=True)
        return list(chunks)
    return [client.chat.completions.create(model=OPENAI_MODEL, messages=MESSAGES)]


def ask_anthropic(
    fake: FakeProvider, stream: bool = False, timeout: float | None = None
) -> list[Any]:
    """One message: `[the answer]`, or the stream's events, read to the end."""
    client = anthropic_client(fake, timeout)
    kwargs: dict[str, Any] = {"model": ANTHROPIC_MODEL, "max_tokens": 64, "messages": MESSAGES}
    if stream:
        return list(client.messages.create(stream=True, **kwargs))
    return [client.messages.create(**kwargs)]


def ask_google(fake: FakeProvider, stream: bool = False, timeout: float | None = None) -> list[Any]:
    """One generate_content: `[the answer]`, or the stream's chunks, read to the end."""
    # The client is held in a name: a genai.Client closes its transport when it is collected.
    client = google_client(fake, timeout)
    if stream:
        return list(client.models.generate_content_stream(model=GOOGLE_MODEL, contents="hi"))
    return [client.models.generate_content(model=GOOGLE_MODEL, contents="hi")]

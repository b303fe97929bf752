"""Driving one FakeProvider fault through one surface, and what the surface reported.

The surfaces are those of the fault matrix (`recoverable.testing._fault_matrix.SURFACES`): the real
CLIs through `agents.run`, the real SDK clients (non-streaming and streaming) and the raw HTTP
answer read by `from_http` (or by `classify_response` when the answer is a 200). Each run
gets its own FakeProvider, so cells can run side by side.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import boto3
import cohere
import fireworks
import groq
import httpx
import ollama
import openai
import requests
import together
from botocore.config import Config as BotoConfig
from cerebras.cloud import sdk as cerebras_sdk
from google.api_core import exceptions as google_exceptions
from google.auth.credentials import AnonymousCredentials
from google.auth.transport.requests import AuthorizedSession
from huggingface_hub import InferenceClient
from mistralai.client import Mistral

import recoverable as rc
from recoverable import agents
from recoverable.testing import FakeProvider, Fault, cli_setup

from .cli import cli_bin_dir, find_cli
from .providers import MESSAGES, ask_anthropic, ask_google, ask_openai

SDK_TIMEOUT = 3.0  # seconds: a hang becomes the SDK's own timeout
# Our idle deadline: long enough for a CLI's start on a loaded machine (Gemini's took 20 s
# with four CLIs starting at once); the `hang` cells rest on it, so theirs is shorter.
CLI_IDLE_TIMEOUT = 120.0
HANG_IDLE_TIMEOUT = 20.0
CLI_TIMEOUT = 300.0


class Observation(NamedTuple):
    """What one surface reported for one fault: a code and retryable, or None for each when
    it reported success (or has no answer to read), and the evidence it gave."""

    code: str | None
    retryable: bool | None
    evidence: str


def _of(detail: rc.ErrorDetail | None, evidence: str) -> Observation:
    if detail is None:
        return Observation(None, None, evidence)
    return Observation(detail.code, detail.retryable, evidence)


def _raised(error: BaseException) -> Observation:
    detail = rc.classify(error)
    return _of(detail, f"{type(error).__module__}.{type(error).__qualname__}: {error}"[:300])


def _answered(items: list[Any]) -> Observation:
    """A call that raised nothing: the first failure an answer (or chunk) reports."""
    for item in items:
        detail = rc.classify_response(item)
        if detail is not None:
            return _of(detail, f"{type(item).__name__}: {detail.message}"[:300])
    return Observation(None, None, "answered normally")


# --- the SDKs ----------------------------------------------------------------------------------


def _azure(fake: FakeProvider, stream: bool) -> list[Any]:
    client = openai.AzureOpenAI(api_key="fake", api_version="2024-10-21", azure_endpoint=fake.url,
                                max_retries=0, timeout=SDK_TIMEOUT)  # fmt: skip
    if stream:
        return list(client.chat.completions.create(model="gpt-4o-prod", messages=MESSAGES,
                                                   stream=True))  # fmt: skip
    return [client.chat.completions.create(model="gpt-4o-prod", messages=MESSAGES)]


def _openai_compatible(client_class: Any, fake: FakeProvider, stream: bool) -> list[Any]:
    """groq, together, fireworks-ai, cerebras-cloud-sdk: each SDK's own client and classes."""
    # cerebras-cloud-sdk warms its connection with a request of its own unless told not to.
    extra = {"warm_tcp_connection": False} if client_class is cerebras_sdk.Cerebras else {}
    client = client_class(api_key="fake", base_url=fake.url, max_retries=0, timeout=SDK_TIMEOUT,
                          **extra)  # fmt: skip
    if stream:
        return list(client.chat.completions.create(model="fake-model", messages=MESSAGES,
                                                   stream=True))  # fmt: skip
    return [client.chat.completions.create(model="fake-model", messages=MESSAGES)]


_COMPATIBLE = {
    "groq": partial(_openai_compatible, groq.Groq),
    "together": partial(_openai_compatible, together.Together),
    "fireworks": partial(_openai_compatible, fireworks.Fireworks),
    "cerebras": partial(_openai_compatible, cerebras_sdk.Cerebras),
}


def _mistral(fake: FakeProvider, stream: bool) -> list[Any]:
    client = Mistral(api_key="fake", server_url=fake.url, timeout_ms=int(SDK_TIMEOUT * 1000))
    if stream:
        return list(client.chat.stream(model="mistral-large-latest", messages=MESSAGES))
    return [client.chat.complete(model="mistral-large-latest", messages=MESSAGES)]


def _ollama(fake: FakeProvider, stream: bool) -> list[Any]:
    client = ollama.Client(host=fake.url, timeout=SDK_TIMEOUT)
    if stream:
        return list(client.chat(model="llama3.2", messages=MESSAGES, stream=True))
    return [client.chat(model="llama3.2", messages=MESSAGES)]


def _cohere(fake: FakeProvider, stream: bool) -> list[Any]:
    client = cohere.ClientV2(api_key="fake", base_url=fake.url, timeout=SDK_TIMEOUT)
    options: Any = {"max_retries": 0}  # the SDK retries 429 and 5xx by default
    if stream:
        return list(client.chat_stream(model="command-a-03-2025", messages=MESSAGES,
                                       request_options=options))  # fmt: skip
    return [client.chat(model="command-a-03-2025", messages=MESSAGES, request_options=options)]


def _google_api_core(fake: FakeProvider, stream: bool) -> list[Any]:
    """A Google Cloud REST client's way: google-auth's session, then `from_http_response`."""
    del stream  # REST clients here ask for a whole answer
    session = AuthorizedSession(AnonymousCredentials())
    url = f"{fake.url}/v1beta/models/gemini-2.5-flash:generateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with session:
        response: requests.Response = session.post(url, json=body, timeout=SDK_TIMEOUT)
    if response.status_code >= 400:
        raise google_exceptions.from_http_response(response)
    return [response.json()]


def _huggingface(fake: FakeProvider, stream: bool) -> list[Any]:
    client = InferenceClient(base_url=fake.openai_url, api_key="hf_fake", timeout=SDK_TIMEOUT)
    answer = client.chat_completion(messages=MESSAGES, model="gpt-4o", stream=stream)
    return list(answer) if stream else [answer]


def _bedrock(fake: FakeProvider, stream: bool) -> list[Any]:
    config = BotoConfig(retries={"total_max_attempts": 1}, read_timeout=SDK_TIMEOUT,
                        connect_timeout=SDK_TIMEOUT)  # fmt: skip
    client = boto3.client("bedrock-runtime", endpoint_url=fake.url, region_name="us-east-1",
                          aws_access_key_id="AKIAIOSFODNN7EXAMPLE",
                          aws_secret_access_key="fake-secret", config=config)  # fmt: skip
    model = "anthropic.claude-3-5-haiku-20241022-v1:0"
    messages: Any = [{"role": "user", "content": [{"text": "hi"}]}]
    if stream:
        return list(client.converse_stream(modelId=model, messages=messages)["stream"])
    return [client.converse(modelId=model, messages=messages)]


_BASE_URL_PATHS = {"openrouter": "/api/v1", "deepseek": "", "vllm": "/vllm/v1",
                   "lm studio": "/lmstudio/v1"}  # fmt: skip


def _base_url(path: str, fake: FakeProvider, stream: bool) -> list[Any]:
    """OpenRouter, DeepSeek, vLLM, LM Studio: the openai SDK with a `base_url`."""
    client = openai.OpenAI(api_key="sk-fake", base_url=fake.url + path, max_retries=0,
                           timeout=SDK_TIMEOUT)  # fmt: skip
    if stream:
        return list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    return [client.chat.completions.create(model="m", messages=MESSAGES)]


SDK_CALLS: dict[str, tuple[Callable[[FakeProvider, bool], list[Any]], bool]] = {
    "openai": (partial(ask_openai, timeout=SDK_TIMEOUT), False),
    "openai stream": (partial(ask_openai, timeout=SDK_TIMEOUT), True),
    "azure openai": (_azure, False),
    "azure openai stream": (_azure, True),
    "anthropic": (partial(ask_anthropic, timeout=SDK_TIMEOUT), False),
    "anthropic stream": (partial(ask_anthropic, timeout=SDK_TIMEOUT), True),
    "google-genai": (partial(ask_google, timeout=SDK_TIMEOUT), False),
    "google-genai stream": (partial(ask_google, timeout=SDK_TIMEOUT), True),
    **{name: (call, False) for name, call in _COMPATIBLE.items()},
    **{f"{name} stream": (call, True) for name, call in _COMPATIBLE.items()},
    "mistralai": (_mistral, False),
    "mistralai stream": (_mistral, True),
    "ollama": (_ollama, False),
    "ollama stream": (_ollama, True),
    "cohere": (_cohere, False),
    "cohere stream": (_cohere, True),
    "google-api-core": (_google_api_core, False),
    "huggingface-hub": (_huggingface, False),
    "huggingface-hub stream": (_huggingface, True),
    "bedrock": (_bedrock, False),
    "bedrock stream": (_bedrock, True),
    **{name: (partial(_base_url, path), False) for name, path in _BASE_URL_PATHS.items()},
    **{
        f"{name} stream": (partial(_base_url, path), True) for name, path in _BASE_URL_PATHS.items()
    },
}


def observe_sdk(surface: str, fault: Fault) -> Observation:
    call, stream = SDK_CALLS[surface]
    with FakeProvider() as fake:
        fake.fail(fault, times=None)  # every request: the fault persists
        try:
            items = call(fake, stream)
        except Exception as error:
            return _raised(error)
    return _answered(items)


# --- the raw HTTP answer -------------------------------------------------------------------------

# The faults whose failure is inside a streamed answer: the raw request asks for a stream.
STREAMED_FAULTS = ("stream_overloaded", "cut_stream")


def _raw_request(api: str, fake: FakeProvider, stream: bool) -> tuple[str, dict[str, Any]]:
    if api == "http openai":
        body = {"model": "gpt-4o", "messages": MESSAGES, "stream": stream}
        return f"{fake.openai_url}/chat/completions", body
    if api == "http anthropic":
        body = {"model": "claude-opus-4-8", "max_tokens": 64, "messages": MESSAGES,
                "stream": stream}  # fmt: skip
        return f"{fake.url}/v1/messages", body
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    return f"{fake.url}/v1beta/models/gemini-2.5-flash:{method}", body


def _sse_data(text: str) -> list[Any]:
    events = []
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            try:
                events.append(json.loads(line[5:]))
            except ValueError:
                events.append(line[5:].strip())
    return events


def _read_raw(status: int, headers: httpx.Headers, text: str) -> Observation:
    """An HTTP answer as a program that reads it itself would: an error status by
    `from_http`; a 200 stream's error event by `from_http`, its other events (and a JSON
    answer) by `classify_response`; a stream that stops before its finish event by
    `from_http` (an incomplete answer)."""
    if status >= 300:
        return _of(rc.from_http(status, headers, text), f"HTTP {status}: {text[:200]}")
    if "text/event-stream" not in headers.get("content-type", ""):
        return _answered([json.loads(text)])
    events = _sse_data(text)
    for event in events:
        if isinstance(event, dict) and ("error" in event or event.get("type") == "error"):
            found = rc.from_http(status, headers, event)
            return _of(found, f"HTTP {status}, in-stream error event: {json.dumps(event)[:200]}")
    seen = _answered(events)
    if seen.code is not None:
        return seen
    finished = any(_finishes(event) for event in events) or "[DONE]" in text
    if not finished:
        found = rc.from_http(status, headers, text)
        return _of(found, f"HTTP {status}, the stream stopped before its finish event")
    return seen


def _finishes(event: Any) -> bool:
    if not isinstance(event, dict):
        return False
    if event.get("type") in ("message_stop", "response.completed"):
        return True
    candidates = event.get("candidates")
    return isinstance(candidates, list) and any(
        isinstance(c, dict) and c.get("finishReason") for c in candidates
    )


def observe_raw(surface: str, fault: Fault) -> Observation:
    if fault.name == "hang":
        return Observation(None, None, "no HTTP answer: the server never answers")
    with FakeProvider() as fake:
        fake.fail(fault, times=None)  # every request: the fault persists
        url, body = _raw_request(surface, fake, fault.name in STREAMED_FAULTS)
        headers = {"x-api-key": "fake", "x-goog-api-key": "fake", "authorization": "Bearer fake",
                   "anthropic-version": "2023-06-01"}  # fmt: skip
        chunks: list[bytes] = []
        try:
            with (
                httpx.Client(timeout=SDK_TIMEOUT, trust_env=False) as client,
                client.stream("POST", url, json=body, headers=headers) as answer,
            ):
                status, answer_headers = answer.status_code, answer.headers
                for chunk in answer.iter_bytes():
                    chunks.append(chunk)
        except httpx.TransportError as error:
            if not chunks:
                return Observation(None, None, f"no HTTP answer: {type(error).__name__}")
    return _read_raw(status, answer_headers, b"".join(chunks).decode("utf-8", "replace"))


# --- the real CLIs -----------------------------------------------------------------------------


async def observe_cli(cli: str, fault: Fault, root: Path) -> Observation:
    """`agents.run` with the real CLI against its own fake, the CLI's own retries off."""
    binary = find_cli(cli, cli_bin_dir())
    home, work = root / "home", root / "work"
    work.mkdir(parents=True)
    with FakeProvider() as fake:
        fake.fail(fault, times=None)  # every request: the fault persists
        setup = cli_setup(cli, fake, home, max_retries=0)
        started = time.monotonic()
        result = await agents.run(
            "Say hello.", cli, executable=binary, env=setup.environ(), inherit_env=False,
            extra_args=setup.args, cwd=str(work), timeout=CLI_TIMEOUT,
            idle_timeout=HANG_IDLE_TIMEOUT if fault.name == "hang" else CLI_IDLE_TIMEOUT,
        )  # fmt: skip
        took = time.monotonic() - started
    if result.error is None:
        return Observation(None, None, f"success in {took:.1f} s: {result.text[:100]!r}")
    error = result.error
    return Observation(error.code, error.retryable, f"{error.message[:240]} ({took:.1f} s)")


async def observe_clis(
    cells: list[tuple[str, str, Fault]], root: Path, parallel: int
) -> dict[tuple[str, str], Observation]:
    """Every (fault name, cli) cell, `parallel` CLIs at a time."""
    gate = asyncio.Semaphore(parallel)

    async def one(index: int, name: str, cli: str, fault: Fault) -> Observation:
        async with gate:
            return await observe_cli(cli, fault, root / f"{index}-{cli}-{name}")

    found = await asyncio.gather(*(one(i, *cell) for i, cell in enumerate(cells)))
    return {(name, cli): seen for (name, cli, _), seen in zip(cells, found, strict=True)}

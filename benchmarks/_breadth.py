"""The breadth corpus: the same failures from every SDK we support, each the SDK's real exception.

One `Sdk` entry per SDK (adding one is one entry in `SDKS`): how its real client makes one
generate call against FakeProvider on 127.0.0.1 (retries off, a short timeout), which
failures its API can say (a failure the fake's answer for that API carries no evidence of is
left out rather than graded), and what each peer calls its provider. `corpus()` runs every
SDK through every failure with one FakeProvider and returns the exceptions with the truth.

The truth is our code; what counts as right is the code's family (`FAMILY`), the same rule
for us and the peers: an overload reported as a server error, or a connection dropped
reported as one refused, is the right kind (retryable, server side, another provider may do).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must stay offline

from recoverable.testing import FakeProvider, Fault

MESSAGES: Any = [{"role": "user", "content": "hi"}]
GEMINI_PATH = "/v1beta/models/gemini-2.5-flash:generateContent"
HANG_S = 2.0  # the fake's hang; each client gives up after TIMEOUT_S
TIMEOUT_S = 0.3

# failure -> (the fault FakeProvider answers, the truth in our vocabulary)
FAILURES: dict[str, tuple[Callable[[], Fault], str]] = {
    "rate limit": (lambda: Fault.rate_limited(retry_after=7), "provider_rate_limited"),
    "quota": (Fault.insufficient_quota, "provider_quota_exceeded"),
    "auth": (Fault.unauthorized, "provider_auth_failed"),
    "context too long": (Fault.context_too_long, "provider_context_too_long"),
    "content filter": (Fault.content_policy, "provider_content_filtered"),
    "model not found": (Fault.model_not_found, "provider_model_not_found"),
    "overloaded": (Fault.unavailable, "provider_overloaded"),
    "dropped connection": (Fault.drop, "provider_connection_lost"),
    "timeout": (lambda: Fault.hang(HANG_S), "provider_timeout"),
}

# Codes that are one kind of failure for a caller (what "right" means, for everyone).
FAMILY: dict[str, str] = {
    "provider_overloaded": "server",
    "provider_server_error": "server",
    "provider_unreachable": "connection",
    "provider_connection_lost": "connection",
}


def right(truth: str, got: str) -> bool:
    return FAMILY.get(got, got) == FAMILY.get(truth, truth)


Mapper = Callable[[], AbstractContextManager[None]]


@dataclass(frozen=True, slots=True)
class Sdk:
    """One SDK of the corpus."""

    name: str
    call: Callable[[FakeProvider, float], object]
    """One generate call against the fake, with this client timeout in seconds."""
    litellm_provider: str
    """LiteLLM's `custom_llm_provider` for this provider."""
    model: str
    pydantic_ai: Callable[[], Mapper] | None = None
    """The error-mapping context manager pydantic-ai wraps this SDK's calls in; None: it has
    no model class for this SDK."""
    missing: frozenset[str] = frozenset()
    """Failures this API's fake answer carries no evidence of (left out, not graded)."""
    faults: Mapping[str, Callable[[], Fault]] = field(default_factory=dict)
    """A failure this API says with another fault than `FAILURES` gives."""
    quick: bool = False
    """In quick mode's subset (CI)."""
    raises: Callable[[str, float], BaseException] | None = None
    """For an SDK FakeProvider does not speak (gRPC): the failure raised against its own real
    server on 127.0.0.1; `call` is then unused."""


# -- the calls ---------------------------------------------------------------------------


def _openai(fake: FakeProvider, timeout: float) -> object:
    import openai

    client = openai.OpenAI(
        api_key="sk-fake", base_url=fake.openai_url, max_retries=0, timeout=timeout
    )
    return client.chat.completions.create(model="gpt-4o", messages=MESSAGES)


def _azure(fake: FakeProvider, timeout: float) -> object:
    import openai

    client = openai.AzureOpenAI(
        api_key="fake",
        api_version="2024-10-21",
        azure_endpoint=fake.url,
        max_retries=0,
        timeout=timeout,
    )
    return client.chat.completions.create(model="gpt-4o-prod", messages=MESSAGES)


def _base_url(path: str) -> Callable[[FakeProvider, float], object]:
    """OpenRouter, DeepSeek, vLLM, LM Studio: the openai SDK with a `base_url`."""

    def call(fake: FakeProvider, timeout: float) -> object:
        import openai

        client = openai.OpenAI(
            api_key="sk-fake", base_url=fake.url + path, max_retries=0, timeout=timeout
        )
        return client.chat.completions.create(model="some-model", messages=MESSAGES)

    return call


def _anthropic(fake: FakeProvider, timeout: float) -> object:
    import anthropic

    client = anthropic.Anthropic(
        api_key="sk-ant-fake", base_url=fake.url, max_retries=0, timeout=timeout
    )
    return client.messages.create(model="claude-sonnet-4-5", max_tokens=16, messages=MESSAGES)


def _google_genai(fake: FakeProvider, timeout: float) -> object:
    from google import genai
    from google.genai import types

    options = types.HttpOptions(base_url=fake.url, timeout=int(timeout * 1000))
    client = genai.Client(api_key="fake", http_options=options)
    return client.models.generate_content(model="gemini-2.5-flash", contents="hi")


def _httpx(fake: FakeProvider, timeout: float) -> object:
    import httpx

    body = {"model": "gpt-4o", "messages": MESSAGES}
    with httpx.Client(timeout=timeout) as client:
        response = client.post(
            f"{fake.openai_url}/chat/completions",
            json=body,
            headers={"authorization": "Bearer sk-fake"},
        )
        return response.raise_for_status()


def _compatible(package: str) -> Callable[[FakeProvider, float], object]:
    """groq, together, fireworks-ai, cerebras-cloud-sdk: openai's shape, their own classes."""

    def call(fake: FakeProvider, timeout: float) -> object:
        import importlib

        if package == "cerebras":
            klass: Any = importlib.import_module("cerebras.cloud.sdk").Cerebras
            extra = {"warm_tcp_connection": False}
        else:
            module = importlib.import_module(package)
            klass, extra = getattr(module, package.capitalize()), {}
        client = klass(api_key="fake", base_url=fake.url, max_retries=0, timeout=timeout, **extra)
        return client.chat.completions.create(model="llama-3.3-70b", messages=MESSAGES)

    return call


def _mistral(fake: FakeProvider, timeout: float) -> object:
    from mistralai.client import Mistral

    client = Mistral(api_key="fake", server_url=fake.url, timeout_ms=int(timeout * 1000))
    return client.chat.complete(model="mistral-large-latest", messages=MESSAGES)


def _ollama(fake: FakeProvider, timeout: float) -> object:
    import ollama

    return ollama.Client(host=fake.url, timeout=timeout).chat(model="llama3.2", messages=MESSAGES)


def _cohere(fake: FakeProvider, timeout: float) -> object:
    import cohere

    client = cohere.ClientV2(api_key="fake", base_url=fake.url, timeout=timeout)
    return client.chat(
        model="command-a-03-2025", messages=MESSAGES, request_options={"max_retries": 0}
    )


def _google_api_core(fake: FakeProvider, timeout: float) -> object:
    """What the Google Cloud REST clients do: google-auth's session, `from_http_response`."""
    from google.api_core import exceptions
    from google.auth.credentials import AnonymousCredentials
    from google.auth.transport.requests import AuthorizedSession

    session_class: Any = AuthorizedSession  # google-auth is untyped
    anonymous: Any = AnonymousCredentials
    from_response: Any = exceptions.from_http_response
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with session_class(anonymous()) as session:
        response = session.post(fake.url + GEMINI_PATH, json=body, timeout=timeout)
    if response.status_code >= 400:
        raise from_response(response)
    return response


def _huggingface(fake: FakeProvider, timeout: float) -> object:
    from huggingface_hub import InferenceClient

    client = InferenceClient(base_url=fake.openai_url, api_key="hf_fake", timeout=timeout)
    return client.chat_completion(messages=MESSAGES, model="gpt-4o")


def _langchain(fake: FakeProvider, timeout: float) -> object:
    from langchain_openai import ChatOpenAI

    key: Any = "sk-fake"
    model = ChatOpenAI(
        base_url=fake.openai_url, api_key=key, model="gpt-4o", max_retries=0, timeout=timeout
    )
    return model.invoke("hi")


def _unused(fake: FakeProvider, timeout: float) -> object:
    raise AssertionError("an SDK with its own server is called through `raises`")


def _grpc(failure: str, timeout: float) -> BaseException:
    """grpcio's real RpcError: a real grpc server on 127.0.0.1 (a generic handler, bytes in
    and out) aborts as Vertex's gRPC API does, with a google.rpc.Status in the trailers."""
    import importlib
    import time
    from concurrent import futures

    # Untyped packages, taken as Any.
    grpc: Any = importlib.import_module("grpc")
    any_pb2: Any = importlib.import_module("google.protobuf.any_pb2")
    duration_pb2: Any = importlib.import_module("google.protobuf.duration_pb2")
    error_details_pb2: Any = importlib.import_module("google.rpc.error_details_pb2")
    status_pb2: Any = importlib.import_module("google.rpc.status_pb2")

    def packed(*details: Any) -> bytes:
        anys = []
        for detail in details:
            one = any_pb2.Any()
            one.Pack(detail)
            anys.append(one)
        status = status_pb2.Status(code=8, message="Quota exceeded", details=anys)
        serialized: bytes = status.SerializeToString()
        return serialized

    def quota(quota_id: str) -> Any:
        violation = error_details_pb2.QuotaFailure.Violation(quota_id=quota_id)
        return error_details_pb2.QuotaFailure(violations=[violation])

    retry = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=7))
    per_minute = packed(quota("GenerateRequestsPerMinutePerProjectPerModel"), retry)
    per_day = packed(quota("GenerateRequestsPerDayPerProjectPerModel"))
    codes = grpc.StatusCode
    aborts = {
        "rate limit": (codes.RESOURCE_EXHAUSTED, "Quota exceeded", per_minute),
        "quota": (codes.RESOURCE_EXHAUSTED, "Quota exceeded", per_day),
        "auth": (codes.UNAUTHENTICATED, "Request had invalid authentication credentials.", None),
        "context too long": (
            codes.INVALID_ARGUMENT,
            "The input token count (1048577) exceeds "
            "the maximum number of tokens allowed (1048576).",
            None,
        ),
        "model not found": (codes.NOT_FOUND, "Publisher Model `gemini-9` was not found.", None),
        "overloaded": (codes.UNAVAILABLE, "The model is overloaded. Please try again later.", None),
    }

    def generate(request: bytes, context: Any) -> bytes:
        if failure == "timeout":
            time.sleep(HANG_S)
            return b"late"
        code, message, trailer = aborts[failure]
        if trailer is not None:
            context.set_trailing_metadata((("grpc-status-details-bin", trailer),))
        context.abort(code, message)
        return b""

    handler = grpc.method_handlers_generic_handler(
        "fake.Model", {"Generate": grpc.unary_unary_rpc_method_handler(generate)}
    )
    pool = futures.ThreadPoolExecutor(max_workers=2)
    server = grpc.server(pool, handlers=(handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            channel.unary_unary("/fake.Model/Generate")(b"hi", timeout=timeout)
    except grpc.RpcError as error:
        found: BaseException = error
        return found
    finally:
        server.stop(grace=None).wait()
        pool.shutdown(wait=True)
    raise AssertionError(f"grpc: {failure} raised nothing")


# -- pydantic-ai's mappers ---------------------------------------------------------------------


def _pai_openai(model: str, namespace: str = "openai") -> Callable[[], Mapper]:
    def mapper() -> Mapper:
        from pydantic_ai.models.openai._errors import map_api_errors

        return lambda: map_api_errors(model, namespace)

    return mapper


def _pai_private(module: str, model: str) -> Callable[[], Mapper]:
    """A pydantic-ai model module's `_map_api_errors(model_name)`."""

    def mapper() -> Mapper:
        import importlib

        found = importlib.import_module(f"pydantic_ai.models.{module}")._map_api_errors
        return lambda: found(model)

    return mapper


def _pai_anthropic() -> Mapper:
    from pydantic_ai.models.anthropic._errors import map_api_errors

    return lambda: map_api_errors("claude-sonnet-4-5", "anthropic")


def _pai_google() -> Mapper:
    from pydantic_ai.models.google import _map_api_errors

    return lambda: _map_api_errors("gemini-2.5-flash", "google-gla")


# -- the SDKs ---------------------------------------------------------------------------------

# The fakes of these APIs answer a content-policy fault as a plain 400 (cohere, ollama, a
# local vLLM or LM Studio has no filter) or a 200 with a SAFETY finish (Gemini:
# `classify_response` reads it): nothing to grade. LM Studio has no billing either: its
# quota fault is a bare 429.
_NO_FILTER = frozenset({"content filter"})

SDKS: list[Sdk] = [
    Sdk("openai", _openai, "openai", "gpt-4o", _pai_openai("gpt-4o"), quick=True),
    Sdk("anthropic", _anthropic, "anthropic", "claude-sonnet-4-5", _pai_anthropic,
        quick=True),
    Sdk("google-genai", _google_genai, "gemini", "gemini-2.5-flash", _pai_google,
        missing=_NO_FILTER),
    Sdk("httpx", _httpx, "openai", "gpt-4o"),
    Sdk("groq", _compatible("groq"), "groq", "llama-3.3-70b",
        _pai_private("groq", "llama-3.3-70b")),
    Sdk("together", _compatible("together"), "together_ai", "llama-3.3-70b"),
    Sdk("fireworks", _compatible("fireworks"), "fireworks_ai", "llama-3.3-70b"),
    Sdk("cerebras", _compatible("cerebras"), "cerebras", "llama-3.3-70b"),
    Sdk("azure-openai", _azure, "azure", "gpt-4o-prod", _pai_openai("gpt-4o-prod", "azure")),
    Sdk("openrouter", _base_url("/api/v1"), "openrouter", "openai/gpt-4o",
        _pai_openai("openai/gpt-4o", "openrouter")),
    Sdk("deepseek", _base_url(""), "deepseek", "deepseek-chat",
        _pai_openai("deepseek-chat", "deepseek")),
    Sdk("vllm", _base_url("/vllm/v1"), "hosted_vllm", "some-model",
        _pai_openai("some-model", "vllm"), missing=_NO_FILTER),
    Sdk("lm studio", _base_url("/lmstudio/v1"), "lm_studio", "some-model",
        _pai_openai("some-model", "lmstudio"), missing=_NO_FILTER | {"quota"}),
    Sdk("mistralai", _mistral, "mistral", "mistral-large-latest",
        _pai_private("mistral", "mistral-large-latest")),
    Sdk("ollama", _ollama, "ollama", "llama3.2", missing=_NO_FILTER,
        faults={"quota": Fault.payment_required}, quick=True),
    Sdk("cohere", _cohere, "cohere_chat", "command-a-03-2025",
        _pai_private("cohere", "command-a-03-2025"), missing=_NO_FILTER),
    Sdk("google-api-core", _google_api_core, "vertex_ai", "gemini-2.5-flash",
        missing=_NO_FILTER),
    # Vertex's gRPC API answers a filtered prompt with a SAFETY finish, and a dropped
    # connection has no abort to send: both left out.
    Sdk("grpcio", _unused, "vertex_ai", "gemini-2.5-flash",
        missing=_NO_FILTER | {"dropped connection"}, raises=_grpc),
    Sdk("huggingface-hub", _huggingface, "huggingface", "gpt-4o",
        _pai_private("huggingface", "gpt-4o")),
    Sdk("langchain-openai", _langchain, "openai", "gpt-4o"),
]  # fmt: skip


# -- the corpus -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    """One real exception of the corpus and what it means."""

    sdk: Sdk
    failure: str
    truth: str
    exc: BaseException


def corpus(sdks: list[Sdk]) -> Iterator[Sample]:
    """Every failure each SDK can say, raised by the SDK's real client against a fake.

    One fake per SDK: a hung request wakes after HANG_S and must not take the next SDK's
    fault (the timeout is the last failure of each SDK).
    """
    for sdk in sdks:
        with FakeProvider() as fake:
            for failure, (fault, truth) in FAILURES.items():
                if failure in sdk.missing:
                    continue
                if sdk.raises is not None:
                    yield Sample(sdk, failure, truth, sdk.raises(failure, TIMEOUT_S))
                    continue
                fake.reset()
                fake.fail(sdk.faults.get(failure, fault)())
                try:
                    sdk.call(fake, TIMEOUT_S)
                except Exception as exc:
                    yield Sample(sdk, failure, truth, exc)
                else:
                    raise AssertionError(f"{sdk.name}: {failure} raised nothing")

"""LangChain: the real langchain-core runnables and langchain-openai's `ChatOpenAI` against
FakeProvider. A provider's exception passes through `invoke`, `stream`, `with_retry` and
`with_fallbacks` and is classified as the SDK's own (langchain-openai's `OpenAIRateLimitError`
is an `openai.RateLimitError`); an `OutputParserException` is the provider's bad response;
langchain-core's own `Model*Error` bases decide when no SDK class is known.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core import exceptions as lc
from langchain_core.output_parsers import JsonOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ...support.providers import raised


def _model(fake: FakeProvider) -> ChatOpenAI:
    key: Any = "sk-fake"
    return ChatOpenAI(
        base_url=fake.openai_url, api_key=key, model="gpt-4o", max_retries=0, timeout=1
    )


WAYS: dict[str, Callable[[FakeProvider], object]] = {
    "invoke": lambda fake: _model(fake).invoke("hi"),
    "stream": lambda fake: list(_model(fake).stream("hi")),
    "with_retry": lambda fake: (
        _model(fake).with_retry(stop_after_attempt=2, wait_exponential_jitter=False).invoke("hi")
    ),
    "with_fallbacks": lambda fake: _model(fake).with_fallbacks([_model(fake)]).invoke("hi"),
    "chain": lambda fake: (
        ChatPromptTemplate.from_messages([("user", "{q}")]) | _model(fake) | JsonOutputParser()
    ).invoke({"q": "hi"}),
}
# (fault, code, retryable, retry_after_ms)
FAULTS = [
    (Fault.rate_limited(retry_after=6), "provider_rate_limited", True, 6000),
    (Fault.insufficient_quota(), "provider_quota_exceeded", False, None),
    (Fault.context_too_long(), "provider_context_too_long", False, None),
    (Fault.content_policy(), "provider_content_filtered", False, None),
    (Fault.stream_overloaded(), "provider_overloaded", True, None),
    (Fault.drop(), "provider_connection_lost", True, None),
    (Fault.hang(3), "provider_timeout", True, None),
]


@pytest.mark.parametrize("way", list(WAYS))
@pytest.mark.parametrize(
    ("fault", "code", "retryable", "retry_after_ms"), FAULTS, ids=[f[0].name for f in FAULTS]
)
def test_the_provider_error_passes_through_langchain(
    fault: Fault, code: str, retryable: bool, retry_after_ms: int | None, way: str
) -> None:
    with FakeProvider() as fake:
        fake.fail(fault, times=None)
        error = raised(lambda: WAYS[way](fake))
        calls = len(fake.requests)
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.retry_after_ms, detail.source) == (
        code, retryable, retry_after_ms, "openai")  # fmt: skip
    # with_retry retries every exception (a context overflow too); a fallback calls again.
    assert calls == (2 if way in ("with_retry", "with_fallbacks") else 1)


def test_an_output_the_parser_cannot_read_is_a_bad_response() -> None:
    with FakeProvider() as fake:  # the model answers text, the parser wants JSON
        error = raised(lambda: WAYS["chain"](fake))
    assert type(error) is lc.OutputParserException
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source) == (
        "provider_bad_response", True, "langchain")  # fmt: skip


BASES: list[tuple[Any, str]] = [
    (lc.ContextOverflowError, "provider_context_too_long"),
    (lc.ModelRateLimitError, "provider_rate_limited"),
    (lc.ModelAuthenticationError, "provider_auth_failed"),
    (lc.ModelPermissionDeniedError, "provider_permission_denied"),
    (lc.ModelNotFoundError, "provider_model_not_found"),
    (lc.ModelInvalidRequestError, "provider_invalid_request"),
    (lc.ModelRefusalError, "provider_content_filtered"),
    (lc.ModelTimeoutError, "provider_timeout"),
    (lc.ModelConnectionError, "provider_connection_lost"),
]


@pytest.mark.parametrize(("klass", "code"), BASES, ids=[b[0].__name__ for b in BASES])
def test_langchain_core_bases_without_an_sdk_class(klass: Any, code: str) -> None:
    detail = rc.classify(klass("the model call failed"))
    assert (detail.code, detail.source) == (code, "langchain")


def test_langgraphs_tool_invocation_error_is_the_calls_fault() -> None:
    # ToolNode's error for arguments that fail the tool's schema: a ToolException (unknown)
    # whose own class says the model's call was wrong.
    from langchain_core.tools import tool
    from langgraph.prebuilt.tool_node import ToolInvocationError
    from pydantic import ValidationError

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    schema: Any = add.args_schema
    with pytest.raises(ValidationError) as invalid:
        schema(a="x", b=2)
    detail = rc.classify(ToolInvocationError("add", invalid.value, {"a": "x", "b": 2}))
    assert (detail.code, detail.retryable, detail.fix_required) == (
        "tool_input_invalid",
        False,
        "Correct the tool input",
    )

"""pydantic-ai agents for real: `Agent.run` over the real openai client against FakeProvider
on 127.0.0.1, requests counted at the fake, pydantic-ai's default against
`recoverable.integrations.pydantic_ai` (the figures of docs/integrations/pydantic-ai.md)."""

from __future__ import annotations

import json
import time
from typing import Any

import openai
import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import ModelFallback
from pydantic_ai.exceptions import (
    FallbackExceptionGroup,
    ModelConnectionError,
    ModelQuotaExceededError,
)
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import recoverable as rc
from recoverable.integrations import pydantic_ai as rcp
from recoverable.testing import FakeProvider, Fault, Reply, sdk_error
from tests.support import frameworks
from tests.support.frameworks import HELLO, KEY, MALFORMED, add, summarize, tool_output
from tests.support.providers import free_port


def _model(url: str, name: str = "gpt-a", **settings: Any) -> OpenAIChatModel:
    provider = OpenAIProvider(base_url=url, api_key=KEY)
    return OpenAIChatModel(name, provider=provider, settings={"timeout": 5, **settings})


def ours(url: str, *, fallback_to: str | None = None) -> Agent[None, str]:
    """The recipe: the SDK's retries off, our retries and tool errors, our fallback rule."""
    capabilities: list[Any] = [rcp.ClassifiedRetries(), rcp.ClassifiedToolErrors()]
    if fallback_to is not None:
        fallback = _model(url, fallback_to, max_retries=0)
        capabilities.append(ModelFallback(fallback, fallback_on=rcp.fallback_on))
    return Agent(_model(url, max_retries=0), capabilities=capabilities)


def default(url: str, *, fallback_to: str | None = None) -> Agent[None, str]:
    """pydantic-ai's default: the openai client's 2 retries, `ModelFallback`'s own rule."""
    capabilities: list[Any] = []
    if fallback_to is not None:
        capabilities.append(ModelFallback(_model(url, fallback_to)))
    return Agent(_model(url), capabilities=capabilities)


async def _outcome(agent: Agent[None, str]) -> Any:
    """The run's output, or what it raised."""
    try:
        result = await agent.run("hi")
    except Exception as exc:
        return exc
    return result.output


# --- the model's failures -------------------------------------------------------------


async def test_429_retry_after_2_waits_the_server_then_answers(fake: FakeProvider) -> None:
    await frameworks.waits_retry_after_then_answers(fake, ours, _outcome)


@pytest.mark.usefixtures("no_waits")
async def test_quota_is_never_retried(fake: FakeProvider) -> None:
    error = await frameworks.never_retries_quota(fake, ours, _outcome)
    assert isinstance(error, ModelQuotaExceededError)


@pytest.mark.usefixtures("no_waits")
@pytest.mark.parametrize(
    "fault", [Fault.insufficient_quota(), Fault.unauthorized(), Fault.context_too_long()]
)
async def test_terminal_faults_fall_back_once_never_retried(
    fake: FakeProvider, fault: Fault
) -> None:
    await frameworks.falls_back_once(fake, ours, _outcome, fault)


@pytest.mark.usefixtures("no_waits")
async def test_malformed_400_is_neither_retried_nor_sent_to_the_next_model(
    fake: FakeProvider,
) -> None:
    await frameworks.stops_at_malformed(fake, ours, _outcome)


@pytest.mark.usefixtures("no_waits")
async def test_overloaded_is_retried(fake: FakeProvider) -> None:
    await frameworks.retries_overloaded(fake, ours, _outcome)  # 3 requests: the policy's 3 attempts


@pytest.mark.usefixtures("no_waits")
async def test_connection_refused_is_retried_then_raised() -> None:
    error = await _outcome(ours(f"http://127.0.0.1:{free_port()}/v1"))
    assert isinstance(error, ModelConnectionError)
    assert rc.classify(error).code == "provider_unreachable"


@pytest.mark.usefixtures("no_waits")
@pytest.mark.parametrize(("recipe", "attempts"), [("default", 3), ("ours", 3)])
async def test_connection_refused_attempts_counted(recipe: str, attempts: int) -> None:
    http, sent = frameworks.counting_client()
    client = openai.AsyncOpenAI(
        api_key=KEY,
        base_url=f"http://127.0.0.1:{free_port()}/v1",
        max_retries=2 if recipe == "default" else 0,  # ours: the SDK's retries off
        timeout=5,
        http_client=http,
    )
    model = OpenAIChatModel("gpt-a", provider=OpenAIProvider(openai_client=client))
    capabilities = [rcp.ClassifiedRetries()] if recipe == "ours" else []
    error = await _outcome(Agent(model, capabilities=capabilities))
    assert rc.classify(error).code == "provider_unreachable"
    assert len(sent) == attempts  # the SDK's 1 + 2, or the policy's 3: one layer


async def test_sdk_retries_left_on_make_the_sdk_the_only_layer(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded(), times=None)
    agent = Agent(_model(fake.openai_url), capabilities=[rcp.ClassifiedRetries()])
    assert rc.classify(await _outcome(agent)).code == "provider_overloaded"
    assert len(fake.requests) == 3  # the SDK's own 3; with ours stacked it would be 9


def test_fallback_on_is_the_tables_column() -> None:
    assert rcp.fallback_on(sdk_error("openai", Fault.insufficient_quota())) is True
    assert rcp.fallback_on(sdk_error("openai", Fault.unauthorized())) is True
    assert rcp.fallback_on(sdk_error("openai", Fault.context_too_long())) is True
    assert rcp.fallback_on(sdk_error("openai", MALFORMED)) is False
    assert rcp.fallback_on(ValueError("x")) is False
    for row in rc.codes:  # the column alone, a cancel included
        assert rcp.fallback_on(rc.RecoverableError(row.code, "x")) is row.fallback, row.code


# --- pydantic-ai's default, counted the same way ---------------------------------------


async def test_default_429_once_is_the_sdks_own_retry(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=2))
    started = time.monotonic()
    assert await _outcome(default(fake.openai_url)) == HELLO
    assert len(fake.requests) == 2
    assert time.monotonic() - started >= 2.0


@pytest.mark.parametrize(
    ("fault", "models"),
    [
        (Fault.insufficient_quota(), ["gpt-a", "gpt-a", "gpt-a", "gpt-b"]),
        (Fault.rate_limited(retry_after=1), ["gpt-a", "gpt-a", "gpt-a", "gpt-b"]),
        (Fault.unauthorized(), ["gpt-a", "gpt-b"]),
        (Fault.context_too_long(), ["gpt-a", "gpt-b"]),
    ],
)
async def test_default_falls_back_after_the_sdks_retries(
    fake: FakeProvider, fault: Fault, models: list[str]
) -> None:
    fake.fail(fault, times=models.count("gpt-a"))
    assert await _outcome(default(fake.openai_url, fallback_to="gpt-b")) == HELLO
    assert [r.model for r in fake.requests] == models


async def test_default_sends_a_malformed_request_to_every_model(fake: FakeProvider) -> None:
    fake.fail(MALFORMED, times=None)
    error = await _outcome(default(fake.openai_url, fallback_to="gpt-b"))
    assert isinstance(error, FallbackExceptionGroup)
    assert [r.model for r in fake.requests] == ["gpt-a", "gpt-b"]


async def test_default_quota_without_fallback_costs_three(fake: FakeProvider) -> None:
    fake.fail(Fault.insufficient_quota(), times=None)
    assert isinstance(await _outcome(default(fake.openai_url)), ModelQuotaExceededError)
    assert len(fake.requests) == 3


# --- tools: what the model reads -------------------------------------------------------


def _with_tools(agent: Agent[None, str]) -> Agent[None, str]:
    agent.tool_plain(add)
    agent.tool_plain(summarize)
    return agent


async def test_bad_arguments_tell_the_model_to_correct_its_call(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("add", {"a": "secret-x", "b": 2}, then="done"))
    assert await _outcome(_with_tools(ours(fake.openai_url))) == "done"
    assert json.loads(tool_output(fake)) == {
        "error": "tool_input_invalid: A tool was called with input it does not accept. "
        "Correct the arguments, then call this tool again."
    }


async def test_a_provider_error_in_a_tool_tells_the_model_to_stop(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("summarize", {"text": "t"}, then="done"))
    assert await _outcome(_with_tools(ours(fake.openai_url))) == "done"
    assert json.loads(tool_output(fake)) == {
        "error": "provider_quota_exceeded: The AI service account has run out of credit or "
        "quota. Do not call this tool again until this is done; tell the user: Add credit or "
        "raise the quota of the provider account, or use another provider."
    }


async def test_default_shows_the_validation_errors_and_ends_the_run_on_a_provider_error(
    fake: FakeProvider,
) -> None:
    fake.reply(Reply.tool_call("add", {"a": "secret-x", "b": 2}, then="done"))
    assert await _outcome(_with_tools(default(fake.openai_url))) == "done"
    assert "secret-x" in tool_output(fake)  # the input echoed in pydantic's own text
    fake.reset()
    fake.reply(Reply.tool_call("summarize", {"text": "t"}, then="done"))
    error = await _outcome(_with_tools(default(fake.openai_url)))
    assert rc.classify(error).code == "provider_quota_exceeded"  # raised out of agent.run
    assert len(fake.requests) == 1


@pytest.mark.usefixtures("no_waits")
async def test_a_rate_limit_moves_to_the_next_model_at_once_then_retries_it(
    fake: FakeProvider,
) -> None:
    # pydantic-ai runs ModelFallback innermost: it moves on first; our retries then serve the
    # last model of the chain (3 attempts in the request step, the first model's included).
    fake.fail(Fault.rate_limited(retry_after=1), times=None)
    error = await _outcome(ours(fake.openai_url, fallback_to="gpt-b"))
    assert rc.classify(error).code == "provider_rate_limited"
    assert [r.model for r in fake.requests] == ["gpt-a", "gpt-b", "gpt-b", "gpt-b"]


@pytest.mark.usefixtures("no_waits")
async def test_one_rate_limit_with_a_second_model_is_answered_by_it(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=1))
    assert await _outcome(ours(fake.openai_url, fallback_to="gpt-b")) == HELLO
    assert [r.model for r in fake.requests] == ["gpt-a", "gpt-b"]

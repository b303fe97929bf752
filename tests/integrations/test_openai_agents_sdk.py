"""The OpenAI Agents SDK for real: `Runner.run` over the real openai client against
FakeProvider on 127.0.0.1, requests counted at the fake, the SDK's default against
`recoverable.integrations.openai_agents` (the figures of docs/integrations/openai-agents.md)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest

import agents as oa
import recoverable as rc
from agents import retry_policies
from recoverable.integrations import openai_agents as rco
from recoverable.testing import FakeProvider, Fault, Reply, sdk_error
from tests.support import frameworks
from tests.support.frameworks import (
    BAD_ARGUMENTS,
    HELLO,
    KEY,
    MALFORMED,
    QUOTA_IN_A_TOOL,
    add,
    summarize,
    tool_output,
)
from tests.support.providers import free_port


@pytest.fixture(autouse=True, scope="module")
def _no_tracing() -> Iterator[None]:
    oa.set_tracing_disabled(True)  # its exporter would send traces to the real service
    yield
    oa.set_tracing_disabled(False)


def _model(url: str, name: str = "gpt-a", max_retries: int = 0) -> oa.OpenAIChatCompletionsModel:
    client = openai.AsyncOpenAI(api_key=KEY, base_url=url, max_retries=max_retries, timeout=5)
    return oa.OpenAIChatCompletionsModel(model=name, openai_client=client)


def ours(url: str, *, fallback_to: str | None = None, **agent: Any) -> oa.Agent[Any]:
    """The recipe: the client's retries off, the runner's retries by our policy."""
    model: oa.Model = _model(url)
    if fallback_to is not None:
        model = rco.FallbackModel(model, _model(url, fallback_to))
    return oa.Agent(name="a", model=model, model_settings=rco.model_settings(2), **agent)


async def _outcome(agent: oa.Agent[Any], **options: Any) -> Any:
    """The run's final output, or what it raised."""
    try:
        result = await oa.Runner.run(agent, "hi", **options)
    except Exception as exc:
        return exc
    return result.final_output


# --- the model's failures -------------------------------------------------------------


async def test_429_retry_after_2_waits_the_server_then_answers(fake: FakeProvider) -> None:
    await frameworks.waits_retry_after_then_answers(fake, ours, _outcome)


@pytest.mark.usefixtures("no_waits")
async def test_quota_is_never_retried(fake: FakeProvider) -> None:
    error = await frameworks.never_retries_quota(fake, ours, _outcome)
    assert isinstance(error, openai.RateLimitError)


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
    error = await frameworks.stops_at_malformed(fake, ours, _outcome)
    assert isinstance(error, rc.RecoverableError)
    assert error.detail.code == "provider_invalid_request"


@pytest.mark.usefixtures("no_waits")
async def test_overloaded_is_retried(fake: FakeProvider) -> None:
    await frameworks.retries_overloaded(fake, ours, _outcome)  # 3 requests: 1 + max_retries


@pytest.mark.usefixtures("no_waits")
async def test_connection_refused_is_retried() -> None:
    agent = ours(f"http://127.0.0.1:{free_port()}/v1")
    error = await _outcome(agent)
    assert isinstance(error, openai.APIConnectionError)
    assert rc.classify(error).code == "provider_unreachable"


@pytest.mark.usefixtures("no_waits")
@pytest.mark.parametrize(("recipe", "attempts"), [("default", 3), ("ours", 3)])
async def test_connection_refused_attempts_counted(recipe: str, attempts: int) -> None:
    http, sent = frameworks.counting_client()
    retries = 2 if recipe == "default" else 0  # ours: the client's retries off, the runner's on
    client = openai.AsyncOpenAI(
        api_key=KEY,
        base_url=f"http://127.0.0.1:{free_port()}/v1",
        max_retries=retries,
        timeout=5,
        http_client=http,
    )
    model = oa.OpenAIChatCompletionsModel(model="gpt-a", openai_client=client)
    settings = rco.model_settings(2) if recipe == "ours" else oa.ModelSettings()
    error = await _outcome(oa.Agent(name="a", model=model, model_settings=settings))
    assert rc.classify(error).code == "provider_unreachable"
    assert len(sent) == attempts  # the client's 1 + 2, or the runner's 1 + 2: one layer


async def test_sdk_retries_left_on_make_the_sdk_the_only_layer(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded(), times=None)
    model = _model(fake.openai_url, max_retries=2)
    agent = oa.Agent(name="a", model=model, model_settings=rco.model_settings(2))
    assert isinstance(await _outcome(agent), openai.InternalServerError)
    assert len(fake.requests) == 3  # provider_suggested(): 5


def test_the_policy_reads_the_classification() -> None:
    def decide(error: Exception) -> oa.RetryDecision:
        context = oa.RetryPolicyContext(
            error=error,
            attempt=1,
            max_retries=2,
            stream=False,
            normalized=oa.ModelRetryNormalizedError(),
        )
        return rco.retry_policy(context)

    limited = decide(sdk_error("openai", Fault.rate_limited(retry_after=3)))
    assert (limited.retry, limited.delay, limited.reason) == (True, 3.0, "provider_rate_limited")
    assert decide(sdk_error("openai", Fault.insufficient_quota())).retry is False
    assert decide(sdk_error("openai", Fault.rate_limited(retry_after=600))).reason == (
        "retry_after_too_long"
    )


# --- the SDK's defaults, counted the same way ------------------------------------------


@pytest.mark.parametrize(
    ("fault", "requests"),
    [(Fault.insufficient_quota(), 5), (Fault.overloaded(), 5), (Fault.unauthorized(), 1)],
)
async def test_provider_suggested_retries_stack_on_the_sdks(
    fake: FakeProvider, fault: Fault, requests: int
) -> None:
    fake.fail(fault, times=None)
    retry = oa.ModelRetrySettings(
        max_retries=2,
        backoff=oa.ModelRetryBackoffSettings(initial_delay=0.01, max_delay=0.01),
        policy=retry_policies.provider_suggested(),
    )
    agent = oa.Agent(
        name="a",
        model=_model(fake.openai_url, max_retries=2),
        model_settings=oa.ModelSettings(retry=retry),
    )
    assert isinstance(await _outcome(agent), openai.APIStatusError)
    assert len(fake.requests) == requests


@pytest.mark.parametrize(
    ("fault", "requests"),
    [
        (Fault.insufficient_quota(), 3),
        (Fault.overloaded(), 3),
        (Fault.unauthorized(), 1),
        (Fault.context_too_long(), 1),
        (MALFORMED, 1),
    ],
)
async def test_default_is_the_sdks_own_retries(
    fake: FakeProvider, fault: Fault, requests: int
) -> None:
    fake.fail(fault, times=None)
    agent = oa.Agent(name="a", model=_model(fake.openai_url, max_retries=2))
    assert isinstance(await _outcome(agent), openai.APIStatusError)
    assert len(fake.requests) == requests


async def test_default_429_once_is_the_clients_own_retry(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=2))
    agent = oa.Agent(name="a", model=_model(fake.openai_url, max_retries=2))
    started = time.monotonic()
    assert await _outcome(agent) == HELLO
    assert len(fake.requests) == 2
    assert time.monotonic() - started >= 2.0


# --- tools: what the model reads -------------------------------------------------------


def _tools(**options: Any) -> list[oa.FunctionTool]:
    return [oa.function_tool(add, **options), oa.function_tool(summarize, **options)]


async def test_bad_arguments_tell_the_model_to_correct_its_call(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("add", {"a": "secret-x", "b": 2}, then="done"))
    tools = _tools(failure_error_function=rco.failure_error_function)
    assert await _outcome(ours(fake.openai_url, tools=tools)) == "done"
    assert json.loads(tool_output(fake)) == BAD_ARGUMENTS


async def test_a_provider_error_in_a_tool_tells_the_model_to_stop(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("summarize", {"text": "t"}, then="done"))
    config = oa.RunConfig(tool_error_formatter=rco.tool_error_formatter)
    assert await _outcome(ours(fake.openai_url, tools=_tools()), run_config=config) == "done"
    assert json.loads(tool_output(fake)) == QUOTA_IN_A_TOOL


@pytest.mark.parametrize(("name", "arguments"), [("add", {"a": "x", "b": 2}), ("summarize", {})])
async def test_default_tool_error_says_the_same_for_everything(
    fake: FakeProvider, name: str, arguments: dict[str, Any]
) -> None:
    fake.reply(Reply.tool_call(name, arguments, then="done"))
    agent = oa.Agent(name="a", model=_model(fake.openai_url), tools=_tools())
    assert await _outcome(agent) == "done"
    assert tool_output(fake) == "An error occurred while running the tool. Please try again."


async def test_max_turns_and_guardrails_are_classified(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("add", {"a": 1, "b": 2}))  # never a final answer
    error = await _outcome(ours(fake.openai_url, tools=_tools()), max_turns=2)
    assert rc.classify(error).code == "run_max_turns"

    @oa.input_guardrail
    def no_secrets(ctx: Any, agent: Any, text: Any) -> oa.GuardrailFunctionOutput:
        return oa.GuardrailFunctionOutput(output_info="blocked", tripwire_triggered=True)

    error = await _outcome(ours(fake.openai_url, input_guardrails=[no_secrets]))
    assert rc.classify(error).code == "run_guardrail_triggered"


@pytest.mark.usefixtures("no_waits")
async def test_a_stream_falls_back_before_its_first_event(fake: FakeProvider) -> None:
    fake.fail(Fault.insufficient_quota())
    streamed = oa.Runner.run_streamed(ours(fake.openai_url, fallback_to="gpt-b"), "hi")
    async for _ in streamed.stream_events():
        pass
    assert streamed.final_output == HELLO
    assert [(r.model, r.stream) for r in fake.requests] == [("gpt-a", True), ("gpt-b", True)]


@pytest.mark.usefixtures("no_waits")
async def test_one_rate_limit_with_a_second_model_is_answered_by_it(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=1))
    assert await _outcome(ours(fake.openai_url, fallback_to="gpt-b")) == HELLO
    assert [r.model for r in fake.requests] == ["gpt-a", "gpt-b"]

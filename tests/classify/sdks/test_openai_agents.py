"""The OpenAI Agents SDK's own exceptions, raised by a real `Runner` against FakeProvider and
classified by (package, class name): turn limits, model misbehaviour, misuse, guardrails."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

import agents as oa
import recoverable as rc
from recoverable.testing import FakeProvider, Fault, Reply


@pytest.fixture(autouse=True, scope="module")
def _no_tracing() -> Iterator[None]:
    oa.set_tracing_disabled(True)  # its exporter would send traces to the real service
    yield
    oa.set_tracing_disabled(False)


def _model(fake: FakeProvider) -> oa.OpenAIChatCompletionsModel:
    client = openai.AsyncOpenAI(api_key="sk-fake", base_url=fake.openai_url, max_retries=0)
    return oa.OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client)


@oa.function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}."


async def _raised(agent: oa.Agent[Any], **options: Any) -> BaseException:
    try:
        await oa.Runner.run(agent, "What is the weather in Paris?", **options)
    except Exception as exc:
        return exc
    raise AssertionError("the run raised nothing")


def _check(error: BaseException, name: str, code: str, retryable: bool) -> rc.ErrorDetail:
    assert type(error).__name__ == name
    detail = rc.classify(error)
    assert (detail.code, detail.retryable) == (code, retryable)
    assert rc.classify_known(error) == detail
    return detail


async def test_max_turns_exceeded(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))  # never a final answer
    agent = oa.Agent(name="weather", model=_model(fake), tools=[get_weather])
    error = await _raised(agent, max_turns=2)
    _check(error, "MaxTurnsExceeded", "run_max_turns", False)
    assert len(fake.requests) == 2


async def test_a_call_to_a_tool_that_does_not_exist_is_model_behaviour(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("launch_rockets", {"count": 3}))
    agent = oa.Agent(name="weather", model=_model(fake), tools=[get_weather])
    error = await _raised(agent)
    _check(error, "ModelBehaviorError", "provider_bad_response", True)


async def test_a_misuse_of_the_sdk_is_the_programs_own_bug(fake: FakeProvider) -> None:
    # A local session and a server-side conversation at once: the SDK refuses the run.
    agent = oa.Agent(name="weather", model=_model(fake))
    error = await _raised(agent, session=oa.SQLiteSession("s1"), previous_response_id="resp_1")
    _check(error, "UserError", "internal_error", False)
    assert fake.requests == []


@oa.input_guardrail(name="no_weather")
async def _no_weather(ctx: Any, agent: Any, text: Any) -> oa.GuardrailFunctionOutput:
    return oa.GuardrailFunctionOutput(output_info=None, tripwire_triggered=True)


@oa.output_guardrail(name="no_sun")
async def _no_sun(ctx: Any, agent: Any, output: Any) -> oa.GuardrailFunctionOutput:
    return oa.GuardrailFunctionOutput(output_info=None, tripwire_triggered="Sunny" in str(output))


async def test_an_input_guardrail_tripwire(fake: FakeProvider) -> None:
    agent = oa.Agent(name="weather", model=_model(fake), input_guardrails=[_no_weather])
    error = await _raised(agent)
    detail = _check(error, "InputGuardrailTripwireTriggered", "run_guardrail_triggered", False)
    assert detail.details == {"guardrail": "input", "guardrail_name": "no_weather"}
    assert detail.exit_code == 3


async def test_an_output_guardrail_tripwire(fake: FakeProvider) -> None:
    fake.reply(Reply.text("Sunny in Paris."))
    agent = oa.Agent(name="weather", model=_model(fake), output_guardrails=[_no_sun])
    error = await _raised(agent)
    detail = _check(error, "OutputGuardrailTripwireTriggered", "run_guardrail_triggered", False)
    assert detail.details == {"guardrail": "output", "guardrail_name": "no_sun"}


async def test_the_providers_own_failure_comes_through_as_openais(fake: FakeProvider) -> None:
    fake.fail(Fault.insufficient_quota())
    agent = oa.Agent(name="weather", model=_model(fake))
    error = await _raised(agent)
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source) == (
        "provider_quota_exceeded", False, "openai",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (oa.ModelRefusalError("I can't help with that."), "provider_refused"),
        (oa.ModelTimeoutError(5.0), "provider_timeout"),
        (oa.ToolTimeoutError("get_weather", 5.0), "tool_timeout"),
    ],
)
def test_the_sdks_other_classes(error: BaseException, code: str) -> None:
    assert rc.classify(error).code == code


async def test_a_tools_bad_arguments_are_the_calls_fault(fake: FakeProvider) -> None:
    # The SDK's own words for arguments that fail the tool's schema: the model fixes its call.
    seen: list[Exception] = []

    def keep(ctx: Any, error: Exception) -> str:
        seen.append(error)
        return "failed"

    tool = oa.function_tool(_weather, failure_error_function=keep)
    fake.reply(Reply.tool_call("_weather", {"city": 3}, then="done"))
    agent = oa.Agent(name="weather", model=_model(fake), tools=[tool])
    await oa.Runner.run(agent, "What is the weather in Paris?")
    (error,) = seen
    _check(error, "ModelBehaviorError", "tool_input_invalid", False)


def _weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}."

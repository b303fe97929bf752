"""The OpenAI Agents SDK: the runner retries as the classification says, and tool failures
reach the model as our sentences.

    from agents import Agent, RunConfig, Runner, function_tool
    from recoverable.integrations import openai_agents as rco

    client = AsyncOpenAI(max_retries=0)                    # one retry layer: the runner's
    agent = Agent(name="a", model=OpenAIChatCompletionsModel("gpt-4o-mini", client),
                  model_settings=rco.model_settings(max_retries=2),
                  tools=[function_tool(search, failure_error_function=rco.failure_error_function)])
    result = await Runner.run(agent, "hi", run_config=RunConfig(
        tool_error_formatter=rco.tool_error_formatter))    # tools left on the SDK's default

Model calls: `retry_policy` is the runner's policy (`ModelRetrySettings(policy=...)`): it
retries exactly what the classification says is retryable (never a quota: the SDK's
`provider_suggested()` retries one), after the server's wait (`RetryDecision.delay`, which the
runner otherwise lets override Retry-After), and declines a wait over the cap and a failure
the openai client already retried itself. The runner keeps the client's own retries on for
the first attempt, so build the client with `max_retries=0` (`rc.without_sdk_retries`): then
a lasting failure costs `1 + max_retries` requests, not that times three.

`FallbackModel(model_a, model_b)` answers with the first model that can: it moves on only
when the table's `fallback` column says another model could succeed (a quota, a bad key, a
window too small), never on a malformed request (`rc.afallback`'s rule); a stream moves on
only before its first event.

Tools: `failure_error_function` (one tool) and `tool_error_formatter` (every tool on the
SDK's default) give the model `_model_text`'s JSON: our sentence and the next step, never the
exception's text. Bad arguments (the SDK's `Invalid JSON input for tool ...`) are
`tool_input_invalid`: correct the call. A run's own stops (`MaxTurnsExceeded`, the guardrail
tripwires, `ModelBehaviorError`) are read by `rc.classify` (`run_max_turns`,
`run_guardrail_triggered`, `provider_bad_response`): catch what `Runner.run` raises and
classify it, the detail is the caller's.

This module imports the SDK (package `agents`) at import: use it where the SDK is installed
(`pip install "recoverable[openai-agents]"`).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from agents import Model, ModelResponse, ModelRetrySettings, ModelSettings, RetryDecision

from .._classify import classify
from .._core.detail import ErrorDetail
from .._retry.fallbacks import afallback
from .._retry.ledger import FallbackLedger
from .._retry.policy import RetryPolicy
from .._retry.waits import waits_are_off
from ._model_text import model_text
from ._sdk_layer import sdk_retried

if TYPE_CHECKING:
    from agents.run_config import ToolErrorFormatterArgs

    from agents import RetryPolicyContext, RunContextWrapper

__all__ = [
    "FallbackModel",
    "failure_error_function",
    "model_settings",
    "retry_policy",
    "tool_error_formatter",
]

_MAX_WAIT_MS = RetryPolicy().max_retry_after_ms  # the wait above which a fallback acts instead


def retry_policy(ctx: RetryPolicyContext) -> RetryDecision:
    """The runner's retry policy: `RetryDecision(retry, delay, reason=code)` from the
    classification of `ctx.error`. The delay is the server's `retry_after_ms` (none: the
    runner's backoff; none at all under `rc.testing.set_testing`). Never raises."""
    detail = classify(ctx.error)
    if not detail.retryable:
        return RetryDecision(retry=False, reason=detail.code)
    if sdk_retried(ctx.error):  # the openai client retried this attempt: it was the layer
        return RetryDecision(retry=False, reason="sdk_retries")
    wait = detail.retry_after_ms
    if wait is not None and wait > _MAX_WAIT_MS:
        return RetryDecision(retry=False, reason="retry_after_too_long")
    if waits_are_off():
        return RetryDecision(retry=True, delay=0.0, reason=detail.code)
    return RetryDecision(
        retry=True, delay=None if wait is None else wait / 1000, reason=detail.code
    )


def model_settings(max_retries: int = 2, **settings: Any) -> ModelSettings:
    """`ModelSettings(retry=ModelRetrySettings(max_retries=..., policy=retry_policy))`, with
    the other `ModelSettings` fields as given."""
    retry = ModelRetrySettings(max_retries=max_retries, policy=retry_policy)
    return ModelSettings(retry=retry, **settings)


def failure_error_function(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """`function_tool(..., failure_error_function=...)`: what the model reads of the tool's
    failure, our sentence and the next step as JSON, never the exception's text."""
    del ctx  # the failure alone decides the text
    return model_text(classify(error))


def tool_error_formatter(args: ToolErrorFormatterArgs[Any]) -> str | None:
    """`RunConfig(tool_error_formatter=...)`: `failure_error_function`'s text for every tool
    left on the SDK's default (and `tool_not_found`); None (the SDK's own) for a rejected
    approval, which is no failure."""
    if args.kind == "tool_exception" and args.error is not None:
        return model_text(classify(args.error))
    if args.kind == "tool_not_found":
        return model_text(ErrorDetail.create("tool_not_found"))
    return None


class FallbackModel(Model):
    """A model that answers with the first of `models` that can, in order: it moves on only
    when the failure's `fallback` column says another model could succeed (`rc.afallback`);
    otherwise, or when every model failed, it raises a `RecoverableError`."""

    def __init__(self, *models: Model, names: Sequence[str] | None = None) -> None:
        if not models:
            raise ValueError("FallbackModel needs at least one model")
        if names is not None and len(names) != len(models):
            raise ValueError("FallbackModel: one name per model")
        self.models = models
        """The models, in the order they are tried."""
        self.names = tuple(names) if names is not None else tuple(map(_name, models))
        """Each model's name, as a failure's `details["candidate"]` says it."""

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        """The first model's answer that succeeds (the SDK's `Model.get_response` arguments)."""
        candidates = [
            (name, functools.partial(model.get_response, *args, **kwargs))
            for name, model in zip(self.names, self.models, strict=True)
        ]
        answer = await afallback(candidates)
        response: ModelResponse = answer.value
        return response

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """The first model's stream that starts; a failure after its first event is raised."""
        ledger = FallbackLedger()
        for index, model in enumerate(self.models):
            started = False
            try:
                async for event in model.stream_response(*args, **kwargs):
                    started = True
                    yield event
            except Exception as exc:
                last = index == len(self.models) - 1
                if started or last or not ledger.moves_on(classify(exc)):
                    raise
                continue
            return

    async def close(self) -> None:
        """Close every model."""
        for model in self.models:
            await model.close()


def _name(model: Model) -> str:
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else type(model).__name__

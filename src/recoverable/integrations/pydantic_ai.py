"""pydantic-ai agents: model requests retry and fall back as the classification says, and tool
failures reach the model as our sentences.

    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ModelFallback
    from recoverable.integrations import pydantic_ai as rcp

    model = OpenAIChatModel("gpt-4o-mini", provider=..., settings={"max_retries": 0})
    agent = Agent(model, capabilities=[
        rcp.ClassifiedRetries(),                      # the server's wait, retryable only, bounded
        rcp.ClassifiedToolErrors(),                   # ModelRetry / ToolFailed, our sentences
        ModelFallback(other, fallback_on=rcp.fallback_on),   # the table's fallback column
    ])

Model requests: `ClassifiedRetries(policy)` is an `on_model_request_error` hook: a failure the
classification says is retryable is attempted again (`RetryModelRequest`) after the server's
`retry_after_ms` (else the policy's backoff), up to the policy's attempts per request step;
anything else, a wait over the policy's cap, or a failure the SDK already retried itself is
raised as it is. `fallback_on` (for `ModelFallback` or `FallbackModel`) moves to the next model
only when the table's `fallback` column says another model could succeed (a quota, a bad key
of that provider, a window too small), never for a malformed request or a truncated answer.
Exactly one retry layer: the model's `settings={"max_retries": 0}` turns the openai client's
own retries off (else each request is up to 3 before this hook sees it, and it declines).

Tools: `ClassifiedToolErrors` answers a failed call with `ModelRetry` when the model can fix it
by calling differently (bad arguments: `tool_input_invalid`) and `ToolFailed` when it cannot
(a quota, a crash), each with `_model_text`'s `model_sentence`: the code, our sentence and
the next step, never the exception's text (pydantic-ai shows the model the validation
errors, and lets any other exception end the run). The detail stays reachable: what
`agent.run` raises is classified by `rc.classify`, and the tool's failure is the
`ToolReturnPart`/`RetryPromptPart` in the history.

This module imports pydantic-ai at import: use it where it is installed
(`pip install "recoverable[pydantic-ai]"`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelRetry, RetryModelRequest, ToolFailed

from .._classify import classify
from .._core.detail import ErrorDetail
from .._retry.policy import RetryPolicy
from .._retry.waits import async_sleep, waits_are_off
from ._model_text import model_can_fix, model_sentence
from ._sdk_layer import sdk_retried

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.tools import ToolDefinition

__all__ = ["ClassifiedRetries", "ClassifiedToolErrors", "fallback_on"]


def fallback_on(exc: BaseException) -> bool:
    """`fallback_on` for pydantic-ai's `FallbackModel` / `ModelFallback`: whether another model
    could succeed where this one failed, as the table's `fallback` column says for the
    failure's code (`ErrorDetail.fallback`). Never raises."""
    detail = classify(exc)
    return detail.fallback  # a cancel's row never falls back (`registration.check_row`)


@dataclass
class ClassifiedRetries(AbstractCapability[Any]):
    """Attempt a failed model request again when the classification says it is retryable:
    after the server's `retry_after_ms` (else `policy`'s backoff), up to `policy.attempts`
    attempts per request step. Anything else is raised as it is."""

    policy: RetryPolicy = field(default_factory=lambda: RetryPolicy(attempts=3))
    """How many attempts a request step makes, the backoff without a hint, the hint's cap."""
    _step: int | None = field(default=None, repr=False)
    _failures: int = field(default=0, repr=False)

    async def for_run(self, ctx: RunContext[Any]) -> ClassifiedRetries:
        """A fresh copy per run, so concurrent runs count their own attempts."""
        return dataclasses.replace(self, _step=None, _failures=0)

    async def on_model_request_error(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        """Raise `RetryModelRequest` after the wait when the failure is retryable and the
        budget allows; else raise `error`."""
        del request_context  # the same request, to the same model
        if ctx.run_step != self._step:
            self._step, self._failures = ctx.run_step, 0
        self._failures += 1
        wait = self._wait(classify(error), error)
        if wait is None:
            raise error
        if wait > 0 and not waits_are_off():
            await async_sleep(wait)
        raise RetryModelRequest()

    def _wait(self, detail: ErrorDetail, error: Exception) -> float | None:
        """Seconds to wait before the next attempt; None when there is none to make."""
        if not detail.retryable or self._failures >= self.policy.attempts:
            return None
        if sdk_retried(error):  # the SDK's own retries were the layer
            return None
        hint = detail.retry_after_ms
        if hint is None:
            return self.policy.backoff(self._failures)
        if hint > self.policy.max_retry_after_ms:
            return None  # not slept here: a fallback, or the caller, acts
        return hint / 1000


@dataclass
class ClassifiedToolErrors(AbstractCapability[Any]):
    """A failed tool call answered as the classification says: `ModelRetry` when the model can
    fix its call (bad arguments), `ToolFailed` when it cannot, with our sentence and the next
    step (`model_sentence`), never the exception's text."""

    async def on_tool_validate_error(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        error: ValidationError | ModelRetry,
    ) -> Any:
        """Arguments that fail the tool's schema: the model corrects its call (`ModelRetry`)."""
        if isinstance(error, ModelRetry):  # the tool's own validator said so, in its words
            raise error
        detail = ErrorDetail.create("tool_input_invalid", "the arguments failed the schema")
        raise ModelRetry(model_sentence(detail))

    async def on_tool_execute_error(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        error: Exception,
    ) -> Any:
        """The tool raised: `ModelRetry` when the model can fix its call, else `ToolFailed`."""
        detail = classify(error)
        if model_can_fix(detail):
            raise ModelRetry(model_sentence(detail)) from error
        raise ToolFailed(model_sentence(detail)) from error

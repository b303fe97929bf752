"""LangGraph: nodes retry as the classification says, and tool failures reach the model as
our sentences.

    from recoverable.integrations import langgraph as rcl

    graph = StateGraph(State)
    graph.add_node("model", rcl.retrying(call_model),          # waits the server's Retry-After
                   error_handler=rcl.error_handler())          # state["error"]: the public view
    graph.add_node("tools", rcl.tool_node([search, add]))      # the model reads our sentences

Exactly one retry layer (principle 12), in one of two recipes:

- `retrying(node, policy)` runs the node under `rc.retry`: the server's `retry_after_ms` is
  waited (a LangGraph `RetryPolicy` cannot read a wait per exception), a quota or a bad
  request is never retried, a failure the SDK's client already retried is not retried again.
  Its give-up is a `RecoverableError` that is not retryable, so a LangGraph `retry_policy`
  with `retry_on` above it never repeats the node: the two compose and still retry once.
- `retry_policy(...)` is LangGraph's own `RetryPolicy` whose `retry_on` is this module's:
  LangGraph's backoff, no server wait, for graphs that keep LangGraph as the retry layer.

Either way build the model client with `max_retries=0` (`rc.without_sdk_retries(client)`):
else the SDK's own retries run first (the openai client's default 2 make one 429 three
requests) and `retry_on` then declines (it counts them), leaving the SDK the only layer.

After the retries, `error_handler()` puts the failure in the state, as a person may read it
(`public_view`: codes, numbers and our sentences), so the caller reads it from the result;
without a handler the graph raises the `RecoverableError` (`rc.classify(exc)` is its detail).

A tool's failure (`tool_node`, or `wrap_tool_call` on your own `ToolNode`): the model reads
`_model_text`'s JSON, our sentence and the next step, never the exception's text; the
`ToolMessage`'s `artifact` holds the public view for the program. Bad arguments (LangGraph's
`ToolInvocationError`) are `tool_input_invalid`, whose next step is to correct the call.
`tool_error_text` is the same text for `ToolNode(handle_tool_errors=...)`.

LangGraph is imported only by the functions that build its objects (`retry_policy`,
`tool_node`, the tool wrappers), so this module imports without it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .._classify import classify
from .._core.public import public_view
from .._retry.loop import retry
from .._retry.policy import RetryPolicy as RcRetryPolicy
from ._model_text import model_text
from ._sdk_layer import sdk_retried

if TYPE_CHECKING:
    from langchain_core.messages import ToolMessage
    from langgraph.errors import NodeError
    from langgraph.prebuilt import ToolNode
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.types import Command, RetryPolicy

    from .._core.detail import ErrorDetail

__all__ = [
    "awrap_tool_call",
    "error_handler",
    "error_state",
    "retry_on",
    "retry_policy",
    "retrying",
    "tool_error_text",
    "tool_node",
    "wrap_tool_call",
]

F = TypeVar("F", bound=Callable[..., Any])


def retry_on(exc: BaseException) -> bool:
    """LangGraph's `retry_on`: retry exactly what the classification says is retryable, unless
    the SDK's client already retried it (one retry layer). Sync, as LangGraph calls it (an
    `async def` there would be a truthy coroutine: every failure retried). Never raises."""
    if not classify(exc).retryable:
        return False
    return sdk_retried(exc) == 0


def retry_policy(
    *,
    max_attempts: int = 3,
    initial_interval: float = 0.5,
    backoff_factor: float = 2.0,
    max_interval: float = 128.0,
    jitter: bool = True,
) -> RetryPolicy:
    """A LangGraph `RetryPolicy` whose `retry_on` is this module's (LangGraph's defaults
    otherwise). It waits LangGraph's backoff, not the server's Retry-After: `retrying` does."""
    from langgraph.types import RetryPolicy

    return RetryPolicy(
        initial_interval=initial_interval,
        backoff_factor=backoff_factor,
        max_interval=max_interval,
        max_attempts=max_attempts,
        jitter=jitter,
        retry_on=retry_on,
    )


_NODE_POLICY = RcRetryPolicy(attempts=3)


def retrying(node: F, policy: RcRetryPolicy | None = None) -> F:
    """`node` (sync or async) under `rc.retry(policy)`: retried only when the classification
    says so, after the server's `retry_after_ms` (else the policy's backoff), 3 calls at most
    by default. Its signature is kept, so LangGraph still injects `config`, `runtime`, ...
    A give-up raises a `RecoverableError` (not retryable, the original as `__cause__`)."""
    wrapped = retry(policy if policy is not None else _NODE_POLICY)(node)
    return cast("F", wrapped)


def error_state(exc: BaseException, *, public: bool = True) -> dict[str, Any]:
    """The failure `exc` as a state value: its public view (a person may read it), or with
    `public=False` the whole detail (`to_dict`: developer text included, for logs only)."""
    detail = classify(exc)
    return _public_dict(detail) if public else detail.to_dict()


def error_handler(
    key: str = "error", *, public: bool = True, goto: str | Sequence[str] | None = None
) -> Callable[[Any, NodeError], dict[str, Any] | Command[Any]]:
    """A node `error_handler` (LangGraph runs it once the node's retries are spent): the state
    update `{key: error_state(error.error)}`, or a `Command` to `goto` with that update. The
    state's schema must have `key` (e.g. `error: dict | None`)."""

    def handle(state: Any, error: NodeError) -> dict[str, Any] | Command[Any]:
        del state  # the failure alone decides the update
        update = {key: error_state(error.error, public=public)}
        if goto is None:
            return update
        from langgraph.types import Command

        return Command(update=update, goto=goto)

    return handle


def tool_error_text(e: Exception) -> str:
    """What the model reads of a tool's failure (for `ToolNode(handle_tool_errors=...)`): our
    sentence and the next step as JSON, never the exception's text."""
    return model_text(classify(e))


def _public_dict(detail: ErrorDetail) -> dict[str, Any]:
    return dataclasses.asdict(public_view(detail))


def _error_message(request: ToolCallRequest, exc: Exception) -> ToolMessage:
    from langchain_core.messages import ToolMessage

    detail = classify(exc)
    call = request.tool_call
    return ToolMessage(
        content=model_text(detail),
        name=call["name"],
        tool_call_id=call["id"],
        status="error",
        artifact={"recoverable": _public_dict(detail)},
    )


def _passes_through(exc: Exception) -> bool:
    """An interrupt (or a resume value its schema refuses) is LangGraph's, never a tool error."""
    from langgraph.errors import GraphBubbleUp, is_invalid_resume

    return isinstance(exc, GraphBubbleUp) or is_invalid_resume(exc)


def wrap_tool_call(
    request: ToolCallRequest, execute: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
) -> ToolMessage | Command[Any]:
    """`ToolNode(wrap_tool_call=...)`: a failed call becomes an error `ToolMessage` whose
    content is `tool_error_text`'s and whose `artifact["recoverable"]` is the public view.
    Use it with `handle_tool_errors=False` (else the ToolNode answers first): `tool_node`."""
    try:
        return execute(request)
    except Exception as exc:
        if _passes_through(exc):
            raise
        return _error_message(request, exc)


async def awrap_tool_call(
    request: ToolCallRequest,
    execute: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
) -> ToolMessage | Command[Any]:
    """`wrap_tool_call` for `ToolNode(awrap_tool_call=...)`, the graph's async runs."""
    try:
        return await execute(request)
    except Exception as exc:
        if _passes_through(exc):
            raise
        return _error_message(request, exc)


def tool_node(tools: Sequence[Any], **options: Any) -> ToolNode:
    """A `ToolNode` whose failures reach the model as our sentences (`wrap_tool_call`, sync and
    async); `options` are ToolNode's others (`name`, `messages_key`, ...)."""
    from langgraph.prebuilt import ToolNode

    return ToolNode(
        tools,
        handle_tool_errors=False,
        wrap_tool_call=wrap_tool_call,
        awrap_tool_call=awrap_tool_call,
        **options,
    )

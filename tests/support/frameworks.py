"""What the agent-framework tests share (the OpenAI Agents SDK, pydantic-ai, LangGraph): their
FakeProvider's key and reply, the malformed request, the model's failures as scenarios counted at
the fake, the two tools each framework wraps, and what the model reads of a failed tool call."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import recoverable as rc
from recoverable.testing import FakeProvider, Fault, sdk_error

KEY = "sk-test-abcdef123456"
HELLO = "Hello from FakeProvider."
MALFORMED = Fault.status(
    400,
    {"error": {"message": "Unrecognized request argument: foo", "type": "invalid_request_error"}},
)

Recipe = Callable[..., Any]
"""A framework's agent under our recipe: `recipe(url, fallback_to=None)`."""

Outcome = Callable[[Any], Awaitable[Any]]
"""A run of such an agent: its final output, or what it raised."""


async def waits_retry_after_then_answers(fake: FakeProvider, ours: Recipe, run: Outcome) -> None:
    """A 429 with Retry-After: 2 is waited for (2 s at the least), then the model answers."""
    fake.fail(Fault.rate_limited(retry_after=2))
    started = time.monotonic()
    assert await run(ours(fake.openai_url)) == HELLO
    assert [r.fault for r in fake.requests] == ["rate_limited", None]
    assert time.monotonic() - started >= 2.0


async def never_retries_quota(fake: FakeProvider, ours: Recipe, run: Outcome) -> Any:
    """Out of quota: one request, classified so; returns what the run raised."""
    fake.fail(Fault.insufficient_quota(), times=None)
    error = await run(ours(fake.openai_url))
    assert rc.classify(error).code == "provider_quota_exceeded"
    assert len(fake.requests) == 1
    return error


async def falls_back_once(fake: FakeProvider, ours: Recipe, run: Outcome, fault: Fault) -> None:
    """A terminal fault moves to the next model at once: one request each, then the answer."""
    fake.fail(fault)
    assert await run(ours(fake.openai_url, fallback_to="gpt-b")) == HELLO
    assert [(r.model, r.fault) for r in fake.requests] == [("gpt-a", fault.name), ("gpt-b", None)]


async def stops_at_malformed(fake: FakeProvider, ours: Recipe, run: Outcome) -> Any:
    """A malformed request: neither retried nor sent to the next model; returns the error."""
    fake.fail(MALFORMED, times=None)
    error = await run(ours(fake.openai_url, fallback_to="gpt-b"))
    assert rc.classify(error).code == "provider_invalid_request"
    assert [r.model for r in fake.requests] == ["gpt-a"]
    return error


async def retries_overloaded(fake: FakeProvider, ours: Recipe, run: Outcome) -> None:
    """Overloaded once: retried to the answer; overloaded always: 3 requests, then classified."""
    fake.fail(Fault.overloaded())
    assert await run(ours(fake.openai_url)) == HELLO
    assert [r.fault for r in fake.requests] == ["overloaded", None]
    fake.reset()
    fake.fail(Fault.overloaded(), times=None)
    error = await run(ours(fake.openai_url))
    assert rc.classify(error).code == "provider_overloaded"
    assert len(fake.requests) == 3


BAD_ARGUMENTS: dict[str, Any] = {
    "ok": False,
    "error": {
        "code": "tool_input_invalid",
        "message": "A tool was called with input it does not accept.",
        "retryable": False,
        "retry_after_ms": None,
        "fix_required": "Correct the tool input",
        "fix_command": None,
        "next_step": "Correct the arguments, then call this tool again.",
    },
}
"""The tool result the model reads when it called `add` with arguments it does not accept."""

QUOTA_IN_A_TOOL: dict[str, Any] = {
    "ok": False,
    "error": {
        "code": "provider_quota_exceeded",
        "message": "The AI service account has run out of credit or quota.",
        "retryable": False,
        "retry_after_ms": None,
        "fix_required": "Add credit or raise the quota of the provider account, or use "
        "another provider",
        "fix_command": None,
        "next_step": "Do not call this tool again until this is done; tell the user: Add "
        "credit or raise the quota of the provider account, or use another provider.",
    },
}
"""The tool result the model reads when `summarize`'s own provider call ran out of quota."""


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def summarize(text: str) -> str:
    """Summarize a text with another model."""
    raise sdk_error("openai", Fault.insufficient_quota())


def tool_output(fake: FakeProvider) -> Any:
    """The tool's output as the model read it: the last message of the next request."""
    sent = fake.requests[-1].json
    assert sent is not None
    last = sent["messages"][-1]
    assert last["role"] == "tool"
    return last["content"]


def counting_client() -> tuple[Any, list[str]]:
    """An openai async HTTP client that counts every request it sends, and the count: the
    attempts at an address nothing listens on, which no server can count."""
    import openai

    sent: list[str] = []

    async def count(request: Any) -> None:
        sent.append(str(request.url))

    return openai.DefaultAsyncHttpxClient(event_hooks={"request": [count]}), sent

"""What the fake provider answers: `Fault` (an injected failure) and `Reply` (a normal answer)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

__all__ = ["FAULT_NAMES", "Fault", "FaultName", "Reply"]

FaultName = Literal[
    "rate_limited",
    "insufficient_quota",
    "payment_required",
    "unauthorized",
    "forbidden",
    "model_not_found",
    "context_too_long",
    "content_policy",
    "server_error",
    "unavailable",
    "overloaded",
    "stream_overloaded",
    "drop",
    "cut_stream",
    "hang",
    "status",
]

# The faults that need no argument (`status` needs a code): for the commands' --fault flags.
FAULT_NAMES: tuple[str, ...] = tuple(name for name in get_args(FaultName) if name != "status")


@dataclass(frozen=True, slots=True)
class Fault:
    """One injected failure; build it with a constructor such as `Fault.rate_limited()`."""

    name: FaultName
    """Which failure; the other fields are the arguments of its constructor."""
    retry_after: float | None = None
    """`rate_limited`: the `retry-after` header, in seconds."""
    retry_after_ms: int | None = None
    """`rate_limited`: the `retry-after-ms` header."""
    retry_delay: str | None = None
    """`rate_limited`: Gemini's RetryInfo delay ("38s"); None: derived from the headers."""
    model: str | None = None
    """`model_not_found`: the model the 404 names; None: the requested one."""
    after: int = 2
    """`cut_stream`: how many content events are sent before the cut."""
    graceful: bool = False
    """`cut_stream`: end the body cleanly instead of aborting it mid-body."""
    seconds: float | None = None
    """`hang`: how long to hold the request; None: until the server stops."""
    status_code: int | None = None
    """`status`: the HTTP status."""
    body: Mapping[str, Any] | str | None = None
    """`status`: the body, JSON (a mapping) or text (a str)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """`status`: extra headers, which replace a default of the same name."""

    @classmethod
    def named(cls, name: str) -> Fault:
        """The fault called `name` (one of FAULT_NAMES), with its default arguments."""
        if name not in FAULT_NAMES:
            raise ValueError(f"unknown fault {name!r}; expected one of {', '.join(FAULT_NAMES)}")
        return cast(Fault, getattr(cls, name)())

    @classmethod
    def rate_limited(
        cls,
        retry_after: float | None = None,
        retry_after_ms: int | None = None,
        retry_delay: str | None = None,
    ) -> Fault:
        """429 rate limit; `retry-after`/`retry-after-ms` headers and Gemini `RetryInfo`."""
        if retry_after is not None and retry_after < 0:
            raise ValueError("retry_after must be >= 0")
        if retry_after_ms is not None and retry_after_ms < 0:
            raise ValueError("retry_after_ms must be >= 0")
        return cls(
            "rate_limited",
            retry_after=retry_after,
            retry_after_ms=retry_after_ms,
            retry_delay=retry_delay,
        )

    @classmethod
    def insufficient_quota(cls) -> Fault:
        """Billing quota exhausted (OpenAI 429, Anthropic 400 credit balance, Gemini PerDay)."""
        return cls("insufficient_quota")

    @classmethod
    def payment_required(cls) -> Fault:
        """402 payment required (Anthropic `billing_error`)."""
        return cls("payment_required")

    @classmethod
    def unauthorized(cls) -> Fault:
        """Invalid API key (401; Gemini answers 400 `API_KEY_INVALID`)."""
        return cls("unauthorized")

    @classmethod
    def forbidden(cls) -> Fault:
        """403 permission denied."""
        return cls("forbidden")

    @classmethod
    def model_not_found(cls, model: str | None = None) -> Fault:
        """404 unknown model; `model` defaults to the one the request named."""
        return cls("model_not_found", model=model)

    @classmethod
    def context_too_long(cls) -> Fault:
        """400 context window exceeded, in each provider's wording."""
        return cls("context_too_long")

    @classmethod
    def content_policy(cls) -> Fault:
        """Content policy block (400; Gemini: a 200 with `finishReason: SAFETY`)."""
        return cls("content_policy")

    @classmethod
    def server_error(cls) -> Fault:
        """500 internal server error."""
        return cls("server_error")

    @classmethod
    def unavailable(cls) -> Fault:
        """503 service unavailable."""
        return cls("unavailable")

    @classmethod
    def overloaded(cls) -> Fault:
        """529 overloaded (Anthropic `overloaded_error`)."""
        return cls("overloaded")

    @classmethod
    def stream_overloaded(cls) -> Fault:
        """A 200 stream that starts, then carries an in-stream overloaded error (else 529)."""
        return cls("stream_overloaded")

    @classmethod
    def drop(cls) -> Fault:
        """Read the request, then close the connection without sending a byte."""
        return cls("drop")

    @classmethod
    def cut_stream(cls, after: int = 2, *, graceful: bool = False) -> Fault:
        """Send a 200 and `after` content chunks, then close without the terminating event."""
        # graceful=True ends the HTTP body properly (a clean EOF with no finish event; a
        # non-streaming body is a valid HTTP answer holding half the JSON); the default
        # aborts it mid-body, as a dropped TCP connection does.
        if after < 0:
            raise ValueError("after must be >= 0")
        return cls("cut_stream", after=after, graceful=graceful)

    @classmethod
    def hang(cls, seconds: float | None = None) -> Fault:
        """Read the request and never answer, until `seconds` pass or the server stops."""
        if seconds is not None and seconds < 0:
            raise ValueError("seconds must be >= 0")
        return cls("hang", seconds=seconds)

    @classmethod
    def status(
        cls,
        code: int,
        body: Mapping[str, Any] | str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """A raw answer: `code`, a JSON (dict) or text (str) body, and extra headers."""
        if not 100 <= code <= 599:
            raise ValueError(f"HTTP status out of range: {code}")
        if isinstance(body, Mapping):
            json.dumps(body)  # fail here, not inside the server thread
        return cls("status", status_code=code, body=body, headers=dict(headers or {}))


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer given when no fault is pending: `Reply.text(...)` or `Reply.tool_call(...)`."""

    kind: Literal["text", "tool_call"]
    """An assistant text turn, or a turn that calls a tool."""
    content: str = ""
    """`text`: the assistant's text."""
    tool_name: str = ""
    """`tool_call`: the tool called."""
    tool_arguments: Mapping[str, Any] = field(default_factory=dict)
    """`tool_call`: its JSON arguments."""
    then: str | None = None
    """`tool_call`: the text that answers a request carrying a tool result; None: none does."""

    @classmethod
    def text(cls, text: str) -> Reply:
        """An assistant text turn."""
        return cls("text", content=text)

    @classmethod
    def tool_call(
        cls, name: str, arguments: Mapping[str, Any] | None = None, *, then: str | None = None
    ) -> Reply:
        """An assistant turn that calls the tool `name` with JSON `arguments`.

        With `then`, a request that already carries a tool result (an agent sending the
        tool's output back) is answered with the text `then` instead, so an agent loop
        runs one tool call and finishes; without it every request gets the tool call.
        """
        if not name:
            raise ValueError("a tool call needs a name")
        args = dict(arguments or {})
        json.dumps(args)  # fail here, not inside the server thread
        return cls("tool_call", tool_name=name, tool_arguments=args, then=then)

    def answering(self, has_tool_result: bool) -> Reply:
        """The reply for one request: the `then` text once a tool result came back."""
        if self.kind == "tool_call" and self.then is not None and has_tool_result:
            return Reply.text(self.then)
        return self


DEFAULT_REPLY = Reply.text("Hello from FakeProvider.")

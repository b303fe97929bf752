"""The real SDK clients against FakeProvider on 127.0.0.1, SDK retries off, every fault.

Each case makes a real request, catches what the SDK really raises, and asserts the exact
classification: code, retryable, retry_after_ms, status and source.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import anthropic
import litellm
import openai
import pytest

import recoverable as rc
from recoverable.testing import FakeProvider, Fault, sdk_error

from ...support.providers import (
    MESSAGES,
    MODELS,
    ask_anthropic,
    ask_google,
    ask_openai,
    free_port,
    raised,
)

# The calls' own timeout here is 10 s (a test that wants a hang to time out gives its own).
CALLS: dict[str, Callable[..., list[Any]]] = {
    "openai": partial(ask_openai, timeout=10),
    "anthropic": partial(ask_anthropic, timeout=10),
    "google": partial(ask_google, timeout=10),
}


# (sdk, fault, stream, code, retryable, retry_after_ms, status)
CASES = [
    ("openai", Fault.rate_limited(retry_after=7), False, "provider_rate_limited", True, 7000, 429),
    ("openai", Fault.rate_limited(retry_after_ms=1500), False, "provider_rate_limited", True, 1500,
     429),
    ("openai", Fault.insufficient_quota(), False, "provider_quota_exceeded", False, None, 429),
    ("openai", Fault.payment_required(), False, "provider_quota_exceeded", False, None, 402),
    ("openai", Fault.unauthorized(), False, "provider_auth_failed", False, None, 401),
    ("openai", Fault.forbidden(), False, "provider_permission_denied", False, None, 403),
    ("openai", Fault.model_not_found(), False, "provider_model_not_found", False, None, 404),
    ("openai", Fault.context_too_long(), False, "provider_context_too_long", False, None, 400),
    ("openai", Fault.content_policy(), False, "provider_content_filtered", False, None, 400),
    ("openai", Fault.server_error(), False, "provider_server_error", True, None, 500),
    ("openai", Fault.unavailable(), False, "provider_overloaded", True, None, 503),
    ("openai", Fault.overloaded(), False, "provider_overloaded", True, None, 529),
    ("openai", Fault.stream_overloaded(), True, "provider_overloaded", True, None, None),
    ("openai", Fault.drop(), False, "provider_connection_lost", True, None, None),
    ("openai", Fault.cut_stream(), True, "provider_connection_lost", True, None, None),
    ("anthropic", Fault.rate_limited(retry_after=7), False, "provider_rate_limited", True, 7000,
     429),
    ("anthropic", Fault.insufficient_quota(), False, "provider_quota_exceeded", False, None, 400),
    ("anthropic", Fault.payment_required(), False, "provider_quota_exceeded", False, None, 402),
    ("anthropic", Fault.unauthorized(), False, "provider_auth_failed", False, None, 401),
    ("anthropic", Fault.forbidden(), False, "provider_permission_denied", False, None, 403),
    ("anthropic", Fault.model_not_found(), False, "provider_model_not_found", False, None, 404),
    ("anthropic", Fault.context_too_long(), False, "provider_context_too_long", False, None, 400),
    ("anthropic", Fault.content_policy(), False, "provider_content_filtered", False, None, 400),
    ("anthropic", Fault.server_error(), False, "provider_server_error", True, None, 500),
    ("anthropic", Fault.unavailable(), False, "provider_overloaded", True, None, 503),
    ("anthropic", Fault.overloaded(), False, "provider_overloaded", True, None, 529),
    ("anthropic", Fault.stream_overloaded(), True, "provider_overloaded", True, None, 200),
    ("anthropic", Fault.drop(), False, "provider_connection_lost", True, None, None),
    ("anthropic", Fault.cut_stream(), True, "provider_connection_lost", True, None, None),
    ("google", Fault.rate_limited(retry_delay="38s"), False, "provider_rate_limited", True, 38000,
     429),
    ("google", Fault.insufficient_quota(), False, "provider_quota_exceeded", False, None, 429),
    ("google", Fault.payment_required(), False, "provider_quota_exceeded", False, None, 402),
    ("google", Fault.unauthorized(), False, "provider_auth_failed", False, None, 400),
    ("google", Fault.forbidden(), False, "provider_permission_denied", False, None, 403),
    ("google", Fault.model_not_found(), False, "provider_model_not_found", False, None, 404),
    ("google", Fault.context_too_long(), False, "provider_context_too_long", False, None, 400),
    ("google", Fault.server_error(), False, "provider_server_error", True, None, 500),
    ("google", Fault.unavailable(), False, "provider_overloaded", True, None, 503),
    ("google", Fault.overloaded(), False, "provider_overloaded", True, None, 529),
    ("google", Fault.stream_overloaded(), True, "provider_overloaded", True, None, 503),
    ("google", Fault.drop(), False, "provider_connection_lost", True, None, None),
    ("google", Fault.cut_stream(), True, "provider_connection_lost", True, None, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("sdk", "fault", "stream", "code", "retryable", "retry_after_ms", "status"),
    CASES,
    ids=[f"{c[0]}-{c[1].name}{'-stream' if c[2] else ''}" for c in CASES],
)
def test_sdk_against_the_fake_provider_and_sdk_error(
    fake: FakeProvider,
    sdk: str,
    fault: Fault,
    stream: bool,
    code: str,
    retryable: bool,
    retry_after_ms: int | None,
    status: int | None,
) -> None:
    fake.fail(fault)
    online = raised(lambda: CALLS[sdk](fake, stream))
    assert [r.fault for r in fake.requests] == [fault.name]
    # The same failure without the server: the same exception, word for word.
    offline = sdk_error(sdk, fault, stream=stream, model=MODELS[sdk])  # type: ignore[arg-type]
    assert (type(offline), str(offline)) == (type(online), str(online))
    for error in (online, offline):
        detail = rc.classify(error)
        assert (detail.code, detail.retryable, detail.retry_after_ms, detail.status,
                detail.source) == (code, retryable, retry_after_ms, status, sdk)  # fmt: skip


def test_sdk_error_turns_a_hang_into_the_sdks_timeout() -> None:
    errors = {sdk: sdk_error(sdk, Fault.hang()) for sdk in ("openai", "anthropic", "google")}  # type: ignore[arg-type]
    assert [type(e).__name__ for e in errors.values()] == [
        "APITimeoutError", "APITimeoutError", "ReadTimeout",
    ]  # fmt: skip
    assert {sdk: rc.classify(e).code for sdk, e in errors.items()} == dict.fromkeys(
        errors, "provider_timeout"
    )


def test_sdk_error_refuses_what_is_not_an_error() -> None:
    with pytest.raises(ValueError, match="google answers 'content_policy' with success"):
        sdk_error("google", Fault.content_policy())
    with pytest.raises(ValueError, match="unknown sdk 'mistral'"):
        sdk_error("mistral", Fault.overloaded())  # type: ignore[arg-type]


@pytest.mark.parametrize("sdk", ["openai", "anthropic", "google"])
def test_a_hang_past_the_client_timeout_is_a_provider_timeout(fake: FakeProvider, sdk: str) -> None:
    fake.fail(Fault.hang(5))
    detail = rc.classify(raised(lambda: CALLS[sdk](fake, False, timeout=0.5)))
    assert (detail.code, detail.retryable, detail.source) == ("provider_timeout", True, sdk)


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_nothing_listening_is_unreachable(sdk: str) -> None:
    port = free_port()
    client: Any
    if sdk == "openai":
        client = openai.OpenAI(api_key="x", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    else:
        client = anthropic.Anthropic(
            api_key="x", base_url=f"http://127.0.0.1:{port}", max_retries=0
        )
    detail = rc.classify(raised(client.models.list))
    assert (detail.code, detail.retryable, detail.details["phase"]) == (
        "provider_unreachable", True, "connect",
    )  # fmt: skip


def test_the_request_id_and_upstream_type_reach_the_detail(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded())
    detail = rc.classify(raised(lambda: CALLS["anthropic"](fake, False)))
    assert detail.details["request_id"] == "req_fake_0001"
    assert detail.details["error_type"] == "overloaded_error"


def test_a_fault_for_the_first_request_only_lets_the_retry_succeed(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded(), times=1)
    client = anthropic.Anthropic(api_key="x", base_url=fake.url, max_retries=0)
    run = rc.retry(attempts=3, sleep=lambda _: None)
    message = run.call(client.messages.create, model="claude-opus-4-8", max_tokens=64,
                       messages=MESSAGES)  # fmt: skip
    assert message.content[0].text == "Hello from FakeProvider."  # type: ignore[union-attr]
    assert [r.fault for r in fake.requests] == ["overloaded", None]


# --- litellm: where it is wrong, we are right -------------------------------------------


def _litellm(fake: FakeProvider, model: str) -> None:
    base = fake.openai_url if model.startswith("openai/") else fake.url
    litellm.completion(model=model, messages=MESSAGES, api_base=base, api_key="sk-test",
                       num_retries=0, max_retries=0)  # fmt: skip


@pytest.mark.parametrize(
    ("model", "fault", "code", "status", "litellm_class"),
    [
        ("openai/gpt-4o", Fault.insufficient_quota(), "provider_quota_exceeded", 429,
         "RateLimitError"),
        ("openai/gpt-4o", Fault.rate_limited(retry_after=3), "provider_rate_limited", 429,
         "RateLimitError"),
        ("openai/gpt-4o", Fault.context_too_long(), "provider_context_too_long", 400,
         "ContextWindowExceededError"),
        ("anthropic/claude-opus-4-8", Fault.overloaded(), "provider_overloaded", 529,
         "InternalServerError"),
        ("anthropic/claude-opus-4-8", Fault.insufficient_quota(), "provider_quota_exceeded", 400,
         "BadRequestError"),
    ],
)  # fmt: skip
def test_litellm_against_the_fake_provider(
    fake: FakeProvider, model: str, fault: Fault, code: str, status: int, litellm_class: str
) -> None:
    fake.fail(fault, times=None)
    error = raised(lambda: _litellm(fake, model))
    assert type(error).__name__ == litellm_class  # what litellm itself says
    detail = rc.classify(error)
    assert (detail.code, detail.status) == (code, status)


# --- pydantic-ai over the real SDKs ------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "fault", "code", "retry_after_ms", "status"),
    [
        ("openai", Fault.insufficient_quota(), "provider_quota_exceeded", None, 429),
        ("openai", Fault.rate_limited(retry_after=3), "provider_rate_limited", 3000, 429),
        ("openai", Fault.context_too_long(), "provider_context_too_long", None, 400),
        ("anthropic", Fault.overloaded(), "provider_overloaded", None, 529),
        ("anthropic", Fault.unauthorized(), "provider_auth_failed", None, 401),
    ],
    ids=lambda value: getattr(value, "name", None) or str(value),
)
def test_pydantic_ai_against_the_fake_provider(
    fake: FakeProvider,
    provider: str,
    fault: Fault,
    code: str,
    retry_after_ms: int | None,
    status: int,
) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    model: Any
    if provider == "openai":
        client = openai.AsyncOpenAI(api_key="x", base_url=fake.openai_url, max_retries=0)
        model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
    else:
        aclient = anthropic.AsyncAnthropic(api_key="x", base_url=fake.url, max_retries=0)
        model = AnthropicModel(
            "claude-opus-4-8", provider=AnthropicProvider(anthropic_client=aclient)
        )
    fake.fail(fault)
    detail = rc.classify(raised(lambda: Agent(model).run_sync("hi") and None))
    assert (detail.code, detail.retry_after_ms, detail.status, detail.source) == (
        code, retry_after_ms, status, provider,
    )  # fmt: skip


# --- claude-agent-sdk ----------------------------------------------------------------------


async def test_claude_agent_sdk_missing_cli_and_failing_cli(tmp_path: Any) -> None:
    from claude_agent_sdk import ClaudeAgentOptions, query

    async def first(options: Any) -> None:
        async for _ in query(prompt="hi", options=options):
            break

    missing = ClaudeAgentOptions(cli_path=str(tmp_path / "no-such-claude"))
    try:
        await first(missing)
    except Exception as exc:
        detail = rc.classify(exc)
    else:
        raise AssertionError("no error")
    assert (detail.code, detail.source) == ("cli_not_found", "claude")
    assert detail.fix_command == "npm install -g @anthropic-ai/claude-code"

    script = tmp_path / "claude"
    # Reads the SDK's first request (so the exit is seen as an exit, not a race), then fails.
    script.write_text("#!/bin/sh\nread line\necho 'boom' >&2\nexit 3\n")
    script.chmod(0o755)
    try:
        await first(ClaudeAgentOptions(cli_path=str(script)))
    except Exception as exc:
        detail = rc.classify(exc)
    else:
        raise AssertionError("no error")
    assert (detail.code, detail.source, detail.details) == (
        "cli_crashed",
        "claude",
        {"exit_code": 3},
    )

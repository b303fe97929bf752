"""The server side on real processes: the example server (tests/support/mcp_example.py, every
tool failure's text tainted with a credential, a path and `<script>`) as a stdio subprocess
and under uvicorn over streamable HTTP, MCPServer and FastMCP, read by the `mcp` client and
by fastmcp's. Exact codes, waits and texts; nothing of the exception's text anywhere."""

from __future__ import annotations

from typing import Any

import pytest

import recoverable as rc

from .observe import (
    CASES,
    Seen,
    http_server,
    observe_fastmcp,
    observe_mcp,
    server_args,
    stdio_fastmcp,
    stdio_mcp,
)

REBUILD = "python examples/mcp_server.py --rebuild-index"
AGAIN = "call this tool again"
STOP = "Do not call this tool again for this request; tell the user what happened."


def _retry(code: str, seconds: int) -> str:
    sentence = rc.codes[code].user_message
    return f"{code}: {sentence} Wait {seconds} s, then {AGAIN} with the same arguments."


def _fix(code: str) -> str:
    row = rc.codes[code]
    return (
        f"{code}: {row.user_message} Do not call this tool again until this is done; tell the "
        f"user: {row.fix_required}."
    )


# case -> (code, retryable, retry_after_ms, fix_required, fix_command, the model's text)
EXPECTED: dict[str, tuple[str, bool, int | None, str | None, str | None, str]] = {
    "rate_limited": (
        "provider_rate_limited", True, 7000, None, None, _retry("provider_rate_limited", 7)
    ),
    "insufficient_quota": (
        "provider_quota_exceeded", False, None,
        "Add credit or raise the quota of the provider account, or use another provider",
        None, _fix("provider_quota_exceeded"),
    ),
    "unauthorized": (
        "provider_auth_failed", False, None,
        "Configure a valid API key or log in to the provider again", None,
        _fix("provider_auth_failed"),
    ),
    "context_too_long": (
        "provider_context_too_long", False, None,
        "Shorten the input or use a model with a larger context window", None,
        _fix("provider_context_too_long"),
    ),
    "overloaded": (
        "provider_overloaded", True, 1000, None, None, _retry("provider_overloaded", 1)
    ),
    "timeout": ("provider_timeout", True, 1000, None, None, _retry("provider_timeout", 1)),
    "connection_refused": (
        "provider_unreachable", True, 1000, None, None, _retry("provider_unreachable", 1)
    ),
    "subprocess": (
        "tool_execution_failed", False, None, None, None,
        f"tool_execution_failed: {rc.codes['tool_execution_failed'].user_message} {STOP}",
    ),
    "registered_fix": (
        "mcp_demo_index_stale", False, None, "Rebuild the notes index", REBUILD,
        f"mcp_demo_index_stale: The notes index is out of date. Run `{REBUILD}`, then {AGAIN} "
        "once.",
    ),
    "bad_arguments": (
        "tool_input_invalid", False, None, "Correct the tool input", None,
        f"tool_input_invalid: {rc.codes['tool_input_invalid'].user_message} Correct the "
        f"arguments, then {AGAIN}. Arguments to correct: fault, question.",
    ),
}  # fmt: skip


def _check_failure(name: str, seen: Seen) -> None:
    code, retryable, wait, fix_required, fix_command, text = EXPECTED[name]
    assert seen.is_error is True, name
    assert seen.text == text, name
    assert seen.structured is not None
    assert list(seen.structured) == ["ok", "data", "error", "warnings", "meta"]
    assert seen.structured["ok"] is False
    error: dict[str, Any] = seen.structured["error"]
    assert (error["code"], error["retryable"], error["retry_after_ms"]) == (
        code.upper(),
        retryable,
        wait,
    ), name
    assert (error["fix_required"], error["fix_command"]) == (fix_required, fix_command), name
    assert error["message"] == error["user_message"], name  # never the developer text
    assert (error["cause"], error["details"], error["source"]) == (None, {}, None), name
    assert isinstance(seen.structured["meta"]["duration_ms"], int)


def check(seen: dict[str, Seen]) -> None:
    """Every case as the integration answers it, and no leak anywhere."""
    assert set(seen) == set(CASES)
    for name in EXPECTED:
        _check_failure(name, seen[name])
    assert seen["unknown_tool"] == Seen(
        error_code=-32602, error_message="Unknown tool: this server lists no tool by that name."
    )
    assert seen["own_mcp_error"] == Seen(
        error_code=-32005,
        error_message="Quota service is disabled",
        error_data={"service": "quota"},
    )
    assert seen["success"].is_error is False
    assert seen["success"].text == "Hello from FakeProvider."
    assert {name: each.leaks() for name, each in seen.items() if each.leaks()} == {}


SERVERS = [pytest.param(False, id="MCPServer"), pytest.param(True, id="FastMCP")]


@pytest.mark.parametrize("fastmcp", SERVERS)
async def test_over_stdio_with_the_mcp_client(fastmcp: bool) -> None:
    check(await observe_mcp(stdio_mcp(server_args(fastmcp=fastmcp))))


@pytest.mark.parametrize("fastmcp", SERVERS)
async def test_over_stdio_in_the_2025_11_25_protocol(fastmcp: bool) -> None:
    check(await observe_mcp(stdio_mcp(server_args(fastmcp=fastmcp)), mode="legacy"))


@pytest.mark.parametrize("fastmcp", SERVERS)
async def test_over_stdio_with_the_fastmcp_client(fastmcp: bool) -> None:
    check(await observe_fastmcp(stdio_fastmcp(server_args(fastmcp=fastmcp))))


@pytest.mark.parametrize("fastmcp", SERVERS)
async def test_over_streamable_http_under_uvicorn_with_both_clients(fastmcp: bool) -> None:
    with http_server(server_args(fastmcp=fastmcp)) as url:
        check(await observe_mcp(url))
        check(await observe_fastmcp(url))


async def test_masking_changes_nothing_the_model_reads() -> None:
    check(await observe_mcp(stdio_mcp(server_args(fastmcp=True, mask=True))))

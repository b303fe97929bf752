"""`agents.run` with the real Claude Code, Codex and Gemini CLIs against FakeProvider.

The whole path a user takes: discovery of nothing (the binary is given), argv, the process
runner, the parser, the outcome. Each case asserts the exact code, retryable, the events
seen, and that no process of the run is left.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from recoverable import agents
from recoverable.testing import FakeProvider, Fault, Reply, cli_setup

from ..support.cli import (
    FAILURES,
    TOOL_ARGS,
    TOOL_CALLS,
    TOOL_OUTPUT,
    cli_bin_dir,
    find_cli,
    processes_left_with,
    processes_with,
)

# The CLIs that report their own retries on stdout (claude's api_retry, codex's
# "Reconnecting..."); gemini's go to stderr only.
RETRIES_ON_STDOUT = ("claude", "codex")


async def _run(
    cli: str,
    tmp_path: Path,
    *,
    fault: Fault | None = None,
    times: int | None = None,
    reply: Reply | None = None,
    retries: int = 0,
    extra: tuple[str, ...] = (),
    during: Callable[[FakeProvider, Path, asyncio.Event], Any] | None = None,
    settings: dict[str, Any] | None = None,
    **options: Any,
) -> tuple[agents.RunResult, FakeProvider]:
    binary = find_cli(cli, cli_bin_dir())
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    with FakeProvider(reply=reply) as fake:
        if fault is not None:
            fake.fail(fault, times=times)
        setup = cli_setup(cli, fake, home, max_retries=retries)  # type: ignore[arg-type]
        for path in setup.files if settings else ():  # merge more settings into the file
            merged = json.loads(Path(path).read_text())
            for key, value in (settings or {}).items():
                merged[key] = {**merged.get(key, {}), **value}
            Path(path).write_text(json.dumps(merged))
        cancel = asyncio.Event()
        run = agents.run(
            "Say hello.", cli, executable=binary, env=setup.environ(), inherit_env=False,
            extra_args=(*setup.args, *extra), cwd=str(work), cancel=cancel,
            **{"idle_timeout": 60.0, "timeout": 90.0, **options},
        )  # fmt: skip
        if during is None:
            result = await run
        else:
            task = asyncio.ensure_future(run)
            await during(fake, home, cancel)
            result = await task
    leftover = processes_left_with(str(home).encode())
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    assert leftover == [], "the run left processes behind"
    return result, fake


def _types(result: agents.RunResult) -> list[str]:
    return [event.type for event in result.events]


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
async def test_a_text_reply(cli: str, tmp_path: Path) -> None:
    result, fake = await _run(cli, tmp_path)
    assert (result.success, result.text, result.error, result.exit_code) == (
        True, "Hello from FakeProvider.", None, 0,
    )  # fmt: skip
    assert result.session_id
    assert _types(result).count("text_delta") >= 1
    assert len(fake.requests) == 1


# TOOL_ARGS as run options: Claude's allow-list, Gemini's yolo mode (`--flag=value` forms).
TOOL_OPTIONS: dict[str, dict[str, Any]] = {
    "claude": {"allowed_tools": ("Bash(echo *)",)},
    "codex": {},
    "gemini": {"permission_mode": "yolo"},
}


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
async def test_a_tool_call(cli: str, tmp_path: Path) -> None:
    name, arguments = TOOL_CALLS[cli]
    reply = Reply.tool_call(name, arguments, then="The tool printed hi-from-tool.")
    result, fake = await _run(cli, tmp_path, reply=reply, **TOOL_OPTIONS[cli])
    assert result.success is True
    assert result.text.endswith("The tool printed hi-from-tool.")
    starts = [e for e in result.events if isinstance(e, agents.ToolStart)]
    ends = [e for e in result.events if isinstance(e, agents.ToolEnd)]
    assert len(starts) == 1
    assert len(ends) == 1
    assert ends[0].success is True
    assert TOOL_OUTPUT in (ends[0].output or "")
    assert len(fake.requests) == 2


# A value that starts with a dash reaches the CLI as a value (`--model=-x`), not as a flag.
DASHED = "-fake-model"


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
async def test_a_dash_leading_model_reaches_the_provider(cli: str, tmp_path: Path) -> None:
    result, fake = await _run(cli, tmp_path, model=DASHED)
    assert (result.success, result.text) == (True, "Hello from FakeProvider.")
    assert [request.model for request in fake.requests] == [DASHED]


@pytest.mark.parametrize("cli", ["claude", "codex"])  # Gemini has no flag for it
async def test_a_dash_leading_system_prompt_reaches_the_provider(cli: str, tmp_path: Path) -> None:
    result, fake = await _run(cli, tmp_path, system_prompt="-answer in one line")
    assert result.success is True
    assert len(fake.requests) == 1
    assert b"-answer in one line" in fake.requests[0].body


@pytest.mark.parametrize(
    ("cli", "fault", "code", "retryable"),
    [(cli, *case) for cli in agents.CLI_NAMES for case in FAILURES[cli]],
    ids=[f"{cli}-{case[0].name}" for cli in agents.CLI_NAMES for case in FAILURES[cli]],
)
async def test_provider_failures(
    cli: str, fault: Fault, code: str, retryable: bool, tmp_path: Path
) -> None:
    result, _ = await _run(cli, tmp_path, fault=fault)
    assert result.success is False
    assert result.error is not None
    assert (result.error.code, result.error.retryable, result.error.source) == (
        code, retryable, cli,
    )  # fmt: skip
    failures = [
        e for e in result.events if isinstance(e, agents.ErrorEvent) and e.severity == "error"
    ]
    assert failures
    assert failures[-1].detail.code == code  # the stream carried the failure as an event


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
async def test_a_429_then_success_through_the_clis_own_retry(cli: str, tmp_path: Path) -> None:
    result, fake = await _run(cli, tmp_path, fault=Fault.rate_limited(retry_after=1), times=1,
                              retries=1)  # fmt: skip
    assert (result.success, result.text) == (True, "Hello from FakeProvider.")
    warnings = [e for e in result.events if isinstance(e, agents.ErrorEvent)]
    assert all(event.severity == "warning" for event in warnings)
    if cli in RETRIES_ON_STDOUT:
        assert [e.detail.code for e in warnings if e.is_retry] == ["provider_rate_limited"]
    assert [r.fault for r in fake.requests] == ["rate_limited", None]


@pytest.mark.parametrize("cli", ["claude", "gemini"])  # Codex has no turn limit
async def test_max_turns(cli: str, tmp_path: Path) -> None:
    name, arguments = TOOL_CALLS[cli]
    options: dict[str, Any] = {"max_turns": 1} if cli == "claude" else {}
    # Gemini has no flag for it: its limit is the setting model.maxSessionTurns.
    settings = {"model": {"maxSessionTurns": 1}} if cli == "gemini" else None
    result, _ = await _run(cli, tmp_path, reply=Reply.tool_call(name, arguments),
                           extra=TOOL_ARGS[cli], settings=settings, **options)  # fmt: skip
    assert result.error is not None
    assert (result.error.code, result.error.retryable) == ("run_max_turns", False)


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
async def test_bad_flags(cli: str, tmp_path: Path) -> None:
    result, fake = await _run(cli, tmp_path, extra=("--bogus-flag",))
    assert result.error is not None
    assert (result.error.code, result.error.retryable) == ("cli_invalid_arguments", False)
    assert fake.requests == []


async def _until_requested(fake: FakeProvider) -> None:
    for _ in range(600):
        if fake.requests:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the CLI never reached the fake provider")


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
async def test_our_cancel_mid_run(cli: str, tmp_path: Path) -> None:
    async def cancel_it(fake: FakeProvider, home: Path, cancel: asyncio.Event) -> None:
        await _until_requested(fake)
        cancel.set()

    result, _ = await _run(cli, tmp_path, fault=Fault.hang(), during=cancel_it)
    assert result.error is not None
    assert (result.error.code, result.error.retryable, result.error.exit_code) == (
        "run_cancelled", False, 130,
    )  # fmt: skip


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
async def test_our_idle_deadline(cli: str, tmp_path: Path) -> None:
    result, _ = await _run(cli, tmp_path, fault=Fault.hang(), idle_timeout=3.0)
    assert result.error is not None
    assert (result.error.code, result.error.retryable) == ("run_timeout", True)
    assert result.error.details["deadline"] == "idle"


def _leads_a_group(pid: int) -> bool:
    """False too for a process gone since it was listed (a CLI's short-lived helper)."""
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
async def test_a_kill_from_outside(cli: str, tmp_path: Path) -> None:
    async def kill_it(fake: FakeProvider, home: Path, cancel: asyncio.Event) -> None:
        await _until_requested(fake)
        leaders = [pid for pid in processes_with(str(home).encode()) if _leads_a_group(pid)]
        assert len(leaders) == 1
        os.kill(leaders[0], signal.SIGKILL)

    result, _ = await _run(cli, tmp_path, fault=Fault.hang(), during=kill_it)
    assert result.error is not None
    assert (result.error.code, result.signal, result.exit_code) == ("cli_killed", 9, None)


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
async def test_resume_a_session(cli: str, tmp_path: Path) -> None:
    binary = find_cli(cli, cli_bin_dir())
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    with FakeProvider() as fake:
        setup = cli_setup(cli, fake, home)  # type: ignore[arg-type]
        common: dict[str, Any] = {
            "executable": binary, "env": setup.environ(), "inherit_env": False,
            "extra_args": setup.args, "cwd": str(work), "timeout": 90.0,
        }  # fmt: skip
        first = await agents.run("Remember the word banana.", cli, **common)
        second = await agents.run("Which word?", cli, resume=first.session_id, **common)
        resumed = fake.requests[-1].body
    assert (first.success, second.success) == (True, True)
    assert second.session_id == first.session_id
    assert b"banana" in resumed  # the earlier turn went back to the provider
    assert processes_left_with(str(home).encode()) == []

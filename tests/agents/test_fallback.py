"""Runs that fall back across CLIs (`cli=["claude", "codex", "gemini"]`), with the real CLIs
against FakeProvider, and `RunResult.raise_for_error` composing with `rc.retry` and
`rc.fallback`. The decision is the registry's `fallback` column, checked row by row."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

import recoverable as rc
from recoverable import agents
from recoverable.agents._fallback import FallbackGate
from recoverable.testing import FakeProvider, Fault, Reply, cli_setup

from ..support.cli import (
    TOOL_ARGS,
    TOOL_CALLS,
    cli_bin_dir,
    find_cli,
    processes_left_with,
)

ORDER = ["claude", "codex", "gemini"]


def _options(fake: FakeProvider, home: Path, **more: Any) -> dict[str, Any]:
    """One set of options for every CLI of the order: the merged setup, the CLIs on PATH."""
    setup = cli_setup(ORDER, fake, home, max_retries=0)
    env = setup.environ()
    env["PATH"] = f"{Path(find_cli('claude', cli_bin_dir())).parent}:{env.get('PATH', '')}"
    work = home / "work"
    work.mkdir(parents=True, exist_ok=True)
    return {"env": env, "inherit_env": False, "cwd": str(work), "idle_timeout": 60.0,
            "timeout": 90.0, **more}  # fmt: skip


def _no_leftovers(home: Path) -> None:
    leftover = processes_left_with(str(home).encode())
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    assert leftover == [], "the run left processes behind"


def _assert_fell_back_to_codex(result: agents.RunResult, fake: FakeProvider) -> None:
    assert (result.success, result.cli, result.error) == (True, "codex", None)
    assert result.text == "Hello from FakeProvider."
    [failure] = result.failures
    assert (failure.code, failure.retryable, failure.source) == (
        "provider_quota_exceeded", False, "claude",
    )  # fmt: skip
    assert [(r.api, r.fault) for r in fake.requests] == [
        ("anthropic", "insufficient_quota"), ("openai_responses", None),
    ]  # fmt: skip


async def test_quota_on_the_first_cli_moves_to_the_second(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        fake.fail(Fault.insufficient_quota(), times=1)
        events = [e async for e in agents.stream("Say hello.", ORDER, **_options(fake, tmp_path))]
    _no_leftovers(tmp_path)
    done = events[-1]
    assert isinstance(done, agents.Done)
    assert [type(e) for e in events].count(agents.Done) == 1
    _assert_fell_back_to_codex(done.result, fake)
    # Claude's deciding error reached the caller as a warning naming the next CLI.
    [left] = [e for e in events if isinstance(e, agents.ErrorEvent)]
    assert (left.severity, left.detail.code, left.detail.details["fallback_to"]) == (
        "warning", "provider_quota_exceeded", "codex",
    )  # fmt: skip
    assert done.result.to_dict()["cli"] == "codex"
    assert done.result.to_dict()["failures"][0]["code"] == "provider_quota_exceeded"


def test_the_sync_forms_fall_back_too(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        fake.fail(Fault.insufficient_quota(), times=1)
        result = agents.run_sync("Say hello.", ORDER, **_options(fake, tmp_path / "a"))
        _assert_fell_back_to_codex(result, fake)
        fake.reset()
        fake.fail(Fault.insufficient_quota(), times=1)
        events = list(agents.stream_sync("Say hello.", ORDER, **_options(fake, tmp_path / "b")))
        assert isinstance(events[-1], agents.Done)
        _assert_fell_back_to_codex(events[-1].result, fake)
    _no_leftovers(tmp_path)


def test_when_every_cli_fails_the_last_error_keeps_the_others_in_its_causes(
    tmp_path: Path,
) -> None:
    with FakeProvider() as fake:
        fake.fail(Fault.insufficient_quota(), times=None)
        result = agents.run_sync("Say hello.", ORDER, **_options(fake, tmp_path))
    _no_leftovers(tmp_path)
    assert (result.success, result.cli) == (False, "gemini")
    assert [(f.source, f.code) for f in result.failures] == [
        ("claude", "provider_quota_exceeded"), ("codex", "provider_quota_exceeded"),
    ]  # fmt: skip
    assert result.error is not None
    chain = [result.error.source]
    cause = result.error.cause
    while isinstance(cause, rc.ErrorDetail):
        chain.append(cause.source)
        cause = cause.cause
    assert chain == ["gemini", "codex", "claude"]
    assert [r.api for r in fake.requests] == ["anthropic", "openai_responses", "gemini"]
    with pytest.raises(rc.RecoverableError) as raised:
        result.raise_for_error()
    assert raised.value.detail.code == "provider_quota_exceeded"


def test_a_failure_no_other_cli_could_fix_does_not_move_on(tmp_path: Path) -> None:
    # A flag Claude rejects is the caller's mistake (cli_invalid_arguments: no fallback).
    with FakeProvider() as fake:
        options = _options(fake, tmp_path, extra_args=("--bogus-flag",))
        result = agents.run_sync("Say hello.", ORDER, **options)
    _no_leftovers(tmp_path)
    assert result.error is not None
    assert (result.cli, result.error.code, result.failures) == (
        "claude",
        "cli_invalid_arguments",
        (),
    )
    assert fake.requests == []


def test_no_fallback_once_a_tool_has_run(tmp_path: Path) -> None:
    name, arguments = TOOL_CALLS["claude"]
    with FakeProvider(reply=Reply.tool_call(name, arguments)) as fake:
        options = _options(fake, tmp_path, extra_args=TOOL_ARGS["claude"])
        for event in agents.stream_sync("Say hello.", ["claude", "codex"], **options):
            if isinstance(event, agents.ToolStart):  # the next request (the tool's result) fails
                fake.fail(Fault.insufficient_quota(), times=None)
            last = event
    _no_leftovers(tmp_path)
    assert isinstance(last, agents.Done)
    result = last.result
    assert result.error is not None
    assert (result.cli, result.error.code, result.failures) == (
        "claude", "provider_quota_exceeded", (),
    )  # fmt: skip
    assert {r.api for r in fake.requests} == {"anthropic"}


def test_raise_for_error_composes_with_retry_and_fallback(tmp_path: Path) -> None:
    rc.testing.set_testing(True)  # no real waits
    try:
        with FakeProvider() as fake:
            options = _options(fake, tmp_path)
            # Codex leaves a plain 429 to us: rc.retry makes the second call.
            fake.fail(Fault.rate_limited(), times=1)
            answer = rc.retry(attempts=2).call(
                lambda: agents.run_sync("Say hello.", "codex", **options).raise_for_error()
            )
            assert (answer.success, answer.cli) == (True, "codex")
            assert [r.fault for r in fake.requests] == ["rate_limited", None]
            fake.reset()
            fake.fail(Fault.unauthorized(), times=1)
            chosen = rc.fallback(
                {
                    name: lambda name=name: agents.run_sync(
                        "Say hello.", name, **options
                    ).raise_for_error()
                    for name in ("gemini", "claude")
                }
            )
            assert (chosen.name, chosen.value.cli) == ("claude", "claude")
            assert [f.code for f in chosen.failures] == ["provider_auth_failed"]
    finally:
        rc.testing.set_testing(False)
    _no_leftovers(tmp_path)


# -- the decision, row by row (pure) ---------------------------------------------------------


@pytest.mark.parametrize("row", list(rc.codes), ids=lambda row: row.code)
def test_moving_on_is_the_registrys_fallback_column(row: Any) -> None:
    error = rc.ErrorDetail.create(row.code, "failed", source="claude")
    failures: list[rc.ErrorDetail] = []
    gate = FallbackGate(failures, "codex")
    out = gate.feed(agents.ErrorEvent(error))
    assert out == []  # the deciding error waits for Done
    out = gate.feed(agents.Done(agents.RunResult(False, error=error, cli="claude")))
    if row.fallback:
        assert (gate.finished, failures, len(out)) == (False, [error], 1)
        assert isinstance(out[0], agents.ErrorEvent) and out[0].severity == "warning"
    else:
        assert (gate.finished, failures) == (True, [])
        assert [type(e) for e in out] == [agents.ErrorEvent, agents.Done]
        assert isinstance(out[0], agents.ErrorEvent) and out[0].severity == "error"


def test_the_last_cli_of_the_order_never_moves_on() -> None:
    error = rc.ErrorDetail.create("provider_overloaded", "busy", source="gemini")
    earlier = rc.ErrorDetail.create("provider_quota_exceeded", "no credit", source="claude")
    gate = FallbackGate([earlier], None)
    [done] = gate.feed(agents.Done(agents.RunResult(False, error=error, cli="gemini")))
    assert isinstance(done, agents.Done) and gate.finished
    assert done.result.failures == (earlier,)
    assert done.result.error is not None and done.result.error.cause == earlier


def test_the_command_falls_back_along_an_order(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    env = {**os.environ, "HOME": str(tmp_path)}
    env["PATH"] = f"{Path(find_cli('claude', cli_bin_dir())).parent}:{env.get('PATH', '')}"
    argv = [sys.executable, "-m", "recoverable", "run", "Say hello", "--cli", "claude,codex",
            "--fake", "insufficient_quota", "--times", "1"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=120, check=False)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "Hello from FakeProvider.\n")
    assert done.stderr == (
        "[warning] claude failed: provider_quota_exceeded - Credit balance is too low;"
        " trying codex\n"
    )
    done = subprocess.run([*argv, "--json"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120, check=False)  # fmt: skip
    result = json.loads(done.stdout.splitlines()[-1])["result"]
    assert (result["success"], result["cli"]) == (True, "codex")
    assert [f["code"] for f in result["failures"]] == ["provider_quota_exceeded"]


# -- what a silent Gemini waits for: its own retries, read from stderr as they come ----------


def test_gemini_retries_reach_the_caller_as_they_happen(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        fake.fail(Fault.rate_limited(retry_delay="1s"), times=1)
        setup = cli_setup("gemini", fake, tmp_path, max_retries=1)
        env = setup.environ()
        env["PATH"] = f"{Path(find_cli('gemini', cli_bin_dir())).parent}:{env.get('PATH', '')}"
        events = list(agents.stream_sync("Say hello.", "gemini", env=env, inherit_env=False,
                                         cwd=str(tmp_path), timeout=90.0))  # fmt: skip
    _no_leftovers(tmp_path)
    retries = [e for e in events if isinstance(e, agents.ErrorEvent) and e.is_retry]
    assert [(e.detail.code, e.detail.retryable, e.detail.source) for e in retries] == [
        ("provider_rate_limited", True, "gemini"),
    ]  # the code Gemini's final error would get for the same text (a per-minute quota)
    wait_ms = retries[0].detail.details["retry_delay_ms"]
    assert retries[0].detail.message == (
        f"gemini retries after provider_rate_limited in {wait_ms} ms, attempt 1"
    )
    done = events[-1]
    assert isinstance(done, agents.Done) and done.result.success
    assert events.index(retries[0]) < events.index(done)


def test_the_gemini_stderr_retry_lines_are_read_strictly() -> None:
    from recoverable.agents import _gemini

    state = _gemini.new_state()
    [event] = _gemini.stderr_line(
        "Attempt 2 failed with status 503. Retrying with backoff... _ApiError: {...}", state
    )
    assert isinstance(event, agents.ErrorEvent) and event.is_retry
    assert (event.detail.code, event.detail.details["attempt"]) == ("provider_overloaded", 2)
    lines = [
        "Attempt 3 failed: The model is overloaded. Please try again later.",
        "Suggested retry after 1s.. Retrying after 5733ms...",
    ]
    assert _gemini.stderr_line(lines[0], state) == []
    [event] = _gemini.stderr_line(lines[1], state)
    assert (event.detail.code, event.detail.details["retry_delay_ms"]) == (
        "provider_overloaded", 5733,
    )  # fmt: skip
    not_retries = (
        "  Attempt 2 failed with status 503. Retrying",
        "Attempt x failed",
        "Attempt 1 failed with status 4290. Retrying",
        "at Attempt (file.js:3)",
        "Retrying after 10ms...",  # no attempt before it
    )
    for line in not_retries:
        assert _gemini.stderr_line(line, _gemini.new_state()) == []

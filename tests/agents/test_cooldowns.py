"""`agents.run(..., cooldowns=...)` with the real CLIs against FakeProvider: a quota failure
stops the CLI's key, so the next run skips that CLI without spending a request; a quiet key
is waited out when short, and fails that CLI fast (with `retry_after_ms`) when long."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import recoverable as rc
from recoverable import agents
from recoverable.agents._cooldown_gate import cli_gate
from recoverable.fleet._rules import GO
from recoverable.testing import FakeProvider, Fault

from .test_fallback import ORDER, _no_leftovers, _options


def _quiet(ms: int) -> rc.ErrorDetail:
    return rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=ms).detail


def test_a_quota_failure_stops_the_key_and_the_next_run_skips_that_cli(tmp_path: Path) -> None:
    fleet = rc.fleet.Cooldowns.memory()
    with FakeProvider() as fake:
        fake.fail(Fault.insufficient_quota(), times=1)
        first = agents.run_sync("Say hello.", ORDER, cooldowns=fleet, **_options(fake, tmp_path))
        assert (first.success, first.cli) == (True, "codex")
        claude = fleet.key(source="claude")
        assert claude.state().code == "provider_quota_exceeded"
        assert claude.quiet_ms() > 3_000_000  # the quota stop: long, for every process
        assert fleet.key(source="codex").quiet_ms() == 0  # a success records nothing to wait
        fake.reset()
        second = agents.run_sync("Say hello.", ORDER, cooldowns=fleet, **_options(fake, tmp_path))
        assert [r.api for r in fake.requests] == ["openai_responses"]  # Claude never started
    _no_leftovers(tmp_path)
    assert (second.success, second.cli, second.text) == (True, "codex", "Hello from FakeProvider.")
    [skipped] = second.failures
    assert (skipped.code, skipped.source, skipped.retryable) == (
        "provider_quota_exceeded", "claude", False,
    )  # fmt: skip
    assert skipped.details["cooldown"] == "stop"
    assert skipped.details["cooldown_key"] == "claude/*/*"


async def test_a_long_quiet_time_fails_the_cli_fast_with_the_time_left(tmp_path: Path) -> None:
    fleet = rc.fleet.Cooldowns.memory(max_wait_ms=0)
    fleet.key(source="claude").after_failure(_quiet(30_000), GO)
    with FakeProvider() as fake:
        options = _options(fake, tmp_path)
        alone = await agents.run("Say hello.", "claude", cooldowns=fleet, **options)
        assert fake.requests == []
        result = await agents.run(
            "Say hello.", ORDER, cooldowns={"claude": fleet.key("c")}, **options
        )
        assert [r.api for r in fake.requests] == ["anthropic"]  # another key: not quiet
    _no_leftovers(tmp_path)
    assert (alone.success, alone.cli, alone.exit_code) == (False, "claude", None)
    assert alone.error is not None
    assert (alone.error.code, alone.error.source) == ("provider_rate_limited", "claude")
    assert 29_000 < (alone.error.retry_after_ms or 0) <= 30_000
    assert (result.success, result.cli) == (True, "claude")


def test_a_short_quiet_time_is_waited_out_then_the_cli_runs(tmp_path: Path) -> None:
    fleet = rc.fleet.Cooldowns.memory()
    fleet.key(source="claude").after_failure(_quiet(600), GO)
    with FakeProvider() as fake:
        started = time.monotonic()
        events = list(
            agents.stream_sync("Say hello.", "claude", cooldowns=fleet, **_options(fake, tmp_path))
        )
        waited = time.monotonic() - started
        assert [r.api for r in fake.requests] == ["anthropic"]
    _no_leftovers(tmp_path)
    done = events[-1]
    assert isinstance(done, agents.Done)
    assert (done.result.success, done.result.cli) == (True, "claude")
    assert waited >= 0.5


def test_the_key_of_each_cli_and_bad_cooldowns() -> None:
    fleet = rc.fleet.Cooldowns.memory()
    assert cli_gate(None, "claude", None).key is None
    assert cli_gate(fleet, "claude", "opus").key.scope == "claude/opus/*"  # type: ignore[union-attr]
    mine = fleet.key("mine")
    assert cli_gate(mine, "codex", "x").key is mine
    assert cli_gate({"codex": mine}, "claude", None).key is None
    assert cli_gate(lambda name: mine if name == "gemini" else None, "gemini", None).key is mine
    with pytest.raises(TypeError, match="must return a Cooldowns or None"):
        cli_gate(lambda name: "claude", "claude", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="cooldowns= takes a Cooldowns"):
        cli_gate(42, "claude", None)  # type: ignore[arg-type]

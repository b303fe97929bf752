"""`recoverable run` and `recoverable doctor` as a user runs them, and the agents API surface."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import recoverable as rc
from recoverable import agents
from recoverable.agents._discovery import choose, inspect_cli
from recoverable.testing._cli_setup import DROP_PREFIXES as _DROP_PREFIXES

from ..support.cli import cli_bin_dir, find_cli


def _env(home: Path, with_clis: bool = True) -> dict[str, str]:
    """A clean environment: a throwaway HOME, no credentials; the CLIs on PATH if asked."""
    # The variables cli_setup drops too: credentials, endpoints, a CLI's own settings.
    keep = {
        key: value
        for key, value in os.environ.items()
        if not key.upper().startswith(_DROP_PREFIXES)
    }
    where = cli_bin_dir()
    path = "/usr/bin:/bin"
    if with_clis:
        path = f"{Path(find_cli('claude', where)).parent}:{os.path.dirname(sys.executable)}:{path}"
    return {**keep, "HOME": str(home), "PATH": path}


def _recoverable(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "recoverable", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120, check=False)  # fmt: skip


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
def test_run_fake_succeeds_with_the_real_cli(cli: str, tmp_path: Path) -> None:
    done = _recoverable("run", "Say hello", "--cli", cli, "--fake", env=_env(tmp_path),
                        cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello from FakeProvider."


def test_run_fake_fault_exits_with_the_codes_exit_code_and_prints_ndjson(tmp_path: Path) -> None:
    done = _recoverable("run", "Say hello", "--cli", "claude", "--fake", "insufficient_quota",
                        "--json", env=_env(tmp_path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 9
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "done"
    result = events[-1]["result"]
    assert (result["success"], result["error"]["code"], result["error"]["retryable"]) == (
        False, "provider_quota_exceeded", False,
    )  # fmt: skip
    assert any(e["type"] == "error" and e["severity"] == "error" for e in events)


def test_run_fake_retry_then_success_shows_the_retry(tmp_path: Path) -> None:
    done = _recoverable("run", "Say hello", "--cli", "claude", "--fake", "rate_limited",
                        "--times", "1", env=_env(tmp_path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0
    assert "retrying after provider_rate_limited" in done.stderr
    assert done.stdout.strip() == "Hello from FakeProvider."


def test_run_with_no_cli_installed_is_a_typed_failure(tmp_path: Path) -> None:
    done = _recoverable("run", "Say hello", "--cli", "auto", "--json",
                        env=_env(tmp_path, with_clis=False), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 4
    event = json.loads(done.stdout)
    assert event["detail"]["code"] == "cli_not_found"
    assert "Traceback" not in done.stdout + done.stderr


def test_run_a_missing_binary_names_the_install_command(tmp_path: Path) -> None:
    done = _recoverable("run", "Say hello", "--cli", "codex", env=_env(tmp_path, with_clis=False),
                        cwd=tmp_path)  # fmt: skip
    assert done.returncode == 4
    assert "run: npm install -g @openai/codex" in done.stderr


def test_doctor_json_envelope_without_credentials(tmp_path: Path) -> None:
    done = _recoverable("doctor", "--json", env=_env(tmp_path), cwd=tmp_path)
    envelope = json.loads(done.stdout)
    assert set(envelope) == {"ok", "data", "error", "warnings", "meta"}
    assert envelope["ok"] is False
    assert envelope["error"]["code"] == "CLI_NOT_AUTHENTICATED"  # UPPER_SNAKE in the envelope
    assert done.returncode == 8
    assert isinstance(envelope["meta"]["duration_ms"], int)
    read = rc.Envelope.parse(done.stdout, exit_code=done.returncode)
    assert read.error is not None and read.error.code == "cli_not_authenticated"
    assert {warning["code"] for warning in envelope["warnings"]} <= {"CLI_NOT_AUTHENTICATED"}


def test_doctor_with_a_key_is_ok(tmp_path: Path) -> None:
    env = {**_env(tmp_path), "ANTHROPIC_API_KEY": "sk-ant-fake"}
    done = _recoverable("doctor", "--json", env=env, cwd=tmp_path)
    envelope = json.loads(done.stdout)
    assert (envelope["ok"], done.returncode) == (True, 0)
    claude = next(c for c in envelope["data"]["clis"] if c["name"] == "claude")
    assert (claude["usable"], claude["auth_source"], claude["version"]) == (
        True, "$ANTHROPIC_API_KEY", "2.1.197",
    )  # fmt: skip


def test_inspect_cli_reports_a_missing_cli_with_its_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # not the repo, whose node_modules/.bin holds the CLIs
    info = inspect_cli("gemini", {"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert info.path is None
    assert [p.code for p in info.problems] == ["cli_not_found"]
    assert info.problems[0].fix_command == "npm install -g @google/gemini-cli"


def test_auto_picks_the_first_usable_cli_in_the_order_given(tmp_path: Path) -> None:
    env = {"PATH": str(Path(find_cli("claude", cli_bin_dir())).parent), "HOME": str(tmp_path),
           "GEMINI_API_KEY": "fake"}  # fmt: skip
    assert choose(("claude", "codex", "gemini"), env).name == "gemini"
    assert choose(("codex", "claude"), env, need_auth=False).name == "codex"


def test_unknown_run_options_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="unknown run option"):
        agents.run_sync("hi", "claude", colour="blue")
    with pytest.raises(ValueError, match="unknown CLI"):
        agents.run_sync("hi", "cursor")


def test_run_sync_reports_a_missing_binary(tmp_path: Path) -> None:
    result = agents.run_sync("hi", "claude", executable=str(tmp_path / "nope"))
    assert result.error is not None
    assert (result.success, result.error.code, result.error.fix_command) == (
        False, "cli_not_found", "npm install -g @anthropic-ai/claude-code",
    )  # fmt: skip

"""The `recoverable` command as a newcomer meets it (issue 11, item 5), each point through the
real command in a subprocess: help and version, one-line usage errors, the install command,
the status line of a silent run, warnings that say what they are, and `doctor`."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

import recoverable as rc
from recoverable.testing._cli_setup import DROP_PREFIXES

from .cli_support import REPO, cli_bin_dir, find_cli

CLI_DIR = Path(find_cli("claude", cli_bin_dir())).parent


def _env(home: Path, *, with_clis: bool = True, **extra: str) -> dict[str, str]:
    """A clean environment: a throwaway HOME, no credentials; the CLIs on PATH if asked."""
    keep = {k: v for k, v in os.environ.items() if not k.upper().startswith(DROP_PREFIXES)}
    path = "/usr/bin:/bin"
    if with_clis:
        path = f"{CLI_DIR}:{os.path.dirname(sys.executable)}:{path}"
    return {**keep, "HOME": str(home), "PATH": path, **extra}


def _recoverable(
    *args: str, env: dict[str, str], cwd: Path, merged: bool = False
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recoverable", *args], capture_output=not merged,
        stdout=subprocess.PIPE if merged else None, stderr=subprocess.STDOUT if merged else None,
        text=True, env=env, cwd=cwd, timeout=120, check=False,
    )  # fmt: skip


def _in_terminal(*args: str, env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """The command with stdout and stderr on a pseudo-terminal: (exit code, what it showed)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "recoverable", *args], stdin=subprocess.DEVNULL, stdout=slave,
        stderr=slave, env=env, cwd=cwd,
    )  # fmt: skip
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the terminal's other end closed: the command is done
                    break
                if not chunk:
                    break
                shown += chunk
            elif proc.poll() is not None:
                break
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return proc.wait(timeout=10), shown.decode("utf-8", "replace")


# -- help, version, usage errors -------------------------------------------------------------


def test_version(tmp_path: Path) -> None:
    done = _recoverable("--version", env=_env(tmp_path), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"recoverable {rc.__version__}\n")


@pytest.mark.parametrize("command", ["codes", "classify", "fake-provider", "run", "doctor", "exec"])
def test_every_subcommand_has_help(command: str, tmp_path: Path) -> None:
    done = _recoverable(command, "--help", env=_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: recoverable {command} ")
    if command == "fake-provider":  # the README's flags are its own
        assert "--fault NAME" in done.stdout


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["run", "hi", "--cli", "nope"], "argument --cli: expected auto, claude, codex, gemini"),
        (["run", "hi", "--cli", "claude,cursor"], "argument --cli: expected auto"),
        (["run", "hi", "--fake", "drop", "--times", "many"], "argument --times: expected a whole"),
        (["run", "hi", "--times", "2"], "--times needs --fake FAULT"),
        (["run", "hi", "--fake", "--times", "2"], "--times needs --fake FAULT"),
        (["run", "hi", "--fake", "bogus"], "argument --fake: unknown fault 'bogus'"),
        (["run", "hi", "--timeout", "nan"], "argument --timeout: expected a number of seconds"),
        (["run", "hi", "--idle-timeout", "-1"], "argument --idle-timeout: expected a number"),
        (["run", "hi", "--max-turns", "0"], "argument --max-turns: expected a whole number >= 1"),
        (
            ["run", "hi", "--cli", "codex", "--max-turns", "2"],
            "codex has no way to apply max_turns",
        ),
        (["run", "hi", "--cli", "claude,codex", "--max-turns", "2", "--fake"], "codex has no way"),
        (["fake-provider", "--port", "70000"], "argument --port: expected a port number"),
        (["nonsense"], "argument command: invalid choice: 'nonsense'"),
    ],
)
def test_a_usage_mistake_exits_2_with_a_one_line_reason(
    argv: list[str], reason: str, tmp_path: Path
) -> None:
    done = _recoverable(*argv, env=_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert reason in done.stderr
    assert "Something went wrong" not in done.stderr


# -- run -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fake", [[], ["--fake"], ["--fake", "overloaded"]])
def test_run_with_the_cli_missing_keeps_the_install_command(
    fake: list[str], tmp_path: Path
) -> None:
    env = _env(tmp_path, with_clis=False)
    done = _recoverable("run", "hi", "--cli", "codex", *fake, env=env, cwd=tmp_path)
    assert done.returncode == 4
    assert done.stderr.splitlines()[-1] == "run: npm install -g @openai/codex"
    done = _recoverable("run", "hi", "--cli", "codex", "--json", *fake, env=env, cwd=tmp_path)
    detail = json.loads(done.stdout.splitlines()[-1])
    detail = detail["detail"] if detail["type"] == "error" else detail["result"]["error"]
    assert (detail["code"], detail["fix_command"]) == (
        "cli_not_found",
        "npm install -g @openai/codex",
    )


def test_a_silent_run_shows_a_status_line_in_a_terminal_only(tmp_path: Path) -> None:
    # Claude waits on a provider that never answers: a terminal sees the run is alive.
    argv = ("run", "hi", "--cli", "claude", "--fake", "hang", "--idle-timeout", "3")
    code, shown = _in_terminal(*argv, env=_env(tmp_path), cwd=tmp_path)
    assert code == 10, shown
    assert "\r\x1b[K… claude running " in shown
    assert "no output for 2 s" in shown
    assert shown.endswith(
        "run_timeout (retryable: true) - The request took too long and was stopped.\r\n"
    )
    # --json in the same terminal: events only, no status line.
    code, shown = _in_terminal(*argv, "--json", env=_env(tmp_path), cwd=tmp_path)
    assert code == 10
    assert "\x1b[K" not in shown and "…" not in shown
    assert all(json.loads(line)["type"] for line in shown.splitlines())
    # Not a terminal: no status line either.
    done = _recoverable(*argv, env=_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 10
    assert "\x1b[K" not in done.stderr and "running" not in done.stderr


def test_a_cli_retrying_a_failure_that_is_not_retryable_is_told_apart(tmp_path: Path) -> None:
    # Claude retries a 401 like a 5xx (cli_setup leaves it one retry); a 429 is routine.
    done = _recoverable("run", "hi", "--cli", "claude", "--fake", "unauthorized",
                        env=_env(tmp_path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 8
    first = done.stderr.splitlines()[0]
    assert first.startswith(
        "[warning] claude retries provider_auth_failed on its own, though it is not retryable - "
    )
    assert "retrying after" not in done.stderr
    done = _recoverable("run", "hi", "--cli", "claude", "--fake", "rate_limited", "--times", "1",
                        env=_env(tmp_path), cwd=tmp_path)  # fmt: skip
    assert done.stderr.startswith("[warning] retrying after provider_rate_limited - ")


def test_a_long_message_is_cut_at_a_word_with_an_ellipsis(tmp_path: Path) -> None:
    # Codex quotes OpenAI's 403 in full: over 300 characters.
    argv = ("run", "hi", "--cli", "codex", "--fake", "forbidden")
    done = _recoverable(*argv, "--json", env=_env(tmp_path), cwd=tmp_path)
    full = json.loads(done.stdout.splitlines()[-1])["result"]["error"]["message"]
    assert len(full) > 300
    done = _recoverable(*argv, env=_env(tmp_path), cwd=tmp_path)
    line = next(x for x in done.stderr.splitlines() if x.startswith("[error] failed: "))
    shown = line.removeprefix("[error] failed: provider_permission_denied - ")
    assert shown.endswith("…") and len(shown) <= 300
    kept = shown.removesuffix("…")
    assert full.startswith(kept)
    assert full[len(kept)] == " "  # cut between words, not inside one


@pytest.mark.parametrize(
    ("fault", "code"), [(["rate_limited", "--times", "1"], 0), (["insufficient_quota"], 9)]
)
def test_no_blank_line_before_a_warning_or_the_failure(
    fault: list[str], code: int, tmp_path: Path
) -> None:
    done = _recoverable("run", "Say hello", "--cli", "claude", "--fake", *fault,
                        env=_env(tmp_path), cwd=tmp_path, merged=True)  # fmt: skip
    assert done.returncode == code
    assert "[warning] " in done.stdout or "[error] " in done.stdout
    assert "" not in done.stdout.splitlines(), repr(done.stdout)


def test_codex_does_not_retry_a_429_without_retry_after_and_the_readme_says_so(
    tmp_path: Path,
) -> None:
    # FakeProvider's 429 is OpenAI's plain rate limit (no Retry-After); Codex 0.171 retries a
    # 429 only when the answer carries Retry-After. The run ends retryable, exit 11.
    done = _recoverable("run", "Say hello", "--cli", "codex", "--fake", "rate_limited",
                        "--times", "1", env=_env(tmp_path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 11
    assert "retrying" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("provider_rate_limited (retryable: true) - ")
    readme = " ".join((REPO / "README.md").read_text().split())
    assert "Codex does not retry a 429 that carries no `Retry-After`" in readme


# -- doctor ----------------------------------------------------------------------------------


def test_doctor_does_not_call_an_unverifiable_login_logged_out(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"apiKeyHelper": "/usr/bin/true"}')
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('cli_auth_credentials_store = "keyring"\n')
    done = _recoverable("doctor", "--json", env=_env(tmp_path), cwd=tmp_path)
    envelope = json.loads(done.stdout)
    assert (done.returncode, envelope["ok"]) == (0, True)  # two CLIs may well be logged in
    clis = {c["name"]: c for c in envelope["data"]["clis"]}
    for name, source in (("claude", ".claude/settings.json"), ("codex", ".codex/config.toml")):
        assert (clis[name]["authenticated"], clis[name]["usable"], clis[name]["problems"]) == (
            None, True, [],
        )  # fmt: skip
        assert clis[name]["auth_source"] == str(tmp_path / source)
    assert clis["gemini"]["authenticated"] is False  # no login anywhere Gemini keeps one
    text = _recoverable("doctor", env=_env(tmp_path), cwd=tmp_path).stdout.splitlines()
    assert text[0].startswith("claude  unverified")
    assert text[1] == f"        login: not verified (kept in {tmp_path}/.claude/settings.json)"


def test_doctor_json_keeps_paths_versions_and_login_commands(tmp_path: Path) -> None:
    done = _recoverable("doctor", "--json", env=_env(tmp_path), cwd=tmp_path)
    envelope = json.loads(done.stdout)
    assert (done.returncode, envelope["ok"]) == (8, False)
    clis = {c["name"]: c for c in envelope["meta"]["clis"]}
    assert {name: (c["path"], c["version"]) for name, c in clis.items()} == {
        "claude": (str(CLI_DIR / "claude"), "2.1.197"),
        "codex": (str(CLI_DIR / "codex"), "0.171.0"),
        "gemini": (str(CLI_DIR / "gemini"), "0.61.0"),
    }
    fixes = [envelope["error"], *envelope["warnings"]]
    assert [(f["source"], f["fix_command"]) for f in fixes] == [
        ("claude", "claude auth login"), ("codex", "codex login"), ("gemini", None),
    ]  # fmt: skip


def test_the_status_line_names_the_last_warning() -> None:
    # What a silent Gemini waits for: its own retry, read from its stderr (a unit test: the
    # real run takes a minute, tests/test_agents_fallback.py checks the warning itself).
    import io

    from recoverable import agents
    from recoverable._cli_output import Printer

    out, err = io.StringIO(), io.StringIO()
    printer = Printer(out, err, "gemini", progress=True)
    retry = rc.ErrorDetail.create(
        "provider_rate_limited", "gemini retries after provider_rate_limited in 5733 ms, attempt 1",
        source="gemini", details={"retrying": True},
    )  # fmt: skip
    printer.event(agents.Error(retry, "warning"))
    time.sleep(2.5)
    printer.close()
    shown = err.getvalue()
    assert shown.startswith("[warning] retrying after provider_rate_limited - gemini retries")
    assert re.search(
        r"\r\x1b\[K… gemini running \d s, no output for \d s \(last: retrying after", shown
    )  # the line is cut to the terminal's width (80 here), with an ellipsis
    assert shown.endswith("\r\x1b[K")  # cleared when the run ends
    assert out.getvalue() == ""

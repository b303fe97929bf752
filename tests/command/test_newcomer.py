"""The `recoverable` command as a newcomer meets it (issue 11, item 5), each point through the
real command in a subprocess: help and version, one-line usage errors, the install command,
the status line of a silent run, warnings that say what they are, and `doctor`."""

from __future__ import annotations

import json
import math
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import recoverable as rc
from recoverable.testing._cli_setup import DROP_PREFIXES

from ..support.cli import REPO, cli_bin_dir, find_cli

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
    assert "\r\x1b[K… claude: no output for 2 s; the run stops in " in shown
    assert shown.endswith(
        "run_timeout (retryable: true) - The request took too long and was stopped.\r\n"
    )
    # What the silent run waits for, counted down: the idle deadline (3 s here).
    counted = re.findall(r"; the run stops in (\d) s \(--idle-timeout 3 s\) ·", shown)
    left = [int(n) for n in counted]
    assert left and all(0 < n <= 3 for n in left), shown
    # --json in the same terminal: events only, no status line.
    code, shown = _in_terminal(*argv, "--json", env=_env(tmp_path), cwd=tmp_path)
    assert code == 10
    assert "\x1b[K" not in shown and "…" not in shown
    assert all(json.loads(line)["type"] for line in shown.splitlines())
    # Not a terminal: no status line, [waiting] lines instead (their test is below).
    done = _recoverable(*argv, env=_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 10
    assert "\x1b[K" not in done.stderr and "\r" not in done.stderr
    assert "[waiting] claude: no output for " in done.stderr


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


def test_the_status_line_counts_down_the_retry_a_cli_announced() -> None:
    # What a silent Gemini waits for: its own retry, read from its stderr (a unit test: the
    # real run is below; tests/agents/test_fallback.py checks the warning itself).
    import io

    from recoverable import agents
    from recoverable.command._output import Deadlines, Printer

    out, err = io.StringIO(), io.StringIO()
    printer = Printer(out, err, "gemini", terminal=True, deadlines=Deadlines(300.0))
    message = "gemini retries after provider_rate_limited in 65733 ms, attempt 1"
    details = {"retrying": True, "attempt": 1, "retry_delay_ms": 65733}
    retry = rc.ErrorDetail.create(
        "provider_rate_limited", message, source="gemini", details=details
    )
    printer.event(agents.ErrorEvent(retry, "warning"))
    time.sleep(2.5)
    printer.close()
    shown = err.getvalue()
    assert shown.startswith("[warning] retrying after provider_rate_limited - gemini retries")
    # The countdown comes first: a line cut to the terminal's width (80 here) keeps it.
    statuses = re.findall(r"\r\x1b\[K(… [^\r]*)", shown)
    assert statuses, shown
    assert all(
        re.fullmatch(
            r"… gemini retries in 6[45] s \(after provider_rate_limited, attempt 1\) · "
            r"running [12] s",
            status,
        )
        for status in statuses
    ), statuses
    assert shown.endswith("\r\x1b[K")  # cleared when the run ends
    assert out.getvalue() == ""


_START, _LATER = 100.0, 112.4
_W = {"cli": "claude", "started": _START, "last_event": _START + 2}


@pytest.mark.parametrize(
    ("waiting", "line", "status"),
    [
        (
            dict(_W, deadlines=(300.0, None)),
            "[waiting] claude: no output for 10 s; the run stops in 290 s (--idle-timeout 300 s)",
            "… claude: no output for 10 s; the run stops in 290 s (--idle-timeout 300 s) · "
            "running 12 s",
        ),
        (
            dict(_W, deadlines=(300.0, 20.0)),
            "[waiting] claude: no output for 10 s; the run stops in 8 s (--timeout 20 s)",
            "… claude: no output for 10 s; the run stops in 8 s (--timeout 20 s) · running 12 s",
        ),
        (
            dict(
                _W,
                deadlines=(300.0, None),
                retry=("gemini", "provider_rate_limited", 2, 150.0),
                last_warning="retrying after provider_rate_limited",
            ),
            "[waiting] gemini retries in 38 s (after provider_rate_limited, attempt 2)",
            "… gemini retries in 38 s (after provider_rate_limited, attempt 2) · running 12 s",
        ),
        (  # a retry our own deadline cuts short
            dict(_W, deadlines=(300.0, 20.0), retry=("gemini", "provider_rate_limited", 1, 170.0)),
            "[waiting] gemini retries in 58 s (after provider_rate_limited, attempt 1); the run "
            "stops in 8 s (--timeout 20 s) before that",
            "… gemini retries in 58 s (after provider_rate_limited, attempt 1); the run stops in "
            "8 s (--timeout 20 s) before that · running 12 s",
        ),
        (  # a retry whose wait is over: the run's own deadline again, and the last warning
            dict(
                _W,
                deadlines=(30.0, None),
                retry=("claude", "provider_overloaded", None, 110.0),
                last_warning="retrying after provider_overloaded",
            ),
            "[waiting] claude: no output for 10 s; the run stops in 20 s (--idle-timeout 30 s)",
            "… claude: no output for 10 s; the run stops in 20 s (--idle-timeout 30 s) · running "
            "12 s · last: retrying after provider_overloaded",
        ),
        (  # no deadline at all (the library's idle_timeout=None)
            dict(_W, deadlines=(None, None)),
            "[waiting] claude: no output for 10 s; no deadline stops it",
            "… claude: no output for 10 s; no deadline stops it · running 12 s",
        ),
    ],
)
def test_what_a_silent_run_waits_for(waiting: dict[str, Any], line: str, status: str) -> None:
    from recoverable.command._output import Deadlines
    from recoverable.command._waiting import RetryWait, Waiting

    retry = waiting.pop("retry", None)
    deadlines = Deadlines(*waiting.pop("deadlines"))
    shown = Waiting(
        now=_LATER, deadlines=deadlines, retry=RetryWait(*retry) if retry else None, **waiting
    )
    assert (shown.line(), shown.status()) == (line, status)


@pytest.mark.parametrize(
    ("idle", "total", "every"),
    [
        (300.0, None, 15.0),
        (30.0, None, 6.0),
        (300.0, 10.0, 2.0),
        (3.0, None, 1.0),
        (None, None, 15.0),
    ],
)
def test_a_waiting_line_comes_every_15_s_or_a_fifth_of_the_nearest_deadline(
    idle: float | None, total: float | None, every: float
) -> None:
    from recoverable.command._output import Deadlines, line_interval

    assert line_interval(Deadlines(idle, total)) == every


def test_a_hang_without_a_terminal_says_what_it_waits_for(tmp_path: Path) -> None:
    # The provider never answers; stderr is a pipe (a CI log): [waiting] lines, one a second
    # (a fifth of the 5 s deadline), each counting down to the idle deadline.
    done = _recoverable(
        "run",
        "hi",
        "--cli",
        "claude",
        "--fake",
        "hang",
        "--idle-timeout",
        "5",
        env=_env(tmp_path),
        cwd=tmp_path,
    )
    assert done.returncode == 10
    lines = done.stderr.splitlines()
    assert lines[-2:] == [
        "[error] failed: run_timeout - the run passed its idle deadline of 5.0 s",
        "run_timeout (retryable: true) - The request took too long and was stopped.",
    ]
    waiting = (
        r"\[waiting\] claude: no output for (\d) s; the run stops in (\d) s "
        r"\(--idle-timeout 5 s\)"
    )
    waits = [re.fullmatch(waiting, x) for x in lines[:-2]]
    assert waits and all(waits), lines
    pairs = [(int(m.group(1)), int(m.group(2))) for m in waits if m]
    assert 3 <= len(pairs) <= 10, pairs  # by count, loosely: about one a second
    assert all(4 <= silent + left <= 6 for silent, left in pairs), pairs
    assert pairs[-1][1] <= 2  # the last one is near the deadline


def test_a_cli_retry_is_counted_down_with_and_without_a_terminal(tmp_path: Path) -> None:
    # Gemini waits out the 429's Retry-After (RetryInfo) silently: each second in a terminal,
    # and without one at the start of the wait and every 3 s (a fifth of 15 s), what is left.
    argv = (
        "run",
        "Say hello",
        "--cli",
        "gemini",
        "--fake",
        "rate_limited",
        "--times",
        "1",
        "--retry-after",
        "6",
        "--idle-timeout",
        "15",
    )
    done = _recoverable(*argv, env=_env(tmp_path), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "Hello from FakeProvider.\n"), done.stderr
    lines = done.stderr.splitlines()
    warning = next(i for i, x in enumerate(lines) if x.startswith("[warning] retrying after "))
    announced = (
        r"\[warning\] retrying after provider_rate_limited - gemini retries after "
        r"provider_rate_limited in (\d+) ms, attempt 1"
    )
    said = re.fullmatch(announced, lines[warning])
    assert said is not None, lines
    # Gemini CLI waits the 6 s it was told plus its own jitter (7178 ms, say): the count starts
    # at that wait in whole seconds, rounded up, or one less if a second went by first.
    start = math.ceil(int(said.group(1)) / 1000)
    counting = r"\[waiting\] gemini retries in (\d) s \(after provider_rate_limited, attempt 1\)"
    counted = [re.fullmatch(counting, x) for x in lines[warning + 1 :]]
    left = [int(m.group(1)) for m in counted if m]
    assert counted[0] is not None and left[0] in (start, start - 1), lines  # the wait's start
    assert 2 <= len(left) <= 5 and left == sorted(left, reverse=True), lines
    code, shown = _in_terminal(*argv, env=_env(tmp_path), cwd=tmp_path)
    assert code == 0, shown
    status = r"\r\x1b\[K… gemini retries in [1-9] s \(after provider_rate_limited, attempt 1\) · "
    assert re.search(status + r"running \d+ s", shown), shown
    assert "[waiting]" not in shown


# -- messages that say what happened (issue 26, item 8) ---------------------------------------


@pytest.mark.parametrize(
    ("fields", "code", "message"),
    [
        (  # what Claude sends for a dropped connection: no status, the literal "unknown"
            {"error": "unknown", "attempt": 1, "max_retries": 1, "retry_delay_ms": 623},
            "provider_connection_lost",
            "claude retries after an error it did not name (no HTTP status) in 623 ms, "
            "attempt 1 of 1",
        ),
        (
            {"error": "rate_limit", "error_status": 429, "attempt": 2, "max_retries": 3,
             "retry_delay_ms": 1100},
            "provider_rate_limited",
            "claude retries after rate_limit (HTTP 429) in 1100 ms, attempt 2 of 3",
        ),
        (
            {"error_status": 529, "attempt": 1, "max_retries": 2},
            "provider_overloaded",
            "claude retries after an error it did not name (HTTP 529), with no wait given, "
            "attempt 1 of 2",
        ),
        ({}, "provider_connection_lost",
         "claude retries after an error it did not name (no HTTP status), with no wait given"),
    ],
)  # fmt: skip
def test_claudes_retry_warning_says_what_it_retries_and_when(
    fields: dict[str, Any], code: str, message: str
) -> None:
    from recoverable.agents import _claude

    line = json.dumps({"type": "system", "subtype": "api_retry", **fields})
    [event] = _claude.parse_line(line, _claude.new_state())
    assert isinstance(event, rc.agents.ErrorEvent) and event.is_retry
    assert (event.detail.code, event.detail.message) == (code, message)


def test_claude_retrying_a_dropped_connection_says_so_plainly(tmp_path: Path) -> None:
    argv = ("run", "Say hello", "--cli", "claude", "--fake", "drop", "--times", "1")
    done = _recoverable(*argv, env=_env(tmp_path), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "Hello from FakeProvider.\n")
    assert re.fullmatch(
        r"\[warning\] retrying after provider_connection_lost - claude retries after an error it "
        r"did not name \(no HTTP status\) in \d+ ms, attempt 1 of 1\n",
        done.stderr,
    ), done.stderr


@pytest.mark.parametrize("command", ["codes", "classify", "doctor", "exec"])
def test_a_subcommands_usage_mistake_is_named_by_it(command: str, tmp_path: Path) -> None:
    done = _recoverable(command, "--no-such-flag", env=_env(tmp_path), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"recoverable {command}: error: unrecognized arguments: --no-such-flag "
        f"(see: recoverable {command} --help)\n"
    )
    # Before the subcommand, the word is the top level's.
    done = _recoverable("--no-such-flag", command, env=_env(tmp_path), cwd=tmp_path)
    assert done.stderr == (
        "recoverable: error: unrecognized arguments: --no-such-flag (see: recoverable --help)\n"
    )


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["run", "hi", "--max-turns", "-3"], "argument --max-turns: expected a whole number >= 1, "
         "got '-3'"),
        (["run", "", "--cli", "claude"], "the prompt is empty: give the CLI something to do"),
        (["run", " \n\t", "--fake"], "the prompt is empty: give the CLI something to do"),
        (["run", "--fake", "Say hello"], "argument --fake: unknown fault 'Say hello' (a prompt "
         "goes first: recoverable run 'Say hello' --fake [FAULT]); expected one of rate_limited, "),
        (["run", "hi", "--fake", "x " * 31], "argument --fake: unknown fault of 62 characters (a "
         "prompt goes first: recoverable run PROMPT --fake [FAULT]); expected one of "),
        (["run", "hi", "--fake", "rate-limited"], "argument --fake: unknown fault "
         "'rate-limited'; expected one of rate_limited, "),  # a word: no prompt hint
        (["run", "hi", "--retry-after", "2"], "--retry-after needs --fake rate_limited"),
        (["run", "hi", "--fake", "overloaded", "--retry-after", "2"],
         "--retry-after needs --fake rate_limited"),
        (["run", "hi", "--fake", "rate_limited", "--retry-after", "soon"],
         "argument --retry-after: expected a number of seconds > 0, got 'soon'"),
    ],
)  # fmt: skip
def test_run_refuses_before_a_cli_starts(argv: list[str], reason: str, tmp_path: Path) -> None:
    # A `claude` that leaves a mark when started: none of these may start it.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text(f"#!/bin/sh\ntouch {tmp_path}/started\n")
    (bin_dir / "claude").chmod(0o755)
    env = _env(tmp_path, with_clis=False, PATH=f"{bin_dir}:/usr/bin:/bin")
    done = _recoverable(*argv, env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"recoverable run: error: {reason}"), done.stderr
    assert done.stderr.endswith(" (see: recoverable run --help)\n")
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "started").exists()


def test_run_help_says_every_option_every_fault_and_the_defaults(tmp_path: Path) -> None:
    from recoverable.agents import RunOptions
    from recoverable.testing._faults import FAULT_NAMES

    done = _recoverable("run", "--help", env=_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    fake = (
        "--fake [FAULT] point the real CLI at a built-in fake provider on 127.0.0.1, optionally "
        f"failing with FAULT: {', '.join(FAULT_NAMES)} "
    )
    assert fake in text
    assert len(FAULT_NAMES) == 15
    assert RunOptions().idle_timeout == 300
    for option, says in [
        ("prompt", "what the CLI should do (not empty)"),
        ("--model MODEL", "the model the CLI uses (default: the CLI's own)"),
        ("--cwd CWD", "the CLI's working directory (default: this one; with --fake, a throwaway "
         "directory)"),
        ("--max-turns N", "the most agent turns (claude only; default: the CLI's own)"),
        ("--timeout S", "seconds the whole run may take (default: no limit)"),
        ("--idle-timeout S", "seconds without any event before the run is stopped (default 300)"),
        ("--retry-after S", "with --fake rate_limited: the 429 carries Retry-After: S"),
    ]:  # fmt: skip
        assert f" {option} {says}" in text, option


def test_codex_retries_a_429_that_carries_retry_after_and_the_readme_says_how(
    tmp_path: Path,
) -> None:
    fake = ("--fake", "rate_limited", "--times", "1", "--retry-after", "1")
    done = _recoverable(
        "run", "Say hello", "--cli", "codex", *fake, env=_env(tmp_path), cwd=tmp_path
    )
    assert (done.returncode, done.stdout) == (0, "Hello from FakeProvider.\n"), done.stderr
    assert done.stderr.startswith("[warning] retrying after provider_rate_limited - ")
    readme = " ".join((REPO / "README.md").read_text().split())
    assert "`--fake rate_limited --times 1 --retry-after 1` gives the header" in readme


def test_doctor_after_a_fake_run_says_fake_needs_no_login_and_how_gemini_logs_in(
    tmp_path: Path,
) -> None:
    argv = ("run", "Say hello", "--cli", "claude", "--fake")
    done = _recoverable(*argv, env=_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 0
    done = _recoverable("doctor", env=_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 8
    lines = done.stdout.splitlines()
    how = (
        "Gemini CLI signs in interactively: run `gemini` in a terminal and choose a method (a "
        "Google login, or set GEMINI_API_KEY)"
    )
    assert lines[-3:] == [
        "        cli_not_authenticated: Log the CLI in to its provider account",
        f"        how: {how}",
        "note: `recoverable run --fake` needs no login (it gives the CLI fake keys for a built-in "
        "fake provider, in a throwaway home); a real provider needs the logins above",
    ]
    envelope = json.loads(_recoverable("doctor", "--json", env=_env(tmp_path), cwd=tmp_path).stdout)
    gemini = next(c for c in envelope["meta"]["clis"] if c["name"] == "gemini")
    [problem] = gemini["problems"]
    assert (problem["code"], problem["fix_command"], problem["suggestion"]) == (
        "cli_not_authenticated",
        None,
        how,
    )
    # Logged in, the note is gone.
    env = _env(tmp_path, ANTHROPIC_API_KEY="sk-ant-x", OPENAI_API_KEY="sk-x", GEMINI_API_KEY="x")
    assert "note:" not in _recoverable("doctor", env=env, cwd=tmp_path).stdout

"""`recoverable exec` on real commands, run as a user runs it: a subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import recoverable as rc
from recoverable import command as cli

from ..core.test_hostile_values import INJECTIONS
from ..support.runner import alive

REPO = Path(__file__).resolve().parents[2]
NOTES_FIX = "python examples/notes_tool.py init"
STUBBORN_FIX = "python tests/tools/stubborn_tool.py refresh"


def _exec(
    *args: str, cwd: Path = REPO, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    # `python` in a fix command is this interpreter, as in an activated venv; the library is
    # this tree's, whatever the working directory
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    source = str(Path(rc.__file__).resolve().parent.parent)
    return subprocess.run(
        [sys.executable, "-m", "recoverable", "exec", *args], capture_output=True, text=True,
        cwd=cwd, env={**os.environ, "PATH": path, "PYTHONPATH": source, **(env or {})},
        stdin=subprocess.DEVNULL, timeout=timeout, check=False,
    )  # fmt: skip


def _envelope(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    envelope: dict[str, Any] = json.loads(done.stdout)
    assert list(envelope) == ["ok", "data", "error", "warnings", "meta"]
    assert "Traceback" not in done.stdout + done.stderr
    return envelope


def test_false_is_a_failed_tool_called_once() -> None:
    done = _exec("--json", "--", "false")
    error = _envelope(done)["error"]
    assert (done.returncode, error["code"], error["retryable"]) == (
        1,
        "TOOL_EXECUTION_FAILED",
        False,
    )
    assert _envelope(done)["meta"]["attempts"] == 1


def test_a_missing_binary() -> None:
    done = _exec("--json", "--", "no-such-binary-for-recoverable")
    error = _envelope(done)["error"]
    assert (done.returncode, error["code"], error["details"]["errno"]) == (
        5, "TOOL_NOT_FOUND", "ENOENT",
    )  # fmt: skip


def test_timeout_1_sleep_5_is_a_tool_timeout() -> None:
    done = _exec("--json", "--", "timeout", "1", "sleep", "5")
    error = _envelope(done)["error"]
    assert (done.returncode, error["code"], error["details"]["exit_code"]) == (
        10, "TOOL_TIMEOUT", 124,
    )  # fmt: skip


def test_our_own_deadline_stops_the_whole_group() -> None:
    done = _exec("--json", "--timeout", "0.5", "--", "sh", "-c", "sleep 30; echo late")
    error = _envelope(done)["error"]
    assert (done.returncode, error["code"], error["details"]["timeout_s"]) == (
        10, "TOOL_TIMEOUT", 0.5,
    )  # fmt: skip


def test_a_process_killed_by_sigkill_has_no_exit_code() -> None:
    done = _exec("--json", "--", "sh", "-c", "kill -9 $$")
    error = _envelope(done)["error"]
    assert (done.returncode, error["code"]) == (1, "TOOL_KILLED")
    assert (error["details"]["signal"], error["details"]["signal_name"]) == (9, "SIGKILL")
    assert "exit_code" not in error["details"]


FLAKY = (
    'n=$(cat attempts 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > attempts; '
    'if [ "$n" -le 2 ]; then echo "Error: rate limit exceeded" >&2; exit 1; fi; echo "done $n"'
)


def test_a_rate_limited_script_is_retried_until_it_succeeds(tmp_path: Path) -> None:
    done = _exec("--json", "--", "sh", "-c", FLAKY, cwd=tmp_path)
    envelope = _envelope(done)
    assert (done.returncode, envelope["ok"], envelope["data"]) == (0, True, {"stdout": "done 3\n"})
    assert (tmp_path / "attempts").read_text() == "3\n"
    assert envelope["meta"]["attempts"] == 3
    assert [(a["kind"], a["code"], a["wait_ms"]) for a in envelope["meta"]["ladder"]] == [
        ("retry", "rate_limited", 1000), ("retry", "rate_limited", 1000),
    ]  # fmt: skip
    assert done.stderr.count("Error: rate limit exceeded") == 2  # passed through


def test_without_retries_the_first_failure_is_the_answer(tmp_path: Path) -> None:
    done = _exec("--retries", "0", "--", "sh", "-c", FLAKY, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (11, "")
    assert (tmp_path / "attempts").read_text() == "1\n"
    assert "rate_limited (retryable: false) - Error: rate limit exceeded" in done.stderr
    assert "stopped: the retry budget is spent" in done.stderr


def test_success_prints_the_commands_own_stdout() -> None:
    done = _exec("--", "printf", "a\\nb")
    assert (done.returncode, done.stdout) == (0, "a\nb")


def test_the_closed_loop_on_a_toolkit_tool_whose_fix_works(tmp_path: Path) -> None:
    env = {"NOTES_HOME": str(tmp_path / "notes")}
    argv = ["python", "examples/notes_tool.py", "add", "buy milk"]
    unfixed = _exec("--json", "--", *argv, env=env)
    error = _envelope(unfixed)["error"]
    # the tool's own fix is registered in the tool's process, not in exec's: shown, not run
    assert (unfixed.returncode, error["code"], error["fix_command"]) == (
        4, "NOTES_NOT_INITIALISED", None,
    )  # fmt: skip
    assert error["details"]["suggested_command"] == NOTES_FIX
    assert not (tmp_path / "notes").exists()
    refused = _exec("--json", "--fix", "--", *argv, env=env)
    assert refused.returncode == 4
    assert "fixes" not in _envelope(refused)["meta"]
    assert not (tmp_path / "notes").exists()  # --fix alone runs only what exec registered
    fixed = _exec("--json", "--allow-fix", NOTES_FIX, "--", *argv, env=env)
    envelope = _envelope(fixed)
    assert (fixed.returncode, envelope["data"]) == (0, {"id": 1, "text": "buy milk"})
    assert envelope["meta"]["attempts"] == 2
    (fix,) = envelope["meta"]["fixes"]
    assert (fix["command"], fix["ok"], fix["exit_code"]) == (NOTES_FIX, True, 0)
    assert [a["kind"] for a in envelope["meta"]["ladder"]] == ["run_fix"]
    assert json.loads((tmp_path / "notes" / "notes.json").read_text()) == [
        {"id": 1, "text": "buy milk"}
    ]


def test_the_closed_loop_stops_when_the_fix_does_not_help() -> None:
    allow = ("--allow-fix", STUBBORN_FIX)
    done = _exec("--json", *allow, "--", "python", "tests/tools/stubborn_tool.py", "run")
    envelope = _envelope(done)
    error = envelope["error"]
    assert (done.returncode, error["code"]) == (4, "STUBBORN_CACHE_STALE")
    assert error["details"]["ladder"] == {
        "stopped": "stubborn_cache_stale came back after its fix: the fix is wrong or the "
        "failure is misclassified",
        "attempts": 2,
        "fix_did_not_help": STUBBORN_FIX,
    }
    assert envelope["meta"]["attempts"] == 2
    assert [fix["ok"] for fix in envelope["meta"]["fixes"]] == [True]
    human = _exec("--fix", *allow, "--", "python", "tests/tools/stubborn_tool.py", "run")
    assert human.returncode == 4
    assert "stopped: stubborn_cache_stale came back after its fix" in human.stderr


def test_a_fix_naming_another_program_is_not_run(tmp_path: Path) -> None:
    error = {"code": "STALE", "message": "m", "retryable": False,
             "fix_required": "refresh", "fix_command": "touch pwned"}  # fmt: skip
    envelope = json.dumps({"ok": False, "data": None, "error": error, "warnings": [], "meta": {}})
    done = _exec("--json", "--fix", "--", "sh", "-c", f"echo '{envelope}'; exit 4", cwd=tmp_path)
    assert not (tmp_path / "pwned").exists()
    stopped = _envelope(done)["error"]["details"]["ladder"]["stopped"]
    assert stopped == (
        "the fix was not run: 'touch pwned' is not registered for stale in this process, nor "
        "allowed by the caller; it is shown as a suggestion for a person"
    )
    assert done.returncode == 4  # the tool's own exit code for a code we do not know


@pytest.mark.parametrize("command", INJECTIONS)
def test_an_unsafe_fix_in_a_tools_envelope_is_never_run(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = {"code": "PRECONDITION_FAILED", "message": "m", "fix_command": command}
    body = json.dumps({"ok": False, "data": None, "error": error, "warnings": [], "meta": {}})
    monkeypatch.chdir(tmp_path)
    (tmp_path / "envelope.json").write_text(body)
    code = cli.main(["exec", "--json", "--fix", "--", "cat", "envelope.json"])
    written = json.loads(capsys.readouterr().out)
    # cat exits 0: the envelope is read, and with exit 0 the exit code beats it
    assert (code, written["ok"]) == (0, True)
    code = cli.main(["exec", "--json", "--fix", "--", "sh", "-c", "cat envelope.json; exit 4"])
    written = json.loads(capsys.readouterr().out)
    assert code == 4
    assert written["error"]["fix_command"] is None
    assert written["error"]["details"]["fix_command_dropped"].startswith("fix_command ")
    assert "fixes" not in written["meta"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["envelope.json"]


def test_an_ai_cli_is_read_by_its_own_parser(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    line = ('{"type":"result","subtype":"success","is_error":true,'
            '"result":"Invalid API key · Please run /login","session_id":"s"}')  # fmt: skip
    fake.write_text(f"#!/bin/sh\necho '{line}'\nexit 1\n")
    fake.chmod(0o755)
    done = _exec("--json", "--", str(fake), "-p", "hi")
    error = _envelope(done)["error"]
    assert (done.returncode, error["code"], error["source"]) == (
        8,
        "PROVIDER_AUTH_FAILED",
        "claude",
    )


def test_no_command_is_an_argument_error() -> None:
    done = _exec()
    assert done.returncode == 2
    assert "no command given" in done.stderr
    assert _exec("--retries", "x", "--", "true").returncode == 2


@pytest.mark.usefixtures("default_stops")
def test_a_cancel_stops_the_command_and_exits_130(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "recoverable", "exec", "--json", "--", "sh", "-c",
         "echo $$ > pid; sleep 30"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not (tmp_path / "pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 130
    assert json.loads(out)["error"]["code"] == "RUN_CANCELLED"
    assert not alive(int((tmp_path / "pid").read_text()))


# --- under a supervisor: every way exec ends stops the command's group ---------------------


def _pids_of(tmp_path: Path) -> list[int]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = (tmp_path / "pids").read_text() if (tmp_path / "pids").exists() else ""
        if text.count("\n") >= 2:
            return [int(line) for line in text.split()]
        time.sleep(0.05)
    raise AssertionError("the command never wrote its pids")


@pytest.fixture
def default_stops() -> Iterator[None]:
    """SIGTERM, SIGHUP and SIGINT at their defaults for the processes a test starts (they
    inherit an ignored signal: a run under nohup ignores SIGHUP, which exec then keeps
    ignoring, as the caller wished)."""
    stops = (signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, signal.SIG_DFL) for sig in stops}
    # SIGINT as a terminal leaves it: a shell's background job ignores it, and Python then
    # installs no KeyboardInterrupt of its own
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# The command and a background job of its own, both writing their pids, both running on.
_TWO_PROCESSES = "echo $$ > pids; sleep 61 & echo $! >> pids; wait"


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
@pytest.mark.usefixtures("default_stops")
def test_a_supervisors_stop_stops_the_group_prints_the_envelope_and_exits_128_n(
    tmp_path: Path, signame: str
) -> None:
    source = str(Path(rc.__file__).resolve().parent.parent)
    process = subprocess.Popen(
        [sys.executable, "-m", "recoverable", "exec", "--json", "--", "sh", "-c", _TWO_PROCESSES],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": source},
    )  # fmt: skip
    pids = _pids_of(tmp_path)
    sig = signal.Signals[signame]
    process.send_signal(sig)
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 128 + sig.value
    error = json.loads(out)["error"]
    assert (error["code"], error["details"]) == ("RUN_CANCELLED", {"signal": signame})
    assert error["message"] == f"{signame} stopped the command"
    assert [pid for pid in pids if alive(pid)] == []


@pytest.mark.usefixtures("default_stops")
def test_timeout_1_around_exec_gets_the_envelope_and_no_survivor(tmp_path: Path) -> None:
    source = str(Path(rc.__file__).resolve().parent.parent)
    done = subprocess.run(
        ["timeout", "2", sys.executable, "-m", "recoverable", "exec", "--json", "--", "sh", "-c",
         _TWO_PROCESSES],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": source},
    )  # fmt: skip
    assert done.returncode == 124  # timeout(1)'s own status for a command it had to stop
    assert json.loads(done.stdout)["error"]["details"] == {"signal": "SIGTERM"}
    assert [pid for pid in _pids_of(tmp_path) if alive(pid)] == []


def test_a_background_job_that_closed_its_pipes_ends_with_the_command(tmp_path: Path) -> None:
    answer = '{"ok": true, "data": 1, "error": null}'
    job = f"sleep 61 >/dev/null 2>&1 </dev/null & echo $! > job; echo '{answer}'"
    done = _exec("--json", "--", "sh", "-c", job, cwd=tmp_path)
    assert (done.returncode, _envelope(done)["data"]) == (0, 1)
    assert not alive(int((tmp_path / "job").read_text()))


# --- classify --envelope ---------------------------------------------------------------------


def test_classify_prints_the_envelope_and_exits_with_the_codes_status() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "recoverable", "classify", "--envelope"],
        input="Connection refused", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    envelope = json.loads(done.stdout)
    assert (done.returncode, envelope["ok"], envelope["error"]["code"]) == (
        12, False, "NETWORK_ERROR",
    )  # fmt: skip
    assert envelope["error"]["retry_after_ms"] == 1000
    expected = rc.Envelope.failure(rc.classify("Connection refused"))
    assert rc.Envelope.parse(done.stdout) == expected


# -- messages that say what happened (issue 26) -----------------------------------------------


def test_a_retry_line_counts_against_this_execs_own_budget() -> None:
    # The ladder's own limit (3 of one code in a row) is not what stops `--retries 1`.
    done = _exec("--retries", "1", "--", "sh", "-c", "echo rate limit exceeded >&2; exit 1")
    assert (done.returncode, done.stdout) == (11, "")
    assert done.stderr.splitlines() == [
        "rate limit exceeded",
        "[recoverable exec] rate_limited: retrying in 1 s (retry 1 of 1: --retries 1)",
        "rate limit exceeded",
        "[recoverable exec] rate_limited (retryable: false) - rate limit exceeded",
        "stopped: the retry budget is spent",
    ]


def test_a_budget_past_the_ladders_limit_says_both(tmp_path: Path) -> None:
    done = _exec("--retries", "4", "--", "sh", "-c", FLAKY, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "done 3\n")
    assert [x for x in done.stderr.splitlines() if x.startswith("[recoverable exec]")] == [
        f"[recoverable exec] rate_limited: retrying in 1 s (retry {n} of 4: --retries 4; at most "
        "3 in a row of one code)"
        for n in (1, 2)
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # git prints its reason, then its usage block: the reason is the message
        (["git", "--no-such-option"], "git exited 129: unknown option: --no-such-option"),
        (["git", "commit", "--no-such-option"], "git exited 129: error: unknown option "
         "`no-such-option'"),
        # GNU ls: its reason, then a pointer to its help
        (["ls", "--no-such-option"], "ls exited 2: ls: unrecognized option '--no-such-option'"),
        # argparse: usage first, then `prog: error: ...`
        ([sys.executable, "-c", "import argparse; argparse.ArgumentParser('tool').parse_args()",
          "--x"], "python3 exited 2: tool: error: unrecognized arguments: --x"),
    ],
)  # fmt: skip
def test_a_usage_error_is_told_by_the_line_that_names_it(
    argv: list[str], message: str, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)  # git commit's own usage
    done = _exec("--json", "--", *argv, cwd=tmp_path)
    error = _envelope(done)["error"]
    program = Path(argv[0]).name
    assert (error["code"], error["message"]) == (
        "TOOL_EXECUTION_FAILED", message.replace("python3", program, 1),
    )  # fmt: skip

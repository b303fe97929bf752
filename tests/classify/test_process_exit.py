"""Exit codes both ways: each code's exit status from the registry, and a finished process's
return code, stdout and stderr read back as a code (`from_process`, and `classify` of
subprocess's own errors)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from typing import Any

import pytest

import recoverable as rc
from recoverable._classify.process_exit import (
    process_envelope,
    program_name,
    signal_of,
    spawn_failure,
)

SPEC_EXIT = {0, *range(1, 14), 130}

# --- forward: a code's exit status -----------------------------------------------------------


@pytest.mark.parametrize("row", list(rc.codes), ids=lambda row: row.code)
def test_every_codes_exit_status_is_the_registrys_and_a_spec_status(row: rc.CodeRow) -> None:
    detail = rc.ErrorDetail.create(row.code, "m")
    assert detail.exit_code == row.exit_code
    assert rc.Envelope.failure(detail).exit_code == row.exit_code
    assert rc.RecoverableError(detail).exit_code == row.exit_code
    assert row.exit_code in SPEC_EXIT - {0}


@pytest.mark.parametrize(
    ("code", "exit_code"),
    [
        ("invalid_input", 2), ("run_max_turns", 3), ("precondition_failed", 4),
        ("cli_not_found", 4), ("tool_not_executable", 4), ("not_found", 5),
        ("tool_not_found", 5), ("conflict", 6), ("permission_denied", 7),
        ("unauthenticated", 8), ("credentials_expired", 8), ("payment_required", 9),
        ("timeout", 10), ("tool_timeout", 10), ("rate_limited", 11), ("unavailable", 12),
        ("network_error", 12), ("tool_execution_failed", 1), ("tool_killed", 1),
        ("tool_output_invalid", 1), ("unknown", 1), ("run_cancelled", 130),
    ],
)  # fmt: skip
def test_the_exit_table(code: str, exit_code: int) -> None:
    assert rc.codes[code].exit_code == exit_code


def test_a_custom_code_declares_its_exit_status() -> None:
    rc.register_code("store_locked", exit_code=6, user_message="The store is locked.")
    try:
        assert rc.ErrorDetail.create("store_locked", "m").exit_code == 6
        assert rc.register_code("store_low", exit_code=75, user_message="Low.").exit_code == 75
    finally:
        rc.codes.unregister("store_locked")
        rc.codes.unregister("store_low")


@pytest.mark.parametrize("exit_code", [0, -1, 126, 127, 128, 137, 255, 256])
def test_a_code_may_not_exit_as_success_or_as_the_shell(exit_code: int) -> None:
    with pytest.raises(ValueError, match=r"exit_code must be 1\.\.125 or 130"):
        rc.register_code("bad_exit", exit_code=exit_code, user_message="Bad.")
    assert "bad_exit" not in rc.codes


# --- backward: a process's end read as a code -------------------------------------------------

RATE_LINE = "Error: rate limit exceeded, try again later"
GIT_DNS = "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com"
OPENAI_QUOTA = (
    "Traceback (most recent call last):\n  ...\nopenai.RateLimitError: Error code: 429 - "
    "{'error': {'message': 'You exceeded your current quota', 'type': 'insufficient_quota', "
    "'code': 'insufficient_quota'}}"
)
ENVELOPE_RATE = json.dumps({
    "ok": False, "data": None, "warnings": [], "meta": {"duration_ms": 3},
    "error": {"code": "RATE_LIMITED", "message": "slow", "retryable": True, "retry_after_ms": 40},
})  # fmt: skip


@pytest.mark.parametrize(
    ("returncode", "stderr", "stdout", "argv", "code", "retryable", "details"),
    [
        # a bare non-zero exit from a tool we do not know: failed, not retried
        (1, "", "", ["false"], "tool_execution_failed", False, {"exit_code": 1}),
        (2, "grep: x: No such file", "", ["grep", "a", "x"], "tool_execution_failed", False,
         {"exit_code": 2}),
        (11, "", "", ["mytool"], "tool_execution_failed", False, {"exit_code": 11}),
        # the statuses of timeout(1) and the shell
        (124, "", "", ["timeout", "1", "sleep", "5"], "tool_timeout", False, {"exit_code": 124}),
        (126, "sh: ./x: Permission denied", "", "./x", "tool_not_executable", False,
         {"exit_code": 126}),
        (127, "sh: nope: not found", "", "nope --flag", "tool_not_found", False,
         {"exit_code": 127}),
        # signals: no exit code invented for a negative return code
        (-9, "", "", ["sleep", "9"], "tool_killed", False,
         {"signal": 9, "signal_name": "SIGKILL"}),
        (-15, "", "", ["sleep", "9"], "tool_killed", False,
         {"signal": 15, "signal_name": "SIGTERM"}),
        (137, "", "", ["sh", "-c", "x"], "tool_killed", False,
         {"signal": 9, "signal_name": "SIGKILL", "exit_code": 137}),
        (130, "", "", ["sh", "-c", "x"], "tool_killed", False,
         {"signal": 2, "signal_name": "SIGINT", "exit_code": 130}),
        # 128 + a number that is no signal is a plain failure; 129 is git's usage error
        (255, "", "", ["ssh", "host"], "tool_execution_failed", False, {"exit_code": 255}),
        (129, "unknown option: --x", "", ["git", "--x"], "tool_execution_failed", False,
         {"exit_code": 129}),
        # the stderr tail through the phrase tables
        (1, RATE_LINE, "", ["gh", "api"], "rate_limited", True, {"exit_code": 1}),
        (128, GIT_DNS, "", ["git", "fetch"], "network_error", True, {"exit_code": 128}),
        (7, "curl: (7) Failed to connect to localhost port 1: Connection refused", "",
         ["curl", "x"], "network_error", True, {"exit_code": 7}),
        (1, "npm error 429 Too Many Requests - GET https://registry.npmjs.org/x", "",
         ["npm", "i"], "rate_limited", True, {"exit_code": 1}),
        (1, "error: RPC failed; HTTP 503 curl 22", "", ["git", "push"], "unavailable", True,
         {"exit_code": 1}),
        (1, "git@github.com: Permission denied (publickey).", "", ["git", "push"],
         "permission_denied", False, {"exit_code": 1}),
        (4, "You are not logged into any GitHub hosts.", "", ["gh", "pr"], "unauthenticated",
         False, {"exit_code": 4}),
        (1, OPENAI_QUOTA, "", ["python", "agent.py"], "provider_quota_exceeded", False,
         {"exit_code": 1, "error_code": "insufficient_quota"}),
        # a tool's own envelope is the truth (codes back to lower_snake)
        (11, "Error: boom", ENVELOPE_RATE, ["spec-tool"], "rate_limited", True,
         {"exit_code": 11}),
    ],
)  # fmt: skip
def test_from_process(
    returncode: int, stderr: str, stdout: str, argv: Any, code: str, retryable: bool,
    details: dict[str, Any],
) -> None:  # fmt: skip
    detail = rc.from_process(returncode, stderr=stderr, stdout=stdout, argv=argv)
    assert (detail.code, detail.retryable) == (code, retryable)
    assert {key: detail.details.get(key) for key in details} == details
    if returncode < 0:
        assert "exit_code" not in detail.details
    assert detail.source == program_name(argv)


def test_a_tools_envelope_keeps_its_hint_and_its_stderr_is_not_read() -> None:
    detail = rc.from_process(11, stderr=RATE_LINE, stdout=ENVELOPE_RATE, argv=["spec-tool"])
    assert (detail.message, detail.retry_after_ms) == ("slow", 40)
    with_warning = json.dumps({**json.loads(ENVELOPE_RATE), "warnings": ["disk almost full"]})
    envelope = process_envelope(11, stdout=with_warning, argv=["spec-tool"], duration_ms=9)
    assert (envelope.warnings, envelope.duration_ms) == (("disk almost full",), 9)
    assert envelope.error is not None and envelope.error.source == "spec-tool"


def test_a_quoted_phrase_is_not_a_reason() -> None:
    for line in (
        "warning: the word rate limit exceeded appears in your notes",
        "foo.go:429: undefined: x",
        "INFO user said: connection refused is fine",
        "error: expected 503 got 200",
    ):
        detail = rc.from_process(1, stderr=line, argv=["tool"])
        assert detail.code == "tool_execution_failed", line


def test_the_last_reason_a_tool_gives_wins() -> None:
    stderr = "warning: rate limit exceeded, retrying\nfatal: Permission denied\n"
    assert rc.from_process(1, stderr=stderr, argv=["t"]).code == "permission_denied"


def test_stderr_is_scrubbed_and_bounded() -> None:
    stderr = "x" * 100_000 + "\nError: bad key sk-proj-abcdefghijklmnopqrstuvwxyz123\n"
    detail = rc.from_process(1, stderr=stderr, argv=["t"])
    assert "abcdefghijklmnop" not in json.dumps(detail.to_dict())
    assert len(detail.details["stderr_tail"]) <= 2000
    assert detail.message.endswith("sk-[REDACTED]")


def test_huge_output_is_read_in_bounded_time() -> None:
    big = b"\xff" * (64 * 1024 * 1024)
    detail = rc.from_process(1, stderr=big, stdout=big, argv=["t"])
    assert detail.code == "tool_execution_failed"


def test_argv_of_any_shape_is_kept_bounded_and_scrubbed() -> None:
    argv = [
        "curl",
        "-H",
        "Authorization: Bearer sk-proj-abcdefghijklmnopqrstuvwxyz123",
        *["a"] * 50,
    ]
    detail = rc.from_process(1, argv=argv)
    assert len(detail.details["argv"]) == 33 and detail.details["argv"][-1] == "..."
    assert "abcdefghijklmnop" not in json.dumps(detail.details)
    for odd in (None, "", b"git push", [b"/usr/bin/git", 3], [], 42, [object()]):
        assert rc.from_process(1, argv=odd).code == "tool_execution_failed"  # type: ignore[arg-type]


def test_from_process_never_raises() -> None:
    for bad in ("1", None, 1.5, True):
        assert rc.from_process(bad).code == "unknown"  # type: ignore[arg-type]
    assert rc.from_process(1, stderr=None, stdout=None).code == "tool_execution_failed"  # type: ignore[arg-type]


def test_a_success_is_no_failure() -> None:
    assert rc.from_process(0, stdout="all good", argv=["ls"]).details == {"exit_code": 0}
    envelope = process_envelope(0, stdout=b"all good\n", argv=["ls"])
    assert (envelope.ok, envelope.data) == (True, {"stdout": "all good\n"})


def test_exit_0_beats_a_failed_envelope_and_a_malformed_one_is_plain_output() -> None:
    envelope = process_envelope(0, stdout=ENVELOPE_RATE, argv=["spec-tool"])
    assert (envelope.ok, envelope.data) == (True, None)
    malformed = json.dumps({"ok": True, "data": None, "error": None, "meta": {}})
    envelope = process_envelope(0, stdout=malformed, argv=["t"])
    assert (envelope.ok, envelope.data) == (True, {"stdout": malformed})
    assert "not one" in envelope.warnings[0]
    plain_json = '{"ok": true, "id": 5}'  # some API's answer, not an envelope
    assert process_envelope(0, stdout=plain_json).data == {"stdout": plain_json}
    assert rc.from_process(3, stdout=plain_json, argv=["t"]).code == "tool_execution_failed"


def test_a_malformed_envelope_on_failure_is_a_general_error() -> None:
    broken = json.dumps({"ok": False, "data": None, "warnings": [], "meta": {}})
    detail = rc.from_process(11, stdout=broken, argv=["spec-tool"])
    assert (detail.code, detail.retryable, detail.exit_code) == ("tool_output_invalid", False, 1)


CLAUDE_AUTH_FAILED = (
    '{"type":"result","subtype":"success","is_error":true,"duration_ms":5,'
    '"result":"Invalid API key \\u00b7 Please run /login","session_id":"s"}\n'
)


@pytest.mark.parametrize(
    ("returncode", "stdout", "code"),
    [
        (1, CLAUDE_AUTH_FAILED, "provider_auth_failed"),
        (1, "", "cli_crashed"),
        (-9, "", "cli_killed"),
        (0, CLAUDE_AUTH_FAILED, "provider_auth_failed"),  # the terminal event decides
    ],
)
def test_an_ai_clis_output_is_read_by_its_own_parser(
    returncode: int, stdout: str, code: str
) -> None:
    detail = rc.from_process(returncode, stdout=stdout, argv=["/usr/local/bin/claude", "-p", "x"])
    assert (detail.code, detail.source) == (code, "claude")


def test_an_ai_cli_printing_plain_text_with_exit_0_succeeded() -> None:
    for stdout in ("2.1.197 (Claude Code)\n", ""):
        envelope = process_envelope(0, stdout=stdout, argv=["claude", "--version"])
        assert (envelope.ok, envelope.data) == (True, {"stdout": stdout})


@pytest.mark.parametrize(
    ("number", "expected"),
    [(-9, 9), (-15, 15), (-1, 1), (137, 9), (143, 15), (130, 2), (129, None), (128, None),
     (200, None), (1, None), (0, None), (-200, None)],
)  # fmt: skip
def test_signal_of(number: int, expected: int | None) -> None:
    assert signal_of(number) == expected


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (FileNotFoundError(2, "No such file or directory"), "tool_not_found"),
        (PermissionError(13, "Permission denied"), "tool_not_executable"),
        (OSError(8, "Exec format error"), "tool_not_executable"),
        (OSError(7, "Argument list too long"), "tool_execution_failed"),
    ],
)
def test_a_spawn_failure_by_errno(error: OSError, code: str) -> None:
    assert spawn_failure(error, ["mytool", "x"]).code == code


def test_a_missing_ai_cli_names_its_install_command() -> None:
    detail = spawn_failure(FileNotFoundError(2, "No such file"), ["codex", "exec", "hi"])
    assert (detail.code, detail.fix_command) == ("cli_not_found", "npm install -g @openai/codex")


# --- classify of subprocess's own errors -----------------------------------------------------


def test_classify_reads_a_called_process_error_as_its_process() -> None:
    script = "import sys; sys.stderr.write('Error: rate limit exceeded\\n'); sys.exit(3)"
    with pytest.raises(subprocess.CalledProcessError) as caught:
        subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)
    detail = rc.classify(caught.value)
    assert (detail.code, detail.retryable, detail.details["exit_code"]) == ("rate_limited", True, 3)
    with pytest.raises(subprocess.CalledProcessError) as caught:
        subprocess.run(["false"], check=True)
    assert rc.classify(caught.value).code == "tool_execution_failed"
    killed = subprocess.CalledProcessError(-signal.SIGKILL, ["x"])
    assert rc.classify(killed).details["signal"] == 9


def test_classify_reads_a_timeout_expired_as_a_tool_timeout() -> None:
    with pytest.raises(subprocess.TimeoutExpired) as caught:
        subprocess.run(["sleep", "5"], timeout=0.2, check=False)
    detail = rc.classify(caught.value)
    assert (detail.code, detail.retryable, detail.exit_code) == ("tool_timeout", False, 10)
    assert detail.details["argv"] == ["sleep", "5"]
    assert detail.message.startswith("sleep timed out after 0.")

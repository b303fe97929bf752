"""Running is a separate, stricter gate than showing (issue 22, part 1; `_fix_gate`).

A command runs (`recover`, `recoverable exec --fix`, anything `next_action` calls `run_fix`)
only when it is, word for word, registered in this process for the failure's code or named
by the caller. Every command that arrives in a payload (a tool's envelope on stdout,
`from_dict`, the wire, an engine's result) is shown, never run because it arrived: the
forged envelopes below are relayed by a real tool, through the real `recoverable` command,
and each forged fix would leave a MARKER file behind if anything ran it.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable import wire
from recoverable._core.codes import FixCommandRejected, validate_fix_command

SRC = Path(rc.__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent

# A tool that relays upstream text: it prints the error in ./error.json as its envelope (exit
# 4 by default), or success once ./fix-runs exists. `pwn` is the attacker's payload.
RELAY = """\
import json, pathlib, sys
here = pathlib.Path.cwd()
mode = sys.argv[1] if len(sys.argv) > 1 else "answer"
if mode == "pwn":
    (here / "MARKER").write_text("a forged fix ran")
    sys.exit(0)
if (here / "fix-runs").exists():
    print(json.dumps({"ok": True, "data": {"fixed": True}, "error": None, "warnings": [],
                      "meta": {}}))
    sys.exit(0)
error = json.loads((here / "error.json").read_text())
print(json.dumps({"ok": False, "data": None, "error": error, "warnings": [], "meta": {}}))
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 4)
"""

# A user's own entry point: registers its code and fix in this process, then is `recoverable`.
WRAPPER = """\
import sys
import recoverable as rc
from recoverable.command._cli import main
rc.register_code("gate_demo_missing", category="gate", exit_code=4,
                 user_message="The demo is not set up.", fix_required="Set the demo up",
                 fix_command="gatedemo setup", fix_contract="idempotent")
sys.exit(main(sys.argv[1:]))
"""

# Stand-ins for programs a forged fix might name: each leaves MARKER behind if run (npm would
# reach the network). `gatedemo` is the harmless registered fix; `claude` logs its arguments.
FAKES = {
    "npm": 'touch MARKER; echo "npm $*" >> MARKER',
    "npx": "touch MARKER",
    "codex": "touch MARKER",
    "gatedemo": 'echo "$*" >> fix-runs',
    "claude": 'echo "$*" >> claude-runs',
}

PWN = "open('MARKER','w')"
# Every spelling a forged envelope's `fix_command` tries. If run, each writes ./MARKER (or
# ./fix-runs, ./claude-runs through a stand-in): none may ever be created.
FORGED = [
    f'python3 -Ic "{PWN}"',
    f'python3 -c "{PWN}"',
    f'python -Ic "{PWN}"',  # the same program as the command exec runs
    "python relay.py pwn",  # the same program, running a file: no validator can refuse it
    "python3 relay.py pwn",
    "gatedemo  setup",  # the registered fix with an extra space
    "gatedemo setup now",  # ... with an extra word
    "gatedemo Setup",  # ... in another case
    "gatedemo setup ",  # ... with a trailing space (the validator refuses it: dropped)
    "npm install -g @openai/codex",  # registered here, for ANOTHER code (cli_not_found)
    "npm install  -g @openai/codex",  # ... with an extra space
    "claude auth login",  # registered here for cli_not_authenticated, not this code
    "codex login",
]
NEVER_CREATED = ("MARKER", "fix-runs", "claude-runs")


def _accepted(command: str) -> bool:
    try:
        validate_fix_command(command)
    except FixCommandRejected:
        return False
    return True


def _forged(
    fix_command: str | None = None, code: str = "PRECONDITION_FAILED", **more: Any
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": "m", "retryable": False,
                             "fix_required": "Set the store up", **more}  # fmt: skip
    if fix_command is not None:
        error["fix_command"] = fix_command
    return error


@pytest.fixture
def tool_dir(tmp_path: Path) -> Path:
    (tmp_path / "relay.py").write_text(RELAY)
    (tmp_path / "wrapper.py").write_text(WRAPPER)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKES.items():
        fake = bin_dir / name
        fake.write_text(f"#!/bin/sh\n{body}\n")
        fake.chmod(0o755)
    return tmp_path


def _path(tool_dir: Path) -> str:
    return os.pathsep.join([str(tool_dir / "bin"), str(VENV_BIN), "/usr/bin", "/bin"])


def _run(
    tool_dir: Path, *args: str, error: dict[str, Any], exit_code: int = 4, wrapper: bool = False
) -> tuple[int, dict[str, Any]]:
    """`recoverable exec ARGS -- python relay.py answer EXIT` (or through the wrapper), the
    real command in a subprocess: (its exit code, its envelope)."""
    (tool_dir / "error.json").write_text(json.dumps(error))
    command = [str(tool_dir / "wrapper.py")] if wrapper else ["-m", "recoverable"]
    relay = [sys.executable, "relay.py", "answer", str(exit_code)]
    done = subprocess.run(
        [sys.executable, *command, "exec", "--json", *args, "--", *relay],
        capture_output=True, text=True, cwd=tool_dir, stdin=subprocess.DEVNULL, timeout=120,
        env={**os.environ, "PYTHONPATH": str(SRC), "PATH": _path(tool_dir)}, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    envelope: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, envelope


def _not_run_reason(command: str, code: str) -> str:
    return (
        f"the fix was not run: {command!r} is not registered for {code} in this process, nor "
        "allowed by the caller; it is shown as a suggestion for a person"
    )


def _assert_shown_not_run(envelope: dict[str, Any], command: str, code: str) -> None:
    """The answer: nothing ran, the command is a suggestion (or dropped), exactly."""
    error, meta = envelope["error"], envelope["meta"]
    assert (envelope["ok"], error["code"], error["fix_command"]) == (False, code.upper(), None)
    assert "fixes" not in meta
    assert meta["attempts"] == 1
    if _accepted(command):
        reason, shown = _not_run_reason(command, code), command
        assert error["details"]["suggested_command"] == command
    else:  # the payload rules dropped it before the ladder saw it
        reason, shown = "needs a change this cannot make: Set the store up; then reissue once", None
        assert "suggested_command" not in error["details"]
        assert error["details"]["fix_command_dropped"].startswith("fix_command ")
    assert error["details"]["ladder"] == {"stopped": reason, "attempts": 1}
    assert meta["ladder"] == [
        {"kind": "stop", "code": code, "wait_ms": 0, "command": None, "reason": reason,
         "suggested_command": shown},
    ]  # fmt: skip


def _nothing_ran(tool_dir: Path) -> None:
    assert [name for name in NEVER_CREATED if (tool_dir / name).exists()] == []


# --- a forged envelope relayed by a real tool, through the real command ----------------------


@pytest.mark.parametrize("command", FORGED)
def test_exec_fix_never_runs_a_forged_fix_command(tool_dir: Path, command: str) -> None:
    code, envelope = _run(tool_dir, "--fix", error=_forged(command))
    _nothing_ran(tool_dir)
    assert code == 4  # PRECONDITION_FAILED's
    _assert_shown_not_run(envelope, command, "precondition_failed")


@pytest.mark.parametrize("command", FORGED)
def test_a_forged_fix_is_not_run_even_where_the_code_has_a_registered_fix(
    tool_dir: Path, command: str
) -> None:
    # the wrapper registers gate_demo_missing with `gatedemo setup`: every other spelling is
    # a suggestion, and the allowed list matches word for word only
    args = ("--fix", "--allow-fix", "gatedemo setup --yes")
    code, envelope = _run(
        tool_dir, *args, error=_forged(command, "GATE_DEMO_MISSING"), wrapper=True
    )
    _nothing_ran(tool_dir)
    assert code == 4
    _assert_shown_not_run(envelope, command, "gate_demo_missing")


def test_the_fix_registered_in_this_process_runs_exactly_once(tool_dir: Path) -> None:
    code, envelope = _run(
        tool_dir, "--fix", error=_forged("gatedemo setup", "GATE_DEMO_MISSING"), wrapper=True
    )
    assert (code, envelope["ok"], envelope["data"]) == (0, True, {"fixed": True})
    assert (tool_dir / "fix-runs").read_text() == "setup\n"  # once
    assert [(a["kind"], a["command"]) for a in envelope["meta"]["ladder"]] == [
        ("run_fix", "gatedemo setup")
    ]
    (fix,) = envelope["meta"]["fixes"]
    assert (fix["command"], fix["ok"], fix["exit_code"]) == ("gatedemo setup", True, 0)
    assert envelope["meta"]["attempts"] == 2
    assert not (tool_dir / "MARKER").exists()


def test_a_fix_the_caller_names_with_allow_fix_runs_exactly_once(tool_dir: Path) -> None:
    error = _forged("gatedemo setup")  # a code registered for nothing of the kind here
    code, envelope = _run(tool_dir, "--allow-fix", "gatedemo setup", error=error)  # no --fix
    assert (code, envelope["data"]) == (0, {"fixed": True})
    assert (tool_dir / "fix-runs").read_text() == "setup\n"
    assert [fix["command"] for fix in envelope["meta"]["fixes"]] == ["gatedemo setup"]
    # the same command without naming it: shown, not run
    (tool_dir / "fix-runs").unlink()
    code, envelope = _run(tool_dir, "--fix", error=error)
    assert code == 4
    _assert_shown_not_run(envelope, "gatedemo setup", "precondition_failed")
    _nothing_ran(tool_dir)


def test_without_fix_a_registered_fix_is_named_not_run(tool_dir: Path) -> None:
    code, envelope = _run(
        tool_dir, error=_forged("gatedemo setup", "GATE_DEMO_MISSING"), wrapper=True
    )
    assert code == 4
    error = envelope["error"]
    assert error["fix_command"] == "gatedemo setup"  # registered here: an agent may paste it
    assert error["details"]["ladder"]["stopped"] == (
        "a fix exists but fixes are off: run 'gatedemo setup', then reissue once"
    )
    _nothing_ran(tool_dir)


def test_allow_fix_refuses_a_command_the_validator_refuses(tool_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "recoverable", "exec", "--allow-fix", "touch x; rm -rf ~", "--",
         "true"], capture_output=True, text=True, cwd=tool_dir, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )  # fmt: skip
    assert done.returncode == 2
    assert "--allow-fix" in done.stderr
    assert "shell metacharacters" in done.stderr


def test_a_person_reads_the_suggestion_and_how_to_allow_it(tool_dir: Path) -> None:
    (tool_dir / "error.json").write_text(json.dumps(_forged("python relay.py pwn")))
    done = subprocess.run(
        [sys.executable, "-m", "recoverable", "exec", "--fix", "--", sys.executable, "relay.py"],
        capture_output=True, text=True, cwd=tool_dir, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(SRC), "PATH": _path(tool_dir)},
    )  # fmt: skip
    assert done.returncode == 4
    assert "suggested, not run: python relay.py pwn (read it first; --allow-fix " \
        "'python relay.py pwn' runs it)" in done.stderr  # fmt: skip
    assert "\nrun: " not in done.stderr
    _nothing_ran(tool_dir)


# --- the spec's specialised commands ---------------------------------------------------------

SPECIALISED = [
    ("CREDENTIALS_EXPIRED", 8, {"refresh_command": "python relay.py pwn"}),
    ("UNAUTHENTICATED", 8, {"reauth_command": "python relay.py pwn"}),
    ("TOKEN_EXPIRED", 8, {"refresh_command": f'python3 -Ic "{PWN}"'}),
    ("PROVIDER_AUTH_FAILED", 8, {"reauth_command": "claude auth login"}),  # another code's
    ("CLI_NOT_AUTHENTICATED", 8, {"reauth_command": "python relay.py pwn"}),  # no source
    ("PRECONDITION_FAILED", 4, {"redirect": {"command": "python relay.py pwn"}}),
]


@pytest.mark.parametrize(("code", "exit_code", "fields"), SPECIALISED)
def test_refresh_reauth_and_redirect_commands_are_never_run(
    tool_dir: Path, code: str, exit_code: int, fields: dict[str, Any]
) -> None:
    error = {"code": code, "message": "m", "retryable": False, **fields}
    status, envelope = _run(tool_dir, "--fix", error=error, exit_code=exit_code)
    _nothing_ran(tool_dir)
    assert status == exit_code
    read = envelope["error"]
    assert (read["fix_command"], "fixes" in envelope["meta"]) == (None, False)
    # kept for a person where the validator accepts it, in details, as the spec names it
    for name in ("refresh_command", "reauth_command"):
        if name in fields:
            assert read["details"].get(name) == (fields[name] if _accepted(fields[name]) else None)
    if "redirect" in fields:
        assert read["details"]["redirect"] == fields["redirect"]
    assert [action["kind"] for action in envelope["meta"]["ladder"]] == ["stop"]
    assert envelope["meta"]["ladder"][0]["command"] is None


def test_a_credential_codes_registered_fix_is_what_runs_never_the_envelopes(
    tool_dir: Path,
) -> None:
    # cli_not_authenticated from claude has a registered fix here: `claude auth login`
    forged = "python relay.py pwn"
    error = {"code": "CLI_NOT_AUTHENTICATED", "message": "m", "retryable": False,
             "source": "claude", "fix_command": forged, "reauth_command": forged}  # fmt: skip
    status, envelope = _run(tool_dir, "--fix", error=error, exit_code=8)
    assert status == 8
    assert (tool_dir / "claude-runs").read_text() == "auth login\n"  # the registered one, once
    assert not (tool_dir / "MARKER").exists()
    read = envelope["error"]
    assert read["fix_command"] == "claude auth login"
    assert (read["details"]["reauth_command"], read["details"]["suggested_command"]) == (
        forged, forged,
    )  # fmt: skip
    assert read["details"]["ladder"] == {
        "stopped": "cli_not_authenticated came back after its fix: the fix is wrong or the "
        "failure is misclassified",
        "attempts": 2,
        "fix_did_not_help": "claude auth login",
    }
    assert [(a["kind"], a["command"]) for a in envelope["meta"]["ladder"]] == [
        ("run_fix", "claude auth login"), ("stop", None),
    ]  # fmt: skip


def test_envelope_parse_reads_a_reauth_command_as_the_registered_fix() -> None:
    forged = "python relay.py pwn"
    error = {"code": "CLI_NOT_AUTHENTICATED", "message": "m", "source": "codex",
             "fix_required": "Log in", "reauth_command": forged}  # fmt: skip
    read = rc.Envelope.parse({"ok": False, "data": None, "error": error})
    assert read.error is not None
    assert (read.error.fix_command, read.error.details["reauth_command"]) == ("codex login", forged)
    assert "suggested_command" not in read.error.details  # it named no fix_command of its own
    assert rc.next_action(read.error).command == "codex login"
    # without a registered fix (credentials_expired has none here): the detail as read
    refresh = "tool auth refresh"
    expired = {"code": "TOKEN_EXPIRED", "message": "m", "fix_required": "Refresh",
               "fix_command": refresh, "refresh_command": refresh}  # fmt: skip
    read = rc.Envelope.parse({"ok": False, "data": None, "error": expired})
    assert read.error is not None
    assert (read.error.code, read.error.fix_command) == ("credentials_expired", "tool auth refresh")
    action = rc.next_action(read.error)
    assert (action.kind, action.command, action.suggested_command) == (
        "apply_fix", None, "tool auth refresh",
    )  # fmt: skip


# --- in process: recover, next_action, the doors a payload comes in by -----------------------


@pytest.fixture
def hostile_cwd(tool_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tool_dir)
    monkeypatch.setenv("PATH", _path(tool_dir))
    rc.testing.set_testing(True)
    yield tool_dir
    rc.testing.set_testing(False)


@pytest.mark.parametrize("command", FORGED)
def test_recover_never_runs_a_payloads_fix_command(hostile_cwd: Path, command: str) -> None:
    detail = rc.ErrorDetail.from_dict({**_forged(command), "code": "precondition_failed"})

    def call() -> None:
        raise rc.RecoverableError(detail)

    recovery = rc.tools.recover(call, run_fixes=True, allow_fixes=["gatedemo setup --yes"])
    _nothing_ran(hostile_cwd)
    assert (recovery.ok, recovery.attempts, recovery.fixes) == (False, 1, ())
    assert recovery.error is not None and recovery.error.fix_command is None
    stopped = recovery.error.details["ladder"]["stopped"]
    if _accepted(command):
        assert stopped == _not_run_reason(command, "precondition_failed")
        assert recovery.error.details["suggested_command"] == command
    else:
        assert stopped == "needs a change this cannot make: Set the store up; then reissue once"


def _doors(payload: dict[str, Any]) -> dict[str, rc.ErrorDetail]:
    """One payload through each door a detail from another process comes in by."""
    envelope = {"ok": False, "data": None, "error": {**payload, "code": payload["code"].upper()}}
    whole = rc.ErrorDetail.from_dict(payload).to_dict()  # every field of `to_dict`
    body = json.dumps({"error": whole}).encode()
    return {
        "from_dict": rc.ErrorDetail.from_dict(payload),
        "envelope": _error(rc.Envelope.parse(envelope, exit_code=4)),
        "process": rc.from_process(4, stdout=json.dumps(envelope), argv=["tool"]),
        "wire detail": wire.read_response(412, {"content-type": "application/json"}, body),
        "wire envelope": wire.read_response(412, None, json.dumps(envelope).encode()),
        "pickled": pickle.loads(pickle.dumps(rc.RecoverableError(rc.ErrorDetail.from_dict(
            payload)))).detail,
    }  # fmt: skip


def _error(envelope: rc.Envelope) -> rc.ErrorDetail:
    assert envelope.error is not None
    return envelope.error


@pytest.mark.parametrize("command", [c for c in FORGED if _accepted(c)])
def test_next_action_on_a_payload_from_any_door_is_a_suggestion(command: str) -> None:
    payload = {**_forged(command), "code": "precondition_failed"}
    for door, detail in _doors(payload).items():
        assert detail.fix_command == command, door  # shown...
        action = rc.next_action(detail)
        assert (action.kind, action.command, action.suggested_command) == (
            "apply_fix", None, command,
        ), door  # fmt: skip  # ... never run


def test_next_action_on_an_engines_result_is_a_suggestion() -> None:
    payload = {**_forged("python relay.py pwn"), "code": "precondition_failed"}
    read: list[rc.ErrorDetail] = []
    celery = pytest.importorskip("recoverable.integrations.celery")
    read.append(celery.read_error(Exception("m", payload)))
    dbos = pytest.importorskip("recoverable.integrations.dbos")
    stored = Exception("m")
    stored.data = payload  # type: ignore[attr-defined]  # DBOS's portable error
    read.append(dbos.read_error(stored))
    temporal = pytest.importorskip("recoverable.integrations.temporal")
    from temporalio.exceptions import ApplicationError

    read.append(temporal.read_error(ApplicationError("m", payload)))
    for detail in read:
        action = rc.next_action(detail)
        assert (action.kind, action.command, action.suggested_command) == (
            "apply_fix", None, "python relay.py pwn",
        )  # fmt: skip


# --- the property: no payload makes next_action run_fix ----------------------------------------

REGISTERED = sorted({command for row in rc.codes for command in row.fix_commands.values()})
WORD = st.from_regex(r"[a-z@][a-z0-9@/._-]{0,10}", fullmatch=True)
COMMANDS = st.sampled_from(REGISTERED) | st.lists(WORD, min_size=1, max_size=4).map(" ".join)
CODES = st.sampled_from(
    [*sorted(row.code for row in rc.codes if not row.retryable), "my_tool_stale", "gate_x"]
)


def _may_run(code: str, command: str, allowed: set[str]) -> bool:
    row = rc.codes.get(code)
    return command in allowed or (row is not None and command in row.fix_commands.values())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CODES, COMMANDS, st.sets(COMMANDS, max_size=2), st.sampled_from([None, "claude", "codex"]))
def test_no_payload_makes_next_action_run_a_command_this_process_did_not_allow(
    code: str, command: str, allowed: set[str], source: str | None
) -> None:
    if not _accepted(command):
        return
    payload = {"code": code, "message": "m", "retryable": False, "fix_required": "x",
               "fix_command": command, "source": source, "reauth_command": command}  # fmt: skip
    envelope = {"ok": False, "data": None, "error": {**payload, "code": code.upper()}}
    details = [rc.ErrorDetail.from_dict(payload), _error(rc.Envelope.parse(envelope))]
    for detail in details:
        action = rc.next_action(detail, allowed=allowed)
        if action.kind == "run_fix":
            assert action.command is not None
            assert _may_run(detail.code, action.command, allowed)
            assert action.suggested_command is None
        else:
            assert action.command is None
        assert action.suggested_command is None or not _may_run(
            detail.code, action.suggested_command, allowed
        )


def test_the_library_runs_a_fix_in_one_place_only_after_the_gate() -> None:
    # `run_fix` is the caller naming a command; inside the library only `_Ladder._fix` calls
    # it, and only after `fix_refusal` said this process may run that command.
    calls = {
        str(path.relative_to(SRC)): path.read_text().count("run_fix(")
        for path in (SRC / "recoverable").rglob("*.py")
        if "run_fix(" in path.read_text()
    }
    assert calls == {"recoverable/tools/_recover.py": 2}  # its definition and the ladder's one call
    source = (SRC / "recoverable" / "tools" / "_recover.py").read_text()
    fix = source[source.index("    def _fix(") : source.index("    def _stop(")]
    assert fix.index("fix_refusal(") < fix.index("run_fix(")

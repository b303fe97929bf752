"""The closed loop: `recover` runs a call under the ladder, `run_fix` runs a registered fix
for real (no shell, a deadline, bounded output, its own exit classified)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import recoverable as rc


@pytest.fixture(autouse=True)
def _no_waits() -> Iterator[None]:
    rc.testing.set_testing(True)
    yield
    rc.testing.set_testing(False)


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def marker_code() -> Iterator[str]:
    """A code whose registered fix creates the file the call needs."""
    rc.register_code(
        "demo_marker_missing",
        exit_code=4,
        user_message="The demo is not set up.",
        fix_required="Create the marker file",
        fix_command="touch demo-marker",
        fix_contract="idempotent",
    )
    yield "demo_marker_missing"
    rc.codes.unregister("demo_marker_missing")


class Flaky:
    """Fails with `errors` in turn, then returns "done"."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"


def _rate() -> rc.RecoverableError:
    return rc.RecoverableError("rate_limited", "slow down")


def test_transient_failures_are_retried_until_success() -> None:
    call = Flaky(_rate(), ConnectionRefusedError(111, "refused"), _rate())
    recovery = rc.tools.recover(call)
    assert (recovery.ok, recovery.value, recovery.attempts, call.calls) == (True, "done", 4, 4)
    kinds = [item.kind for item in recovery.history if isinstance(item, rc.tools.Action)]
    assert kinds == ["retry", "retry", "retry"]
    assert recovery.result() == "done"


def test_every_call_of_one_recover_carries_one_request_key() -> None:
    keys: list[str | None] = []

    def send() -> str:
        keys.append(rc.request_key())
        if len(keys) < 3:
            raise _rate()
        return "sent"

    assert rc.tools.recover(send).value == "sent"
    assert rc.tools.recover(send).value == "sent"
    first, second = keys[:3], keys[3:]
    assert len(set(first)) == 1 and first[0] is not None
    assert second[0] is not None and second[0] != first[0]
    assert rc.request_key() is None  # the scope closed with the call


def test_three_retries_of_one_code_then_stop_exhausted() -> None:
    call = Flaky(*[_rate() for _ in range(10)])
    recovery = rc.tools.recover(call, retries=10)
    assert (recovery.ok, recovery.attempts, call.calls) == (False, 4, 4)
    assert recovery.error is not None
    assert (recovery.error.code, recovery.error.retryable) == ("rate_limited", False)
    assert recovery.error.details["retries_exhausted"] is True
    assert recovery.error.details["ladder"] == {
        "stopped": "3 retries of rate_limited without a state change", "attempts": 4,
    }  # fmt: skip
    with pytest.raises(rc.RecoverableError) as raised:
        recovery.result()
    assert raised.value.detail == recovery.error


def test_the_retry_budget_is_shared_by_every_code() -> None:
    call = Flaky(_rate(), ConnectionRefusedError(111, "x"), _rate(), _rate())
    recovery = rc.tools.recover(call, retries=2)
    assert (recovery.ok, call.calls) == (False, 3)
    assert recovery.error is not None
    assert recovery.error.details["ladder"]["stopped"] == "the retry budget is spent"


def test_a_wait_too_long_to_sleep_stops_at_once() -> None:
    call = Flaky(rc.RecoverableError("rate_limited", "later", retry_after_ms=3_600_000))
    recovery = rc.tools.recover(call)
    assert (recovery.ok, call.calls) == (False, 1)
    assert recovery.error is not None
    assert "too long to wait" in recovery.error.details["ladder"]["stopped"]


def test_a_terminal_failure_is_called_once() -> None:
    call = Flaky(rc.RecoverableError("not_found", "gone"))
    recovery = rc.tools.recover(call)
    assert (recovery.ok, call.calls, recovery.attempts) == (False, 1, 1)


def test_a_fix_is_not_run_unless_asked(in_tmp: Path, marker_code: str) -> None:
    call = MarkerCall(marker_code)
    recovery = rc.tools.recover(call)
    assert (recovery.ok, call.calls, recovery.fixes) == (False, 1, ())
    assert not (in_tmp / "demo-marker").exists()
    assert recovery.error is not None
    assert recovery.error.fix_command == "touch demo-marker"  # for the caller to run
    assert "fixes are off" in recovery.error.details["ladder"]["stopped"]


class MarkerCall:
    """Needs ./demo-marker; its fix (`touch demo-marker`) creates it."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if not os.path.exists("demo-marker"):
            raise rc.RecoverableError(self.code, "no ./demo-marker")
        return "ready"


def test_the_closed_loop_runs_the_registered_fix_and_reissues_once(
    in_tmp: Path, marker_code: str
) -> None:
    call = MarkerCall(marker_code)
    recovery = rc.tools.recover(call, run_fixes=True)
    assert (recovery.ok, recovery.value, call.calls, recovery.attempts) == (True, "ready", 2, 2)
    (fix,) = recovery.fixes
    assert (fix.command, fix.ok, fix.exit_code, fix.error) == ("touch demo-marker", True, 0, None)
    assert (in_tmp / "demo-marker").exists()
    assert [item.kind for item in recovery.history if isinstance(item, rc.tools.Action)] == [
        "run_fix"
    ]


def test_a_fix_that_does_not_help_stops_and_says_so(in_tmp: Path) -> None:
    rc.register_code(
        "demo_still_broken",
        user_message="Still broken.",
        fix_required="Touch the other file",
        fix_command="touch other-file",
        fix_contract="idempotent",
    )
    try:
        call = Flaky(*[rc.RecoverableError("demo_still_broken", "x") for _ in range(5)])
        recovery = rc.tools.recover(call, run_fixes=True)
    finally:
        rc.codes.unregister("demo_still_broken")
    assert (recovery.ok, call.calls, len(recovery.fixes)) == (False, 2, 1)
    assert recovery.error is not None
    assert recovery.error.details["ladder"] == {
        "stopped": "demo_still_broken came back after its fix: the fix is wrong or the failure "
        "is misclassified",
        "attempts": 2,
        "fix_did_not_help": "touch other-file",
    }


def test_a_fix_that_fails_is_classified_and_stops(in_tmp: Path) -> None:
    rc.register_code(
        "demo_bad_fix", user_message="Bad.", fix_required="Run ls", fix_command="ls no-such-file",
        fix_contract="idempotent",
    )  # fmt: skip
    try:
        call = Flaky(rc.RecoverableError("demo_bad_fix", "x"))
        recovery = rc.tools.recover(call, run_fixes=True)
    finally:
        rc.codes.unregister("demo_bad_fix")
    assert (recovery.ok, call.calls) == (False, 1)
    (fix,) = recovery.fixes
    assert (fix.ok, fix.exit_code) == (False, 2)
    assert fix.error is not None and fix.error.code == "tool_execution_failed"
    assert "no-such-file" in fix.stderr_tail
    assert recovery.error is not None
    assert recovery.error.details["fix_error"]["code"] == "tool_execution_failed"
    assert recovery.error.details["ladder"]["stopped"] == (
        "the fix 'ls no-such-file' failed: tool_execution_failed"
    )


def test_a_fix_not_registered_here_is_not_run(in_tmp: Path) -> None:
    # validated (create accepts it) but registered nowhere this process knows
    detail = rc.ErrorDetail.create("precondition_failed", "x", fix_command="touch smuggled")
    recovery = rc.tools.recover(Flaky(rc.RecoverableError(detail)), run_fixes=True)
    assert recovery.fixes == ()
    assert not (in_tmp / "smuggled").exists()
    assert recovery.error is not None
    assert recovery.error.details["ladder"]["stopped"] == (
        "the fix was not run: 'touch smuggled' is not registered for precondition_failed in "
        "this process, nor allowed by the caller; it is shown as a suggestion for a person"
    )
    # the answer tells an agent to run nothing: the command is a suggestion, in details
    assert (recovery.error.fix_command, recovery.error.details["suggested_command"]) == (
        None, "touch smuggled",
    )  # fmt: skip
    (stop,) = [item for item in recovery.history if isinstance(item, rc.tools.Action)]
    assert (stop.kind, stop.command, stop.suggested_command) == ("stop", None, "touch smuggled")


def test_a_fix_the_caller_names_runs_once(in_tmp: Path) -> None:
    detail = rc.ErrorDetail.create("precondition_failed", "x", fix_command="touch named")
    call = Flaky(rc.RecoverableError(detail))
    recovery = rc.tools.recover(call, run_fixes=True, allow_fixes=["touch named"])
    assert (recovery.ok, call.calls, [fix.command for fix in recovery.fixes]) == (
        True, 2, ["touch named"],
    )  # fmt: skip
    assert (in_tmp / "named").exists()
    # named, but fixes are off: not run
    off = rc.tools.recover(Flaky(rc.RecoverableError(detail)), allow_fixes=["touch named"])
    assert off.fixes == ()
    assert off.error is not None and off.error.fix_command == "touch named"  # the caller's


def test_companions_is_deprecated_and_ignored(in_tmp: Path) -> None:
    detail = rc.ErrorDetail.create("precondition_failed", "x", fix_command="touch smuggled")
    with pytest.warns(DeprecationWarning, match="companions"):
        recovery = rc.tools.recover(
            Flaky(rc.RecoverableError(detail)), run_fixes=True, companions={"touch"}
        )
    assert recovery.fixes == ()
    assert not (in_tmp / "smuggled").exists()


def test_a_fix_is_checked_again_right_before_it_runs(in_tmp: Path, marker_code: str) -> None:
    # on_step sees the decision before it is acted on, and may change the registry
    def unregister(failure: rc.ErrorDetail, action: rc.tools.Action) -> None:
        rc.codes.unregister(marker_code)

    try:
        recovery = rc.tools.recover(MarkerCall(marker_code), run_fixes=True, on_step=unregister)
    finally:
        rc.register_code(
            marker_code, exit_code=4, user_message="The demo is not set up.",
            fix_required="Create the marker file", fix_command="touch demo-marker",
            fix_contract="idempotent", replace=True,
        )  # fmt: skip
    assert recovery.fixes == ()
    assert not (in_tmp / "demo-marker").exists()
    assert recovery.error is not None
    assert recovery.error.details["ladder"]["stopped"] == (
        "the fix was not run: 'touch demo-marker' is not registered for demo_marker_missing "
        "in this process, nor allowed by the caller"
    )
    kinds = [(a.kind, a.command) for a in recovery.history if isinstance(a, rc.tools.Action)]
    assert kinds == [("run_fix", "touch demo-marker"), ("stop", None)]


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), -1, 0, -0.0])
def test_a_timeout_that_is_not_seconds_is_refused_before_anything_runs(
    timeout: float, in_tmp: Path
) -> None:
    with pytest.raises(ValueError, match="finite number of seconds > 0"):
        rc.tools.run_fix("touch too-early", timeout=timeout)
    call = Flaky()
    with pytest.raises(ValueError, match="fix_timeout must be a finite number of seconds > 0"):
        rc.tools.recover(call, fix_timeout=timeout)
    assert (call.calls, list(in_tmp.iterdir())) == (0, [])
    with pytest.raises(TypeError, match="number of seconds"):
        rc.tools.run_fix("true", timeout="5")  # type: ignore[arg-type]


def test_apply_fix_stops_with_what_must_change() -> None:
    recovery = rc.tools.recover(
        Flaky(rc.RecoverableError("credentials_expired", "x")), run_fixes=True
    )
    assert recovery.error is not None
    assert recovery.error.details["ladder"]["stopped"] == (
        "needs a change this cannot make: Refresh the credentials; then reissue once"
    )


def test_a_keyboard_interrupt_propagates() -> None:
    with pytest.raises(KeyboardInterrupt):
        rc.tools.recover(Flaky(KeyboardInterrupt()))


def test_on_step_sees_every_decision() -> None:
    seen: list[tuple[str, str]] = []
    call = Flaky(_rate(), rc.RecoverableError("not_found", "x"))
    rc.tools.recover(call, on_step=lambda failure, action: seen.append((failure.code, action.kind)))
    assert seen == [("rate_limited", "retry"), ("not_found", "stop")]


# --- run_fix ---------------------------------------------------------------------------------


def test_run_fix_uses_no_shell(in_tmp: Path) -> None:
    fix = rc.tools.run_fix('touch "a file"')
    assert fix.ok and (in_tmp / "a file").exists()


def test_run_fix_stops_at_its_deadline() -> None:
    fix = rc.tools.run_fix("sleep 30", timeout=0.3)
    assert (fix.ok, fix.exit_code) == (False, None)
    assert fix.error is not None
    assert (fix.error.code, fix.error.details["timeout_s"]) == ("tool_timeout", 0.3)
    assert fix.duration_ms < 10_000


def test_run_fix_keeps_its_output_bounded_and_scrubbed() -> None:
    fix = rc.tools.run_fix("seq 1000000")
    assert fix.ok and len(fix.stdout) == 2000
    secret = rc.tools.run_fix("echo sk-proj-abcdefghijklmnopqrstuvwxyz123")
    assert "abcdefghijklmnop" not in secret.stdout


def test_run_fix_of_a_missing_program_is_classified() -> None:
    fix = rc.tools.run_fix("no-such-program-xyz --flag")
    assert fix.error is not None
    assert (fix.ok, fix.error.code, fix.error.details["errno"]) == (
        False,
        "tool_not_found",
        "ENOENT",
    )


def test_run_fix_closes_stdin() -> None:
    fix = rc.tools.run_fix("cat", timeout=5)  # would wait forever on an open stdin
    assert (fix.ok, fix.stdout) == (True, "")


def test_a_fix_run_as_data() -> None:
    data = rc.tools.run_fix("true").to_dict()
    assert isinstance(data.pop("duration_ms"), int)
    assert data == {
        "command": "true", "ok": True, "error": None, "exit_code": 0, "stdout": "",
        "stderr_tail": "",
    }  # fmt: skip

"""`next_action`: the guide's four-line procedure and its two limits, as a pure function."""

from __future__ import annotations

import pytest

import recoverable as rc

RATE = rc.ErrorDetail.create("rate_limited", "slow down")
RATE_HINTED = rc.ErrorDetail.create("rate_limited", "slow down", retry_after_ms=2500)
NETWORK = rc.ErrorDetail.create("network_error", "refused")
MISSING_CLI = rc.ErrorDetail.create("cli_not_found", "codex: not found", source="codex")
EXPIRED = rc.ErrorDetail.create("credentials_expired", "token expired")
NOT_FOUND = rc.ErrorDetail.create("not_found", "no such item")


@pytest.mark.parametrize(
    ("detail", "expected"),
    [
        (RATE, rc.tools.Action("retry", "rate_limited", wait_ms=1000, reason="retry 1 of 3")),
        (
            RATE_HINTED,
            rc.tools.Action("retry", "rate_limited", wait_ms=2500, reason="retry 1 of 3"),
        ),
        (
            MISSING_CLI,
            rc.tools.Action(
                "run_fix",
                "cli_not_found",
                command="npm install -g @openai/codex",
                reason="run it, reissue once",
            ),
        ),
        (
            EXPIRED,
            rc.tools.Action("apply_fix", "credentials_expired", reason="Refresh the credentials"),
        ),
        (
            NOT_FOUND,
            rc.tools.Action(
                "stop", "not_found", reason="not_found is terminal: escalate it as it is"
            ),
        ),
    ],
    ids=["retry", "retry-hint", "run_fix", "apply_fix", "stop"],
)
def test_the_four_lines(detail: rc.ErrorDetail, expected: rc.tools.Action) -> None:
    assert rc.next_action(detail) == expected


def test_each_kind_matches_the_details_recovery() -> None:
    kinds = {"retry": "retry", "run_fix": "fix", "apply_fix": "fix", "stop": "stop"}
    for row in rc.codes:
        detail = rc.ErrorDetail.create(row.code, "m", source="claude")
        assert kinds[rc.next_action(detail).kind] == detail.recovery, row.code


def test_never_more_than_three_retries_of_a_code_without_a_state_change() -> None:
    assert [rc.next_action(RATE, history=[RATE] * n).kind for n in range(5)] == [
        "retry", "retry", "retry", "stop", "stop",
    ]  # fmt: skip
    stop = rc.next_action(RATE, history=[RATE] * 3)
    assert stop == rc.tools.Action(
        "stop", "rate_limited", reason="3 retries of rate_limited without a state change"
    )


def test_retries_are_counted_from_actions_alone_or_failures_and_actions_together() -> None:
    actions: list[rc.ErrorDetail | rc.tools.Action] = []
    for _ in range(3):
        action = rc.next_action(RATE, history=actions)
        assert action.kind == "retry"
        actions.append(action)
    assert rc.next_action(RATE, history=actions).kind == "stop"
    both: list[rc.ErrorDetail | rc.tools.Action] = []
    for _ in range(3):
        both += [RATE, rc.next_action(RATE, history=both)]
    assert [item.kind for item in both if isinstance(item, rc.tools.Action)] == ["retry"] * 3
    assert rc.next_action(RATE, history=both).kind == "stop"


def test_a_code_change_is_a_state_change() -> None:
    assert rc.next_action(RATE, history=[RATE, RATE, RATE, NETWORK]).kind == "retry"
    assert rc.next_action(RATE, history=[RATE, RATE, NETWORK, RATE, RATE]).kind == "retry"
    assert rc.next_action(RATE, history=[NETWORK, RATE, RATE, RATE]).kind == "stop"


def test_a_fix_is_a_state_change_for_other_codes() -> None:
    fix = rc.next_action(MISSING_CLI)
    assert rc.next_action(RATE, history=[RATE, RATE, MISSING_CLI, fix, RATE]).kind == "retry"


def test_the_same_code_after_its_fix_stops_instead_of_looping() -> None:
    fix = rc.next_action(MISSING_CLI)
    again = rc.next_action(MISSING_CLI, history=[MISSING_CLI, fix])
    assert again.kind == "stop"
    assert again.reason == (
        "cli_not_found came back after its fix: the fix is wrong or the failure is misclassified"
    )
    applied = rc.next_action(EXPIRED)
    assert rc.next_action(EXPIRED, history=[EXPIRED, applied]).kind == "stop"
    # even with other failures in between: a fix is tried once per code
    assert rc.next_action(MISSING_CLI, history=[fix, RATE, NETWORK]).kind == "stop"


def test_history_may_be_any_iterable_and_is_not_consumed_twice() -> None:
    assert rc.next_action(RATE, history=iter([RATE, RATE, RATE])).kind == "stop"
    assert rc.next_action(RATE, history=(d for d in [RATE])).kind == "retry"


def test_an_actions_argv_is_its_command_split_without_a_shell() -> None:
    action = rc.next_action(MISSING_CLI)
    assert action.argv == ["npm", "install", "-g", "@openai/codex"]
    assert rc.next_action(RATE).argv is None
    quoted = rc.tools.Action("run_fix", "x", command='tool config set region "eu west"')
    assert quoted.argv == ["tool", "config", "set", "region", "eu west"]


def test_an_action_is_frozen_data() -> None:
    action = rc.next_action(RATE)
    with pytest.raises(AttributeError):
        action.kind = "stop"  # type: ignore[misc]
    assert action.to_dict() == {
        "kind": "retry", "code": "rate_limited", "wait_ms": 1000, "command": None,
        "reason": "retry 1 of 3", "suggested_command": None,
    }  # fmt: skip


# --- running is stricter than showing ---------------------------------------------------------

FOREIGN_FIX = rc.ErrorDetail.create(
    "precondition_failed", "no store", fix_command="mytool init"
)  # validated, but registered for precondition_failed nowhere in this process


def test_a_command_registered_for_the_code_here_is_run_fix() -> None:
    assert rc.next_action(MISSING_CLI).kind == "run_fix"


def test_any_other_command_is_a_suggestion_for_a_person_never_run_fix() -> None:
    action = rc.next_action(FOREIGN_FIX)
    assert action == rc.tools.Action(
        "apply_fix",
        "precondition_failed",
        reason="Satisfy the precondition first",
        suggested_command="mytool init",
    )
    assert (action.command, action.argv) == (None, None)
    assert action.to_dict() == {
        "kind": "apply_fix", "code": "precondition_failed", "wait_ms": 0, "command": None,
        "reason": "Satisfy the precondition first", "suggested_command": "mytool init",
    }  # fmt: skip


def test_a_command_the_caller_allows_word_for_word_is_run_fix() -> None:
    allowed = rc.next_action(FOREIGN_FIX, allowed=["mytool init"])
    assert (allowed.kind, allowed.command, allowed.suggested_command) == (
        "run_fix", "mytool init", None,
    )  # fmt: skip
    for near in (["mytool  init"], ["mytool init "], ["mytool"], ["MYTOOL INIT"], []):
        assert rc.next_action(FOREIGN_FIX, allowed=near).kind == "apply_fix", near
    with pytest.raises(TypeError, match="not one string"):
        rc.next_action(FOREIGN_FIX, allowed="mytool init")


def test_a_command_registered_for_another_code_is_not_run_fix() -> None:
    # `npm install -g @openai/codex` is registered here, but for cli_not_found
    borrowed = rc.ErrorDetail.create(
        "precondition_failed", "m", fix_command="npm install -g @openai/codex"
    )
    action = rc.next_action(borrowed)
    assert (action.kind, action.suggested_command) == ("apply_fix", "npm install -g @openai/codex")


def test_a_suggestion_is_a_state_change_tried_once_per_code() -> None:
    applied = rc.next_action(FOREIGN_FIX)
    assert rc.next_action(FOREIGN_FIX, history=[FOREIGN_FIX, applied]).kind == "stop"


def test_an_action_runs_a_command_or_suggests_one_never_both() -> None:
    with pytest.raises(ValueError, match="never both"):
        rc.tools.Action("run_fix", "x", command="tool a", suggested_command="tool b")

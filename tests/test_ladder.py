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
        (RATE, rc.Action("retry", "rate_limited", wait_ms=1000, reason="retry 1 of 3")),
        (RATE_HINTED, rc.Action("retry", "rate_limited", wait_ms=2500, reason="retry 1 of 3")),
        (
            MISSING_CLI,
            rc.Action(
                "run_fix",
                "cli_not_found",
                command="npm install -g @openai/codex",
                reason="run it, reissue once",
            ),
        ),
        (EXPIRED, rc.Action("apply_fix", "credentials_expired", reason="Refresh the credentials")),
        (
            NOT_FOUND,
            rc.Action("stop", "not_found", reason="not_found is terminal: escalate it as it is"),
        ),
    ],
    ids=["retry", "retry-hint", "run_fix", "apply_fix", "stop"],
)
def test_the_four_lines(detail: rc.ErrorDetail, expected: rc.Action) -> None:
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
    assert stop == rc.Action(
        "stop", "rate_limited", reason="3 retries of rate_limited without a state change"
    )


def test_retries_are_counted_from_actions_alone_or_failures_and_actions_together() -> None:
    actions: list[rc.ErrorDetail | rc.Action] = []
    for _ in range(3):
        action = rc.next_action(RATE, history=actions)
        assert action.kind == "retry"
        actions.append(action)
    assert rc.next_action(RATE, history=actions).kind == "stop"
    both: list[rc.ErrorDetail | rc.Action] = []
    for _ in range(3):
        both += [RATE, rc.next_action(RATE, history=both)]
    assert [item.kind for item in both if isinstance(item, rc.Action)] == ["retry"] * 3
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
    quoted = rc.Action("run_fix", "x", command='tool config set region "eu west"')
    assert quoted.argv == ["tool", "config", "set", "region", "eu west"]


def test_an_action_is_frozen_data() -> None:
    action = rc.next_action(RATE)
    with pytest.raises(AttributeError):
        action.kind = "stop"  # type: ignore[misc]
    assert action.to_dict() == {
        "kind": "retry", "code": "rate_limited", "wait_ms": 1000, "command": None,
        "reason": "retry 1 of 3",
    }  # fmt: skip

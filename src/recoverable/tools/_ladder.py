"""The recovery ladder as code: what to do after a failure (`next_action`). Pure (it reads
the registry).

The guide's procedure (cli-agent-spec, "Designing Errors for Autonomous Recovery"), with
running kept stricter than showing (principle 7, `_fix_gate`):

    if error.retryable:        wait retry_after_ms (1 s when absent), reissue
    elif error.fix_command:    if this process may run it (registered here for the code, or
                               allowed by the caller): run it; if it exits 0, reissue once
                               else: apply_fix, the command shown to a person, never run
    elif error.fix_required:   apply the stated fix, reissue once
    else:                      stop, escalate verbatim

A `fix_command` that arrived with the failure (an envelope, a payload, the wire) is never
`run_fix` because it arrived: an agent that does whatever `next_action` says stays safe.

with its two limits: never more than MAX_RETRIES_PER_CODE retries on the same code without a
state change (a fix ran, or the code changed), and a fix is tried once per code: the same
code coming back after its fix means the fix is wrong or the failure misclassified, so the
answer is `stop`, never another round.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from .._core.detail import ErrorDetail
from .._core.fix_gate import allowed_commands, fix_refusal, unsafe_reason
from .._core.public import DEFAULT_WAIT_MS

__all__ = ["DEFAULT_WAIT_MS", "MAX_RETRIES_PER_CODE", "Action", "ActionKind", "next_action"]


MAX_RETRIES_PER_CODE = 3
"""Retries of one code in a row, without a state change, before the ladder says stop."""

ActionKind = Literal["retry", "run_fix", "apply_fix", "stop"]
_FIXES = ("run_fix", "apply_fix")


@dataclass(frozen=True, slots=True)
class Action:
    """The next step after a failure."""

    kind: ActionKind
    """`retry` (wait, reissue unchanged), `run_fix` (run `command`, then reissue once),
    `apply_fix` (make the change `reason` names, then reissue once; `suggested_command`, when
    there is one, is for a person to judge) or `stop`."""
    code: str
    """The code of the failure this answers (so a history of actions alone is enough)."""
    wait_ms: int = 0
    """How long to wait before reissuing (`retry` only; 0 otherwise)."""
    command: str | None = None
    """`run_fix` only: the `fix_command` this process may run (registered here for the code,
    or allowed by the caller), verbatim, as the guide has an agent paste it. Run it without a
    shell: `argv` is its words (shlex)."""
    reason: str = ""
    """Why: for `apply_fix` the failure's `fix_required` (what must change); for `stop`
    what ended the ladder; for the others a short note."""
    suggested_command: str | None = None
    """`apply_fix` (and the `stop` `recover` makes of one): a command the failure named
    that this process may not run (it arrived in a payload, or is registered for another
    code, or nowhere here). It is SHOWN to a person, who decides; the library never runs it
    and an agent must not paste it. None when the validator refuses it too, and whenever
    `command` is set."""

    def __post_init__(self) -> None:
        if self.command is not None and self.suggested_command is not None:
            raise ValueError("an action runs a command or suggests one, never both")

    @property
    def argv(self) -> list[str] | None:
        """`command` split into words as a POSIX shell would (no shell is ever used)."""
        if self.command is None:
            return None
        import shlex  # only when a fix is about to run

        return shlex.split(self.command)

    def to_dict(self) -> dict[str, object]:
        """The action as JSON-safe data."""
        return {
            "kind": self.kind,
            "code": self.code,
            "wait_ms": self.wait_ms,
            "command": self.command,
            "reason": self.reason,
            "suggested_command": self.suggested_command,
        }


def next_action(
    detail: ErrorDetail,
    *,
    history: Iterable[ErrorDetail | Action] = (),
    allowed: Iterable[str] = (),
) -> Action:
    """What to do about `detail`, given what happened before it in the same task.

    `history`, oldest first: the earlier failures (`ErrorDetail`) and the actions taken
    (`Action`), in any mix. A `run_fix` or `apply_fix` action, or a failure with another
    code, is a state change; retries are counted since the last one (the failures of the same
    code, or the retry actions for it, whichever says more).

    `run_fix` only for a `fix_command` this process may run: registered here for the code,
    or word for word one of `allowed` (commands the caller names), and accepted by the
    validator. Any other `fix_command` comes back as `apply_fix` with it in
    `suggested_command` and `command` None.
    """
    code = detail.code
    past = list(history)
    if any(isinstance(item, Action) and item.kind in _FIXES and item.code == code for item in past):
        return Action(
            "stop",
            code,
            reason=f"{code} came back after its fix: the fix is wrong or the failure is "
            "misclassified",
        )
    if detail.retryable:
        retries = _retries_since_change(code, past)
        if retries >= MAX_RETRIES_PER_CODE:
            return Action(
                "stop", code, reason=f"{retries} retries of {code} without a state change"
            )
        wait = detail.retry_after_ms
        return Action(
            "retry",
            code,
            wait_ms=DEFAULT_WAIT_MS if wait is None else wait,
            reason=f"retry {retries + 1} of {MAX_RETRIES_PER_CODE}",
        )
    if detail.fix_command or detail.fix_required:
        return _fix(detail, allowed_commands(allowed))
    return Action("stop", code, reason=f"{code} is terminal: escalate it as it is")


def _fix(detail: ErrorDetail, allowed: frozenset[str]) -> Action:
    """`run_fix` for a command this process may run; else `apply_fix`, any other command
    shown to a person (one the validator refuses not even shown)."""
    command, code = detail.fix_command, detail.code
    if command and fix_refusal(code, command, allowed) is None:
        return Action("run_fix", code, command=command, reason="run it, reissue once")
    reason = detail.fix_required or "make the change the failure names"
    shown = command if command and unsafe_reason(command) is None else None
    return Action("apply_fix", code, reason=reason, suggested_command=shown)


def _retries_since_change(code: str, past: list[ErrorDetail | Action]) -> int:
    failures = retries = 0
    for item in reversed(past):
        if item.code != code or (isinstance(item, Action) and item.kind in _FIXES):
            break
        if isinstance(item, Action):
            retries += item.kind == "retry"
        else:
            failures += 1
    return max(failures, retries)

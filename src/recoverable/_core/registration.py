"""What a row must be to join the code table: complete, its fix commands safe, their contract
stated, its cooldown consistent (`check_row`, which the registry runs on every registration
and the test suite on every built-in row).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .codes import CodeRow

__all__ = [
    "CANCELLED_EXIT_CODE",
    "COOLDOWNS",
    "FIX_CONTRACTS",
    "MAX_EXIT_CODE",
    "FixCommandRejected",
    "check_row",
    "checked_marks",
]

MAX_EXIT_CODE = 125
"""The highest exit code a failure may declare: cli-agent-spec leaves 126-255 to the shell
(not executable, not found, 128+signal)."""
CANCELLED_EXIT_CODE = 130
"""The one exception: a caller's cancel exits as a shell reports Ctrl-C (128 + SIGINT). A row
that exits so is a cancel: the caller's decision, which neither a retry nor another provider
overrides (its `retryable` and `fallback` are False)."""
FIX_CONTRACTS = ("idempotent", "read_only")
"""What a registration says of its `fix_command` (`fix_contract=`): safe to run twice, or
changing nothing but a login or a cache."""
COOLDOWNS = (None, "quiet", "stop")
"""The values of `CodeRow.cooldown`."""

_CODE_NAME = r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$"
_MARKED_NAME = r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$"


class FixCommandRejected(ValueError):
    """A `fix_command` that is not safe to run blindly, or a registration that does not say
    what its command does; `rule` names the rule it broke (`inline_code`, `contract`, ...)."""

    def __init__(self, message: str, rule: str = "unsafe") -> None:
        super().__init__(message)
        self.rule = rule
        """The rule the command broke, a stable name to branch on."""

    def __reduce__(self) -> tuple[type[FixCommandRejected], tuple[str, str]]:
        return type(self), (str(self), self.rule)


def check_row(row: CodeRow, marks: Mapping[str, frozenset[str]]) -> None:
    """Raise ValueError unless the row is complete, its fix commands are safe (read with the
    registry's destructive `marks`) and their contract is stated (`FixCommandRejected`)."""
    if not re.match(_CODE_NAME, row.code):
        raise ValueError(f"code {row.code!r} must be lower_snake_case")
    if not row.user_message.strip():
        raise ValueError(f"code {row.code!r} needs a user_message")
    if not (1 <= row.exit_code <= MAX_EXIT_CODE or row.exit_code == CANCELLED_EXIT_CODE):
        raise ValueError(
            f"code {row.code!r}: exit_code must be 1..{MAX_EXIT_CODE} or "
            f"{CANCELLED_EXIT_CODE} (0 is success; 126-255 are the shell's)"
        )
    if row.exit_code == CANCELLED_EXIT_CODE and (row.retryable or row.fallback):
        raise ValueError(
            f"code {row.code!r}: a cancel (exit_code {CANCELLED_EXIT_CODE}) is the caller's "
            "decision: neither retryable nor a fallback"
        )
    if not 100 <= row.http_status <= 599:
        raise ValueError(f"code {row.code!r}: http_status must be 100..599")
    if row.suggestion is not None and not row.suggestion.strip():
        raise ValueError(f"code {row.code!r}: a suggestion must say something")
    if row.fix_commands and row.retryable:
        raise ValueError(f"code {row.code!r}: a retryable code has no fix_command")
    if row.fix_commands and not row.fix_required:
        raise ValueError(f"code {row.code!r}: a fix_command needs a fix_required")
    _check_commands(row, marks)
    _check_cooldown(row)


def _check_commands(row: CodeRow, marks: Mapping[str, frozenset[str]]) -> None:
    """Each command safe, and the author's word for what it does."""
    from .fix_commands import fix_command_refusal  # registration is rare

    for command in row.fix_commands.values():
        refusal = fix_command_refusal(command, marks)
        if refusal is not None:
            raise FixCommandRejected(refusal.sentence, refusal.rule)
    if row.fix_commands and row.fix_contract not in FIX_CONTRACTS:
        stated = "" if row.fix_contract is None else f" ({row.fix_contract!r} is not one)"
        raise FixCommandRejected(
            f"code {row.code!r}: a fix_command needs fix_contract='idempotent' (safe to run "
            f"twice) or 'read_only' (changes nothing but a login or a cache){stated}; state "
            "which at registration",
            "contract",
        )
    if row.fix_contract is not None and not row.fix_commands:
        raise ValueError(f"code {row.code!r}: fix_contract describes a fix_command it has not")


def _check_cooldown(row: CodeRow) -> None:
    """A quiet time is for a failure worth retrying later; a long stop for one that is not."""
    if row.cooldown not in COOLDOWNS:
        raise ValueError(f"code {row.code!r}: cooldown must be one of {COOLDOWNS}")
    if row.cooldown == "quiet" and not row.retryable:
        raise ValueError(f"code {row.code!r}: a quiet cooldown is for a retryable code")
    if row.cooldown == "stop" and row.retryable:
        raise ValueError(f"code {row.code!r}: a stop cooldown is for a code not retried")


def checked_marks(program: str, subcommands: tuple[str, ...]) -> frozenset[str]:
    """The subcommands `codes.mark_destructive` marks, lower-cased: at least one, each one
    word (ValueError otherwise)."""
    if not isinstance(program, str) or not re.match(_MARKED_NAME, program):
        raise ValueError(f"mark_destructive: {program!r} is not a program name")
    if not subcommands:
        raise ValueError("mark_destructive: name at least one subcommand")
    for subcommand in subcommands:
        if not isinstance(subcommand, str) or not re.match(_MARKED_NAME, subcommand):
            raise ValueError(f"mark_destructive: {subcommand!r} is not one word")
    return frozenset(subcommand.lower() for subcommand in subcommands)

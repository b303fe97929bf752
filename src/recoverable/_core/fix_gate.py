"""Which fix commands this process may run: the gate that running passes, stricter than
showing (principle 7). Pure: it reads the registry.

A `fix_command` travels with its detail wherever the detail goes, and anyone may read it. It
RUNS (`recover`, `recoverable exec --fix`, anything `next_action` tells to run) only when,
word for word, it is

- a command registered in this process for the failure's code (a value of the row's
  `fix_commands`, whatever its source key), or
- one the caller named for this run (`recover(allow_fixes=...)`, `exec --allow-fix`),

and the validator still accepts it. Where the detail came from never widens that: a command
that arrived in a payload (an envelope on stdout, `ErrorDetail.from_dict`, the wire's
readers, an engine's result) is a suggestion for a person, not an instruction, even when it
names the program that printed it. The same rule decides what this process tells an agent to
run when it answers one (`runnable_fix_only`): an agent pastes `fix_command`, so an answer
carries there only what this process would run itself.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from .codes import FixCommandRejected, codes, validate_fix_command
from .detail import ErrorDetail, copy_with
from .untrusted import clean_text

__all__ = [
    "SUGGESTED_COMMAND",
    "allowed_commands",
    "fix_refusal",
    "runnable_fix_only",
    "unsafe_reason",
]

SUGGESTED_COMMAND = "suggested_command"
"""The `details` key that keeps a command this process would not run: shown, never run."""


def allowed_commands(commands: Iterable[str] | None) -> frozenset[str]:
    """The commands a caller named, as a set matched word for word. One string is refused
    (a `str` is an iterable of characters: every one-letter command would be allowed)."""
    if commands is None:
        return frozenset()
    if isinstance(commands, str):
        raise TypeError("name the allowed fix commands as a list of strings, not one string")
    named = frozenset(commands)
    if not all(isinstance(command, str) for command in named):
        raise TypeError("every allowed fix command must be a string")
    return named


def fix_refusal(code: str, command: object, allowed: Collection[str] = ()) -> str | None:
    """Why `command` may not run as the fix of a `code` failure in this process; None when
    it may: the validator accepts it and it is, exactly, registered here for `code` or in
    `allowed`."""
    return unsafe_reason(command) or _not_runnable(code, command, allowed)


def runnable_fix_only(detail: ErrorDetail, allowed: Collection[str] = ()) -> ErrorDetail:
    """`detail` as this process answers an agent with it: its `fix_command` only when this
    process may run it (`fix_refusal`). A safe command it may not run moves to
    `details["suggested_command"]`, for a person to read; one the validator refuses is
    dropped (`details["fix_command_dropped"]` says why). Either way `fix_command` is None."""
    command = detail.fix_command
    if command is None:
        return detail
    unsafe = unsafe_reason(command)
    if unsafe is not None:
        details = {**detail.details, "fix_command_dropped": unsafe}
        return copy_with(detail, fix_command=None, details=details)
    if _not_runnable(detail.code, command, allowed) is None:
        return detail
    details = {**detail.details, SUGGESTED_COMMAND: command}
    return copy_with(detail, fix_command=None, details=details)


def unsafe_reason(command: object) -> str | None:
    """Why the validator refuses `command` (cleaned); None when it accepts it."""
    if not isinstance(command, str):
        return "fix_command must be a non-empty string"
    try:
        validate_fix_command(command)
    except FixCommandRejected as refused:
        return clean_text(str(refused))
    return None


def _not_runnable(code: str, command: object, allowed: Collection[str]) -> str | None:
    if command in allowed:
        return None
    row = codes.get(code)
    if row is not None and command in row.fix_commands.values():
        return None
    why = f"{command!r} is not registered for {code} in this process, nor allowed by the caller"
    return clean_text(why)

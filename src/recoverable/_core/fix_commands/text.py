"""A fix command as text, before its words: what a person pastes must be what runs.

The command is read twice, by the validator (shlex) and by whatever runs it: `run_fix`
(shlex, no shell) or a person's shell. Every rule here closes a gap between the two readings:
a shell's metacharacters, the words a shell would expand (globs, `!` history), characters that
look like others or like nothing (anything outside printable ASCII), and a length that bounds
the work of every reader after this one.
"""

from __future__ import annotations

import re

from .model import Refusal, refuse

MAX_COMMAND_CHARS = 1000
"""The longest fix command accepted: one invocation of one program is far shorter, and the
cap bounds every reader's work, whatever the input."""

_METACHARACTERS = frozenset("<>$`|;&\n\r")
# Patterns as strings: `re` caches them on first use.
_PLACEHOLDER = r"\{[^}]*\}|\b(YOUR|MY)[_-][A-Z_]+\b|\.\.\.|\bPLACEHOLDER\b"
_PRINTABLE_ASCII = r"[ -~]*"
# What a shell expands in a word that is not quoted: a glob, or a history reference.
_GLOB = frozenset("*?[")
_HISTORY = "!"
# What cmd.exe expands wherever it stands: %NAME%.
_CMD_VARIABLE = r"%[A-Za-z_][A-Za-z0-9_]*%"


def text_refusal(command: object) -> Refusal | None:
    """Why `command` may not be a fix command as text; None when its words may be read."""
    if not isinstance(command, str) or not command.strip():
        return refuse("empty", "must be a non-empty string")
    if len(command) > MAX_COMMAND_CHARS:
        return refuse("too_long", f"is longer than {MAX_COMMAND_CHARS} characters")
    if command != command.strip():
        return refuse("whitespace", "must not have surrounding whitespace")
    return _characters(command) or _unquoted_expansion(command)


def _characters(command: str) -> Refusal | None:
    """Metacharacters, characters outside printable ASCII, placeholders."""
    bad = sorted(_METACHARACTERS.intersection(command))
    if bad:
        return refuse("metacharacters", f"contains shell metacharacters: {bad!r}")
    if not re.fullmatch(_PRINTABLE_ASCII, command):
        strange = next(char for char in command if not " " <= char <= "~")
        return refuse(
            "characters",
            f"contains U+{ord(strange):04X}; a command is printable ASCII, so that it reads "
            "as it runs",
        )
    if re.search(_PLACEHOLDER, command, re.IGNORECASE):
        return refuse("placeholder", "contains a placeholder; state the fix in fix_required")
    if re.search(_CMD_VARIABLE, command):
        return refuse("expansion", "contains a %NAME% that cmd.exe expands")
    return None


def _unquoted_expansion(command: str) -> Refusal | None:
    """A glob or a `!` that a shell would expand because no quote protects it (`mytool add *`
    pastes as every file name in the folder, `--purge-all` included)."""
    quote = ""
    escaped = False
    for char in command:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif char in "'\"" and quote in ("", char):
            quote = "" if quote else char
        elif quote != "'" and char == _HISTORY:
            return refuse("expansion", "contains a `!` that a shell expands from its history")
        elif not quote and char in _GLOB:
            return refuse(
                "expansion", f"contains an unquoted {char!r} that a shell expands to file names"
            )
    return None


def split_words(command: str) -> list[str] | Refusal:
    """The words a POSIX shell would hand the program (after `text_refusal` passed)."""
    import shlex  # registration and payloads are rare; keep it off the import path

    try:
        return shlex.split(command)
    except ValueError as exc:
        return refuse("parse", f"does not parse: {exc}")

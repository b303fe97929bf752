"""The rules every door applies to what a caller gives a detail, one per field.

`ErrorDetail.create`, `ErrorDetail(...)` and `dataclasses.replace`, `copy_with` and
`RecoverableError` take values from a caller; each value passes its field's rule here: texts
scrubbed and clipped, waits finite and capped, statuses in range, a `fix_command` validated,
details JSON-safe (and their keys), a value of the wrong type refused (TypeError). The code
must be registered (`registered`), and two fields are the table's, never a caller's:
`category` and `user_message` (a person reads only sentences this process wrote). The cause's
rule is the value's own (a chain of details, trimmed), so `detail` adds it to `RULES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .categories import CATEGORY_SENTENCES, category_sentence
from .codes import CodeRow, codes, validate_fix_command
from .untrusted import (
    MAX_MESSAGE_CHARS,
    clean_hint_ms,
    clean_status,
    clean_text,
    json_safe_dict,
    safe_str,
)

__all__ = [
    "MAX_CAUSE_DEPTH",
    "MAX_NAME_CHARS",
    "MAX_SENTENCE_CHARS",
    "RULES",
    "TABLE_OWNED",
    "UNKNOWN",
    "Rule",
    "apply",
    "given_bool",
    "given_details",
    "given_fix_command",
    "given_text",
    "plain",
    "registered",
]

MAX_CAUSE_DEPTH = 8
"""The deepest chain of details a detail keeps as causes; deeper links become one summary."""
MAX_NAME_CHARS = 100
"""The longest code, category or source kept from a caller or a payload."""
MAX_SENTENCE_CHARS = 500
"""The longest note kept (a suggestion; a peer's sentence for a code we do not know)."""
UNKNOWN = "unknown"
"""The code, and the category, of what this process cannot name."""

# Why the fields that are the table's are no caller's to set (the TypeError or ValueError says so).
TABLE_OWNED = {
    "user_message": (
        "user_message is the table's sentence for the code, never a caller's (a person reads "
        "only sentences this process wrote): register the code with its sentence "
        "(rc.register_code(code, user_message=...)); developer text goes in message or details"
    ),
    "category": (
        "category is the code's row, never a caller's: register the code with its category "
        "(rc.register_code(code, category=...))"
    ),
    "code": "a copy keeps its code: build a detail for another code with ErrorDetail.create",
}


def registered(code: object) -> CodeRow:
    """The row of a code a caller names; ValueError for a code this process has not
    registered (a peer's payload is read with `from_dict` instead)."""
    if not isinstance(code, str):
        raise TypeError(f"a code is a str, not {type(code).__name__}")
    row = codes.get(code)
    if row is None:
        raise ValueError(
            f"code {clean_text(code, MAX_NAME_CHARS)!r} is not registered in this process: "
            "register it first with rc.register_code(code, user_message=...), or read a "
            "payload from elsewhere with ErrorDetail.from_dict"
        )
    return row


def plain(name: str, value: object) -> str:
    """`value` as a plain str (a str subclass's own methods are not called); TypeError for
    anything else."""
    if type(value) is str:
        return value
    if isinstance(value, str):
        return str.__getitem__(value, slice(None))
    raise TypeError(f"{name} must be a str, not {type(value).__name__}")


def given_text(name: str, value: object, limit: int = MAX_MESSAGE_CHARS) -> str | None:
    """A text field a caller gives (None stays None): scrubbed and clipped."""
    return None if value is None else clean_text(plain(name, value), limit)


def given_fix_command(value: object, row: CodeRow | None) -> str | None:
    """A command a caller gives: one of the row's (validated when registered) or validated."""
    if value is None:
        return None
    if row is not None and type(value) is str and value in row.fix_commands.values():
        return value
    return validate_fix_command(value)  # type: ignore[arg-type]  # refuses a non-str too


def given_details(value: object) -> dict[str, Any]:
    """Details a caller gives: a JSON-safe copy of a mapping (TypeError for anything else)."""
    if not value:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"details must be a mapping, not {type(value).__name__}")
    return json_safe_dict(value)


def given_bool(value: object, draft: object, row: CodeRow | None) -> bool:
    """`retryable` as a caller gives it: a bool, nothing that only reads as one."""
    if type(value) is not bool:
        raise TypeError(f"retryable must be a bool, not {type(value).__name__}")
    return value


def _given_message(value: object, draft: Mapping[str, Any], row: CodeRow | None) -> str | None:
    # None: the detail's sentence, as `create` makes the message when none is given.
    return draft["user_message"] if value is None else given_text("message", value)


Rule = Callable[[Any, dict[str, Any], "CodeRow | None"], Any]
"""A field's rule: (the value given, the fields being filled in, the code's row) -> the value
kept."""

RULES: Mapping[str, Rule] = {
    "message": _given_message,
    "retryable": given_bool,
    "retry_after_ms": lambda value, draft, row: clean_hint_ms(value),
    "fix_required": lambda value, draft, row: given_text("fix_required", value),
    "fix_command": lambda value, draft, row: given_fix_command(value, row),
    "status": lambda value, draft, row: clean_status(value),
    "source": lambda value, draft, row: given_text("source", value, MAX_NAME_CHARS),
    "details": lambda value, draft, row: given_details(value),
    "suggestion": lambda value, draft, row: given_text("suggestion", value, MAX_SENTENCE_CHARS),
}
"""The rule of each field a caller may set but the cause (`detail` adds the cause's)."""

_REGISTRY_WORDS = ("category", "user_message")


def apply(
    draft: dict[str, Any],
    row: CodeRow | None,
    changes: Mapping[str, Any],
    rules: Mapping[str, Rule],
) -> None:
    """Set each of `changes` in `draft` (a detail's fields, being filled in) by its rule in
    `rules`, then keep the fields consistent: a retryable detail has no fix, one that is not
    retryable no wait. `category` and `user_message` are accepted only as the registry's own
    words (`_registry_words`)."""
    for name, value in changes.items():
        rule = rules.get(name)
        if rule is not None:
            draft[name] = rule(value, draft, row)
        elif name not in _REGISTRY_WORDS:
            if name in TABLE_OWNED:
                raise TypeError(TABLE_OWNED[name])
            raise TypeError(
                f"ErrorDetail has no field {clean_text(safe_str(name), MAX_NAME_CHARS)!r}"
            )
    if "category" in changes or "user_message" in changes:
        _registry_words(draft, row, changes)
    if draft["retryable"]:
        draft["fix_required"] = draft["fix_command"] = None
    else:
        draft["retry_after_ms"] = None


def _registry_words(draft: dict[str, Any], row: CodeRow | None, changes: Mapping[str, Any]) -> None:
    """`category` and `user_message` given to a copy: ValueError unless each is what the
    registry says for the detail's code (a code registered elsewhere may take one of our
    categories, and reads that category's sentence). Never a caller's own words."""
    if "category" in changes:
        category = changes["category"]
        if row is not None:
            allowed = type(category) is str and category == row.category
        else:
            allowed = type(category) is str and (
                category in CATEGORY_SENTENCES or category == UNKNOWN
            )
        if not allowed:
            raise ValueError(TABLE_OWNED["category"])
        draft["category"] = category
        draft["user_message"] = row.user_message if row is not None else category_sentence(category)
    if "user_message" in changes:
        sentence = changes["user_message"]
        if not (type(sentence) is str and sentence == draft["user_message"]):
            raise ValueError(TABLE_OWNED["user_message"])

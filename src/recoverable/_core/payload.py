"""A detail's payload read back (`ErrorDetail.from_dict`): untrusted, from this process or another.

A payload is what `to_dict` writes, read by the same rules as every door, plus its own: a code
this process knows gets the table's category and user sentence (a payload cannot put words
before a person that this process did not write); a code registered elsewhere, its category's
sentence, the peer's own words kept as developer text in `details`; a `fix_command` the
validator refuses, or one on a retryable detail, dropped (`details["fix_command_dropped"]`
says why); unknown keys kept in `details`; causes deeper than MAX_CAUSE_DEPTH one summary,
read without recursion. The detail is built by the constructor it is given (`detail` passes
its own), so this module needs no class.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from .categories import CATEGORY_SENTENCES, category_sentence
from .codes import FixCommandRejected, codes, validate_fix_command
from .given import MAX_CAUSE_DEPTH, MAX_NAME_CHARS, MAX_SENTENCE_CHARS, UNKNOWN, plain
from .untrusted import clean_hint_ms, clean_status, clean_text, json_safe_dict

if TYPE_CHECKING:
    from .detail import ErrorDetail

__all__ = ["PayloadError", "read_payload"]

_CODE_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_OPTIONAL_STR = (
    "fix_required", "fix_command", "source", "category", "user_message", "suggestion",
)  # fmt: skip


class PayloadError(ValueError):
    """A mapping that cannot be read as an `ErrorDetail` payload."""


Build = Callable[..., "ErrorDetail"]
"""The unchecked constructor of a detail: one keyword per field."""


def read_payload(data: Mapping[str, Any], build: Build, known: Collection[str]) -> ErrorDetail:
    """The detail a payload describes, its cause chain walked without recursion; `known`:
    the keys that are no extra (the fields, the derived names), the others kept in details."""
    if not isinstance(data, Mapping):
        raise PayloadError(f"an ErrorDetail payload must be a mapping, not {type(data).__name__}")
    links: list[Mapping[str, Any]] = []
    seen: set[int] = set()
    node: object = data
    while isinstance(node, Mapping) and len(links) < MAX_CAUSE_DEPTH and id(node) not in seen:
        seen.add(id(node))
        links.append(node)
        node = node.get("cause")
    cause: ErrorDetail | str | None = _cause_tail(node, seen)
    for link in reversed(links[1:]):
        cause = _link(link, cause, build, known)
    return _link(data, cause, build, known)


def _cause_tail(node: object, seen: set[int]) -> str | None:
    """What is left of a chain past its last link read: text, or a summary of the rest."""
    if node is None:
        return None
    if isinstance(node, str):
        return clean_text(node)
    if isinstance(node, Mapping):
        if id(node) in seen:
            return "<cycle>"
        code, message = node.get("code"), node.get("message")
        if isinstance(code, str) and isinstance(message, str):
            return clean_text(f"{code}: {message}")
        return None
    raise PayloadError("'cause' must be an object, a string or null")


def _link(
    data: Mapping[str, Any], cause: ErrorDetail | str | None, build: Build, known: Collection[str]
) -> ErrorDetail:
    """One link of a payload's chain, its cause already read."""
    code, message = data.get("code"), data.get("message")
    if not isinstance(code, str) or not _CODE_NAME.fullmatch(code):
        raise PayloadError("an ErrorDetail payload needs a lower_snake string 'code'")
    if not isinstance(message, str):
        raise PayloadError("an ErrorDetail payload needs a string 'message'")
    retryable = data.get("retryable")
    row = codes.get(code)
    if retryable is None:
        retryable = (row or codes.resolve(code)).retryable
    if not isinstance(retryable, bool):
        raise PayloadError("'retryable' must be a boolean")
    for key in _OPTIONAL_STR:
        if data.get(key) is not None and not isinstance(data[key], str):
            raise PayloadError(f"{key!r} must be a string or null")
    status = data.get("status")
    if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
        raise PayloadError("'status' must be an integer or null")
    details = _details(data, known)
    source = data.get("source")
    table = row or codes.resolve(code)
    note = data.get("suggestion")  # the producer's note for an operator, cleaned
    fields: dict[str, Any] = {
        "code": code,
        "message": clean_text(message),
        "category": table.category,
        "retryable": retryable,
        "user_message": table.user_message,
        "status": clean_status(status),
        "source": None if source is None else clean_text(source, MAX_NAME_CHARS),
        "cause": cause,
        "details": details,
        "suggestion": clean_text(note, MAX_SENTENCE_CHARS) if note else (row and row.suggestion),
    }
    if row is None:  # a code registered elsewhere: its category's sentence, never its own
        _foreign_row(fields, data, details)
    _remedy(fields, data, details)
    return build(**fields)


def _details(data: Mapping[str, Any], known: Collection[str]) -> dict[str, Any]:
    raw = data.get("details")
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise PayloadError("'details' must be an object")
    # Unknown keys join the same bounded copy after `details` (a key of theirs that is
    # already there is kept as `key#2`), read lazily: a million of them cost the budget only.
    extra = ((key, value) for key, value in data.items() if not (type(key) is str and key in known))
    return json_safe_dict(raw, extra)


def _foreign_row(fields: dict[str, Any], data: Mapping[str, Any], details: dict[str, Any]) -> None:
    """A code registered elsewhere: its category when this process knows that category (else
    `unknown`), and that category's sentence; the peer's own words are developer text."""
    category, user_message = data.get("category"), data.get("user_message")
    known = isinstance(category, str) and category in CATEGORY_SENTENCES
    fields["category"] = plain("category", category) if known else UNKNOWN
    fields["user_message"] = category_sentence(fields["category"])
    if category and not known and category != UNKNOWN:
        details["peer_category"] = clean_text(category, MAX_NAME_CHARS)
    if user_message and user_message != fields["user_message"]:
        details["peer_user_message"] = clean_text(user_message, MAX_SENTENCE_CHARS)


def _remedy(fields: dict[str, Any], data: Mapping[str, Any], details: dict[str, Any]) -> None:
    """The wait hint, or what must change and the command that changes it."""
    retryable = fields["retryable"]
    fields["retry_after_ms"] = clean_hint_ms(data.get("retry_after_ms")) if retryable else None
    fix_required, command = data.get("fix_required"), data.get("fix_command")
    fields["fix_required"] = None if retryable or not fix_required else clean_text(fix_required)
    fields["fix_command"] = None
    if command is None:
        return
    if retryable:
        details["fix_command_dropped"] = "a retryable detail has no fix_command"
        return
    try:
        fields["fix_command"] = validate_fix_command(command)
    except FixCommandRejected as refused:
        details["fix_command_dropped"] = clean_text(str(refused))

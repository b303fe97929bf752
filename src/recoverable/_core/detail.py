"""The value every failure becomes (`ErrorDetail`) and the exception that carries it.

`ErrorDetail` answers the four recovery questions in fields: what failed (`code`), is the
identical call worth repeating (`retryable`, `retry_after_ms`), what must change first
(`fix_required`) and the exact command that changes it (`fix_command`), plus a sentence safe
to show a person (`user_message`). It round-trips through JSON and pickle unchanged.

Every door applies one set of rules (`_RULES`, `_apply`: texts scrubbed and clipped, waits
finite and capped, statuses in range, a `fix_command` validated, details JSON-safe, keys
included), and two fields are the table's and no caller's: `category` and `user_message` (a
person reads only sentences this process wrote). The public doors: `ErrorDetail.create` (a
registered code only), `ErrorDetail(...)` itself and `dataclasses.replace` (the same rules),
`RecoverableError(code, ...)` and `RecoverableError(detail, **changes)`,
`ErrorDetail.from_dict` (a payload; a code registered elsewhere reads its category's
sentence). A detail is changed only by copying it: `copy_with`, checked the same way. Inside
the library, `unvalidated`, `from_row` and `rewrapped` fill a detail from the table and skip
the checks: for classifiers that pass a registered code (or its row), their own clean message
and JSON-safe details.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from .codes import (
    CATEGORY_SENTENCES,
    GENERIC_USER_MESSAGE,
    MAX_EXIT_CODE,
    Code,
    FixCommandRejected,
    category_sentence,
    codes,
    validate_fix_command,
)
from .config import CONFIG
from .untrusted import (
    MAX_HINT_MS,
    MAX_MESSAGE_CHARS,
    clean_hint_ms,
    clean_status,
    clean_text,
    json_safe_dict,
    safe_str,
)

__all__ = ["MAX_CAUSE_DEPTH", "ErrorDetail", "PayloadError", "RecoverableError"]

MAX_CAUSE_DEPTH = 8
_MAX_USER_MESSAGE = 500  # a sentence for a person, from a payload whose code we do not know
_MAX_NAME = 100  # a code, category or source from a payload
_UNKNOWN = "unknown"  # the code, and the category, of what this process cannot name

Recovery = Literal["retry", "fix", "stop"]

_FIELDS = (
    "code", "message", "category", "retryable", "retry_after_ms", "fix_required",
    "fix_command", "user_message", "status", "source", "cause", "details", "suggestion",
)  # fmt: skip
_FIELD_NAMES = frozenset(_FIELDS)
_DERIVED = frozenset({"recovery", "http_status", "exit_code"})


class PayloadError(ValueError):
    """A mapping that cannot be read as an `ErrorDetail` payload."""


class _Default:
    """Marks an argument left to the code table."""

    def __repr__(self) -> str:
        return "<table default>"


_TABLE_DEFAULT: Any = _Default()


@dataclass(frozen=True, slots=True)
class ErrorDetail:
    """One classified failure, as a frozen, JSON-safe value."""

    code: str
    """The registry code, e.g. `provider_rate_limited`: stable, branch on it."""
    message: str
    """The developer text (may quote upstream text); never shown to a person as is."""
    category: str
    """The code's family, from the table (`provider`, `cli`, `run`, ...)."""
    retryable: bool
    """True only when the identical call may succeed and nothing happened."""
    retry_after_ms: int | None = None
    """The server's (or our) wait hint in ms; only when retryable."""
    fix_required: str | None = None
    """What must change first; only when not retryable and correctable."""
    fix_command: str | None = None
    """The exact, registered command that makes that change."""
    user_message: str = GENERIC_USER_MESSAGE
    """The table's sentence for the code: safe to show a person."""
    status: int | None = None
    """The upstream HTTP status, when there was one."""
    source: str | None = None
    """Where the failure came from: `openai`, `anthropic`, `google`, `claude`, ..."""
    cause: ErrorDetail | str | None = None
    """What this failure wraps: a detail (at most MAX_CAUSE_DEPTH deep) or a summary."""
    details: dict[str, Any] = field(default_factory=dict, hash=False)
    """JSON-safe extras: exit_code, signal, stderr_tail, request_id, ..."""
    suggestion: str | None = None
    """A note for the human operator that is not a recovery step (cli-agent-spec); scrubbed."""

    # A marker, so that a second installed copy of the library recognises this value.
    __recoverable_detail__: ClassVar[int] = 1

    def __post_init__(self) -> None:
        # `ErrorDetail(...)` and `dataclasses.replace` are doors too: create's rules, and the
        # table's category and sentence (the fast paths inside the library never come here).
        row = registered(self.code)
        if self.category != row.category:
            raise ValueError(_TABLE_OWNED["category"])
        if self.user_message not in (row.user_message, GENERIC_USER_MESSAGE):
            raise ValueError(_TABLE_OWNED["user_message"])
        draft = _draft(row, row.user_message, None, None)
        draft.code, draft.retryable, draft.retry_after_ms = row.code, row.retryable, None
        draft.fix_required = draft.fix_command = draft.cause = None
        draft.details, draft.suggestion = {}, row.suggestion
        given = {name: getattr(self, name) for name in _SETTABLE}
        _apply(draft, row, given)
        for name in _FIELDS:
            object.__setattr__(self, name, getattr(draft, name))

    @classmethod
    def create(  # noqa: PLR0913 -- one keyword per field a caller may set
        cls,
        code: str,
        message: str | None = None,
        *,
        retryable: bool | None = None,
        retry_after_ms: int | None = None,
        fix_required: str | None = _TABLE_DEFAULT,
        fix_command: str | None = _TABLE_DEFAULT,
        status: int | None = None,
        source: str | None = None,
        cause: ErrorDetail | str | None = None,
        details: Mapping[str, Any] | None = None,
        suggestion: str | None = _TABLE_DEFAULT,
    ) -> ErrorDetail:
        """Build a detail for `code`, filling every field the caller leaves to the table.

        `code` must be registered in this process (ValueError otherwise: `register_code` it
        first; a peer's payload is read with `from_dict`). What the caller gives is checked and
        cleaned as at every door: the message and texts scrubbed of credentials and clipped,
        `details` copied JSON-safe (bounded whatever its shape, keys scrubbed too), the wait
        hint finite and capped, the status in range, a `fix_command` validated
        (FixCommandRejected); a value of the wrong type is a TypeError. `category` and
        `user_message` are the row's: no caller sets them.
        """
        row = registered(code)
        retryable = row.retryable if retryable is None else _given_bool(retryable, None, row)
        clean_source = _given_text("source", source, _MAX_NAME)
        # A command given is validated even where it is then dropped (a retryable detail).
        given_command = (
            None if fix_command is _TABLE_DEFAULT else _given_fix_command(fix_command, row)
        )
        if retryable:
            fix_required = fix_command = None
            retry_after_ms = clean_hint_ms(retry_after_ms)
        else:
            retry_after_ms = None
            if fix_required is _TABLE_DEFAULT:
                fix_required = row.fix_required
            else:
                fix_required = _given_text("fix_required", fix_required)
            if fix_command is _TABLE_DEFAULT:
                fix_command = row.fix_command_for(clean_source) if fix_required else None
            else:
                fix_command = given_command
        text = row.user_message if message is None else clean_text(_plain("message", message))
        draft = _draft(row, text, clean_status(status), clean_source)
        draft.code = row.code
        draft.retryable = retryable
        draft.retry_after_ms = retry_after_ms
        draft.fix_required = fix_required
        draft.fix_command = fix_command
        draft.cause = _clean_cause(cause)
        draft.details = _given_details(details)
        draft.suggestion = (
            row.suggestion
            if suggestion is _TABLE_DEFAULT
            else _given_text("suggestion", suggestion, _MAX_USER_MESSAGE)
        )
        return _frozen(draft)

    # --- derived -----------------------------------------------------------------------

    @property
    def recovery(self) -> Recovery:
        """What the caller does next: `retry` the same call, `fix` something first, or `stop`."""
        if self.retryable:
            return "retry"
        if self.fix_required or self.fix_command:
            return "fix"
        return "stop"

    @property
    def http_status(self) -> int:
        """The status our own server answers with for this code."""
        return codes.resolve(self.code).http_status

    @property
    def exit_code(self) -> int:
        """The process exit code for this code (cli-agent-spec), from the registry. A code
        registered only in the process that reported it (a tool's own, read from its envelope)
        exits as that process did (`details["exit_code"]`, 1-125), else as `unknown`."""
        row = codes.get(self.code)
        if row is not None:
            return row.exit_code
        reported = self.details.get("exit_code")
        if type(reported) is int and 1 <= reported <= MAX_EXIT_CODE:
            return reported
        return codes.resolve(self.code).exit_code

    @property
    def fallback(self) -> bool:
        """Whether another provider could succeed where this one failed."""
        return codes.resolve(self.code).fallback

    # --- conversions -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict in the documented field order (causes at most MAX_CAUSE_DEPTH
        deep, however the detail was built)."""
        chain = [self]
        while isinstance(chain[-1].cause, ErrorDetail) and len(chain) < MAX_CAUSE_DEPTH:
            chain.append(chain[-1].cause)
        last = chain[-1].cause
        cause: Any = _summary(last) if isinstance(last, ErrorDetail) else last
        for detail in reversed(chain):
            cause = {
                "code": detail.code,
                "message": detail.message,
                "category": detail.category,
                "retryable": detail.retryable,
                "retry_after_ms": detail.retry_after_ms,
                "fix_required": detail.fix_required,
                "fix_command": detail.fix_command,
                "user_message": detail.user_message,
                "status": detail.status,
                "source": detail.source,
                "cause": cause,
                "details": dict(detail.details),
                "suggestion": detail.suggestion,
            }
        result: dict[str, Any] = cause
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ErrorDetail:
        """Read a payload written by `to_dict` (in this or another process: untrusted).

        Unknown keys are kept in `details`. The same rules as `create` apply, plus: a code
        this process knows gets the table's category and user sentence (a payload cannot put
        words before a person that this process did not write); a `fix_command` the validator
        refuses, or one on a retryable detail, is dropped (`details["fix_command_dropped"]`
        says why); causes deeper than MAX_CAUSE_DEPTH become one summary, without recursion.
        Raises `PayloadError` when `code` is not a lower_snake name or `message` not a string,
        or a field has the wrong type, and for anything else a hostile value does while it is
        read (a `__class__` or an item that raises): never another exception.
        """
        try:
            return _read_payload(data)
        except PayloadError:
            raise
        except Exception as exc:  # a value that raises as it is read is a payload not to read
            raise PayloadError(f"the payload could not be read ({type(exc).__name__})") from None

    def with_cause(self, cause: ErrorDetail | str | None) -> ErrorDetail:
        """A copy with another cause (trimmed to the depth limit; text cleaned)."""
        return copy_with(self, cause=cause)


# --- building without the checks -----------------------------------------------------------


class _Unfrozen:
    """ErrorDetail's slots without the frozen `__setattr__`: where a detail is filled in.

    classify builds a detail on every call, and the frozen __init__ goes through
    `object.__setattr__` once per field. Plain slot stores on a class of the same layout,
    then one `__class__` assignment, cost a third of that.
    """

    __slots__ = _FIELDS


_new = object.__new__


def _draft(row: Code, message: str, status: int | None, source: str | None) -> Any:
    """An unfrozen detail with the fields every constructor sets the same way."""
    draft: Any = _new(_Unfrozen)
    draft.message = message
    draft.category = row.category
    draft.user_message = row.user_message
    draft.status = status
    draft.source = source
    return draft


def _frozen(draft: Any) -> ErrorDetail:
    draft.__class__ = ErrorDetail
    detail: ErrorDetail = draft
    return detail


def unvalidated(  # noqa: PLR0913 -- one keyword per field a classifier sets
    code: str | Code,
    message: str,
    *,
    retry_after_ms: int | None = None,
    status: int | None = None,
    source: str | None = None,
    details: dict[str, Any] | None = None,
) -> ErrorDetail:
    """A detail with the table's defaults for `code` (a name or its row), skipping `create`'s
    checks and copies: `details` must already be JSON-safe and is kept as given."""
    row = code if type(code) is Code else codes.resolve(code)  # type: ignore[arg-type]
    return from_row(row, message, retry_after_ms, status, source, details=details or {})


def from_row(  # noqa: PLR0913 -- the fields a decided answer sets, positional: the hot path
    row: Code,
    message: str,
    retry_after_ms: int | None,
    status: int | None,
    source: str | None,
    *,
    details: dict[str, Any],
) -> ErrorDetail:
    """`unvalidated` for a row already found and details already made (a dict, JSON-safe)."""
    draft: Any = _new(_Unfrozen)  # `_draft`, inlined: this runs on every classification
    draft.code = row.code
    draft.message = message
    draft.category = row.category
    draft.user_message = row.user_message
    draft.status = status
    draft.source = source
    draft.cause = None
    draft.details = details
    draft.suggestion = row.suggestion
    if row.retryable:
        draft.retryable = True
        draft.retry_after_ms = (
            retry_after_ms
            if retry_after_ms is None
            or (type(retry_after_ms) is int and 0 <= retry_after_ms <= MAX_HINT_MS)
            else clean_hint_ms(retry_after_ms)  # NaN, infinity, a float, past the cap
        )
        draft.fix_required = draft.fix_command = None
    else:
        draft.retryable = False
        draft.retry_after_ms = None
        draft.fix_required = fix_required = row.fix_required
        draft.fix_command = (
            row.fix_command_for(source) if fix_required and row.fix_commands else None
        )
    draft.__class__ = ErrorDetail
    detail: ErrorDetail = draft
    return detail


def copy_with(detail: ErrorDetail, **changes: Any) -> ErrorDetail:
    """A copy of `detail` with some fields changed, each checked and cleaned as `create` does
    (`_apply`). The code stays (TypeError); `category` and `user_message` are the table's: only
    the registry's own words for the code are accepted (ValueError)."""
    draft = _copy(detail)
    _apply(draft, codes.get(detail.code), changes)
    return _frozen(draft)


def _copy(detail: ErrorDetail) -> Any:
    """An unfrozen copy of `detail`: its fields as they are."""
    draft: Any = _new(_Unfrozen)
    draft.code = detail.code
    draft.message = detail.message
    draft.category = detail.category
    draft.retryable = detail.retryable
    draft.retry_after_ms = detail.retry_after_ms
    draft.fix_required = detail.fix_required
    draft.fix_command = detail.fix_command
    draft.user_message = detail.user_message
    draft.status = detail.status
    draft.source = detail.source
    draft.cause = detail.cause
    draft.details = detail.details
    draft.suggestion = detail.suggestion
    return draft


# --- the rules every door applies to what a caller gives ------------------------------------

_SETTABLE = (
    "message", "retryable", "retry_after_ms", "fix_required", "fix_command", "status",
    "source", "cause", "details", "suggestion",
)  # fmt: skip
# Why the other fields are no caller's to set (the TypeError or ValueError says so).
_TABLE_OWNED = {
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


def registered(code: object) -> Code:
    """The row of a code a caller names; ValueError for a code this process has not
    registered (a peer's payload is read with `from_dict` instead)."""
    if not isinstance(code, str):
        raise TypeError(f"a code is a str, not {type(code).__name__}")
    row = codes.get(code)
    if row is None:
        raise ValueError(
            f"code {clean_text(code, _MAX_NAME)!r} is not registered in this process: "
            "register it first with rc.register_code(code, user_message=...), or read a "
            "payload from elsewhere with ErrorDetail.from_dict"
        )
    return row


def _apply(draft: Any, row: Code | None, changes: Mapping[str, Any]) -> None:
    """Set each of `changes` on `draft` as every door does, then keep the fields consistent:
    a retryable detail has no fix, one that is not retryable no wait. `category` and
    `user_message` are accepted only as the registry's own words (`_registry_words`)."""
    for name, value in changes.items():
        rule = _RULES.get(name)
        if rule is not None:
            setattr(draft, name, rule(value, draft, row))
        elif name not in _REGISTRY_WORDS:
            if name in _TABLE_OWNED:
                raise TypeError(_TABLE_OWNED[name])
            raise TypeError(f"ErrorDetail has no field {clean_text(safe_str(name), _MAX_NAME)!r}")
    if "category" in changes or "user_message" in changes:
        _registry_words(draft, row, changes)
    if draft.retryable:
        draft.fix_required = draft.fix_command = None
    else:
        draft.retry_after_ms = None


_REGISTRY_WORDS = ("category", "user_message")


def _registry_words(draft: Any, row: Code | None, changes: Mapping[str, Any]) -> None:
    """`category` and `user_message` given to a copy: ValueError unless each is what the
    registry says for the detail's code (a code registered elsewhere may take one of our
    categories, and reads that category's sentence). Never a caller's own words."""
    if "category" in changes:
        category = changes["category"]
        if row is not None:
            allowed = type(category) is str and category == row.category
        else:
            allowed = type(category) is str and (
                category in CATEGORY_SENTENCES or category == _UNKNOWN
            )
        if not allowed:
            raise ValueError(_TABLE_OWNED["category"])
        draft.category = category
        draft.user_message = row.user_message if row is not None else category_sentence(category)
    if "user_message" in changes:
        sentence = changes["user_message"]
        if not (type(sentence) is str and sentence == draft.user_message):
            raise ValueError(_TABLE_OWNED["user_message"])


def _plain(name: str, value: object) -> str:
    if type(value) is str:
        return value
    if isinstance(value, str):  # a str subclass: its own methods are not called
        return str.__getitem__(value, slice(None))
    raise TypeError(f"{name} must be a str, not {type(value).__name__}")


def _given_text(name: str, value: object, limit: int = MAX_MESSAGE_CHARS) -> str | None:
    """A text field a caller gives (None stays None): scrubbed and clipped."""
    return None if value is None else clean_text(_plain(name, value), limit)


def _given_fix_command(value: object, row: Code | None) -> str | None:
    """A command a caller gives: one of the row's (validated when registered) or validated."""
    if value is None:
        return None
    if row is not None and type(value) is str and value in row.fix_commands.values():
        return value
    return validate_fix_command(value)  # type: ignore[arg-type]  # refuses a non-str too


def _given_details(value: object) -> dict[str, Any]:
    if not value:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"details must be a mapping, not {type(value).__name__}")
    return json_safe_dict(value)


def _given_bool(value: object, draft: object, row: Code | None) -> bool:
    if type(value) is not bool:
        raise TypeError(f"retryable must be a bool, not {type(value).__name__}")
    return value


def _given_message(value: object, draft: Any, row: Code | None) -> str | None:
    # None: the detail's sentence, as `create` makes the message when none is given.
    return draft.user_message if value is None else _given_text("message", value)


_Rule = Callable[[Any, Any, "Code | None"], Any]
_RULES: dict[str, _Rule] = {
    "message": _given_message,
    "retryable": _given_bool,
    "retry_after_ms": lambda value, draft, row: clean_hint_ms(value),
    "fix_required": lambda value, draft, row: _given_text("fix_required", value),
    "fix_command": lambda value, draft, row: _given_fix_command(value, row),
    "status": lambda value, draft, row: clean_status(value),
    "source": lambda value, draft, row: _given_text("source", value, _MAX_NAME),
    "cause": lambda value, draft, row: _clean_cause(value),
    "details": lambda value, draft, row: _given_details(value),
    "suggestion": lambda value, draft, row: _given_text("suggestion", value, _MAX_USER_MESSAGE),
}


def rewrapped(detail: ErrorDetail, message: str, cause: ErrorDetail | str | None) -> ErrorDetail:
    """`copy_with(detail, message=message).with_cause(cause)`, spelled out: classify runs it
    on every error recognised behind a wrapper (a quarter of `copy_with`'s cost, twice)."""
    if isinstance(cause, ErrorDetail):
        cause = _trim_cause(cause, 1)
    draft: Any = _new(_Unfrozen)
    draft.code = detail.code
    draft.message = message
    draft.category = detail.category
    draft.retryable = detail.retryable
    draft.retry_after_ms = detail.retry_after_ms
    draft.fix_required = detail.fix_required
    draft.fix_command = detail.fix_command
    draft.user_message = detail.user_message
    draft.status = detail.status
    draft.source = detail.source
    draft.cause = cause
    draft.details = detail.details
    draft.suggestion = detail.suggestion
    draft.__class__ = ErrorDetail
    result: ErrorDetail = draft
    return result


def _summary(detail: ErrorDetail) -> str:
    return f"{detail.code}: {detail.message}"


def _trim_cause(cause: ErrorDetail | str | None, depth: int) -> ErrorDetail | str | None:
    """Keep at most MAX_CAUSE_DEPTH nested details; deeper links become one summary string."""
    if not isinstance(cause, ErrorDetail):
        return cause if cause is None or isinstance(cause, str) else str(cause)
    if depth >= MAX_CAUSE_DEPTH:
        return _summary(cause)
    inner = cause.cause
    if not isinstance(inner, ErrorDetail):
        return cause
    trimmed = _trim_cause(inner, depth + 1)
    if trimmed is inner:
        return cause
    draft = _copy(cause)  # not `copy_with`: its cause rule would trim the chain once more
    draft.cause = trimmed
    return _frozen(draft)


def _clean_name(value: str | None) -> str | None:
    return None if value is None else clean_text(value, _MAX_NAME)


def _clean_cause(cause: object) -> ErrorDetail | str | None:
    """A cause a caller gives: a detail (trimmed to the depth limit), else cleaned text."""
    if not isinstance(cause, ErrorDetail) and hasattr(type(cause), "__recoverable_detail__"):
        cause = foreign_detail(cause)  # another copy's value, read as a payload
    if cause is None or isinstance(cause, ErrorDetail):
        return _trim_cause(cause, 1)
    return clean_text(_plain("cause", cause) if isinstance(cause, str) else safe_str(cause))


# --- reading payloads -------------------------------------------------------------------

_CODE_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_OPTIONAL_STR = (
    "fix_required", "fix_command", "source", "category", "user_message", "suggestion",
)  # fmt: skip


def _read_payload(data: Mapping[str, Any]) -> ErrorDetail:
    """The detail a payload describes, its cause chain walked without recursion."""
    if not isinstance(data, Mapping):
        raise PayloadError(f"an ErrorDetail payload must be a mapping, not {type(data).__name__}")
    links: list[Mapping[str, Any]] = []
    seen: set[int] = set()
    node: object = data
    while isinstance(node, Mapping) and len(links) < MAX_CAUSE_DEPTH and id(node) not in seen:
        seen.add(id(node))
        links.append(node)
        node = node.get("cause")
    cause: ErrorDetail | str | None = _payload_cause_tail(node, seen)
    for link in reversed(links):
        cause = _payload_link(link, cause)
    assert isinstance(cause, ErrorDetail)
    return cause


def _payload_cause_tail(node: object, seen: set[int]) -> str | None:
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


def _payload_link(data: Mapping[str, Any], cause: ErrorDetail | str | None) -> ErrorDetail:
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
    details = _payload_details(data)
    source = _clean_name(data.get("source"))
    draft = _draft(row or codes.resolve(code), clean_text(message), clean_status(status), source)
    draft.code = code
    draft.retryable = retryable
    draft.cause = cause
    draft.details = details
    note = data.get("suggestion")  # the producer's note for an operator, cleaned
    draft.suggestion = clean_text(note, _MAX_USER_MESSAGE) if note else (row and row.suggestion)
    if row is None:  # a code registered elsewhere: its category's sentence, never its own
        _read_foreign_row(draft, data, details)
    _read_remedy(draft, data, details)
    return _frozen(draft)


def _payload_details(data: Mapping[str, Any]) -> dict[str, Any]:
    raw = data.get("details")
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise PayloadError("'details' must be an object")
    # Unknown keys join the same bounded copy after `details` (a key of theirs that is
    # already there is kept as `key#2`), read lazily: a million of them cost the budget only.
    extra = (
        (key, value)
        for key, value in data.items()
        if not (type(key) is str and (key in _FIELD_NAMES or key in _DERIVED))
    )
    return json_safe_dict(raw, extra)


def _read_foreign_row(draft: Any, data: Mapping[str, Any], details: dict[str, Any]) -> None:
    """A code registered elsewhere: its category when this process knows that category (else
    `unknown`), and that category's sentence; the peer's own words are developer text."""
    category, user_message = data.get("category"), data.get("user_message")
    known = isinstance(category, str) and category in CATEGORY_SENTENCES
    draft.category = _plain("category", category) if known else _UNKNOWN
    draft.user_message = category_sentence(draft.category)
    if category and not known and category != _UNKNOWN:
        details["peer_category"] = clean_text(category, _MAX_NAME)
    if user_message and user_message != draft.user_message:
        details["peer_user_message"] = clean_text(user_message, _MAX_USER_MESSAGE)


def _read_remedy(draft: Any, data: Mapping[str, Any], details: dict[str, Any]) -> None:
    """The wait hint, or what must change and the command that changes it."""
    draft.retry_after_ms = clean_hint_ms(data.get("retry_after_ms")) if draft.retryable else None
    fix_required, command = data.get("fix_required"), data.get("fix_command")
    draft.fix_required = None if draft.retryable or not fix_required else clean_text(fix_required)
    draft.fix_command = None
    if command is None:
        return
    if draft.retryable:
        details["fix_command_dropped"] = "a retryable detail has no fix_command"
        return
    try:
        draft.fix_command = validate_fix_command(command)
    except FixCommandRejected as refused:
        details["fix_command_dropped"] = clean_text(str(refused))


# --- the exception ----------------------------------------------------------------------

# What `RecoverableError` reads through from its detail (installed as properties below).
_READ_THROUGH = (*_FIELDS, "recovery", "http_status", "exit_code", "fallback")


class RecoverableError(Exception):
    """The exception the library raises; carries one `ErrorDetail` as `.detail`.

    Every field of the detail (and `recovery`, `http_status`, `exit_code`, `fallback`) reads
    through: `err.code` is `err.detail.code`. `args == (message, payload)`, so pickle and
    Celery's JSON result backend rebuild it whole.
    """

    # A marker, so that a second installed copy of the library recognises this error.
    __recoverable_error__: ClassVar[int] = 1

    detail: ErrorDetail
    """The classified failure this error carries."""

    # The detail's attributes, for type checkers (read-only properties at run time).
    code: str
    message: str
    category: str
    retryable: bool
    retry_after_ms: int | None
    fix_required: str | None
    fix_command: str | None
    user_message: str
    status: int | None
    source: str | None
    cause: ErrorDetail | str | None
    details: dict[str, Any]
    suggestion: str | None
    recovery: Recovery
    http_status: int
    exit_code: int
    fallback: bool

    def __init__(
        self,
        code: str | ErrorDetail,
        message: str | Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> None:
        """`RecoverableError(code, message, **fields)`: `ErrorDetail.create`'s rules (a
        registered code only); `RecoverableError(detail, message, **changes)`: a copy of the
        detail, `copy_with`'s rules; `RecoverableError(message, payload)`: `from_dict`'s (how
        pickle and Celery rebuild it). `user_message` and `category` are the table's in every
        form (TypeError)."""
        if isinstance(message, Mapping):  # rebuilt from args: (message, payload)
            detail = ErrorDetail.from_dict(message)
        elif isinstance(code, ErrorDetail) or hasattr(type(code), "__recoverable_detail__"):
            given = foreign_detail(code)
            if given is None:
                raise TypeError("a detail from another copy of recoverable could not be read")
            if message is not None:
                fields["message"] = message
            detail = copy_with(given, **fields) if fields else given
        else:
            owned = _TABLE_OWNED.keys() & fields.keys()
            if owned:  # create takes neither: say why rather than "unexpected keyword"
                raise TypeError(_TABLE_OWNED[min(owned)])
            detail = ErrorDetail.create(code, message, **fields)
        super().__init__(detail.message, detail.to_dict())
        self.detail = detail

    def __str__(self) -> str:
        return self.detail.message

    def __repr__(self) -> str:
        return f"RecoverableError({self.detail.code!r}, {self.detail.message!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.detail.message, self.detail.to_dict()))

    @classmethod
    def ensure(cls, value: object) -> RecoverableError:
        """Any value as an exception carrying its detail (the seeds' `ensureError`): a
        `RecoverableError` as it is; an exception classified, itself the `__cause__`; any
        other value (a string, a dict, None) classified, its text the message."""
        if isinstance(value, RecoverableError):
            return value
        error = cls(CONFIG.classify(value))
        if isinstance(value, BaseException):
            error.__cause__ = value
        return error


def _read_through(name: str) -> property:
    def read(error: RecoverableError) -> Any:
        return getattr(error.detail, name)

    return property(read, doc=f"`detail.{name}`")


for _name in _READ_THROUGH:
    setattr(RecoverableError, _name, _read_through(_name))


def foreign_detail(obj: object) -> ErrorDetail | None:
    """The detail of an `ErrorDetail` or `RecoverableError`, from this or another copy. By
    the object's real type (`isinstance` believes a forged `__class__`); a marker whose
    attributes raise is no detail. Never raises."""
    kind = type(obj)
    if issubclass(kind, ErrorDetail):
        return obj  # type: ignore[return-value]
    if issubclass(kind, RecoverableError):
        return obj.detail  # type: ignore[attr-defined, no-any-return]
    try:
        if getattr(kind, "__recoverable_error__", None) is not None:
            obj = getattr(obj, "detail", None)
        if getattr(type(obj), "__recoverable_detail__", None) is None:
            return None
        # another copy's value: read as any payload from elsewhere
        return ErrorDetail.from_dict(obj.to_dict())  # type: ignore[attr-defined]
    except Exception:
        return None


def with_details(detail: ErrorDetail, **extra: Any) -> ErrorDetail:
    """A copy with more (JSON-safe) details; None values are left out."""
    more = {key: value for key, value in extra.items() if value is not None}
    return copy_with(detail, details={**detail.details, **more}) if more else detail


def mark_exhausted(detail: ErrorDetail, attempts: int) -> ErrorDetail:
    """The detail of a retry that gave up: no longer retryable, so outer layers do not retry."""
    return copy_with(
        detail,
        retryable=False,
        retry_after_ms=None,
        details={**detail.details, "attempts": attempts, "retries_exhausted": True},
    )

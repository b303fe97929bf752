"""The value every failure becomes (`ErrorDetail`), and the builders the library uses.

`ErrorDetail` answers the four recovery questions in fields: what failed (`code`), is the
identical call worth repeating (`retryable`, `retry_after_ms`), what must change first
(`fix_required`) and the exact command that changes it (`fix_command`), plus a sentence safe
to show a person (`user_message`). It round-trips through JSON and pickle unchanged.

Every door applies one set of rules (`given`: texts scrubbed and clipped, waits finite and
capped, statuses in range, a `fix_command` validated, details JSON-safe, keys included), and
two fields are the table's and no caller's: `category` and `user_message` (a person reads
only sentences this process wrote). The public doors: `ErrorDetail.create` (a registered code
only), `ErrorDetail(...)` itself and `dataclasses.replace` (the same rules),
`RecoverableError(code, ...)` and `RecoverableError(detail, **changes)` (`error`),
`ErrorDetail.from_dict` (a payload, `payload`; a code registered elsewhere reads its
category's sentence). A detail is changed only by copying it: `copy_with`, checked the same
way. Inside the library, `unvalidated`, `from_row` and `rewrapped` fill a detail from the
table and skip the checks: for classifiers that pass a registered code (or its row), their
own clean message and JSON-safe details. They are generated from the class's fields (one slot
store per field, `generated`), so a traceback through them shows their lines.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .categories import GENERIC_USER_MESSAGE
from .codes import CodeRow, codes
from .generated import generate
from .given import (
    MAX_CAUSE_DEPTH,
    MAX_NAME_CHARS,
    MAX_SENTENCE_CHARS,
    RULES,
    TABLE_OWNED,
    Rule,
    apply,
    given_bool,
    given_details,
    given_fix_command,
    given_text,
    plain,
    registered,
)
from .payload import PayloadError, read_payload
from .registration import MAX_EXIT_CODE
from .untrusted import MAX_HINT_MS, clean_hint_ms, clean_status, clean_text, safe_str

if TYPE_CHECKING:
    from .code_names import BuiltinCode

__all__ = [
    "FIELDS",
    "MAX_CAUSE_DEPTH",
    "ErrorDetail",
    "PayloadError",
    "copied",
    "copy_with",
    "from_another_copy",
    "from_row",
    "mark_exhausted",
    "rewrapped",
    "unvalidated",
    "with_details",
]

Recovery = Literal["retry", "fix", "stop"]


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
            raise ValueError(TABLE_OWNED["category"])
        if self.user_message not in (row.user_message, GENERIC_USER_MESSAGE):
            raise ValueError(TABLE_OWNED["user_message"])
        draft = fields_of(self)  # the table's words, and each other field by its rule:
        draft.update(code=row.code, category=row.category, user_message=row.user_message)
        apply(draft, row, {name: draft[name] for name in _SETTABLE}, _RULES)
        for name, value in draft.items():
            object.__setattr__(self, name, value)

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
        retryable = row.retryable if retryable is None else given_bool(retryable, None, row)
        clean_source = given_text("source", source, MAX_NAME_CHARS)
        # A command given is validated even where it is then dropped (a retryable detail).
        given_command = (
            None if fix_command is _TABLE_DEFAULT else given_fix_command(fix_command, row)
        )
        if retryable:
            fix_required = fix_command = None
            retry_after_ms = clean_hint_ms(retry_after_ms)
        else:
            retry_after_ms = None
            if fix_required is _TABLE_DEFAULT:
                fix_required = row.fix_required
            else:
                fix_required = given_text("fix_required", fix_required)
            if fix_command is _TABLE_DEFAULT:
                fix_command = row.fix_command_for(clean_source) if fix_required else None
            else:
                fix_command = given_command
        text = row.user_message if message is None else clean_text(plain("message", message))
        return build(
            code=row.code,
            message=text,
            category=row.category,
            retryable=retryable,
            retry_after_ms=retry_after_ms,
            fix_required=fix_required,
            fix_command=fix_command,
            user_message=row.user_message,
            status=clean_status(status),
            source=clean_source,
            cause=_clean_cause(cause),
            details=given_details(details),
            suggestion=(
                row.suggestion
                if suggestion is _TABLE_DEFAULT
                else given_text("suggestion", suggestion, MAX_SENTENCE_CHARS)
            ),
        )

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
            link = fields_of(detail)  # in field order: the documented order
            link["cause"] = cause
            link["details"] = dict(detail.details)
            cause = link
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
            return read_payload(data, build, _PAYLOAD_KEYS)
        except PayloadError:
            raise
        except Exception as exc:  # a value that raises as it is read is a payload not to read
            raise PayloadError(f"the payload could not be read ({type(exc).__name__})") from None

    def with_cause(self, cause: ErrorDetail | str | None) -> ErrorDetail:
        """A copy with another cause (trimmed to the depth limit; text cleaned)."""
        return copy_with(self, cause=cause)


# --- the fields, and the cause chain ------------------------------------------------------

FIELDS = tuple(item.name for item in fields(ErrorDetail))
"""The fields of a detail, in their order (`to_dict`'s)."""
# What a caller may set: every field but the table's.
_SETTABLE = tuple(name for name in FIELDS if name not in TABLE_OWNED)
# A payload's keys that are no extra: the fields, and what is derived from them.
_PAYLOAD_KEYS = frozenset({*FIELDS, "recovery", "http_status", "exit_code"})


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
    draft = fields_of(cause)  # not `copy_with`: its cause rule would trim the chain once more
    draft["cause"] = trimmed
    return build(**draft)


def _clean_cause(cause: object) -> ErrorDetail | str | None:
    """A cause a caller gives: a detail (trimmed to the depth limit), else cleaned text."""
    if not isinstance(cause, ErrorDetail) and hasattr(type(cause), "__recoverable_detail__"):
        cause = from_another_copy(cause)  # another copy's value, read as a payload
    if cause is None or isinstance(cause, ErrorDetail):
        return _trim_cause(cause, 1)
    return clean_text(plain("cause", cause) if isinstance(cause, str) else safe_str(cause))


# Every field's rule: the cause's is the value's own (a chain of details, trimmed).
_RULES: Mapping[str, Rule] = {**RULES, "cause": lambda value, draft, row: _clean_cause(value)}


def from_another_copy(obj: object) -> ErrorDetail | None:
    """The detail of a value from another installed copy of the library (its class carries
    the marker of an error or of a detail), read as any payload from elsewhere; None when it
    is neither, or its attributes raise. Never raises."""
    try:
        if getattr(type(obj), "__recoverable_error__", None) is not None:
            obj = getattr(obj, "detail", None)
        if getattr(type(obj), "__recoverable_detail__", None) is None:
            return None
        return ErrorDetail.from_dict(obj.to_dict())  # type: ignore[attr-defined]
    except Exception:
        return None


# --- building without the checks: generated from the fields -------------------------------


class _Unfrozen:
    """ErrorDetail's slots without the frozen `__setattr__`, where the generated builders fill
    a detail in. The frozen `__init__` goes through `object.__setattr__` once per field; plain
    slot stores on a class of the same layout, then one `__class__` assignment, cost a third
    of that, and classify builds a detail on every call."""

    __slots__ = FIELDS


# The names the generated builders read.
_NAMESPACE: dict[str, Any] = {
    "__name__": __name__,
    "ErrorDetail": ErrorDetail,
    "MAX_HINT_MS": MAX_HINT_MS,
    "_Unfrozen": _Unfrozen,
    "_new": object.__new__,
    "_trim_cause": _trim_cause,
    "clean_hint_ms": clean_hint_ms,
}


def _made(values: Mapping[str, str], each: str = "{}", indent: str = "    ") -> str:
    """Source that makes and returns a new ErrorDetail: one slot store per field of the class,
    written out from `FIELDS` (no builder lists the fields by hand), each field's expression
    its entry in `values`, else `each` with its name (by default, the local of that name)."""
    unknown = values.keys() - set(FIELDS)
    if unknown:
        raise TypeError(f"ErrorDetail has no field {min(unknown)!r}")
    lines = [
        "made = _new(_Unfrozen)",
        *(f"made.{item} = {values.get(item, each.format(item))}" for item in FIELDS),
        "made.__class__ = ErrorDetail",
        "return made",
    ]
    return "".join(f"{indent}{line}\n" for line in lines)


fields_of: Callable[[ErrorDetail], dict[str, Any]] = generate(
    "fields_of",
    "def fields_of(detail):\n    'A dict of the fields of `detail`, in their order.'\n"
    "    return {\n"
    + "".join(f"        {item!r}: detail.{item},\n" for item in FIELDS)
    + "    }\n",
    _NAMESPACE,
)
build: Callable[..., ErrorDetail] = generate(
    "build",
    f"def build({', '.join(FIELDS)}):\n"
    "    'A detail of these fields, as they are: no checks, no copies.'\n" + _made({}),
    _NAMESPACE,
)

# `from_row`'s fields (it runs on every classification): the row's words; for a retryable
# row its wait hint (cleaned unless it is a clean int already: NaN, infinity, a float, past
# the cap) and no fix; else no wait, and the row's fix with its command for the source.
_FROM_ROW = {
    "code": "row.code",
    "category": "row.category",
    "user_message": "row.user_message",
    "cause": "None",
    "suggestion": "row.suggestion",
}
_RETRYABLE = {
    **_FROM_ROW,
    "retryable": "True",
    "retry_after_ms": "retry_after_ms if retry_after_ms is None or (type(retry_after_ms) is int"
    " and 0 <= retry_after_ms <= MAX_HINT_MS) else clean_hint_ms(retry_after_ms)",
    "fix_required": "None",
    "fix_command": "None",
}
_NOT_RETRYABLE = {
    **_FROM_ROW,
    "retryable": "False",
    "retry_after_ms": "None",
    "fix_required": "row.fix_required",
    "fix_command": "row.fix_command_for(source) if row.fix_required and row.fix_commands else None",
}

if TYPE_CHECKING:  # what the generated builders below take (mypy reads no generated code)

    def from_row(  # noqa: PLR0913 -- the fields a decided answer sets, positional: the hot path
        row: CodeRow,
        message: str,
        retry_after_ms: int | None,
        status: int | None,
        source: str | None,
        *,
        details: dict[str, Any],
    ) -> ErrorDetail:
        """`unvalidated` for a row already found and details already made (a dict, JSON-safe)."""

    def rewrapped(
        detail: ErrorDetail, message: str, cause: ErrorDetail | str | None
    ) -> ErrorDetail:
        """`copy_with(detail, message=message).with_cause(cause)`, without the checks: classify
        runs it on every error recognised behind a wrapper."""

    def copied(detail: ErrorDetail) -> ErrorDetail:
        """The same detail again, with a `details` of its own: what a memo hands out."""

else:
    copied = generate(
        "copied",
        "def copied(detail):\n    'The same detail again, with a `details` of its own.'\n"
        + _made({"details": "dict(detail.details)"}, each="detail.{}"),
        _NAMESPACE,
    )
    from_row = generate(
        "from_row",
        "def from_row(row, message, retry_after_ms, status, source, *, details):\n"
        "    '`unvalidated` for a row already found and details already made (JSON-safe).'\n"
        "    if row.retryable:\n" + _made(_RETRYABLE, indent=" " * 8) + _made(_NOT_RETRYABLE),
        _NAMESPACE,
    )
    rewrapped = generate(
        "rewrapped",
        "def rewrapped(detail, message, cause):\n"
        "    '`copy_with(detail, message=message).with_cause(cause)`, without the checks.'\n"
        "    if isinstance(cause, ErrorDetail):\n"
        "        cause = _trim_cause(cause, 1)\n"
        + _made({"message": "message", "cause": "cause"}, each="detail.{}"),
        _NAMESPACE,
    )


def unvalidated(  # noqa: PLR0913 -- one keyword per field a classifier sets
    code: BuiltinCode | CodeRow,
    message: str,
    *,
    retry_after_ms: int | None = None,
    status: int | None = None,
    source: str | None = None,
    details: dict[str, Any] | None = None,
) -> ErrorDetail:
    """A detail with the table's defaults for `code` (a name or its row), skipping `create`'s
    checks and copies: `details` must already be JSON-safe and is kept as given. A code that
    is not registered is a bug of ours, refused (ValueError): a peer's code is read with
    `codes.resolve`, never passed here."""
    row = code if type(code) is CodeRow else codes.get(code)  # type: ignore[arg-type]
    if row is None:
        raise ValueError(f"code {code!r} is not registered")
    return from_row(row, message, retry_after_ms, status, source, details=details or {})


def copy_with(detail: ErrorDetail, **changes: Any) -> ErrorDetail:
    """A copy of `detail` with some fields changed, each checked and cleaned as `create` does
    (`given.apply`). The code stays (TypeError); `category` and `user_message` are the table's:
    only the registry's own words for the code are accepted (ValueError)."""
    draft = fields_of(detail)
    apply(draft, codes.get(detail.code), changes, _RULES)
    return build(**draft)


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

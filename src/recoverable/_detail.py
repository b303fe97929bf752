"""The value every failure becomes (`ErrorDetail`) and the exception that carries it.

`ErrorDetail` answers the four recovery questions in fields: what failed (`code`), is the
identical call worth repeating (`retryable`, `retry_after_ms`), what must change first
(`fix_required`) and the exact command that changes it (`fix_command`), plus a sentence safe
to show a person (`user_message`). It round-trips through JSON and pickle unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from ._codes import GENERIC_USER_MESSAGE, Code, codes, validate_fix_command

__all__ = ["MAX_CAUSE_DEPTH", "ErrorDetail", "PayloadError", "RecoverableError"]

MAX_CAUSE_DEPTH = 8
_MAX_DETAILS_DEPTH = 16

Recovery = Literal["retry", "fix", "stop"]

_FIELDS = (
    "code", "message", "category", "retryable", "retry_after_ms", "fix_required",
    "fix_command", "user_message", "status", "source", "cause", "details",
)  # fmt: skip
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
    message: str
    category: str
    retryable: bool
    retry_after_ms: int | None = None
    fix_required: str | None = None
    fix_command: str | None = None
    user_message: str = GENERIC_USER_MESSAGE
    status: int | None = None
    source: str | None = None
    cause: ErrorDetail | str | None = None
    details: dict[str, Any] = field(default_factory=dict, hash=False)

    # A marker, so that a second installed copy of the library recognises this value.
    __recoverable_detail__: ClassVar[int] = 1

    @classmethod
    def create(
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
    ) -> ErrorDetail:
        """Build a detail for `code`, filling every field the caller leaves to the table."""
        row = _row_for(code)
        if retryable is None:
            retryable = row.retryable
        if retryable:
            fix_required = fix_command = None
            retry_after_ms = _clean_retry_after(retry_after_ms)
        else:
            retry_after_ms = None
            if fix_required is _TABLE_DEFAULT:
                fix_required = row.fix_required
            if fix_command is _TABLE_DEFAULT:
                fix_command = row.fix_command_for(source) if fix_required else None
            elif fix_command is not None:
                validate_fix_command(fix_command)
        return _build(
            code,
            row.user_message if message is None else message,
            row.category,
            retryable,
            retry_after_ms,
            fix_required,
            fix_command,
            row.user_message,
            status,
            source,
            None if cause is None else _trim_cause(cause, 1),
            _json_safe_dict(details) if details else {},
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
        return _row_for(self.code).http_status

    @property
    def exit_code(self) -> int:
        """The process exit code for this code (cli-agent-spec)."""
        return _row_for(self.code).exit_code

    @property
    def fallback(self) -> bool:
        """Whether another provider could succeed where this one failed."""
        return _row_for(self.code).fallback

    # --- conversions -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict in the documented field order."""
        cause = self.cause.to_dict() if isinstance(self.cause, ErrorDetail) else self.cause
        return {
            "code": self.code,
            "message": self.message,
            "category": self.category,
            "retryable": self.retryable,
            "retry_after_ms": self.retry_after_ms,
            "fix_required": self.fix_required,
            "fix_command": self.fix_command,
            "user_message": self.user_message,
            "status": self.status,
            "source": self.source,
            "cause": cause,
            "details": dict(self.details),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ErrorDetail:
        """Read a payload written by `to_dict`; unknown keys are kept in `details`."""
        return _from_dict(data, 1, set())

    def with_cause(self, cause: ErrorDetail | str | None) -> ErrorDetail:
        """A copy with another cause (trimmed to the depth limit)."""
        if isinstance(cause, ErrorDetail):
            cause = _trim_cause(cause, 1)
        return _build(
            self.code, self.message, self.category, self.retryable, self.retry_after_ms,
            self.fix_required, self.fix_command, self.user_message, self.status, self.source,
            cause, self.details,
        )  # fmt: skip


def make(
    code: str,
    message: str,
    *,
    retry_after_ms: int | None = None,
    status: int | None = None,
    source: str | None = None,
    details: dict[str, Any] | None = None,
) -> ErrorDetail:
    """`ErrorDetail.create` for the classifiers: table defaults, details already JSON-safe."""
    return from_row(_row_for(code), message, retry_after_ms, status, source, details)


def from_row(
    row: Code,
    message: str,
    retry_after_ms: int | None,
    status: int | None,
    source: str | None,
    details: dict[str, Any] | None,
) -> ErrorDetail:
    """`make` for a caller that already holds the code's row."""
    if row.retryable:
        if retry_after_ms is not None and retry_after_ms < 0:
            retry_after_ms = None
        return _build(row.code, message, row.category, True, retry_after_ms, None, None,
                      row.user_message, status, source, None, details or {})  # fmt: skip
    fix_required = row.fix_required
    fix_command = row.fix_command_for(source) if fix_required and row.fix_commands else None
    return _build(row.code, message, row.category, False, None, fix_required, fix_command,
                  row.user_message, status, source, None, details or {})  # fmt: skip


def _replace(detail: ErrorDetail, **changes: Any) -> ErrorDetail:
    values = {name: getattr(detail, name) for name in _FIELDS}
    values.update(changes)
    return _build(**values)


class _Unfrozen:
    """ErrorDetail's slots without the frozen `__setattr__`: where `_build` fills a detail."""

    __slots__ = _FIELDS


_new = object.__new__


def _build(
    code: str,
    message: str,
    category: str,
    retryable: bool,
    retry_after_ms: int | None,
    fix_required: str | None,
    fix_command: str | None,
    user_message: str,
    status: int | None,
    source: str | None,
    cause: ErrorDetail | str | None,
    details: dict[str, Any],
) -> ErrorDetail:
    """The same value as `ErrorDetail(...)`, built without its __init__.

    classify builds a detail on every call, and the frozen __init__ goes through
    `object.__setattr__` once per field. Plain slot stores on a class of the same layout,
    then one `__class__` assignment, cost a third of that.
    """
    draft: Any = _new(_Unfrozen)
    draft.code = code
    draft.message = message
    draft.category = category
    draft.retryable = retryable
    draft.retry_after_ms = retry_after_ms
    draft.fix_required = fix_required
    draft.fix_command = fix_command
    draft.user_message = user_message
    draft.status = status
    draft.source = source
    draft.cause = cause
    draft.details = details
    draft.__class__ = ErrorDetail
    detail: ErrorDetail = draft
    return detail


_UNKNOWN_ROW: Code | None = None


def _row_for(code: str) -> Code:
    row = codes._rows.get(code)  # the registry's own dict: this runs on every classification
    if row is not None:
        return row
    # An unregistered code (e.g. registered only in the process that sent it) reads as unknown.
    global _UNKNOWN_ROW  # noqa: PLW0603 -- a cache of the one fallback row
    if _UNKNOWN_ROW is None:
        _UNKNOWN_ROW = codes["unknown"]
    return _UNKNOWN_ROW


def _clean_retry_after(value: object) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        return math.ceil(value)
    return None


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
    return cause if trimmed is inner else _replace(cause, cause=trimmed)


# --- reading payloads -------------------------------------------------------------------

_OPTIONAL_STR = ("fix_required", "fix_command", "source")


def _from_dict(data: Mapping[str, Any], depth: int, seen: set[int]) -> ErrorDetail:
    if not isinstance(data, Mapping):
        raise PayloadError(f"an ErrorDetail payload must be a mapping, not {type(data).__name__}")
    seen.add(id(data))
    code = data.get("code")
    message = data.get("message")
    if not isinstance(code, str) or not code:
        raise PayloadError("an ErrorDetail payload needs a non-empty string 'code'")
    if not isinstance(message, str):
        raise PayloadError("an ErrorDetail payload needs a string 'message'")
    row = _row_for(code)
    retryable = data.get("retryable", row.retryable)
    if not isinstance(retryable, bool):
        raise PayloadError("'retryable' must be a boolean")
    for key in _OPTIONAL_STR:
        if data.get(key) is not None and not isinstance(data[key], str):
            raise PayloadError(f"{key!r} must be a string or null")
    status = data.get("status")
    if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
        raise PayloadError("'status' must be an integer or null")
    raw_details = data.get("details")
    if raw_details is None:
        raw_details = {}
    if not isinstance(raw_details, Mapping):
        raise PayloadError("'details' must be an object")
    details = _json_safe_dict(raw_details)
    for key, value in data.items():
        if key not in _FIELDS and key not in _DERIVED:
            details.setdefault(str(key), _json_safe(value, 0))
    user_message = data.get("user_message")
    category = data.get("category")
    return ErrorDetail(
        code=code,
        message=message,
        category=category if isinstance(category, str) else row.category,
        retryable=retryable,
        retry_after_ms=_clean_retry_after(data.get("retry_after_ms")) if retryable else None,
        fix_required=data.get("fix_required"),
        fix_command=data.get("fix_command"),
        user_message=user_message if isinstance(user_message, str) else row.user_message,
        status=status,
        source=data.get("source"),
        cause=_read_cause(data.get("cause"), depth, seen),
        details=details,
    )


def _read_cause(cause: object, depth: int, seen: set[int]) -> ErrorDetail | str | None:
    if cause is None or isinstance(cause, str):
        return cause
    if isinstance(cause, Mapping):
        if id(cause) in seen:
            return "<cycle>"
        inner = _from_dict(cause, depth + 1, seen)
        return _summary(inner) if depth >= MAX_CAUSE_DEPTH else inner
    raise PayloadError("'cause' must be an object, a string or null")


def _json_safe_dict(data: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(key): _json_safe(value, 1) for key, value in data.items()}


def _json_safe(value: object, depth: int) -> Any:
    """A copy of `value` that `json.dumps` accepts; anything else becomes a string."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= _MAX_DETAILS_DEPTH:
        return "..."
    if isinstance(value, Mapping):
        return {str(key): _json_safe(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item, depth + 1) for item in value]
    if isinstance(value, ErrorDetail):
        return value.to_dict()
    return safe_str(value)


def safe_str(value: object) -> str:
    """`str(value)`, or a placeholder when its `__str__` raises."""
    try:
        return str(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"


# --- the exception ----------------------------------------------------------------------


class RecoverableError(Exception):
    """The exception the library raises; carries one `ErrorDetail` as `.detail`.

    `args == (message, payload)`, so pickle and Celery's JSON result backend rebuild it whole.
    """

    # A marker, so that a second installed copy of the library recognises this error.
    __recoverable_error__: ClassVar[int] = 1

    detail: ErrorDetail

    def __init__(
        self,
        code: str | ErrorDetail,
        message: str | Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> None:
        if isinstance(code, ErrorDetail):
            detail = _replace(code, **fields) if fields else code
        elif isinstance(message, Mapping):  # rebuilt from args: (message, payload)
            detail = ErrorDetail.from_dict(message)
        else:
            detail = ErrorDetail.create(code, message, **fields)
        super().__init__(detail.message, detail.to_dict())
        self.detail = detail

    def __str__(self) -> str:
        return self.detail.message

    def __repr__(self) -> str:
        return f"RecoverableError({self.detail.code!r}, {self.detail.message!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.detail.message, self.detail.to_dict()))

    @property
    def code(self) -> str:
        """The registry code."""
        return self.detail.code

    @property
    def category(self) -> str:
        """The code's category."""
        return self.detail.category

    @property
    def retryable(self) -> bool:
        """Worth repeating unchanged."""
        return self.detail.retryable

    @property
    def retry_after_ms(self) -> int | None:
        """The wait hint, in ms."""
        return self.detail.retry_after_ms

    @property
    def fix_required(self) -> str | None:
        """What must change first."""
        return self.detail.fix_required

    @property
    def fix_command(self) -> str | None:
        """The command that changes it."""
        return self.detail.fix_command

    @property
    def user_message(self) -> str:
        """A sentence safe to show a person."""
        return self.detail.user_message

    @property
    def status(self) -> int | None:
        """The upstream HTTP status."""
        return self.detail.status

    @property
    def source(self) -> str | None:
        """Where the failure came from."""
        return self.detail.source

    @property
    def details(self) -> dict[str, Any]:
        """JSON-safe extras."""
        return self.detail.details

    @property
    def recovery(self) -> Recovery:
        """retry, fix or stop."""
        return self.detail.recovery

    @property
    def http_status(self) -> int:
        """The status our server answers with."""
        return self.detail.http_status

    @property
    def exit_code(self) -> int:
        """The process exit code."""
        return self.detail.exit_code


def foreign_detail(obj: object) -> ErrorDetail | None:
    """The detail of an `ErrorDetail` or `RecoverableError`, from this or another copy."""
    if isinstance(obj, ErrorDetail):
        return obj
    if isinstance(obj, RecoverableError):
        return obj.detail
    kind = type(obj)
    if getattr(kind, "__recoverable_detail__", None) is not None:
        return ErrorDetail.from_dict(obj.to_dict())  # type: ignore[attr-defined]
    if getattr(kind, "__recoverable_error__", None) is not None:
        inner = getattr(obj, "detail", None)
        if inner is not None and getattr(type(inner), "__recoverable_detail__", None) is not None:
            return ErrorDetail.from_dict(inner.to_dict())
    return None


def with_details(detail: ErrorDetail, **extra: Any) -> ErrorDetail:
    """A copy with more (JSON-safe) details; None values are left out."""
    more = {key: value for key, value in extra.items() if value is not None}
    return _replace(detail, details={**detail.details, **more}) if more else detail


def mark_exhausted(detail: ErrorDetail, attempts: int) -> ErrorDetail:
    """The detail of a retry that gave up: no longer retryable, so outer layers do not retry."""
    return _replace(
        detail,
        retryable=False,
        retry_after_ms=None,
        details={**detail.details, "attempts": attempts, "retries_exhausted": True},
    )

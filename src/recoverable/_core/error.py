"""The exception the library raises, `RecoverableError`: one `ErrorDetail` carried whole.

Its doors are the detail's: `RecoverableError(code, ...)` follows `ErrorDetail.create`'s rules,
`RecoverableError(detail, **changes)` `copy_with`'s, and `RecoverableError(message, payload)`
(how pickle and Celery rebuild it) `from_dict`'s. `foreign_detail` reads the detail of a value
from this copy of the library or from another installed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from .config import CONFIG

if TYPE_CHECKING:
    from .detail import ErrorDetail, Recovery

__all__ = ["READ_THROUGH", "RecoverableError", "foreign_detail"]

# The detail is loaded when an error is made, not here: `RunRefused` and the runners'
# `except RecoverableError` put this module on the path of a run that fails in nothing.
READ_THROUGH = (
    *("code", "message", "category", "retryable", "retry_after_ms", "fix_required"),
    *("fix_command", "user_message", "status", "source", "cause", "details", "suggestion"),
    *("recovery", "http_status", "exit_code", "fallback"),
)
"""What `RecoverableError` reads through from its detail (installed as properties below):
`detail.FIELDS` (a test holds them equal), then what is derived from them."""


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
        from .detail import ErrorDetail, copy_with
        from .given import TABLE_OWNED

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
            owned = TABLE_OWNED.keys() & fields.keys()
            if owned:  # create takes neither: say why rather than "unexpected keyword"
                raise TypeError(TABLE_OWNED[min(owned)])
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


for _name in READ_THROUGH:
    setattr(RecoverableError, _name, _read_through(_name))


def foreign_detail(obj: object) -> ErrorDetail | None:
    """The detail of an `ErrorDetail` or `RecoverableError`, from this or another copy. By
    the object's real type (`isinstance` believes a forged `__class__`); a marker whose
    attributes raise is no detail. Never raises."""
    from .detail import ErrorDetail, from_another_copy

    kind = type(obj)
    if issubclass(kind, ErrorDetail):
        return obj  # type: ignore[return-value]
    if issubclass(kind, RecoverableError):
        return obj.detail  # type: ignore[attr-defined, no-any-return]
    return from_another_copy(obj)

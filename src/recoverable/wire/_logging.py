"""What the wire's own log lines say: codes, numbers and names of code, never what a request,
an upstream or an exception said.

The ASGI helpers and the streaming responses log each failure they answer (the logger
`recoverable.wire`) as one line of classified fields:

    GET /runs/{run} failed: provider_rate_limited (503) urn:uuid:... openai.RateLimitError

the method, the route's template (the app's code, not the request's path), the code (a
peer's lower_snake code too: an operator reads this line), the status answered, the problem
`instance` the client was given (a client's report finds the record), the exception's class.
No exception message, path, detail message or stack text: those carry what the request and
the upstream said (a key an SDK echoed, a prompt, markup, a path with a token in it), and a
log line is an output too (principle 6).

For a likely bug (`unknown`, `internal_error`) the record also says where it happened: the
frames of its traceback (file, line, function: places in the code) and each exception's class
in the chain, scrubbed, but none of the exceptions' messages nor source lines, as the
record's exception text (`exc_text`: every `logging.Formatter` prints it after the line; the
record has no `exc_info`, so no formatter renders the exception itself). That is enough to
find the bug; the developer who wants the exception whole catches it in the route.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from .._core.detail import ErrorDetail
from .._core.log_text import code_name, exception_name, withheld_traceback
from .._core.public import public_code
from .._core.secrets import scrub

__all__ = [
    "LIKELY_BUGS",
    "Answer",
    "code_name",
    "exception_name",
    "failure_line",
    "log_failure",
    "withheld_traceback",
]

logger = logging.getLogger("recoverable.wire")

LIKELY_BUGS = frozenset({"unknown", "internal_error"})
"""The codes whose record carries the frames of the traceback."""
_CODE_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")  # what `ErrorDetail.from_dict` reads as a code


@dataclass(frozen=True, slots=True)
class Answer:
    """The HTTP answer a failure got, as its log line names it."""

    status: int
    """The status sent."""
    instance: str
    """The problem `instance` the client was given (a `urn:uuid:`)."""


def failure_line(
    what: str, detail: ErrorDetail, exc: BaseException | None, answer: Answer | None = None
) -> str:
    """The one line of a failure's record (see the module's docstring); `what` is ours."""
    answered = ""
    if answer is not None:
        answered = f" ({int(answer.status)}) {code_name(answer.instance)}"
    kind = "" if exc is None else " " + exception_name(exc)
    return f"{what} failed: {_code(detail)}{answered}{kind}"


def _code(detail: ErrorDetail) -> str:
    """The code, for the log: ours, or a peer's lower_snake name (no markup, line break or
    credential fits in one; what it could spell is read by an operator, not a person)."""
    code = detail.code
    if isinstance(code, str) and _CODE_NAME.fullmatch(code) and scrub(code) == code:
        return code
    return public_code(code)


def log_failure(
    what: str,
    detail: ErrorDetail,
    exc: BaseException | None,
    *,
    answer: Answer | None = None,
    level: int = logging.INFO,
) -> None:
    """Log a failure the wire answered: ERROR with the frames for a likely bug, else at
    `level` (INFO: a failure answered as the table says is not the server's fault)."""
    bug = public_code(detail.code) in LIKELY_BUGS
    level = logging.ERROR if bug else level
    if not logger.isEnabledFor(level):
        return
    line = failure_line(what, detail, exc, answer)
    fields: dict[str, Any] = {
        "recoverable_code": _code(detail),
        "recoverable_status": None if answer is None else int(answer.status),
    }
    record = logger.makeRecord(
        logger.name, level, __file__, 0, "%s", (line,), None, func="log_failure", extra=fields
    )
    if bug and exc is not None:
        record.exc_text = withheld_traceback(exc)
    logger.handle(record)

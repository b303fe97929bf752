"""What the library's own log lines may say of an exception: names of code (its class, the
frames of its traceback), never what it said. An exception's message and its source lines
carry what a request, an upstream or a user's code put there (a key an SDK echoed, a prompt,
markup), and a log line is an output too (principle 6)."""

from __future__ import annotations

import re
import traceback

from .secrets import scrub

__all__ = ["code_name", "exception_name", "withheld_traceback"]

_MAX_CHAIN = 8  # exceptions of one chain shown
_MAX_FRAMES = 50  # the last frames of each (a RecursionError has a thousand)
_NAME = re.compile(r"[^A-Za-z0-9_.:<>{}/\-]")  # what a name of code may show; the rest: "?"
_MAX_NAME = 200


def code_name(value: object) -> str:
    """A name from the code (a class, a route's template, a method) fit for one log line:
    only the characters such names use, clipped; "-" when there is none."""
    if not isinstance(value, str) or not value:
        return "-"
    return scrub(_NAME.sub("?", value[:_MAX_NAME]))


def exception_name(exc: BaseException) -> str:
    """`module.QualifiedName` of an exception's class."""
    kind = type(exc)
    module = getattr(kind, "__module__", None)
    name = getattr(kind, "__qualname__", None) or getattr(kind, "__name__", None)
    return code_name(f"{module}.{name}" if isinstance(module, str) else name)


def withheld_traceback(exc: BaseException) -> str:
    """Where `exc` (and each exception of its chain) happened: frames and classes only."""
    chain: list[tuple[BaseException, str]] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    link = ""
    while current is not None and id(current) not in seen and len(chain) < _MAX_CHAIN:
        seen.add(id(current))
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, "The above exception was the direct cause of:"
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, "During handling of the above exception:"
        else:
            current = None
    parts: list[str] = []
    for item, after in reversed(chain):
        parts.append("Traceback (most recent call last; messages withheld):")
        for frame in traceback.extract_tb(item.__traceback__, limit=-_MAX_FRAMES):
            where = code_name(frame.filename)
            parts.append(f'  File "{where}", line {frame.lineno}, in {code_name(frame.name)}')
        parts.append(exception_name(item))
        if after:
            parts.append(after)
    return "\n".join(parts)

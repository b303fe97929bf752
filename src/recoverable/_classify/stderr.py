"""A failed process's stderr: the line that says why, read through anchored phrase tables.

Tools put their reason after prefixes of their own (`fatal: `, `npm ERR! `, `curl: (6) `,
`git@github.com: `, a Python traceback's `openai.RateLimitError: `); a line is read after at
most three such prefixes, from the last line up (the last reason a tool gives is the one it
stopped on). Only phrases that open what is left match, so a "rate limit" quoted inside a
line never does. An SDK's `Error code: NNN - {body}` line is read as that HTTP answer.

When no phrase names the failure, `failure_line` picks the line a person should read: the
last one that is not the tool's usage text (a `usage:` line and the lines indented under
it, git's and argparse's) nor a pointer to its help ("Try 'ls --help' for more
information."), so `git --no-such-option` says `unknown option: --no-such-option`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .._core.detail import ErrorDetail, copy_with, unvalidated
from .._core.untrusted import clean_text, clip
from .http import MESSAGE_PHRASES, from_http
from .phrases import PhraseTable
from .text import status_line

if TYPE_CHECKING:
    from .._core.code_names import BuiltinCode

__all__ = ["classify_stderr", "failure_line", "provider_failure_in"]

_MAX_LINES = 200  # of the tail, read from the end
_MAX_LINE = 2000

# What a tool puts before its reason: `name: ` (a program, a host, an exception class),
# npm's own, a bracketed level; then curl's `(6) `.
_PREFIX = (
    r"^(?:(?:[\w.@/+-]{1,100}:|npm (?:err!|error)|\[(?:error|fatal|err)\]|e:)[ \t]+){0,3}"
    r"(?:\(\d{1,3}\)[ \t]*)?"
)
_GIT_URL = r"unable to access '[^'\n]{0,2000}': "

# The tools' own words for failures a retry or a fix can act on.
_TOOL_PHRASES: tuple[tuple[str, BuiltinCode], ...] = (
    (r"(?:api |secondary )?rate limit(?:ed| exceeded| reached| hit)\b", "rate_limited"),
    (r"too many requests\b", "rate_limited"),
    (r"429 too many requests\b", "rate_limited"),
    (r"(?:http|status(?: code)?) 429\b", "rate_limited"),
    (r"rpc failed; http 429\b", "rate_limited"),
    (_GIT_URL + r"the requested url returned error: 429\b", "rate_limited"),
    (r"(?:\[errno -?\d+\] )?connection refused\b", "network_error"),
    (r"(?:\[errno -?\d+\] )?connection reset by peer\b", "network_error"),
    (r"could not resolve host\b", "network_error"),
    (r"temporary failure in name resolution\b", "network_error"),
    (r"(?:\[errno -?\d+\] )?name or service not known\b", "network_error"),
    (r"network is unreachable\b", "network_error"),
    (r"no route to host\b", "network_error"),
    (r"failed to connect to\b", "network_error"),
    (_GIT_URL + r"(?:could not resolve host|failed to connect to)\b", "network_error"),
    (r"(?:503 )?service (?:temporarily )?unavailable\b", "unavailable"),
    (r"502 bad gateway\b", "unavailable"),
    (r"(?:http|status(?: code)?) 50[23]\b", "unavailable"),
    (r"rpc failed; http 50[23]\b", "unavailable"),
    (_GIT_URL + r"the requested url returned error: 50[23]\b", "unavailable"),
    (r"(?:you are )?not logged in(?:to)?\b", "unauthenticated"),
    (r"authentication (?:required|failed)\b", "unauthenticated"),
    (r"401 unauthorized\b", "unauthenticated"),
    (r"permission denied\b", "permission_denied"),
    (r"403 forbidden\b", "permission_denied"),
)

# The providers' phrases too: a script that died on an SDK error says what the SDK said.
_PHRASES = PhraseTable((*_TOOL_PHRASES, *MESSAGE_PHRASES))


def classify_stderr(tail: str, *, source: str | None = None) -> ErrorDetail | None:
    """The detail of the last line of `tail` that opens (after a tool's prefixes) with a
    phrase we know; None when no line does."""
    for raw in reversed(tail.splitlines()[-_MAX_LINES:]):
        line = clip(raw.strip(), _MAX_LINE)
        if not line:
            continue
        # A pattern as a string: `re` compiles it on first use and keeps it.
        reason = re.sub(_PREFIX, "", line, count=1, flags=re.IGNORECASE)
        answer = status_line(reason)
        if answer is not None:
            return from_http(answer[0], body=answer[1], source=source)
        code = _PHRASES.code(reason)
        if code is not None:
            return unvalidated(code, clean_text(line), source=source)
    return None


# A tool's usage text and its pointers to help: not what went wrong.
_USAGE = r"^[ \t]*usage:"
_HELP_POINTER = (
    r"^[ \t]*(?:\(?(?:try|see|run|use|type)\b|for more information\b).{0,120}"
    r"(?:--help|\s-h\b|\bhelp\b|\bman\b)"
)


def failure_line(tail: str) -> str:
    """The line of a failed process's stderr that says what went wrong, walking up from the
    end: not blank, not a pointer to help, not the tool's usage text. Usage text is a `usage:`
    line and, below it, the indented lines and the headings over them (git's option groups);
    a line flush left with nothing indented under it is the tool's own again (argparse's
    `prog: error: ...` after its usage). The usage line itself when nothing else is left; ""
    for no text."""
    lines = [clip(raw.rstrip(), _MAX_LINE) for raw in tail.splitlines()[-_MAX_LINES:]]
    usage = [i for i, line in enumerate(lines) if re.match(_USAGE, line, re.IGNORECASE)]
    first_usage = usage[0] if usage else len(lines)
    indented_below = False  # the next non-blank line down is indented
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if not line.strip():
            continue
        indented = line[:1] in (" ", "\t")
        in_usage = index >= first_usage and (indented or indented_below or index in usage)
        indented_below = indented
        if not in_usage and not re.match(_HELP_POINTER, line, re.IGNORECASE):
            return line.strip()
    return lines[usage[-1]].strip() if usage else ""


# --- a process that talks to an LLM API died: its output, read as that API's failure --------

# An HTTP status with its reason phrase, or after "HTTP" / "status", at a word boundary
# anywhere in a line ("Request failed: 429 Too Many Requests", "failed with status 503"). A
# bare number never counts ("foo.go:429", "took 503 ms").
_STATUS_IN_LINE = (
    r"(?<![\w.])(?:([45]\d\d) (?:too many requests|service unavailable|bad gateway|"
    r"gateway timeout|internal server error|unauthorized|forbidden|not found|bad request|"
    r"payment required|request timeout|payload too large|unprocessable entity|overloaded)"
    r"|(?:http|status(?: code)?)[ :]+([45]\d\d))\b"
)
# An AI CLI's own report: "API Error: 429 {body}", "API Error: Request rejected (429) ...".
_API_ERROR_STATUS = r"(?<![\w.])api error: (?:([45]\d\d)\b[ :-]*(.*)|[^(]{0,80}\(([45]\d\d)\))"
_PROVIDER_PHRASES = PhraseTable(MESSAGE_PHRASES)


def provider_failure_in(
    text: str, *, source: str, table: PhraseTable | None = None
) -> ErrorDetail | None:
    """The LLM API failure the last telling line of `text` names, for a process whose only
    peer is that API (an AI CLI): `table`'s own sentences (the CLI's), then the providers'
    messages, an SDK's `Error code: NNN` line, then an HTTP status; each found at a word
    boundary anywhere in the line. None when no line names one."""
    for raw in reversed(text.splitlines()[-_MAX_LINES:]):
        line = clip(raw.strip(), _MAX_LINE)
        if not line:
            continue
        code = table.in_line(line) if table is not None else None
        if code is None:
            code = _PROVIDER_PHRASES.in_line(line)
        if code is not None:
            return unvalidated(code, clean_text(line), source=source)
        answer = status_line(re.sub(_PREFIX, "", line, count=1, flags=re.IGNORECASE))
        if answer is not None:
            return from_http(answer[0], body=answer[1], source=source)
        found = _status_in(line, source)
        if found is not None:
            return found
    return None


def _status_in(line: str, source: str) -> ErrorDetail | None:
    """The HTTP status a line reports (and the body that follows an `API Error: NNN`)."""
    reported = re.search(_API_ERROR_STATUS, line, re.IGNORECASE)
    if reported is not None and reported.group(1):
        found = from_http(int(reported.group(1)), body=reported.group(2) or None, source=source)
    elif reported is not None:
        found = from_http(int(reported.group(3)), source=source)
    else:
        status = re.search(_STATUS_IN_LINE, line, re.IGNORECASE)
        if status is None:
            return None
        found = from_http(int(status.group(1) or status.group(2)), source=source)
    return copy_with(found, message=clean_text(line))

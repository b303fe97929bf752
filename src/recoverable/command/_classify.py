"""`recoverable classify`: an error on stdin (JSON, an HTTP answer, or text) -> its detail."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from .._core.detail import ErrorDetail, PayloadError

__all__ = ["classify_input", "cmd_classify"]


def classify_input(text: str) -> ErrorDetail:
    """Classify what a user pipes in: a detail payload, an HTTP answer, an error body, or text.

    JSON forms: an ErrorDetail payload (`code` + `message`); `{"status", "headers", "body",
    "source"}`; or a provider error body (`{"error": {...}}`). Anything else is read as text,
    as `exec` and `from_process` read a failed tool's stderr (the last line that opens, after a
    tool's prefixes, with a phrase: one phrase table for one text), then as an error's text.
    """
    from .._classify import classify

    stripped = text.strip()
    data = _json_object(stripped)
    if data is None:
        return _text_input(stripped)
    if isinstance(data.get("code"), str) and isinstance(data.get("message"), str):
        try:
            return ErrorDetail.from_dict(data)
        except PayloadError:
            pass
    return _http_input(data) or classify(stripped)


def _text_input(text: str) -> ErrorDetail:
    from .._classify import classify
    from .._classify.stderr import classify_stderr

    return classify_stderr(text) or classify(text)


def _json_object(text: str) -> Mapping[str, Any] | None:
    """The JSON object `text` holds, or None (not JSON, not an object, or nested past what
    the parser can take)."""
    if text[:1] != "{":
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, Mapping) else None


def _http_input(data: Mapping[str, Any]) -> ErrorDetail | None:
    """`{"status", "headers", "body", "source"}` or a provider's error body, classified."""
    from .._classify import from_http

    source = data.get("source") if isinstance(data.get("source"), str) else None
    status = data.get("status")
    if isinstance(status, int) and not isinstance(status, bool):
        return from_http(status, data.get("headers"), data.get("body"), source=source)
    error = data.get("error")
    if isinstance(error, Mapping):
        code = error.get("code")  # Google bodies carry the HTTP status here
        http_status = code if isinstance(code, int) and not isinstance(code, bool) else None
        return from_http(http_status, None, data, source=source)
    return None


_MAX_INPUT = 4 * 1024 * 1024  # what `classify` reads of stdin: far more than any error


def cmd_classify(args: argparse.Namespace, out: TextIO) -> int:

    if sys.stdin.isatty():  # nothing piped: say what is read before waiting for it
        print(
            "recoverable classify: reading an error from stdin (JSON or text; end with "
            "Ctrl-D); e.g. echo 'rate limit exceeded' | recoverable classify",
            file=sys.stderr,
        )
    # Bytes, not text: invalid UTF-8 becomes replacement characters, never a traceback.
    text = sys.stdin.buffer.read(_MAX_INPUT).decode("utf-8", "replace")
    if not text.strip():
        print(
            "recoverable classify: error: nothing to classify on stdin (see: recoverable "
            "classify --help)",
            file=sys.stderr,
        )
        return 2
    detail = _text_input(text.strip()) if args.text else classify_input(text)
    if args.envelope:  # as the failed tool would answer: the envelope and its exit code
        from .._core.envelope import Envelope

        envelope = Envelope.failure(detail)
        print(envelope.to_json(indent=2), file=out)
        return envelope.exit_code
    print(json.dumps(detail.to_dict(), indent=2), file=out)
    return 0

"""An error body, bounded: as text, and as JSON data."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


MAX_BODY_CHARS = 64_000
"""What of an error body is read as text (four times that as bytes for JSON)."""


def body_text(body: object) -> str | None:
    if isinstance(body, bytes):
        return body[:MAX_BODY_CHARS].decode("utf-8", "replace")
    return body if isinstance(body, str) else None


def parse_body(body: object) -> object:
    """A JSON body as Python data; a mapping is returned as is; anything else unchanged."""
    if isinstance(body, (bytes, bytearray)):
        body = bytes(body[: MAX_BODY_CHARS * 4]).decode("utf-8", "replace")
    if isinstance(body, str):
        text = body.strip()
        if text[:1] in ("{", "["):
            import json  # only bodies given as text need it

            try:
                return json.loads(text)
            except (ValueError, RecursionError):  # RecursionError: "[" * 100000
                return body
    return body

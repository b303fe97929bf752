"""A CLI's stdout lines as JSON: the standard parser's scanner, the `fast` extra's decoder
(looked up once a process has read a megabyte), and the forgiving reader of one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .._core.config import CONFIG

__all__ = [
    "ACCELERATE_AFTER_BYTES",
    "STANDARD_SCAN",
    "accelerator_pending",
    "fast_decoder",
    "json_accelerator",
    "read_json",
]

_DECODER = json.JSONDecoder()
STANDARD_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
"""The standard parser's scanner: `(text, index) -> (value, end)`, the one value at `index`
(raises on anything else). `raw_decode` is this call behind a Python frame."""


def fast_decoder() -> Callable[[str | bytes], Any] | None:
    """msgspec's JSON decoder when the `fast` extra is installed (about three times as fast
    as the standard one), else None."""
    try:
        from msgspec.json import Decoder
    except ImportError:
        return None
    return Decoder().decode


ACCELERATE_AFTER_BYTES = 1 << 20
"""The stdout lines (their bytes) read with the standard parser before the accelerator is
looked up: importing msgspec costs ~12 ms, what it saves on about 1 MB, so a short run
(`recoverable run "Say hello"`) never pays for it and a process reading a long stream switches
once, early."""


def json_accelerator(
    line_bytes: int = ACCELERATE_AFTER_BYTES,
) -> Callable[[str | bytes], Any] | None:
    """The accelerator (str or UTF-8 bytes to Python data; raises on anything it refuses), or
    None. It reads what it accepts exactly as the standard parser does and refuses the rest
    (NaN and Infinity, lone surrogates, numbers out of range, nesting too deep, trailing
    garbage, invalid UTF-8): whatever it refuses, the standard parser decides.

    `line_bytes`: the size of the line about to be read. Until ACCELERATE_AFTER_BYTES have been
    asked about, None (the standard parser reads them); then it is looked up, once for the
    process (`CONFIG.json_decoder`). Called without a size, it is looked up at once."""
    found = CONFIG.json_decoder
    if found is True:
        if CONFIG.add_standard_json_bytes(line_bytes) < ACCELERATE_AFTER_BYTES:
            return None
        found = fast_decoder()
        CONFIG.set_json_decoder(found)
    return found


def accelerator_pending() -> bool:
    """Whether the accelerator is still to be looked up (`json_accelerator`'s budget)."""
    return CONFIG.json_decoder is True


def read_json(line: str) -> dict[str, Any] | None:
    """The JSON object on a line, or None when the line is not one (never raises)."""
    text = line.strip()
    if text[:1] != "{":
        return None
    fast = CONFIG.json_decoder
    if fast is True:
        fast = json_accelerator(len(text))
    if fast is not None:
        try:
            data = fast(text)
        except Exception:  # refused: the standard parser decides below
            pass
        else:
            return data if type(data) is dict else None
    try:
        # raw_decode, not json.loads: the same parser without its per-call wrapper and
        # whitespace regexes (a quarter of the time on short lines).
        data, end = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        # ValueError: not JSON, or an integer past Python's 4300-digit limit;
        # RecursionError: nested deeper than the parser recurses (`{"a":[[[...`).
        return None
    if end != len(text) or not isinstance(data, dict):
        return None  # trailing garbage, or not an object
    return data

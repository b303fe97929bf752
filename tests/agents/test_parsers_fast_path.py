"""The stdout reader's fast path (a line's bytes straight to its JSON object, then to the
handler of its `type`) changes nothing but the speed: with the accelerator and with the
standard parser alone, every line reads as the general path reads it (its text to the CLI
module's `parse_line`), on captured lines and on generated ones: arbitrary JSON, invalid
UTF-8, deep nesting, whitespace around an object, values that are not the whole line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recoverable._core.config import CONFIG
from recoverable._core.events import Event
from recoverable.agents import _line_json
from recoverable.agents._parsing import bad_line
from recoverable.agents._replay import NO_LIMIT, line_reader

from .test_parsers import MODULES
from .test_parsers_accelerated import _ODD_LINES
from .test_parsers_properties import CAPTURED, json_values

CLIS = sorted(MODULES)
CAP = 4096


@contextmanager
def _decoder(fast: bool) -> Iterator[None]:
    saved = CONFIG.json_decoder
    CONFIG.set_json_decoder(_line_json.fast_decoder() if fast else None)
    try:
        yield
    finally:
        CONFIG.set_json_decoder(saved)


def _general(cli: str, lines: list[bytes | int]) -> list[Event]:
    """What each line's text makes through `parse_line` alone (no fast path)."""
    module = MODULES[cli]
    state = module.new_state()
    events: list[Event] = []
    for line in lines:
        if isinstance(line, int):
            events.append(bad_line(cli, "", f"line of {line} bytes over the {CAP}-byte cap"))
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            events.append(bad_line(cli, line.decode("utf-8", "replace"), "invalid UTF-8"))
            continue
        if text and not text.isspace():
            events += module.parse_line(text, state)
    return events


def _read(cli: str, lines: list[bytes | int]) -> list[Event]:
    module = MODULES[cli]
    events, stopped = line_reader(module, module.new_state(), CAP)(lines, NO_LIMIT)
    assert not stopped
    return events


def _same(cli: str, lines: list[bytes | int]) -> None:
    for fast in (True, False):
        with _decoder(fast):
            assert _read(cli, lines) == _general(cli, lines), "fast" if fast else "standard"


@pytest.mark.parametrize("cli", CLIS)
def test_captured_and_odd_lines_read_as_the_general_path_reads_them(cli: str) -> None:
    _same(cli, [*CAPTURED[cli], *_ODD_LINES, 5000, b"", b"   ", b"\xff{", b"{\xff}"])


_OBJECTS = st.dictionaries(
    st.sampled_from(["type", "content", "item", "event", "message", "text", "id"]), json_values
)
_TYPED = st.builds(
    lambda kind, rest: {"type": kind, **rest},
    st.sampled_from(["message", "item.completed", "assistant", "result", "init", "x", ""]),
    _OBJECTS,
)


def _dumped(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


_LINES = st.one_of(
    json_values.map(_dumped),
    _OBJECTS.map(_dumped),
    _TYPED.map(_dumped),
    _TYPED.map(lambda value: json.dumps(value, indent=1).encode()),  # one object, many lines
    st.tuples(_TYPED.map(_dumped), st.sampled_from([b" ", b"\t", b"\r", b"\x0c", b"x", b"{}"])).map(
        lambda pair: pair[0] + pair[1]
    ),
    st.tuples(st.sampled_from([b" ", b"\t", b"\x0c"]), _TYPED.map(_dumped)).map(b"".join),
    st.integers(1, 40).map(
        lambda depth: b'{"type":"x","a":' + b"[" * depth * 100 + b"]" * depth * 100 + b"}"
    ),
    st.sampled_from(_ODD_LINES),
    st.binary(max_size=40),
    st.binary(max_size=40).map(lambda junk: b'{"type":"message","content":"' + junk + b'"}'),
    st.integers(CAP + 1, 10**7),  # an oversize line, as the splitter reports it
)


@settings(max_examples=200, deadline=None, database=None)
@given(st.sampled_from(CLIS), st.lists(_LINES, max_size=10))
def test_generated_lines_read_as_the_general_path_reads_them(
    cli: str, lines: list[bytes | int]
) -> None:
    # The splitter's lines never hold a line end: a generated one is cut as it would cut it.
    split: list[bytes | int] = []
    for line in lines:
        split += line.split(b"\n") if isinstance(line, bytes) else [line]
    _same(cli, split)

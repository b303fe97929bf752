"""The JSON accelerator (msgspec, the `fast` extra) changes nothing but the speed.

Every captured stream of the three CLIs, the stream the benchmarks time, and generated lines
(hostile values in every field: NaN, huge numbers, lone surrogates, deep nesting, invalid
UTF-8, trailing garbage, whitespace JSON does not allow) give the same events and the same
result with the accelerator and with the standard parser alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recoverable import agents
from recoverable._core.config import CONFIG
from recoverable._core.events import Done, Event
from recoverable.agents import _line_json
from recoverable.agents._options import RunOptions
from recoverable.agents._process import RunContext

from .test_parsers import DATA, MODULES
from .test_parsers_properties import CAPTURED, json_values

CLIS = sorted(MODULES)


@pytest.fixture(autouse=True)
def _accelerated() -> Iterator[None]:
    """The accelerator in use from the first line (outside tests: after its byte budget)."""
    saved = CONFIG.json_decoder
    CONFIG.set_json_decoder(_line_json.fast_decoder())
    assert CONFIG.json_decoder is not None  # the `test` extra installs msgspec
    try:
        yield
    finally:
        CONFIG.set_json_decoder(saved)


@contextmanager
def _standard_parser_only() -> Iterator[None]:
    saved = CONFIG.json_decoder
    CONFIG.set_json_decoder(None)
    try:
        yield
    finally:
        CONFIG.set_json_decoder(saved)


def _both(cli: str, stdout: bytes) -> tuple[agents.RunResult, agents.RunResult]:
    fast = agents.replay(cli, stdout, exit_code=0)
    with _standard_parser_only():
        standard = agents.replay(cli, stdout, exit_code=0)
    return fast, standard


def _stream(cli: str, stdout: bytes) -> list[Event]:
    context = RunContext(MODULES[cli], RunOptions(), lambda: 0.0)
    events = []
    for start in range(0, len(stdout), 4096):
        events += context.chunk_events(stdout[start : start + 4096])
    events += context.chunk_events(b"")
    events += context.end(0)
    return [event for event in events if not isinstance(event, Done)]


def test_the_accelerator_is_installed_where_the_tests_run() -> None:
    assert _line_json.json_accelerator() is not None  # the `test` extra installs msgspec


@pytest.mark.parametrize("cli", CLIS)
def test_every_captured_stream_reads_the_same(cli: str) -> None:
    for path in sorted((DATA / cli).glob("*.stdout")):
        stdout = path.read_bytes()
        fast, standard = _both(cli, stdout)
        assert fast.events == standard.events, path.name
        assert fast.error == standard.error, path.name
        assert _stream(cli, stdout) == _standard_stream(cli, stdout), path.name


def _standard_stream(cli: str, stdout: bytes) -> list[Event]:
    with _standard_parser_only():
        return _stream(cli, stdout)


_ODD_LINES = [
    b'{"type": "result", "n": NaN}',
    b'{"type": "result", "n": Infinity, "m": -Infinity}',
    b'{"type": "result", "n": 1' + b"0" * 400 + b"}",
    b'{"type": "result", "n": 1' + b"0" * 5000 + b"}",
    b'{"type": "result", "n": 1e400}',
    b'{"type": "message", "content": "\\ud800"}',
    b'{"type": "message", "content": "\xff\xfe"}',
    b'{"type": "message", "content": "\xed\xa0\x80"}',
    b'{"type": "message"} trailing',
    b'{"type": "message"}\x0c',
    b'{"type": "message"}\xc2\xa0',
    b'{"type": "message", "content": "a\x00b"}',
    b'{"type": "x", "a": ' + b"[" * 3000 + b"]" * 3000 + b"}",
    b'{"type": "x", "type": "message", "content": "dup"}',
    b"{}",
    b'{"type": 5}',
    b"[1, 2]",
    b' {"type": "message"}',
    b'{"type": "message"}\r',
]


@pytest.mark.parametrize("cli", CLIS)
def test_odd_lines_read_the_same(cli: str) -> None:
    stdout = b"\n".join(_ODD_LINES + CAPTURED[cli][:5]) + b"\n"
    fast, standard = _both(cli, stdout)
    assert fast.events == standard.events
    assert _stream(cli, stdout) == _standard_stream(cli, stdout)


lines = st.one_of(
    json_values.map(lambda value: json.dumps(value).encode("utf-8", "surrogatepass")),
    st.dictionaries(st.sampled_from(["type", "content", "item", "event"]), json_values).map(
        lambda value: json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    ),
    st.sampled_from(_ODD_LINES),
    st.binary(max_size=40),
)


@settings(max_examples=150, deadline=None, database=None)
@given(st.sampled_from(CLIS), st.lists(lines, max_size=8))
def test_generated_lines_read_the_same(cli: str, generated: list[bytes]) -> None:
    stdout = b"\n".join(generated) + b"\n"
    fast, standard = _both(cli, stdout)
    assert fast.events == standard.events
    assert fast.error == standard.error


def test_the_accelerator_is_looked_up_once_a_process_has_read_its_budget() -> None:
    # A fresh process: the standard parser reads the first ACCELERATE_AFTER_BYTES of JSON
    # lines (msgspec not even imported), then the accelerator is looked up, once, for the
    # process (CONFIG holds it).
    code = (
        "import sys\n"
        "from recoverable import agents\n"
        "from recoverable._core.config import CONFIG\n"
        "from recoverable.agents._line_json import ACCELERATE_AFTER_BYTES\n"
        'line = b\'{"type":"assistant","message":{"content":"\' + b\'a\' * 900 + b\'"}}\'\n'
        "agents.replay('claude', line + b'\\n')\n"
        "counted = CONFIG.json_standard_bytes == len(line)\n"
        "before = (CONFIG.json_decoder, counted, 'msgspec' in sys.modules)\n"
        "count = ACCELERATE_AFTER_BYTES // len(line) + 1\n"
        "agents.replay('claude', (line + b'\\n') * count)\n"
        "decoder = CONFIG.json_decoder\n"
        "agents.replay('claude', line + b'\\n')\n"
        "print(before, callable(decoder), CONFIG.json_decoder is decoder, 'msgspec' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(True,", "True,", "False)", "True", "True", "True"]

"""Properties of the three CLI parsers and `replay`, checked on generated output (hypothesis):

(a) whatever bytes a CLI prints, with whatever stderr, exit code or signal, `parse_line`,
    `outcome` and `replay` never raise, a run always ends with `Done`, and what the result
    keeps is strict JSON with finite, bounded numbers;
(b) no well-formed line is lost: among junk, every non-blank line yields events of its own,
    and a JSON object line is never reported unreadable (`replay` yields the same events);
(c) a JSON object of every `type` a parser knows, with any values in its fields, never raises.

Bounded to run in a few seconds; no example database is written.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from recoverable import ErrorDetail
from recoverable._core.events import Done, Error, Event, RunResult
from recoverable._core.lines import BoundedLines
from recoverable._core.untrusted import MAX_HINT_MS
from recoverable.agents import _gemini
from recoverable.agents._options import DEFAULT_MAX_LINE_BYTES
from recoverable.agents._parsing import ParseState, as_dict
from recoverable.agents._replay import EventLog, ProcessEnd, decode_line, finish, replay

from .test_parsers import DATA, LINES, MODULES

CLIS = sorted(MODULES)

# Generating nested JSON is what takes the time here (the parsers take a few percent).
PROPERTY = settings(
    max_examples=60,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],  # not `explain`: slow on these
)

# The `type` of every line each parser maps.
TYPES = {
    "claude": ["system", "assistant", "user", "stream_event", "result"],
    "codex": ["thread.started", "item.started", "item.updated", "item.completed",
              "turn.completed", "turn.failed", "error"],
    "gemini": ["init", "message", "tool_use", "tool_result", "error", "result"],
}  # fmt: skip
# Field names the parsers read, at any depth: generated objects use them, so values land
# where the parsers look.
KEYS = [
    "type", "subtype", "session_id", "thread_id", "message", "content", "id", "text",
    "thinking", "name", "input", "tool_use_id", "is_error", "event", "delta",
    "parent_tool_use_id", "result", "errors", "total_cost_usd", "usage", "api_error_status",
    "terminal_reason", "error", "error_status", "attempt", "max_retries", "retry_delay_ms",
    "item", "status", "exit_code", "aggregated_output", "server", "tool", "arguments",
    "command", "changes", "query", "role", "tool_id", "tool_name", "parameters", "output",
    "severity", "stats", "code", "details", "@type", "retryDelay", "reason",
]  # fmt: skip
# Values the parsers branch on, and sentences their tables read.
WORDS = [
    "success", "api_retry", "init", "text", "thinking", "tool_use", "tool_result",
    "content_block_delta", "text_delta", "thinking_delta", "message_start", "message_stop",
    "assistant", "user", "completed", "failed", "command_execution", "mcp_tool_call",
    "file_change", "web_search", "agent_message", "reasoning", "error", "warning",
    "rate_limit", "overloaded", "billing_error", "server_error", "error_max_turns", "max_turns",
    "aborted_streaming", "FatalAuthenticationError", "unknown",
    "type.googleapis.com/google.rpc.RetryInfo", "999999999999s", "1.5s",
    "Not logged in", "API Error: Request timed out", "Prompt is too long",
    "Reconnecting... 1/5 (stream disconnected before completion)",
    "Reconnecting... 99999999999999999999/5 (idle timeout waiting for SSE)",
    "unexpected status 429 Too Many Requests: slow down, url: http://x/v1, request id: r1",
    "exceeded retry limit, last status: 503 Service Unavailable",
    "[API Error: You exceeded your current quota. Please retry in 1s.]",
    "[API Error: You exceeded your current quota. Please retry in 9999999999999999999999s.]",
    '[API Error: {"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}]',
    "[API Error: {" + "[" * 2000 + "]",
    "[" * 2000,
]  # fmt: skip

numbers = (
    st.integers(min_value=-(10**400), max_value=10**400)
    | st.integers(min_value=-2, max_value=600)
    | st.floats()  # NaN and the infinities too
)
texts = st.text(st.characters(exclude_categories=()), max_size=12)  # lone surrogates too
scalars = st.none() | st.booleans() | numbers | texts | st.sampled_from(WORDS)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | texts, inner, max_size=4)
    ),
    max_leaves=10,
)


def _captured(cli: str) -> list[bytes]:
    lines = []
    for path in sorted((DATA / cli).glob("*.stdout")):
        lines += [line for line in path.read_bytes().splitlines() if line.strip()]
    return lines


CAPTURED = {cli: _captured(cli) for cli in CLIS}

# Values that broke a parser, or could: in place of any field of a real line.
HOSTILE_VALUES = st.sampled_from(
    [
        math.inf, -math.inf, math.nan, 10**400, -(10**400), 2**64, -1, 0, 0.0, 1.5, True, False,
        None, "", "3", "\ud800", [], {}, [[[]]], {"type": "text"}, "[" * 2000, "9" * 400,
    ]
)  # fmt: skip


def _shape(data: dict[str, Any]) -> tuple[object, ...]:
    """What tells two real lines' handling apart: their type and the kinds inside."""
    event, item = as_dict(data.get("event")), as_dict(data.get("item"))
    return tuple(
        str(value)
        for value in (
            data.get("type"), data.get("subtype"), data.get("role"), data.get("status"),
            data.get("is_error"), event.get("type"), as_dict(event.get("delta")).get("type"),
            item.get("type"), "error" in data,
        )
    )  # fmt: skip


def _templates(cli: str) -> list[tuple[dict[str, Any], list[tuple[Any, ...]]]]:
    """One real line of each shape (captured runs and the line table), with its key paths."""
    lines = [json.loads(line) for line in CAPTURED[cli]]
    lines += [json.loads(line) for name, line, _ in LINES if name == cli]
    by_shape = {_shape(data): data for data in lines}
    return [(data, _paths(data)) for data in by_shape.values()]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path of a JSON value, 5 levels deep (the first 3 items of a list)."""
    if len(prefix) > 4 or not isinstance(value, (dict, list)):
        return []
    items = value.items() if isinstance(value, dict) else enumerate(value[:3])
    found = []
    for key, item in items:
        found += [(*prefix, key), *_paths(item, (*prefix, key))]
    return found


def _mutated(template: dict[str, Any], changes: list[tuple[tuple[Any, ...], Any]]) -> Any:
    """`template` with each path's value replaced (a path whose parent is gone is skipped)."""
    data = copy.deepcopy(template)
    for path, value in changes:
        parent: Any = data
        for key in path[:-1]:
            parent = _child(parent, key)
        if isinstance(parent, dict) or _child(parent, path[-1]) is not None:
            parent[path[-1]] = copy.deepcopy(value)  # a sampled {} must not be shared
    return data


def _child(node: Any, key: Any) -> Any:
    if isinstance(node, dict):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        return node[key]
    return None


# Per field: kept (half the time), a hostile value, or any JSON value.
CHANGE = st.one_of(st.just(()), st.just(()), st.tuples(HOSTILE_VALUES), st.tuples(json_values))


def mutated_lines(cli: str) -> st.SearchStrategy[dict[str, Any]]:
    """A real line of each shape, each field either kept or replaced by a hostile value."""

    def mutate(pair: tuple[dict[str, Any], list[tuple[Any, ...]]]) -> st.SearchStrategy[Any]:
        template, paths = pair
        changes = st.tuples(*[CHANGE for _ in paths]).map(
            lambda chosen: [(path, new[0]) for path, new in zip(paths, chosen, strict=True) if new]
        )
        return changes.map(lambda picked: _mutated(template, picked))

    return st.sampled_from(TEMPLATES[cli]).flatmap(mutate)


def typed_objects(cli: str) -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects of a `type` the parser knows, any values in the fields it reads: real
    lines with hostile fields, and objects made up from the names the parsers read."""
    made_up = st.builds(
        lambda kind, fields: {**fields, "type": kind},
        st.sampled_from(TYPES[cli]),
        st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6),
    )
    return mutated_lines(cli) | made_up


TEMPLATES = {cli: _templates(cli) for cli in CLIS}


def json_lines(cli: str) -> st.SearchStrategy[bytes]:
    """Well-formed JSON object lines: the real captured ones, typed ones, any objects."""
    objects = typed_objects(cli) | st.dictionaries(
        st.sampled_from(KEYS) | texts, json_values, max_size=6
    )
    return st.sampled_from(CAPTURED[cli]) | objects.map(lambda data: json.dumps(data).encode())


def junk_lines(cli: str) -> st.SearchStrategy[bytes]:
    """Lines that are not JSON objects: any bytes, text, or a real line cut short."""
    cut = st.tuples(st.sampled_from(CAPTURED[cli]), st.integers(min_value=1)).map(
        lambda pair: pair[0][: pair[1] % len(pair[0])]
    )
    return (
        st.binary(max_size=60) | texts.map(lambda text: text.encode("utf-8", "surrogatepass")) | cut
    )


def streams(cli: str) -> st.SearchStrategy[bytes]:
    """A whole stdout: junk and JSON lines, and some raw bytes (CRs and newlines too)."""
    lines = st.lists(junk_lines(cli) | json_lines(cli), max_size=10)
    return st.one_of(st.binary(max_size=400), lines.map(b"\n".join))


# Built once: a strategy made in each example is validated again each time.
TYPED = {cli: typed_objects(cli) for cli in CLIS}
JSON_LINES = {cli: json_lines(cli) for cli in CLIS}
JUNK_LINES = {cli: junk_lines(cli) for cli in CLIS}
STREAMS = {cli: streams(cli) for cli in CLIS}

stderrs = st.text(max_size=80) | st.sampled_from(
    [
        "Invalid API key \u00b7 Please run /login\n",
        "error: unknown option '--x'\n",
        'Error when talking to Gemini API _ApiError: {"error":{"code":' + "9" * 400 + "}}\n",
        "Attempt 2 failed with status 503. Max attempts reached\n",
    ]
)
exit_codes = st.none() | st.integers(min_value=-300, max_value=300)
signals = st.none() | st.integers(min_value=1, max_value=64)


# --- what every result and event satisfies ---------------------------------------------------


def _strict_json(data: object) -> None:
    """JSON with no NaN or infinity, as UTF-8."""
    json.dumps(data, allow_nan=False).encode("utf-8")


def _check_detail(detail: ErrorDetail, cli: str) -> None:
    assert detail.source == cli
    _strict_json(detail.to_dict())
    detail.message.encode("utf-8")  # valid Unicode: no lone surrogate in error text
    hint = detail.retry_after_ms
    assert hint is None or 0 <= hint <= MAX_HINT_MS


def _check_result(result: RunResult, cli: str) -> None:
    assert isinstance(result, RunResult)
    assert result.success == (result.error is None)
    _strict_json(result.to_dict())
    assert result.cost_usd is None or math.isfinite(result.cost_usd)
    if result.error is not None:
        _check_detail(result.error, cli)
        severe = [e for e in result.events if isinstance(e, Error) and e.severity == "error"]
        assert any(event.detail is result.error for event in severe)  # in the stream
    for event in result.events:
        if isinstance(event, Error):
            _check_detail(event.detail, cli)


def _run(cli: str, stdout: bytes, end: ProcessEnd) -> tuple[RunResult, list[Event]]:
    """What a runner does with `stdout`: BoundedLines, decode_line, finish."""
    module = MODULES[cli]
    state = module.new_state()
    events: list[Event] = []
    lines = BoundedLines(DEFAULT_MAX_LINE_BYTES, bytes)
    for line in [*lines.feed(stdout), *lines.close()]:
        events.extend(decode_line(line, module, state, DEFAULT_MAX_LINE_BYTES))
    return _finished(module, state, events, end), events


def _finished(module: Any, state: Any, events: list[Event], end: ProcessEnd) -> RunResult:
    """`finish` as a runner calls it (every event logged); its closing events are appended
    to `events`, and the result is the last one's."""
    log = EventLog()
    for event in events:
        log.add(event)
    closing = finish(module, state, log, end)
    events.extend(closing)
    done = closing[-1]
    assert isinstance(done, Done)
    return done.result


# --- (a) arbitrary output never raises; a run ends with Done -----------------------------------


@pytest.mark.parametrize("cli", CLIS)
@PROPERTY
@given(data=st.data())
def test_any_output_ends_in_a_result(cli: str, data: st.DataObject) -> None:
    stdout = data.draw(STREAMS[cli], label="stdout")
    stderr, exit_code = data.draw(stderrs, label="stderr"), data.draw(exit_codes, label="exit")
    signal = data.draw(signals, label="signal") if exit_code is None else None
    result, events = _run(cli, stdout, ProcessEnd(exit_code, signal, stderr))
    assert isinstance(events[-1], Done)
    assert events[-1].result is result
    assert result.events == tuple(events[:-1])
    _check_result(result, cli)
    replayed = replay(cli, stdout, stderr, exit_code, signal)
    _check_result(replayed, cli)
    assert [type(e) for e in replayed.events] == [type(e) for e in result.events]


@pytest.mark.parametrize("cli", CLIS)
@PROPERTY
@given(lines=st.lists(st.text(st.characters(exclude_categories=())), max_size=8))
def test_parse_line_takes_any_text(cli: str, lines: list[str]) -> None:
    module = MODULES[cli]
    state = module.new_state()
    for line in lines:
        for event in module.parse_line(line, state):
            assert isinstance(event, Event)
            if isinstance(event, Error):
                _check_detail(event.detail, cli)
    _check_detail(module.outcome(state, 1, "\n".join(lines)), cli)


# --- (b) no well-formed line is lost -----------------------------------------------------------


def _unreadable(event: Event) -> bool:
    """The event of a line that could not be read (not of a field inside a read one)."""
    return isinstance(event, Error) and "bytes" in event.detail.details


def _a_repeat_held_back(cli: str, line: bytes, state: ParseState) -> bool:
    """A gemini answer chunk that repeats its answer's start: held back (maybe a retried
    stream), sent with a later line or dropped as the retry's copy. Nothing else yields
    nothing."""
    data = json.loads(line)
    content = data.get("content")
    return (
        cli == "gemini"
        and (data.get("type"), data.get("role")) == ("message", "assistant")
        and isinstance(state, _gemini.GeminiState)
        and content in state.segment
    )


def _json_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line.decode("utf-8")), dict)
    except ValueError:  # UnicodeDecodeError too
        return False


def _blank(line: bytes) -> bool:
    try:
        return not line.decode("utf-8").strip()
    except UnicodeDecodeError:
        return False


@pytest.mark.parametrize("cli", CLIS)
@PROPERTY
@given(data=st.data())
def test_every_line_yields_its_own_events(cli: str, data: st.DataObject) -> None:
    pieces = data.draw(st.lists(JUNK_LINES[cli] | JSON_LINES[cli], max_size=10), label="lines")
    lines = [piece.replace(b"\n", b"") for piece in pieces]  # one piece, one line
    module = MODULES[cli]
    state = module.new_state()
    per_line: list[Event] = []
    objects = yielding = 0
    for line in lines:
        events = decode_line(line.rstrip(b"\r"), module, state, DEFAULT_MAX_LINE_BYTES)
        per_line += events
        if _json_object(line):
            objects += 1
            assert not any(_unreadable(event) for event in events), line
            yielding += bool(events)
            assert events or _a_repeat_held_back(cli, line, state), line
        elif not _blank(line):
            assert events, line  # junk too: Raw, or an unreadable-line warning
    assert yielding <= objects
    result = replay(cli, b"\n".join(lines))
    assert [type(e) for e in result.events[: len(per_line)]] == [type(e) for e in per_line]
    assert len(result.events) - len(per_line) <= 1  # the run's own error, when it failed


# --- (c) every known type, any field values ----------------------------------------------------


@pytest.mark.parametrize("cli", CLIS)
@PROPERTY
@given(data=st.data())
def test_known_types_with_any_fields(cli: str, data: st.DataObject) -> None:
    objects = data.draw(st.lists(TYPED[cli], min_size=1, max_size=5), label="objects")
    module = MODULES[cli]
    state = module.new_state()
    events: list[Event] = []
    for obj in objects:
        produced = module.parse_line(json.dumps(obj), state)
        assert produced or cli == "gemini"  # gemini may hold a repeated chunk back
        events += produced
    result = _finished(module, state, events, ProcessEnd(1, None, ""))
    _check_result(result, cli)
    assert state.usage is None or isinstance(state.usage, dict)
    if cli == "claude":
        assert result.cost_usd is None or 0 <= result.cost_usd <= 1_000_000

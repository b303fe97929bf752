"""The three CLI parsers: real captured runs end to end, real lines one by one, broken input.

The captures in tests/data/cli/<cli>/<scenario>.* are the real CLIs (claude 2.1.197, codex
0.171.0, gemini 0.61.0) run against FakeProvider. No process is started here.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import tomllib
from pathlib import Path
from typing import Any

import pytest

import recoverable as rc
from recoverable import ErrorDetail, agents
from recoverable._core.events import (
    Done,
    Error,
    Event,
    Raw,
    RunResult,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolStart,
)
from recoverable.agents import _claude, _codex, _gemini
from recoverable.agents._options import RunOptions
from recoverable.agents._parsing import ParseState
from recoverable.agents._replay import EventLog, ProcessEnd, decode_line, finish, replay

from ..support.cli import TOOL_ARGS

DATA = Path(__file__).parents[1] / "data" / "cli"
MODULES = {"claude": _claude, "codex": _codex, "gemini": _gemini}


def _capture(cli: str, scenario: str) -> tuple[bytes, str, int | None, int | None]:
    meta = json.loads((DATA / cli / f"{scenario}.json").read_text())
    sig = meta["signal"]
    if isinstance(sig, str):  # recorded by name
        sig = signal.Signals[sig].value
    stdout = (DATA / cli / f"{scenario}.stdout").read_bytes()
    stderr = (DATA / cli / f"{scenario}.stderr").read_text()
    return stdout, stderr, meta["exit_code"], sig


def _replay(cli: str, scenario: str) -> RunResult:
    stdout, stderr, exit_code, sig = _capture(cli, scenario)
    return replay(cli, stdout, stderr, exit_code, sig)


def _types(events: tuple[Event, ...] | list[Event]) -> list[str]:
    return [
        f"error:{event.severity}" if isinstance(event, Error) else event.type for event in events
    ]


def summary(event: Event) -> tuple[Any, ...]:
    """An event as a short tuple: what the line tables compare."""
    if isinstance(event, Error):
        return ("error", event.severity, event.detail.code, event.detail.status)
    if isinstance(event, (TextDelta, ThinkingDelta)):
        return (event.type, event.text)
    if isinstance(event, ToolStart):
        return ("tool_start", event.tool_id, event.name, event.input)
    if isinstance(event, ToolEnd):
        return ("tool_end", event.tool_id, event.success, event.output, event.error)
    return (event.type,)


# --- every captured run ------------------------------------------------------------------------

# (success, code, retryable, status) for each capture.
EXPECTED: dict[tuple[str, str], tuple[bool, str | None, bool | None, int | None]] = {
    ("claude", "bad_flags"): (False, "cli_invalid_arguments", False, None),
    ("claude", "context_too_long"): (False, "provider_context_too_long", False, 400),
    ("claude", "cut_stream"): (False, "provider_connection_lost", True, None),
    ("claude", "cut_stream_graceful"): (False, "provider_bad_response", True, None),
    ("claude", "cut_stream_then_ok"): (True, None, None, None),
    ("claude", "drop"): (False, "provider_connection_lost", True, None),
    ("claude", "max_turns"): (False, "run_max_turns", False, None),
    ("claude", "model_not_found"): (False, "provider_model_not_found", False, 404),
    ("claude", "overloaded"): (False, "provider_overloaded", True, 529),
    ("claude", "quota"): (False, "provider_quota_exceeded", False, 400),
    ("claude", "rate_limited"): (False, "provider_rate_limited", True, 429),
    ("claude", "rate_limited_then_ok"): (True, None, None, None),
    ("claude", "server_error"): (False, "provider_server_error", True, 500),
    ("claude", "sigint"): (False, "provider_bad_response", True, None),  # exit 0, no result
    ("claude", "sigterm"): (False, "cli_killed", False, None),  # exit 143
    ("claude", "text"): (True, None, None, None),
    ("claude", "tool"): (True, None, None, None),
    ("claude", "unauthorized"): (False, "provider_auth_failed", False, 401),
    ("claude", "unavailable"): (False, "provider_overloaded", True, 503),
    ("codex", "bad_flags"): (False, "cli_invalid_arguments", False, None),
    ("codex", "context_too_long"): (False, "provider_context_too_long", False, None),
    ("codex", "cut_stream"): (False, "provider_connection_lost", True, None),
    ("codex", "cut_stream_graceful"): (False, "provider_bad_response", True, None),
    ("codex", "cut_stream_then_ok"): (True, None, None, None),
    ("codex", "drop"): (False, "provider_connection_lost", True, None),
    ("codex", "model_not_found"): (False, "provider_model_not_found", False, None),
    ("codex", "overloaded"): (False, "provider_overloaded", True, 529),
    ("codex", "quota"): (False, "provider_quota_exceeded", False, None),
    ("codex", "rate_limited"): (False, "provider_rate_limited", True, 429),
    ("codex", "rate_limited_then_ok"): (True, None, None, None),
    ("codex", "server_error"): (False, "provider_server_error", True, None),  # "high demand"
    ("codex", "sigint"): (False, "cli_crashed", False, None),  # exit 1, no turn.failed
    ("codex", "sigterm"): (False, "cli_killed", False, None),  # died of the signal
    ("codex", "text"): (True, None, None, None),
    ("codex", "tool"): (True, None, None, None),
    ("codex", "unauthorized"): (False, "provider_auth_failed", False, 401),
    ("codex", "unavailable"): (False, "provider_overloaded", True, 503),
    ("gemini", "bad_flags"): (False, "cli_invalid_arguments", False, None),
    ("gemini", "context_too_long"): (False, "provider_context_too_long", False, 400),
    ("gemini", "cut_stream"): (False, "provider_bad_response", True, None),  # exit 0
    ("gemini", "cut_stream_graceful"): (False, "provider_bad_response", True, None),
    ("gemini", "cut_stream_then_ok"): (True, None, None, None),
    ("gemini", "drop"): (False, "provider_connection_lost", True, None),
    ("gemini", "max_turns"): (False, "run_max_turns", False, None),
    ("gemini", "model_not_found"): (False, "provider_model_not_found", False, None),
    ("gemini", "overloaded"): (False, "provider_overloaded", True, 529),
    ("gemini", "quota"): (False, "provider_quota_exceeded", False, None),  # daily quota
    ("gemini", "rate_limited"): (False, "provider_rate_limited", True, None),  # per-minute
    ("gemini", "rate_limited_then_ok"): (True, None, None, None),
    ("gemini", "server_error"): (False, "provider_server_error", True, 500),
    ("gemini", "sigint"): (False, "provider_bad_response", True, None),  # exit 0, no result
    ("gemini", "sigterm"): (False, "provider_bad_response", True, None),  # exit 0, no result
    ("gemini", "text"): (True, None, None, None),
    ("gemini", "tool"): (True, None, None, None),
    ("gemini", "unauthorized"): (False, "provider_auth_failed", False, 400),  # API_KEY_INVALID
    ("gemini", "unavailable"): (False, "provider_overloaded", True, None),
}


def test_every_capture_has_an_expected_row() -> None:
    captured = {(path.parent.name, path.stem) for path in DATA.glob("*/*.json")}
    assert captured == set(EXPECTED)


@pytest.mark.parametrize(("cli", "scenario"), sorted(EXPECTED))
def test_capture_outcome(cli: str, scenario: str) -> None:
    result = _replay(cli, scenario)
    error = result.error
    got = (
        result.success,
        error.code if error else None,
        error.retryable if error else None,
        error.status if error else None,
    )
    assert got == EXPECTED[cli, scenario]
    text_deltas = [event.text for event in result.events if isinstance(event, TextDelta)]
    assert "".join(text_deltas) == result.text  # no text is emitted twice, none is lost
    if error is None:
        return
    assert error.source == cli
    assert error.message
    # The failure is in the stream exactly once, as the only error-severity event.
    severe = [e for e in result.events if isinstance(e, Error) and e.severity == "error"]
    assert severe == [Error(error)]
    assert severe[0].detail is error


# (text, session_id, event types) of the runs that answer.
ANSWERS = {
    ("claude", "text"): (
        "Hello from FakeProvider.",
        "110a4b88-be3b-418d-a088-8f82975ff7d1",
        ["raw", "text_delta", "turn_end"],
    ),
    ("claude", "tool"): (
        "The tool printed hi-from-tool.",
        "d9fe9585-bf24-4c82-9d98-1ed5fabc14d6",
        ["raw", "tool_start", "tool_end", "text_delta", "turn_end"],
    ),
    ("claude", "cut_stream_then_ok"): (
        "Hello from FakeProvider.",
        "773d3d54-5ac8-4753-9b0b-e21d2f6f4352",
        ["raw", "text_delta", "turn_end"],
    ),
    ("claude", "rate_limited_then_ok"): (
        "Hello from FakeProvider.",
        "cd7d9445-686c-4844-8d68-52bd61d3d36d",
        ["raw", "error:warning", "text_delta", "turn_end"],
    ),
    ("codex", "text"): (
        "Hello from FakeProvider.",
        "01a229f8-9cf1-7581-817b-748cb38a4b51",
        ["raw", "raw", "text_delta", "turn_end"],
    ),
    ("codex", "tool"): (
        "The tool printed hi-from-tool.",
        "01a229f8-9ed8-7c90-96bb-3a3bd6484619",
        ["raw", "raw", "tool_start", "tool_end", "text_delta", "turn_end"],
    ),
    ("codex", "cut_stream_then_ok"): (
        "Hello from FakeProvider.",
        "01a229f8-cb5d-7093-90e3-596119a639f1",
        ["raw", "raw", "error:warning", "text_delta", "turn_end"],
    ),
    ("codex", "rate_limited_then_ok"): (
        "Hello from FakeProvider.",
        "01a229f8-a945-7df0-a67f-0294f5c5911a",
        ["raw", "raw", "error:warning", "text_delta", "turn_end"],
    ),
    ("gemini", "text"): (
        "Hello from FakeProvider.",
        "e8ff3bff-8144-4a21-b545-d1800ee057a1",
        ["raw", "raw", "text_delta", "text_delta", "text_delta", "turn_end"],
    ),
    ("gemini", "tool"): (
        "The tool printed hi-from-tool.",
        "1af77104-c2f9-41e3-b881-231a8a73cc66",
        ["raw", "raw", "tool_start", "tool_end", *["text_delta"] * 4, "turn_end"],
    ),
    ("gemini", "cut_stream_then_ok"): (
        # The retry re-streams "Hello", " from" with no marker: sent and kept once.
        "Hello from FakeProvider.",
        "42c43b90-9746-42f7-9bcb-6f7cda65d945",
        ["raw", "raw", "text_delta", "text_delta", "text_delta", "turn_end"],
    ),
    ("gemini", "rate_limited_then_ok"): (
        "Hello from FakeProvider.",
        "4742c841-9654-47d2-bacf-40ef36252552",
        ["raw", "raw", "text_delta", "text_delta", "text_delta", "turn_end"],
    ),
}


@pytest.mark.parametrize(("cli", "scenario"), sorted(ANSWERS))
def test_capture_answer(cli: str, scenario: str) -> None:
    text, session_id, types = ANSWERS[cli, scenario]
    result = _replay(cli, scenario)
    assert result.success
    assert result.error is None
    assert result.text == text
    assert result.session_id == session_id
    assert _types(result.events) == types


TOOL_CALLS = {
    "claude": [
        ("tool_start", "toolu_fake0001", "Bash",
         {"command": "echo hi-from-tool", "description": "Print a marker"}),
        ("tool_end", "toolu_fake0001", True, "hi-from-tool", None),
    ],
    "codex": [
        ("tool_start", "item_0", "command_execution",
         {"command": "/bin/bash -lc 'echo hi-from-tool'"}),
        ("tool_end", "item_0", True, "hi-from-tool\n", None),
    ],
    "gemini": [
        ("tool_start", "run_shell_command__run_shell_command_1796000509148_0",
         "run_shell_command", {"command": "echo hi-from-tool", "description": "Print a marker"}),
        ("tool_end", "run_shell_command__run_shell_command_1796000509148_0", True,
         "hi-from-tool", None),
    ],
}  # fmt: skip


@pytest.mark.parametrize("cli", sorted(TOOL_CALLS))
def test_capture_tool_calls(cli: str) -> None:
    result = _replay(cli, "tool")
    tools = [summary(e) for e in result.events if isinstance(e, (ToolStart, ToolEnd))]
    assert tools == TOOL_CALLS[cli]


def test_capture_failures_carry_no_answer_text() -> None:
    for (cli, scenario), (success, *_) in EXPECTED.items():
        if not success and not scenario.startswith("cut_stream"):
            assert _replay(cli, scenario).text == "", (cli, scenario)


def test_gemini_cut_stream_text_is_sent_once() -> None:
    # Gemini re-streams "Hello", " from" after the cut; the partial answer is kept once.
    for scenario in ("cut_stream", "cut_stream_graceful"):
        result = _replay("gemini", scenario)
        deltas = [e.text for e in result.events if isinstance(e, TextDelta)]
        assert deltas == ["Hello", " from"]
        assert result.text == "Hello from"
        assert result.error is not None
        assert result.error.message == "Model stream ended without a finish reason."


def test_capture_details() -> None:
    claude_text = _replay("claude", "text")
    assert claude_text.cost_usd == pytest.approx(0.095575)
    assert claude_text.usage is not None
    assert claude_text.usage["output_tokens"] == 6

    max_turns = _replay("claude", "max_turns").error
    assert max_turns is not None
    assert max_turns.message == "Reached maximum number of turns (1)"
    assert max_turns.details["terminal_reason"] == "max_turns"
    assert max_turns.details["subtype"] == "error_max_turns"

    quota = _replay("claude", "quota").error
    assert quota is not None
    assert quota.details["error"] == "billing_error"
    assert quota.message == "Credit balance is too low"

    codex_rate = _replay("codex", "rate_limited").error
    assert codex_rate is not None
    assert codex_rate.details == {"request_id": "req_fake_0002"}

    gemini_rate = _replay("gemini", "rate_limited").error
    assert gemini_rate is not None
    assert gemini_rate.retry_after_ms == 1000  # "Please retry in 1s."

    gemini_key = _replay("gemini", "unauthorized").error
    assert gemini_key is not None
    assert gemini_key.details["reason"] == "API_KEY_INVALID"

    gemini_usage = _replay("gemini", "text").usage
    assert gemini_usage is not None
    assert gemini_usage["total_tokens"] == 7797


def test_capture_signals_and_exit_codes() -> None:
    codex_term = _replay("codex", "sigterm")
    assert codex_term.exit_code is None
    assert codex_term.signal == signal.SIGTERM
    assert codex_term.error is not None
    assert codex_term.error.details == {"signal": 15}

    claude_term = _replay("claude", "sigterm")
    assert claude_term.signal is None  # never invented from the exit code
    assert claude_term.error is not None
    assert claude_term.error.details == {"exit_code": 143}

    codex_int = _replay("codex", "sigint").error
    assert codex_int is not None
    # a crash nothing explains carries the end of stderr, for whoever catches it
    assert codex_int.details == {
        "exit_code": 1,
        "stderr_tail": "Reading additional input from stdin...",
    }

    gemini_flags = _replay("gemini", "bad_flags").error
    assert gemini_flags is not None
    assert gemini_flags.message == "Unknown arguments: bogus-flag, bogusFlag"


def test_replay_tool_failures_are_counted() -> None:
    state = _claude.new_state()
    _claude.parse_line(CLAUDE_TOOL_USE, state)
    failed = CLAUDE_TOOL_RESULT.replace('"is_error":false', '"is_error":true')
    for expected in (1, 2):
        _claude.parse_line(failed, state)
        assert state.consecutive_tool_failures == expected
    assert state.last_failed_tool == "Bash"
    assert state.tool_started
    _claude.parse_line(CLAUDE_TOOL_RESULT, state)
    assert state.consecutive_tool_failures == 0


def test_finish_ends_with_done() -> None:
    stdout, stderr, exit_code, sig = _capture("codex", "tool")
    state = _codex.new_state()
    log = EventLog()
    events: list[Event] = []
    for raw in stdout.splitlines():
        for event in decode_line(raw, _codex, state, 1 << 20):
            log.add(event)
            events.append(event)
    closing = finish(_codex, state, log, ProcessEnd(exit_code, sig, stderr))
    assert isinstance(closing[-1], Done)
    assert closing[-1].result.events == (*events, *closing[:-1])


# --- real lines, one at a time -----------------------------------------------------------------

CLAUDE_TOOL_USE = (
    '{"type":"assistant","message":{"id":"msg_fake0001","type":"message","role":"assistant",'
    '"model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_fake0001","name":"Bash",'
    '"input":{"command":"echo hi-from-tool","description":"Print a marker"}}],"stop_reason":null,'
    '"stop_sequence":null,"usage":{"input_tokens":19101,"output_tokens":1}},'
    '"parent_tool_use_id":null,"session_id":"d9fe9585-bf24-4c82-9d98-1ed5fabc14d6",'
    '"uuid":"a5402971-ef56-4e8f-bfae-dce58b63c026","request_id":"req_fake_0001"}'
)
CLAUDE_TOOL_RESULT = (
    '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_fake0001",'
    '"type":"tool_result","content":"hi-from-tool","is_error":false}]},"parent_tool_use_id":null,'
    '"session_id":"d9fe9585-bf24-4c82-9d98-1ed5fabc14d6","tool_use_result":{"stdout":'
    '"hi-from-tool","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}}'
)

LINES: list[tuple[str, str, list[tuple[Any, ...]]]] = [
    ("claude", CLAUDE_TOOL_USE,
     [("tool_start", "toolu_fake0001", "Bash",
       {"command": "echo hi-from-tool", "description": "Print a marker"})]),
    ("claude", CLAUDE_TOOL_RESULT, [("tool_end", "toolu_fake0001", True, "hi-from-tool", None)]),
    ("claude",
     '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t2","type":"tool_result",'
     '"content":[{"type":"text","text":"line 1"},{"type":"text","text":"line 2"}],'
     '"is_error":true}]},"parent_tool_use_id":null}',
     [("tool_end", "t2", False, None, "line 1\nline 2")]),
    ("claude",
     '{"type":"assistant","message":{"id":"msg_6d7d","type":"message","role":"assistant",'
     '"model":"claude-opus-4-8","content":[{"type":"thinking","thinking":"I should run echo.",'
     '"signature":"c2ln"}]},"parent_tool_use_id":null,"session_id":"s"}',
     [("thinking_delta", "I should run echo.")]),
    ("claude",
     '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":1000,'
     '"error_status":429,"error":"rate_limit","session_id":"ec969e1f","uuid":"34632c07"}',
     [("error", "warning", "provider_rate_limited", 429)]),
    ("claude",
     '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,'
     '"retry_delay_ms":538.9812338120297,"error_status":null,"error":"unknown",'
     '"session_id":"28349aaf","uuid":"33114f2d"}',
     [("error", "warning", "provider_connection_lost", None)]),
    ("claude",
     '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,'
     '"retry_delay_ms":545.6423569755917,"error_status":529,"error":"overloaded"}',
     [("error", "warning", "provider_overloaded", 529)]),
    ("claude",
     '{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
     '"delta":{"type":"text_delta","text":"Hello "}},"session_id":"s","parent_tool_use_id":null}',
     [("text_delta", "Hello ")]),
    ("claude",
     '{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
     '"delta":{"type":"input_json_delta","partial_json":"{\\"a"}},"parent_tool_use_id":null}',
     [("raw",)]),
    ("claude",
     '{"type":"result","subtype":"success","is_error":true,"api_error_status":null,'
     '"result":"Not logged in · Please run /login","session_id":"s","total_cost_usd":0}',
     [("turn_end",), ("error", "error", "cli_not_authenticated", None)]),
    ("claude",
     '{"type":"result","subtype":"error_max_budget_usd","is_error":true,"session_id":"s",'
     '"errors":["Reached maximum budget ($0.01)"],"total_cost_usd":0.02}',
     [("turn_end",), ("error", "error", "run_budget_exceeded", None)]),
    ("claude",
     '{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,'
     '"session_id":"s","errors":["No conversation found with session ID: 0000"]}',
     [("turn_end",), ("error", "error", "not_found", None)]),
    ("claude",
     '{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s",'
     '"terminal_reason":"aborted_streaming","errors":[]}',
     [("turn_end",), ("error", "error", "cli_killed", None)]),
    ("claude",
     '{"type":"result","subtype":"success","is_error":true,"api_error_status":null,'
     '"result":"API Error: Unable to connect to API (ConnectionRefused)","session_id":"s"}',
     [("turn_end",), ("error", "error", "provider_unreachable", None)]),
    ("claude",
     '{"type":"result","subtype":"success","is_error":true,"api_error_status":null,'
     '"result":"API Error: API returned an empty or malformed response (HTTP 200)"}',
     [("turn_end",), ("error", "error", "provider_bad_response", None)]),
    # False positive: a number in a path is not a status.
    ("claude",
     '{"type":"result","subtype":"success","is_error":true,"api_error_status":null,'
     '"result":"API Error: build failed at foo.go:429 (rate limit)"}',
     [("turn_end",), ("error", "error", "unknown", None)]),
    ("claude", '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}', [("raw",)]),
    ("claude", '{"type":"keep_alive"}', [("raw",)]),
    ("codex", '{"type":"thread.started","thread_id":"01a229f8-9cf1-7581-817b-748cb38a4b51"}',
     [("raw",)]),
    ("codex", '{"type":"turn.started"}', [("raw",)]),
    ("codex",
     '{"type":"item.completed","item":{"id":"item_1","type":"reasoning",'
     '"text":"**Planning** I will run echo."}}',
     [("thinking_delta", "**Planning** I will run echo.")]),
    ("codex",
     '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata '
     'for `gpt-5` not found. Defaulting to fallback metadata; this can degrade performance and '
     'cause issues."}}',
     [("error", "warning", "unknown", None)]),
    ("codex",
     '{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":'
     '"/bin/bash -lc \'echo hi-from-tool\'","aggregated_output":"","exit_code":null,'
     '"status":"in_progress"}}',
     [("tool_start", "item_2", "command_execution",
       {"command": "/bin/bash -lc 'echo hi-from-tool'"})]),
    ("codex",
     '{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":'
     '"false","aggregated_output":"oops\\n","exit_code":1,"status":"failed"}}',
     [("tool_start", "item_3", "command_execution", {"command": "false"}),
      ("tool_end", "item_3", False, "oops\n", "failed, exit code 1")]),
    ("codex",
     '{"type":"item.completed","item":{"id":"item_4","type":"mcp_tool_call","server":"docs",'
     '"tool":"search","arguments":{"q":"x"},"result":{"content":[{"type":"text","text":"hit"}],'
     '"structured_content":null},"error":null,"status":"completed"}}',
     [("tool_start", "item_4", "docs.search", {"q": "x"}),
      ("tool_end", "item_4", True, "hit", None)]),
    ("codex",
     '{"type":"error","message":"Reconnecting... 1/1 (unexpected status 503 Service '
     'Unavailable: The server is overloaded or not ready yet., url: http://127.0.0.1:1/v1/'
     'responses, request id: req_fake_0002)"}',
     [("error", "warning", "provider_overloaded", 503)]),
    ("codex",
     '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: '
     'error sending request)"}',
     [("error", "warning", "provider_unreachable", None)]),
    ("codex",
     '{"type":"turn.completed","usage":{"input_tokens":32,"cached_input_tokens":0,'
     '"output_tokens":16,"reasoning_output_tokens":4}}',
     [("turn_end",)]),
    ("codex",
     '{"type":"turn.failed","error":{"message":"Missing environment variable: '
     '`FAKE_OPENAI_KEY`."}}',
     [("error", "error", "cli_not_authenticated", None)]),
    ("codex",
     '{"type":"turn.failed","error":{"message":"unexpected status 400 Bad Request: This '
     'model\'s maximum context length is 8192 tokens, url: http://x/v1/responses"}}',
     [("error", "error", "provider_context_too_long", 400)]),
    ("codex",
     '{"type":"turn.failed","error":{"message":"You\u2019ve hit your usage limit. Try again at '
     '5pm."}}',
     [("error", "error", "provider_quota_exceeded", None)]),
    # False positive: a 429 inside other text is not a rate limit.
    ("codex", '{"type":"turn.failed","error":{"message":"tool failed at foo.go:429"}}',
     [("error", "error", "unknown", None)]),
    ("codex", '{"type":"item.plan.delta","item_id":"p","delta":"step"}', [("raw",)]),
    ("gemini",
     '{"type":"init","timestamp":"2026-11-30T01:01:46.848Z","session_id":"e8ff3bff",'
     '"model":"gemini-2.5-flash"}',
     [("raw",)]),
    ("gemini", '{"type":"message","timestamp":"t","role":"user","content":"Say hello."}',
     [("raw",)]),
    ("gemini",
     '{"type":"message","timestamp":"t","role":"assistant","content":"Hello","delta":true}',
     [("text_delta", "Hello")]),
    ("gemini",
     '{"type":"tool_result","timestamp":"t","tool_id":"run_1","status":"error","output":"",'
     '"error":{"type":"tool_not_registered","message":"Tool \\"run_shell_command\\" not found"}}',
     [("tool_end", "run_1", False, "", 'Tool "run_shell_command" not found')]),
    ("gemini",
     '{"type":"error","timestamp":"t","severity":"warning","message":"Loop detected"}',
     [("error", "warning", "unknown", None)]),
    ("gemini",
     '{"type":"error","timestamp":"t","severity":"error",'
     '"message":"Model stream ended without a finish reason."}',
     [("error", "error", "provider_bad_response", None)]),
    ("gemini",
     '{"type":"result","timestamp":"t","status":"error","error":{"type":"unknown","message":'
     '"[API Error: Resource has been exhausted (e.g. check quota).]\\nPlease wait and try '
     'again later."},"stats":{"total_tokens":0}}',
     [("turn_end",), ("error", "error", "provider_rate_limited", None)]),
    ("gemini",
     '{"type":"result","timestamp":"t","status":"error","error":{"type":"unknown","message":'
     '"[API Error: connection to foo.go:429 refused]"},"stats":{}}',
     [("turn_end",), ("error", "error", "unknown", None)]),
    ("gemini", '{"type":"telemetry","timestamp":"t"}', [("raw",)]),
]  # fmt: skip


@pytest.mark.parametrize(("cli", "line", "expected"), LINES)
def test_parse_line(cli: str, line: str, expected: list[tuple[Any, ...]]) -> None:
    state = MODULES[cli].new_state()
    events = MODULES[cli].parse_line(line, state)
    assert [summary(event) for event in events] == expected
    for event in events:
        if isinstance(event, Error):
            assert event.detail.source == cli


def test_parse_line_state() -> None:
    state = _claude.new_state()
    _claude.parse_line(
        '{"type":"system","subtype":"init","session_id":"dc95e2c5","model":"claude-opus-4-8[1m]"}',
        state,
    )
    assert state.session_id == "dc95e2c5"
    retry = _claude.parse_line(
        '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,'
        '"retry_delay_ms":1000,"error_status":429,"error":"rate_limit"}',
        state,
    )
    assert isinstance(retry[0], Error)
    assert retry[0].detail.retry_after_ms == 1000
    assert retry[0].detail.details["attempt"] == 1

    codex = _codex.new_state()
    _codex.parse_line('{"type":"thread.started","thread_id":"01a2299c"}', codex)
    _codex.parse_line('{"type":"turn.completed","usage":{"input_tokens":32}}', codex)
    assert (codex.session_id, codex.usage, codex.terminal) == (
        "01a2299c",
        {"input_tokens": 32},
        "success",
    )

    gemini = _gemini.new_state()
    _gemini.parse_line('{"type":"init","session_id":"0c10021f","model":"gemini-2.5-flash"}', gemini)
    assert gemini.session_id == "0c10021f"


def test_claude_synthetic_error_line_is_not_text() -> None:
    state = _claude.new_state()
    events = _claude.parse_line(
        '{"type":"assistant","message":{"id":"x","model":"<synthetic>","role":"assistant",'
        '"content":[{"type":"text","text":"Credit balance is too low"}]},'
        '"parent_tool_use_id":null,"error":"billing_error"}',
        state,
    )
    assert _types(events) == ["raw"]
    assert state.text == ""


def test_claude_sub_agent_text_is_not_the_answer() -> None:
    state = _claude.new_state()
    events = _claude.parse_line(
        '{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"inner"},'
        '{"type":"tool_use","id":"t","name":"Read","input":{}}]},"parent_tool_use_id":"toolu_1"}',
        state,
    )
    assert _types(events) == ["tool_start", "raw"]
    assert state.text == ""


def _partial(event: dict[str, Any]) -> str:
    return json.dumps({"type": "stream_event", "event": event, "parent_tool_use_id": None})


def _assistant_text(message_id: str, text: str) -> str:
    return json.dumps(
        {
            "type": "assistant",
            "message": {"id": message_id, "content": [{"type": "text", "text": text}]},
            "parent_tool_use_id": None,
        }
    )


def _text_delta(text: str) -> str:
    return _partial({"type": "content_block_delta", "delta": {"type": "text_delta", "text": text}})


def test_claude_partial_messages_are_not_repeated() -> None:
    state = _claude.new_state()
    lines = [
        _partial({"type": "message_start", "message": {"id": "msg_1"}}),
        _text_delta("Hello "),
        _text_delta("world"),
        _assistant_text("msg_1", "Hello world"),
        _partial({"type": "message_stop"}),
    ]
    events = [event for line in lines for event in _claude.parse_line(line, state)]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello ", "world"]
    assert state.text == "Hello world"


def test_claude_cut_partial_stream_leaves_the_answer() -> None:
    # A stream cut mid-message, then Claude's non-streaming fallback sends the whole message.
    state = _claude.new_state()
    lines = [
        _partial({"type": "message_start", "message": {"id": "msg_1"}}),
        _text_delta("Hel"),
        _assistant_text("msg_2", "Hello world"),
    ]
    events = [event for line in lines for event in _claude.parse_line(line, state)]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "Hello world"]
    assert state.text == "Hello world"


@pytest.mark.parametrize(
    ("chunks", "sent", "text"),
    [
        (["Hello", " from", "Hello", " from", " Fake."], ["Hello", " from", " Fake."],
         "Hello from Fake."),
        (["ha", "ha"], ["ha", "ha"], "haha"),  # one chunk is not enough to call it a retry
        (["A", "B", "A", "C"], ["A", "B", "A", "C"], "ABAC"),  # held back, then sent
        (["A", "B", "A", "B", "A", "B", "C"], ["A", "B", "C"], "ABC"),  # two retries
    ],
)  # fmt: skip
def test_gemini_retried_stream(chunks: list[str], sent: list[str], text: str) -> None:
    state = _gemini.new_state()
    events: list[Event] = []
    for chunk in chunks:
        line = json.dumps({"type": "message", "role": "assistant", "content": chunk, "delta": True})
        events += _gemini.parse_line(line, state)
    events += _gemini.parse_line('{"type":"result","status":"success","stats":{}}', state)
    assert [e.text for e in events if isinstance(e, TextDelta)] == sent
    assert state.text == text


def test_gemini_tool_turn_starts_a_new_answer() -> None:
    state = _gemini.new_state()
    for line in (
        '{"type":"message","role":"assistant","content":"Let me","delta":true}',
        '{"type":"message","role":"assistant","content":" check.","delta":true}',
        '{"type":"tool_use","tool_name":"ls","tool_id":"t1","parameters":{}}',
        '{"type":"tool_result","tool_id":"t1","status":"success","output":"a"}',
        '{"type":"message","role":"assistant","content":"Let me","delta":true}',
        '{"type":"message","role":"assistant","content":" check.","delta":true}',
    ):
        _gemini.parse_line(line, state)
    assert state.text == "Let me check.Let me check."


# --- broken input ------------------------------------------------------------------------------

CLAUDE_TEXT = (DATA / "claude" / "text.stdout").read_bytes()


@pytest.mark.parametrize("cli", sorted(MODULES))
def test_truncated_json_line(cli: str) -> None:
    state = MODULES[cli].new_state()
    events = MODULES[cli].parse_line('{"type":"result","subtype":"succ', state)
    assert [summary(e) for e in events] == [("error", "warning", "cli_output_invalid", None)]
    assert state.terminal is None


@pytest.mark.parametrize("cli", sorted(MODULES))
def test_non_json_lines_are_raw(cli: str) -> None:
    state = MODULES[cli].new_state()
    assert MODULES[cli].parse_line("Loaded cached credentials.", state) == [
        Raw(cli, "Loaded cached credentials.")
    ]
    assert MODULES[cli].parse_line("[1, 2]", state) == [Raw(cli, "[1, 2]")]


def test_invalid_utf8_line_is_an_error_event_and_the_stream_goes_on() -> None:
    init, rest = CLAUDE_TEXT.split(b"\n", 1)
    result = replay("claude", init + b"\n" + b'{"type":"x\xff\xfe"}\n' + rest)
    assert result.success
    assert result.text == "Hello from FakeProvider."
    bad = result.events[1]
    assert isinstance(bad, Error)
    assert (bad.severity, bad.detail.code) == ("warning", "cli_output_invalid")


def test_ten_megabyte_line_is_an_error_event_and_the_stream_goes_on() -> None:
    init, rest = CLAUDE_TEXT.split(b"\n", 1)
    huge = b'{"type":"assistant","message":{"content":"' + b"a" * (10 * 1024 * 1024) + b'"}}'
    result = replay("claude", b"\n".join([init, huge, rest]))
    assert _types(result.events) == ["raw", "error:warning", "text_delta", "turn_end"]
    bad = result.events[1]
    assert isinstance(bad, Error)
    assert bad.detail.code == "cli_output_invalid"
    assert bad.detail.details["bytes"] <= 200  # the sample, not the line
    assert result.success
    assert result.text == "Hello from FakeProvider."


def test_replay_cuts_lines_as_the_runners_do() -> None:
    # One Lines for both: \r\n endings (the last line's too) and the same oversize message.
    crlf = CLAUDE_TEXT.rstrip(b"\n").replace(b"\n", b"\r\n") + b"\r\nplain\r"
    result = replay("claude", crlf)
    assert (result.success, result.text) == (True, "Hello from FakeProvider.")
    assert _types(result.events) == [*_types(replay("claude", CLAUDE_TEXT).events), "raw"]
    assert result.events[-1] == Raw("claude", "plain")
    init, rest = CLAUDE_TEXT.split(b"\n", 1)
    over = replay("claude", init + b"\n" + b"y" * 2000 + b"\n" + rest, max_line_bytes=1000)
    warning = over.events[1]
    assert isinstance(warning, Error)
    assert warning.detail.message == "line of 2000 bytes over the 1000-byte cap"


def test_only_a_clis_own_retry_report_is_a_retry() -> None:
    claude = _claude.parse_line(
        '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,'
        '"retry_delay_ms":1000,"error_status":429,"error":"rate_limit"}',
        _claude.new_state(),
    )
    codex = _codex.parse_line(
        '{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}',
        _codex.new_state(),
    )
    unreadable = _codex.parse_line('{"type":"x', _codex.new_state())
    warnings = [e for e in (*claude, *codex, *unreadable) if isinstance(e, Error)]
    assert [(e.severity, e.is_retry) for e in warnings] == [("warning", True)] * 2 + [
        ("warning", False)
    ]


@pytest.mark.parametrize("cli", sorted(MODULES))
def test_provider_messages_are_read_by_every_cli(cli: str) -> None:
    # The provider's own sentence, passed on by the CLI: message_code's, for all three.
    line = {
        "claude": '{"type":"result","subtype":"success","is_error":true,'
        '"result":"Your credit balance is too low to access the API"}',
        "codex": '{"type":"turn.failed","error":{"message":"Your credit balance is too low"}}',
        "gemini": '{"type":"result","status":"error","error":{"type":"unknown",'
        '"message":"Your credit balance is too low"}}',
    }[cli]
    state = MODULES[cli].new_state()
    MODULES[cli].parse_line(line, state)
    assert isinstance(state.terminal, ErrorDetail)
    assert state.terminal.code == "provider_quota_exceeded"


@pytest.mark.parametrize("cli", sorted(MODULES))
def test_empty_stream(cli: str) -> None:
    clean = replay(cli, b"", "", 0)
    assert clean.error is not None
    assert (clean.success, clean.error.code) == (False, "provider_bad_response")
    crashed = replay(cli, b"", "", 1)
    assert crashed.error is not None
    assert (crashed.error.code, crashed.error.details) == ("cli_crashed", {"exit_code": 1})
    assert crashed.error.source == cli


NO_TERMINAL = {
    "claude": CLAUDE_TEXT.rsplit(b"\n", 2)[0] + b"\n",  # init + assistant, no result
    "codex": b'{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n'
    b'{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"Hi"}}\n',
    "gemini": b'{"type":"init","session_id":"g","model":"m"}\n'
    b'{"type":"message","role":"assistant","content":"Hi","delta":true}\n',
}


@pytest.mark.parametrize("cli", sorted(NO_TERMINAL))
def test_stream_without_terminal_event(cli: str) -> None:
    ended = replay(cli, NO_TERMINAL[cli], "", 0)
    assert ended.error is not None
    assert ended.error.code == "provider_bad_response"  # never success without a terminal
    assert ended.text  # what arrived is kept
    killed = replay(cli, NO_TERMINAL[cli], "", None, signal.SIGKILL)
    assert killed.error is not None
    assert (killed.error.code, killed.error.details) == ("cli_killed", {"signal": 9})
    assert (killed.exit_code, killed.signal) == (None, 9)


@pytest.mark.parametrize("cli", sorted(MODULES))
def test_terminal_event_decides_over_exit_code(cli: str) -> None:
    stdout, _, _, _ = _capture(cli, "text")
    assert replay(cli, stdout, "noise", 1).success
    assert replay(cli, stdout, "", None, signal.SIGTERM).success
    failed, stderr, _, _ = _capture(cli, "model_not_found")
    result = replay(cli, failed, stderr, 0)
    assert result.error is not None
    assert result.error.code == "provider_model_not_found"


STDERR_ONLY = [
    ("claude", 1, "error: unknown option '--bogus-flag'\n", "cli_invalid_arguments"),
    ("claude", 1, "error: option '--output-format <format>' argument 'yaml' is invalid. Allowed "
     "choices are text, json, stream-json.\n", "cli_invalid_arguments"),
    ("claude", 1, "Error: When using --print, --output-format=stream-json requires --verbose\n",
     "cli_invalid_arguments"),
    ("claude", 1, "Error: Input must be provided either through stdin or as a prompt argument "
     "when using --print\n", "cli_invalid_arguments"),
    ("claude", 1, "No conversation found with session ID: 0000\n", "not_found"),
    ("claude", 1, "something odd\n", "cli_crashed"),
    ("codex", 2, "error: invalid value 'bogus' for '--sandbox <SANDBOX_MODE>'\n",
     "cli_invalid_arguments"),
    ("codex", 2, "", "cli_invalid_arguments"),
    ("codex", 1, "Not inside a trusted directory and --skip-git-repo-check was not specified.\n",
     "cli_untrusted_workspace"),
    ("codex", 1, "Reading additional input from stdin...\nNo prompt provided via stdin.\n",
     "cli_invalid_arguments"),
    ("codex", 1, "Error: thread/resume: thread/resume failed: no rollout found for thread id "
     "0000 (code -32600)\n\nStack backtrace:\n   0: <unknown>\n", "not_found"),
    ("codex", 1, "Error: Model provider `nonexist` not found\n", "cli_invalid_arguments"),
    ("gemini", 41, "Please set an Auth method in your /h/.gemini/settings.json or specify one of "
     "the following environment variables before running: GEMINI_API_KEY\n",
     "cli_not_authenticated"),
    ("gemini", 41, "Invalid auth method selected.\n", "cli_not_authenticated"),
    ("gemini", 42, "No input provided via stdin. Input can be provided by piping data into "
     "gemini or using the --prompt option.\n", "cli_invalid_arguments"),
    ("gemini", 44, "", "cli_spawn_failed"),
    ("gemini", 52, "", "cli_invalid_arguments"),
    ("gemini", 53, "", "run_max_turns"),
    ("gemini", 54, "", "tool_execution_failed"),
    ("gemini", 55, "Gemini CLI is not running in a trusted directory. To proceed, either use "
     "`--skip-trust`, set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment variable.\n",
     "cli_untrusted_workspace"),
    ("gemini", 130, "", "run_cancelled"),
    ("gemini", 1, "Warning: 256-color support not detected.\nUnknown arguments: bogus-flag, "
     "bogusFlag\n", "cli_invalid_arguments"),
    # An exit status & 0xFF counts only with an API error in sight.
    ("gemini", 173, "Error when talking to Gemini API Full report available at: /t/r.json "
     '_ApiError: {"error":{"code":429,"message":"Resource has been exhausted (e.g. check '
     'quota).","status":"RESOURCE_EXHAUSTED"}}\n', "provider_rate_limited"),
    ("gemini", 247, "Attempt 2 failed with status 503. Max attempts reached\n",
     "provider_overloaded"),
    ("gemini", 173, "", "cli_crashed"),
    ("gemini", 143, "", "cli_killed"),
]  # fmt: skip


@pytest.mark.parametrize(("cli", "exit_code", "stderr", "code"), STDERR_ONLY)
def test_stderr_only_runs(cli: str, exit_code: int, stderr: str, code: str) -> None:
    result = replay(cli, b"", stderr, exit_code)
    assert result.error is not None
    assert result.error.code == code
    assert result.error.source == cli
    assert result.error.details["exit_code"] == exit_code
    assert result.stderr_tail == stderr  # kept on the result, not in details


def test_gemini_api_exit_keeps_the_status() -> None:
    body = '{"error":{"code":429,"message":"Resource has been exhausted","status":"x"}}'
    result = replay("gemini", b"", f"Error when talking to Gemini API _ApiError: {body}\n", 173)
    assert result.error is not None
    assert (result.error.code, result.error.status) == ("provider_rate_limited", 429)
    bare = replay("gemini", b"", "Attempt 2 failed with status 503. Max attempts reached\n", 247)
    assert bare.error is not None
    assert bare.error.status == 503


# --- argv ------------------------------------------------------------------------------------

FULL = RunOptions(
    model="M",
    system_prompt="Be brief",
    allowed_tools=("Bash(echo *)", "Read"),
    permission_mode="P",
    max_turns=3,
    resume="S",
    extra_args=("--x", "1"),
)

ARGV = [
    ("claude", "hi", RunOptions(),
     ["claude", "-p", "hi", "--output-format", "stream-json", "--verbose"]),
    ("claude", "hi", FULL,
     ["claude", "-p", "hi", "--output-format", "stream-json", "--verbose", "--model=M",
      "--max-turns=3", "--append-system-prompt=Be brief",
      "--allowedTools=Bash(echo *)", "--allowedTools=Read", "--permission-mode=P", "--resume=S",
      "--x", "1"]),
    ("claude", "-x", RunOptions(),
     ["claude", "-p", "--output-format", "stream-json", "--verbose", "--", "-x"]),
    ("claude", "--help me", RunOptions(allowed_tools=("Read",)),
     ["claude", "-p", "--output-format", "stream-json", "--verbose", "--allowedTools=Read",
      "--", "--help me"]),
    ("claude", "hi", RunOptions(model="-m", system_prompt="-s x", resume="-r", max_turns=0),
     ["claude", "-p", "hi", "--output-format", "stream-json", "--verbose", "--model=-m",
      "--max-turns=0", "--append-system-prompt=-s x", "--resume=-r"]),
    ("codex", "hi", RunOptions(),
     ["codex", "exec", "--json", "--skip-git-repo-check", "hi"]),
    ("codex", "hi", dataclasses.replace(FULL, max_turns=None, allowed_tools=()),
     ["codex", "exec", "--json", "--skip-git-repo-check", "--model=M", "--sandbox=P",
      "-c", 'developer_instructions="Be brief"', "--x", "1", "resume", "S", "hi"]),
    ("codex", "-x", RunOptions(),
     ["codex", "exec", "--json", "--skip-git-repo-check", "--", "-x"]),
    ("codex", "-x", RunOptions(resume="S"),
     ["codex", "exec", "--json", "--skip-git-repo-check", "resume", "--", "S", "-x"]),
    ("codex", "hi", RunOptions(model="-m", system_prompt="-s", resume="-r"),
     ["codex", "exec", "--json", "--skip-git-repo-check", "--model=-m",
      "-c", 'developer_instructions="-s"', "resume", "--", "-r", "hi"]),
    ("gemini", "hi", RunOptions(),
     ["gemini", "-p", "hi", "-o", "stream-json"]),
    ("gemini", "hi", dataclasses.replace(FULL, max_turns=None, system_prompt=None),
     ["gemini", "-p", "hi", "-o", "stream-json", "--model=M", "--approval-mode=P",
      "--allowed-tools=Bash(echo *)", "--allowed-tools=Read", "--resume=S", "--x", "1"]),
    ("gemini", "-x y", RunOptions(),
     ["gemini", "--prompt=-x y", "-o", "stream-json"]),
    ("gemini", "hi", RunOptions(model="-m", allowed_tools=("-t",), resume="-r"),
     ["gemini", "-p", "hi", "-o", "stream-json", "--model=-m", "--allowed-tools=-t",
      "--resume=-r"]),
]  # fmt: skip


@pytest.mark.parametrize(("cli", "prompt", "options", "argv"), ARGV)
def test_build_argv(cli: str, prompt: str, options: RunOptions, argv: list[str]) -> None:
    assert MODULES[cli].build_argv(cli, prompt, options) == argv


@pytest.mark.parametrize(
    ("cli", "unsupported"),
    [("codex", "max_turns, allowed_tools"), ("gemini", "max_turns, system_prompt")],
)
def test_options_a_cli_cannot_apply_are_refused(cli: str, unsupported: str) -> None:
    with pytest.raises(ValueError, match=f"{cli} has no way to apply {unsupported}") as refused:
        MODULES[cli].build_argv(cli, "hi", FULL)
    # its own code, not a ValueError read as unknown (the seeds' NOT_SUPPORTED)
    detail = rc.classify(refused.value)
    assert (detail.code, detail.retryable, detail.source) == ("not_supported", False, cli)
    assert detail.details["options"] == unsupported.split(", ")
    assert (detail.exit_code, detail.http_status) == (2, 501)


def test_codex_system_prompt_is_a_toml_string() -> None:
    tricky = 'Say "hi"\\n\nthen\tstop \x7f \x00 é 😀'
    argv = _codex.build_argv("codex", "hi", RunOptions(system_prompt=tricky))
    key, value = argv[argv.index("-c") + 1].split("=", 1)
    assert key == "developer_instructions"
    assert tomllib.loads(f"v = {value}")["v"] == tricky


def test_captured_argv_is_what_build_argv_makes() -> None:
    meta = json.loads((DATA / "claude" / "tool.json").read_text())
    options = RunOptions(extra_args=TOOL_ARGS["claude"])  # what the capture script passed
    assert _claude.build_argv("claude", meta["argv"][2], options) == meta["argv"]


def test_modules_have_the_contract() -> None:
    for name, module in MODULES.items():
        assert name == module.NAME
        assert module.PACKAGE.startswith("@")
        for function in ("new_state", "build_argv", "parse_line", "outcome"):
            assert callable(getattr(module, function))
        state = module.new_state()
        assert isinstance(state, ParseState)
        assert state.cli == name


def test_the_public_api_of_agents() -> None:
    assert sorted(agents.__all__) == [
        "CLI_NAMES", "CliInfo", "Done", "ErrorEvent", "Event", "Raw", "RunOptions", "RunRefused",
        "RunResult",
        "TextDelta", "ThinkingDelta", "ToolEnd", "ToolStart", "TurnEnd", "discover",
        "event_to_dict", "replay", "run", "run_sync", "stream", "stream_sync",
    ]  # fmt: skip
    assert all(hasattr(agents, name) for name in agents.__all__)


# --- robustness ------------------------------------------------------------------------------

_ODD_VALUES: tuple[Any, ...] = (None, [], {}, 1, 1.5, True, "x", [1], {"a": 1}, [{"type": "x"}])


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    """Every key path of a JSON value, 4 levels deep (the first 3 items of a list)."""
    if depth > 3 or not isinstance(value, (dict, list)):
        return []
    items = value.items() if isinstance(value, dict) else enumerate(value[:3])
    found = []
    for key, item in items:
        found.append((*prefix, key))
        found += _paths(item, (*prefix, key), depth + 1)
    return found


def _with(data: Any, path: tuple[Any, ...], value: Any) -> str:
    copy = json.loads(json.dumps(data))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(copy)


def test_parsers_never_raise_on_odd_json() -> None:
    # Every real line, with each value in turn swapped for another JSON type.
    lines = [(cli, line) for cli, line, _ in LINES]
    for path in sorted(DATA.glob("*/*.stdout")):
        lines += [(path.parent.name, line) for line in path.read_text().splitlines() if line]
    for cli, line in lines:
        data = json.loads(line)
        for key_path in _paths(data):
            for value in _ODD_VALUES:
                state = MODULES[cli].new_state()
                for event in MODULES[cli].parse_line(_with(data, key_path, value), state):
                    assert isinstance(event, Event)
                MODULES[cli].outcome(state, 1, "")

"""Hostile CLI output: nothing a CLI prints makes a run raise, and nothing it prints reaches a
detail unscrubbed.

A line that raised, kept an unbounded value or yielded no event before the parsers were
hardened says so in a comment; the others pin what a bad field becomes. A bad field is
ignored, or, where it decides what the run reports (a result's `is_error`, its cost), it
becomes a `cli_output_invalid` warning; the run goes on. No process is started here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from recoverable._classify.http import from_http
from recoverable._core.events import Error, Event, RunResult, TextDelta, TurnEnd
from recoverable._core.untrusted import MAX_HINT_MS, TRUNCATED
from recoverable.agents import _claude, _codex, _gemini
from recoverable.agents._replay import replay

from .test_parsers import DATA, MODULES, summary

DIGITS_400 = "9" * 400  # a JSON integer Python reads (its int-string limit is 4300 digits)
DIGITS_5000 = "9" * 5000  # one it refuses: ValueError inside json
DEEP = "[" * 100_000  # RecursionError inside json
NO_HINT: Any = None
CAPPED = MAX_HINT_MS  # a wait hint too long for any retry is kept as the cap


def _summary(event: Event) -> tuple[Any, ...]:
    """`summary`, with an error's wait hint and a turn end's usage."""
    if isinstance(event, Error):
        return (*summary(event), event.detail.retry_after_ms)
    if isinstance(event, TurnEnd):
        return ("turn_end", event.usage)
    return summary(event)


def _retry(fields: str) -> str:
    return '{"type":"system","subtype":"api_retry","error":"rate_limit",' + fields + "}"


def _claude_result(fields: str) -> str:
    return '{"type":"result","subtype":"success",' + fields + "}"


def _gemini_failure(message: str) -> str:
    error = {"type": "unknown", "message": message}
    return json.dumps({"type": "result", "status": "error", "error": error})


def _retry_info(delay: str) -> str:
    body = {
        "error": {
            "code": 429,
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}],
        }
    }
    return _gemini_failure(f"[API Error: {json.dumps(body)}]")


RATE = "provider_rate_limited"
LOST = "provider_connection_lost"
INVALID = ("error", "warning", "cli_output_invalid", None, None)  # a line or field unreadable
TURN_END = ("turn_end", None)

HOSTILE: list[tuple[str, str, list[tuple[Any, ...]]]] = [
    # -- claude api_retry: the wait hint (math.ceil raised on the first two) -------------------
    ("claude", _retry('"retry_delay_ms":Infinity'), [("error", "warning", RATE, None, CAPPED)]),
    ("claude", _retry('"retry_delay_ms":1e400'), [("error", "warning", RATE, None, CAPPED)]),
    ("claude", _retry(f'"retry_delay_ms":{DIGITS_400}'),  # was kept: a 400-digit hint
     [("error", "warning", RATE, None, CAPPED)]),
    ("claude", _retry('"retry_delay_ms":NaN'),  # was kept in details: to_dict not JSON
     [("error", "warning", RATE, None, NO_HINT)]),
    ("claude", _retry('"retry_delay_ms":-1'), [("error", "warning", RATE, None, NO_HINT)]),
    ("claude", _retry('"retry_delay_ms":"1000"'), [("error", "warning", RATE, None, NO_HINT)]),
    ("claude", _retry('"retry_delay_ms":null'), [("error", "warning", RATE, None, NO_HINT)]),
    ("claude", _retry(f'"retry_delay_ms":{DIGITS_5000}'), [INVALID]),
    # -- claude api_retry: the status (an absurd one classified by status before) ------------
    ("claude", _retry(f'"error_status":{DIGITS_400}'), [("error", "warning", RATE, None, None)]),
    ("claude", _retry('"error_status":-5'), [("error", "warning", RATE, None, None)]),
    ("claude", _retry('"error_status":"503"'), [("error", "warning", RATE, None, None)]),
    ("claude", _retry('"error_status":1e400'), [("error", "warning", RATE, None, None)]),
    ("claude", '{"type":"system","subtype":"api_retry","error":[1],"error_status":true}',
     [("error", "warning", LOST, None, None)]),
    # -- claude result: cost, usage, is_error -----------------------------------------------
    ("claude", _claude_result('"is_error":false,"total_cost_usd":NaN'),
     [INVALID, TURN_END]),  # was kept: cost_usd NaN, to_dict not JSON
    ("claude", _claude_result('"is_error":false,"total_cost_usd":Infinity'), [INVALID, TURN_END]),
    ("claude", _claude_result(f'"is_error":false,"total_cost_usd":{DIGITS_400}'),
     [INVALID, TURN_END]),  # float() raised OverflowError
    ("claude", _claude_result('"is_error":false,"total_cost_usd":"3"'), [INVALID, TURN_END]),
    ("claude", _claude_result('"is_error":false,"total_cost_usd":-1'), [INVALID, TURN_END]),
    ("claude", _claude_result('"is_error":false,"total_cost_usd":null'), [TURN_END]),
    ("claude", _claude_result('"is_error":false,"usage":[1,2]'), [TURN_END]),
    ("claude", _claude_result('"is_error":false,"usage":"x"'), [TURN_END]),
    ("claude", _claude_result('"is_error":false,"usage":{"output_tokens":NaN,"input_tokens":1}'),
     [("turn_end", {"output_tokens": "nan", "input_tokens": 1})]),
    ("claude", _claude_result('"is_error":"false"'),  # a truthy string failed it silently
     [INVALID, TURN_END, ("error", "error", "unknown", None, None)]),
    ("claude", _claude_result('"is_error":null'), [TURN_END]),
    ("claude", _claude_result(f'"is_error":true,"api_error_status":{DIGITS_400}'),
     [TURN_END, ("error", "error", "unknown", None, None)]),  # was classified by that status
    ("claude", _claude_result('"is_error":true,"api_error_status":500,"result":"' + DEEP + '"'),
     [TURN_END, ("error", "error", "provider_server_error", 500, None)]),  # RecursionError
    ("claude", '{"type":"result","subtype":[],"is_error":true,"errors":"x","result":7}',
     [TURN_END, ("error", "error", "unknown", None, None)]),
    # -- claude: other lines ----------------------------------------------------------------
    ("claude", '{"type":"result","x":' + DEEP + "}", [INVALID]),  # RecursionError in read_json
    ("claude", '{"type":"assistant","message":{"content":[{"type":"tool_use","id":5,"name":[]}]}}',
     [("tool_start", "", "tool", None)]),
    ("claude", '{"type":"stream_event","event":{"type":"content_block_delta",'
     '"delta":{"type":"text_delta","text":""}},"parent_tool_use_id":null}',
     [("raw",)]),  # was dropped: no event at all
    ("claude", '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t",'
     '"content":"ok","is_error":"true"}]}}',
     [("tool_end", "t", True, "ok", None)]),  # only true is a failure
    ("claude", '{"type":"user","type":"system","subtype":"api_retry","subtype":"init"}',
     [("raw",)]),  # duplicate keys: the last one counts
    ("claude", '{"type":["result"]}', [("raw",)]),
    ("claude", '{"type":null,"x":NaN}', [("raw",)]),
    ("claude", "[1, 2]", [("raw",)]),  # JSON, not an object: Raw
    ("claude", "null", [("raw",)]),
    ("claude", DEEP, [("raw",)]),
    ("claude", '{"type":"keep_alive"} trailing', [INVALID]),
    # -- codex --------------------------------------------------------------------------------
    ("codex", '{"type":"error","message":"Reconnecting... ' + DIGITS_5000 + "/" + DIGITS_5000
     + ' (stream disconnected before completion)"}',  # int() raised ValueError
     [("error", "warning", LOST, None, None)]),
    ("codex", '{"type":"turn.failed","error":{"message":"unexpected status 500 X: ' + DEEP + '"}}',
     [("error", "error", "provider_server_error", 500, None)]),  # RecursionError in from_http
    ("codex", '{"type":"turn.failed","error":"quota exceeded"}',
     [("error", "error", "unknown", None, None)]),  # the reason is not where codex puts it
    ("codex", '{"type":"turn.failed","error":{"message":null}}',
     [("error", "error", "unknown", None, None)]),
    ("codex", '{"type":"turn.completed","usage":"x"}', [TURN_END]),
    ("codex", '{"type":"turn.completed","usage":{"input_tokens":' + DIGITS_400 + "}}",
     [("turn_end", {"input_tokens": "<1329-bit integer>"})]),
    ("codex", '{"type":"item.completed","item":{"id":"c","type":"command_execution",'
     '"exit_code":0.0,"status":"completed"}}',
     [("tool_start", "c", "command_execution", {"command": None}),
      ("tool_end", "c", False, None, "completed, exit code None")]),
    ("codex", '{"type":"item.completed","item":{"id":"c2","type":"command_execution",'
     '"exit_code":false,"status":"completed"}}',  # false == 0 was a success
     [("tool_start", "c2", "command_execution", {"command": None}),
      ("tool_end", "c2", False, None, "completed, exit code None")]),
    ("codex", '{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","tool":"t",'
     '"status":[[["x"]]]}}',
     [("tool_start", "m", "t", None), ("tool_end", "m", False, None, "failed")]),
    ("codex", '{"type":"item.completed","item":{"id":"f","type":"file_change","status":{}}}',
     [("tool_start", "f", "file_change", {"changes": None}),
      ("tool_end", "f", False, None, "failed")]),
    ("codex", '{"type":"item.completed","item":{"id":"e","type":"error","message":[1]}}',
     [("error", "warning", "unknown", None, None)]),
    # -- gemini ------------------------------------------------------------------------------
    ("gemini", _gemini_failure("[API Error: You exceeded your current quota. Please retry in "
                               f"{DIGITS_400}s.]"),  # round(inf) raised OverflowError
     [TURN_END, ("error", "error", RATE, None, CAPPED)]),
    ("gemini", _gemini_failure("[API Error: You exceeded your current quota. Please retry in "
                               f"{DIGITS_400}.5ms.]"),
     [TURN_END, ("error", "error", RATE, None, CAPPED)]),
    ("gemini", _gemini_failure("[API Error: You exceeded your current quota. Please retry in "
                               "1e400s.]"),  # not a number gemini writes: no hint
     [TURN_END, ("error", "error", RATE, None, NO_HINT)]),
    ("gemini", _gemini_failure("[API Error: You exceeded your current quota. Please retry in "
                               "0.5ms.]"),
     [TURN_END, ("error", "error", RATE, None, 1)]),
    ("gemini", _retry_info("999999999999s"), [TURN_END, ("error", "error", RATE, 429, CAPPED)]),
    ("gemini", _retry_info("1e400s"), [TURN_END, ("error", "error", RATE, 429, NO_HINT)]),
    # An absurd code is no status: an error body naming nothing known (it was a status).
    ("gemini", _gemini_failure('[API Error: {"error":{"code":' + DIGITS_400 + "}}]"),
     [TURN_END, ("error", "error", "provider_server_error", None, None)]),
    ("gemini", _gemini_failure('[API Error: {"error":{"code":' + DIGITS_5000 + "}}]"),
     [TURN_END, ("error", "error", "unknown", None, None)]),  # not JSON Python reads: text
    ("gemini", _gemini_failure("[API Error: {" + DEEP + "}]"),
     [TURN_END, ("error", "error", "unknown", None, None)]),
    ("gemini", '{"type":"result","status":"error","error":"x","stats":"x"}',
     [TURN_END, ("error", "error", "unknown", None, None)]),
    ("gemini", '{"type":"result","status":"success","stats":[1]}', [TURN_END]),
    ("gemini", '{"type":"error","message":{"a":1}}', [("error", "error", "unknown", None, None)]),
    ("gemini", '{"type":"init","session_id":5}', [("raw",)]),
    ("gemini", '{"type":"message","role":["assistant"],"content":"x"}', [("raw",)]),
    ("gemini", '{"type":"error","severity":"warning","message":["x"]}',
     [("error", "warning", "unknown", None, None)]),
    ("gemini", '{"type":"tool_use","tool_id":[1],"tool_name":{},"parameters":"x"}',
     [("tool_start", "", "tool", "x")]),
    ("gemini", '{"type":"tool_result","tool_id":7,"status":"error","error":[1]}',
     [("tool_end", "", False, None, "failed")]),
    ("gemini", '{"type":"message","role":"assistant","content":"\\ud800"}',
     [("text_delta", "\ud800")]),  # the answer is the model's: kept as it came
]  # fmt: skip


@pytest.mark.parametrize(("cli", "line", "expected"), HOSTILE)
def test_hostile_line(cli: str, line: str, expected: list[tuple[Any, ...]]) -> None:
    module = MODULES[cli]
    state = module.new_state()
    events = module.parse_line(line, state)
    assert [_summary(event) for event in events] == expected
    for event in events:
        if isinstance(event, Error):
            assert event.detail.source == cli
            _assert_json_safe(event.detail.to_dict())
    result = replay(cli, line.encode("utf-8", "surrogatepass"), "", 1)
    assert isinstance(result, RunResult)
    _assert_json_safe(result.to_dict())


def _assert_json_safe(data: dict[str, Any]) -> None:
    """Strict JSON: no NaN or infinity, valid Unicode, bounded numbers."""
    json.dumps(data, allow_nan=False).encode("utf-8")


def test_numbers_kept_on_the_result_are_finite_and_bounded() -> None:
    result = replay(
        "claude",
        _claude_result(f'"is_error":false,"total_cost_usd":Infinity,"usage":{{"n":{DIGITS_400}}}'),
    )
    assert (result.success, result.cost_usd) == (True, None)
    assert result.usage == {"n": "<1329-bit integer>"}
    fine = replay("claude", _claude_result('"is_error":false,"total_cost_usd":3'))
    assert fine.cost_usd == 3.0
    assert type(fine.cost_usd) is float


def test_a_bad_cost_keeps_the_last_good_one() -> None:
    state = _claude.new_state()
    _claude.parse_line(_claude_result('"is_error":false,"total_cost_usd":0.5'), state)
    events = _claude.parse_line(_claude_result('"is_error":false,"total_cost_usd":NaN'), state)
    assert state.cost_usd == 0.5
    warning = events[0]
    assert isinstance(warning, Error)
    assert warning.detail.message == (
        "claude printed an invalid total_cost_usd: not a cost in USD, ignored"
    )
    assert warning.detail.details == {"field": "total_cost_usd"}


def test_a_deep_usage_is_kept_sixteen_levels_deep() -> None:
    deep = '{"a":' * 500 + "1" + "}" * 500
    state = _claude.new_state()
    _claude.parse_line(_claude_result(f'"is_error":false,"usage":{deep}'), state)
    level = state.usage
    for _ in range(15):
        assert isinstance(level, dict)
        level = level["a"]
    assert level == {"a": TRUNCATED}


def test_retry_details_keep_only_what_they_can_mean() -> None:
    state = _claude.new_state()
    [event] = _claude.parse_line(
        _retry(f'"attempt":{DIGITS_400},"max_retries":[3],"retry_delay_ms":NaN,"uuid":"u"'), state
    )
    assert isinstance(event, Error)
    assert event.detail.details == {"error": "rate_limit", "retrying": True}
    assert event.detail.message == "claude retries after rate_limit, with no wait given"
    [real] = _claude.parse_line(
        _retry('"attempt":1,"max_retries":2,"retry_delay_ms":538.98,"error_status":429'), state
    )
    assert isinstance(real, Error)
    assert real.detail.details == {
        "attempt": 1, "max_retries": 2, "retry_delay_ms": 539, "error": "rate_limit",
        "retrying": True,
    }  # fmt: skip
    assert real.detail.retry_after_ms == 539


def test_codex_reconnecting_with_an_absurd_count_keeps_no_count() -> None:
    message = f"Reconnecting... {DIGITS_400}/5 (stream disconnected before completion)"
    line = json.dumps({"type": "error", "message": message})
    [event] = _codex.parse_line(line, _codex.new_state())
    assert isinstance(event, Error)
    assert event.is_retry
    assert event.detail.details == {"reconnecting": message, "retrying": True}


def test_gemini_api_exit_with_an_absurd_status_uses_the_exit_code() -> None:
    body = '{"error":{"code":' + DIGITS_400 + ',"message":"Resource has been exhausted"}}'
    result = replay("gemini", b"", f"Error when talking to Gemini API _ApiError: {body}\n", 173)
    assert result.error is not None
    assert (result.error.code, result.error.status) == (RATE, 429)


def test_from_http_reads_a_body_nested_past_the_recursion_limit_as_text() -> None:
    # The classifier the three parsers pass CLI text to: it promised never to raise.
    assert from_http(500, body=DEEP).code == "provider_server_error"
    assert from_http(None, body='{"error":' + DEEP).code == "provider_bad_response"


def test_an_unreadable_line_quotes_a_short_scrubbed_sample() -> None:
    line = '{"type":"x","key":"sk-proj-' + "a" * 40 + '", "pad":"' + "b" * 500
    [event] = _claude.parse_line(line, _claude.new_state())
    assert isinstance(event, Error)
    assert event.detail.message == (
        'unparseable JSON line: {"type":"x","key":"sk-[REDACTED]", "pad":"'
        + "b" * (200 - len('{"type":"x","key":"sk-[REDACTED]", "pad":"'))
        + "..."
    )
    assert event.detail.details == {"bytes": len(line)}


def _goes_on(event: tuple[Any, ...]) -> bool:
    """An event that neither ends a run nor adds to its answer."""
    return event[0] in ("raw", "tool_start", "tool_end") or event[:2] == ("error", "warning")


CLAUDE_TEXT = (DATA / "claude" / "text.stdout").read_bytes()
CODEX_TEXT = (DATA / "codex" / "text.stdout").read_bytes()
GEMINI_TEXT = (DATA / "gemini" / "text.stdout").read_bytes()


@pytest.mark.parametrize(
    ("cli", "stdout"), [("claude", CLAUDE_TEXT), ("codex", CODEX_TEXT), ("gemini", GEMINI_TEXT)]
)
def test_the_run_goes_on_past_every_hostile_line(cli: str, stdout: bytes) -> None:
    # Every hostile line that neither ends the run nor adds text, after the first real line:
    # the run ends as it did without them, and each added its own events.
    first, rest = stdout.split(b"\n", 1)
    cases = [
        (line.encode("utf-8", "surrogatepass"), expected)
        for name, line, expected in HOSTILE
        if name == cli and all(_goes_on(event) for event in expected)
    ]
    assert len(cases) >= 5
    result = replay(cli, b"\n".join([first, *(line for line, _ in cases), rest]))
    clean = replay(cli, stdout)
    assert (result.success, result.text, result.session_id) == (True, clean.text, clean.session_id)
    added = [event for _, expected in cases for event in expected]
    assert [_summary(event) for event in result.events[1 : 1 + len(added)]] == added


# --- secrets: CLI error text is scrubbed before a detail keeps it; the answer is not ----------

OPENAI_KEY = "sk-proj-Q7x9Lm2Vn4Bc6Zt8Rw1Ks3Jd5Hf0Gp"
GOOGLE_KEY = "AIzaSyD4f8Kq2Lm9Xn3Vb7Cz1Wr5Ty0Up6Hj8"
TOKEN = "tok9f8e7d6c5b4a3210fedcba"
SECRETS = ("Q7x9Lm2Vn4Bc6Zt8Rw1Ks3Jd5Hf0Gp", "SyD4f8Kq2Lm9Xn3Vb7Cz1Wr5Ty0Up6Hj8", TOKEN)
ALL = f"key {OPENAI_KEY}, Authorization: Bearer {TOKEN}, url https://x.test/v1?key={GOOGLE_KEY}"


def _line(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode()


def _gemini_api_error(message: str) -> dict[str, Any]:
    body = {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    return {"type": "unknown", "message": f"[API Error: {json.dumps(body)}]"}


# (cli, stdout, stderr, exit code) of failed runs whose error text carries credentials.
LEAKY_RUNS: list[tuple[str, bytes, str, int]] = [
    ("claude", _line({"type": "result", "subtype": "success", "is_error": True,
                      "api_error_status": 401, "result": f"API Error: 401 {ALL}"}), "", 1),
    ("claude", _line({"type": "result", "subtype": "error_during_execution", "is_error": True,
                      "errors": [f"Failed to authenticate: {ALL}", ALL]}), "", 1),
    ("claude", _line({"type": "result", "subtype": "error_during_execution", "is_error": True,
                      "terminal_reason": ALL, "errors": []}), "", 1),
    ("claude", _line({"type": "system", "subtype": "api_retry", "error": ALL, "attempt": 1,
                      "max_retries": 1, "error_status": 401}), "", 1),
    ("claude", _line({"type": "assistant", "error": ALL, "message": {"content": []}}), "", 1),
    ("claude", b"", f"Invalid API key \u00b7 {ALL}\n", 1),
    ("claude", f'{{"type":"result","result":"{ALL}'.encode(), "", 1),  # an unreadable line
    ("claude", f'{{"type":"x\xff","key":"{ALL}"}}'.encode("latin-1"), "", 1),  # invalid UTF-8
    ("codex", _line({"type": "turn.failed", "error": {"message": (
        f"unexpected status 401 Unauthorized: {ALL}, url: https://x.test/v1/responses, "
        "request id: req_1")}}), "", 1),
    ("codex", _line({"type": "error", "message": f"Reconnecting... 1/5 (error sending {ALL})"})
     + b"\n" + _line({"type": "error", "message": f"stream disconnected before completion {ALL}"}),
     "", 1),
    ("codex", _line({"type": "item.completed", "item": {"id": "e", "type": "error",
                                                        "message": ALL}}), "", 1),
    ("codex", b"", f"error: invalid value '{OPENAI_KEY}' for '--model <MODEL>': {ALL}\n", 2),
    ("codex", b"", f"Error loading config.toml: {ALL}\n", 1),
    ("gemini", _line({"type": "result", "status": "error",
                      "error": _gemini_api_error(f"API key not valid. {ALL}")}), "", 1),
    ("gemini", _line({"type": "error", "severity": "error",
                      "message": f"[API Error: fetch failed {ALL}]"})
     + b"\n" + _line({"type": "result", "status": "error"}), "", 1),
    ("gemini", _line({"type": "result", "status": "error",
                      "error": {"type": "FatalAuthenticationError", "message": ALL}}), "", 1),
    ("gemini", _line({"type": "result", "status": "error",
                      "error": {"type": ALL, "message": "x"}}), "", 1),
    ("gemini", b"", f"Please set an Auth method: {ALL}\n", 41),
    ("gemini", b"", "Error when talking to Gemini API _ApiError: "
     + json.dumps({"error": {"code": 400, "message": f"API key not valid {ALL}"}}) + "\n", 144),
]  # fmt: skip


@pytest.mark.parametrize(("cli", "stdout", "stderr", "exit_code"), LEAKY_RUNS)
def test_no_credential_reaches_a_detail(
    cli: str, stdout: bytes, stderr: str, exit_code: int
) -> None:
    result = replay(cli, stdout, stderr, exit_code)
    error = result.error
    assert error is not None
    errors = [event.detail for event in result.events if isinstance(event, Error)]
    assert error in errors
    shown = [str(error), repr(error), json.dumps(result.to_dict()["error"])]
    shown += [json.dumps(detail.to_dict()) for detail in errors]
    assert "[REDACTED]" in "".join(shown)  # the credential was there, and scrubbed
    for secret in SECRETS:
        assert secret not in "".join(shown)


@pytest.mark.parametrize(
    ("cli", "stdout"),
    [
        ("claude", _line({"type": "result", "subtype": "success", "is_error": False,
                          "result": f"Your key: {ALL}"})),
        ("codex", _line({"type": "item.completed",
                         "item": {"id": "i", "type": "agent_message", "text": f"Your key: {ALL}"}})
         + b"\n" + _line({"type": "turn.completed"})),
        ("gemini", _line({"type": "message", "role": "assistant", "content": f"Your key: {ALL}"})
         + b"\n" + _line({"type": "result", "status": "success"})),
    ],
)  # fmt: skip
def test_an_answer_is_returned_as_the_model_wrote_it(cli: str, stdout: bytes) -> None:
    result = replay(cli, stdout)
    assert result.success
    assert result.text == f"Your key: {ALL}"
    assert [event.text for event in result.events if isinstance(event, TextDelta)] == [result.text]


# --- what a parser keeps between lines is bounded ----------------------------------------------


def _claude_stream(message_id: str, text: str) -> list[str]:
    """One streamed message as Claude prints it: deltas, then its whole line, then the stop."""

    def partial(event: dict[str, Any]) -> str:
        return json.dumps({"type": "stream_event", "event": event, "parent_tool_use_id": None})

    whole = {"id": message_id, "content": [{"type": "text", "text": text}]}
    return [
        partial({"type": "message_start", "message": {"id": message_id}}),
        partial({"type": "content_block_delta", "delta": {"type": "text_delta", "text": text}}),
        json.dumps({"type": "assistant", "message": whole, "parent_tool_use_id": None}),
        partial({"type": "message_stop"}),
    ]


def test_claude_keeps_a_bounded_set_of_streamed_message_ids() -> None:
    state = _claude.new_state()
    texts = []
    for n in range(3 * _claude._MAX_STREAMED_IDS):
        for line in _claude_stream(f"msg_{n}", "x"):
            texts += [e.text for e in _claude.parse_line(line, state) if isinstance(e, TextDelta)]
    assert len(state.streamed_ids) <= _claude._MAX_STREAMED_IDS
    assert "".join(texts) == state.text == "x" * 3 * _claude._MAX_STREAMED_IDS  # none repeated


def test_claude_forgets_old_ids_but_not_deltas_without_a_message() -> None:
    state = _claude.new_state()
    orphan = json.dumps({"type": "stream_event", "parent_tool_use_id": None, "event": {
        "type": "content_block_delta", "delta": {"type": "text_delta", "text": "o"}}})  # fmt: skip
    _claude.parse_line(orphan, state)
    for n in range(_claude._MAX_STREAMED_IDS + 1):
        for line in _claude_stream(f"msg_{n}", "x"):
            _claude.parse_line(line, state)
    assert None in state.streamed_ids
    assert len(state.streamed_ids) < _claude._MAX_STREAMED_IDS


def _gemini_chunk(text: str) -> str:
    return json.dumps({"type": "message", "role": "assistant", "content": text, "delta": True})


def test_gemini_stops_recognising_a_retry_past_its_room() -> None:
    state = _gemini.new_state()
    chunks = [f"{n:05d}" + "y" * 995 for n in range(2000)]  # 2 MB of answer, in 1000s
    for chunk in chunks:
        _gemini.parse_line(_gemini_chunk(chunk), state)
    assert state.segment == []
    assert state.held == []
    assert state.replay_room < 0
    # Past the room, a repeat of the answer's start is sent, not held back.
    sent = [_gemini.parse_line(_gemini_chunk(chunk), state) for chunk in chunks[:3]]
    assert [[_summary(e) for e in events] for events in sent] == [
        [("text_delta", chunk)] for chunk in chunks[:3]
    ]
    assert state.held == []


def test_gemini_replay_room_comes_back_with_a_new_answer() -> None:
    state = _gemini.new_state()
    for n in range(1200):
        _gemini.parse_line(_gemini_chunk(f"{n:04d}" + "y" * 996), state)
    assert state.replay_room < 0
    _gemini.parse_line('{"type":"tool_use","tool_name":"ls","tool_id":"t","parameters":{}}', state)
    assert (state.segment, state.replay_room) == ([], _gemini._REPLAY_ROOM)
    for chunk in ("A", "B", "A", "B", "C"):
        _gemini.parse_line(_gemini_chunk(chunk), state)
    assert state.text.endswith("yABC")  # the retried "A", "B" sent once again
    assert state.segment == ["A", "B", "C"]

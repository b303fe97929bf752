"""The AI CLIs' MCP failures carry the codes `rc.classify_response` gives the same failure.

Claude Code's and Gemini CLI's lines were printed by the real CLIs (claude 2.1.197, gemini
0.61.0) running against a FakeProvider with tests/support/mcp_server.py as their MCP server
(ids and timestamps as printed). Codex 0.171 defers MCP tools behind its `tool_search`, so its
`mcp_tool_call` items are written from its event schema (`codex-rs/exec/src/exec_events.rs`,
../shared/reference/ai-clis.md section 2.2): `result{content,structured_content}`,
`error{message}`, `status`.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable._core.events import Error, Event, ToolEnd
from recoverable._core.public import public_view
from recoverable.agents import _claude, _codex, _gemini, _mcp_failures
from recoverable.agents._parsing import ParseState


def _events(module: Any, lines: list[str]) -> list[Event]:
    state: ParseState = module.new_state()
    events: list[Event] = []
    for line in lines:
        events.extend(module.parse_line(line, state))
    return events


def _tool_end(module: Any, lines: list[str]) -> ToolEnd:
    [end] = [event for event in _events(module, lines) if isinstance(event, ToolEnd)]
    return end


def _claude_result(content: str, use_result: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "content": content,
                        "is_error": True,
                        "tool_use_id": "toolu_fake0001",
                    }
                ],
            },
            "parent_tool_use_id": None,
            "session_id": "4ae6beee-712d-40e4-a224-69aa7218c6c3",
            "uuid": "bde0279c-006f-4d61-882f-6a443091d273",
            "timestamp": "2026-12-02T06:06:07.236Z",
            "tool_use_result": use_result,
        }
    )


CLAUDE_START = (
    '{"type":"assistant","message":{"id":"msg_fake0001","type":"message","role":"assistant",'
    '"model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_fake0001",'
    '"name":"mcp__probe__boom","input":{}}]},"parent_tool_use_id":null,"session_id":"s"}'
)

# content, tool_use_result -> (code, retryable)
CLAUDE_TOOL_RESULTS: list[tuple[str, str, str, bool]] = [
    ("Error executing tool boom", "Error: Error executing tool boom",
     "tool_execution_failed", False),
    ("<tool_use_error>Error: No such tool available: mcp__probe__nope</tool_use_error>",
     "Error: No such tool available: mcp__probe__nope", "tool_not_found", False),
    ("<tool_use_error>Error: No such tool available: mcp__probe__boom. The MCP server 'probe' is "
     "still connecting. Call WaitForMcpServers to wait for it, then try again.</tool_use_error>",
     "Error: No such tool available: mcp__probe__boom. The MCP server 'probe' is still "
     "connecting. Call WaitForMcpServers to wait for it, then try again.", "unavailable", True),
    ("Error executing tool add: 1 validation error for addArguments\na\n  Input should be a "
     "valid integer, unable to parse string as an integer", "Error: Error executing tool add",
     "tool_input_invalid", False),
]  # fmt: skip


@pytest.mark.parametrize(("content", "use_result", "code", "retryable"), CLAUDE_TOOL_RESULTS)
def test_claude_mcp_tool_failures(
    content: str, use_result: str, code: str, retryable: bool
) -> None:
    end = _tool_end(_claude, [CLAUDE_START, _claude_result(content, use_result)])
    assert end.success is False
    assert end.detail is not None
    assert (end.detail.code, end.detail.retryable, end.detail.source) == (code, retryable, "claude")


def test_a_claude_tool_failure_that_is_no_mcp_servers_reads_as_before() -> None:
    end = _tool_end(_claude, [CLAUDE_START, _claude_result("Exit code 1", "Error: Exit code 1")])
    assert end.detail is not None and end.detail.code == "tool_execution_failed"


CLAUDE_INIT = (
    '{"type":"system","subtype":"init","cwd":"<tmp>/work","session_id":"8684621c-a152-49f8-ba8f-'
    'c4b4eb11e641","tools":["Task","Bash"],"mcp_servers":[{"name":"broken","status":"failed"},'
    '{"name":"exits","status":"failed"},{"name":"probe","status":"pending"},'
    '{"name":"remote","status":"needs-auth"},{"name":"ok","status":"connected"}],'
    '"model":"claude-opus-4-8[1m]","permissionMode":"default","apiKeySource":"ANTHROPIC_API_KEY",'
    '"claude_code_version":"2.1.197"}'
)


def test_claude_init_names_the_mcp_servers_that_failed() -> None:
    warnings = [event for event in _events(_claude, [CLAUDE_INIT]) if isinstance(event, Error)]
    found = [
        (w.severity, w.detail.code, w.detail.retryable, w.detail.details["mcp_server"])
        for w in warnings
    ]
    assert found == [
        ("warning", "unavailable", False, "broken"),
        ("warning", "unavailable", False, "exits"),
        ("warning", "unauthenticated", False, "remote"),
    ]
    assert all(w.detail.fix_required for w in warnings)
    # No server named in a sentence a person reads.
    assert all("broken" not in w.detail.user_message for w in warnings)


def test_a_hostile_mcp_server_name_is_scrubbed_bounded_and_kept_from_public_outputs() -> None:
    secret = "sk-ant-api03-" + "A" * 90
    name = f"srv {secret} " + "n" * 5000
    servers = [
        {"name": name, "status": "failed"},
        {"name": {"nested": [1, 2]}, "status": "needs-auth"},  # not text: not kept
        {"name": "x", "status": {"deep": "failed"}},  # not a status: says nothing
    ]
    line = json.dumps(
        {"type": "system", "subtype": "init", "session_id": "s", "mcp_servers": servers}
    )
    failed, needs_auth = [e.detail for e in _events(_claude, [line]) if isinstance(e, Error)]
    kept = failed.details["mcp_server"]
    assert kept.startswith("srv sk-[REDACTED] n") and secret not in kept
    assert len(kept) <= 203  # 200 characters and the ellipsis
    assert needs_auth.details == {"mcp_server_status": "needs-auth"}
    for detail in (failed, needs_auth):
        shown = json.dumps(dataclasses.asdict(public_view(detail, expose_message=True)))
        assert "srv" not in shown and "nested" not in shown and "sk-" not in shown


def test_claude_init_without_mcp_servers_says_nothing_more() -> None:
    line = '{"type":"system","subtype":"init","session_id":"s","mcp_servers":[]}'
    assert not [event for event in _events(_claude, [line]) if isinstance(event, Error)]


GEMINI_BOOM = [
    '{"type":"tool_use","timestamp":"2026-12-02T06:08:06.379Z","tool_name":"mcp_probe_boom",'
    '"tool_id":"mcp_probe_boom__mcp_probe_boom_1796191686268_0","parameters":{}}',
    '{"type":"tool_result","timestamp":"2026-12-02T06:08:07.878Z","tool_id":"mcp_probe_boom__mcp_'
    'probe_boom_1796191686268_0","status":"error","output":"Error: MCP tool \'boom\' reported an '
    'error.","error":{"type":"mcp_tool_error","message":"MCP tool \'boom\' reported tool error '
    'for function call: {\\"name\\":\\"boom\\",\\"args\\":{}} with response: [{\\"functionRespon'
    'se\\":{\\"name\\":\\"boom\\",\\"response\\":{\\"content\\":[{\\"type\\":\\"text\\",\\"text\\'
    '":\\"Error executing tool boom\\"}],\\"isError\\":true}}}]"}}',
]
GEMINI_NOPE = [
    '{"type":"tool_use","timestamp":"2026-12-02T06:08:16.509Z","tool_name":"mcp_probe_nope",'
    '"tool_id":"mcp_probe_nope__mcp_probe_nope_1796191696509_0","parameters":{}}',
    '{"type":"tool_result","timestamp":"2026-12-02T06:08:16.647Z","tool_id":"mcp_probe_nope__mcp_'
    'probe_nope_1796191696509_0","status":"error","output":"Tool \\"mcp_probe_nope\\" not found. '
    'Did you mean one of: \\"mcp_probe_boom\\", \\"mcp_probe_die\\", \\"mcp_probe_add\\"?",'
    '"error":{"type":"tool_not_registered","message":"Tool \\"mcp_probe_nope\\" not found. Did you'
    ' mean one of: \\"mcp_probe_boom\\", \\"mcp_probe_die\\", \\"mcp_probe_add\\"?"}}',
]


def _rate_limited_envelope() -> str:
    """The same Gemini line for a server whose result carries our envelope."""
    response = {
        "content": [{"type": "text", "text": "Wait 1 s and call again."}],
        "structuredContent": {"code": "rate_limited", "message": "m", "retry_after_ms": 1000,
                              "retryable": True},
        "isError": True,
    }  # fmt: skip
    quoted = json.dumps([{"functionResponse": {"name": "limited", "response": response}}])
    message = (
        "MCP tool 'limited' reported tool error for function call: "
        f'{{"name":"limited","args":{{}}}} with response: {quoted}'
    )
    return json.dumps(
        {
            "type": "tool_result",
            "tool_id": "t1",
            "status": "error",
            "output": "Error: MCP tool 'limited' reported an error.",
            "error": {"type": "mcp_tool_error", "message": message},
        }
    )


@pytest.mark.parametrize(
    ("lines", "code", "wait"),
    [
        (GEMINI_BOOM, "tool_execution_failed", None),
        (GEMINI_NOPE, "tool_not_found", None),
        (
            [
                '{"type":"tool_use","tool_name":"mcp_probe_limited","tool_id":"t1"}',
                _rate_limited_envelope(),
            ],
            "rate_limited",
            1000,
        ),
    ],
)
def test_gemini_mcp_tool_failures(lines: list[str], code: str, wait: int | None) -> None:
    end = _tool_end(_gemini, lines)
    assert end.detail is not None
    assert (end.detail.code, end.detail.retry_after_ms, end.detail.source) == (code, wait, "gemini")


def test_gemini_stderr_names_failed_mcp_servers() -> None:
    state = _gemini.new_state()
    [warning] = _gemini.stderr_line("MCP issues detected. Run /mcp list for status.", state)
    assert isinstance(warning, Error)
    assert (warning.severity, warning.detail.code, warning.detail.retryable) == (
        "warning",
        "unavailable",
        False,
    )


def _codex_item(**fields: Any) -> str:
    item = {"id": "item_4", "type": "mcp_tool_call", "server": "probe", "tool": "boom",
            "arguments": {}, "result": None, "error": None, "status": "failed"}  # fmt: skip
    item.update(fields)
    return json.dumps({"type": "item.completed", "item": item})


CODEX_ITEMS: list[tuple[str, str, int | None]] = [
    (_codex_item(result={"content": [{"type": "text", "text": "Error executing tool boom"}],
                         "structured_content": None}), "tool_execution_failed", None),
    (_codex_item(result={"content": [{"type": "text", "text": "Unknown tool: nope"}],
                         "structured_content": None}), "tool_not_found", None),
    (_codex_item(result={"content": [{"type": "text", "text": "Wait 1 s and call again."}],
                         "structured_content": {"code": "rate_limited", "message": "m",
                                                "retryable": True, "retry_after_ms": 1000}}),
     "rate_limited", 1000),
    (_codex_item(error={"message": "tool call error: tool call failed for `probe/boom`"}),
     "tool_execution_failed", None),
]  # fmt: skip


@pytest.mark.parametrize(("line", "code", "wait"), CODEX_ITEMS)
def test_codex_mcp_tool_call_items(line: str, code: str, wait: int | None) -> None:
    end = _tool_end(_codex, [line])
    assert end.success is False
    assert end.detail is not None
    assert (end.detail.code, end.detail.retry_after_ms) == (code, wait)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=_json, text=st.text(max_size=300))
def test_the_mcp_readers_never_raise(value: Any, text: str) -> None:
    shaped = value if isinstance(value, dict) else {"result": value, "error": value}
    for detail in (
        _mcp_failures.mcp_text_failure(text, "claude"),
        _mcp_failures.mcp_item_failure(shaped),
        _mcp_failures.gemini_mcp_failure({"type": "mcp_tool_error", "message": text}),
        _mcp_failures.gemini_mcp_failure(shaped),
        *_mcp_failures.claude_mcp_servers(value),
    ):
        assert detail is None or detail.user_message == rc.codes.resolve(detail.code).user_message


def test_a_gemini_message_nested_past_the_json_parser_is_a_plain_failure() -> None:
    message = "MCP tool 'x' reported tool error for function call: {} with response: " + "[" * 5000
    detail = _mcp_failures.gemini_mcp_failure({"type": "mcp_tool_error", "message": message})
    assert detail is not None and detail.code == "tool_execution_failed"

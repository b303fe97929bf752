"""A CLI that dies before its terminal event, a tool that fails with provider text, and a
status no HTTP answer has: read through the same phrase tables as the providers' answers,
at word boundaries anywhere in a line, before `cli_crashed` or `unknown` is chosen."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import recoverable as rc
from recoverable import agents
from recoverable.agents import ToolEnd

# What each CLI prints before the failure: its session start, no terminal event.
STARTS = {
    "claude": json.dumps({"type": "system", "subtype": "init", "session_id": "s1"}),
    "codex": json.dumps({"type": "thread.started", "thread_id": "t1"}),
    "gemini": json.dumps({"type": "init", "session_id": "s1", "model": "gemini-2.5-flash"}),
}

# (stderr, code): a death the stderr explains, whatever the CLI.
STDERR_DEATHS = [
    ("Request failed: 429 Too Many Requests", "provider_rate_limited"),
    ("Error: request failed with status 503", "provider_overloaded"),
    ("fatal: HTTP 500 while streaming", "provider_server_error"),
    ("TypeError: upstream said 401 Unauthorized", "provider_auth_failed"),
    ("Error: Your credit balance is too low to access the API.", "provider_quota_exceeded"),
    ("Uncaught: prompt is too long: 250000 tokens > 200000 maximum", "provider_context_too_long"),
    ("Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error'}}",
     "provider_overloaded"),
    ("warning: slow start\nError: 429 Too Many Requests\n    at fetch (node:internal)",
     "provider_rate_limited"),
]  # fmt: skip


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
@pytest.mark.parametrize(("stderr", "code"), STDERR_DEATHS)
def test_stderr_of_a_cli_that_died_is_read_before_cli_crashed(
    cli: str, stderr: str, code: str
) -> None:
    result = agents.replay(cli, STARTS[cli] + "\n", stderr, exit_code=1)
    assert result.error is not None
    assert (result.error.code, result.error.retryable, result.error.source) == (
        code, rc.codes[code].retryable, cli,
    )  # fmt: skip
    assert result.error.details["exit_code"] == 1


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
def test_partial_stdout_that_is_not_json_is_read_too(cli: str) -> None:
    stdout = f"{STARTS[cli]}\nAPI Error: 503 Service Unavailable\n"
    result = agents.replay(cli, stdout, "", exit_code=1)
    assert result.error is not None
    assert (result.error.code, result.error.source) == ("provider_overloaded", cli)


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
def test_stderr_goes_before_stdout(cli: str) -> None:
    stdout = f"{STARTS[cli]}\nstatus 503\n"
    result = agents.replay(cli, stdout, "Error: 429 Too Many Requests", exit_code=1)
    assert result.error is not None
    assert result.error.code == "provider_rate_limited"


@pytest.mark.parametrize(
    ("cli", "stderr", "code"),
    [
        ("claude", "Error: Not logged in · Please run /login", "cli_not_authenticated"),
        ("claude", "Error: error: unknown option '--bogus'", "cli_invalid_arguments"),
        ("codex", "Error: Not inside a trusted directory and --skip-git-repo-check was not"
                  " specified.", "cli_untrusted_workspace"),
        ("gemini", "[ERROR] Gemini CLI is not running in a trusted directory.",
         "cli_untrusted_workspace"),
    ],
)  # fmt: skip
def test_a_clis_own_sentences_after_a_prefix(cli: str, stderr: str, code: str) -> None:
    result = agents.replay(cli, "", stderr, exit_code=1)
    assert result.error is not None
    assert result.error.code == code


# What looks like a status or a phrase but is none: the CLI crashed, nothing says why.
NOT_EVIDENCE = [
    "panic at foo.go:429: index out of range",
    "compiled in 503 ms",
    "retrying request 429 of 1000",
    "E: handler-status429 missing",
    "preoverloaded cache",
    "the test 'rate limit exceeded' passed",  # a rate limit is no provider message
    "ids: 401,403,404",
]


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
@pytest.mark.parametrize("stderr", NOT_EVIDENCE)
def test_no_false_positives(cli: str, stderr: str) -> None:
    result = agents.replay(cli, STARTS[cli] + "\n", stderr, exit_code=1)
    assert result.error is not None
    assert (result.error.code, result.error.retryable) == ("cli_crashed", False)


@pytest.mark.parametrize("cli", agents.CLI_NAMES)
def test_a_terminal_event_still_decides(cli: str) -> None:
    # A success with a scary stderr is a success.
    ends = {
        "claude": {"type": "result", "subtype": "success", "is_error": False, "result": "hi"},
        "codex": {"type": "turn.completed", "usage": {}},
        "gemini": {"type": "result", "status": "success", "stats": {}},
    }
    stdout = f"{STARTS[cli]}\n{json.dumps(ends[cli])}\n"
    result = agents.replay(cli, stdout, "Error: 429 Too Many Requests", exit_code=1)
    assert result.success is True


# --- tool failures -----------------------------------------------------------------------------


def _claude_tool(text: str) -> str:
    use = {
        "type": "assistant",
        "message": {
            "id": "m1",
            "content": [{"type": "tool_use", "id": "tu1", "name": "Task", "input": {}}],
        },
    }
    result = {
        "type": "user",
        "message": {
            "content": [
                {"type": "tool_result", "tool_use_id": "tu1", "content": text, "is_error": True}
            ]
        },
    }
    return f"{json.dumps(use)}\n{json.dumps(result)}\n"  # fmt: skip


def _codex_tool(output: str) -> str:
    item = {"id": "i1", "type": "command_execution", "command": "curl x", "exit_code": 22,
            "aggregated_output": output, "status": "failed"}  # fmt: skip
    return json.dumps({"type": "item.completed", "item": item}) + "\n"


def _gemini_tool(message: str) -> str:
    use = {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "g1", "parameters": {}}
    result = {"type": "tool_result", "tool_id": "g1", "status": "error",
              "error": {"type": "unknown", "message": message}}  # fmt: skip
    return f"{json.dumps(use)}\n{json.dumps(result)}\n"


TOOLS: dict[str, Any] = {"claude": _claude_tool, "codex": _codex_tool, "gemini": _gemini_tool}

# (cli, the failed tool's text, code): a sub-agent's API failure is the provider's; a
# command's own words are the command's.
TOOL_CASES = [
    ("claude", "API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"}}",
     "provider_rate_limited"),
    ("claude", "API Error: Request rejected (429) · Number of request tokens has exceeded your "
               "per-minute rate limit", "provider_rate_limited"),
    ("claude", "API Error: 529 Overloaded. This is a server-side issue", "provider_overloaded"),
    ("claude", "API Error: Unable to connect to API (ECONNRESET)", "provider_connection_lost"),
    ("claude", "Exit code 1\ncurl: (22) HTTP 429", "rate_limited"),
    ("claude", "Exit code 1\nls: cannot access 'x': No such file or directory",
     "tool_execution_failed"),
    ("codex", "fatal: unable to access 'https://example.invalid/': Could not resolve host: "
              "example.invalid", "network_error"),
    ("codex", "Error: 429 Too Many Requests", "rate_limited"),
    ("codex", "boom", "tool_execution_failed"),
    ("gemini", "[API Error: Resource has been exhausted (e.g. check quota).]",
     "provider_rate_limited"),
    ("gemini", "Command exited with code 1: permission denied", "tool_execution_failed"),
]  # fmt: skip


@pytest.mark.parametrize(("cli", "text", "code"), TOOL_CASES)
def test_a_failed_tool_carries_a_classified_detail(cli: str, text: str, code: str) -> None:
    result = agents.replay(cli, TOOLS[cli](text), "", exit_code=1)
    ends = [event for event in result.events if isinstance(event, ToolEnd)]
    assert len(ends) == 1
    assert ends[0].success is False
    assert ends[0].detail is not None
    assert (ends[0].detail.code, ends[0].detail.source) == (code, cli)
    assert agents.event_to_dict(ends[0])["detail"]["code"] == code  # JSON-safe


def test_a_tool_that_succeeded_has_no_detail() -> None:
    item = {"id": "i1", "type": "command_execution", "command": "echo", "exit_code": 0,
            "aggregated_output": "429 Too Many Requests", "status": "completed"}  # fmt: skip
    result = agents.replay("codex", json.dumps({"type": "item.completed", "item": item}), "", 1)
    ends = [event for event in result.events if isinstance(event, ToolEnd)]
    assert (ends[0].success, ends[0].detail) == (True, None)


def test_a_credential_in_a_failed_tools_text_is_scrubbed() -> None:
    key = "sk-ant-api03-" + "A" * 40
    result = agents.replay("claude", _claude_tool(f"API Error: 401 bad key {key}"), "", 1)
    end = next(event for event in result.events if isinstance(event, ToolEnd))
    assert end.detail is not None
    assert key not in json.dumps(end.detail.to_dict())


# --- from_http: a status no HTTP answer has ----------------------------------------------------


@pytest.mark.parametrize("status", [0, 1, 99, 600, 700, 999, 1000, -429, 10**30])
def test_from_http_outside_100_599_is_unknown(status: int) -> None:
    detail = rc.from_http(status, {"retry-after": "5"}, {"error": {"type": "overloaded_error"}})
    assert (detail.code, detail.retryable, detail.status, detail.retry_after_ms) == (
        "unknown", False, None, None,
    )  # fmt: skip


@given(st.integers().filter(lambda n: not 100 <= n <= 599))
def test_any_status_outside_the_range_is_unknown(status: int) -> None:
    assert rc.from_http(status).code == "unknown"


@given(st.integers(min_value=100, max_value=599))
def test_any_status_inside_the_range_is_kept(status: int) -> None:
    detail = rc.from_http(status)
    assert detail.status == status
    assert detail.code != "unknown"


@given(st.text(max_size=300))
def test_any_stderr_never_raises(stderr: str) -> None:
    for cli in agents.CLI_NAMES:
        result = agents.replay(cli, "", stderr, exit_code=1)
        assert result.error is not None


# --- the wordings the fault matrix found, as each CLI prints them ------------------------------


def _claude_failure(text: str, status: int, literal: str) -> str:
    announce = {"type": "assistant", "error": literal, "message": {"content": []}}
    result = {"type": "result", "subtype": "success", "is_error": True,
              "api_error_status": status, "result": text}  # fmt: skip
    return f"{json.dumps(announce)}\n{json.dumps(result)}\n"


@pytest.mark.parametrize(
    ("text", "status", "literal", "code"),
    [
        # Claude's literal says authentication for a 403 too: the status tells them apart.
        ("Failed to authenticate. API Error: 403 Your API key does not have permission to use"
         " the specified resource.", 403, "authentication_failed", "provider_permission_denied"),
        ("Failed to authenticate. API Error: 401 invalid x-api-key", 401,
         "authentication_failed", "provider_auth_failed"),
        ("Invalid API key · Fix external API key", 401, "authentication_failed",
         "provider_auth_failed"),
        # ... and invalid_request for a content filter: the provider's words tell.
        ("API Error: 400 Output blocked by content filtering policy", 400, "invalid_request",
         "provider_content_filtered"),
        ("API Error: 400 prompt is too long: 210000 tokens > 200000 maximum", 400,
         "invalid_request", "provider_context_too_long"),
        ("API Error: 400 messages: at least one message is required", 400, "invalid_request",
         "provider_invalid_request"),
        ("Please run /login · API Error: 401 OAuth token has expired", 401,
         "authentication_failed", "cli_not_authenticated"),
    ],
)  # fmt: skip
def test_claudes_api_error_status_and_words(
    text: str, status: int, literal: str, code: str
) -> None:
    result = agents.replay("claude", _claude_failure(text, status, literal), "", exit_code=1)
    assert result.error is not None
    assert result.error.code == code


@pytest.mark.parametrize(
    "message",
    [
        "The model response was blocked due to safety settings.",
        "The model response was blocked due to recitation/copyright filters.",
        "Model stream ended due to safety settings (SAFETY) with empty response text.",
    ],
)
def test_geminis_safety_sentences(message: str) -> None:
    error = {"type": "error", "severity": "error", "message": message}
    result = {"type": "result", "status": "error", "stats": {}}
    stdout = f"{STARTS['gemini']}\n{json.dumps(error)}\n{json.dumps(result)}\n"
    replayed = agents.replay("gemini", stdout, "", exit_code=1)
    assert replayed.error is not None
    assert (replayed.error.code, replayed.error.retryable) == ("provider_content_filtered", False)


def test_openais_in_stream_overload_is_an_overload() -> None:
    body = {"error": {"message": "The server is overloaded or not ready yet.",
                      "type": "server_error", "param": None, "code": None}}  # fmt: skip
    assert rc.from_http(200, None, body).code == "provider_overloaded"
    assert rc.from_http(None, None, body).code == "provider_overloaded"


def test_a_huge_failed_tool_output_is_read_from_its_end() -> None:
    output = ("x" * 1999 + "\n") * 5000 + "Error: 429 Too Many Requests"  # 10 MB, reason last
    result = agents.replay("codex", _codex_tool(output), "", exit_code=1, max_line_bytes=1 << 25)
    end = next(event for event in result.events if isinstance(event, ToolEnd))
    assert end.detail is not None
    assert end.detail.code == "rate_limited"


# -- plain-word deaths: the seed's rule (AgentOS classifyError), in its one order ------------

# (stderr, code, the CLIs it holds for): a CLI that died printing only plain words.
PLAIN_WORD_DEATHS = [
    ("Unauthorized", "cli_not_authenticated", agents.CLI_NAMES),
    ("Error: authentication required", "cli_not_authenticated", agents.CLI_NAMES),
    ("Sign In", "cli_not_authenticated", ("gemini",)),
    ("Rate limit exceeded", "provider_rate_limited", agents.CLI_NAMES),
    ("RESOURCE_EXHAUSTED", "provider_rate_limited", ("gemini",)),
    ("context length too long", "provider_context_too_long", agents.CLI_NAMES),
    ("Error: Invalid value for --input-format", "cli_invalid_arguments", agents.CLI_NAMES),
    ("error: unrecognized option '--frobnicate'", "cli_invalid_arguments", agents.CLI_NAMES),
    # one fixed order when several match: arguments, then sign-in, rate, context
    ("unauthorized: rate limit exceeded", "cli_not_authenticated", agents.CLI_NAMES),
    ("rate limit hit; context too long", "provider_rate_limited", agents.CLI_NAMES),
]
# Words inside paths, file names and numbers are no evidence: each stays cli_crashed.
NOT_PLAIN_WORDS = [
    "panic: runtime error at foo.go:429",
    "loading /src/authentication/handler.js failed",
    "took 429 ms, then segfault",
    "node_modules/rate-limit/index.js:12 TypeError",
    "Error in unauthorized_access.py",
    "SIGN_IN_FLOW_V2 crashed",
]


@pytest.mark.parametrize(("stderr", "code", "clis"), PLAIN_WORD_DEATHS)
def test_a_plain_word_death_is_read_by_the_seeds_rule(
    stderr: str, code: str, clis: tuple[str, ...]
) -> None:
    for cli in agents.CLI_NAMES:
        result = agents.replay(cli, STARTS[cli] + "\n", stderr, exit_code=1)
        assert result.error is not None
        expected = code if cli in clis else "cli_crashed"
        assert (cli, result.error.code) == (cli, expected)
        # the same text, the same code, through rc.from_process with the CLI's argv
        assert rc.from_process(1, stderr=stderr, argv=[cli, "-p", "x"]).code == expected


@pytest.mark.parametrize("stderr", NOT_PLAIN_WORDS)
@pytest.mark.parametrize("cli", agents.CLI_NAMES)
def test_words_in_paths_and_numbers_are_no_evidence(cli: str, stderr: str) -> None:
    result = agents.replay(cli, STARTS[cli] + "\n", stderr, exit_code=1)
    assert result.error is not None
    assert result.error.code == "cli_crashed"


def test_a_crashed_cli_s_error_carries_its_stderr_tail_scrubbed_and_bounded() -> None:
    key = "sk-proj-" + "Q" * 40
    stderr = "x" * 5000 + f"\nfatal: OPENAI_API_KEY={key} made the worker die"
    result = agents.replay("claude", STARTS["claude"] + "\n", stderr, exit_code=3)
    assert result.error is not None
    assert result.error.code == "cli_crashed"
    tail = result.error.details["stderr_tail"]
    assert tail.endswith("made the worker die")
    assert key not in tail
    assert len(tail) <= 2000
    with pytest.raises(rc.RecoverableError) as raised:
        result.raise_for_error()
    assert raised.value.details["stderr_tail"] == tail  # whoever catches it can show it


@given(st.text(max_size=300))
def test_the_plain_word_rule_never_raises(stderr: str) -> None:
    for cli in agents.CLI_NAMES:
        result = agents.replay(cli, STARTS[cli] + "\n", stderr, exit_code=1)
        assert result.error is not None


def _dying_cli(folder: Path, cli: str, stderr: str) -> Path:
    """A real process standing in for `cli`: its session start on stdout, `stderr`, exit 1."""
    script = folder / f"{cli}-stand-in"
    body = f"import sys\nprint({STARTS[cli]!r}, flush=True)\nsys.stderr.write({stderr!r})\n"
    script.write_text(f"#!{sys.executable}\n{body}sys.exit(1)\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(("stderr", "code", "clis"), PLAIN_WORD_DEATHS)
def test_a_real_process_dying_in_plain_words_is_read_alike(
    tmp_path: Path, stderr: str, code: str, clis: tuple[str, ...]
) -> None:
    for cli in agents.CLI_NAMES:
        result = agents.run_sync("hi", cli, executable=str(_dying_cli(tmp_path, cli, stderr)))
        assert result.error is not None
        expected = code if cli in clis else "cli_crashed"
        assert (cli, result.error.code, result.exit_code) == (cli, expected, 1)


def test_a_real_crashed_process_s_error_carries_its_stderr_tail(tmp_path: Path) -> None:
    key = "sk-proj-" + "Q" * 40
    stderr = "x" * 5000 + f"\nfatal: OPENAI_API_KEY={key} made the worker die"
    result = agents.run_sync("hi", "claude", executable=str(_dying_cli(tmp_path, "claude", stderr)))
    with pytest.raises(rc.RecoverableError) as raised:
        result.raise_for_error()
    tail = raised.value.details["stderr_tail"]
    assert raised.value.code == "cli_crashed"
    assert tail.endswith("made the worker die") and len(tail) <= 2000
    assert key not in tail

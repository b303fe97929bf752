"""The AI SDK's UI message stream, read by the `ai` npm package's own client (its
DefaultChatTransport, its chunk schema and readUIMessageStream, under node) from our real
uvicorn server: the parts useChat builds, the data part a page branches on, the sentence a
failure before the stream shows, a retried attempt dropped, a chat's resume."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import recoverable as rc
from recoverable import agents, wire
from recoverable.testing import Fault
from recoverable.wire._ai_sdk import ERROR_PART, SUPERSEDED_PART

from ..support.wire import MARKER
from ..support.wire_app import AppState

READER = Path(__file__).parents[1] / "tools" / "ai_sdk_reader.mjs"
REPO = Path(__file__).resolve().parents[2]


def _ai_package() -> Path:
    """The `ai` package's entry point: $RECOVERABLE_NODE_MODULES, else <repo>/node_modules."""
    root = Path(os.environ.get("RECOVERABLE_NODE_MODULES") or REPO / "node_modules")
    entry = root / "ai" / "dist" / "index.js"
    if not entry.is_file():
        pytest.fail(f"the `ai` npm package is not in {root}: run `npm install` (package.json)")
    return entry


def _node(*args: str) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None, "node is needed (scripts/test installs the npm packages with it)"
    done = subprocess.run(
        [node, str(READER), args[0], _ai_package().as_uri(), *args[1:]],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["invalid"] == []  # every chunk passes the package's own chunk schema
    return result


def _read(served: tuple[AppState, str], kind: str, fault: Fault | None = None) -> dict[str, Any]:
    state, url = served
    state.fake.reset()
    if fault is not None:
        state.fake.fail(fault)
    return _node(f"{url}/ui/{kind}")


def _texts(result: dict[str, Any]) -> list[str]:
    return [part["text"] for part in result["parts"] if part["type"] == "text"]


def _error_part(result: dict[str, Any]) -> dict[str, Any]:
    (part,) = [part for part in result["parts"] if part["type"] == ERROR_PART]
    data: dict[str, Any] = part["data"]
    return data


def test_the_sdk_reads_the_text(served: tuple[AppState, str]) -> None:
    result = _read(served, "chat")
    assert (result["errors"], result["thrown"]) == ([], None)
    texts = [part for part in result["parts"] if part["type"] == "text"]
    assert [part["text"] for part in texts] == ["Hello from FakeProvider."]
    assert texts[0]["state"] == "done"


def test_the_sdk_surfaces_the_error_part(served: tuple[AppState, str]) -> None:
    result = _read(served, "chat", Fault.cut_stream(after=2))
    sentence = rc.codes["provider_connection_lost"].user_message
    assert result["errors"] == [sentence]
    text = "".join(_texts(result))
    assert text  # what came before the cut is kept
    assert "Hello from FakeProvider.".startswith(text)
    # the code, retryable and the wait: a data part the page reads from the message's parts
    data = _error_part(result)
    assert {key: data[key] for key in ("code", "retryable", "retry_after_ms", "user_message")} == {
        "code": "provider_connection_lost", "retryable": True, "retry_after_ms": 1000,
        "user_message": sentence,
    }  # fmt: skip
    assert data["step"] == 1
    types = [chunk["type"] for chunk in result["chunks"]]
    assert types[types.index(ERROR_PART) + 1] == "error"  # the part first, then the error


def test_a_late_failure_carries_the_seeds_fields(served: tuple[AppState, str]) -> None:
    before = int(time.time() * 1000)
    result = _read(served, "late")
    data = _error_part(result)
    assert {key: data[key] for key in ("code", "retryable", "retry_after_ms", "agent",
                                       "agent_kind", "step")} == {
        "code": "provider_rate_limited", "retryable": True, "retry_after_ms": 2500,
        "agent": "claude", "agent_kind": "cli", "step": 2,
    }  # fmt: skip
    assert before <= data["timestamp"] <= int(time.time() * 1000)
    assert result["errors"] == [rc.codes["provider_rate_limited"].user_message]
    assert _texts(result) == ["Hel"]
    assert MARKER not in json.dumps(result)


@pytest.mark.parametrize(
    ("kind", "fault", "status", "code"),
    [
        ("chat", Fault.insufficient_quota(), 502, "provider_quota_exceeded"),
        ("chat", Fault.rate_limited(retry_after=4), 503, "provider_rate_limited"),
        ("refused", None, 400, "invalid_input"),
        ("unsupported", None, 501, "not_supported"),
    ],
)
def test_a_failure_before_the_stream_reaches_use_chat_as_our_sentence(
    served: tuple[AppState, str], kind: str, fault: Fault | None, status: int, code: str
) -> None:
    # The transport makes a non-2xx body the message of the error useChat shows (on main:
    # the raw JSON body); ours is the code's sentence, the status typed.
    result = _read(served, kind, fault)
    thrown = result["thrown"]
    assert (thrown["name"], thrown["statusCode"]) == ("AI_APICallError", status)
    assert thrown["message"] == rc.codes[code].user_message
    assert (result["parts"], result["errors"], result["chunks"]) == ([], [], [])


def test_a_retry_after_output_shows_only_the_attempt_that_won(
    served: tuple[AppState, str],
) -> None:
    result = _read(served, "retried")
    assert (result["errors"], result["thrown"]) == ([], None)
    assert _texts(result) == ["draft 2 final answer"]  # the first draft dropped
    types = [chunk["type"] for chunk in result["chunks"]]
    marker = types.index(SUPERSEDED_PART)
    assert types[marker + 1] == "reset-step"
    superseded = result["chunks"][marker]
    assert (superseded["data"], superseded["transient"]) == ({"superseded": 1, "attempt": 2}, True)
    assert [part["type"] for part in result["parts"]] == ["step-start", "text"]


def test_an_exhausted_retry_shows_the_last_attempt_and_its_error(
    served: tuple[AppState, str],
) -> None:
    result = _read(served, "exhausted")
    assert _texts(result) == ["draft 2 "]
    data = _error_part(result)
    assert (data["code"], data["retryable"], data["attempt"]) == (
        "provider_connection_lost", False, 2,
    )  # fmt: skip
    assert result["errors"] == [rc.codes["provider_connection_lost"].user_message]


class _Node(threading.Thread):
    def __init__(self, *args: str) -> None:
        super().__init__(daemon=True)
        self.args = args
        self.result: dict[str, Any] = {}

    def run(self) -> None:
        self.result = _node(*self.args)


def test_a_chat_already_answering_and_its_resume(served: tuple[AppState, str]) -> None:
    state, url = served
    chats = f"{url}/chats"
    first = _Node(chats, "send", "c1")
    first.start()
    deadline = time.monotonic() + 30
    while (log := state.sessions.get("c1")) is None or log.last_seq < 2:
        assert time.monotonic() < deadline, "the first send did not start"
        time.sleep(0.05)
    again = _node(chats, "send", "c1")  # a second send while the first answers
    assert again["thrown"]["statusCode"] == 409
    assert again["thrown"]["message"] == rc.codes["state_already_running"].user_message
    assert again["thrown"]["isRetryable"] is True
    resumed = _Node(chats, "resume", "c1")  # useChat's resume: a replay of the live stream
    resumed.start()
    while state.calls.get("resume c1") != 1:  # its route has answered (the run still live)
        assert time.monotonic() < deadline, "the resume did not arrive"
        time.sleep(0.05)
    with httpx.Client(base_url=url) as client:
        client.post("/gates/c1")
    first.join(30)
    resumed.join(30)
    assert _texts(first.result) == ["1 2 "]
    assert resumed.result["resumed"] is True
    assert _texts(resumed.result) == ["1 2 "]
    after = _node(chats, "resume", "c1")  # ended: 204, nothing to resume
    assert (after["resumed"], after["thrown"], after["chunks"]) == (False, None, [])
    unknown = _node(chats, "resume", "nobody")
    assert unknown["thrown"]["statusCode"] == 404
    assert unknown["thrown"]["message"] == rc.codes["state_session_not_found"].user_message


def test_the_stream_written_without_a_server() -> None:
    detail = rc.ErrorDetail.create("provider_rate_limited", f"upstream {MARKER}")
    text = wire.to_ui_message_stream(
        [agents.TextDelta("a"), agents.ErrorEvent(detail), agents.Done(agents.RunResult(False,
         "a", detail))], message_id="m",
    )  # fmt: skip
    chunks = [line[6:] for line in text.split("\n\n") if line]
    assert chunks[-1] == "[DONE]"
    assert [json.loads(chunk) for chunk in chunks[:-1]] == [
        {"type": "start", "messageId": "m"},
        {"type": "start-step"},
        {"type": "text-start", "id": "text-1"},
        {"type": "text-delta", "id": "text-1", "delta": "a"},
        {"type": "text-end", "id": "text-1"},
        {"type": "data-recoverable-error", "data": wire.public_payload(detail)},
        {"type": "error", "errorText": detail.user_message},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "error"},
    ]
    assert MARKER not in text


@pytest.mark.parametrize(
    ("detail", "error_text"),
    [
        (rc.ErrorDetail.create("provider_rate_limited", f"API Error: 429 {MARKER}"),
         rc.codes["provider_rate_limited"].user_message),
        (None, rc.codes["tool_execution_failed"].user_message),
    ],
)  # fmt: skip
def test_a_failed_tool_shows_its_classified_sentence(
    detail: rc.ErrorDetail | None, error_text: str
) -> None:
    failed = agents.ToolEnd("call-1", False, None, f"exit 1 {MARKER}", detail)
    text = wire.to_ui_message_stream([failed], message_id="m")
    parts = [json.loads(line[6:]) for line in text.split("\n\n") if line and line != "data: [DONE]"]
    assert {"type": "tool-output-error", "toolCallId": "call-1", "errorText": error_text,
            "dynamic": True} in parts  # fmt: skip
    assert MARKER not in text

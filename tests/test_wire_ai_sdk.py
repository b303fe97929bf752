"""The AI SDK's UI message stream, read by the `ai` npm package's own client (its
DefaultChatTransport and readUIMessageStream, under node) from our real uvicorn server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import recoverable as rc
from recoverable import agents, wire
from recoverable.testing import FakeProvider, Fault

from .cli_support import cli_bin_dir, find_cli
from .wire_app import AppState, build
from .wire_server import serving
from .wire_support import MARKER

READER = Path(__file__).parent / "tools" / "ai_sdk_reader.mjs"
REPO = Path(__file__).resolve().parent.parent


def _ai_package() -> Path:
    """The `ai` package's entry point: $RECOVERABLE_NODE_MODULES, else <repo>/node_modules."""
    root = Path(os.environ.get("RECOVERABLE_NODE_MODULES") or REPO / "node_modules")
    entry = root / "ai" / "dist" / "index.js"
    if not entry.is_file():
        pytest.fail(f"the `ai` npm package is not in {root}: run `npm install` (package.json)")
    return entry


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppState, str]]:
    home = tmp_path_factory.mktemp("ui-home")
    with FakeProvider() as fake:
        state = AppState(fake, home, find_cli("claude", cli_bin_dir()))
        with serving(build(state)) as url:
            yield state, url


def _read(served: tuple[AppState, str], kind: str, fault: Fault | None = None) -> dict[str, Any]:
    state, url = served
    state.fake.reset()
    if fault is not None:
        state.fake.fail(fault)
    node = shutil.which("node")
    assert node is not None, "node is needed (scripts/test installs the npm packages with it)"
    done = subprocess.run(
        [node, str(READER), f"{url}/ui/{kind}", _ai_package().as_uri()],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_sdk_reads_the_text(served: tuple[AppState, str]) -> None:
    result = _read(served, "chat")
    assert result["errors"] == []
    texts = [part for part in result["parts"] if part["type"] == "text"]
    assert [part["text"] for part in texts] == ["Hello from FakeProvider."]
    assert texts[0]["state"] == "done"


def test_the_sdk_surfaces_the_error_part(served: tuple[AppState, str]) -> None:
    result = _read(served, "chat", Fault.cut_stream(after=2))
    assert result["errors"] == [rc.codes["provider_connection_lost"].user_message]
    text = "".join(part["text"] for part in result["parts"] if part["type"] == "text")
    assert text  # what came before the cut is kept
    assert "Hello from FakeProvider.".startswith(text)


def test_a_failure_before_any_text(served: tuple[AppState, str]) -> None:
    result = _read(served, "chat", Fault.insufficient_quota())
    assert result["errors"] == [rc.codes["provider_quota_exceeded"].user_message]
    assert [part for part in result["parts"] if part["type"] == "text"] == []


def test_tool_and_reasoning_parts(served: tuple[AppState, str]) -> None:
    result = _read(served, "tools")
    assert result["errors"] == []
    parts = [part for part in result["parts"] if part["type"] != "step-start"]
    assert [part["type"] for part in parts] == [
        "reasoning", "dynamic-tool", "dynamic-tool", "text",
    ]  # fmt: skip
    assert parts[0]["text"] == "Let me look."
    ok, failed = parts[1], parts[2]
    assert (ok["toolCallId"], ok["toolName"], ok["state"]) == ("call-1", "Bash", "output-available")
    assert (ok["input"], ok["output"]) == ({"command": "echo hi"}, "hi\n")
    assert (failed["state"], failed["errorText"]) == (
        "output-error", rc.codes["tool_execution_failed"].user_message,
    )  # fmt: skip
    assert parts[3]["text"] == "The tool printed hi."
    assert MARKER not in json.dumps(result)


def test_the_stream_written_without_a_server() -> None:
    detail = rc.ErrorDetail.create("provider_rate_limited", f"upstream {MARKER}")
    text = wire.to_ui_message_stream(
        [agents.TextDelta("a"), agents.Error(detail), agents.Done(agents.RunResult(False,
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

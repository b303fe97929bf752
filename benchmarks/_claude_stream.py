"""A realistic Claude Code stream-json run of any size, built from captured lines: pure data.

The real lines of tests/data/cli/claude/{tool,text}.stdout, repeated with fresh ids and text
from a seeded generator (the same bytes every run), with `--include-partial-messages`
stream_event lines shaped like a captured run: what bench_parse, bench_stream, bench_scale and
bench_flood read.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "cli" / "claude"
CHUNK = 64 * 1024  # what one pipe read returns to both readers (asyncio's and anyio's limit)
_PROSE = (
    "the test fails because parse_line returns a list of events while the runner expects "
    "an iterator so I will change the caller in _runner.py and add a regression test for "
    "the empty line case then run pytest again to confirm nothing else broke; the fixture "
    "reads tests/data/cli/claude/tool.stdout and asserts on ToolStart ToolEnd TextDelta"
)
WORDS = _PROSE.split(" ")
_CODE = [
    "def parse_line(line: str, state: ParseState) -> list[Event]:",
    '    """One stdout line to events, updating `state`."""',
    "    return dispatch(line, state, NAME, _HANDLERS)",
    '    if data.get("subtype") == "init":',
    '        state.session_id = as_str(data.get("session_id")) or state.session_id',
    "    for block in blocks if isinstance(blocks, list) else ():",
    '        kind = block.get("type") if isinstance(block, dict) else None',
    "tests/test_agents.py::test_a_tool_call PASSED                       [ 42%]",
    "\tassert result.success is True  # \u2713 caf\u00e9 \u2014 na\u00efve",
    '{"key": "value", "nested": {"list": [1, 2, 3]}}',
]
_TOOLS = (
    (
        "Bash",
        lambda r: {
            "command": f"pytest -q tests/test_{r.choice(WORDS)}.py -x",
            "description": "Run the tests",
        },
    ),
    ("Read", lambda r: {"file_path": f"/project/src/recoverable/agents/_{r.choice(WORDS)}.py"}),
    ("Grep", lambda r: {"pattern": r.choice(WORDS), "path": "src", "output_mode": "content"}),
    (
        "Edit",
        lambda r: {
            "file_path": "/project/src/x.py",
            "old_string": r.choice(_CODE),
            "new_string": r.choice(_CODE),
        },
    ),
)


def _lines(name: str) -> list[dict[str, Any]]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class _Maker:
    """Fresh ids and text for each repetition, from a seeded generator (the same every run)."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        tool, text = _lines("tool.stdout"), _lines("text.stdout")
        self.init, self.tool_use, self.tool_result, _, self.result = tool
        self.text_message = text[1]
        self.session = self.init["session_id"]

    def uuid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def words(self, low: int, high: int) -> str:
        return " ".join(self.rng.choices(WORDS, k=self.rng.randint(low, high)))

    def line(self, data: dict[str, Any]) -> str:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    def event(self, event: dict[str, Any], **extra: Any) -> str:
        return self.line(
            {
                "type": "stream_event",
                "event": event,
                "session_id": self.session,
                "parent_tool_use_id": None,
                "uuid": self.uuid(),
                **extra,
            }
        )

    def block_start(self, block: dict[str, Any]) -> str:
        return self.event({"type": "content_block_start", "index": 0, "content_block": block})

    def block_delta(self, delta: dict[str, Any]) -> str:
        return self.event({"type": "content_block_delta", "index": 0, "delta": delta})

    def status(self) -> str:
        return self.line(
            {
                "type": "system",
                "subtype": "status",
                "status": "requesting",
                "uuid": self.uuid(),
                "session_id": self.session,
            }
        )

    def assistant(self, template: dict[str, Any], msg_id: str, block: dict[str, Any]) -> str:
        data = json.loads(json.dumps(template))
        data["message"]["id"] = msg_id
        data["message"]["content"] = [block]
        data["message"]["usage"]["input_tokens"] = self.rng.randint(19_000, 150_000)
        data["uuid"] = self.uuid()
        data["session_id"] = self.session
        data["request_id"] = f"req_{self.rng.getrandbits(64):016x}"
        return self.line(data)

    def message_start(self, msg_id: str) -> str:
        message: dict[str, Any] = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": self.rng.randint(19_000, 150_000),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 1,
            },
        }
        return self.event(
            {"type": "message_start", "message": message}, ttft_ms=self.rng.randint(5, 900)
        )

    def message_end(self, stop_reason: str) -> list[str]:
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": self.rng.randint(10, 900)},
        }
        return [
            self.event({"type": "content_block_stop", "index": 0}),
            self.event(delta),
            self.event({"type": "message_stop"}),
        ]

    def tool_turn(self) -> list[str]:
        """A tool_use message streamed as input_json_delta, then its tool_result."""
        msg_id = f"msg_{self.rng.getrandbits(96):024x}"
        tool_id = f"toolu_{self.rng.getrandbits(96):024x}"
        name, make_input = self.rng.choice(_TOOLS)
        tool_input = make_input(self.rng)
        partial = json.dumps(tool_input)
        cuts = sorted(self.rng.sample(range(1, len(partial)), k=min(4, len(partial) - 1)))
        pieces = [partial[a:b] for a, b in zip([0, *cuts], [*cuts, len(partial)], strict=True)]
        out = [self.status(), self.message_start(msg_id)]
        out.append(self.block_start({"type": "tool_use", "id": tool_id, "name": name, "input": {}}))
        for piece in pieces:
            out.append(self.block_delta({"type": "input_json_delta", "partial_json": piece}))
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
        out.append(self.assistant(self.tool_use, msg_id, block))
        out += self.message_end("tool_use")
        # The tool's output: 0 to ~60 lines of code-like text (quotes, tabs, non-ASCII).
        output = "\n".join(self.rng.choices(_CODE, k=self.rng.randint(0, 60)))
        result = json.loads(json.dumps(self.tool_result))
        result["message"]["content"][0].update(
            tool_use_id=tool_id, content=output, is_error=self.rng.random() < 0.05
        )
        result["uuid"] = self.uuid()
        result["session_id"] = self.session
        result["tool_use_result"]["stdout"] = output
        out.append(self.line(result))
        return out

    def text_turn(self, kind: str) -> list[str]:
        """A text (or thinking) message streamed as many small deltas, then the full line."""
        msg_id = f"msg_{self.rng.getrandbits(96):024x}"
        deltas = [" " + self.words(1, 4) for _ in range(self.rng.randint(10, 60))]
        out = [self.status(), self.message_start(msg_id)]
        start = {"type": kind, kind: ""} | ({"signature": ""} if kind == "thinking" else {})
        out.append(self.block_start(start))
        for piece in deltas:
            out.append(self.block_delta({"type": f"{kind}_delta", kind: piece}))
        block: dict[str, Any] = {"type": kind, kind: "".join(deltas)}
        if kind == "thinking":
            signature = f"{self.rng.getrandbits(512):0128x}"
            out.append(self.block_delta({"type": "signature_delta", "signature": signature}))
            block["signature"] = signature
        out.append(self.assistant(self.text_message, msg_id, block))
        out += self.message_end("end_turn")
        return out


def build_stream(target_bytes: int) -> tuple[bytes, dict[str, int]]:
    """One long run: init, then thinking/text/tool turns until `target_bytes`, then result."""
    maker = _Maker()
    lines = [maker.line(maker.init)]
    size = len(lines[0]) + 1
    while size < target_bytes:
        turn = maker.rng.choice(("thinking", "text", "tool", "tool"))
        new = maker.tool_turn() if turn == "tool" else maker.text_turn(turn)
        lines += new
        size += sum(len(line.encode("utf-8")) + 1 for line in new)
    result = json.loads(json.dumps(maker.result))
    result["num_turns"] = sum(1 for line in lines if line.startswith('{"type":"user"'))
    lines.append(maker.line(result))
    mix: dict[str, int] = {}
    for line in lines:
        kind = json.loads(line)["type"]
        mix[kind] = mix.get(kind, 0) + 1
    return ("\n".join(lines) + "\n").encode("utf-8"), mix

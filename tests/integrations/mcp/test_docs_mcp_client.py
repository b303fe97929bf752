"""docs/integrations/mcp-client.md as a user meets it: its examples run as written (in order,
in one namespace, top-level `await` allowed) against the test server under uvicorn, its URL
put where the page says `http://127.0.0.1:8000/mcp`; and its table says what the tests of this
folder measure: each row's code, retryable and wait, against the constants those tests assert
(and, for the rows asserted inline, the test that asserts them)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from tests.support import mcp_server
from tests.support.wire_server import serving

from . import test_client_http, test_client_stdio

PAGE = Path(__file__).resolve().parents[3] / "docs" / "integrations" / "mcp-client.md"

_BY_TOOL = {
    tool: (code, retryable, wait) for tool, _, code, retryable, wait in test_client_stdio.RESULTS
}
_BY_STATUS = {
    status: (code, retryable, wait)
    for _, code, retryable, wait, status in test_client_http.STATUSES
}
# failure row -> (code, retryable, retry_after_ms) and where it is measured
EXPECTED: dict[str, tuple[str, bool, int | None]] = {
    "unknown tool": _BY_TOOL["nope"],
    "bad arguments": _BY_TOOL["add"],
    "the tool raises": _BY_TOOL["boom"],
    "our envelope: rate limited": _BY_TOOL["limited"],
    "our envelope: input invalid": _BY_TOOL["refused"],
    # test_client_stdio.test_a_call_timeout_and_a_server_killed_mid_call
    "call timeout": ("timeout", False, None),
    "server killed mid-call, and every later call": ("unavailable", False, None),
    # test_client_stdio.test_a_server_that_exits_at_start_is_read_through_its_exception_groups
    "server exits at start": ("unavailable", False, None),
    # test_client_stdio.test_a_missing_server_command, test_fastmcp_client_timeout_and_...
    "missing server command": ("tool_not_found", False, None),
    # test_client_http.test_connection_refused_with_both_clients
    "connection refused (HTTP)": ("network_error", True, None),
    "HTTP 401": _BY_STATUS[401],
    "HTTP 429, `Retry-After: 7`": _BY_STATUS[429],
    "HTTP 503": _BY_STATUS[503],
}


def _rows() -> dict[str, tuple[str, bool, int | None]]:
    text = PAGE.read_text()
    table = text[text.index("<!-- mcp-table -->") : text.index("<!-- /mcp-table -->")]
    rows: dict[str, tuple[str, bool, int | None]] = {}
    for line in table.splitlines()[3:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != 6:
            continue
        failure, _, _, ours, retryable, wait = cells
        codes = re.findall(r"`([a-z_]+)`", ours)
        rows[failure] = (codes[-1], retryable == "yes", int(wait) if wait else None)
    return rows


def test_the_table_says_what_the_tests_measure() -> None:
    assert _rows() == EXPECTED


def test_the_page_is_in_the_nav() -> None:
    nav = (PAGE.parents[2] / "mkdocs.yml").read_text()
    assert "integrations/mcp-client.md" in nav


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)


async def test_the_examples_run() -> None:
    blocks = _blocks()
    assert len(blocks) == 3
    namespace: dict[str, Any] = {"__name__": "docs"}
    with serving(mcp_server.http_app(), lifespan="on") as base:
        for index, block in enumerate(blocks):
            code = block.replace("http://127.0.0.1:8000/mcp", base + "/mcp")
            compiled = compile(
                code, f"mcp-client.md block {index}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            )
            awaited = eval(compiled, namespace)  # the page's own examples
            if awaited is not None:
                await awaited
    assert namespace["result"].is_error is False

"""The table of docs/integrations/mcp-server.md, measured: what the model sees of each failure
with plain MCPServer, plain FastMCP (unmasked and masked) and with the integration, over
stdio with the `mcp` client. The page's table must be the one these runs print."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tests.support.mcp_example import SECRET

from .observe import CASES, Seen, observe_mcp, server_args, stdio_mcp

PAGE = Path(__file__).resolve().parents[3] / "docs" / "integrations" / "mcp-server.md"
CELL_CHARS = 60
ROWS = {
    "rate_limited": "`openai.RateLimitError`, 429 with `retry-after: 7`",
    "insufficient_quota": "429 `insufficient_quota`",
    "unauthorized": "401 invalid key",
    "context_too_long": "400 context too long",
    "overloaded": "529 overloaded",
    "timeout": "read timeout (`APITimeoutError`)",
    "connection_refused": "connection refused",
    "subprocess": "a command exits 3 (`CalledProcessError`)",
    "registered_fix": "`RecoverableError` with a registered fix",
    "bad_arguments": "bad arguments",
    "unknown_tool": "unknown tool",
    "own_mcp_error": "the tool's own `MCPError(-32005, ..., data)`",
}
HEADER = (
    "| failure (its text carries a key, a path and `<script>`) | plain `MCPServer` "
    "| plain `FastMCP` | `FastMCP`, masked | with `install(server)` (either server) |\n"
    "|---|---|---|---|---|"
)


def plain_cell(seen: Seen) -> str:
    """What the model (or the agent, for a protocol error) reads, shortened."""
    if seen.error_code is not None:
        return f"JSON-RPC {seen.error_code} `{seen.error_message}`"
    # the first line, up to the taint (shown as the marker), this machine's python named so
    text = (seen.text or "").splitlines()[0].split(SECRET)[0].strip()
    text = text.replace(sys.executable, "python")
    if len(text) > CELL_CHARS:
        text = text[: CELL_CHARS - 1].rstrip() + "…"
    cell = f"`{text}`"
    return cell + " **+ the key, the path, the markup**" if seen.leaks() else cell


def ours_cell(seen: Seen) -> str:
    """The code and the next step the model reads (the structured content says the same)."""
    if seen.error_code is not None:
        return f"JSON-RPC {seen.error_code}" + (", data kept" if seen.error_data else "")
    assert seen.structured is not None
    error = seen.structured["error"]
    code = error["code"].lower()
    if error["retryable"]:
        return f"`{code}`: wait {error['retry_after_ms'] // 1000} s, call again"
    if error["fix_command"]:
        return f"`{code}`: run `{error['fix_command']}`, call again"
    if error["fix_required"]:
        fix: str = error["fix_required"]
        return f"`{code}`: {fix[0].lower()}{fix[1:]}"
    return f"`{code}`: stop"


def table(
    plain: dict[str, Seen], fast: dict[str, Seen], masked: dict[str, Seen], ours: dict[str, Seen]
) -> str:
    """The page's table, from four runs."""
    lines = [HEADER]
    for name, label in ROWS.items():
        cells = [plain_cell(run[name]) for run in (plain, fast, masked)]
        lines.append(f"| {label} | {' | '.join(cells)} | {ours_cell(ours[name])} |")
    return "\n".join(lines)


def _page_table() -> str:
    text = PAGE.read_text()
    found = re.search(r"<!-- measured -->\n(.*?)\n<!-- /measured -->", text, re.DOTALL)
    assert found, "the page's measured table is between <!-- measured --> markers"
    return found.group(1)


async def test_the_pages_table_is_what_the_clients_see() -> None:
    assert set(ROWS) | {"success"} == set(CASES)
    runs = [
        await observe_mcp(stdio_mcp(server_args(fastmcp=False, plain=True))),
        await observe_mcp(stdio_mcp(server_args(fastmcp=True, plain=True))),
        await observe_mcp(stdio_mcp(server_args(fastmcp=True, plain=True, mask=True))),
        await observe_mcp(stdio_mcp(server_args(fastmcp=False))),
    ]
    measured = table(*runs)
    assert _page_table() == measured, "\n" + measured

"""What the tests that drive the real AI CLIs share (and scripts/capture_cli_lines.py, which
imports this without pytest): finding the binaries, their tool calls, and finding processes a
run left behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path

from recoverable.agents._cli_modules import CLI_NAMES, module_for
from recoverable.testing import Fault

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
TOOL_OUTPUT = "hi-from-tool"
# Each CLI's shell tool, called the way the CLI's own tool schema asks.
TOOL_CALLS = {
    "claude": ("Bash", {"command": f"echo {TOOL_OUTPUT}", "description": "Print a marker"}),
    "codex": ("exec_command", {"cmd": f"echo {TOOL_OUTPUT}"}),
    "gemini": (
        "run_shell_command",
        {"command": f"echo {TOOL_OUTPUT}", "description": "Print a marker"},
    ),
}
# What lets the shell tool run headless: Claude's allow-list, Gemini's yolo mode; Codex's
# default read-only sandbox runs `echo`.
TOOL_ARGS: dict[str, tuple[str, ...]] = {
    "claude": ("--allowedTools", "Bash(echo *)"),
    "codex": (),
    "gemini": ("--approval-mode", "yolo"),
}
API = {"claude": "anthropic", "codex": "openai_responses", "gemini": "gemini"}

# (fault, code, retryable) per CLI; the CLI's own retries are off (retries=0).
FAILURES: dict[str, list[tuple[Fault, str, bool]]] = {
    cli: [
        (Fault.unauthorized(), "provider_auth_failed", False),
        (Fault.rate_limited(retry_after=1), "provider_rate_limited", True),
        (Fault.insufficient_quota(), "provider_quota_exceeded", False),
        (Fault.overloaded(), "provider_overloaded", True),
        (Fault.unavailable(), "provider_overloaded", True),
        (Fault.server_error(), "provider_server_error", True),
        (Fault.context_too_long(), "provider_context_too_long", False),
        (Fault.model_not_found(), "provider_model_not_found", False),
        (Fault.drop(), "provider_connection_lost", True),
        (Fault.cut_stream(), "provider_connection_lost" if cli != "gemini"
         else "provider_bad_response", True),
    ]
    for cli in CLI_NAMES
}  # fmt: skip


def cli_bin_dir() -> Path | None:
    """$RECOVERABLE_CLI_BIN_DIR, else <repo>/node_modules/.bin if present, else None (PATH)."""
    given = os.environ.get("RECOVERABLE_CLI_BIN_DIR")
    if given:
        return Path(given)
    local = REPO / "node_modules" / ".bin"
    return local if local.is_dir() else None


def locate_cli(cli: str, where: Path | None) -> str | None:
    """The path of `cli` in `where` (None: on PATH), or None."""
    return shutil.which(cli, path=str(where)) if where else shutil.which(cli)


def missing_cli(cli: str, where: Path | None) -> str:
    """Why `cli` was not found, and how to install it."""
    place = f"in RECOVERABLE_CLI_BIN_DIR={where}" if where else "on PATH"
    return (
        f"the {cli} CLI was not found {place}. Install it with `npm install"
        f" {module_for(cli).PACKAGE}` in {REPO} (giving node_modules/.bin/{cli}), or point"
        " RECOVERABLE_CLI_BIN_DIR at the folder holding claude, codex and gemini."
    )


def find_cli(cli: str, where: Path | None) -> str:
    """The path of `cli`, or the test fails with how to install it."""
    found = locate_cli(cli, where)
    if found is None:
        import pytest  # here, not at the top: the capture script imports this module too

        pytest.fail(missing_cli(cli, where), pytrace=False)
    return found


def processes_with(marker: bytes) -> list[int]:
    """Pids whose environment mentions `marker` (the run's throwaway home), ours excepted."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                if marker in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
    return found


def processes_left_with(marker: bytes, within: float = 5.0) -> list[int]:
    """`processes_with(marker)` once none is left, or after `within` seconds: a SIGKILL sent
    to a group takes a moment to land, longer on a loaded machine."""
    deadline = time.monotonic() + within
    while (found := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found

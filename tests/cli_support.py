"""What the tests that drive the real AI CLIs share: finding the binaries, their tool calls,
and finding processes a run left behind."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import pytest

from recoverable.agents._clis import module_for

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 60.0
TOOL_OUTPUT = "hi-from-tool"
# Each CLI's shell tool, called the way the CLI's own tool schema asks.
TOOL_CALLS = {
    "claude": ("Bash", {"command": f"echo {TOOL_OUTPUT}", "description": "Print a marker"}),
    "codex": ("exec_command", {"cmd": f"echo {TOOL_OUTPUT}"}),
    "gemini": ("run_shell_command", {"command": f"echo {TOOL_OUTPUT}", "description": "Print"}),
}
# What lets the shell tool run headless: Claude's allow-list, Gemini's yolo mode; Codex's
# default read-only sandbox runs `echo`.
TOOL_ARGS: dict[str, tuple[str, ...]] = {
    "claude": ("--allowedTools", "Bash(echo *)"),
    "codex": (),
    "gemini": ("--approval-mode", "yolo"),
}
API = {"claude": "anthropic", "codex": "openai_responses", "gemini": "gemini"}


def cli_bin_dir() -> Path | None:
    """$RECOVERABLE_CLI_BIN_DIR, else <repo>/node_modules/.bin if present, else None (PATH)."""
    given = os.environ.get("RECOVERABLE_CLI_BIN_DIR")
    if given:
        return Path(given)
    local = REPO / "node_modules" / ".bin"
    return local if local.is_dir() else None


def find_cli(cli: str, where: Path | None) -> str:
    found = shutil.which(cli, path=str(where)) if where else shutil.which(cli)
    if found is None:
        place = f"in RECOVERABLE_CLI_BIN_DIR={where}" if where else "on PATH"
        pytest.fail(
            f"the {cli} CLI was not found {place}. Install it with `npm install"
            f" {module_for(cli).PACKAGE}` in {REPO} (giving node_modules/.bin/{cli}), or point"
            " RECOVERABLE_CLI_BIN_DIR at the folder holding claude, codex and gemini.",
            pytrace=False,
        )
    return found


def processes_with(marker: bytes) -> list[int]:
    """Pids whose environment mentions `marker` (the run's throwaway home)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if marker in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
    return found

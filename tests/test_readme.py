"""The README's agent-tool examples run as written, so they stay true."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import recoverable as rc

REPO = Path(__file__).resolve().parent.parent
SECTION = ("## The agent-tool side", "## Testing your agent")


def _blocks(language: str) -> list[str]:
    text = (REPO / "README.md").read_text()
    start, end = (text.index(heading) for heading in SECTION)
    return re.findall(rf"```{language}\n(.*?)```", text[start:end], re.DOTALL)


def test_the_section_has_its_examples() -> None:
    assert len(_blocks("python")) == 4
    assert len(_blocks("bash")) == 1


@pytest.mark.parametrize("block", range(4))
def test_each_python_example_runs(block: int, tmp_path: Path) -> None:
    code = _blocks("python")[block]
    try:
        exec(compile(code, f"README.md python block {block}", "exec"), {"__name__": "readme"})
    finally:
        if "store_missing" in rc.codes:
            rc.codes.unregister("store_missing")
        rc.set_testing(False)


def test_the_exec_example_runs_and_exits_as_it_says(tmp_path: Path) -> None:
    (script,) = _blocks("bash")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, cwd=REPO,
        env={**os.environ, "PATH": path}, stdin=subprocess.DEVNULL, timeout=120, check=False,
    )  # fmt: skip
    exits = re.findall(r"^exit (\d+)$", done.stdout, re.MULTILINE)
    assert exits == ["4", "0", "11", "10"], done.stdout + done.stderr
    assert '"code": "RATE_LIMITED"' in done.stdout
    assert '"code": "TOOL_TIMEOUT"' in done.stdout
    assert "running its fix: python examples/notes_tool.py init" in done.stderr

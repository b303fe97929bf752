"""The caller's own mistakes, refused before anything starts with their own code (seed: the
cli-agents crate): a working directory that is not there is `invalid_input` naming it, not a
missing CLI to install; an executable path without the CLI it is named is refused, never run
as some CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import recoverable as rc
from recoverable import agents


@pytest.mark.parametrize("kind", ["missing", "a file"])
def test_a_cwd_that_is_not_a_directory_is_the_callers_mistake(tmp_path: Path, kind: str) -> None:
    cwd = tmp_path / "nowhere"
    if kind == "a file":
        cwd.write_text("not a folder")
    with pytest.raises(agents.RunRefused) as refused:
        agents.run_sync("hi", cli="claude", cwd=str(cwd))
    error = refused.value
    assert isinstance(error, ValueError)  # what such a mistake always raised
    assert (error.code, error.retryable, error.fix_command) == ("invalid_input", False, None)
    assert error.fix_required == f"Pass an existing directory as cwd (not {str(cwd)!r})"
    assert error.details["cwd"] == str(cwd)
    assert rc.classify(error).code == "invalid_input"


@pytest.mark.parametrize("cli", ["auto", ["claude", "codex"]])
def test_an_executable_without_its_cli_is_refused_not_run(tmp_path: Path, cli: object) -> None:
    marker = tmp_path / "ran"
    stand_in = tmp_path / "some-binary"
    stand_in.write_text(f"#!/bin/sh\ntouch {marker}\n")
    stand_in.chmod(0o755)
    with pytest.raises(agents.RunRefused) as refused:
        agents.run_sync("hi", cli=cli, executable=str(stand_in))  # type: ignore[arg-type]
    assert refused.value.code == "invalid_input"
    assert "Name the CLI the executable is" in (refused.value.fix_required or "")
    assert not marker.exists()


def test_the_command_says_so_in_one_line(tmp_path: Path) -> None:
    argv = ["run", "hi", "--cli", "claude", "--fake", "--cwd", str(tmp_path / "nowhere")]
    done = subprocess.run(
        [sys.executable, "-m", "recoverable", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "does not exist or is not a directory" in done.stderr
    assert "Traceback" not in done.stderr

"""Where a CLI's executable is: the PATH search is `shutil.which`'s, without loading shutil."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recoverable.agents._executables import find_executable, which


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directories holding a runnable `tool`, a `tool` that is not runnable, a directory named
    `tool`, and nothing."""
    root = tmp_path_factory.mktemp("path")
    for name, mode in (("runs", 0o755), ("plain", 0o644)):
        (root / name).mkdir()
        (root / name / "tool").write_text("#!/bin/sh\n")
        (root / name / "tool").chmod(mode)
    (root / "dir" / "tool").mkdir(parents=True)
    (root / "empty").mkdir()
    return root


_DIRS = st.sampled_from(["runs", "plain", "dir", "empty", "missing", "", "runs/"])


@settings(max_examples=200, deadline=None)
@given(dirs=st.lists(_DIRS, max_size=6), name=st.sampled_from(["tool", "none", "runs/tool"]))
def test_the_search_finds_what_shutil_finds(tree: Path, dirs: list[str], name: str) -> None:
    path = os.pathsep.join(str(tree / d) if d else "" for d in dirs)
    old = os.getcwd()
    os.chdir(tree)  # a name with a directory, and an empty PATH entry, are read from here
    try:
        assert which(name, path) == shutil.which(name, path=path)
    finally:
        os.chdir(old)


def test_no_path_is_this_processs_path(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tree / "runs"))
    assert which("tool") == shutil.which("tool") == str(tree / "runs" / "tool")
    assert find_executable("tool", {"HOME": str(tree)}) == str(tree / "runs" / "tool")
    assert which("tool", "") is None

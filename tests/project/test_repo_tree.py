"""The checkout holds only what was written on purpose: no store or broker file that a test,
an example or a benchmark wrote into the cwd is tracked, and the README runs that once did
write one (`fleet.sqlite`) leave the tree as they found it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# What the stores and brokers we test with leave behind: SQLite (and its WAL side files),
# redis-server's dump, Kombu's filesystem transport (its `control` folder of `*.exchange`
# tables, its `data_in` / `data_out` message folders).
ARTIFACT_SUFFIXES = (".sqlite", ".sqlite3", ".db", "-wal", "-shm", ".rdb", ".exchange", ".msg")
ARTIFACT_FOLDERS = ("control", "data_in", "data_out")
# Folders a run fills on purpose (all ignored by git) and links to the shared environments.
NOT_WALKED = {".git", ".venv", "node_modules", "__pycache__", ".pytest_cache", ".hypothesis"}
NOT_WALKED |= {".mypy_cache", ".ruff_cache", "site", "dist", "build"}


def _tracked() -> list[str]:
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True, timeout=60
    )
    return [name for name in listed.stdout.decode().split("\0") if name]


def _is_artifact(name: str) -> bool:
    return name.endswith(ARTIFACT_SUFFIXES) or name.split("/", 1)[0] in ARTIFACT_FOLDERS


def test_the_artifact_rule_sees_the_files_once_committed() -> None:
    assert _is_artifact("fleet.sqlite") and _is_artifact("control/celery.exchange")
    assert not _is_artifact("tests/data/codes.json") and not _is_artifact("src/x/controls.py")


def test_no_run_artifact_is_tracked() -> None:
    assert [name for name in _tracked() if _is_artifact(name)] == []


def _files() -> set[str]:
    found: set[str] = set()
    for folder, subfolders, files in os.walk(REPO):
        subfolders[:] = [s for s in subfolders if s not in NOT_WALKED and not s.startswith(".venv")]
        found.update(os.path.relpath(os.path.join(folder, name), REPO) for name in files)
    return found


def test_the_readme_fleet_runs_leave_the_tree_as_they_found_it() -> None:
    # The runs whose relative `Cooldowns.sqlite("fleet.sqlite")` once landed in the checkout,
    # run from the repo root as CI runs them.
    before = _files()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    tests = ["tests/fleet/test_readme_fleet.py", "tests/project/test_readme.py", "-k", "fleet"]
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
    run = subprocess.run(
        argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert "4 passed" in run.stdout
    assert sorted(_files() - before) == []

"""The documentation site: its generated pages are current, it builds with `mkdocs build
--strict`, every page is in the navigation, and its runnable examples run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import recoverable as rc
from recoverable._fault_matrix import FAULTS

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"


def test_the_generated_pages_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "docs_pages.py"), "--check"],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_the_code_page_has_every_registered_code() -> None:
    page = (DOCS / "reference" / "codes.md").read_text()
    listed = re.findall(r"^\| `([a-z_0-9]+)` \| ", page.split("\n## ")[0], re.MULTILINE)
    assert listed == [row.code for row in rc.codes]


def test_the_matrix_page_has_every_fault() -> None:
    page = (DOCS / "reference" / "matrix.md").read_text()
    listed = re.findall(r"^\| `([a-z_]+)` \| `[a-z_]+` \| ", page, re.MULTILINE)
    assert listed == [row.fault for row in FAULTS]


def _nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    return []


def test_every_page_is_in_the_navigation() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    pages = sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md"))
    assert sorted(_nav_pages(config["nav"])) == pages


def test_the_site_builds_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        capture_output=True, text=True, cwd=REPO, timeout=300, check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    codes_html = (site / "reference" / "codes" / "index.html").read_text()
    assert "provider_quota_exceeded" in codes_html
    assert (site / "integrations" / "ai-clis" / "index.html").is_file()


def _python_blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.DOTALL)


# Pages whose every Python example runs as written (the others show code that needs a
# server, an engine or an account; the wire page's are the README's, run there).
RUNNABLE = {
    "getting-started.md": 2,
    "classify-response.md": 2,
    "agent-tools/envelope.md": 2,
    "agent-tools/ladder.md": 1,
    "agent-tools/toolkit.md": 1,
}


@pytest.mark.parametrize("page", sorted(RUNNABLE))
def test_the_runnable_examples_run(page: str) -> None:
    blocks = _python_blocks(page)
    assert len(blocks) == RUNNABLE[page]
    namespace: dict[str, object] = {"__name__": "docs"}
    try:
        for index, code in enumerate(blocks):
            exec(compile(code, f"{page} block {index}", "exec"), namespace)
    finally:
        if "store_missing" in rc.codes:  # the toolkit example registers it
            rc.codes.unregister("store_missing")
        rc.set_testing(False)


def test_the_wire_examples_are_the_readmes() -> None:
    """tests/test_readme.py runs them: the server and the client against each other."""
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Errors on the wire") : readme.index("## The agent-tool")]
    assert _python_blocks("integrations/wire.md") == re.findall(
        r"```python\n(.*?)```", section, re.DOTALL
    )

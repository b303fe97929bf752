"""The documentation site: its generated pages are current, it builds with `mkdocs build
--strict`, every page is in the navigation, and its runnable examples run."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import os
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import yaml

import recoverable as rc
from recoverable import agents, testing
from recoverable.testing import CliSetup, FakeProvider, Fault, Limits, RateLimit, RecordedRequest
from recoverable.testing._fault_matrix import FAULTS
from recoverable.testing._faults import FaultName
from recoverable.testing._providers import PROVIDERS

from ..support.cli import cli_bin_dir, find_cli

REPO = Path(__file__).resolve().parents[2]
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


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once for this module's tests as CI builds it: strict, offline."""
    site = tmp_path_factory.mktemp("docs") / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        capture_output=True, text=True, cwd=REPO, timeout=300, check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return site


def test_the_site_builds_strict(site: Path) -> None:
    codes_html = (site / "reference" / "codes" / "index.html").read_text()
    assert "provider_quota_exceeded" in codes_html
    assert (site / "integrations" / "ai-clis" / "index.html").is_file()
    assert (site / "testing" / "index.html").is_file()


def test_the_site_loads_nothing_from_elsewhere(site: Path) -> None:
    """No web fonts, scripts or styles from another host: the theme's fonts are off
    (`theme.font: false`), so a page shows as built, offline too."""
    for page in site.rglob("*.html"):
        html = page.read_text()
        assert "fonts.googleapis" not in html, page
        outside = re.findall(r'<(?:link|script|img)\b[^>]*\b(?:href|src)="(?:https?:)?//', html)
        assert outside == [], page


# Each public face and the reference page that documents it.
REFERENCE = {
    "recoverable": "recoverable",
    "recoverable.agents": "agents",
    "recoverable.wire": "wire",
    "recoverable.wire.asgi": "wire",
    "recoverable.testing": "testing",
    "recoverable.fleet": "fleet",
    "recoverable.tools": "tools",
    "recoverable.tools.toolkit": "toolkit",
    "recoverable.secrets": "secrets",
    "recoverable.instrumentation": "instrumentation",
    "recoverable.adapters": "adapters",
    "recoverable.integrations.temporal": "integrations",
    "recoverable.integrations.celery": "integrations",
    "recoverable.integrations.dbos": "integrations",
    "recoverable.integrations.otel": "integrations",
    "recoverable.integrations.langgraph": "integrations",
    "recoverable.integrations.openai_agents": "integrations",
    "recoverable.integrations.pydantic_ai": "integrations",
    "recoverable.integrations.mcp": "integrations",
}
_HEADING = re.compile(r"<h[1-6][ >]")
# A docstring's first paragraph, after the bases line a class may have.
_DOCSTRING = re.compile(
    r'doc-contents[^>]*>\s*(?:<p class="doc doc-class-bases">.*?</p>\s*)?<p>', re.DOTALL
)


def _entry(html: str, ident: str) -> str:
    """The HTML of one documented object: from its heading to the next heading."""
    start = html.index(f'id="{ident}"')
    end = _HEADING.search(html, start + 1)
    return html[start : end.start() if end else len(html)]


def _reference_entries() -> list[tuple[str, str, str]]:
    entries = []
    for module, page in REFERENCE.items():
        names = importlib.import_module(module).__all__
        entries += [(module, name, page) for name in names]
    return entries


@pytest.mark.parametrize(("module", "name", "page"), _reference_entries())
def test_the_reference_shows_every_public_name(
    site: Path, module: str, name: str, page: str
) -> None:
    """Each name of each public `__all__` has its heading, its signature and its docstring,
    read from the module that defines it (the faces load their names lazily)."""
    html = (site / "reference" / "api" / page / "index.html").read_text()
    assert f'id="{module}.{name}"' in html, f"{module}.{name} is not on reference/api/{page}.md"
    entry = _entry(html, f"{module}.{name}")
    assert _DOCSTRING.search(entry), f"{module}.{name} shows no docstring"
    # A class whose constructor is its base's (an exception, a click command) has no
    # signature of its own: the bases line stands for it.
    assert "doc-signature" in entry or "doc-class-bases" in entry, f"{module}.{name}"


def test_every_reference_page_is_a_face() -> None:
    pages = {path.stem for path in (DOCS / "reference" / "api").glob("*.md")}
    assert pages == {*REFERENCE.values(), "index"}


def _python_blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.DOTALL)


# Every page's Python examples run as written, in order, in one namespace: each page with
# its number of examples (so an example added is run too).
RUNNABLE = {
    "index.md": 1,
    "getting-started.md": 2,
    "classify-response.md": 2,
    "testing.md": 12,
    "agent-tools/envelope.md": 2,
    "agent-tools/ladder.md": 1,
    "agent-tools/toolkit.md": 1,
    "integrations/ai-clis.md": 2,
    "integrations/anthropic.md": 1,
    "integrations/azure-openai.md": 1,
    "integrations/bedrock.md": 1,
    "integrations/cohere.md": 1,
    "integrations/google-cloud.md": 1,
    "integrations/http-clients.md": 1,
    "integrations/huggingface.md": 1,
    "integrations/langchain.md": 1,
    "integrations/langgraph.md": 2,
    "integrations/mcp-server.md": 1,
    "integrations/mistral.md": 1,
    "integrations/ollama.md": 1,
    "integrations/openai-base-url.md": 1,
    "integrations/openai-agents.md": 1,
    "integrations/openai-compatible.md": 1,
    "integrations/openai.md": 2,
    "integrations/otel.md": 1,
    "integrations/pydantic-ai.md": 1,
    "integrations/retry-libraries.md": 2,
}
# The pages whose examples this file does not run: the wire page's are the README's
# (tests/project/test_readme.py runs them, server and client against each other); the engine pages
# (Temporal, Celery, DBOS) are rewritten on their own branches this round, with their runs.
NOT_RUN_HERE = {
    "integrations/wire.md",  # the README's wire examples, run there (test_readme)
    "integrations/temporal.md",  # run on the real dev server: test_engine_temporal_sandbox
    "integrations/celery.md",  # run on real workers: test_docs_celery
    "integrations/dbos.md",  # run on real DBOS with SQLite: test_docs_dbos
    "integrations/mcp-client.md",  # against a real MCP server under uvicorn: test_docs_mcp_client
}
# The real CLIs an example runs (as a user's PATH has them).
CLIS_RUN = {"testing.md": ("claude",), "integrations/ai-clis.md": agents.CLI_NAMES}


def test_every_python_example_is_run() -> None:
    with_examples = {
        str(path.relative_to(DOCS))
        for path in DOCS.rglob("*.md")
        if _python_blocks(str(path.relative_to(DOCS)))
    }
    assert with_examples == set(RUNNABLE) | NOT_RUN_HERE


@pytest.mark.parametrize("page", sorted(RUNNABLE))
def test_the_runnable_examples_run(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    where = cli_bin_dir()
    for cli in CLIS_RUN.get(page, ()):
        find_cli(cli, where)  # else: fail with how to install it
    if where is not None:
        monkeypatch.setenv("PATH", f"{where}{os.pathsep}{os.environ.get('PATH', '')}")
    blocks = _python_blocks(page)
    assert len(blocks) == RUNNABLE[page]
    namespace: dict[str, object] = {"__name__": "docs"}
    hooks = rc.instrumentation.get_failure_hooks()  # the otel page adds hooks
    try:
        for index, code in enumerate(blocks):
            exec(compile(code, f"{page} block {index}", "exec"), namespace)
    finally:
        if "store_missing" in rc.codes:  # the toolkit example registers it
            rc.codes.unregister("store_missing")
        rc.testing.set_testing(False)
        rc.instrumentation.set_failure_hooks(hooks)


def test_the_wire_examples_are_the_readmes() -> None:
    """tests/project/test_readme.py runs them: the server and the client against each other."""
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Errors on the wire") : readme.index("## The agent-tool")]
    assert _python_blocks("integrations/wire.md") == re.findall(
        r"```python\n(.*?)```", section, re.DOTALL
    )


# --- the testing page: what it lists is what the code has --------------------------------


def _table(page: str, heading: str) -> list[list[str]]:
    """The rows of the first table under `heading` (cells stripped, header and rule left out)."""
    text = (DOCS / page).read_text()
    section = text[text.index(heading) :]
    lines = section.split("\n| ", 1)[1].split("\n\n", 1)[0].split("\n")
    rows = [line.strip().strip("|").split(" | ") for line in ["| " + lines[0], *lines[1:]]]
    return [[cell.strip() for cell in row] for row in rows[2:]]


def _constructor(name: str) -> str:
    """`Fault.name(arg=default, *, kw=default)`, as the code declares it."""
    parts: list[str] = []
    for param in inspect.signature(getattr(Fault, name)).parameters.values():
        if param.kind is param.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        parts.append(
            param.name if param.default is param.empty else f"{param.name}={param.default!r}"
        )
    return f"`Fault.{name}({', '.join(parts)})`"


def test_the_testing_page_has_every_fault_with_its_arguments_and_code() -> None:
    rows = _table("testing.md", "## Faults")
    names = typing.get_args(FaultName)
    assert [row[0] for row in rows] == [_constructor(name) for name in names]
    for name, (_, sends, _) in zip(names, rows, strict=True):
        for param in inspect.signature(getattr(Fault, name)).parameters:
            assert f"`{param}`" in sends, f"Fault.{name}: its `{param}` is not described"
    codes = {row.fault: row.code for row in FAULTS}
    for name, row in zip(names, rows, strict=True):
        if name in codes:  # `status` says what its status says
            retry = "retryable" if rc.codes.get(codes[name]).retryable else "not retryable"
            assert row[2].startswith(f"`{codes[name]}`, {retry}"), name


def test_the_testing_page_has_every_api_the_fake_speaks() -> None:
    listed = {
        api.strip("`")
        for row in _table("testing.md", "### Which URL for which API")
        for api in row[-1].split(", ")
    }
    spoken = {api.name for provider in PROVIDERS for api in provider.apis}
    assert listed == spoken - {"unknown"}


def test_the_reference_names_every_api_a_recorded_request_can_have(site: Path) -> None:
    html = (site / "reference" / "api" / "testing" / "index.html").read_text()
    entry = _entry(html, "recoverable.testing.RecordedRequest.api")
    for api in {api.name for provider in PROVIDERS for api in provider.apis}:
        assert f"&quot;{api}&quot;" in entry or f'"{api}"' in entry, api


def test_the_testing_page_has_every_field_and_method() -> None:
    page = (DOCS / "testing.md").read_text()
    fields = [row[0] for row in _table("testing.md", "## Recorded requests")]
    assert fields == [f"`{field.name}`" for field in dataclasses.fields(RecordedRequest)]
    limits = [row[0] for row in _table("testing.md", "## Limits")]
    assert limits == [f"`{field.name}`" for field in dataclasses.fields(Limits)]
    for kind in (RateLimit, CliSetup):
        for field in dataclasses.fields(kind):
            assert f"`{field.name}" in page, f"{kind.__name__}.{field.name}"
    for name in dir(FakeProvider):
        if not name.startswith("_"):
            assert re.search(rf"`(fake\.)?{name}\b", page), f"FakeProvider.{name}"
    for name in testing.__all__:
        assert f"`{name}" in page, f"recoverable.testing.{name}"


def test_the_pages_that_mention_fakeprovider_link_the_testing_page() -> None:
    for path in sorted(DOCS.rglob("*.md")):
        page = str(path.relative_to(DOCS))
        text = path.read_text()
        if "FakeProvider" not in text or page == "testing.md" or page in _LINK_PENDING:
            continue
        target = os.path.relpath(DOCS / "testing.md", path.parent)
        assert f"]({target}" in text, f"{page} mentions FakeProvider without linking {target}"


_LINK_PENDING: set[str] = set()  # pages whose link to the testing page is still to come


def test_getting_started_links_the_reference_and_the_testing_page() -> None:
    text = (DOCS / "getting-started.md").read_text()
    assert "](reference/api/index.md)" in text
    assert "](testing.md)" in text

"""The README's examples run as written, every ```python block of it, so they stay true."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import recoverable as rc

REPO = Path(__file__).resolve().parents[2]
SECTION = ("## The agent-tool side", "## Testing your agent")


def _blocks(language: str) -> list[str]:
    text = (REPO / "README.md").read_text()
    start, end = (text.index(heading) for heading in SECTION)
    return re.findall(rf"```{language}\n(.*?)```", text[start:end], re.DOTALL)


def test_the_section_has_its_examples() -> None:
    assert len(_blocks("python")) == 4
    assert len(_blocks("bash")) == 1


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


# --- the wire section ---------------------------------------------------------------------

WIRE = ("## Errors on the wire", "## The agent-tool side")
FAULTS = {"rate_limited", "insufficient_quota", "overloaded", "unauthorized", "cut_stream"}


def _wire_blocks(language: str) -> list[str]:
    text = (REPO / "README.md").read_text()
    start, end = (text.index(heading) for heading in WIRE)
    return re.findall(rf"```{language}\n(.*?)```", text[start:end], re.DOTALL)


def test_the_wire_section_has_its_examples() -> None:
    assert len(_wire_blocks("python")) == 3
    (command,) = _wire_blocks("bash")
    argv = command.split("#")[0].split()
    assert argv[:3] == ["python", "examples/agent_chat/app.py", "--fake"]
    assert (REPO / argv[1]).is_file()  # tests/wire/test_browser.py runs it
    assert argv[3] in FAULTS


# -- the other runnable examples: stages, FakeProvider with agents.run, the extras ------------


def _section(heading: str) -> str:
    """The README's text under `heading`, up to the next heading of any level."""
    text = (REPO / "README.md").read_text()
    start = text.index(f"\n{heading}\n")
    following = re.search(r"\n#{2,3} ", text[start + 1 :])
    return text[start : start + 1 + following.start()] if following else text[start:]


def test_the_extras_table_names_the_extras_pyproject_has() -> None:
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    named = set(
        re.findall(
            r'"recoverable\[([\w-]+)\]"', _section("## Installing: which extra for which SDK")
        )
    )
    assert named == set(extras) - {"test"}


def test_the_readme_links_resolve() -> None:
    text = (REPO / "README.md").read_text()
    for target in re.findall(r"\]\(((?:docs|benchmarks)/[^)#]+)", text):
        assert (REPO / target).is_file(), target
    anchors = {
        re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")
        for heading in re.findall(r"^#{2,3} (.+)$", text, re.MULTILINE)
    }
    for anchor in re.findall(r"\]\(#([^)]+)\)", text):
        assert anchor in anchors, anchor


# --- every ```python block of the README runs as written ---------------------------------
# Each block belongs to the nearest heading above it (## or ###); a section's blocks run in
# order in one namespace of their own, never with a name the test supplies. Every section
# with a block has its entry in RUNS, which says what its blocks print: a block added to a
# section changes its count, a new section has no entry, and either fails the suite.


def _python_sections() -> dict[str, list[str]]:
    text = (REPO / "README.md").read_text()
    heading, sections = "", dict[str, list[str]]()
    for line, block in re.findall(r"^(#{2,3} [^\n]+)$|^```python\n(.*?)^```", text, re.M | re.S):
        heading = line or heading
        if not line:
            sections.setdefault(heading, []).append(block)
    return sections


SECTIONS = _python_sections()


@dataclass(frozen=True)
class Fixtures:
    """What a section's run may use: pytest's fixtures, never a name for the blocks."""

    monkeypatch: pytest.MonkeyPatch
    tmp_path: Path


def _run(heading: str, blocks: list[str]) -> list[str]:
    """Run `blocks` in order in one namespace; the lines they printed."""
    namespace: dict[str, Any] = {"__name__": "readme"}
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            for index, code in enumerate(blocks):
                exec(compile(code, f"README.md {heading} block {index}", "exec"), namespace)
    finally:
        if "store_missing" in rc.codes:  # the toolkit example registers it
            rc.codes.unregister("store_missing")
        rc.testing.set_testing(False)
    return printed.getvalue().splitlines()


def _cli_path(monkeypatch: pytest.MonkeyPatch, *clis: str) -> None:
    """The real CLIs on PATH, as a user's PATH has them (else: fail with how to install)."""
    from ..support.cli import cli_bin_dir, find_cli

    where = {str(Path(find_cli(cli, cli_bin_dir())).parent) for cli in clis}
    monkeypatch.setenv("PATH", os.pathsep.join([*sorted(where), os.environ.get("PATH", "")]))


def _quickstart(blocks: list[str], _: Fixtures) -> None:
    row = rc.codes["provider_quota_exceeded"]
    assert _run("quickstart", blocks) == [
        "Hello from FakeProvider.",
        "provider_quota_exceeded False",
        row.fix_required,
        row.user_message,
        "3",
    ]  # the 1 s Retry-After is really waited, as the comment says


def _the_value(blocks: list[str], _: Fixtures) -> None:
    row = rc.codes["provider_quota_exceeded"]
    assert len(blocks) == 2
    assert _run("the value", blocks) == [
        "provider_quota_exceeded", "False", "None", row.fix_required, "None", row.user_message,
        "fix", "True", "429 openai req_fake_0001", "502 9", f"change first: {row.fix_required}",
    ]  # fmt: skip


def _classifying(blocks: list[str], _: Fixtures) -> None:
    assert _run("classifying", blocks) == ["network_error", "provider_rate_limited 1000"]


def _stages(blocks: list[str], _: Fixtures) -> None:
    assert len(blocks) == 1
    assert _run("stages", blocks) == []  # its asserts are what it shows


def _retry_and_fallback(blocks: list[str], _: Fixtures) -> None:
    assert _run("retry", blocks) == [
        *["Hello from FakeProvider."] * 4,
        "Hello from FakeProvider. anthropic ['provider_quota_exceeded']",
        "provider_quota_exceeded False RateLimitError",
    ]


def _fleet(blocks: list[str], fixtures: Fixtures) -> None:
    fixtures.monkeypatch.chdir(fixtures.tmp_path)  # the SQLite store is a file in the cwd
    assert len(blocks) == 2
    (line,) = _run("fleet", blocks)
    assert re.fullmatch(r"[12] 429s", line), line


def _ai_clis(blocks: list[str], fixtures: Fixtures) -> None:
    _cli_path(fixtures.monkeypatch, "claude", "codex")
    events = {"TextDelta", "ThinkingDelta", "ToolStart", "ToolEnd", "TurnEnd", "ErrorEvent", "Raw"}
    assert len(blocks) == 1
    *streamed, done, run, replayed = _run("the AI CLIs", blocks)
    assert set(streamed) <= events and "TextDelta" in streamed and done == "Done", streamed
    assert run == "True Hello from FakeProvider."
    assert replayed == "False provider_auth_failed"


def _wire(blocks: list[str], fixtures: Fixtures) -> None:
    from recoverable.testing import FakeProvider, Fault

    from ..support.wire_server import serving

    pure, server, client = blocks
    assert _run("wire 0", [pure]) == []
    namespace: dict[str, Any] = {"__name__": "readme"}
    exec(compile(server, "README.md wire block 1", "exec"), namespace)
    with FakeProvider() as fake, serving(namespace["app"]) as url:
        fixtures.monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_url)
        fixtures.monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
        code = client.replace("http://127.0.0.1:8000", url)  # the server's free port
        fake.fail(Fault.rate_limited(retry_after=1))  # retried after 1 s, then answered
        assert _run("wire 2", [code]) == ["Hello from FakeProvider."]
        fake.fail(Fault.insufficient_quota())  # a quota stop: not retried
        row = rc.codes["provider_quota_exceeded"]
        assert _run("wire 2", [code]) == [f"provider_quota_exceeded {row.user_message}"]
        assert [r.fault for r in fake.requests] == ["rate_limited", None, "insufficient_quota"]


def _runs_silently(blocks: list[str], _: Fixtures) -> None:
    assert len(blocks) == 1
    assert _run("agent-tool", blocks) == []  # its asserts are what it shows


def _testing(blocks: list[str], _: Fixtures) -> None:
    assert _run("FakeProvider", blocks) == [
        "429", "Hi there.", "['rate_limited', None]", "provider_overloaded",
    ]  # fmt: skip


def _agents_run(blocks: list[str], fixtures: Fixtures) -> None:
    _cli_path(fixtures.monkeypatch, "claude", "codex")
    assert len(blocks) == 1
    assert _run("agents.run", blocks) == []  # its asserts are what it shows


# The engine blocks need a real engine: each is an example its page runs there.
# (the page, its example): temporal.md's workflows.py
# (tests/integrations/test_temporal_sandbox.py), celery.md's caller.py
# (tests/integrations/test_docs_celery.py), dbos.md's step (tests/integrations/test_docs_dbos.py),
# otel.md's (tests/project/test_docs.py).
ENGINE_PAGES = [("temporal", 1), ("celery", 1), ("dbos", 1), ("otel", 0)]
DOCS = REPO / "docs" / "integrations"


def _engines(blocks: list[str], _: Fixtures) -> None:
    pages = {
        page: re.findall(r"```python\n(.*?)```", (DOCS / f"{page}.md").read_text(), re.S)
        for page, _ in ENGINE_PAGES
    }
    assert blocks == [pages[page][index] for page, index in ENGINE_PAGES]


RUNS: dict[str, Callable[[list[str], Fixtures], None]] = {
    "## Quickstart": _quickstart,
    "## The value": _the_value,
    "### Classifying an SDK error": _classifying,
    "### Your own classifier stages": _stages,
    "## Retry and fallback that obey it": _retry_and_fallback,
    "## A fleet: one 429 quiets every worker": _fleet,
    "## The AI coding CLIs": _ai_clis,
    "## Errors on the wire: streams, HTTP answers, the browser": _wire,
    "### The envelope": _runs_silently,
    "### Exit codes, both ways": _runs_silently,
    "### The ladder as code: `next_action` and `recover`": _runs_silently,
    "### A toolkit for tool authors (click, typer)": _runs_silently,
    "## Testing your agent: `FakeProvider`": _testing,
    "### Pointing `agents.run` at FakeProvider": _agents_run,
    "## Beyond one machine: Temporal, Celery, DBOS, OpenTelemetry": _engines,
}


def test_every_section_with_a_python_block_has_its_run() -> None:
    assert list(SECTIONS) == list(RUNS)


@pytest.mark.parametrize("heading", list(SECTIONS))
def test_every_python_block_runs_as_written(
    heading: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run = RUNS.get(heading)
    assert run is not None, f"README {heading!r}: a section with no run in RUNS"
    run(SECTIONS[heading], Fixtures(monkeypatch, tmp_path))

"""The README's agent-tool examples run as written, so they stay true."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    assert (REPO / argv[1]).is_file()  # tests/test_wire_browser.py runs it
    assert argv[3] in FAULTS


def test_the_wire_examples_run(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    from recoverable.testing import FakeProvider, Fault

    from .wire_server import serving

    pure, server, client = _wire_blocks("python")
    exec(compile(pure, "README.md wire block 0", "exec"), {"__name__": "readme"})
    namespace: dict[str, Any] = {"__name__": "readme"}
    exec(compile(server, "README.md wire block 1", "exec"), namespace)
    with FakeProvider() as fake, serving(namespace["app"]) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
        code = client.replace("http://127.0.0.1:8000", url)
        fake.fail(Fault.rate_limited(retry_after=1))  # retried after 1 s, then answered
        exec(compile(code, "README.md wire block 2", "exec"), {"__name__": "readme"})
        assert capsys.readouterr().out == "Hello from FakeProvider.\n"
        fake.fail(Fault.insufficient_quota())  # a quota stop: not retried
        exec(compile(code, "README.md wire block 2", "exec"), {"__name__": "readme"})
        row = rc.codes["provider_quota_exceeded"]
        assert capsys.readouterr().out == f"provider_quota_exceeded {row.user_message}\n"
        assert [r.fault for r in fake.requests] == ["rate_limited", None, "insufficient_quota"]


# -- the other runnable examples: stages, FakeProvider with agents.run, the extras ------------


def _section(heading: str) -> str:
    """The README's text under `heading`, up to the next heading of any level."""
    text = (REPO / "README.md").read_text()
    start = text.index(f"\n{heading}\n")
    following = re.search(r"\n#{2,3} ", text[start + 1 :])
    return text[start : start + 1 + following.start()] if following else text[start:]


def _run_python_blocks(heading: str, expected: int) -> None:
    blocks = re.findall(r"```python\n(.*?)```", _section(heading), re.DOTALL)
    assert len(blocks) == expected
    for index, code in enumerate(blocks):
        exec(compile(code, f"README.md {heading} {index}", "exec"), {"__name__": "readme"})


def test_the_classifier_stage_example_runs() -> None:
    _run_python_blocks("### Your own classifier stages", 1)


def test_the_fakeprovider_agents_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from .cli_support import cli_bin_dir, find_cli

    where = Path(find_cli("claude", cli_bin_dir())).parent
    monkeypatch.setenv("PATH", f"{where}{os.pathsep}{os.environ.get('PATH', '')}")
    _run_python_blocks("### Pointing `agents.run` at FakeProvider", 1)


def test_the_extras_table_names_the_extras_pyproject_has() -> None:
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    named = set(
        re.findall(r'"recoverable\[(\w+)\]"', _section("## Installing: which extra for which SDK"))
    )
    assert named == set(extras) - {"test"}


def test_the_quickstart_runs_as_written(capsys: Any) -> None:
    (code,) = re.findall(r"```python\n(.*?)```", _section("## Quickstart"), re.DOTALL)
    rc.set_testing(False)  # the 1 s Retry-After is really waited, as the comment says
    exec(compile(code, "README.md quickstart", "exec"), {"__name__": "readme"})
    row = rc.codes["provider_quota_exceeded"]
    assert capsys.readouterr().out.splitlines() == [
        "Hello from FakeProvider.",
        "provider_quota_exceeded False",
        row.fix_required,
        row.user_message,
        "3",
    ]


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

"""docs/integrations/dbos.md as a user runs it: its Python blocks run as written, in order, in
one process on real DBOS with a SQLite file (the last block in a fresh process), the openai
client pointed at FakeProvider through `OPENAI_BASE_URL`; what they print is what the page
says they print."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from recoverable.testing import FakeProvider, Fault

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "integrations" / "dbos.md"

# Runs the blocks given as JSON, each compiled on its own (a traceback names the block).
RUNNER = """
import json, sys
namespace = {"__name__": "__main__"}
for index, code in json.loads(sys.argv[1]):
    exec(compile(code, f"dbos.md block {index}", "exec"), namespace)
"""


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)


def _printed(label: str) -> list[str]:
    """The lines the page says a process prints: the indented block after `label`."""
    text = PAGE.read_text()
    after = text[text.index(label) + len(label) :]
    lines = after.split("\n\n")[1].splitlines()
    return [line.strip() for line in lines]


def _run(blocks: list[tuple[int, str]], cwd: Path, fake: FakeProvider) -> list[str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(
        NO_PROXY="127.0.0.1,::1,localhost",
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=fake.openai_url,
        PYTHONPATH=str(REPO / "src"),
    )
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(blocks)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_dbos_page_runs_as_written(tmp_path: Path) -> None:
    blocks = list(enumerate(_blocks()))
    assert len(blocks) == 6
    with FakeProvider() as fake:
        fake.fail(Fault.insufficient_quota(), times=2)
        fake.fail(Fault.rate_limited(retry_after=1))
        first = _run(blocks[:-1], tmp_path, fake)
        assert [r.fault for r in fake.requests] == [
            "insufficient_quota", "insufficient_quota", "rate_limited", None,
        ]  # fmt: skip
        second = _run(blocks[-1:], tmp_path, fake)
        assert len(fake.requests) == 4  # reading back asks nothing
    assert (tmp_path / "my-agent.sqlite").is_file()  # the SQLite file of the first block
    assert first == _printed("the first process prints")
    assert second == _printed("and the second")

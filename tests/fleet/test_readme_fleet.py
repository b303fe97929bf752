"""The README's fleet examples run as written (the Redis one against the test's redis-server)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SECTION = ("## A fleet: one 429 quiets every worker", "## The AI coding CLIs")


def _blocks() -> list[str]:
    text = (REPO / "README.md").read_text()
    start, end = (text.index(heading) for heading in SECTION)
    return re.findall(r"```python\n(.*?)```", text[start:end], re.DOTALL)


def test_the_section_has_its_examples() -> None:
    assert len(_blocks()) == 2
    # as written it runs on one machine (SQLite); the comment names the fleet's Redis form,
    # which the test below runs on a real redis-server
    assert 'fleet = Cooldowns.sqlite("fleet.sqlite")' in _blocks()[0]
    assert 'Cooldowns.redis("redis://host:6379/0")' in _blocks()[0]


@pytest.mark.parametrize("block", range(2))
def test_each_fleet_example_runs(
    block: int, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The block's own relative path must never land in the repo: a README edit that this
    # replacement missed once ran the SQLite form in the checkout and fleet.sqlite was committed.
    # The test asserts the swap happened and runs in a folder of its own.
    monkeypatch.chdir(tmp_path)
    written = 'Cooldowns.sqlite("fleet.sqlite")'
    assert _blocks()[block].count(written) == (1 if block == 0 else 0)
    code = _blocks()[block].replace(written, f"Cooldowns.redis({redis_url!r})")
    assert "sqlite" not in code
    scope: dict[str, object] = {"__name__": "readme"}
    if block == 1:
        exec(compile(_blocks()[0].split("\nfleet = ")[0], "README imports", "exec"), scope)
    exec(compile(code, f"README.md fleet block {block}", "exec"), scope)

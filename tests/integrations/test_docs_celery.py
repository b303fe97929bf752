"""docs/integrations/celery.md as a user meets it: `tasks.py` and `caller.py` are the page's
blocks written to files as they are, run by two real workers (`celery -A tasks worker
--pool=solo`) over Debian's redis-server on 127.0.0.1, against FakeProvider; the page's other
block runs in this process. And `pip install "recoverable[celery]"` brings what kombu's
Redis transport imports (`redis`, `packaging`), read from the installed packages' metadata.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ..support.redis import redis_server
from .test_celery import stop

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "integrations" / "celery.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)


def test_the_page_has_its_blocks_and_names_the_settings() -> None:
    found = blocks()
    assert len(found) == 3
    assert found[0].startswith("# tasks.py\n") and found[1].startswith("# caller.py\n")
    assert "recoverable_cooldowns=" in found[0]
    assert "rc.without_sdk_retries(" in found[0]
    assert 'pip install "recoverable[celery]"' in PAGE.read_text()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    tasks, caller, _ = blocks()
    (tmp_path / "tasks.py").write_text(tasks)
    (tmp_path / "caller.py").write_text(caller)
    return tmp_path


@pytest.fixture
def env(tmp_path: Path, fake: FakeProvider) -> Iterator[dict[str, str]]:
    (tmp_path / "redis").mkdir()
    with redis_server(tmp_path / "redis") as url:
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        env.update(
            NO_PROXY="127.0.0.1,::1,localhost",
            REDIS_URL=url,
            OPENAI_API_KEY="sk-test",
            OPENAI_BASE_URL=fake.openai_url,
            PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO / "src")]),
        )
        yield env


def test_tasks_py_and_caller_py_run_as_written_against_real_workers(
    folder: Path, env: dict[str, str], fake: FakeProvider
) -> None:
    fake.fail(Fault.rate_limited(retry_after=1), times=1)
    workers = []
    try:
        for n in (1, 2):
            argv = [
                sys.executable, "-m", "celery", "-A", "tasks", "worker", "--pool=solo",
                "-n", f"w{n}@127.0.0.1", "--without-heartbeat", "--without-mingle",
                "--without-gossip", "--loglevel=WARNING",
            ]  # fmt: skip
            with (folder / f"w{n}.log").open("wb") as log:
                workers.append(subprocess.Popen(argv, cwd=folder, env=env, stdout=log, stderr=log))
        done = subprocess.run(
            [sys.executable, "caller.py"], cwd=folder, env=env, capture_output=True, text=True,
            timeout=180, check=False,
        )  # fmt: skip
    finally:
        for worker in workers:
            stop(worker)
    logs = "".join((folder / f"w{n}.log").read_text(errors="replace") for n in (1, 2))
    assert done.returncode == 0, done.stderr[-3000:] + logs[-3000:]
    # One worker's 429 quieted the key for both: five tasks, five answers, one 429 in all.
    assert done.stdout.splitlines() == ["SUCCESS Hello from FakeProvider."] * 5, done.stdout
    assert [r.fault for r in fake.requests].count("rate_limited") == 1
    assert len(fake.requests) == 6
    assert all(worker.returncode == 0 for worker in workers), logs[-3000:]
    # summarize's budget per task id is in Redis: one task, its attempts counted there.
    store = redis.Redis.from_url(env["REDIS_URL"])
    try:
        budgets = [key.decode() for key in store.scan_iter("recoverable:task:*")]
    finally:
        store.close()
    assert len(budgets) == 1
    name = budgets[0].removeprefix("recoverable:task:")
    fleet = rc.fleet.Cooldowns.redis(env["REDIS_URL"])
    try:
        assert 1 <= fleet.task(name, max_attempts=5).usage().attempts <= 2
    finally:
        fleet.close()


def test_the_pure_decision_block_runs() -> None:
    exec(compile(blocks()[2], "celery.md block 2", "exec"), {"__name__": "docs"})


def _closure(requirements: list[str]) -> set[str]:
    """The distributions a set of requirements installs, read from the installed metadata
    (extras followed; a distribution not installed here is a leaf)."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [Requirement(text) for text in requirements]
    while todo:
        wanted = todo.pop()
        key = (canonicalize_name(wanted.name), frozenset(wanted.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            needs = importlib.metadata.requires(wanted.name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in needs:
            need = Requirement(text)
            extras = wanted.extras or {""}
            if need.marker is None or any(need.marker.evaluate({"extra": e}) for e in extras):
                todo.append(need)
    return {name for name, _ in seen}


def test_the_celery_extra_brings_what_a_redis_broker_imports() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    installed = _closure(extras["celery"])
    assert {"celery", "kombu", "redis", "packaging"} <= installed, installed
    # What kombu's Redis transport imports at its top (the import that failed without it).
    transport = Path(importlib.import_module("kombu.transport.redis").__file__ or "")
    assert "from packaging.version import Version" in transport.read_text()

"""The fleet tests' fixtures: a session redis-server, one `Cooldowns` factory per store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import recoverable as rc

from ..support.redis import redis_server
from ..support.retry import Clock
from .support import NOW, STORES, Factory, factory


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(params=STORES)
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    built: list[rc.fleet.Cooldowns] = []
    base = factory(request.param, tmp_path, url)

    def make(**options: Any) -> rc.fleet.Cooldowns:
        cooldowns = base(**options)
        built.append(cooldowns)
        return cooldowns

    yield make
    for cooldowns in built:
        cooldowns.close()


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW)

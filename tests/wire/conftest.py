"""The wire tests' fixtures: the test app (tests/support/wire_app.py) over a FakeProvider,
served by a real uvicorn server once a module, and a fresh view of it for each test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from recoverable.testing import FakeProvider

from ..support.cli import cli_bin_dir, find_cli
from ..support.wire_app import AppState, build
from ..support.wire_server import serving


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppState, str]]:
    """The app's state and its base URL, for the whole module (Claude Code from the test bin)."""
    home = tmp_path_factory.mktemp("wire-home")
    with FakeProvider() as fake:
        state = AppState(fake, home, find_cli("claude", cli_bin_dir()))
        with serving(build(state)) as url:
            yield state, url


@pytest.fixture
def app(served: tuple[AppState, str]) -> AppState:
    """The served app's state, its fake provider reset for this test."""
    served[0].fake.reset()
    return served[0]


@pytest.fixture
def client(served: tuple[Any, str]) -> Iterator[httpx.Client]:
    """An httpx client on the served app (a module's own `served`, where it has one)."""
    with httpx.Client(base_url=served[1], timeout=60) as client:
        yield client

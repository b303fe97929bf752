"""Shared test setup: loopback-only networking and a running FakeProvider per test."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest

from recoverable.testing import FakeProvider

# litellm fetches a price map from the internet at import unless told not to; tests only ever
# talk to 127.0.0.1.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("LITELLM_LOG", "ERROR")

_PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SDKs and HTTP clients honour proxy variables; loopback traffic must never leave the
    # machine.
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,::1,localhost")


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    """A running FakeProvider, fresh for each test (start and stop take a few ms)."""
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def no_server_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Fail the test if FakeProvider logs a warning or an error (a traceback) while it runs.

    A client's fault is the client's: the server logs it at debug level. Requested before
    the test's FakeProvider, it checks after that provider has stopped.
    """
    caplog.set_level(logging.DEBUG, logger="recoverable.testing")
    yield
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in loud] == []

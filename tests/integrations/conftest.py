"""The integration tests' shared fixture: recoverable's own waits off, on request."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import recoverable as rc


@pytest.fixture
def no_waits() -> Iterator[None]:
    """recoverable's own waits off, where the wait itself is not under test."""
    rc.testing.set_testing(True)
    try:
        yield
    finally:
        rc.testing.set_testing(False)

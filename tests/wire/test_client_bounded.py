"""The wire's client reads an error body only up to its cap, then hangs up: a huge body (a
misbehaving proxy's, a forged one) costs the client no more memory than the cap, through a
real httpx client against a real server on 127.0.0.1, sync and async."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from benchmarks._huge_error import huge_error as serving_huge_error

import recoverable as rc
from recoverable import wire
from recoverable.wire._http import MAX_BODY_BYTES

BODY_MIB = 64
HEADERS = {"content-type": "application/json", "retry-after": "3"}
PIECE = b'{"error": {"type": "rate_limit_error", "message": "slow down"}}' + b" " * 65_472


@pytest.fixture
def huge_error() -> Iterator[tuple[str, list[int]]]:
    with serving_huge_error(BODY_MIB, PIECE, HEADERS) as served:
        yield served


def _stopped_early(sent: list[int]) -> None:
    deadline = time.monotonic() + 20  # the server learns of the hang-up at its next write
    while not sent and time.monotonic() < deadline:
        time.sleep(0.01)
    deadline_bytes = 16 * 1024 * 1024  # the cap, plus what the sockets' buffers held
    assert len(sent) == 1
    assert sent[0] < deadline_bytes < BODY_MIB * 1024 * 1024


def test_a_huge_streamed_error_body_is_read_to_the_cap_and_the_stream_closed(
    huge_error: tuple[str, list[int]],
) -> None:
    url, sent = huge_error
    with httpx.Client(timeout=30) as client, client.stream("GET", url) as response:
        with pytest.raises(rc.RecoverableError) as raised:
            wire.raise_for_error(response)
        assert response.is_closed
    assert (raised.value.code, raised.value.retry_after_ms) == ("provider_rate_limited", 3000)
    _stopped_early(sent)


async def test_the_async_client_and_the_stream_iterators_stop_at_the_cap(
    huge_error: tuple[str, list[int]],
) -> None:
    url, sent = huge_error
    async with httpx.AsyncClient(timeout=30) as client, client.stream("GET", url) as response:
        with pytest.raises(rc.RecoverableError) as raised:
            async for _ in wire.aiter_events(response):
                pass
        assert response.is_closed
    assert raised.value.code == "provider_rate_limited"
    _stopped_early(sent)


def test_a_body_the_client_had_read_already_is_cut_to_the_cap() -> None:
    body = b'{"error": "busy"}' + b" " * (3 * MAX_BODY_BYTES)
    response = httpx.Response(503, content=body)
    with pytest.raises(rc.RecoverableError) as raised:
        wire.raise_for_error(response)
    assert raised.value.code == "provider_overloaded"

"""What the tests that call a provider (real or fake) share: catching what a call raises, a
loopback port with nothing listening, and clients and helpers for FakeProvider's tests."""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import AsyncIterable, Callable, Iterable
from typing import Any

import anthropic
import openai

from recoverable.testing import FakeProvider, RecordedRequest

MSGS: Any = [{"role": "user", "content": "What is the weather in Paris?"}]
HELLO = "Hello from FakeProvider."
RPC = "type.googleapis.com/google.rpc."


def raised(call: Callable[[], object]) -> BaseException:
    """The exception `call` raises; fails the test when it raises nothing."""
    try:
        call()
    except Exception as exc:
        return exc
    raise AssertionError(f"{call!r} raised nothing")


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released, so a connect is refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def openai_client(fake: FakeProvider, timeout: float = 5.0) -> openai.OpenAI:
    """An OpenAI client of `fake`, its retries off."""
    return openai.OpenAI(
        api_key="sk-test-abcdef123456", base_url=fake.openai_url, max_retries=0, timeout=timeout
    )


def anthropic_client(fake: FakeProvider, timeout: float = 5.0) -> anthropic.Anthropic:
    """An Anthropic client of `fake`, its retries off."""
    return anthropic.Anthropic(api_key="x", base_url=fake.url, max_retries=0, timeout=timeout)


def collect(items: Iterable[Any], into: list[Any], pick: Callable[[Any], Any]) -> None:
    """Consume a stream, keeping what arrived before any exception."""
    for item in items:
        into.append(pick(item))


async def acollect(items: AsyncIterable[Any], into: list[Any]) -> None:
    """Consume an async stream of typed events, keeping their types."""
    async for item in items:
        into.append(item.type)


def no_proxy_opener() -> urllib.request.OpenerDirector:
    """A urllib opener that ignores proxy settings."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def summary(requests: list[RecordedRequest]) -> list[tuple[str, str, str | None, bool, str | None]]:
    """Each recorded request's API, path, model, stream flag and fault."""
    return [(r.api, r.path, r.model, r.stream, r.fault) for r in requests]

"""requests, urllib and aiohttp, the HTTP clients tools use most, against FakeProvider.

Each case makes a real call to 127.0.0.1, catches what the library really raises and asserts
the exact classification. An error body is read when the library already holds it
(requests); urllib's is left unread and aiohttp's is released, so their statuses decide.
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from typing import Any

import aiohttp
import pytest
import requests

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ...support.providers import free_port, raised

CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}


def _facts(error: BaseException) -> tuple[Any, ...]:
    detail = rc.classify(error)
    return (detail.code, detail.retryable, detail.retry_after_ms, detail.status,
            detail.details.get("phase"))  # fmt: skip


def _requests_post(fake: FakeProvider, timeout: float = 5) -> None:
    requests.post(f"{fake.openai_url}/chat/completions", json=CHAT, timeout=timeout)\
        .raise_for_status()  # fmt: skip


# (fault, error class, code, retryable, retry_after_ms, status, phase)
REQUESTS_CASES = [
    # An LLM API's error body is read: the provider's own codes, quota apart from rate.
    (Fault.rate_limited(retry_after=2), "HTTPError", "provider_rate_limited", True, 2000, 429,
     None),
    (Fault.insufficient_quota(), "HTTPError", "provider_quota_exceeded", False, None, 429, None),
    (Fault.context_too_long(), "HTTPError", "provider_context_too_long", False, None, 400, None),
    # Any other service: the status alone.
    (Fault.status(404, "no such item"), "HTTPError", "not_found", False, None, 404, None),
    (Fault.status(503, "down", {"retry-after": "3"}), "HTTPError", "unavailable", True, 3000, 503,
     None),
    (Fault.status(409, "edited elsewhere"), "HTTPError", "conflict", False, None, 409, None),
    (Fault.drop(), "ConnectionError", "network_error", True, None, None, "read"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fault", "kind", "code", "retryable", "retry_after_ms", "status", "phase"),
    REQUESTS_CASES,
    ids=[f"{case[0].name}-{case[0].status_code or ''}" for case in REQUESTS_CASES],
)
def test_requests_against_the_fake_provider(
    fake: FakeProvider,
    fault: Fault,
    kind: str,
    code: str,
    retryable: bool,
    retry_after_ms: int | None,
    status: int | None,
    phase: str | None,
) -> None:
    fake.fail(fault)
    error = raised(lambda: _requests_post(fake))
    assert type(error).__name__ == kind
    assert _facts(error) == (code, retryable, retry_after_ms, status, phase)


def test_requests_timeout_refused_and_cut_body(fake: FakeProvider) -> None:
    fake.fail(Fault.hang(5))
    timeout = raised(lambda: _requests_post(fake, timeout=0.3))
    # The request was sent: side effects unknown, so not retried blindly.
    assert (type(timeout), _facts(timeout)) == (
        requests.ReadTimeout, ("timeout", False, None, None, "read"),
    )  # fmt: skip
    port = free_port()
    refused = raised(lambda: requests.get(f"http://127.0.0.1:{port}/", timeout=2))
    assert (type(refused), _facts(refused)) == (
        requests.ConnectionError, ("network_error", True, None, None, "connect"),
    )  # fmt: skip

    def read_cut_stream() -> None:
        fake.fail(Fault.cut_stream())
        url = f"{fake.openai_url}/chat/completions"
        with requests.post(url, json={**CHAT, "stream": True}, stream=True, timeout=5) as reply:
            for _ in reply.iter_content(chunk_size=None):
                pass

    cut = raised(read_cut_stream)
    assert (type(cut), _facts(cut)) == (
        requests.exceptions.ChunkedEncodingError, ("network_error", True, None, None, "read"),
    )  # fmt: skip


def test_requests_tls_and_bad_urls(fake: FakeProvider) -> None:
    # TLS spoken to a plain-HTTP port: a handshake failure.
    handshake = raised(lambda: requests.get(fake.url.replace("http:", "https:"), timeout=5))
    assert (type(handshake), _facts(handshake)) == (
        requests.exceptions.SSLError, ("network_error", True, None, None, "tls"),
    )  # fmt: skip
    for url in ("127.0.0.1:9/items", "ftp://127.0.0.1:9/items", "http://"):
        error = raised(lambda url=url: requests.get(url, timeout=2))  # type: ignore[misc]
        assert _facts(error) == ("invalid_input", False, None, None, None), url


def test_a_certificate_that_does_not_verify_is_not_retried() -> None:
    # requests' chain for a bad certificate: SSLError <- MaxRetryError <- SSLCertVerificationError.
    try:
        try:
            raise ssl.SSLCertVerificationError(1, "certificate verify failed")
        except ssl.SSLError as tls:
            raise requests.exceptions.SSLError(tls) from tls
    except requests.exceptions.SSLError as error:
        assert _facts(error) == ("precondition_failed", False, None, None, "tls")


def test_urllib_against_the_fake_provider(fake: FakeProvider) -> None:
    def post(timeout: float = 5) -> None:
        request = urllib.request.Request(f"{fake.openai_url}/chat/completions",
                                         data=json.dumps(CHAT).encode(),
                                         headers={"content-type": "application/json"})  # fmt: skip
        urllib.request.urlopen(request, timeout=timeout)

    fake.fail(Fault.rate_limited(retry_after=2))
    limited = raised(post)
    assert isinstance(limited, urllib.error.HTTPError)
    # The body stays unread for the caller: the status and Retry-After decide.
    assert _facts(limited) == ("rate_limited", True, 2000, 429, None)
    assert json.loads(limited.read())["error"]["code"] == "rate_limit_exceeded"
    fake.fail(Fault.status(404, "no such item"))
    assert _facts(raised(post)) == ("not_found", False, None, 404, None)
    fake.fail(Fault.hang(5))
    assert _facts(raised(lambda: post(timeout=0.3))) == ("timeout", False, None, None, None)
    port = free_port()
    refused = raised(lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2))
    assert (type(refused), _facts(refused)) == (
        urllib.error.URLError, ("network_error", True, None, None, None),
    )  # fmt: skip


def test_an_llm_host_names_the_source_without_a_body() -> None:
    error = urllib.error.HTTPError(
        "https://api.openai.com/v1/chat/completions", 429, "Too Many Requests", None, None
    )  # type: ignore[arg-type]
    detail = rc.classify(error)
    assert (detail.code, detail.source, detail.status) == ("provider_rate_limited", "openai", 429)


async def test_aiohttp_against_the_fake_provider(fake: FakeProvider) -> None:
    async def post(session: aiohttp.ClientSession) -> None:
        async with session.post(f"{fake.openai_url}/chat/completions", json=CHAT) as reply:
            reply.raise_for_status()

    async def raised(session: aiohttp.ClientSession) -> BaseException:
        try:
            await post(session)
        except Exception as exc:
            return exc
        raise AssertionError("nothing was raised")

    async with aiohttp.ClientSession() as session:
        fake.fail(Fault.rate_limited(retry_after=2))
        assert _facts(await raised(session)) == ("rate_limited", True, 2000, 429, None)
        fake.fail(Fault.status(404, "no such item"))
        assert _facts(await raised(session)) == ("not_found", False, None, 404, None)
        fake.fail(Fault.drop())
        dropped = await raised(session)
        assert (type(dropped), _facts(dropped)) == (
            aiohttp.ServerDisconnectedError, ("network_error", True, None, None, "read"),
        )  # fmt: skip


def test_aiohttp_names_an_llm_host() -> None:
    import yarl

    url = yarl.URL("https://api.anthropic.com/v1/messages")
    info = aiohttp.RequestInfo(url, "POST", {}, url)  # type: ignore[arg-type]
    error = aiohttp.ClientResponseError(info, (), status=529, message="Overloaded")
    detail = rc.classify(error)
    assert (detail.code, detail.source, detail.status) == ("provider_overloaded", "anthropic", 529)

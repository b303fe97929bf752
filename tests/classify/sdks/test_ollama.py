"""ollama: the real SDK against FakeProvider's `/api/chat` (JSON and NDJSON), every fault.

The SDK raises `ResponseError` (Ollama's sentence and the status; -1 for a stream's error
line), lets httpx's transport errors through, and raises the builtin ConnectionError with
its own sentence when nothing listens: that one is a server to start.
"""

from __future__ import annotations

from typing import Any

import ollama
import pytest

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ...support.providers import SdkCase, check_classified, free_port, raised, sdk_cases

MESSAGES: Any = [{"role": "user", "content": "hi"}]
MODEL = "llama3.2"


def _call(host: str, stream: bool, timeout: float = 10) -> list[Any]:
    client = ollama.Client(host=host, timeout=timeout)
    if stream:
        return list(client.chat(model=MODEL, messages=MESSAGES, stream=True))
    return [client.chat(model=MODEL, messages=MESSAGES)]


# (fault, stream, class, code, retryable, retry_after_ms, status): the SDK keeps no
# headers, so a retry-after cannot reach us through it.
_R = "ResponseError"
CASES = [
    (Fault.rate_limited(retry_after=6), False, _R, "provider_rate_limited", True,
     None, 429),
    (Fault.payment_required(), False, _R, "provider_quota_exceeded", False, None, 402),
    (Fault.unauthorized(), False, _R, "provider_auth_failed", False, None, 401),
    (Fault.forbidden(), True, _R, "provider_permission_denied", False, None, 403),
    (Fault.model_not_found(), False, _R, "provider_model_not_found", False, None, 404),
    (Fault.model_not_found(), True, _R, "provider_model_not_found", False, None, 404),
    (Fault.context_too_long(), False, _R, "provider_context_too_long", False, None, 400),
    (Fault.content_policy(), False, _R, "provider_invalid_request", False, None, 400),
    (Fault.server_error(), False, _R, "provider_server_error", True, None, 500),
    (Fault.unavailable(), False, _R, "provider_overloaded", True, None, 503),
    (Fault.stream_overloaded(), True, _R, "provider_overloaded", True, None, None),
    (Fault.drop(), False, "RemoteProtocolError", "provider_connection_lost", True, None, None),
    (Fault.cut_stream(), True, "RemoteProtocolError", "provider_connection_lost", True, None, None),
]  # fmt: skip


@pytest.mark.parametrize("case", sdk_cases(CASES))
def test_ollama_raises_and_we_read_it(fake: FakeProvider, case: SdkCase) -> None:
    fake.fail(case.fault)
    check_classified(raised(lambda: _call(fake.url, case.stream)), case, "ollama")


def test_model_not_found_keeps_ollama_s_sentence(fake: FakeProvider) -> None:
    fake.fail(Fault.model_not_found())
    detail = rc.classify(raised(lambda: _call(fake.url, False)))
    assert detail.message == 'model "llama3.2" not found, try pulling it first'


def test_a_hang_past_the_client_timeout(fake: FakeProvider) -> None:
    fake.fail(Fault.hang(5))
    error = raised(lambda: _call(fake.url, False, timeout=0.5))
    assert type(error).__name__ == "ReadTimeout"
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source) == ("provider_timeout", True, "ollama")


def test_a_server_that_is_not_running_says_to_start_it() -> None:
    error = raised(lambda: _call(f"http://127.0.0.1:{free_port()}", False))
    assert type(error) is ConnectionError
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source, detail.details) == (
        "provider_unreachable", False, "ollama", {"phase": "connect"},
    )  # fmt: skip
    assert detail.fix_required == (
        "Start the Ollama server (`ollama serve`, or the Ollama app), then try again."
    )
    assert detail.fix_command is None
    # Any other ConnectionError stays a network error.
    assert rc.classify(ConnectionError("Failed to connect to something")).code == "network_error"


def test_a_normal_answer_and_stream(fake: FakeProvider) -> None:
    (answer,) = _call(fake.url, False)
    assert (answer.message.content, answer.done_reason) == ("Hello from FakeProvider.", "stop")
    chunks = _call(fake.url, True)
    assert "".join(c.message.content for c in chunks) == "Hello from FakeProvider."
    assert chunks[-1].done is True
    assert fake.requests[-1].path == "/api/chat"

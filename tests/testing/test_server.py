"""FakeProvider's server: the fault queue, request recording and ids, raw HTTP, hanging and
stopping, lifecycle and loopback-only binding. Clients talk only to 127.0.0.1 (or ::1).
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request

import anthropic
import httpx2
import openai
import pytest

from recoverable.testing import FakeProvider, Fault, Reply

from ..support.providers import (
    HELLO,
    MSGS,
    acollect,
    anthropic_client,
    no_proxy_opener,
    openai_client,
)

# -- the fault queue and the record -----------------------------------------------------------


def test_times_one_then_success(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=0.2), times=1)
    client = openai_client(fake)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="gpt-4o", messages=MSGS)
    completion = client.chat.completions.create(model="gpt-4o", messages=MSGS)
    assert completion.choices[0].message.content == HELLO
    assert len(fake.requests) == 2
    assert [r.fault for r in fake.requests] == ["rate_limited", None]


def test_constructor_faults_fifo_and_reply() -> None:
    faults: list[Fault | tuple[Fault, int | None]] = [(Fault.overloaded(), 2), Fault.server_error()]
    with FakeProvider(faults=faults, reply=Reply.text("ok")) as fake:
        client = anthropic_client(fake)
        outcomes: list[str] = []
        for _ in range(4):
            try:
                outcomes.append(
                    client.messages.create(model="m", max_tokens=8, messages=MSGS).content[0].text
                )
            except anthropic.APIStatusError as exc:
                outcomes.append(str(exc.status_code))
        assert outcomes == ["529", "529", "500", "ok"]
        assert [r.fault for r in fake.requests] == [
            "overloaded",
            "overloaded",
            "server_error",
            None,
        ]


def test_times_none_applies_to_every_request(fake: FakeProvider) -> None:
    fake.fail(Fault.unavailable(), times=None)
    fake.fail(Fault.server_error())  # never reached: the head fault never runs out
    client = openai_client(fake)
    for _ in range(3):
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="gpt-4o", messages=MSGS)
    assert [r.fault for r in fake.requests] == ["unavailable"] * 3


def test_reset_forgets_faults_and_requests_and_restarts_ids(fake: FakeProvider) -> None:
    fake.fail(Fault.unavailable(), times=None)
    client = openai_client(fake)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="gpt-4o", messages=MSGS)
    fake.reset()
    assert fake.requests == []
    completion = client.chat.completions.create(model="gpt-4o", messages=MSGS)
    assert completion.id == "chatcmpl-fake0001"  # reset restarts the ids
    assert [r.fault for r in fake.requests] == [None]


def test_request_ids_count_up(fake: FakeProvider) -> None:
    client = openai_client(fake)
    ids = [
        client.chat.completions.with_raw_response.create(model="m", messages=MSGS).headers[
            "x-request-id"
        ]
        for _ in range(3)
    ]
    raw = anthropic_client(fake).messages.with_raw_response.create(
        model="m", max_tokens=8, messages=MSGS
    )
    assert ids == ["req_fake_0001", "req_fake_0002", "req_fake_0003"]
    assert raw.headers["request-id"] == "req_fake_0004"


def test_status_fault_sends_its_json_body_and_headers(fake: FakeProvider) -> None:
    body = {"error": {"message": "teapot", "type": "teapot_error", "param": None, "code": "tea"}}
    fake.fail(Fault.status(418, body, {"x-custom": "yes"}))
    with pytest.raises(openai.APIStatusError) as info:
        openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    assert (info.value.status_code, info.value.code, info.value.type) == (
        418,
        "tea",
        "teapot_error",
    )
    assert info.value.response.headers["x-custom"] == "yes"
    assert [r.fault for r in fake.requests] == ["status"]


def test_status_fault_sends_a_text_body(fake: FakeProvider) -> None:
    fake.fail(Fault.status(502, "<html>Bad Gateway</html>"))
    with pytest.raises(openai.InternalServerError) as bad:
        openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
    assert bad.value.status_code == 502
    assert bad.value.body == "<html>Bad Gateway</html>"
    assert bad.value.response.headers["content-type"] == "text/plain; charset=utf-8"
    assert [r.fault for r in fake.requests] == ["status"]


# -- raw HTTP ---------------------------------------------------------------------------------


def test_unknown_path_is_an_openai_404(fake: FakeProvider) -> None:
    request = urllib.request.Request(
        fake.url + "/v2/nothing?x=1", data=b"{}", headers={"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as info:
        no_proxy_opener().open(request, timeout=5)
    assert info.value.code == 404
    assert json.loads(info.value.read()) == {
        "error": {
            "message": "Invalid URL (POST /v2/nothing)",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    [recorded] = fake.requests
    assert (recorded.api, recorded.path, recorded.query, recorded.json, recorded.fault) == (
        "unknown",
        "/v2/nothing",
        {"x": "1"},
        {},
        None,
    )


def test_chunked_request_body_is_read(fake: FakeProvider) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    parts = [b'{"model": "chunky", ', b'"messages": [], ', b'"stream": false}']
    conn.request(
        "POST",
        "/v1/chat/completions",
        body=iter(parts),
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
        encode_chunked=True,
    )
    response = conn.getresponse()
    payload = json.loads(response.read())
    conn.close()
    assert response.status == 200
    assert payload["model"] == "chunky"
    assert payload["choices"][0]["message"]["content"] == HELLO
    [recorded] = fake.requests
    assert recorded.body == b"".join(parts)
    assert recorded.json == {"model": "chunky", "messages": [], "stream": False}


def test_malformed_chunked_body_is_refused(fake: FakeProvider) -> None:
    with socket.create_connection(("127.0.0.1", fake.port), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
        )
        answer = b""
        while chunk := sock.recv(4096):  # the server closes after refusing
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert answer.endswith(b"\r\n\r\nrequest has a malformed chunk size")
    assert fake.requests == []


# -- hanging and stopping ---------------------------------------------------------------------


def test_hang_hits_the_client_timeout(fake: FakeProvider) -> None:
    fake.fail(Fault.hang())
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError) as info:
        openai_client(fake, timeout=0.5).chat.completions.create(model="gpt-4o", messages=MSGS)
    elapsed = time.monotonic() - started
    assert 0.45 <= elapsed < 3.0
    assert str(info.value) == "Request timed out."
    assert isinstance(info.value.__cause__, httpx2.ReadTimeout)
    assert fake.requests[0].fault == "hang"


def test_hang_with_seconds_then_close(fake: FakeProvider) -> None:
    fake.fail(Fault.hang(0.2))
    started = time.monotonic()
    with pytest.raises(anthropic.APIConnectionError) as info:
        anthropic_client(fake, timeout=5).messages.create(
            model="claude-x", max_tokens=8, messages=MSGS
        )
    elapsed = time.monotonic() - started
    # The server held the request its 0.2 s (its deadline starts after `started`), no more.
    assert 0.2 <= elapsed < 2.0
    assert not isinstance(info.value, anthropic.APITimeoutError)


def test_stop_releases_a_hanging_request() -> None:
    fake = FakeProvider(faults=[(Fault.hang(), None)]).start()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            openai_client(fake, timeout=10).chat.completions.create(model="gpt-4o", messages=MSGS)
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    deadline = time.monotonic() + 5
    while not fake.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    fake.stop()
    assert time.monotonic() - started < 2.0
    worker.join(5)
    assert not worker.is_alive()
    assert [type(e) for e in errors] == [openai.APIConnectionError]


def test_stop_closes_idle_keep_alive_connections() -> None:
    fake = FakeProvider().start()
    client = openai_client(fake)
    client.chat.completions.create(model="gpt-4o", messages=MSGS)
    client.chat.completions.create(model="gpt-4o", messages=MSGS)
    started = time.monotonic()
    fake.stop()
    assert time.monotonic() - started < 2.0
    alive = [t for t in threading.enumerate() if t.name.startswith("FakeProvider")]
    assert alive == []
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="gpt-4o", messages=MSGS)
    client.close()


# -- lifecycle --------------------------------------------------------------------------------


async def test_async_context_manager() -> None:
    async with FakeProvider(faults=[Fault.stream_overloaded()]) as fake:
        client = anthropic.AsyncAnthropic(api_key="x", base_url=fake.url, max_retries=0)
        stream = await client.messages.create(model="m", max_tokens=8, messages=MSGS, stream=True)
        seen: list[str] = []
        with pytest.raises(anthropic.APIStatusError) as info:
            await acollect(stream, seen)
        assert (info.value.status_code, info.value.type) == (200, "overloaded_error")
        ok = await openai.AsyncOpenAI(
            api_key="x", base_url=fake.openai_url, max_retries=0
        ).chat.completions.create(model="gpt-4o", messages=MSGS)
        assert ok.choices[0].message.content == HELLO
        assert [r.fault for r in fake.requests] == ["stream_overloaded", None]
        await client.close()
    with pytest.raises(RuntimeError, match="not running"):
        _ = fake.url


def test_lifecycle_errors() -> None:
    fake = FakeProvider()
    with pytest.raises(RuntimeError, match="not running"):
        _ = fake.url
    fake.start()
    try:
        assert fake.url == f"http://127.0.0.1:{fake.port}"
        assert fake.openai_url == fake.url + "/v1"
        with pytest.raises(RuntimeError, match="already running"):
            fake.start()
    finally:
        fake.stop()
    fake.stop()  # idempotent


@pytest.mark.parametrize("host", ["0.0.0.0", "localhost", "192.168.1.10", "::", ""])
def test_refuses_non_loopback_hosts(host: str) -> None:
    with pytest.raises(ValueError, match="loopback only"):
        FakeProvider(host=host)


def test_ipv6_loopback() -> None:
    fake = FakeProvider(host="::1").start()
    try:
        assert fake.url == f"http://[::1]:{fake.port}"
        completion = openai_client(fake).chat.completions.create(model="gpt-4o", messages=MSGS)
        assert completion.choices[0].message.content == HELLO
    finally:
        fake.stop()


def test_fail_refuses_times_below_one() -> None:
    with pytest.raises(ValueError, match="times must be"):
        FakeProvider().fail(Fault.drop(), times=0)


def test_fail_refuses_what_is_not_a_fault() -> None:
    with pytest.raises(TypeError, match="expected a Fault"):
        FakeProvider().fail("drop", times=1)

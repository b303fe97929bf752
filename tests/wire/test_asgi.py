"""The wire end to end: a real uvicorn server (FastAPI, `asgi.install`, the streaming
helpers) on 127.0.0.1, called with a real httpx client; the failures are real (the openai SDK
against FakeProvider, Claude Code against FakeProvider, framework errors, bugs)."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import httpx
import pytest

import recoverable as rc
from recoverable import agents, wire
from recoverable.testing import Fault

from ..support.cli import processes_with
from ..support.wire import MARKER, SECRET
from ..support.wire_app import AppState


def _clean(text: str) -> None:
    assert MARKER not in text
    assert SECRET not in text
    assert "Traceback" not in text


ANSWERS = [
    ("/raise/not_found", None, 404, "not_found", None),
    ("/raise/conflict", None, 409, "conflict", None),
    ("/raise/bug", None, 500, "unknown", None),
    ("/raise/refused", None, 503, "network_error", "1"),
    ("/count?n=abc", None, 400, "invalid_input", None),
    ("/no/such/route", None, 404, "not_found", None),
    ("/chat", Fault.rate_limited(retry_after=7), 503, "provider_rate_limited", "7"),
    ("/chat", Fault.insufficient_quota(), 502, "provider_quota_exceeded", None),
    ("/chat", Fault.unauthorized(), 502, "provider_auth_failed", None),
    ("/chat", Fault.overloaded(), 503, "provider_overloaded", "1"),
    ("/chat", Fault.context_too_long(), 400, "provider_context_too_long", None),
]


@pytest.mark.parametrize("problem", [False, True])
@pytest.mark.parametrize(("path", "fault", "status", "code", "retry_after"), ANSWERS)
def test_what_a_route_raises_is_answered_by_the_table(
    app: AppState, client: httpx.Client, path: str, fault: Fault | None, status: int,
    code: str, retry_after: str | None, problem: bool,
) -> None:  # fmt: skip
    if fault is not None:
        app.fake.fail(fault)
    accept = "application/problem+json" if problem else "application/json"
    response = client.get(path, headers={"accept": accept})
    assert response.status_code == status
    assert response.headers.get("retry-after") == retry_after
    assert response.headers["content-type"] == accept
    _clean(response.text)
    body = response.json()
    assert body["code"] == code
    assert "message" not in body
    row = rc.codes[code]
    assert body["detail" if problem else "error"] == row.user_message
    if problem:  # never the request's path: a fresh occurrence id
        assert uuid.UUID(body["instance"]).urn == body["instance"]
        assert body["status"] == status
        assert body["type"] == f"urn:recoverable:code:{code}"
    detail = wire.read_response(response.status_code, response.headers, response.content)
    assert (detail.code, detail.retryable) == (code, row.retryable)
    with pytest.raises(rc.RecoverableError) as raised:
        wire.raise_for_error(response)
    assert raised.value.detail == detail
    with pytest.raises(httpx.HTTPStatusError) as status_error:  # httpx's own, classified
        response.raise_for_status()
    assert rc.classify(status_error.value) == detail


def test_a_status_the_table_does_not_map_is_kept(client: httpx.Client) -> None:
    response = client.post("/count?n=1")  # a GET route: the router's 405
    assert response.status_code == 405
    assert response.headers["allow"] == "GET"
    assert response.json()["code"] == "invalid_input"
    assert wire.read_response(405, response.headers, response.content).code == "invalid_input"
    response = client.post("/count?n=1", headers={"accept": "application/problem+json"})
    assert (response.status_code, response.json()["status"]) == (405, 405)  # one status


def test_a_client_retries_a_route_as_its_retry_after_says(
    app: AppState, client: httpx.Client
) -> None:
    app.fake.fail(Fault.rate_limited(retry_after=1))
    attempts: list[float] = []

    @rc.retry(attempts=3)
    def call() -> httpx.Response:
        attempts.append(time.monotonic())
        return wire.raise_for_error(client.get("/chat", params={"name": "retried"}))

    response = call()
    assert response.json() == {"text": "Hello from FakeProvider."}
    assert len(attempts) == 2
    assert attempts[1] - attempts[0] >= 1.0  # Retry-After: 1 (503 from our server)
    assert app.calls["retried"] == 2
    assert [request.fault for request in app.fake.requests] == ["rate_limited", None]


def test_rc_retry_reads_httpx_status_errors_from_our_server(
    app: AppState, client: httpx.Client
) -> None:
    app.fake.fail(Fault.rate_limited(retry_after=1))
    app.fake.fail(Fault.insufficient_quota())
    attempts: list[float] = []

    @rc.retry(attempts=5)
    def call() -> httpx.Response:
        attempts.append(time.monotonic())
        return client.get("/chat").raise_for_status()

    with pytest.raises(rc.RecoverableError) as raised:  # not retryable: one rule, ours
        call()
    # the 503 retried after its Retry-After; the 502 that says quota stopped at once (as a
    # status alone, 502 would be a retryable bad gateway)
    assert len(attempts) == 2
    assert attempts[1] - attempts[0] >= 1.0
    assert isinstance(raised.value.__cause__, httpx.HTTPStatusError)  # httpx's, reachable
    assert (raised.value.code, raised.value.retryable) == ("provider_quota_exceeded", False)


async def test_an_async_client_reads_the_same(served: tuple[AppState, str]) -> None:
    state, url = served
    state.fake.reset()
    state.fake.fail(Fault.insufficient_quota())
    async with httpx.AsyncClient(base_url=url) as client:
        response = await client.get("/chat")
        with pytest.raises(rc.RecoverableError) as raised:
            await wire.araise_for_error(response)
    assert raised.value.code == "provider_quota_exceeded"
    assert raised.value.retryable is False


def _stream(
    client: httpx.Client, path: str, headers: dict[str, str] | None = None
) -> tuple[list[wire.Chunk], str]:
    with client.stream("GET", path, headers=headers) as response:
        chunks = list(wire.iter_chunks(response))
        return chunks, "".join(_as_text(chunk) for chunk in chunks)


def _as_text(chunk: wire.Chunk) -> str:
    return wire.to_ndjson(chunk.event)


@pytest.mark.parametrize("form", ["sse", "ndjson"])
def test_a_stream_that_succeeds(app: AppState, client: httpx.Client, form: str) -> None:
    chunks, _ = _stream(client, f"/chat/stream?format={form}")
    events = [chunk.event for chunk in chunks]
    assert isinstance(events[-1], agents.Done)
    assert events[-1].result.text == "Hello from FakeProvider."
    assert "".join(e.text for e in events if isinstance(e, agents.TextDelta)) == (
        "Hello from FakeProvider."
    )
    assert [chunk.seq for chunk in chunks] == list(range(1, len(chunks) + 1))


@pytest.mark.parametrize("form", ["sse", "ndjson"])
def test_a_stream_cut_mid_way_ends_with_exactly_one_error(
    app: AppState, client: httpx.Client, form: str
) -> None:
    app.fake.fail(Fault.cut_stream(after=2))
    chunks, text = _stream(client, f"/chat/stream?format={form}")
    events = [chunk.event for chunk in chunks]
    errors = [e for e in events if isinstance(e, agents.ErrorEvent)]
    assert len(errors) == 1
    assert events[-1] is errors[0]
    assert [type(e) for e in events[:-1]] == [agents.TextDelta] * (len(events) - 1)
    assert len(events) >= 2
    detail = errors[0].detail
    assert (detail.code, detail.retryable) == ("provider_connection_lost", True)
    assert detail.message == detail.user_message  # public: no developer text
    _clean(text)


def test_a_failing_stream_carries_no_developer_text(client: httpx.Client) -> None:
    with client.stream("GET", "/numbers/bug?count=2&then=bug") as response:
        raw = response.read().decode()
    _clean(raw)
    events = wire.read_sse(raw)
    assert [e.type for e in events] == ["text_delta", "text_delta", "error"]
    assert events[-1].detail.code == "unknown"  # type: ignore[union-attr]


def _wait(predicate: object, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_client_resumes_from_its_last_event_id(app: AppState, client: httpx.Client) -> None:
    with client.stream("GET", "/numbers/r1?count=5&then=hang") as response:
        seen = []
        for chunk in wire.iter_chunks(response):
            seen.append(chunk)
            if len(seen) == 2:
                break  # the client goes away
    assert [(c.seq, c.event) for c in seen] == [(1, agents.TextDelta("1 ")),
                                                (2, agents.TextDelta("2 "))]  # fmt: skip
    log = app.logs["r1"]
    _wait(lambda: log.closed)  # the server saw the disconnect and cancelled the source
    with client.stream("GET", "/numbers/r1", headers={"Last-Event-ID": "2"}) as response:
        rest = list(wire.iter_chunks(response))
    assert [chunk.seq for chunk in rest] == [3, 4, 5, 6]
    assert [chunk.event for chunk in rest[:3]] == [agents.TextDelta(f"{n} ") for n in (3, 4, 5)]
    cancelled = rest[3].event
    assert isinstance(cancelled, agents.ErrorEvent)
    assert (cancelled.detail.code, cancelled.detail.retryable) == ("run_cancelled", False)
    response = client.get("/numbers/r1", headers={"Last-Event-ID": "6"})  # nothing after it
    assert (response.status_code, response.content) == (204, b"")  # the stream ended: stop
    response = client.get("/numbers/r1", headers={"Last-Event-ID": "99"})  # never given out
    assert (response.status_code, response.json()["code"]) == (410, "state_not_resumable")


def test_an_ndjson_client_that_goes_away_cancels_the_source(
    app: AppState, client: httpx.Client
) -> None:
    with client.stream("GET", "/numbers/n1?count=2&then=hang&format=ndjson") as response:
        # range first: zip stops on it without asking the stream for a third chunk
        seen = [chunk.seq for _, chunk in zip(range(2), wire.iter_chunks(response), strict=False)]
    assert seen == [1, 2]
    log = app.logs["n1"]
    _wait(lambda: log.closed)  # seen at once, though the source writes nothing more
    last = log.since(2)
    assert last is not None
    assert [chunk.event.detail.code for chunk in last] == ["run_cancelled"]  # type: ignore[union-attr]


@pytest.mark.parametrize("form", ["sse", "ndjson"])
def test_an_agent_run_streams_publicly(app: AppState, client: httpx.Client, form: str) -> None:
    chunks, text = _stream(client, f"/agent/ok-{form}?format={form}")
    events = [chunk.event for chunk in chunks]
    assert not any(isinstance(e, agents.Raw) for e in events)  # the CLI's own lines stay home
    done = events[-1]
    assert isinstance(done, agents.Done)
    assert (done.result.success, done.result.text) == (True, "Hello from FakeProvider.")
    assert done.result.stderr_tail == ""
    assert str(app.home) not in text


def test_an_agent_run_that_fails_ends_with_one_error(app: AppState, client: httpx.Client) -> None:
    # (an EventSource's request: a failure before the answer comes as the stream's one event;
    # any other client gets its status, tests/wire/test_states.py)
    app.fake.fail(Fault.insufficient_quota())
    chunks, text = _stream(client, "/agent/quota", {"accept": "text/event-stream"})
    events = [chunk.event for chunk in chunks]
    errors = [e for e in events if isinstance(e, agents.ErrorEvent) and e.severity == "error"]
    assert len(errors) == 1
    assert errors[0].detail.code == "provider_quota_exceeded"
    assert errors[0].detail.message == rc.codes["provider_quota_exceeded"].user_message
    done = events[-1]
    assert isinstance(done, agents.Done)
    assert done.result.success is False
    assert str(app.home) not in text


def test_a_client_that_disconnects_cancels_the_run(app: AppState, client: httpx.Client) -> None:
    app.fake.fail(Fault.hang())
    with client.stream("GET", "/agent/gone") as response:
        assert response.status_code == 200
        _wait(lambda: len(app.fake.requests) == 1, 60)  # the CLI is waiting on the provider
        assert processes_with(str(app.home).encode()) != []
    log = app.logs["gone"]
    _wait(lambda: log.closed)
    last = log.since(log.last_seq - 1)
    assert last is not None
    assert last[-1].event.type == "error"
    assert last[-1].event.detail.code == "run_cancelled"  # type: ignore[union-attr]
    _wait(lambda: processes_with(str(app.home).encode()) == [])  # the process group is gone


def _check_cut(chunks: list[wire.Chunk]) -> None:
    assert [(c.seq, c.event) for c in chunks[:2]] == [(1, agents.TextDelta("1 ")),
                                                      (2, agents.TextDelta("2 "))]  # fmt: skip
    (lost,) = chunks[2:]
    assert isinstance(lost.event, agents.ErrorEvent)
    detail = lost.event.detail
    assert (detail.code, detail.retryable) == ("network_error", True)
    assert detail.details["mid_stream"] is True
    assert detail.details["last_seq"] == 2  # where to resume from


def test_a_connection_lost_mid_stream_ends_the_events_with_one_error(
    client: httpx.Client,
) -> None:
    with client.stream("GET", "/cut") as response:
        _check_cut(list(wire.iter_chunks(response)))


async def test_the_async_iterators(served: tuple[AppState, str]) -> None:
    async with httpx.AsyncClient(base_url=served[1], timeout=60) as client:
        async with client.stream("GET", "/cut") as response:
            _check_cut([chunk async for chunk in wire.aiter_chunks(response)])
        async with client.stream("GET", "/numbers/async?count=2") as response:
            events = [event async for event in wire.aiter_events(response)]
        assert events == [agents.TextDelta("1 "), agents.TextDelta("2 "),
                          agents.Done(agents.RunResult(True, ""))]  # fmt: skip
        async with client.stream("GET", "/raise/conflict") as response:
            with pytest.raises(rc.RecoverableError) as raised:
                [event async for event in wire.aiter_events(response)]
        assert raised.value.code == "conflict"


def test_the_asgi_module_is_not_imported_by_the_wire() -> None:
    import subprocess
    import sys

    code = (
        "import sys, recoverable, recoverable.wire as w; w.read_sse(''); w.http_response"
        "(recoverable.ErrorDetail.create('unknown'));"
        "print(sorted(m for m in ('starlette', 'sse_starlette', 'fastapi', 'httpx', "
        "'recoverable.wire.asgi') if m in sys.modules))"
    )
    source = str(Path(rc.__file__).parent.parent)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONPATH": source},
    )  # fmt: skip
    assert json.loads(done.stdout.replace("'", '"')) == []

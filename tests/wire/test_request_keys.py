"""Keyed run starts, end to end: a real uvicorn server and httpx clients.

A run start carrying `Idempotency-Key` (`wire.idempotency_key`, `Sessions.start(request_key=,
input=)`) sent again is served the run it started (replayed, live while it runs), never a
second run, and a keyed run goes on when its client goes away; the same key with other input
is 409 `state_request_key_conflict`; a malformed key is 400 `invalid_input`, never echoed. The
client side is `rc.retry` with `rc.request_headers()`: a dropped connection retried with the
same key reads the one run to its end.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.responses import Response

import recoverable as rc
from recoverable import agents, wire
from recoverable._retry.keys import is_request_key
from recoverable.wire import asgi
from recoverable.wire._opening import Pump
from recoverable.wire._publish import published
from recoverable.wire._sessions import INPUT_NOT_DATA

from ..support.wire_server import serving


@dataclass
class Runs:
    """What the app started: each run's session, and the gates its runs wait at."""

    started: list[str] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    gates: dict[str, asyncio.Event] = field(default_factory=dict)
    sessions: wire.Sessions = field(default_factory=wire.Sessions)


async def _run(session: str, words: int, hang: bool, runs: Runs) -> AsyncIterator[agents.Event]:
    runs.started.append(session)  # on the first step: a source made and closed is no run
    for number in range(1, words + 1):
        yield agents.TextDelta(f"{number} ")
    if hang:
        gate = runs.gates.setdefault(session, asyncio.Event())
        await gate.wait()
    runs.ended.append(session)
    yield agents.Done(agents.RunResult(True, "done"))


def build(runs: Runs) -> FastAPI:
    app = FastAPI()
    asgi.install(app)

    @app.post("/chat/{session}")
    async def chat(session: str, request: Request) -> Response:
        body = await request.json()
        log = runs.sessions.start(
            session, request_key=wire.idempotency_key(request.headers), input=body
        )
        source = _run(session, int(body["words"]), bool(body.get("hang")), runs)
        return asgi.sse_response(source, log=log)

    @app.post("/tagged/{session}")
    async def tagged(session: str, request: Request) -> Response:
        body = await request.json()
        tags = set(body["tags"])  # the app compares tags as a set: not JSON data
        key = wire.idempotency_key(request.headers)
        log = runs.sessions.start(session, request_key=key, input={**body, "tags": tags})
        return asgi.sse_response(_run(session, int(body["words"]), False, runs), log=log)

    @app.post("/gates/{session}")
    async def open_gate(session: str) -> dict[str, bool]:
        runs.gates.setdefault(session, asyncio.Event()).set()
        return {"open": True}

    return app


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Runs, str]]:
    """This module's app in place of conftest's: conftest's `client` then talks to it."""
    runs = Runs()
    with serving(build(runs)) as url:
        yield runs, url


@pytest.fixture
def runs(served: tuple[Runs, str]) -> Runs:
    served[0].started.clear()
    served[0].ended.clear()
    return served[0]


def _send(client: httpx.Client, session: str, body: dict[str, Any], key: str | None) -> Any:
    headers = {} if key is None else {"Idempotency-Key": key}
    with client.stream("POST", f"/chat/{session}", json=body, headers=headers) as response:
        rc.wire.raise_for_error(response)
        return [(chunk.seq, chunk.event) for chunk in wire.iter_chunks(response)]


def _wait(condition: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _failure(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status
    body: dict[str, Any] = response.json()
    assert body["code"] == code
    assert rc.wire.read_response(status, response.headers, response.content).code == code
    return body


def test_the_same_keyed_send_again_is_served_its_run_not_a_second_one(
    runs: Runs, client: httpx.Client
) -> None:
    body = {"words": 3}
    first = _send(client, "s1", body, "send-1")
    again = _send(client, "s1", body, "send-1")
    assert [seq for seq, _ in first] == [1, 2, 3, 4]
    assert again == first  # the same chunks, the same numbers: a replay
    assert runs.started == ["s1"]
    _send(client, "s1", body, None)  # no key: a new run
    _send(client, "s1", body, "send-2")  # a new key: a new run
    assert runs.started == ["s1"] * 3


def test_a_keyed_send_again_while_its_run_is_live_follows_it_instead_of_409(
    runs: Runs, client: httpx.Client, served: tuple[Runs, str]
) -> None:
    body = {"words": 2, "hang": True}
    seen: list[Any] = []
    with httpx.Client(base_url=served[1], timeout=10) as other:
        reader = threading.Thread(target=lambda: seen.extend(_send(other, "s2", body, "k2")))
        reader.start()
        _wait(lambda: runs.started == ["s2"])
        # without the key the session is busy; with it, the send follows its own run
        refused = client.post("/chat/s2", json=body)
        assert _failure(refused, 409, "state_already_running")["retryable"] is True
        follower: list[Any] = []
        thread = threading.Thread(target=lambda: follower.extend(_send(client, "s2", body, "k2")))
        thread.start()
        time.sleep(0.2)
        assert client.post("/gates/s2").status_code == 200
        reader.join(10)
        thread.join(10)
    assert not reader.is_alive() and not thread.is_alive()
    assert [seq for seq, _ in seen] == [1, 2, 3]
    assert follower == seen
    assert runs.started == ["s2"]


def test_the_same_key_with_other_input_is_409_and_starts_nothing(
    runs: Runs, client: httpx.Client
) -> None:
    _send(client, "s3", {"words": 1}, "order-3")
    response = client.post("/chat/s3", json={"words": 2}, headers={"Idempotency-Key": "order-3"})
    body = _failure(response, 409, "state_request_key_conflict")
    assert body["retryable"] is False
    assert "order-3" not in response.text
    assert "retry-after" not in response.headers
    assert runs.started == ["s3"]
    # a key is the session's: another session's run may use the same one
    _send(client, "s3-other", {"words": 2}, "order-3")
    assert runs.started == ["s3", "s3-other"]


@pytest.mark.parametrize(
    "key", [b"has space", b"x" * 129, b"\xc3\xa9t\xc3\xa9", b"a/b", b"sk-proj-Abc123Abc123;"]
)
def test_a_malformed_key_is_400_and_never_repeated(
    runs: Runs, client: httpx.Client, key: bytes
) -> None:
    response = client.post("/chat/s4", json={"words": 1}, headers=[(b"Idempotency-Key", key)])
    _failure(response, 400, "invalid_input")
    assert key.decode("latin-1") not in response.text
    assert runs.started == []


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=140))
def test_any_header_value_is_taken_or_refused_by_the_rule(
    served: tuple[Runs, str], client: httpx.Client, key: str
) -> None:
    served[0].started.clear()
    response = client.post("/chat/s5", json={"words": 0}, headers={"Idempotency-Key": key})
    if is_request_key(key):
        assert response.status_code == 200
    else:
        _failure(response, 400, "invalid_input")
        assert served[0].started == []


def test_a_keyed_run_goes_on_when_its_client_goes_away_and_rc_retry_reads_it_whole(
    runs: Runs, client: httpx.Client, served: tuple[Runs, str]
) -> None:
    body = {"words": 2, "hang": True}
    attempts: list[list[Any]] = []

    @rc.retry(attempts=3, sleep=lambda _s: None)
    def send() -> list[Any]:
        chunks: list[Any] = []
        attempts.append(chunks)
        with (
            httpx.Client(base_url=served[1], timeout=10) as http,
            http.stream("POST", "/chat/s6", json=body, headers=rc.request_headers()) as response,
        ):
            for chunk in wire.iter_chunks(response):
                chunks.append((chunk.seq, chunk.event))
                if len(attempts) == 1 and len(chunks) == 2:
                    raise ConnectionResetError("the connection dropped")  # closes it
                if len(attempts) == 2 and len(chunks) == 2:
                    assert client.post("/gates/s6").status_code == 200  # the run may end
        return chunks

    whole = send()
    assert len(attempts) == 2
    assert [seq for seq, _ in attempts[0]] == [1, 2]
    assert [seq for seq, _ in whole] == [1, 2, 3]  # the same run, from its first event
    assert whole[:2] == attempts[0]
    assert isinstance(whole[-1][1], agents.Done)
    assert runs.started == ["s6"] and runs.ended == ["s6"]  # one run, never stopped


def test_a_keyed_run_cancelled_all_the_same_is_started_again_by_its_key() -> None:
    async def main() -> None:
        sessions = wire.Sessions()
        log = sessions.start("s", request_key="k", input={"a": 1})
        assert log.claim() is None
        assert sessions.start("s", request_key="k", input={"a": 1}) is log
        log.end_client_gone()
        fresh = sessions.start("s", request_key="k", input={"a": 1})
        assert fresh is not log and fresh.request_key == "k"
        assert not fresh.replays

    asyncio.run(main())


def test_input_is_compared_as_data_not_as_its_spelling() -> None:
    sessions = wire.Sessions()
    log = sessions.start("s", request_key="k", input={"a": 1, "b": [1, 2]})
    assert sessions.start("s", request_key="k", input={"b": [1, 2], "a": 1}) is log
    with pytest.raises(rc.RecoverableError) as conflict:
        sessions.start("s", request_key="k", input={"a": 1, "b": [2, 1]})
    assert conflict.value.code == "state_request_key_conflict"
    assert sessions.start("s", request_key="t", input="text") is not log
    with pytest.raises(rc.RecoverableError):
        sessions.start("s", request_key="t", input=b"text")  # bytes are not the same text


@given(
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.text(max_size=8),
        lambda kids: (
            st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids, max_size=3)
        ),
        max_leaves=12,
    )
)
def test_any_json_input_keys_a_run_and_the_same_input_finds_it(value: Any) -> None:
    sessions = wire.Sessions()
    log = sessions.start("s", request_key="k", input=value)  # NaN and infinities too
    assert sessions.start("s", request_key="k", input=value) is log


# --- the bounds: runs that outlive their clients, the keys kept --------------------------------


def _left(url: str, session: str, body: dict[str, Any], key: str) -> Any:
    """A keyed send whose client reads the first chunk and goes away (its connection closed)."""
    headers = {"Idempotency-Key": key}
    with (
        httpx.Client(base_url=url, timeout=10) as http,
        http.stream("POST", f"/chat/{session}", json=body, headers=headers) as response,
    ):
        first = next(iter(wire.iter_chunks(response)))
    return first.seq, first.event


def test_keyed_runs_left_by_their_clients_are_capped_and_a_start_past_it_is_503() -> None:
    runs = Runs(sessions=wire.Sessions(max_keyed_runs=2))
    body = {"words": 1, "hang": True}
    with serving(build(runs)) as url, httpx.Client(base_url=url, timeout=10) as client:
        for index in range(2):
            assert _left(url, f"c{index}", body, f"key-{index}")[0] == 1
        _wait(lambda: runs.started == ["c0", "c1"])
        refused = client.post("/chat/c2", json=body, headers={"Idempotency-Key": "key-2"})
        assert _failure(refused, 503, "unavailable")["retryable"] is True
        assert refused.headers["retry-after"] == "1"
        assert "key-2" not in refused.text
        assert runs.started == ["c0", "c1"]  # nothing started past the cap
        # a send without a key is not counted (it stops with its client)
        assert [seq for seq, _ in _send(client, "c3", {"words": 1}, None)] == [1, 2]
        assert client.post("/gates/c0").status_code == 200
        _wait(lambda: "c0" in runs.ended)
        assert [seq for seq, _ in _send(client, "c0", body, "key-0")] == [1, 2]  # its replay
        client.post("/gates/c2")
        again = _send(client, "c2", body, "key-2")  # the refused send again, below the cap
        assert [seq for seq, _ in again] == [1, 2]
        client.post("/gates/c1")
        _wait(lambda: sorted(runs.ended) == ["c0", "c1", "c2", "c3"])
    assert runs.started == ["c0", "c1", "c3", "c2"]


def test_a_start_past_the_live_sessions_bound_is_503_before_its_source_starts() -> None:
    runs = Runs(sessions=wire.Sessions(max_sessions=1))
    with serving(build(runs)) as url, httpx.Client(base_url=url, timeout=10) as client:
        _left(url, "s1", {"words": 1, "hang": True}, "key-1")
        _wait(lambda: runs.started == ["s1"])
        refused = client.post("/chat/s2", json={"words": 1})
        assert _failure(refused, 503, "unavailable")["retryable"] is True
        assert refused.headers["retry-after"] == "1"
        assert runs.started == ["s1"]  # its source never started
        client.post("/gates/s1")
        _wait(lambda: "s1" in runs.ended)
        assert [seq for seq, _ in _send(client, "s2", {"words": 1}, None)] == [1, 2]
    assert runs.started == ["s1", "s2"]


def test_a_live_runs_key_is_never_forgotten_so_its_resend_is_not_a_second_run() -> None:
    runs = Runs(sessions=wire.Sessions(max_keys=1))
    body = {"words": 1, "hang": True}
    with serving(build(runs)) as url, httpx.Client(base_url=url, timeout=10) as client:
        _left(url, "k1", body, "live-1")
        _wait(lambda: runs.started == ["k1"])
        _send(client, "k2", {"words": 1}, "other-1")  # past the bound while k1's run is live
        _send(client, "k3", {"words": 1}, "other-2")
        client.post("/gates/k1")
        _wait(lambda: "k1" in runs.ended)
        assert [seq for seq, _ in _send(client, "k1", body, "live-1")] == [1, 2]  # a replay
        assert _send(client, "k2", {"words": 1}, "other-1") != []  # forgotten: a new run
    assert runs.started == ["k1", "k2", "k3", "k2"]


def test_the_keys_are_bounded_across_sessions_the_newest_kept() -> None:
    sessions = wire.Sessions(max_keys=3)
    first = sessions.start("s0", request_key="k")
    for index in range(1, 4):
        sessions.start(f"s{index}", request_key="k")
    assert sessions.start("s0", request_key="k") is not first  # forgotten: a new run
    assert sessions.start("s3", request_key="k").request_key == "k"
    assert len(sessions._keys) == 3


def test_two_sends_of_one_key_at_once_leave_one_writer_and_one_replay() -> None:
    closed: list[str] = []
    gate = asyncio.Event()

    async def source(name: str) -> AsyncIterator[agents.Event]:
        try:
            yield agents.TextDelta(name)
            await gate.wait()
            yield agents.Done(agents.RunResult(True, name))
        finally:
            closed.append(name)

    async def main() -> None:
        sessions = wire.Sessions()
        log = sessions.start("s", request_key="k", input=1)
        assert sessions.start("s", request_key="k", input=1) is log
        # both responses begin before either claims the log: the claim decides which writes
        writer = Pump(published(source("first"), log=log), log)
        replay = Pump(published(source("second"), log=log), log)
        chunk = await writer.next()
        assert chunk is not None and chunk.event == agents.TextDelta("first")
        assert await replay.next() == chunk  # the second replays the first's run
        await replay.stop()  # its client went away: a replay stops, it is not kept going
        assert replay._task.done()
        newer = sessions.start("s", supersede=True)
        assert newer.claim() is None  # the writer's task is the one cancelled: it stops at once
        last = await asyncio.wait_for(writer.next(), 10)
        assert last is not None and isinstance(last.event, agents.ErrorEvent)
        assert last.event.detail.code == "state_run_superseded"
        assert closed == ["first"]  # its source closed off its gate; the replay's never started
        await writer.stop()

    asyncio.run(main())


# --- input that is not JSON data ---------------------------------------------------------------


def test_input_json_cannot_write_is_400_invalid_input_never_echoed(
    runs: Runs, client: httpx.Client
) -> None:
    headers = {"Idempotency-Key": "tagged-1"}
    body = {"words": 1, "tags": ["secret-tag-value"]}
    response = client.post("/tagged/t1", json=body, headers=headers)
    assert _failure(response, 400, "invalid_input")["retryable"] is False
    assert "secret-tag-value" not in response.text and "set" not in response.text
    assert runs.started == []


def _deep(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _cycle() -> list[Any]:
    value: list[Any] = ["secret"]
    value.append(value)
    return value


_HOSTILE = st.one_of(
    st.sets(st.text(max_size=4), max_size=3),  # TypeError
    st.builds(_cycle),  # ValueError: a circular reference
    st.integers(20_000, 40_000).map(_deep),  # RecursionError
    st.integers(4_400, 5_000).map(lambda digits: 10**digits),  # ValueError: int digits limit
    st.builds(object),
    st.binary(max_size=4).map(lambda data: [data]),
    st.just({(1, 2): "secret"}),  # a key JSON cannot write
    st.just({1: "secret", "b": 2}),  # keys that do not sort
)


@settings(max_examples=60, deadline=None)
@given(_HOSTILE, st.text(max_size=6), st.booleans())
def test_hostile_input_is_invalid_input_with_our_sentence_only(
    hostile: Any, prompt: str, in_list: bool
) -> None:
    sessions = wire.Sessions()
    value = [prompt, hostile] if in_list else {"prompt": prompt, "extra": hostile}
    with pytest.raises(rc.RecoverableError) as raised:
        sessions.start("s", request_key="k", input=value)
    detail = raised.value.detail
    assert (detail.code, detail.http_status, detail.retryable) == ("invalid_input", 400, False)
    assert detail.message == INPUT_NOT_DATA
    assert not detail.details and detail.cause is None
    assert len(sessions._keys) == 0 and sessions.get("s") is None
    assert sessions.start("s", request_key="k", input={"prompt": prompt}).request_key == "k"

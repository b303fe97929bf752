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


def test_the_keys_kept_are_bounded() -> None:
    sessions = wire.Sessions(max_sessions=3)
    first = sessions.start("s", request_key="k0")
    for index in range(1, 5):
        sessions.start("s", request_key=f"k{index}")
    assert sessions.start("s", request_key="k0") is not first  # forgotten: a new run
    assert len(sessions._keys) == 3


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

"""Streams before their first byte, sessions and resumes, retried attempts and the error
chunk's fields, end to end: a real uvicorn server (tests/support/wire_app.py) called with httpx.

- a stream that fails before it writes anything is answered with the failure's status and
  body (a refused run: 400 / 501; a second run of a session: 409), not 200 and an event; an
  EventSource (Accept: text/event-stream only) still gets a run's failure as its one event;
- a resume is served from its Last-Event-ID, or refused with a status (404 no such session,
  400 an id not ours, 410 an id never given or no longer kept), and a stream that has ended
  answers 204 (an EventSource stops reconnecting);
- `Sessions`: one live run a session (409 `state_already_running`, retryable), a newer run
  superseding the old one (`state_run_superseded`, at once, its source closed);
- a retry after output started marks its attempts, and the readers drop the stale one;
- an error chunk carries its agent, kind, timestamp and step.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

import recoverable as rc
from recoverable import agents, wire
from recoverable.testing import Fault
from recoverable.wire import asgi

from ..support.wire import MARKER
from ..support.wire_app import AppState
from ..support.wire_server import serving

EVENT_SOURCE = {"accept": "text/event-stream"}  # what a browser's EventSource sends


def _typed(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["code"] == code
    assert body["error"] == rc.codes[code].user_message
    assert MARKER not in response.text
    return body


def _wait(predicate: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# --- before the first byte: the failure's own status -------------------------------------------


@pytest.mark.parametrize("form", ["sse", "ndjson"])
@pytest.mark.parametrize(
    ("kind", "status", "code"),
    [("cwd", 400, "invalid_input"), ("option", 501, "not_supported")],
)
def test_a_run_that_cannot_start_is_answered_with_its_status(
    client: httpx.Client, form: str, kind: str, status: int, code: str
) -> None:
    response = client.get(f"/refused/{kind}", params={"format": form})
    body = _typed(response, status, code)
    assert body["retryable"] is False
    assert "retry-after" not in response.headers
    assert response.headers["content-type"] == "application/json"
    detail = wire.read_response(response.status_code, response.headers, response.content)
    assert (detail.code, detail.retryable) == (code, False)


def test_the_problem_style_when_the_client_asks(client: httpx.Client) -> None:
    response = client.get("/refused/cwd", headers={"accept": "application/problem+json"})
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert (body["type"], body["status"]) == ("urn:recoverable:code:invalid_input", 400)


def test_an_upstream_failure_before_the_first_event_has_its_status(
    app: AppState, client: httpx.Client
) -> None:
    app.fake.fail(Fault.rate_limited(retry_after=7))
    response = client.get("/chat/stream")
    _typed(response, 503, "provider_rate_limited")
    assert response.headers["retry-after"] == "7"


def test_an_agent_run_that_fails_before_its_answer_has_its_status(
    app: AppState, client: httpx.Client
) -> None:
    # Claude Code starts, its provider refuses (quota): a turn's end, the error, Done; no text
    app.fake.fail(Fault.insufficient_quota())
    _typed(client.get("/agent/quota-typed"), 502, "provider_quota_exceeded")
    log = app.logs["quota-typed"]
    assert log.closed
    kept = log.since(None)
    assert kept is not None
    kinds = [chunk.event.type for chunk in kept if chunk.event.type != "raw"]
    assert kinds == ["turn_end", "error", "done"]  # and no run_cancelled


def test_an_event_source_gets_a_runs_failure_as_its_event(client: httpx.Client) -> None:
    # An EventSource reads no status body: the run's failure reaches its page as an event.
    with client.stream("GET", "/refused/cwd", headers=EVENT_SOURCE) as response:
        assert response.status_code == 200
        events = list(wire.iter_events(response))
    assert len(events) == 1
    error = events[0]
    assert isinstance(error, agents.ErrorEvent)
    assert (error.severity, error.detail.code) == ("error", "invalid_input")


def test_a_stream_with_nothing_to_send_is_204(client: httpx.Client) -> None:
    for headers in ({}, EVENT_SOURCE):
        response = client.get("/empty", headers=headers)
        assert (response.status_code, response.content) == (204, b"")


def test_a_stream_that_writes_is_200_even_when_it_fails_later(client: httpx.Client) -> None:
    with client.stream("GET", "/numbers/later?count=1&then=bug") as response:
        assert response.status_code == 200
        events = list(wire.iter_events(response))
    assert [event.type for event in events] == ["text_delta", "error"]


# --- resuming ------------------------------------------------------------------------------------


def test_a_resume_from_an_id_never_given_is_410_not_event_1(
    app: AppState, client: httpx.Client
) -> None:
    # (on main: 200 and an `unknown` error numbered `id: 1`, so a client reconnecting from 1
    # was then sent the run's events 2 to 4)
    with client.stream("GET", "/numbers/gone?count=3") as response:
        assert [chunk.seq for chunk in wire.iter_chunks(response)] == [1, 2, 3, 4]
    for path in ("/numbers/gone", "/follow/gone"):  # the helper, and `sse_response(follow)`
        for headers in ({}, EVENT_SOURCE):  # an EventSource stops on a status
            response = client.get(path, headers={"Last-Event-ID": "99", **headers})
            body = _typed(response, 410, "state_not_resumable")
            assert (body["retryable"], body["fix_required"]) == (
                False, rc.codes["state_not_resumable"].fix_required,
            )  # fmt: skip


def test_a_resume_of_events_no_longer_kept_is_410(client: httpx.Client) -> None:
    with client.stream("GET", "/numbers/short?count=5&keep=2") as response:
        assert len(list(wire.iter_chunks(response))) == 6
    response = client.get("/numbers/short", headers={"Last-Event-ID": "1"})
    _typed(response, 410, "state_not_resumable")
    with client.stream("GET", "/numbers/short", headers={"Last-Event-ID": "4"}) as response:
        assert [chunk.seq for chunk in wire.iter_chunks(response)] == [5, 6]  # what is kept


def test_a_resume_of_an_ended_stream_is_204_until_then_the_rest(client: httpx.Client) -> None:
    with client.stream("GET", "/numbers/ended?count=2") as response:
        assert [chunk.seq for chunk in wire.iter_chunks(response)] == [1, 2, 3]
    with client.stream("GET", "/numbers/ended", headers={"Last-Event-ID": "1"}) as response:
        rest = list(wire.iter_chunks(response))
    assert [chunk.seq for chunk in rest] == [2, 3]
    assert isinstance(rest[-1].event, agents.Done)
    for path in ("/numbers/ended", "/follow/ended"):
        response = client.get(path, headers={"Last-Event-ID": "3"})
        assert (response.status_code, response.content) == (204, b"")


@pytest.mark.parametrize(
    ("path", "last_event_id", "status", "code"),
    [
        ("/numbers/never-started", "3", 404, "state_session_not_found"),
        ("/sessions/nobody/stream", "3", 404, "state_session_not_found"),
        ("/sessions/nobody/stream", None, 404, "state_session_not_found"),
    ],
)
def test_a_resume_of_an_unknown_stream_is_404(
    client: httpx.Client, path: str, last_event_id: str | None, status: int, code: str
) -> None:
    headers = {} if last_event_id is None else {"Last-Event-ID": last_event_id}
    _typed(client.get(path, headers=headers), status, code)


def test_a_last_event_id_that_is_not_ours_is_400(client: httpx.Client) -> None:
    with client.stream("GET", "/numbers/foreign?count=1") as response:
        response.read()
    response = client.get("/numbers/foreign", headers={"Last-Event-ID": "abc"})
    _typed(response, 400, "invalid_input")


# --- sessions ----------------------------------------------------------------------------------


class _Reader(threading.Thread):
    """A client reading a session's stream in the background, chunk by chunk."""

    def __init__(self, url: str, method: str, path: str) -> None:
        super().__init__(daemon=True)
        self.url, self.method, self.path = url, method, path
        self.status: int | None = None
        self.chunks: list[wire.Chunk] = []

    def run(self) -> None:
        with (
            httpx.Client(base_url=self.url, timeout=60) as client,
            client.stream(self.method, self.path) as response,
        ):
            self.status = response.status_code
            self.chunks.extend(wire.iter_chunks(response))


def _started(url: str, path: str, count: int) -> _Reader:
    reader = _Reader(url, "POST", path)
    reader.start()
    _wait(lambda: len(reader.chunks) >= count)
    return reader


def test_a_second_run_of_a_session_is_409_retryable_until_the_first_ends(
    served: tuple[AppState, str], client: httpx.Client
) -> None:
    app, url = served
    first = _started(url, "/sessions/s1", 2)
    response = client.post("/sessions/s1")
    body = _typed(response, 409, "state_already_running")
    assert (body["retryable"], body["retry_after_ms"]) == (True, 1000)
    assert response.headers["retry-after"] == "1"
    # a resume meanwhile is served from its id, and follows the live run
    follower = _Reader(url, "GET", "/sessions/s1/stream")
    follower.start()
    _wait(lambda: len(follower.chunks) >= 2)
    client.post("/gates/s1")  # the first run ends
    first.join(10)
    follower.join(10)
    assert not first.is_alive() and not follower.is_alive()
    assert [chunk.seq for chunk in first.chunks] == [1, 2, 3]
    assert [chunk.event for chunk in follower.chunks] == [chunk.event for chunk in first.chunks]
    assert app.sessions.get("s1") is not None
    assert not app.sessions.get("s1").live  # type: ignore[union-attr]
    second = _started(url, "/sessions/s1", 2)  # the session is free again
    assert second.status == 200
    client.post("/gates/s1")
    second.join(10)
    assert not second.is_alive()


def test_a_newer_run_supersedes_the_live_one_at_once(
    served: tuple[AppState, str], client: httpx.Client
) -> None:
    app, url = served
    old = _started(url, "/sessions/s2", 2)
    old_log = app.sessions.get("s2")
    assert old_log is not None and old_log.live
    follower = _Reader(url, "GET", "/sessions/s2/stream")
    follower.start()
    _wait(lambda: len(follower.chunks) >= 2)
    new = _started(url, "/sessions/s2?supersede=1", 2)
    old.join(10)  # the old run waited on its gate: it was stopped, not left to hang
    follower.join(10)
    assert not old.is_alive() and not follower.is_alive()
    for reader in (old, follower):
        last = reader.chunks[-1].event
        assert isinstance(last, agents.ErrorEvent)
        assert (last.detail.code, last.detail.retryable) == ("state_run_superseded", False)
        assert [chunk.seq for chunk in reader.chunks] == [1, 2, 3]
    assert old_log.closed and app.sessions.get("s2") is not old_log
    client.post("/gates/s2")
    new.join(10)
    assert not new.is_alive()
    assert [chunk.event.type for chunk in new.chunks] == ["text_delta", "text_delta", "done"]


def test_two_writers_on_one_log_are_a_concurrency_conflict() -> None:
    log = wire.StreamLog()
    assert log.claim() is None
    refusal = log.claim()
    assert refusal is not None
    assert (refusal.code, refusal.http_status, refusal.retryable) == (
        "state_concurrency_conflict", 409, False,
    )  # fmt: skip


def test_a_session_start_refused_before_it_starts() -> None:
    sessions = wire.Sessions()
    log = sessions.start("s")
    assert sessions.get("s") is None  # current only once its publisher claims it
    assert log.claim() is None
    assert sessions.get("s") is log
    busy = sessions.busy("s")
    assert busy is not None
    assert (busy.code, busy.retryable, busy.http_status) == ("state_already_running", True, 409)
    refused = sessions.start("s")  # refused when its publisher claims it: nothing changes
    refusal = refused.claim()
    assert refusal is not None
    assert refusal.code == "state_already_running"
    assert sessions.get("s") is log and log.live
    pending = sessions.start("s", supersede=True)
    assert pending.claim() is None
    assert log.closed and log.superseded is not None
    assert sessions.get("s") is pending
    with pytest.raises(rc.RecoverableError) as raised:
        sessions.start("")
    assert raised.value.code == "invalid_input"


def test_sessions_keep_at_most_their_bound_and_never_forget_a_live_one() -> None:
    sessions = wire.Sessions(max_sessions=2)
    logs = [sessions.start(name) for name in ("a", "b")]
    assert [log.claim() for log in logs] == [None, None]
    refused = sessions.start("c").claim()  # both live: refused, nothing forgotten
    assert refused is not None
    assert (refused.code, refused.http_status, refused.retryable) == ("unavailable", 503, True)
    assert refused.details == {"max_sessions": 2}
    assert sessions.get("a") is logs[0] and sessions.get("b") is logs[1]
    assert sessions.start("a", supersede=True).claim() is None  # a known session: no new room
    logs[1].close()
    third = sessions.start("c")
    assert third.claim() is None
    assert len(sessions) == 2
    assert sessions.get("b") is None  # the ended one went
    assert sessions.get("c") is third


# --- a retry after output started ----------------------------------------------------------------


@pytest.mark.parametrize("form", ["sse", "ndjson"])
def test_a_retry_after_output_marks_its_attempts(client: httpx.Client, form: str) -> None:
    with client.stream("GET", "/retried", params={"format": form}) as response:
        raw = response.read().decode()
    chunks = wire.read_sse_chunks(raw) if form == "sse" else wire.read_ndjson_chunks(raw)
    assert [(chunk.attempt, chunk.event.type) for chunk in chunks] == [
        (1, "text_delta"), (1, "turn_end"),
        (2, "attempt_superseded"),
        (2, "text_delta"), (2, "turn_end"), (2, "text_delta"), (2, "done"),
    ]  # fmt: skip
    assert chunks[2].event == wire.AttemptSuperseded(1)
    lines = [json.loads(line.removeprefix("data: ")) for line in raw.splitlines()
             if line.startswith("data: ") or (form == "ndjson" and line)]  # fmt: skip
    assert {key: lines[2][key] for key in ("type", "superseded", "attempt")} == {
        "type": "attempt_superseded", "superseded": 1, "attempt": 2,
    }  # fmt: skip
    # the readers of a whole stream keep the attempt that won, and no marker
    events = wire.read_sse(raw) if form == "sse" else wire.read_ndjson(raw)
    assert events == [
        agents.TextDelta("draft 2 "), agents.TurnEnd(), agents.TextDelta("final answer"),
        agents.Done(agents.RunResult(True, "final answer")),
    ]  # fmt: skip


def test_a_live_reader_is_told_where_to_drop(client: httpx.Client) -> None:
    with client.stream("GET", "/retried") as response:
        events = list(wire.iter_events(response))
    marker = events.index(wire.AttemptSuperseded(1))
    assert events[:marker] == [agents.TextDelta("draft 1 "), agents.TurnEnd()]
    kept = events[marker + 1 :]
    assert "".join(e.text for e in kept if isinstance(e, agents.TextDelta)) == (
        "draft 2 final answer"
    )


def test_an_exhausted_retry_keeps_the_last_attempt_and_its_error(client: httpx.Client) -> None:
    with client.stream("GET", "/retried?fail=2&attempts=2") as response:
        raw = response.read().decode()
    events = wire.read_sse(raw)
    assert [event.type for event in events] == ["text_delta", "turn_end", "error"]
    assert events[0] == agents.TextDelta("draft 2 ")
    error = events[-1]
    assert isinstance(error, agents.ErrorEvent)
    assert (error.detail.code, error.detail.retryable) == ("provider_connection_lost", False)
    chunks = wire.read_sse_chunks(raw)
    assert chunks[-1].attempt == 2
    assert chunks[-1].context is not None
    assert chunks[-1].context.step == 2  # a turn ended in its attempt before it


def test_an_unmarked_stream_is_written_as_before() -> None:
    text = wire.to_ndjson(agents.TextDelta("a"), seq=1)
    assert json.loads(text) == {"type": "text_delta", "text": "a", "seq": 1}


# --- the error chunk's fields ---------------------------------------------------------------------


def test_an_agents_error_chunk_carries_the_seeds_fields(
    app: AppState, client: httpx.Client
) -> None:
    before = int(time.time() * 1000)
    app.fake.fail(Fault.insufficient_quota())
    with client.stream("GET", "/agent/ctx", headers=EVENT_SOURCE) as response:  # in-stream
        raw = response.read().decode()
    after = int(time.time() * 1000)
    lines = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: ")]
    (error,) = [line for line in lines if line["type"] == "error"]
    assert (error["agent"], error["agent_kind"], error["step"]) == ("claude", "cli", 2)
    assert before <= error["timestamp"] <= after
    assert error["detail"]["code"] == "provider_quota_exceeded"
    chunk = next(c for c in wire.read_ndjson_chunks("\n".join(json.dumps(x) for x in lines))
                 if c.event.type == "error")  # fmt: skip
    assert chunk.context == wire.ErrorContext("claude", "cli", error["timestamp"], 2)
    kept = app.logs["ctx"].since(None)
    assert kept is not None
    assert [c.context for c in kept if c.event.type == "error"] == [chunk.context]


def test_a_public_error_chunk_names_only_our_agents() -> None:
    detail = rc.ErrorDetail.create("unknown", "x")
    for agent, written in (("claude", True), ("evil<script>", False), ("openai", False)):
        chunk = wire.Chunk(
            agents.ErrorEvent(detail), 3, None, wire.ErrorContext(agent, "cli", 5, 1)
        )
        public = json.loads(wire.to_ndjson(chunk, public=True))
        assert ("agent" in public) is written
        assert (public["timestamp"], public["step"], public["seq"]) == (5, 1, 3)
        full = json.loads(wire.to_ndjson(chunk))
        assert full["agent"] == agent  # the developer's stream keeps what was stamped


@pytest.mark.parametrize(
    ("fields", "context"),
    [
        ({"agent": "claude", "agent_kind": "cli", "timestamp": 7, "step": 2},
         wire.ErrorContext("claude", "cli", 7, 2)),
        ({"agent": "Claude Code!", "agent_kind": ["cli"], "timestamp": -1, "step": 0}, None),
        ({"agent": "claude", "agent_kind": {}, "timestamp": 1.5, "step": True},
         wire.ErrorContext("claude")),
        ({"timestamp": 10**30}, None),
    ],
)  # fmt: skip
def test_an_error_chunks_fields_read_from_a_peer(
    fields: dict[str, Any], context: wire.ErrorContext | None
) -> None:
    detail = rc.ErrorDetail.create("unknown", "x")
    line = json.dumps({**json.loads(wire.to_ndjson(detail)), **fields, "attempt": "2"})
    (chunk,) = wire.read_ndjson_chunks(line)
    assert isinstance(chunk.event, agents.ErrorEvent)
    assert (chunk.context, chunk.attempt) == (context, None)


def test_a_client_gone_before_the_status_cancels_the_run(
    app: AppState, client: httpx.Client
) -> None:
    # nothing written yet: the status is held (up to its wait), and the client gives up
    with pytest.raises(httpx.ReadTimeout):
        client.get("/numbers/early-gone?count=0&then=hang", timeout=0.5)
    log = app.logs["early-gone"]
    _wait(lambda: log.closed)  # seen while the status waited: the source closed
    kept = log.since(None)
    assert kept is not None
    assert [chunk.event.detail.code for chunk in kept] == ["run_cancelled"]  # type: ignore[union-attr]


def test_a_slow_first_event_still_streams_after_the_wait() -> None:
    # The status waits `status_wait` at most: then 200, and the events as they come.
    app = FastAPI()

    async def slow() -> Any:
        await asyncio.sleep(0.6)
        yield agents.TextDelta("late")
        yield agents.Done(agents.RunResult(True, "late"))

    @app.get("/slow")
    async def route() -> Any:
        return asgi.sse_response(slow(), status_wait=0.1)

    with serving(app) as url, httpx.Client(base_url=url, timeout=10) as client:
        started = time.monotonic()
        with client.stream("GET", "/slow") as response:
            assert response.status_code == 200
            assert time.monotonic() - started < 0.5  # the status did not wait for the event
            events = list(wire.iter_events(response))
    assert events == [agents.TextDelta("late"), agents.Done(agents.RunResult(True, "late"))]


# --- the wire page's own examples (its ```py blocks; its ```python ones are the README's) -----


def _page_examples() -> list[str]:
    """The page's sessions, keyed-sessions and retry examples, in the page's order."""
    page = Path(__file__).resolve().parents[2] / "docs" / "integrations" / "wire.md"
    return re.findall(r"```py\n(.*?)```", page.read_text(), re.DOTALL)


def _example_app(code: str, monkeypatch: pytest.MonkeyPatch, source: Any) -> Any:
    monkeypatch.setattr(agents, "stream", source)  # the page's runs, without an account
    namespace: dict[str, Any] = {"__name__": "wire_page"}
    exec(compile(code, "docs/integrations/wire.md", "exec"), namespace)
    return namespace["app"]


def test_the_pages_sessions_example(monkeypatch: pytest.MonkeyPatch) -> None:
    sessions_code, _, _ = _page_examples()
    gate = threading.Event()

    async def run(prompt: str, cli: str) -> Any:
        yield agents.TextDelta(prompt)
        while not gate.is_set():
            await asyncio.sleep(0.02)
        yield agents.Done(agents.RunResult(True, prompt))

    app = _example_app(sessions_code, monkeypatch, run)
    with serving(app) as url, httpx.Client(base_url=url, timeout=10) as client:
        first = _started(url, "/chat/s?prompt=hi", 1)
        _typed(client.post("/chat/s?prompt=again"), 409, "state_already_running")
        gate.set()
        first.join(10)
        assert [chunk.event for chunk in first.chunks] == [
            agents.TextDelta("hi"), agents.Done(agents.RunResult(True, "hi")),
        ]  # fmt: skip
        response = client.get("/chat/s/stream", headers={"Last-Event-ID": "2"})
        assert response.status_code == 204
        _typed(client.get("/chat/other/stream"), 404, "state_session_not_found")


def test_the_pages_keyed_sessions_example(monkeypatch: pytest.MonkeyPatch) -> None:
    _, keyed_code, _ = _page_examples()
    runs: list[str] = []

    async def run(prompt: str, cli: str) -> Any:
        runs.append(prompt)
        yield agents.TextDelta(prompt)
        yield agents.Done(agents.RunResult(True, prompt))

    app = _example_app(keyed_code, monkeypatch, run)
    key = {"Idempotency-Key": "send-1"}
    with serving(app) as url, httpx.Client(base_url=url, timeout=10) as client:
        first = client.post("/chat/s", json={"prompt": "hi"}, headers=key)
        again = client.post("/chat/s", json={"prompt": "hi"}, headers=key)
        expected = [agents.TextDelta("hi"), agents.Done(agents.RunResult(True, "hi"))]
        assert wire.read_sse(first.text) == wire.read_sse(again.text) == expected
        other = client.post("/chat/s", json={"prompt": "other"}, headers=key)
        _typed(other, 409, "state_request_key_conflict")
        bad = client.post("/chat/s", json={"prompt": "hi"}, headers={"Idempotency-Key": "a b"})
        _typed(bad, 400, "invalid_input")
    assert runs == ["hi"]  # the same send again got its run, not a second one


def test_the_pages_retry_example(monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, retry_code = _page_examples()
    calls: list[int] = []

    async def run(prompt: str, cli: str) -> Any:
        calls.append(len(calls) + 1)
        yield agents.TextDelta(f"draft {len(calls)} ")
        if len(calls) == 1:
            raise rc.RecoverableError("provider_connection_lost", "dropped")
        yield agents.Done(agents.RunResult(True, "done"))

    app = _example_app(retry_code, monkeypatch, run)
    monkeypatch.setattr(rc.RetryPolicy, "backoff", lambda self, attempt, rng: 0.0)
    with serving(app) as url, httpx.Client(base_url=url, timeout=10) as client:
        raw = client.get("/runs?prompt=hi").text
    assert wire.read_sse(raw) == [agents.TextDelta("draft 2 "),
                                  agents.Done(agents.RunResult(True, "done"))]  # fmt: skip
    assert calls == [1, 2]


@pytest.mark.parametrize("superseded", ["1", 0, -1, True, 10**7, None, 1.0])
def test_a_forged_marker_is_a_malformed_chunk(superseded: object) -> None:
    line = json.dumps({"type": "attempt_superseded", "superseded": superseded, "attempt": 2})
    (chunk,) = wire.read_ndjson_chunks(line)
    assert isinstance(chunk.event, agents.ErrorEvent)
    assert (chunk.event.severity, chunk.event.detail.code) == ("warning", "tool_output_invalid")


@pytest.mark.parametrize("attempt", ["2", 0, -3, True, 1.5, 10**7, [1]])
def test_an_attempt_that_is_not_one_is_left_out(attempt: object) -> None:
    line = json.dumps({"type": "text_delta", "text": "a", "attempt": attempt})
    (chunk,) = wire.read_ndjson_chunks(line)
    assert (chunk.event, chunk.attempt) == (agents.TextDelta("a"), None)


def test_a_marker_drops_only_its_attempt() -> None:
    lines = [
        {"type": "text_delta", "text": "unmarked"},
        {"type": "text_delta", "text": "one", "attempt": 1},
        {"type": "attempt_superseded", "superseded": 1, "attempt": 2},
        {"type": "attempt_superseded", "superseded": 7, "attempt": 2},  # no such attempt
        {"type": "text_delta", "text": "two", "attempt": 2},
    ]
    events = wire.read_ndjson("".join(json.dumps(line) + "\n" for line in lines))
    assert events == [agents.TextDelta("unmarked"), agents.TextDelta("two")]

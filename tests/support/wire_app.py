"""The FastAPI app the wire tests serve: routes that fail every way a real one does (the real
openai SDK against FakeProvider, our own errors, framework errors, bugs), streams of events
that succeed, fail mid-stream or are resumed, and real agent runs (Claude Code)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
from fastapi import FastAPI, Request
from starlette.responses import JSONResponse, Response, StreamingResponse

import recoverable as rc
from recoverable import agents, wire
from recoverable.testing import FakeProvider, cli_setup
from recoverable.wire import asgi

from .wire import MARKER, SECRET


@dataclass
class AppState:
    """What the tests see of the app: its fake provider, its logs, the runs it started."""

    fake: FakeProvider
    home: Path
    claude: str
    logs: dict[str, wire.StreamLog] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    sessions: wire.Sessions = field(default_factory=wire.Sessions)
    gates: dict[str, list[asyncio.Event]] = field(default_factory=dict)

    def gate(self, session: str) -> asyncio.Event:
        """A new gate for a run of `session` (`/gates/{session}` opens them all)."""
        gate = asyncio.Event()
        self.gates.setdefault(session, []).append(gate)
        return gate


def _client(state: AppState) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="sk-fake", base_url=state.fake.openai_url, max_retries=0)


async def _chat(state: AppState) -> str:
    reply = await _client(state).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
    )
    return reply.choices[0].message.content or ""


async def _chat_stream(state: AppState) -> AsyncIterator[agents.Event]:
    """The openai SDK's stream as events: its text deltas, then Done."""
    stream = await _client(state).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    text = ""
    async for part in stream:
        if part.choices and part.choices[0].delta.content:
            text += part.choices[0].delta.content
            yield agents.TextDelta(part.choices[0].delta.content)
    yield agents.Done(agents.RunResult(True, text))


async def _numbers(
    count: int, then: str, gate: asyncio.Event | None = None
) -> AsyncIterator[agents.Event]:
    for number in range(1, count + 1):
        yield agents.TextDelta(f"{number} ")
    if then == "hang":
        await (gate or asyncio.Event()).wait()
    if then == "bug":
        raise RuntimeError(f"bug with {MARKER} and {SECRET}")
    yield agents.Done(agents.RunResult(True, ""))


async def _nothing() -> AsyncIterator[agents.Event]:
    return
    yield  # an async generator that yields nothing


def _refused(kind: str, state: AppState) -> AsyncIterator[agents.Event]:
    """A run that cannot start: the caller's own mistake, refused by `agents` before any
    process (RunRefused: a missing working directory, an option the CLI cannot apply)."""
    if kind == "cwd":
        return agents.stream("hi", "claude", executable=state.claude, cwd=f"/no/{MARKER}")
    return agents.stream("hi", "codex", executable="/no/codex", max_turns=3)


def retried(
    fail_first: int = 1, attempts: int | None = None
) -> AsyncIterator[agents.Event | wire.Attempt]:
    """A retried stream whose first `fail_first` attempts send text, then drop (retryable):
    every attempt's output is relayed (`retry_after_output`), each marked (`wire.Attempt`);
    `attempts` of them at most (one more than fail by default)."""
    calls = [0]

    async def attempt() -> AsyncIterator[agents.Event]:
        calls[0] += 1
        number = calls[0]
        yield agents.TextDelta(f"draft {number} ")
        yield agents.TurnEnd()
        if number <= fail_first:
            raise rc.RecoverableError("provider_connection_lost", f"dropped {MARKER}")
        yield agents.TextDelta("final answer")
        yield agents.Done(agents.RunResult(True, "final answer"))

    most = fail_first + 1 if attempts is None else attempts
    retrying = rc.retry(attempts=most, initial_delay=0.01, jitter=False)
    return retrying.stream(
        attempt, on_error=agents.ErrorEvent, retry_after_output=True, on_attempt=wire.Attempt
    )


RAISES: dict[str, Any] = {
    "not_found": lambda: rc.RecoverableError("not_found", f"no run {MARKER}"),
    "bug": lambda: RuntimeError(f"KeyError in /srv/{MARKER} with {SECRET}"),
    "refused": lambda: ConnectionRefusedError(f"connect to 10.0.0.1 {MARKER}"),
    "conflict": lambda: rc.RecoverableError("conflict", f"version {MARKER}"),
}


def build(state: AppState) -> FastAPI:
    app = FastAPI()
    asgi.install(app)

    @app.get("/raise/{kind}")
    async def raising(kind: str) -> None:
        raise RAISES[kind]()

    @app.get("/count")
    async def count(n: int) -> dict[str, int]:
        return {"n": n}

    @app.get("/chat")
    async def chat(request: Request) -> JSONResponse:
        name = request.query_params.get("name", "")
        state.calls[name] = state.calls.get(name, 0) + 1
        return JSONResponse({"text": await _chat(state)})

    @app.get("/chat/stream")
    async def chat_stream(request: Request) -> Response:
        events = _chat_stream(state)
        if request.query_params.get("format") == "ndjson":
            return asgi.ndjson_response(events)
        return asgi.sse_response(events)

    @app.get("/numbers/{run}")
    async def numbers(run: str, request: Request) -> Response:
        form = request.query_params.get("format", "sse")
        key = f"{run} from {request.headers.get('last-event-id')}"  # what the tests count
        state.calls[key] = state.calls.get(key, 0) + 1
        if run in state.logs or "last-event-id" in request.headers:  # a client resuming
            return asgi.resume_response(state.logs.get(run), request, form=form)
        keep = int(request.query_params.get("keep", "100"))
        log = state.logs[run] = wire.StreamLog(max_events=keep)
        count = int(request.query_params.get("count", "3"))
        then = request.query_params.get("then", "end")
        if form == "ndjson":
            return asgi.ndjson_response(_numbers(count, then), log=log)
        return asgi.sse_response(_numbers(count, then), log=log)

    @app.get("/follow/{run}")
    async def follow(run: str, request: Request) -> Response:
        """The documented resume without the helper: a response over `log.follow`."""
        return asgi.sse_response(state.logs[run].follow(wire.last_event_id(request.headers)))

    @app.get("/empty")
    async def empty() -> Response:
        return asgi.sse_response(_nothing())

    @app.get("/refused/{kind}")
    async def refused(kind: str, request: Request) -> Response:
        if request.query_params.get("format") == "ndjson":
            return asgi.ndjson_response(_refused(kind, state))
        return asgi.sse_response(_refused(kind, state))

    @app.get("/retried")
    async def retried_stream(request: Request) -> Response:
        fail_first = int(request.query_params.get("fail", "1"))
        most = int(request.query_params.get("attempts", str(fail_first + 1)))
        if request.query_params.get("format") == "ndjson":
            return asgi.ndjson_response(retried(fail_first, most))
        return asgi.sse_response(retried(fail_first, most))

    _session_routes(app, state)
    return app


def _session_routes(app: FastAPI, state: AppState) -> None:
    """Runs of sessions (`wire.Sessions`), over SSE and the AI SDK's stream, and resumes; agent
    runs; a connection cut; the AI SDK's streams."""

    @app.post("/sessions/{session}")
    async def start(session: str, request: Request) -> Response:
        supersede = request.query_params.get("supersede") == "1"
        log = state.sessions.start(session, supersede=supersede)
        gate = state.gate(session)  # opened by the test: the run ends
        count = int(request.query_params.get("count", "2"))
        return asgi.sse_response(_numbers(count, "hang", gate), log=log)

    @app.post("/gates/{session}")
    async def open_gate(session: str) -> dict[str, bool]:
        """The session's run ends (its source stops waiting)."""
        for gate in state.gates.pop(session, []):
            gate.set()
        return {"ended": True}

    @app.get("/sessions/{session}/stream")
    async def resume(session: str, request: Request) -> Response:
        return asgi.resume_response(state.sessions.get(session), request)

    @app.post("/chats")
    async def chat_send(request: Request) -> Response:
        """The AI SDK's send (`DefaultChatTransport`): the chat id is the session."""
        body = await request.json()
        log = state.sessions.start(str(body["id"]))
        gate = state.gate(str(body["id"]))
        return asgi.ui_message_response(_numbers(2, "hang", gate), log=log)

    @app.get("/chats/{session}/stream")
    async def chat_resume(session: str, request: Request) -> Response:
        """The AI SDK's resume (`reconnectToStream`)."""
        state.calls[f"resume {session}"] = state.calls.get(f"resume {session}", 0) + 1
        return asgi.resume_response(state.sessions.get(session), request, form="ui")

    @app.get("/agent/{run}")
    async def agent(run: str, request: Request) -> Response:
        log = state.logs[run] = wire.StreamLog()
        events = _agent(state)
        if request.query_params.get("format") == "ndjson":
            return asgi.ndjson_response(events, log=log)
        return asgi.sse_response(events, log=log)

    @app.get("/cut")
    async def cut() -> Response:
        async def body() -> AsyncIterator[str]:
            for number in (1, 2):
                yield wire.to_sse(agents.TextDelta(f"{number} "), seq=number)
                await asyncio.sleep(0.05)
            raise ConnectionResetError("the server died mid-stream")  # uvicorn drops the line

        return StreamingResponse(body(), media_type="text/event-stream")

    @app.post("/ui/{kind}")
    async def ui(kind: str) -> Response:
        sources = {
            "tools": _tools,
            "refused": lambda: _refused("cwd", state),
            "unsupported": lambda: _refused("option", state),
            "retried": retried,
            "exhausted": lambda: retried(fail_first=2, attempts=2),
            "agent": lambda: _agent(state),
            "late": _late,
        }
        source = sources.get(kind, lambda: _chat_stream(state))()
        return asgi.ui_message_response(source, message_id="msg-1")


def _agent(state: AppState) -> AsyncIterator[agents.Event]:
    """Claude Code asked to say hello, against the fake provider."""
    setup = cli_setup("claude", state.fake, state.home, max_retries=0)
    work = state.home / "work"
    work.mkdir(parents=True, exist_ok=True)
    return agents.stream(
        "Say hello.", "claude", executable=state.claude, env=setup.environ(),
        inherit_env=False, extra_args=setup.args, cwd=str(work), timeout=60.0,
    )  # fmt: skip


async def _late() -> AsyncIterator[agents.Event]:
    """A CLI's run that fails after its first words, as `agents.stream` reports it."""
    detail = rc.ErrorDetail.create(
        "provider_rate_limited", f"429 {MARKER}", source="claude", retry_after_ms=2500
    )
    yield agents.Raw("claude", {"type": "system"})
    yield agents.TextDelta("Hel")
    yield agents.TurnEnd()
    yield agents.ErrorEvent(detail)
    yield agents.Done(agents.RunResult(False, "Hel", detail))


async def _tools() -> AsyncIterator[agents.Event]:
    yield agents.ThinkingDelta("Let me look.")
    yield agents.ToolStart("call-1", "Bash", {"command": "echo hi"})
    yield agents.ToolEnd("call-1", True, "hi\n")
    yield agents.ToolStart("call-2", "Bash", {"command": "false"})
    yield agents.ToolEnd("call-2", False, None, f"exit 1 in /home/{MARKER}")
    yield agents.TurnEnd()
    yield agents.TextDelta("The tool printed hi.")
    yield agents.Done(agents.RunResult(True, "The tool printed hi."))

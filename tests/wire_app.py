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

from .wire_support import MARKER, SECRET


@dataclass
class AppState:
    """What the tests see of the app: its fake provider, its logs, the runs it started."""

    fake: FakeProvider
    home: Path
    claude: str
    logs: dict[str, wire.StreamLog] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)


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


async def _numbers(count: int, then: str) -> AsyncIterator[agents.Event]:
    for number in range(1, count + 1):
        yield agents.TextDelta(f"{number} ")
    if then == "hang":
        await asyncio.Event().wait()
    if then == "bug":
        raise RuntimeError(f"bug with {MARKER} and {SECRET}")
    yield agents.Done(agents.RunResult(True, ""))


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
        log = state.logs.get(run)
        if log is not None:  # a client resuming
            after = wire.last_event_id(request.headers)
            if log.since(after) is None:
                return asgi.error_response(
                    request, rc.ErrorDetail.create("precondition_failed", "not kept")
                )
            return asgi.sse_response(log.follow(after))
        log = state.logs[run] = wire.StreamLog()
        count = int(request.query_params.get("count", "3"))
        then = request.query_params.get("then", "end")
        if request.query_params.get("format") == "ndjson":
            return asgi.ndjson_response(_numbers(count, then), log=log)
        return asgi.sse_response(_numbers(count, then), log=log)

    @app.get("/agent/{run}")
    async def agent(run: str, request: Request) -> Response:
        setup = cli_setup("claude", state.fake, state.home, max_retries=0)
        work = state.home / "work"
        work.mkdir(parents=True, exist_ok=True)
        log = state.logs[run] = wire.StreamLog()
        events = agents.stream(
            "Say hello.", "claude", executable=state.claude, env=setup.environ(),
            inherit_env=False, extra_args=setup.args, cwd=str(work), timeout=60.0,
        )  # fmt: skip
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
        source = _tools() if kind == "tools" else _chat_stream(state)
        return asgi.ui_message_response(source, message_id="msg-1")

    return app


async def _tools() -> AsyncIterator[agents.Event]:
    yield agents.ThinkingDelta("Let me look.")
    yield agents.ToolStart("call-1", "Bash", {"command": "echo hi"})
    yield agents.ToolEnd("call-1", True, "hi\n")
    yield agents.ToolStart("call-2", "Bash", {"command": "false"})
    yield agents.ToolEnd("call-2", False, None, f"exit 1 in /home/{MARKER}")
    yield agents.TurnEnd()
    yield agents.TextDelta("The tool printed hi.")
    yield agents.Done(agents.RunResult(True, "The tool printed hi."))

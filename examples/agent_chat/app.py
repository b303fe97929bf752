"""agent_chat: a web page that streams an agent run over SSE, with errors a person can act on.

    python examples/agent_chat/app.py --fake                 # Claude Code against a fake LLM
    python examples/agent_chat/app.py --fake rate_limited    # ... whose first answer is a 429
    python examples/agent_chat/app.py --cli claude           # the real thing (your login)

then open http://127.0.0.1:8000. The page shows the answer as it streams; on a failure, the
`user_message` (never the developer text), and when the failure is retryable a countdown from
`retry_after_ms` and a retry button. Closing the tab cancels the run (its process group is
stopped). Needs `pip install fastapi uvicorn sse-starlette` and the CLI.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections.abc import AsyncIterable, Callable, Iterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from starlette.responses import HTMLResponse, Response

from recoverable import agents
from recoverable.wire import asgi

PAGE = (Path(__file__).parent / "index.html").read_text()

Run = Callable[[str], AsyncIterable[agents.Event]]
"""What answers a prompt: an async iterator of events (`agents.stream`, or your own)."""


def create_app(run: Run) -> FastAPI:
    """The page at `/` and its event stream at `/run?prompt=...`."""
    app = FastAPI()
    asgi.install(app)

    @app.get("/")
    async def page() -> HTMLResponse:
        return HTMLResponse(PAGE)

    @app.get("/run")
    async def stream(prompt: str) -> Response:
        return asgi.sse_response(run(prompt))

    return app


def agent_run(cli: str, **options: Any) -> Run:
    """Runs of `cli` (claude, codex, gemini) with these `agents` options."""

    def run(prompt: str) -> AsyncIterable[agents.Event]:
        return agents.stream(prompt, cli, **options)

    return run


@contextlib.contextmanager
def fake_agent(cli: str, fault: str | None) -> Iterator[Run]:
    """`cli` pointed at a FakeProvider (no account, no network), `fault` on its first call."""
    from recoverable.testing import FakeProvider, Fault, cli_setup

    with FakeProvider() as fake, tempfile.TemporaryDirectory(prefix="agent-chat-") as home:
        if fault:
            fake.fail(Fault.named(fault))
        setup = cli_setup(cli, fake, home, max_retries=0)
        yield agent_run(
            cli, env=setup.environ(), inherit_env=False, extra_args=setup.args, cwd=home
        )


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", default="claude", choices=agents.CLI_NAMES)
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--fake", nargs="?", const="", default=None, metavar="FAULT",
                        help="use a FakeProvider (optionally failing its first call)")  # fmt: skip
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        if args.fake is None:
            run = agent_run(args.cli)
        else:
            run = stack.enter_context(fake_agent(args.cli, args.fake or None))
        uvicorn.run(create_app(run), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()

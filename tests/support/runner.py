"""What the runner tests share: a scripted fake CLI and its parser module, both drivers (asyncio
and subprocess + selectors), and finding what a run left behind (its processes, by a marker in
their environment; our file descriptors)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

import recoverable as rc
from recoverable.agents import Done, RunOptions, RunResult, TextDelta, ToolEnd, ToolStart
from recoverable.agents._line_json import read_json
from recoverable.agents._parsing import ParseState, no_stderr_events
from recoverable.agents._run_async import run_process
from recoverable.agents._run_sync import run_process_sync

from .cli import processes_left_with, processes_with

T = TypeVar("T")

MARKER = "RECOVERABLE_TEST_RUN"
"""The variable that carries a test's marker into every process of its runs."""


def _parse_line(line: str, state: ParseState) -> list[Any]:
    data = read_json(line) or {}
    kind = data.get("type")
    if kind == "text":
        state.text_parts.append(data["text"])
        return [TextDelta(data["text"])]
    if kind == "tool_start":
        state.start_tool(data["id"], "sh")
        return [ToolStart(data["id"], "sh")]
    if kind == "tool_end":
        state.end_tool(data["id"], data["ok"])
        return [ToolEnd(data["id"], data["ok"])]
    if kind == "done":
        state.terminal = "success"
    if kind == "fail":
        return [state.terminal_failure(rc.ErrorDetail.create("provider_overloaded", "busy"))]
    return []


def _outcome(state: ParseState, exit_code: int | None, tail: str) -> Any:
    # Only for a run without a terminal event or signal: `finish` decides those itself.
    return rc.ErrorDetail.create("cli_crashed", "crashed", source="fake",
                                 details={"exit_code": exit_code})  # fmt: skip


MODULE = SimpleNamespace(
    NAME="fake",
    PACKAGE="fake-cli",
    new_state=lambda: ParseState("fake"),
    parse_line=_parse_line,
    outcome=_outcome,
    stderr_line=no_stderr_events,
    build_argv=None,
)
"""A CLI module over the scripted CLI's lines: {"type": "text" | "tool_start" | "tool_end" |
"done" | "fail", ...}."""


def script(tmp_path: Path, body: str, name: str = "cli.py") -> list[str]:
    """The argv of a Python script: `body` after a prelude (`say(**event)` prints a line)."""
    path = tmp_path / name
    prelude = "import json, os, signal, subprocess, sys, time\n"
    prelude += "def say(**event):\n    print(json.dumps(event), flush=True)\n"
    path.write_text(prelude + textwrap.dedent(body))
    return [sys.executable, str(path)]


def executable(tmp_path: Path, body: str, name: str = "claude") -> str:
    """A CLI binary named `name`: `script`'s Python script with its shebang."""
    argv = script(tmp_path, body, name=name)
    path = Path(argv[1])
    path.write_text(f"#!{argv[0]}\n" + path.read_text())
    path.chmod(0o755)
    return argv[1]


CLAUDE_TEXT = (Path(__file__).parents[1] / "data" / "cli" / "claude" / "text.stdout").read_text()
"""Claude's stream-json lines of a text reply, captured ("Hello from FakeProvider.")."""


async def run(
    driver: str, argv: list[str], cancel_after: float | None = None, **options: Any
) -> RunResult:
    """One run of `argv` through `driver` ("async" or "sync"), every event kept; checks that
    the events end with `Done` and that the result holds all the others."""
    settings = RunOptions(**{"keep_events": None, **options})
    loop = asyncio.get_running_loop()
    if driver == "async":
        cancel: Any = asyncio.Event()
        events = []
        if cancel_after is not None:
            loop.call_later(cancel_after, cancel.set)
        async for event in run_process(MODULE, argv, settings, cancel=cancel):  # type: ignore[arg-type]
            events.append(event)
    else:
        cancel = threading.Event()
        if cancel_after is not None:
            loop.call_later(cancel_after, cancel.set)
        events = await in_thread(
            lambda: list(run_process_sync(MODULE, argv, settings, cancel=cancel))  # type: ignore[arg-type]
        )
    assert isinstance(events[-1], Done)
    result: RunResult = events[-1].result
    assert list(result.events) == events[:-1]
    return result


async def in_thread(call: Callable[[], T]) -> T:
    """`call()` in a thread of its own (not the loop's pool, which runs a few at a time), so
    that any number of sync runs go at once."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def target() -> None:
        try:
            value = call()
        except BaseException as exc:  # handed to the awaiting task
            loop.call_soon_threadsafe(done.set_exception, exc)
        else:
            loop.call_soon_threadsafe(done.set_result, value)

    threading.Thread(target=target, daemon=True).start()
    return await done


def alive(pid: int, within: float = 3.0) -> bool:
    """Whether `pid` still runs `within` seconds from now (a SIGKILL takes a moment to land)."""
    deadline = time.monotonic() + within
    while True:
        try:
            os.kill(pid, 0)
            running = Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
        except (ProcessLookupError, FileNotFoundError):
            return False
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.05)


def left_behind(marker: str, within: float = 3.0) -> list[int]:
    """The processes that carry `marker` `within` seconds from now (none, at once, if none)."""
    return processes_left_with(marker.encode(), within)


def kill_marked(marker: str) -> list[int]:
    """SIGKILL whatever carries `marker` (a fixture's finalizer: a failed test leaves nothing)."""
    found = processes_with(marker.encode())
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return found


def open_fds() -> dict[int, str]:
    """Our open file descriptors and what each one is (a pipe, a pidfd, a file ...)."""
    found = {}
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
    return found


def new_fds(before: dict[int, str]) -> dict[int, str]:
    """The file descriptors open now that were not in `before` (an `open_fds()`)."""
    return {fd: what for fd, what in open_fds().items() if before.get(fd) != what}

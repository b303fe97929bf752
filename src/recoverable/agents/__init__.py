"""Claude Code, Codex and Gemini CLI as subprocesses, with one event stream.

    from recoverable import agents

    async for event in agents.stream("Fix the failing test", cli="claude", timeout=600):
        ...                                   # TextDelta, ToolStart, ToolEnd, Error, ... Done
    result = await agents.run("Say hello", cli="auto")      # -> RunResult
    result = agents.run_sync("Say hello", cli="codex")          # no event loop, no asyncio
    for event in agents.stream_sync("Say hello", cli="gemini"): ...
    result = agents.replay("claude", stdout, stderr, exit_code=1)   # pure: saved output

A failed run is a `RunResult` with `success=False` and a classified `error` (the same codes
as the SDKs: a 429 inside Claude Code is `provider_rate_limited` with `source="claude"`),
never an exception; only a cancel of the awaiting task propagates (after the process group
is stopped).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import AsyncGenerator, Generator, Sequence
from typing import TYPE_CHECKING, Any

from . import _events
from ._cli_modules import CLI_NAMES, module_for
from ._discovery import CliInfo, choose, discover, find_executable
from ._events import *  # noqa: F403 -- the events and RunResult, listed once in _events.__all__
from ._events import Done, Event, RunResult
from ._options import RUN_KEEP_EVENTS, RunOptions
from ._parsing import CliModule
from ._process import environment
from ._replay import replay
from ._run_sync import run_process_sync

__all__ = [
    "CLI_NAMES",
    "CliInfo",
    "RunOptions",
    "discover",
    "replay",
    "run",
    "run_sync",
    "stream",
    "stream_sync",
]
__all__ += _events.__all__

if TYPE_CHECKING:
    import asyncio

    from .._cancel import CancelSignal

_OPTION_NAMES = frozenset(field.name for field in dataclasses.fields(RunOptions))


def _options(options: RunOptions | None, fields: dict[str, Any]) -> RunOptions:
    unknown = set(fields) - _OPTION_NAMES
    if unknown:
        raise TypeError(f"unknown run option(s): {', '.join(sorted(unknown))}")
    base = options if options is not None else RunOptions()
    return dataclasses.replace(base, **fields) if fields else base


def _prepare(
    prompt: str, cli: str | Sequence[str], options: RunOptions
) -> tuple[CliModule[Any], list[str]]:
    """The module and argv of a run of `cli` on `prompt`."""
    name, executable = _resolve(cli, options)
    module = module_for(name)
    return module, module.build_argv(executable, prompt, options)


def _keeping(options: RunOptions | None, fields: dict[str, Any]) -> RunOptions:
    """`run`'s options: unless told, its result keeps the last RUN_KEEP_EVENTS events."""
    settings = _options(options, fields)
    if settings.keep_events == "auto":
        return dataclasses.replace(settings, keep_events=RUN_KEEP_EVENTS)
    return settings


def _resolve(cli: str | Sequence[str], options: RunOptions) -> tuple[str, str]:
    """(cli name, executable): the given CLI, or the first usable one of an order."""
    if isinstance(cli, str) and cli != "auto":
        module_for(cli)
        executable = options.executable or find_executable(cli) or cli
        return cli, executable  # a missing binary surfaces as cli_not_found at spawn
    order = CLI_NAMES if cli == "auto" else tuple(cli)
    info = choose(order, environment(options) or os.environ)  # the env the CLI will get
    assert info.path is not None
    return info.name, options.executable or info.path


async def stream(
    prompt: str,
    cli: str | Sequence[str] = "auto",
    *,
    options: RunOptions | None = None,
    cancel: asyncio.Event | None = None,
    **fields: Any,
) -> AsyncGenerator[Event, None]:
    """Run a CLI on `prompt`; yield its events as they come; the last one is `Done`.

    `cli`: "claude", "codex", "gemini", "auto" (the first installed and authenticated) or an
    order of names. Options are `RunOptions` fields (model, cwd, env, timeout, ...). Setting
    `cancel` stops the run (SIGTERM to its group, then SIGKILL) and ends it `run_cancelled`.
    """
    settings = _options(options, fields)
    module, argv = _prepare(prompt, cli, settings)
    from ._run_async import run_process  # asyncio is imported only by the async API

    async with contextlib.aclosing(run_process(module, argv, settings, cancel=cancel)) as events:
        async for event in events:
            yield event


async def run(
    prompt: str,
    cli: str | Sequence[str] = "auto",
    *,
    options: RunOptions | None = None,
    cancel: asyncio.Event | None = None,
    **fields: Any,
) -> RunResult:
    """Run a CLI to the end; the `RunResult` (its `events`: the last `keep_events`, by
    default RUN_KEEP_EVENTS)."""
    settings = _keeping(options, fields)
    async with contextlib.aclosing(stream(prompt, cli, options=settings, cancel=cancel)) as events:
        async for event in events:
            if isinstance(event, Done):
                return event.result
    raise AssertionError("a run always ends with Done")  # pragma: no cover


def stream_sync(
    prompt: str,
    cli: str | Sequence[str] = "auto",
    *,
    options: RunOptions | None = None,
    cancel: CancelSignal | None = None,
    **fields: Any,
) -> Generator[Event, None, None]:
    """`stream` for synchronous code: the same events, no event loop, no asyncio.

    `cancel`: a `threading.Event` (anything with `is_set()`). Closing the iterator early stops
    the run's process group.
    """
    settings = _options(options, fields)
    module, argv = _prepare(prompt, cli, settings)
    with contextlib.closing(run_process_sync(module, argv, settings, cancel=cancel)) as events:
        yield from events


def run_sync(
    prompt: str,
    cli: str | Sequence[str] = "auto",
    *,
    options: RunOptions | None = None,
    cancel: CancelSignal | None = None,
    **fields: Any,
) -> RunResult:
    """`run` for synchronous code (any thread; no event loop needed)."""
    settings = _keeping(options, fields)
    module, argv = _prepare(prompt, cli, settings)
    runner = run_process_sync(module, argv, settings, cancel=cancel, holds_thread=True)
    with contextlib.closing(runner) as events:
        for event in events:
            if isinstance(event, Done):
                return event.result
    raise AssertionError("a run always ends with Done")  # pragma: no cover

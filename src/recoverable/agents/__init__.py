"""Claude Code, Codex and Gemini CLI as subprocesses, with one event stream.

    from recoverable import agents

    async for event in agents.stream("Fix the failing test", cli="claude", timeout=600):
        ...                                   # TextDelta, ToolStart, ToolEnd, ErrorEvent, ... Done
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
import os
from collections.abc import AsyncGenerator, Generator, Sequence
from typing import TYPE_CHECKING, Any

from .._core import events as _events
from .._core.events import *  # noqa: F403 -- the events and RunResult, listed once in _events.__all__
from .._core.events import Done, Event, RunResult
from .._core.exports import Face
from .._core.values import field_names, replace
from ._cli_modules import CLI_NAMES, module_for
from ._cooldown_gate import CliCooldowns, acli_gate, cli_gate
from ._executables import find_executable
from ._fallback import FallbackGate
from ._options import RUN_KEEP_EVENTS, RunOptions, RunRefused
from ._parsing import CliModule
from ._process import environment
from ._replay import replay
from ._run_sync import run_process_sync

__all__ = [
    "CLI_NAMES",
    "CliInfo",
    "RunOptions",
    "RunRefused",
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

    from .._core.cancel import CancelSignal
    from .._core.detail import ErrorDetail
    from ._discovery import CliInfo, discover

if TYPE_CHECKING:  # the name that moved, typed for the release that still has it
    from .._core.events import Error as Error

# `discover` and `CliInfo` (`doctor`'s) load on first use: a run does not need them.
_FACE = Face(
    __name__,
    {"CliInfo": "recoverable.agents._discovery", "discover": "recoverable.agents._discovery"},
    moved={"Error": "recoverable.agents.ErrorEvent"},
)


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()


_OPTION_NAMES = frozenset(field_names(RunOptions))


def _options(options: RunOptions | None, fields: dict[str, Any]) -> RunOptions:
    unknown = set(fields) - _OPTION_NAMES
    if unknown:
        raise TypeError(f"unknown run option(s): {', '.join(sorted(unknown))}")
    base = options if options is not None else RunOptions()
    return replace(base, **fields) if fields else base


def _keeping(options: RunOptions | None, fields: dict[str, Any]) -> RunOptions:
    """`run`'s options: unless told, its result keeps the last RUN_KEEP_EVENTS events."""
    settings = _options(options, fields)
    if settings.keep_events == "auto":
        return replace(settings, keep_events=RUN_KEEP_EVENTS)
    return settings


def _plan(
    prompt: str, cli: str | Sequence[str], options: RunOptions
) -> list[tuple[CliModule[Any], list[str]]]:
    """The module and argv of each CLI the run may use, in order: the one given, the first
    usable one for "auto", or every installed one of an order (the run falls back along
    them). Every argv is built before anything runs: an option a later CLI refuses is a
    ValueError now, not after the first CLI failed; so is a working directory that is not
    there (`RunRefused`, `invalid_input`: the caller's mistake, not a missing CLI)."""
    cwd = options.cwd
    if cwd is not None and not os.path.isdir(cwd):
        raise RunRefused(
            "invalid_input",
            f"the working directory {cwd!r} does not exist or is not a directory",
            fix_required=f"Pass an existing directory as cwd (not {cwd!r})",
            details={"cwd": cwd},
        )
    return [
        (module_for(name), module_for(name).build_argv(executable, prompt, options))
        for name, executable in _executables(cli, options)
    ]


def _executables(cli: str | Sequence[str], options: RunOptions) -> list[tuple[str, str]]:
    """(cli name, executable) of each CLI the run may use, in order."""
    if isinstance(cli, str) and cli != "auto":
        module_for(cli)
        executable = options.executable or find_executable(cli) or cli
        return [(cli, executable)]  # a missing binary surfaces as cli_not_found at spawn
    if options.executable is not None:  # which CLI's parser would read it? never a guess
        raise RunRefused(
            "invalid_input",
            f"an executable ({options.executable!r}) needs the CLI it is named, not cli={cli!r}",
            fix_required="Name the CLI the executable is: cli='claude', 'codex' or 'gemini'",
        )
    from ._discovery import choose, usable_in_order  # pathlib and more: not for a named CLI

    env = environment(options) or os.environ  # the environment the CLI will get
    if cli == "auto":
        info = choose(CLI_NAMES, env)
        assert info.path is not None
        return [(info.name, info.path)]
    order = list(cli)
    for name in order:
        module_for(name)  # an unknown name is a ValueError, whether installed CLIs precede it
    return [(info.name, info.path or info.name) for info in usable_in_order(order, env)]


async def stream(
    prompt: str,
    cli: str | Sequence[str] = "auto",
    *,
    options: RunOptions | None = None,
    cancel: asyncio.Event | None = None,
    cooldowns: CliCooldowns | None = None,
    **fields: Any,
) -> AsyncGenerator[Event, None]:
    """Run a CLI on `prompt`; yield its events as they come; the last one is `Done`.

    `cli`: "claude", "codex", "gemini", "auto" (the first installed and not logged out) or
    an order of names to fall back along: a failure whose code says another provider could
    succeed, before any tool started, moves to the next installed CLI (its deciding error
    comes as a warning with `details["fallback_to"]`); the result's `cli` and `failures` say
    who answered and what failed before. Options are `RunOptions` fields (model, cwd, env,
    timeout, ...), the same for every CLI. Setting `cancel` stops the run (SIGTERM to its
    group, then SIGKILL) and ends it `run_cancelled`. `cooldowns`: shared quiet times
    consulted before each CLI starts and told how it ended (a `Cooldowns`, a mapping of CLI
    name to `Cooldowns` or a function of the CLI name; see `agents._cooldown_gate`): a key
    quiet for longer than its `max_wait_ms` fails that CLI at once with `retry_after_ms`,
    and the run moves to the next CLI.
    """
    settings = _options(options, fields)
    plan = _plan(prompt, cli, settings)
    from ._run_async import run_process  # asyncio is imported only by the async API

    failures: list[ErrorDetail] = []
    for index, (module, argv) in enumerate(plan):
        gate = FallbackGate(failures, plan[index + 1][0].NAME if index + 1 < len(plan) else None)
        turn = await acli_gate(cooldowns, module.NAME, settings.model)
        if turn.refused is not None:
            for event in turn.refusal_events(module.NAME):
                for out in gate.feed(event):
                    yield out
        else:
            if turn.wait_s > 0:
                await _wait_async(turn.wait_s, cancel)
            runner = run_process(module, argv, settings, cancel=cancel)
            async with contextlib.aclosing(runner) as events:
                async for event in events:
                    await turn.arecord(event)
                    for out in gate.feed(event):
                        yield out
        if gate.finished:
            return


async def run(
    prompt: str,
    cli: str | Sequence[str] = "auto",
    *,
    options: RunOptions | None = None,
    cancel: asyncio.Event | None = None,
    cooldowns: CliCooldowns | None = None,
    **fields: Any,
) -> RunResult:
    """Run a CLI to the end; the `RunResult` (its `events`: the last `keep_events`, by
    default RUN_KEEP_EVENTS). `cooldowns`: as `stream`'s."""
    settings = _keeping(options, fields)
    runner = stream(prompt, cli, options=settings, cancel=cancel, cooldowns=cooldowns)
    async with contextlib.aclosing(runner) as events:
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
    cooldowns: CliCooldowns | None = None,
    **fields: Any,
) -> Generator[Event, None, None]:
    """`stream` for synchronous code: the same events, no event loop, no asyncio.

    `cancel`: a `threading.Event` (anything with `is_set()`). Closing the iterator early stops
    the run's process group. `cooldowns`: as `stream`'s.
    """
    settings = _options(options, fields)
    plan = _plan(prompt, cli, settings)
    yield from _sync_events(plan, settings, cancel, cooldowns, holds_thread=False)


def run_sync(
    prompt: str,
    cli: str | Sequence[str] = "auto",
    *,
    options: RunOptions | None = None,
    cancel: CancelSignal | None = None,
    cooldowns: CliCooldowns | None = None,
    **fields: Any,
) -> RunResult:
    """`run` for synchronous code (any thread; no event loop needed)."""
    settings = _keeping(options, fields)
    plan = _plan(prompt, cli, settings)
    events = _sync_events(plan, settings, cancel, cooldowns, holds_thread=True)
    with contextlib.closing(events):
        for event in events:
            if isinstance(event, Done):
                return event.result
    raise AssertionError("a run always ends with Done")  # pragma: no cover


def _sync_events(
    plan: list[tuple[CliModule[Any], list[str]]],
    settings: RunOptions,
    cancel: CancelSignal | None,
    cooldowns: CliCooldowns | None,
    *,
    holds_thread: bool,
) -> Generator[Event, None, None]:
    """The events of a synchronous run, along the CLIs of its plan (`stream`'s fallback)."""
    failures: list[ErrorDetail] = []
    for index, (module, argv) in enumerate(plan):
        gate = FallbackGate(failures, plan[index + 1][0].NAME if index + 1 < len(plan) else None)
        turn = cli_gate(cooldowns, module.NAME, settings.model)
        if turn.refused is not None:
            for event in turn.refusal_events(module.NAME):
                yield from gate.feed(event)
        else:
            if turn.wait_s > 0:
                _wait_sync(turn.wait_s, cancel)
            runner = run_process_sync(
                module, argv, settings, cancel=cancel, holds_thread=holds_thread
            )
            with contextlib.closing(runner) as events:
                for event in events:
                    turn.record(event)
                    yield from gate.feed(event)
        if gate.finished:
            return


def _wait_sync(seconds: float, cancel: CancelSignal | None) -> None:
    """Wait out a quiet key before a CLI starts; a set `cancel` ends the wait (the run then
    ends `run_cancelled` as any cancelled run does): the retry loop's own wait."""
    from .._retry.waits import wait

    wait(seconds, cancel)


async def _wait_async(seconds: float, cancel: asyncio.Event | None) -> None:
    """`_wait_sync` for the async runs."""
    from .._retry.waits import await_wait

    await await_wait(seconds, cancel)

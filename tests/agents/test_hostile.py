"""Hostile CLIs: whatever the CLI does, a run returns by its deadline and leaves nothing.

Each case is a scripted fake CLI (a Python script in tmp_path): one that closes stdout and
keeps running, a grandchild that holds stdout or stderr open (also one that left the group
with `setsid`, also one that keeps writing), a CLI that ignores SIGTERM, one that floods
stderr, one that writes nothing, one that exits 0 with no output. The cases run at once
through each runner. Each asserts its exact outcome, that it returned by its deadline (plus
the kill grace, and a slack only a hang exceeds: not a speed assertion), that no process of
it is left (each carries its own marker in its environment) and, for the whole batch, that no
file descriptor of ours is.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from recoverable import agents
from recoverable.agents import RunResult
from recoverable.agents._process import DRAIN_S, GRACE_S
from recoverable.agents._replay import STDERR_TAIL_CHARS

from ..support.runner import (
    CLAUDE_TEXT,
    MARKER,
    alive,
    executable,
    in_thread,
    kill_marked,
    left_behind,
    new_fds,
    open_fds,
    run,
    script,
)

SLACK_S = 5.0  # Python starts on a loaded machine: a hang exceeds it, a slow run does not
HUNG_S = 20.0  # then the test stops waiting

# A grandchild that sleeps holding the CLI's stdout and stderr (inherited).
SLEEPER = '[sys.executable, "-c", "import time; time.sleep(1000)"]'
# One that keeps printing text lines, in a session of its own.
WRITER = (
    '[sys.executable, "-c", "import json, time\\nwhile True:\\n'
    '    print(json.dumps({\\"type\\": \\"text\\", \\"text\\": \\".\\"}), flush=True)\\n'
    '    time.sleep(0.05)"]'
)


class Case(NamedTuple):
    body: str
    """The fake CLI's script."""
    options: dict[str, Any]
    """Its RunOptions."""
    within: float
    """The seconds it must return by (SLACK_S added)."""
    expected: dict[str, Any]
    """What its result must show (keys of `_outcome`)."""


CASES = {
    "closes stdout, keeps running": Case("""
        say(type="text", text="bye")
        os.close(1)
        time.sleep(1000)
    """, {"timeout": 1.0, "idle_timeout": None}, 1.0 + GRACE_S,
        {"code": "run_timeout", "deadline": "total", "text": "bye", "signal": signal.SIGTERM}),
    "closes stdout and stderr, keeps running": Case("""
        os.close(1)
        os.close(2)
        time.sleep(1000)
    """, {"idle_timeout": 1.0}, 1.0 + GRACE_S, {"code": "run_timeout", "deadline": "idle"}),
    "a grandchild holds the pipes after the exit": Case(f"""
        subprocess.Popen({SLEEPER})
        say(type="text", text="done")
        say(type="done")
    """, {"timeout": 60.0}, DRAIN_S, {"success": True, "text": "done", "exit_code": 0}),
    "a setsid grandchild holds the pipes after the exit": Case(f"""
        subprocess.Popen({SLEEPER}, start_new_session=True)
        say(type="done")
    """, {"timeout": 60.0}, DRAIN_S, {"success": True, "exit_code": 0}),
    "a setsid grandchild holds stderr after the exit": Case(f"""
        subprocess.Popen({SLEEPER}, start_new_session=True, stdout=subprocess.DEVNULL)
        say(type="done")
    """, {"timeout": 60.0}, DRAIN_S, {"success": True, "exit_code": 0}),
    "a setsid grandchild writes on after the exit": Case(f"""
        subprocess.Popen({WRITER}, start_new_session=True)
        time.sleep(0.3)
        say(type="done")
    """, {"timeout": 60.0}, 0.3 + DRAIN_S, {"success": True, "exit_code": 0, "dots": True}),
    "a setsid grandchild holds the pipes of a hung CLI": Case(f"""
        subprocess.Popen({SLEEPER}, start_new_session=True)
        say(type="text", text="working")
        time.sleep(1000)
    """, {"timeout": 1.0}, 1.0 + GRACE_S, {"code": "run_timeout", "deadline": "total"}),
    "ignores SIGTERM": Case("""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        say(type="text", text="deaf")
        time.sleep(1000)
    """, {"timeout": 1.0}, 1.0 + GRACE_S,
        {"code": "run_timeout", "text": "deaf", "signal": signal.SIGKILL, "exit_code": None}),
    "ignores SIGTERM with a setsid grandchild, cancelled": Case(f"""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        subprocess.Popen({SLEEPER}, start_new_session=True)
        say(type="text", text="deaf")
        time.sleep(1000)
    """, {"cancel_after": 0.5}, 0.5 + GRACE_S,
        {"code": "run_cancelled", "signal": signal.SIGKILL}),
    "floods stderr": Case("""
        line = "noise " * 100 + "\\n"
        while True:
            sys.stderr.write(line)
    """, {"idle_timeout": 1.0}, 1.0 + GRACE_S,
        {"code": "run_timeout", "deadline": "idle", "stderr_chars": STDERR_TAIL_CHARS}),
    "writes nothing": Case("""
        time.sleep(1000)
    """, {"idle_timeout": 1.0}, 1.0 + GRACE_S,
        {"code": "run_timeout", "deadline": "idle", "text": ""}),
    "exits 0 with no output": Case(
        "", {"timeout": 60.0}, 0.0, {"code": "cli_crashed", "exit_code": 0}
    ),
}  # fmt: skip


def _outcome(result: RunResult) -> dict[str, Any]:
    error = result.error
    return {
        "success": result.success,
        "code": error.code if error is not None else None,
        "deadline": error.details.get("deadline") if error is not None else None,
        "text": result.text,
        "dots": set(result.text) == {"."},
        "signal": result.signal,
        "exit_code": result.exit_code,
        "stderr_chars": len(result.stderr_tail),
    }


@pytest.fixture
def markers() -> Iterator[dict[str, str]]:
    """A marker per case; whatever still carries one at the end is killed."""
    values = {name: f"hostile-{uuid.uuid4().hex}" for name in CASES}
    yield values
    for value in values.values():
        kill_marked(value)


async def _case(driver: str, tmp_path: Path, name: str, marker: str) -> list[str]:
    """Run one case; what went wrong with it (nothing: [])."""
    case = CASES[name]
    folder = tmp_path / name.replace(" ", "-").replace(",", "")
    folder.mkdir()
    started = time.monotonic()
    argv = script(folder, case.body)
    try:  # a hang fails the case (a sync run's thread is left to it)
        result = await asyncio.wait_for(
            run(driver, argv, env={MARKER: marker}, **case.options), case.within + HUNG_S
        )
    except TimeoutError:
        return [f"hung: no result after {case.within + HUNG_S} s"]
    elapsed = time.monotonic() - started
    outcome = _outcome(result)
    problems = []
    if {key: outcome[key] for key in case.expected} != case.expected:
        problems.append(f"outcome {outcome}")
    if elapsed >= case.within + SLACK_S:
        problems.append(f"returned after {elapsed:.1f} s")
    if left := left_behind(marker):
        problems.append(f"left processes {left}")
    return problems


@pytest.mark.parametrize("driver", ["async", "sync"])
async def test_every_hostile_cli_returns_by_its_deadline_and_leaves_nothing(
    driver: str, tmp_path: Path, markers: dict[str, str]
) -> None:
    fds = open_fds()
    found = await asyncio.gather(*(_case(driver, tmp_path, name, markers[name]) for name in CASES))
    assert {name: problems for name, problems in zip(CASES, found, strict=True) if problems} == {}
    assert new_fds(fds) == {}


async def _entry(entry: str, options: agents.RunOptions) -> RunResult:
    if entry == "run":
        return await agents.run("hi", "claude", options=options)
    if entry == "stream":
        events = [event async for event in agents.stream("hi", "claude", options=options)]
    elif entry == "run_sync":
        return await in_thread(lambda: agents.run_sync("hi", "claude", options=options))
    else:
        events = await in_thread(lambda: list(agents.stream_sync("hi", "claude", options=options)))
    assert isinstance(events[-1], agents.Done)
    return events[-1].result


async def test_every_entry_point_returns_by_its_deadline(tmp_path: Path) -> None:
    """The public API with `cli="claude"`, on a CLI that exits 0 with no output (no terminal
    event: provider_bad_response) and leaves a setsid grandchild holding stdout."""
    binary = executable(tmp_path, f"subprocess.Popen({SLEEPER}, start_new_session=True)\n")
    entries = ("run", "stream", "run_sync", "stream_sync")
    marker = f"hostile-{uuid.uuid4().hex}"
    options = agents.RunOptions(executable=binary, env={MARKER: marker}, timeout=30.0)
    started = time.monotonic()
    try:
        fds = open_fds()
        results = await asyncio.wait_for(
            asyncio.gather(*(_entry(entry, options) for entry in entries)), HUNG_S
        )
        assert time.monotonic() - started < DRAIN_S + SLACK_S
        assert [
            (result.error.code if result.error else None, result.exit_code) for result in results
        ] == [("provider_bad_response", 0)] * len(entries)
        assert left_behind(marker) == []
        assert new_fds(fds) == {}
    finally:
        kill_marked(marker)


# --- a caller that was killed -------------------------------------------------------------------

CALLER = """
import asyncio, sys, threading
from recoverable import agents
how, executable = sys.argv[1], sys.argv[2]
if how == "run_sync":
    agents.run_sync("hi", "claude", executable=executable)
elif how == "run_sync in a worker thread":
    worker = threading.Thread(target=agents.run_sync, args=("hi", "claude"),
                              kwargs={"executable": executable})
    worker.start()
    worker.join()
elif how == "stream_sync":
    for event in agents.stream_sync("hi", "claude", executable=executable):
        pass
else:
    asyncio.run(agents.run("hi", "claude", executable=executable))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
@pytest.mark.parametrize("how", ["run_sync", "run_sync in a worker thread", "stream_sync", "run"])
def test_a_cli_does_not_outlive_a_caller_that_was_killed(tmp_path: Path, how: str) -> None:
    marker = f"hostile-{uuid.uuid4().hex}"
    pid_file = tmp_path / "cli.pid"
    binary = executable(tmp_path, f"""
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        time.sleep(1000)
    """)  # fmt: skip
    caller = subprocess.Popen(
        [sys.executable, "-c", CALLER, how, binary], env={**os.environ, MARKER: marker}
    )
    try:
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the CLI never started"
            time.sleep(0.05)
        cli = int(pid_file.read_text())
        caller.kill()  # SIGKILL: no finally, no cleanup of ours runs
        caller.wait()
        assert not alive(cli)
    finally:
        caller.kill()
        caller.wait()
        kill_marked(marker)


def test_a_stream_sync_handed_to_another_thread_runs_on(tmp_path: Path) -> None:
    """The thread that started the CLI ends; the CLI (no parent-death signal: a worker thread
    started it) goes on for the thread that consumes the rest."""
    lines = CLAUDE_TEXT.splitlines()
    binary = executable(tmp_path, f"""
        LINES = {lines!r}
        print(LINES[0], flush=True)
        time.sleep(1)
        print(*LINES[1:], sep="\\n")
    """)  # fmt: skip
    events = agents.stream_sync("hi", "claude", executable=binary, timeout=30.0)
    starter = threading.Thread(target=next, args=(events,))
    starter.start()
    starter.join()
    rest = list(events)
    assert isinstance(rest[-1], agents.Done)
    assert (rest[-1].result.success, rest[-1].result.text) == (True, "Hello from FakeProvider.")

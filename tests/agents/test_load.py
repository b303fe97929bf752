"""The runners under load: many runs at once, and cancels at any moment.

Fifty concurrent `agents.run` of the real CLIs against one FakeProvider serving a mix of
faults: each run gets the code of the fault its own request was served (a marker in its
prompt tells the requests apart), and nothing is left (no process holding a run's home, no
file descriptor of ours). A hundred runs of scripted fake CLIs (one that streams, one with a
grandchild, one with a setsid grandchild holding the pipes, one that ignores SIGTERM)
cancelled at random moments, through every way a caller stops a run: nothing is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import signal
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from recoverable import agents
from recoverable.agents import Done, RunOptions
from recoverable.agents._run_async import run_process
from recoverable.agents._run_sync import run_process_sync
from recoverable.testing import FakeProvider, Fault, cli_setup

from ..support.cli import FAILURES, cli_bin_dir, find_cli, processes_left_with, processes_with
from ..support.runner import MARKER, MODULE, in_thread, kill_marked, left_behind, new_fds, open_fds
from ..support.runner import script as write_script

# --- fifty concurrent runs of the real CLIs -----------------------------------------------------

RUNS = {"claude": 30, "codex": 16, "gemini": 4}  # gemini's start costs the most
FAULTS = [
    Fault.unauthorized(),
    Fault.rate_limited(retry_after=1),
    Fault.insufficient_quota(),
    Fault.overloaded(),
    Fault.server_error(),
    Fault.context_too_long(),
    Fault.drop(),
    Fault.cut_stream(),
]
QUEUED = 40  # faults queued for the first requests: the later ones get the reply
_RUN_MARK = re.compile(rb"\(run (\d+)\)")


async def _real_run(cli: str, n: int, fake: FakeProvider, root: Path) -> agents.RunResult:
    home, work = root / f"home-{n}", root / f"work-{n}"
    work.mkdir()
    setup = cli_setup(cli, fake, home, max_retries=0)  # type: ignore[arg-type]
    return await agents.run(
        f"Say hello. (run {n})", cli, executable=find_cli(cli, cli_bin_dir()),
        env=setup.environ(), inherit_env=False, extra_args=setup.args, cwd=str(work),
        timeout=120.0,
    )  # fmt: skip


def _expected(cli: str, faults: list[str | None]) -> tuple[str | None, bool]:
    """(code, retryable) of a run whose requests were served `faults` (None: the reply): the
    last one decides (after a cut stream Claude asks again, without streaming)."""
    assert faults, f"a {cli} run made no request"
    if faults[-1] is None:
        return None, False
    codes = {fault.name: (code, retryable) for fault, code, retryable in FAILURES[cli]}
    return codes[faults[-1]]


async def test_fifty_concurrent_runs_of_the_real_clis_each_get_their_fault(
    tmp_path: Path,
) -> None:
    clis = [cli for cli, count in RUNS.items() for _ in range(count)]
    random.Random(7).shuffle(clis)
    fds = open_fds()
    try:
        with FakeProvider() as fake:
            for n in range(QUEUED):
                fake.fail(FAULTS[n % len(FAULTS)], times=1)
            results = await asyncio.gather(
                *(_real_run(cli, n, fake, tmp_path) for n, cli in enumerate(clis))
            )
            served: dict[int, list[str | None]] = {n: [] for n in range(len(clis))}
            for request in fake.requests:
                if mark := _RUN_MARK.search(request.body):
                    served[int(mark[1])].append(request.fault)
        got = {
            n: (result.error.code, result.error.retryable) if result.error else (None, False)
            for n, result in enumerate(results)
        }
        assert got == {n: _expected(clis[n], served[n]) for n in range(len(clis))}
        assert {result.text for result in results if result.success} == {"Hello from FakeProvider."}
        names = [fault or "reply" for faults in served.values() for fault in faults]
        queued = [FAULTS[n % len(FAULTS)].name for n in range(QUEUED)]
        assert sorted(names) == sorted(queued + ["reply"] * (len(names) - QUEUED))
        assert processes_left_with(str(tmp_path).encode()) == []
        assert new_fds(fds) == {}
    finally:
        for pid in processes_with(str(tmp_path).encode()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# --- a hundred cancels at random moments --------------------------------------------------------

SLEEPER = '[sys.executable, "-c", "import time; time.sleep(1000)"]'
CLIS = {
    "streams": """
        for n in range(1000):
            say(type="text", text=str(n))
            time.sleep(0.01)
    """,
    "has a grandchild": f"""
        subprocess.Popen({SLEEPER})
        say(type="tool_start", id="t1")
        time.sleep(1000)
    """,
    "has a setsid grandchild": f"""
        subprocess.Popen({SLEEPER}, start_new_session=True)
        say(type="text", text="working")
        time.sleep(1000)
    """,
    "ignores SIGTERM": """
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        say(type="text", text="deaf")
        time.sleep(1000)
    """,
}
HOW = ["task.cancel()", "cancel event (async)", "cancel event (sync)", "close() (sync)"]
CANCELS = 100
AT_ONCE = 25


async def _cancelled_run(how: str, argv: list[str], after: float, marker: str) -> str:
    """One run stopped `after` seconds in, the way `how` says; what it ended with."""
    options = RunOptions(env={MARKER: marker}, keep_events=None)
    if how == "task.cancel()":
        task = asyncio.ensure_future(_drain_async(run_process(MODULE, argv, options)))  # type: ignore[arg-type]
        await asyncio.sleep(after)
        task.cancel()
        try:
            return await task
        except asyncio.CancelledError:
            return "CancelledError"
    if how == "cancel event (async)":
        event = asyncio.Event()
        asyncio.get_running_loop().call_later(after, event.set)
        return await _drain_async(run_process(MODULE, argv, options, cancel=event))  # type: ignore[arg-type]
    flag = threading.Event()
    runner = run_process_sync(MODULE, argv, options, cancel=flag)  # type: ignore[arg-type]
    if how == "cancel event (sync)":
        asyncio.get_running_loop().call_later(after, flag.set)
        return await in_thread(lambda: _drain_sync(runner))
    # A sync iterator is closed by its consumer, between two events: after the first one,
    # or (of the CLI that streams) after as many as it has sent by then.
    count = 1 + int(after * 100) if argv[1].endswith("0.py") else 1
    return await in_thread(lambda: _close_after(runner, count))


async def _drain_async(events: Any) -> str:
    async for event in events:
        if isinstance(event, Done):
            return event.result.error.code if event.result.error else "success"
    return "no Done"


def _drain_sync(events: Any) -> str:
    for event in events:
        if isinstance(event, Done):
            return event.result.error.code if event.result.error else "success"
    return "no Done"


def _close_after(events: Any, count: int) -> str:
    """Take `count` events, then close the iterator."""
    for taken, _ in enumerate(events, 1):
        if taken >= count:
            break
    events.close()
    return "closed"


EXPECTED = {
    "task.cancel()": "CancelledError",
    "cancel event (async)": "run_cancelled",
    "cancel event (sync)": "run_cancelled",
    "close() (sync)": "closed",
}


@pytest.fixture
def marker() -> Any:
    value = f"cancel-{uuid.uuid4().hex}"
    yield value
    kill_marked(value)


async def test_a_hundred_cancels_at_random_moments_leave_nothing(
    tmp_path: Path, marker: str
) -> None:
    rng = random.Random(1234)
    scripts = {name: write_script(tmp_path, body, name=f"{n}.py")
               for n, (name, body) in enumerate(CLIS.items())}  # fmt: skip
    plan = [
        (rng.choice(HOW), rng.choice(list(CLIS)), rng.uniform(0.0, 0.6)) for _ in range(CANCELS)
    ]
    fds = open_fds()
    outcomes = []
    for start in range(0, CANCELS, AT_ONCE):
        batch = plan[start : start + AT_ONCE]
        outcomes += await asyncio.gather(
            *(_cancelled_run(how, scripts[cli], after, marker) for how, cli, after in batch)
        )
    wrong = {
        f"{n}: {how} of {cli!r} after {after:.2f} s": outcome
        for n, ((how, cli, after), outcome) in enumerate(zip(plan, outcomes, strict=True))
        if outcome != EXPECTED[how]
    }
    assert wrong == {}
    assert left_behind(marker) == []
    assert new_fds(fds) == {}

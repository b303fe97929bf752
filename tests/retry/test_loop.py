"""One retry loop: `Retrying` carries out what its decider says (the policy's by default, the
ladder's for `recover`), every wait is `_retry.waits`' (cancel, testing switch), and a program
loads only what it runs."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

import recoverable as rc
from recoverable._retry.waits import await_wait, wait


class Recorded:
    """A decider that waits `waits` in turn, then stops with `stop`; what it was given."""

    def __init__(self, *waits: float, stop: Exception) -> None:
        self.waits, self.stop = list(waits), stop
        self.seen: list[tuple[int, str | None, bool]] = []

    def __call__(
        self,
        retrying: rc.Retrying,
        exc: BaseException,
        attempt: int,
        started: float,
        /,
        *,
        detail: rc.ErrorDetail | None,
        gate_waits: bool,
    ) -> float:
        self.seen.append((attempt, None if detail is None else detail.code, gate_waits))
        if self.waits:
            return self.waits.pop(0)
        raise self.stop from exc


def test_the_loop_carries_out_its_deciders_waits_and_stop() -> None:
    sleeps: list[float] = []
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        raise ConnectionResetError

    decider = Recorded(0.25, 0.5, stop=ValueError("the decider's own stop"))
    retrying = rc.retry(sleep=sleeps.append, decide=decider, attempts=1)
    with pytest.raises(ValueError, match="the decider's own stop"):
        retrying.call(call)
    # attempts=1 would stop the policy's loop at once: the decider, not the policy, decides
    assert (len(calls), sleeps) == (3, [0.25, 0.5])
    assert decider.seen == [(1, None, False), (2, None, False), (3, None, False)]


async def test_every_async_form_runs_the_same_decider() -> None:
    slept: list[float] = []

    async def asleep(seconds: float) -> None:
        slept.append(seconds)

    async def call() -> str:
        raise ConnectionResetError

    decider = Recorded(0.1, stop=ValueError("stop"))
    with pytest.raises(ValueError, match="stop"):
        await rc.retry(asleep=asleep, decide=decider).acall(call)
    assert slept == [0.1]
    decider = Recorded(0.2, stop=ValueError("stop"))
    with pytest.raises(ValueError, match="stop"):
        await _block(rc.retry(asleep=asleep, decide=decider))
    assert slept == [0.1, 0.2]


async def _block(retrying: rc.Retrying) -> None:
    async for attempt in retrying:
        with attempt:
            raise ConnectionResetError


def test_with_cooldowns_the_decider_reads_the_gates_detail() -> None:
    decider = Recorded(stop=ValueError("stop"))
    cooldowns = rc.fleet.Cooldowns.memory().key(source="loop-test")
    with pytest.raises(ValueError, match="stop"):
        rc.retry(decide=decider, cooldowns=cooldowns).call(_refused)
    assert decider.seen == [(1, "network_error", False)]  # classified once, by the gate


def test_an_open_gate_makes_no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr("recoverable._retry.gate.wait", lambda s, *_: waits.append(s))
    slept: list[float] = []
    cooldowns = rc.fleet.Cooldowns.memory().key(source="open-gate")
    run = rc.retry(cooldowns=cooldowns, sleep=slept.append)
    assert [run.call(lambda: "ok") for _ in range(3)] == ["ok"] * 3
    assert (waits, slept) == ([], [])


async def test_an_open_gate_builds_no_async_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def recorded(seconds: float, *_: object) -> None:
        waits.append(seconds)

    monkeypatch.setattr("recoverable._retry.gate.await_wait", recorded)
    cooldowns = rc.fleet.Cooldowns.memory().key(source="open-gate-async")

    async def ok() -> str:
        return "ok"

    assert await rc.retry(cooldowns=cooldowns).acall(ok) == "ok"
    assert waits == []


def test_a_quiet_gate_still_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    key = rc.fleet.Cooldowns.memory().key(source="quiet-gate")
    error = rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=1500)
    answers: list[object] = [error, "ok"]

    def call() -> object:
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    assert rc.retry(cooldowns=key, sleep=slept.append, rng=lambda: 1.0).call(call) == "ok"
    assert len(slept) == 1 and 1.4 < slept[0] <= 1.5  # the key's quiet time, by the gate


def _refused() -> str:
    raise ConnectionRefusedError(111, "refused")


def test_the_ladders_retry_waits_in_the_loop_and_obeys_the_testing_switch() -> None:
    errors = [rc.RecoverableError("rate_limited", "slow", retry_after_ms=40)] * 2

    def call() -> str:
        if errors:
            raise errors.pop()
        return "done"

    started = time.monotonic()
    assert rc.tools.recover(call).attempts == 3
    assert time.monotonic() - started >= 0.08  # two real waits of 40 ms
    errors[:] = [rc.RecoverableError("rate_limited", "slow", retry_after_ms=600_000 // 11)] * 2
    rc.testing.set_testing(True)
    try:
        started = time.monotonic()
        recovery = rc.tools.recover(call)
    finally:
        rc.testing.set_testing(False)
    assert (recovery.ok, recovery.attempts) == (True, 3)
    assert time.monotonic() - started < 30  # 54.5 s twice, not waited


@pytest.mark.parametrize("seconds", [600.0, 0.0, -1.0])
def test_the_testing_switch_turns_every_wait_off(seconds: float) -> None:
    slept: list[float] = []
    rc.testing.set_testing(True)
    try:
        wait(seconds, None, slept.append)
        asyncio.run(await_wait(seconds, None, _recording(slept)))
    finally:
        rc.testing.set_testing(False)
    assert slept == []


def _recording(slept: list[float]) -> Any:
    async def asleep(seconds: float) -> None:
        slept.append(seconds)

    return asleep


class Flag:
    """A cancel with `is_set()` only: nothing to wait on, so the wait looks at it."""

    def __init__(self) -> None:
        self.flag = False

    def is_set(self) -> bool:
        return self.flag


def test_a_sync_wait_ends_when_a_cancel_without_wait_is_set() -> None:
    cancel = Flag()
    threading.Timer(0.05, lambda: setattr(cancel, "flag", True)).start()
    started = time.monotonic()
    wait(600, cancel)
    assert time.monotonic() - started < 60


def test_a_sync_retry_wakes_on_a_cancel_without_wait() -> None:
    cancel = Flag()
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        threading.Timer(0.05, lambda: setattr(cancel, "flag", True)).start()
        raise ConnectionResetError

    with pytest.raises(rc.RecoverableError) as info:
        rc.retry(cancel=cancel, initial_delay=600, jitter=False).call(call)  # 600 s unless woken
    assert (info.value.detail.code, len(calls)) == ("run_cancelled", 1)


async def test_an_async_wait_ends_on_either_kind_of_cancel() -> None:
    event = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, event.set)
    await asyncio.wait_for(await_wait(600, event), 60)
    flag = Flag()
    asyncio.get_running_loop().call_later(0.05, setattr, flag, "flag", True)
    await asyncio.wait_for(await_wait(600, flag), 60)


def _fresh(code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


def test_a_ladder_that_succeeds_loads_no_loop_and_no_asyncio() -> None:
    _fresh(
        "import sys\n"
        "import recoverable as rc\n"
        "rc.testing.set_testing(True)\n"
        "assert rc.tools.recover(lambda: 1).ok\n"
        "assert 'recoverable._retry.loop' not in sys.modules\n"
        "errors = [ConnectionResetError()]\n"
        "def call():\n"
        "    if errors:\n"
        "        raise errors.pop()\n"
        "    return 1\n"
        "assert rc.tools.recover(call).attempts == 2\n"
        "assert 'recoverable._retry.loop' in sys.modules\n"  # the first failure loads it
        "assert 'asyncio' not in sys.modules, 'a sync retry loaded asyncio'\n"
    )


def test_a_sync_retry_loads_no_asyncio() -> None:
    _fresh(
        "import sys\n"
        "import recoverable as rc\n"
        "rc.testing.set_testing(True)\n"
        "errors = [ConnectionResetError()]\n"
        "@rc.retry\n"
        "def call():\n"
        "    if errors:\n"
        "        raise errors.pop()\n"
        "    return 1\n"
        "assert call() == 1 and [a for a in rc.retry(attempts=1)]\n"
        "from recoverable._retry.waits import check_task_cancel\n"
        "check_task_cancel(1)\n"  # no asyncio, so no asyncio task to look at
        "assert 'asyncio' not in sys.modules, 'a sync retry loaded asyncio'\n"
    )

"""DBOS on SQLite: a step calls FakeProvider through the real openai client (its own retries
off) under `rdb.step`; one process runs the workflows, a fresh process reads the stored
outcomes back, natively pickled and as DBOS's portable JSON. About 10 s in all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dbos import PortableWorkflowError
from dbos._error import DBOSMaxStepRetriesExceeded

import recoverable as rc
from recoverable.integrations import dbos as rdb
from recoverable.testing import FakeProvider, Fault

ROOT = Path(__file__).resolve().parent.parent


def dbos_process(command: str, database: Path, argument: object) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["NO_PROXY"] = "127.0.0.1,::1,localhost"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    done = subprocess.run(
        [sys.executable, "-m", "tests.dbos_support", command, str(database), json.dumps(argument)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    outcomes: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return outcomes


def test_steps_retry_as_classified_and_the_detail_survives_a_restart(tmp_path: Path) -> None:
    database = tmp_path / "dbos.sqlite"
    with FakeProvider() as limited, FakeProvider() as quota, FakeProvider() as ok:
        limited.fail(Fault.rate_limited(retry_after=1), times=1)
        quota.fail(Fault.insufficient_quota(), times=None)
        cases = [
            ["rate-limited", "native", limited.openai_url, "ok"],
            ["quota", "native", quota.openai_url, "ok"],
            ["unknown", "native", ok.openai_url, "unknown"],
            ["quota-portable", "portable", quota.openai_url, "ok"],
        ]
        ran = dbos_process("run", database, cases)
        assert [r.fault for r in limited.requests] == ["rate_limited", None]
        assert [r.fault for r in quota.requests] == ["insufficient_quota"] * 2  # never retried
        assert len(ok.requests) == 1  # unknown: not retried, as DBOS's default
    # 429, then success after the server's second (not the policy's 50 ms)
    assert ran["rate-limited"]["text"] == "Hello from FakeProvider."
    first, second = ran["rate-limited"]["attempt_times"]
    assert second - first >= 1.0

    for name in ("quota", "quota-portable", "unknown"):
        assert len(ran[name]["attempt_times"]) == 1
        assert ran[name]["error_class"] == "RecoverableStepError"

    read = dbos_process("read", database, ["rate-limited", "quota", "unknown", "quota-portable"])
    assert read["rate-limited"] == {"text": "Hello from FakeProvider."}
    assert read["quota"]["error_class"] == "RecoverableStepError"  # unpickled whole
    assert read["quota-portable"]["error_class"] == "PortableWorkflowError"
    for name in ("quota", "quota-portable"):
        detail = rc.ErrorDetail.from_dict(read[name]["detail"])
        assert (detail.code, detail.retryable, detail.status) == (
            "provider_quota_exceeded",
            False,
            429,
        )
        assert (detail.source, detail.details["attempt"]) == ("openai", 1)
        assert read[name]["detail"] == ran[name]["detail"]
    unknown = rc.ErrorDetail.from_dict(read["unknown"]["detail"])
    assert (unknown.code, unknown.message) == ("unknown", "the reply had no field we expected")


def test_a_portable_error_is_read_from_its_data_and_a_forged_one_is_not_trusted() -> None:
    detail = rc.ErrorDetail.create("provider_overloaded", "busy", details={"attempt": 3})
    stored = PortableWorkflowError(
        "busy", "RecoverableStepError", "provider_overloaded", detail.to_dict()
    )
    assert rdb.detail_from_error(stored) == detail
    forged = PortableWorkflowError("x", "RecoverableStepError", "provider_overloaded", {"code": 5})
    assert rdb.detail_from_error(forged).code == "unknown"
    hostile = {"code": "provider_auth_failed", "message": "m", "fix_command": "rm -rf /"}
    read = rdb.detail_from_error(PortableWorkflowError("x", "E", "c", hostile))
    assert read.fix_command != "rm -rf /"


def test_dbos_own_retries_running_out_give_the_last_detail_exhausted() -> None:
    last = rdb.RecoverableStepError(rc.ErrorDetail.create("provider_overloaded"))
    error = DBOSMaxStepRetriesExceeded("call_model", 3, [ConnectionResetError(), last, last])
    detail = rdb.detail_from_error(error)
    assert (detail.code, detail.retryable) == ("provider_overloaded", False)
    assert (detail.details["attempts"], detail.details["retries_exhausted"]) == (3, True)


def test_should_retry_follows_the_classification() -> None:
    assert rdb.should_retry(ConnectionRefusedError()) is True
    assert rdb.should_retry(rc.RecoverableError("provider_quota_exceeded")) is False
    assert rdb.should_retry(KeyError("x")) is True  # unknown: the step asked DBOS to retry


def test_the_step_refuses_dbos_own_retry_options() -> None:
    with pytest.raises(TypeError, match="max_attempts"):
        rdb.step(max_attempts=5)


def test_rc_retry_inside_the_step_defers_to_the_steps_retry() -> None:
    calls: list[int] = []

    @rdb.step(rc.RetryPolicy(attempts=3, initial_delay=0.001))
    def refused_twice_over() -> None:
        calls.append(1)

        @rc.retry(attempts=5, initial_delay=0.001)
        def inner() -> None:
            raise ConnectionRefusedError("refused")

        inner()

    with pytest.raises(rdb.RecoverableStepError) as raised:
        refused_twice_over()  # outside a workflow, DBOS runs the step as a plain call
    assert len(calls) == 3  # the step's 3 attempts, never 3 x 5
    detail = raised.value.detail
    assert (detail.code, detail.retryable, detail.details["attempts"]) == (
        "network_error",
        False,
        3,
    )


async def test_an_async_step_retries_as_classified() -> None:
    calls: list[int] = []

    @rdb.step(rc.RetryPolicy(attempts=3, initial_delay=0.001))
    async def flaky(fail_times: int) -> str:
        calls.append(1)
        if len(calls) <= fail_times:
            raise ConnectionRefusedError("refused")
        return "done"

    assert await flaky(1) == "done"
    assert len(calls) == 2
    calls.clear()

    @rdb.step(rc.RetryPolicy(attempts=3))
    async def out_of_credit() -> None:
        calls.append(1)
        raise rc.RecoverableError("provider_quota_exceeded", "no credit")

    with pytest.raises(rdb.RecoverableStepError) as raised:
        await out_of_credit()
    assert (raised.value.code, raised.value.details["attempt"], len(calls)) == (
        "provider_quota_exceeded", 1, 1,
    )  # fmt: skip


def test_the_step_consults_cooldowns_before_each_attempt() -> None:
    fleet = rc.Cooldowns.memory(max_wait_ms=0).key(source="openai")
    calls: list[int] = []

    @rdb.step(rc.RetryPolicy(attempts=3, initial_delay=0.001), cooldowns=fleet)
    def ask() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise rc.RecoverableError("provider_quota_exceeded", "no credit", source="openai")
        return "done"

    with pytest.raises(rdb.RecoverableStepError) as first:
        ask()
    assert (first.value.code, len(calls)) == ("provider_quota_exceeded", 1)
    assert fleet.state().code == "provider_quota_exceeded"  # recorded: a stop for every worker
    with pytest.raises(rdb.RecoverableStepError) as second:
        ask()
    assert len(calls) == 1  # refused before the call
    assert (second.value.code, second.value.details["cooldown"]) == (
        "provider_quota_exceeded",
        "stop",
    )
    fleet.reset()
    assert ask() == "done"

"""DBOS on SQLite, as users meet it: a step calls FakeProvider through the real SDK clients
(openai, anthropic, google-genai, and httpx) under `rdb.step` (recoverable's loop) or under
DBOS's own loop (`should_retry=rdb.should_retry` over `rdb.classified`); one process runs the
workflows, a fresh process reads the stored outcomes back, natively pickled and as DBOS's
portable JSON. Provider requests are counted per DBOS attempt, with the SDK's own retries at
their default and off (exactly one retry layer). About 30 s in all, mostly the servers' hints
(1 s each) and starting the two processes.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
from dbos import PortableWorkflowError
from dbos._error import DBOSMaxStepRetriesExceeded

import recoverable as rc
from recoverable._retry.keys import engine_key
from recoverable.integrations import dbos as rdb
from recoverable.testing import FakeProvider, Fault

ROOT = Path(__file__).resolve().parents[2]
SDKS = ("openai", "anthropic", "google", "httpx")
HELLO = "Hello from FakeProvider."
MESSAGES: Any = [{"role": "user", "content": "hi"}]


def dbos_process(command: str, database: Path, argument: object) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["NO_PROXY"] = "127.0.0.1,::1,localhost"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.dbos_app", command, str(database),
         json.dumps(argument)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    outcomes: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return outcomes


@dataclass(frozen=True)
class Case:
    """One workflow: its step's loop, the SDK it calls, the faults its own FakeProvider
    serves, and whether the SDK client keeps its default retries."""

    id: str
    loop: str
    sdk: str
    faults: tuple[tuple[Fault, int | None], ...]
    serialization: str = "native"
    sdk_retries: bool = False
    mode: str = "ok"


LIMITED_ONCE = ((Fault.rate_limited(retry_after=1), 1),)
QUOTA = ((Fault.insufficient_quota(), None),)
LIMITED = ((Fault.rate_limited(retry_after_ms=20), None),)
CASES = [
    Case("rate-limited", "ours", "openai", LIMITED_ONCE),
    Case("quota", "ours", "openai", QUOTA),
    Case("unknown", "ours", "openai", (), mode="unknown"),
    Case("quota-portable", "ours", "openai", QUOTA, serialization="portable"),
    *(Case(f"dbos-rate-limited-{sdk}", "dbos", sdk, LIMITED_ONCE) for sdk in SDKS),
    *(Case(f"dbos-quota-{sdk}", "dbos", sdk, QUOTA) for sdk in SDKS),
    Case("dbos-exhausted", "dbos", "openai", LIMITED),
    Case("dbos-exhausted-portable", "dbos", "openai", LIMITED, serialization="portable"),
    Case("dbos-unknown", "dbos", "openai", (), mode="unknown"),
    Case("dbos-async-rate-limited", "dbos-async", "openai", LIMITED_ONCE),
    Case("dbos-async-exhausted", "dbos-async", "openai", LIMITED),
    # one retry layer: the SDK client at its default max_retries=2
    Case("dbos-sdk-limited", "dbos", "openai", LIMITED, sdk_retries=True),
    Case("dbos-sdk-quota", "dbos", "openai", QUOTA, sdk_retries=True),
    Case("dbos-sdk-limited-anthropic", "dbos", "anthropic", LIMITED, sdk_retries=True),
    Case("ours-sdk-limited", "ours", "openai", LIMITED, sdk_retries=True),
    Case("ours-sdk-quota", "ours", "openai", QUOTA, sdk_retries=True),
    Case("ours-limited", "ours", "openai", LIMITED),
]


@dataclass(frozen=True)
class Runs:
    """What the run process saw, what a fresh process read back, and each case's requests."""

    ran: dict[str, Any]
    read: dict[str, Any]
    requests: dict[str, int]
    keys: dict[str, list[str | None]]
    """The `Idempotency-Key` of each request of each case."""

    def detail(self, case_id: str, *, read_back: bool = False) -> rc.ErrorDetail:
        outcome = (self.read if read_back else self.ran)[case_id]
        return rc.ErrorDetail.from_dict(outcome["detail"])

    def attempts(self, case_id: str) -> int:
        return len(self.ran[case_id]["attempt_times"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    database = tmp_path_factory.mktemp("dbos") / "dbos.sqlite"
    fakes = {case.id: FakeProvider() for case in CASES}
    try:
        for case in CASES:
            fakes[case.id].start()
            for fault, times in case.faults:
                fakes[case.id].fail(fault, times=times)
        argument = [
            {"id": c.id, "loop": c.loop, "sdk": c.sdk, "url": fakes[c.id].url,
             "serialization": c.serialization, "sdk_retries": c.sdk_retries, "mode": c.mode}
            for c in CASES
        ]  # fmt: skip
        ran = dbos_process("run", database, argument)
        requests = {case_id: len(fake.requests) for case_id, fake in fakes.items()}
        keys = {
            case_id: [request.idempotency_key for request in fake.requests]
            for case_id, fake in fakes.items()
        }
    finally:
        for fake in fakes.values():
            fake.stop()
    read = dbos_process("read", database, [case.id for case in CASES])
    return Runs(ran, read, requests, keys)


# --- recoverable's loop inside the step (rdb.step) --------------------------------------


def test_steps_retry_as_classified_and_the_detail_survives_a_restart(runs: Runs) -> None:
    assert runs.requests["rate-limited"] == 2
    assert (runs.requests["quota"], runs.requests["quota-portable"]) == (1, 1)  # never retried
    assert runs.requests["unknown"] == 1  # unknown: not retried, as DBOS's default
    # 429, then success after the server's second (not the policy's 50 ms)
    assert runs.ran["rate-limited"]["text"] == HELLO
    first, second = runs.ran["rate-limited"]["attempt_times"]
    assert second - first >= 1.0

    for name in ("quota", "quota-portable", "unknown"):
        assert runs.attempts(name) == 1
        assert runs.ran[name]["error_class"] == "RecoverableStepError"

    assert runs.read["rate-limited"] == {"text": HELLO}
    assert runs.read["quota"]["error_class"] == "RecoverableStepError"  # unpickled whole
    assert runs.read["quota-portable"]["error_class"] == "PortableWorkflowError"
    for name in ("quota", "quota-portable"):
        detail = runs.detail(name, read_back=True)
        assert (detail.code, detail.retryable, detail.status) == (
            "provider_quota_exceeded",
            False,
            429,
        )
        assert (detail.source, detail.details["attempt"]) == ("openai", 1)
        assert runs.read[name]["detail"] == runs.ran[name]["detail"]
    unknown = runs.detail("unknown", read_back=True)
    assert (unknown.code, unknown.message) == ("unknown", "the reply had no field we expected")


@pytest.mark.parametrize("name", ["ours-limited", "dbos-exhausted", "dbos-sdk-limited"])
def test_every_attempt_of_a_step_sends_its_one_request_key(runs: Runs, name: str) -> None:
    # rdb.step's loop, DBOS's own loop, and the SDK's retries under DBOS's: one key for all
    keys = runs.keys[name]
    assert len(keys) == 3  # 3 attempts, or the SDK's 3 requests in DBOS's one attempt
    (workflow_id, step_id), *others = runs.ran[name]["steps"]
    assert workflow_id == name and others == [[name, step_id]] * (runs.attempts(name) - 1)
    assert keys == [engine_key("dbos", name, step_id)] * len(keys)
    others_keys = {runs.keys[other][0] for other in ("ours-sdk-limited", "ours-sdk-quota")}
    assert keys[0] not in others_keys  # another workflow's step, another key


# --- DBOS's own loop (should_retry=rdb.should_retry over rdb.classified) ----------------


@pytest.mark.parametrize("sdk", SDKS)
def test_dbos_loop_retries_a_429_after_the_server_s_hint(runs: Runs, sdk: str) -> None:
    name = f"dbos-rate-limited-{sdk}"
    assert (runs.ran[name]["text"], runs.read[name]) == (HELLO, {"text": HELLO})
    assert runs.requests[name] == 2
    first, second = runs.ran[name]["attempt_times"]
    assert second - first >= 1.0  # the hint (1 s), not DBOS's interval (50 ms)


SOURCES = {"openai": "openai", "anthropic": "anthropic", "google": "google", "httpx": None}
QUOTA_CLASSES = {"openai": "RateLimitError", "anthropic": "BadRequestError",
                 "google": "ClientError", "httpx": "HTTPStatusError"}  # fmt: skip


@pytest.mark.parametrize("sdk", SDKS)
def test_dbos_loop_stops_a_quota_at_once_and_it_reads_back(runs: Runs, sdk: str) -> None:
    name = f"dbos-quota-{sdk}"
    assert (runs.requests[name], runs.attempts(name)) == (1, 1)
    assert runs.ran[name]["error_class"] == "RecoverableStepError"
    assert runs.ran[name]["cause_class"] == QUOTA_CLASSES[sdk]  # the SDK's, in that process
    assert runs.read[name]["error_class"] == "RecoverableStepError"  # DBOS rebuilt it
    assert runs.read[name]["cause_class"] is None  # only the classification was stored
    for read_back in (False, True):
        detail = runs.detail(name, read_back=read_back)
        assert (detail.code, detail.retryable, detail.details["attempt"]) == (
            "provider_quota_exceeded", False, 1,
        )  # fmt: skip
        assert detail.source == SOURCES[sdk]
    assert runs.read[name]["detail"] == runs.ran[name]["detail"]


@pytest.mark.parametrize("name", ["dbos-exhausted", "dbos-exhausted-portable"])
def test_dbos_loop_s_last_attempt_comes_back_exhausted(runs: Runs, name: str) -> None:
    assert (runs.requests[name], runs.attempts(name)) == (3, 3)  # DBOS's max_attempts=3
    stored = "PortableWorkflowError" if name.endswith("portable") else "RecoverableStepError"
    assert runs.read[name]["error_class"] == stored
    detail = runs.detail(name, read_back=True)
    assert (detail.code, detail.retryable, detail.retry_after_ms) == (
        "provider_rate_limited", False, None,
    )  # fmt: skip
    assert {k: detail.details[k] for k in ("attempt", "attempts", "gave_up")} == {
        "attempt": 3, "attempts": 3, "gave_up": "attempts",
    }  # fmt: skip
    assert detail.details["server_retry_after_ms"] == 20
    assert runs.read[name]["detail"] == runs.ran[name]["detail"]


def test_dbos_loop_over_an_async_function_waits_the_hint_and_ends_exhausted(runs: Runs) -> None:
    assert runs.ran["dbos-async-rate-limited"]["text"] == HELLO
    first, second = runs.ran["dbos-async-rate-limited"]["attempt_times"]
    assert second - first >= 1.0
    assert (runs.requests["dbos-async-exhausted"], runs.attempts("dbos-async-exhausted")) == (3, 3)
    detail = runs.detail("dbos-async-exhausted", read_back=True)
    assert (detail.code, detail.retryable, detail.details["gave_up"]) == (
        "provider_rate_limited", False, "attempts",
    )  # fmt: skip


def test_dbos_loop_retries_an_unknown_failure_as_the_step_asked(runs: Runs) -> None:
    assert (runs.requests["dbos-unknown"], runs.attempts("dbos-unknown")) == (3, 3)
    detail = runs.detail("dbos-unknown", read_back=True)
    assert (detail.code, detail.details["retries_exhausted"], detail.details["attempts"]) == (
        "unknown", True, 3,
    )  # fmt: skip


# --- exactly one retry layer: requests per DBOS attempt ---------------------------------


@pytest.mark.parametrize("name", ["dbos-sdk-limited", "dbos-sdk-limited-anthropic"])
def test_a_failure_the_sdk_retried_is_not_retried_by_dbos(runs: Runs, name: str) -> None:
    assert (runs.requests[name], runs.attempts(name)) == (3, 1)  # the SDK's 3, in 1 attempt
    detail = runs.detail(name, read_back=True)
    assert (detail.code, detail.retryable) == ("provider_rate_limited", False)
    assert (detail.details["sdk_retries"], detail.details["gave_up"]) == (2, "sdk_retries")


def test_with_the_sdk_s_retries_off_each_dbos_attempt_is_one_request(runs: Runs) -> None:
    assert (runs.requests["dbos-exhausted"], runs.attempts("dbos-exhausted")) == (3, 3)
    assert (runs.requests["dbos-quota-openai"], runs.attempts("dbos-quota-openai")) == (1, 1)


def test_a_quota_costs_the_sdk_s_three_requests_once(runs: Runs) -> None:
    for name in ("dbos-sdk-quota", "ours-sdk-quota"):
        assert (runs.requests[name], runs.attempts(name)) == (3, 1)
        detail = runs.detail(name, read_back=True)
        assert (detail.code, detail.details["sdk_retries"]) == ("provider_quota_exceeded", 2)


def test_rdb_step_counts_the_same(runs: Runs) -> None:
    assert (runs.requests["ours-sdk-limited"], runs.attempts("ours-sdk-limited")) == (3, 1)
    detail = runs.detail("ours-sdk-limited", read_back=True)
    assert (detail.details["sdk_retries"], detail.details["gave_up"]) == (2, "sdk_retries")
    assert (runs.requests["ours-limited"], runs.attempts("ours-limited")) == (3, 3)  # policy's 3


# --- in process ---------------------------------------------------------------------------


def test_a_portable_error_is_read_from_its_data_and_a_forged_one_is_not_trusted() -> None:
    detail = rc.ErrorDetail.create("provider_overloaded", "busy", details={"attempt": 3})
    stored = PortableWorkflowError(
        "busy", "RecoverableStepError", "provider_overloaded", detail.to_dict()
    )
    assert rdb.read_error(stored) == detail
    forged = PortableWorkflowError("x", "RecoverableStepError", "provider_overloaded", {"code": 5})
    assert rdb.read_error(forged).code == "unknown"
    hostile = {"code": "provider_auth_failed", "message": "m", "fix_command": "rm -rf /"}
    read = rdb.read_error(PortableWorkflowError("x", "E", "c", hostile))
    assert read.fix_command != "rm -rf /"


def test_dbos_own_retries_running_out_give_the_last_detail_exhausted() -> None:
    last = rdb.RecoverableStepError(rc.ErrorDetail.create("provider_overloaded"))
    error = DBOSMaxStepRetriesExceeded("call_model", 3, [ConnectionResetError(), last, last])
    detail = rdb.read_error(error)
    assert (detail.code, detail.retryable) == ("provider_overloaded", False)
    assert (detail.details["attempts"], detail.details["retries_exhausted"]) == (3, True)


def test_should_retry_follows_the_classification() -> None:
    assert rdb.should_retry(ConnectionRefusedError()) is True
    assert rdb.should_retry(rc.RecoverableError("provider_quota_exceeded")) is False
    assert rdb.should_retry(KeyError("x")) is True  # unknown: the step asked DBOS to retry
    exhausted = rc.ErrorDetail.create("unknown", details={"retries_exhausted": True})
    assert rdb.should_retry(rdb.RecoverableStepError(exhausted)) is False


def test_the_step_refuses_dbos_own_retry_options() -> None:
    with pytest.raises(TypeError, match="max_attempts"):
        rdb.step(max_attempts=5)


def test_classified_refuses_a_bad_hint_cap() -> None:
    with pytest.raises(ValueError, match="max_retry_after_ms"):
        rdb.classified(max_retry_after_ms=-1)


def _refused_under_a_retry_of_its_own(calls: list[int]) -> None:
    """A step's body: counts the call, then its own `rc.retry` (5 attempts) meets a refused
    connection (it must defer to the step's loop, not multiply it)."""
    calls.append(1)

    @rc.retry(attempts=5, initial_delay=0.001)
    def inner() -> None:
        raise ConnectionRefusedError("refused")

    inner()


def test_rc_retry_inside_the_step_defers_to_the_steps_retry() -> None:
    calls: list[int] = []

    @rdb.step(rc.RetryPolicy(attempts=3, initial_delay=0.001))
    def refused_twice_over() -> None:
        _refused_under_a_retry_of_its_own(calls)

    with pytest.raises(rdb.RecoverableStepError) as raised:
        refused_twice_over()  # outside a workflow, DBOS runs the step as a plain call
    assert len(calls) == 3  # the step's 3 attempts, never 3 x 5
    detail = raised.value.detail
    assert (detail.code, detail.retryable, detail.details["attempts"]) == (
        "network_error",
        False,
        3,
    )


def test_classified_outside_a_workflow_fails_once_classified() -> None:
    calls: list[int] = []

    @rdb.classified
    def refused() -> None:
        _refused_under_a_retry_of_its_own(calls)

    with pytest.raises(rdb.RecoverableStepError) as raised:
        refused()
    assert len(calls) == 1  # rc.retry inside deferred to DBOS's loop
    assert isinstance(raised.value.__cause__, ConnectionRefusedError)  # the original, here
    detail = raised.value.detail
    assert (detail.code, detail.retryable, detail.details["attempt"]) == ("network_error", True, 1)


async def test_classified_takes_an_async_function() -> None:
    @rdb.classified(max_retry_after_ms=500)
    async def limited() -> None:
        raise rc.RecoverableError("provider_rate_limited", retry_after_ms=900)

    with pytest.raises(rdb.RecoverableStepError) as raised:
        await limited()
    detail = raised.value.detail
    assert (detail.retryable, detail.details["gave_up"]) == (False, "retry_after_too_long")
    assert rdb.should_retry(raised.value) is False


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
    fleet = rc.fleet.Cooldowns.memory(max_wait_ms=0).key(source="openai")
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


def test_should_retry_on_a_raw_sdk_error_counts_its_retries_and_names_the_fix(
    fake: FakeProvider, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rdb, "_unclassified_warned", set())
    monkeypatch.setattr("recoverable._retry.sdk_retries._warned", set())
    fake.fail(Fault.rate_limited(retry_after_ms=10), times=None)
    default = openai.OpenAI(api_key="sk-test", base_url=fake.openai_url)  # max_retries=2

    def ask(client: openai.OpenAI) -> BaseException:
        try:
            client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
        except openai.RateLimitError as exc:
            return exc
        raise AssertionError("no 429")

    with caplog.at_level(logging.WARNING, logger="recoverable"):
        assert rdb.should_retry(ask(default)) is False  # the SDK's 3 requests were the layer
        assert len(fake.requests) == 3
        assert rdb.should_retry(ask(rc.without_sdk_retries(default))) is True
    assert len(fake.requests) == 4
    said = " ".join(record.getMessage() for record in caplog.records)
    assert "without_sdk_retries(client)" in said  # the fix for the SDK's layer
    assert "@rdb.classified under @DBOS.step" in said  # the fix for what DBOS stores

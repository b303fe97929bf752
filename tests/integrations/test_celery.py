"""Celery: two real worker processes (`celery worker --pool=solo`; a redis-server on
127.0.0.1 as broker and JSON result backend) run a task that calls FakeProvider through the
real openai client (its own retries off); the detail is read back from AsyncResult.

Redis and the workers start once for the module (about 3 s) and are always stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from celery.result import AsyncResult

import recoverable as rc
from recoverable._retry.keys import engine_key
from recoverable.fleet._rules import GO
from recoverable.integrations import celery as rcc
from recoverable.testing import FakeProvider, Fault

from ..support import celery_app as support
from ..support.redis import redis_server

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 2


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Debian's redis-server on 127.0.0.1, in memory only; always stopped."""
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def start_worker(name: str, redis_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["NO_PROXY"] = "127.0.0.1,::1,localhost"
    env[support.REDIS_VARIABLE] = redis_url
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    argv = [
        sys.executable, "-m", "celery", "-A", "tests.support.celery_app", "worker",
        "--pool=solo", "-n", f"{name}@127.0.0.1", "--without-heartbeat", "--without-mingle",
        "--without-gossip", "--loglevel=WARNING",
    ]  # fmt: skip
    with log.open("wb") as out:
        return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)  # a worker's warm shutdown
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the workers write their logs (`w1.log`, ...)."""
    return tmp_path_factory.mktemp("celery")


@pytest.fixture(scope="module")
def app(redis_url: str, logs: Path) -> Iterator[Celery]:
    folder = logs
    client_app = support.make_app(redis_url)
    workers: list[subprocess.Popen[bytes]] = []
    try:
        for n in range(1, WORKERS + 1):
            workers.append(start_worker(f"w{n}", redis_url, folder / f"w{n}.log"))
        yield client_app
    finally:
        client_app.close()
        for worker in workers:
            stop(worker)
    for n, worker in enumerate(workers, 1):
        log = (folder / f"w{n}.log").read_text(errors="replace")
        assert worker.returncode == 0, log


def send(app: Celery, urls: list[str], mode: str = "ok") -> AsyncResult:
    return app.send_task("ask", args=[urls, mode])


def wait(result: AsyncResult) -> Any:
    return result.get(timeout=120, propagate=False, interval=0.05)


def test_a_429_is_retried_once_after_the_servers_delay(app: Celery, fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=1), times=1)
    sent = time.monotonic()
    result = send(app, [fake.openai_url])
    value = wait(result)
    assert value["text"] == "Hello from FakeProvider."
    assert value["attempt"] == 2
    assert time.monotonic() - sent >= 1.0  # the server's second, not the policy's 50 ms
    assert [r.fault for r in fake.requests] == ["rate_limited", None]
    assert rcc.read_result(result) is None


def test_a_quota_error_is_not_retried_and_the_caller_reads_its_code(
    app: Celery, fake: FakeProvider
) -> None:
    fake.fail(Fault.insufficient_quota(), times=1)
    result = send(app, [fake.openai_url])
    wait(result)
    assert result.state == "FAILURE"
    detail = rcc.read_result(result)
    assert detail is not None
    assert (detail.code, detail.retryable, detail.status) == ("provider_quota_exceeded", False, 429)
    assert (detail.source, detail.details["attempt"]) == ("openai", 1)
    assert detail.fix_required is not None
    assert [r.fault for r in fake.requests] == ["insufficient_quota"]


def test_an_unknown_error_gets_celerys_default_no_retry(app: Celery, fake: FakeProvider) -> None:
    result = send(app, [fake.openai_url], mode="unknown")
    wait(result)
    detail = rcc.read_result(result)
    assert detail is not None
    assert (detail.code, detail.retryable, detail.details["attempt"]) == ("unknown", False, 1)
    assert detail.message == "the reply had no field we expected"
    assert len(fake.requests) == 1


def test_a_secret_in_the_error_is_not_stored_in_the_backend(
    app: Celery, fake: FakeProvider
) -> None:
    result = send(app, [fake.openai_url], mode="secret")
    wait(result)
    detail = rcc.read_result(result)
    assert detail is not None
    assert detail.message.startswith("rejected key ")
    stored = json.dumps([result.backend.get_task_meta(result.id), result.traceback], default=str)
    assert support.SECRET not in stored
    assert "rejected key" in stored


def test_rc_retry_inside_a_task_defers_to_celery(app: Celery, fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded(), times=None)
    result = send(app, [fake.openai_url], mode="inner_retry")
    wait(result)
    detail = rcc.read_result(result)
    assert detail is not None
    assert (detail.code, detail.retryable, detail.details["attempt"]) == (
        "provider_overloaded", False, 3,
    )  # fmt: skip
    assert len(fake.requests) == 3  # the task's 3 attempts, never 3 x 5


def test_every_celery_attempt_sends_the_task_s_one_request_key(
    app: Celery, fake: FakeProvider
) -> None:
    fake.fail(Fault.overloaded(), times=2)
    first = send(app, [fake.openai_url], mode="inner_retry")
    assert wait(first)["attempt"] == 3
    second = send(app, [fake.openai_url])
    assert wait(second)["attempt"] == 1
    keys = [request.idempotency_key for request in fake.requests]
    assert [request.fault for request in fake.requests] == ["overloaded"] * 2 + [None, None]
    # Celery's 3 attempts (the rc.retry inside keeping the task's key), then the next task's
    assert keys == [engine_key("celery", first.id)] * 3 + [engine_key("celery", second.id)]


# mode -> (the provider each attempt asks, the task's mode, attempts, expected code or None)
LOAD_CASES: dict[str, tuple[tuple[str, ...], str, int, str | None]] = {
    "ok":         (("ok",), "ok", 1, None),
    "429 once":   (("rate_limited", "ok"), "ok", 2, None),
    "quota":      (("quota",), "ok", 1, "provider_quota_exceeded"),
    "unknown":    (("ok",), "unknown", 1, "unknown"),
    "overloaded": (("overloaded",), "ok", 3, "provider_overloaded"),
}  # fmt: skip


def test_200_tasks_over_two_workers_with_mixed_faults(app: Celery) -> None:
    with ExitStack() as stack:
        names = ("ok", "rate_limited", "quota", "overloaded")
        fakes = {name: stack.enter_context(FakeProvider()) for name in names}
        fakes["rate_limited"].fail(Fault.rate_limited(retry_after_ms=100), times=None)
        fakes["quota"].fail(Fault.insufficient_quota(), times=None)
        fakes["overloaded"].fail(Fault.overloaded(), times=None)
        cases = [list(LOAD_CASES)[i % len(LOAD_CASES)] for i in range(200)]
        results = []
        for case in cases:
            providers, mode, _, _ = LOAD_CASES[case]
            results.append(send(app, [fakes[p].openai_url for p in providers], mode))
        values = [wait(result) for result in results]
        requests = {name: len(fake.requests) for name, fake in fakes.items()}

    assert all(result.ready() for result in results)  # nothing lost
    workers = {value["worker"] for value in values if isinstance(value, dict)}
    assert workers == {f"w{n}@127.0.0.1" for n in range(1, WORKERS + 1)}
    for case, result, value in zip(cases, results, values, strict=True):
        _, _, attempts, code = LOAD_CASES[case]
        detail = rcc.read_result(result)
        if code is None:
            assert detail is None, (case, detail)
            assert value["attempt"] == attempts
        else:
            assert detail is not None, (case, value)
            assert (detail.code, detail.retryable) == (code, False)
            assert detail.details["attempt"] == attempts
            if case == "overloaded":
                assert detail.details["retries_exhausted"] is True
    per_case = Counter(cases)
    assert requests == {
        "ok": per_case["ok"] + per_case["429 once"] + per_case["unknown"],
        "rate_limited": per_case["429 once"],
        "quota": per_case["quota"],  # never retried
        "overloaded": 3 * per_case["overloaded"],
    }
    assert sum(requests.values()) == 320


def test_next_retry_prefers_the_server_hint_and_stops_on_the_rest() -> None:
    policy = rc.RetryPolicy(attempts=3, initial_delay=2.0, jitter=False)
    limited = rc.ErrorDetail.create("provider_rate_limited", retry_after_ms=1500)
    assert rcc.next_retry(limited, 1, policy) == 1.5
    assert rcc.next_retry(limited, 3, policy) is None
    assert rcc.next_retry(rc.ErrorDetail.create("provider_overloaded"), 2, policy) == 4.0
    assert rcc.next_retry(rc.ErrorDetail.create("provider_quota_exceeded"), 1, policy) is None
    too_long = rc.ErrorDetail.create("provider_rate_limited", retry_after_ms=3_600_000)
    assert rcc.next_retry(too_long, 1, policy) is None


def test_a_stored_error_is_read_whatever_class_celery_rebuilt() -> None:
    detail = rc.ErrorDetail.create("provider_overloaded", "busy", details={"attempt": 2})
    synthesised = type("RecoverableError", (Exception,), {})(detail.message, detail.to_dict())
    assert rcc.read_error(synthesised) == detail
    assert rcc.read_error(rc.RecoverableError(detail)) == detail
    forged = Exception("x", {"code": "provider_overloaded", "message": 3})
    assert rcc.read_error(forged).code == "unknown"


def test_the_task_reports_its_decisions_to_the_failure_hooks() -> None:
    eager = Celery("eager", broker="memory://", backend="cache+memory://")
    eager.conf.task_always_eager = True
    calls: list[int] = []

    @eager.task(bind=True, base=rcc.ClassifiedTask, recoverable_policy=support.POLICY, name="t")
    def flaky(self: Any, fail_times: int) -> str:
        calls.append(1)
        if len(calls) <= fail_times:
            raise ConnectionRefusedError("refused")
        return "done"

    before = rc.instrumentation.get_failure_hooks()
    seen: list[rc.instrumentation.FailureEvent] = []
    rc.instrumentation.set_failure_hooks([seen.append])
    try:
        assert flaky.apply(args=[1]).get() == "done"
        calls.clear()
        failed = flaky.apply(args=[5])
    finally:
        rc.instrumentation.set_failure_hooks(before)
    assert [(e.kind, e.code, e.attempt, e.name) for e in seen] == [
        ("retry", "network_error", 1, "t"),
        ("retry", "network_error", 1, "t"),
        ("retry", "network_error", 2, "t"),
        ("give_up", "network_error", 3, "t"),
    ]
    assert len(calls) == 3
    detail = rcc.read_result(failed)
    assert detail is not None
    assert (detail.code, detail.retryable, detail.details["attempts"]) == (
        "network_error",
        False,
        3,
    )


def test_a_quiet_key_past_the_policys_longest_wait_stops_without_a_call() -> None:
    """Eager mode (no broker to wait a countdown): a quiet key is waited in place up to the
    policy's `max_retry_after_ms`; past it the task stops at once, no call spent, and the
    fleet's wait is not reported as a server's."""
    eager = Celery("eager-cooldowns", broker="memory://", backend="cache+memory://")
    eager.conf.task_always_eager = True
    fleet = rc.fleet.Cooldowns.memory(max_wait_ms=0).key(source="openai", model="gpt-4o")
    calls: list[int] = []

    @eager.task(
        bind=True, base=rcc.ClassifiedTask, name="quieted",
        recoverable_policy=rc.RetryPolicy(attempts=3, max_retry_after_ms=10_000),
        recoverable_cooldowns=fleet,
    )  # fmt: skip
    def ask(self: Any, fail: bool) -> int:
        calls.append(1)
        if fail:
            raise rc.RecoverableError("provider_quota_exceeded", "no credit", source="openai")
        return int(self.recoverable_attempt)

    def quiet_for(ms: int) -> None:
        fleet.reset()
        detail = rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=ms).detail
        fleet.after_failure(detail, GO)

    quiet_for(20_000)
    seen: list[rc.instrumentation.FailureEvent] = []
    before = rc.instrumentation.get_failure_hooks()
    rc.instrumentation.set_failure_hooks([seen.append])
    try:
        quiet = ask.apply(args=[False])
    finally:
        rc.instrumentation.set_failure_hooks(before)
    assert calls == []  # no attempt spent on a quiet key
    assert [(e.kind, e.code, e.attempt) for e in seen] == [("give_up", "provider_rate_limited", 1)]
    detail = rcc.read_result(quiet)
    assert detail is not None
    assert (detail.code, detail.retryable, detail.retry_after_ms) == (
        "provider_rate_limited", False, None,
    )  # fmt: skip
    assert (detail.details["gave_up"], detail.details["cooldown"]) == ("cooldown_too_long", "quiet")
    assert 19_000 < detail.details["fleet_wait_ms"] <= 20_000
    assert "server_retry_after_ms" not in detail.details  # the fleet's wait, no server's word

    quiet_for(300)  # short: waited in place, even with the key's max_wait_ms=0 (eager)
    started = time.monotonic()
    assert ask.apply(args=[False]).get() == 1
    assert time.monotonic() - started >= 0.25
    assert calls == [1]

    quiet_for(1000)  # this attempt was turned back 9.5 s ago already: 1 s more is past 10 s
    late = ask.apply(args=[False], headers={rcc.WAITING_SINCE_HEADER: time.time() - 9.5})
    detail = rcc.read_result(late)
    assert detail is not None and detail.details["gave_up"] == "cooldown_too_long"
    assert calls == [1]

    fleet.reset()
    assert ask.apply(args=[True]).state == "FAILURE"  # a quota failure: recorded as a stop
    assert (len(calls), fleet.state().code) == (2, "provider_quota_exceeded")
    stopped = ask.apply(args=[False])
    assert len(calls) == 2
    detail = rcc.read_result(stopped)
    assert detail is not None
    assert (detail.code, detail.retryable, detail.details["cooldown"]) == (
        "provider_quota_exceeded", False, "stop",
    )  # fmt: skip


def test_a_wait_an_inner_key_computed_is_not_reported_as_a_servers() -> None:
    """`rc.retry(cooldowns=...)` inside the task: its key's refusal is the fleet's wait, kept
    as `fleet_wait_ms`; a server's hint from the body stays `server_retry_after_ms`."""
    eager = Celery("eager-inner", broker="memory://", backend="cache+memory://")
    eager.conf.task_always_eager = True
    inner = rc.fleet.Cooldowns.memory().key(source="openai", model="gpt-4o")
    inner.after_failure(
        rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=120_000).detail, GO
    )

    @eager.task(bind=True, base=rcc.ClassifiedTask, recoverable_policy=support.POLICY, name="i")
    def ask(self: Any, gated: bool) -> None:
        if gated:
            rc.retry(cooldowns=inner).call(lambda: None)
        raise rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=90_000)

    fleet_said = rcc.read_result(ask.apply(args=[True]))
    server_said = rcc.read_result(ask.apply(args=[False]))
    assert fleet_said is not None and server_said is not None
    assert fleet_said.details["gave_up"] == "cooldown_too_long"
    assert 110_000 < fleet_said.details["fleet_wait_ms"] <= 120_000
    assert "server_retry_after_ms" not in fleet_said.details
    assert (server_said.details["gave_up"], server_said.details["server_retry_after_ms"]) == (
        "retry_after_too_long", 90_000,
    )  # fmt: skip
    assert "fleet_wait_ms" not in server_said.details


def test_a_task_called_as_a_function_waits_in_place() -> None:
    app = Celery("direct", broker="memory://", backend="cache+memory://")
    fleet = rc.fleet.Cooldowns.memory(max_wait_ms=0).key(source="openai")

    @app.task(bind=True, base=rcc.ClassifiedTask, recoverable_cooldowns=fleet, name="direct")
    def ask(self: Any) -> int:
        return int(self.recoverable_attempt)

    fleet.after_failure(
        rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=200).detail, GO
    )
    started = time.monotonic()
    assert ask() == 1  # no broker to wait a countdown: waited here, the key's 0 aside
    assert time.monotonic() - started >= 0.15


def test_cooldowns_may_be_a_function_of_the_task_and_short_waits_happen_in_place() -> None:
    eager = Celery("eager-cooldowns-fn", broker="memory://", backend="cache+memory://")
    eager.conf.task_always_eager = True
    fleet = rc.fleet.Cooldowns.memory(max_wait_ms=1000).key(source="openai")
    asked: list[str] = []

    def per_call(task: Any) -> rc.fleet.Cooldowns:
        asked.append(task.request.args[0])
        return fleet.task(f"ticket-{task.request.args[0]}", max_attempts=1)

    @eager.task(
        bind=True, base=rcc.ClassifiedTask, recoverable_policy=support.POLICY,
        recoverable_cooldowns=per_call, name="per-call",
    )  # fmt: skip
    def ask(self: Any, ticket: str) -> str:
        return ticket

    fleet.after_failure(
        rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=300).detail, GO
    )
    started = time.monotonic()
    assert ask.apply(args=["a"]).get() == "a"
    assert 0.2 <= time.monotonic() - started < 1.0  # waited in place: within max_wait_ms
    assert asked == ["a"]  # a plain function set on the task class is called with the task
    assert fleet.task("ticket-a").usage().attempts == 1
    spent = ask.apply(args=["a"])  # the same ticket again: its budget of one is spent
    detail = rcc.read_result(spent)
    assert detail is not None
    assert (detail.code, detail.details["budget"]) == ("run_budget_exceeded", "attempts")

    @eager.task(
        bind=True, base=rcc.ClassifiedTask, recoverable_cooldowns=lambda task: "not a key",
        name="wrong-key",
    )  # fmt: skip
    def wrong(self: Any) -> None:
        return None

    with pytest.raises(TypeError, match="must give a Cooldowns or None"):
        wrong.apply().get()


# --- the fleet's waits are no attempts (issue 24, item 3) -----------------------------------


def send_shared(
    app: Celery, url: str, how: str = "off", fleet: tuple[str, int | None] | None = None
) -> AsyncResult:
    return app.send_task("ask_shared", args=[url, how, fleet])


def quiet_ms(redis_url: str, prefix: str) -> int:
    key = support.shared_fleet(redis_url, prefix, None)
    return key.quiet_ms()


@pytest.mark.parametrize("max_wait_ms", [0, None], ids=["turned-back", "waited-in-place"])
def test_four_tasks_after_one_429_all_succeed_and_the_429_is_the_only_one(
    app: Celery, redis_url: str, fake: FakeProvider, max_wait_ms: int | None
) -> None:
    """The issue's case: attempts=3, one shared key, one 429 (retry-after: 1 s). On main the
    waits were attempts: FAILURE, FAILURE, SUCCESS, SUCCESS. Turned back by countdown
    (max_wait_ms=0) or waited in the worker (the default), a wait is no attempt."""
    prefix = f"four-{max_wait_ms}:"
    fleet = (prefix, max_wait_ms)
    fake.fail(Fault.rate_limited(retry_after=1), times=1)
    first = send_shared(app, fake.openai_url, fleet=fleet)
    deadline = time.monotonic() + 30
    while quiet_ms(redis_url, prefix) == 0:  # the 429 has quieted the key for everyone
        assert time.monotonic() < deadline and not first.ready(), first.state
        time.sleep(0.02)
    rest = [send_shared(app, fake.openai_url, fleet=fleet) for _ in range(3)]
    values = [wait(result) for result in (first, *rest)]
    assert [r.state for r in (first, *rest)] == ["SUCCESS"] * 4, values
    assert [r.fault for r in fake.requests] == ["rate_limited"] + [None] * 4
    assert [v["attempt"] for v in values] == [2, 1, 1, 1]
    turned_back = [v["turned_back"] for v in values[1:]]
    if max_wait_ms == 0:  # each waited by countdown (retries), none of them an attempt
        assert all(n >= 1 for n in turned_back), values
        assert [v["retries"] - v["turned_back"] for v in values] == [1, 0, 0, 0]
    else:
        assert turned_back == [0, 0, 0]
        assert [v["retries"] for v in values] == [1, 0, 0, 0]


# --- one retry layer: the SDK's own retries (issue 24, item 8) ------------------------------


def retry_counts(fake: FakeProvider) -> list[str]:
    return [r.headers.get("x-stainless-retry-count", "") for r in fake.requests]


def test_the_default_client_retries_itself_and_celery_retries_no_further(
    app: Celery, logs: Path, fake: FakeProvider
) -> None:
    """openai's default max_retries=2: one failure is 3 requests before the task sees it;
    the task then stops at once (one attempt), says so in the detail and warns with the
    fix."""
    fake.fail(Fault.rate_limited(retry_after_ms=50), times=None)
    limited = send_shared(app, fake.openai_url, how="sdk")
    wait(limited)
    assert retry_counts(fake) == ["0", "1", "2"]  # 3 requests: the SDK's, none of Celery's
    detail = rcc.read_result(limited)
    assert detail is not None
    assert (detail.code, detail.retryable, detail.details["attempt"]) == (
        "provider_rate_limited", False, 1,
    )  # fmt: skip
    assert (detail.details["sdk_retries"], detail.details["gave_up"]) == (2, "sdk_retries")
    assert detail.details["server_retry_after_ms"] == 50  # the server's own word

    fake.reset()
    fake.fail(Fault.insufficient_quota(), times=None)  # the case: a quota error
    quota = send_shared(app, fake.openai_url, how="sdk")
    wait(quota)
    assert retry_counts(fake) == ["0", "1", "2"]
    detail = rcc.read_result(quota)
    assert detail is not None
    assert (detail.code, detail.details["attempt"], detail.details["sdk_retries"]) == (
        "provider_quota_exceeded", 1, 2,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while True:  # the warning, once per worker process, names the fix
        text = "".join(log.read_text(errors="replace") for log in logs.glob("w*.log"))
        if "without_sdk_retries" in text:
            break
        assert time.monotonic() < deadline, text[-3000:]
        time.sleep(0.05)
    assert "max_retries=0" in text
    assert "the openai client retried this request 2 time(s) itself" in text


def test_without_sdk_retries_celery_is_the_retry_layer_one_request_each(
    app: Celery, fake: FakeProvider
) -> None:
    fake.fail(Fault.overloaded(), times=None)
    result = send_shared(app, fake.openai_url, how="without")
    wait(result)
    assert retry_counts(fake) == ["0", "0", "0"]  # three attempts, one request each
    detail = rcc.read_result(result)
    assert detail is not None
    assert (detail.code, detail.details["attempt"], detail.details["gave_up"]) == (
        "provider_overloaded", 3, "attempts",
    )  # fmt: skip
    assert "sdk_retries" not in detail.details

    fake.reset()
    fake.fail(Fault.rate_limited(retry_after_ms=50), times=2)
    value = wait(send_shared(app, fake.openai_url, how="without"))
    assert value["attempt"] == 3
    assert [r.fault for r in fake.requests] == ["rate_limited", "rate_limited", None]


# --- what a wait is: the server's word or the fleet's (issue 24, item 3) --------------------


def test_server_retry_after_ms_is_only_a_servers_word(
    app: Celery, redis_url: str, fake: FakeProvider
) -> None:
    fake.fail(Fault.rate_limited(retry_after=120), times=1)  # over the policy's 60 s
    told = send_shared(app, fake.openai_url)
    wait(told)
    detail = rcc.read_result(told)
    assert detail is not None
    assert (detail.details["gave_up"], detail.details["server_retry_after_ms"]) == (
        "retry_after_too_long", 120_000,
    )  # fmt: skip

    prefix = "fleet-said:"
    key = support.shared_fleet(redis_url, prefix, None)
    key.after_failure(  # another worker's 429 quiets the key for 2 minutes
        rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=120_000).detail, GO
    )
    quieted = send_shared(app, fake.openai_url, fleet=(prefix, None))
    wait(quieted)
    detail = rcc.read_result(quieted)
    assert detail is not None
    assert (detail.code, detail.retryable, detail.details["gave_up"]) == (
        "provider_rate_limited", False, "cooldown_too_long",
    )  # fmt: skip
    assert 110_000 < detail.details["fleet_wait_ms"] <= 120_000
    assert "server_retry_after_ms" not in detail.details
    assert len(fake.requests) == 1  # the quieted task never called

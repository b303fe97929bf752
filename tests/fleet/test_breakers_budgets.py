"""Circuit breakers (closed, open, half-open, closed again) on a virtual clock, and task
budgets that survive restarts, against all three stores; concurrent processes lose no update."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable.fleet._rules import GO, KeyState, TaskUsage, admit

from ..support.retry import Clock, failing
from .support import Factory, rate_limited, refusal, retrying, worker


def server_error() -> rc.RecoverableError:
    return rc.RecoverableError("provider_server_error", "500 from upstream")


def fail_times(
    cooldowns: rc.fleet.Cooldowns, clock: Clock, count: int, step_s: float = 1.0
) -> None:
    for _ in range(count):
        cooldowns.after_failure(server_error().detail, cooldowns.before_call(0))
        clock.now += step_s


# --- the breaker ------------------------------------------------------------------------------


def test_five_server_errors_open_the_circuit_for_every_worker(make: Factory, clock: Clock) -> None:
    a, b = worker(make, clock), worker(make, clock)
    fail_times(a, clock, 4)
    assert b.circuit() == "closed"
    fail_times(a, clock, 1, step_s=2.0)
    assert b.circuit() == "open"
    fn = failing()
    detail = refusal(lambda: retrying(clock, b).call(fn))
    assert fn.calls == []  # type: ignore[attr-defined]  -- answered at once, no call
    assert (detail.code, detail.retryable, detail.retry_after_ms) == (
        "provider_server_error", True, 28_000,
    )  # fmt: skip
    assert detail.details["circuit"] == "open"
    assert clock.slept == []


def test_failures_outside_the_window_do_not_add_up(make: Factory, clock: Clock) -> None:
    a = worker(make, clock)
    fail_times(a, clock, 4, step_s=10.0)  # 4 failures over 40 s: never 5 within 30 s
    fail_times(a, clock, 4, step_s=10.0)
    assert a.circuit() == "closed"
    assert len(a.state().failures) == 3


def test_rate_limits_and_bad_requests_do_not_count(make: Factory, clock: Clock) -> None:
    a = worker(make, clock)
    for _ in range(10):
        a.after_failure(rate_limited(1).detail, GO)
        a.after_failure(rc.RecoverableError("provider_invalid_request").detail, GO)
        clock.now += 1
    assert (a.circuit(), a.state().failures) == ("closed", ())


def test_half_open_lets_one_probe_through_and_its_success_closes(
    make: Factory, clock: Clock
) -> None:
    a, b, c = worker(make, clock), worker(make, clock), worker(make, clock)
    fail_times(a, clock, 5, step_s=0.0)
    clock.now += 30
    assert b.circuit() == "half_open"
    probe = b.before_call(0)
    assert probe.probe
    # While the probe is out, everyone else is still answered at once.
    other = refusal(lambda: c.before_call(0))
    assert (other.details["circuit"], other.retry_after_ms) == ("open", 60_000)
    b.after_success(probe)
    assert c.circuit() == "closed"
    assert retrying(clock, c).call(failing()) == "ok"


def test_a_failed_probe_opens_the_circuit_again(make: Factory, clock: Clock) -> None:
    a, b = worker(make, clock), worker(make, clock)
    fail_times(a, clock, 5, step_s=0.0)
    clock.now += 31
    fn = failing(server_error())
    assert refusal(lambda: retrying(clock, b).call(fn)).details["circuit"] == "open"
    assert fn.calls == [1]  # type: ignore[attr-defined]  -- the probe, then the open circuit
    assert b.circuit() == "open"
    assert clock.slept == [1.0]  # the retry's backoff, then the gate said: open
    assert b.state().open_until == clock.now - 1 + 30


def test_a_probe_that_never_reports_lets_another_probe_after_probe_s(
    make: Factory, clock: Clock
) -> None:
    a, b = worker(make, clock), worker(make, clock)
    fail_times(a, clock, 5, step_s=0.0)
    clock.now += 30
    assert a.before_call(0).probe  # a probe that crashed before it could report
    clock.now += 61
    assert b.before_call(0).probe


def test_thresholds_per_family_and_code(make: Factory, clock: Clock) -> None:
    policy = rc.fleet.FleetPolicy(
        breaker=rc.fleet.BreakerPolicy(thresholds={"provider": 3, "provider_timeout": 10})
    )
    a = worker(make, clock, policy=policy)
    for _ in range(9):
        a.after_failure(rc.RecoverableError("provider_timeout").detail, GO)
    assert a.circuit() == "closed"
    for _ in range(3):
        a.after_failure(rc.RecoverableError("provider_connection_lost").detail, GO)
    assert a.circuit() == "open"
    assert a.state().open_code == "provider_connection_lost"


def test_an_open_circuit_sends_fallback_to_the_next_provider(make: Factory, clock: Clock) -> None:
    broken = worker(make, clock)
    fail_times(broken, clock, 5, step_s=0.0)
    primary = failing()
    answer = rc.fallback(
        [
            ("openai", retrying(clock, broken)(primary)),
            ("anthropic", failing(result="spare")),
        ]
    )
    assert (answer.name, answer.value, primary.calls) == ("anthropic", "spare", [])  # type: ignore[attr-defined]
    assert answer.failures[0].details["circuit"] == "open"


def test_breaker_policy_refuses_bad_numbers() -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="integer >= 1"):
            rc.fleet.BreakerPolicy(thresholds={"provider": bad})  # type: ignore[dict-item]
    for seconds in (0, float("nan"), float("inf"), -3):
        with pytest.raises(ValueError, match="finite and > 0"):
            rc.fleet.BreakerPolicy(open_s=seconds)


# --- budgets ----------------------------------------------------------------------------------


def test_a_tasks_attempts_survive_a_restart(make: Factory, clock: Clock) -> None:
    first_life = worker(make, clock).task("summarise-doc-42", max_attempts=3)
    fn = failing(server_error(), server_error(), server_error(), server_error())
    detail = refusal(lambda: retrying(clock, first_life, attempts=2).call(fn))
    assert detail.code == "provider_server_error"  # the retry gave up after 2 attempts
    # The process crashes and a new one takes the task up: one attempt is left, not 3.
    second_life = worker(make, clock).task("summarise-doc-42", max_attempts=3)
    assert second_life.usage() == TaskUsage(attempts=2)
    detail = refusal(lambda: retrying(clock, second_life, attempts=5).call(fn))
    assert fn.calls == [1, 1, 1]  # type: ignore[attr-defined]
    assert (detail.code, detail.retryable) == ("run_budget_exceeded", False)
    assert detail.details == {
        "task": "summarise-doc-42", "budget": "attempts", "attempts": 3, "max_attempts": 3,
        "cost_usd": 0.0, "max_cost_usd": None, "retries_exhausted": True,
    }  # fmt: skip
    third_life = worker(make, clock).task("summarise-doc-42", max_attempts=3)
    again = failing()
    assert refusal(lambda: retrying(clock, third_life).call(again)).code == "run_budget_exceeded"
    assert again.calls == []  # type: ignore[attr-defined]


def test_a_tasks_cost_is_charged_and_caps_it(make: Factory, clock: Clock) -> None:
    task = worker(make, clock).task("t", max_cost_usd=1.0)
    assert retrying(clock, task).call(failing()) == "ok"
    task.charge(0.6)
    worker(make, clock).task("t").charge(0.5)  # another process charges the same task
    assert task.usage() == TaskUsage(attempts=1, cost_usd=1.1)
    detail = refusal(lambda: retrying(clock, task).call(failing()))
    assert (detail.code, detail.details["budget"], detail.details["cost_usd"]) == (
        "run_budget_exceeded", "cost", 1.1,
    )  # fmt: skip


def test_budget_arguments_are_checked() -> None:
    cooldowns = rc.fleet.Cooldowns.memory()
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="max_attempts"):
            cooldowns.task("t", max_attempts=bad)  # type: ignore[arg-type]
    for cost in (float("nan"), float("inf"), -1.0):
        with pytest.raises(ValueError, match="max_cost_usd"):
            cooldowns.task("t", max_cost_usd=cost)
        with pytest.raises(ValueError, match="cost_usd"):
            cooldowns.task("t").charge(cost)
    with pytest.raises(ValueError, match="no task"):
        cooldowns.charge(1.0)


# --- processes at once: nothing lost ----------------------------------------------------------


def _claim(kind: str, where: str, count: int, queue: multiprocessing.Queue[int]) -> None:
    cooldowns = (
        rc.fleet.Cooldowns.sqlite(where)
        if kind == "sqlite"
        else rc.fleet.Cooldowns.redis(where, prefix="p:")
    ).task("shared", max_attempts=120)
    granted = 0
    for _ in range(count):
        try:
            cooldowns.before_call(0)
            granted += 1
        except rc.RecoverableError:
            pass
    queue.put(granted)


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_four_processes_claim_exactly_the_budget(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    where = (
        str(tmp_path / "f.sqlite3") if kind == "sqlite" else request.getfixturevalue("redis_url")
    )
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue[int] = context.Queue()
    procs = [context.Process(target=_claim, args=(kind, where, 50, queue)) for _ in range(4)]
    for proc in procs:
        proc.start()
    granted = [queue.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(30)
    assert sum(granted) == 120  # 200 claims, 120 allowed: no update lost, none doubled
    probe = (
        rc.fleet.Cooldowns.sqlite(where)
        if kind == "sqlite"
        else rc.fleet.Cooldowns.redis(where, prefix="p:")
    )
    assert probe.task("shared").usage().attempts == 120
    probe.task("shared").reset()
    probe.close()


# --- hostile stored state ---------------------------------------------------------------------


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=12) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), json_values.map(repr), json_values.map(str)))
def test_any_stored_text_reads_as_a_state_and_never_forces_a_long_wait(text: str) -> None:
    state = KeyState.load(text)
    _, gate = admit(state, 1_800_000_000.0, 5.0, 60.0)
    assert gate.wait_s <= 5.0
    assert gate.code == "" or gate.code in rc.codes
    TaskUsage.load(text)


def test_a_forged_state_with_a_foreign_code_and_nan_is_defused() -> None:
    forged = '[1e308, "sk-live-leak", true, NaN, -5, Infinity, [NaN, 1, "x"], 0, "rm -rf", 0]'
    state = KeyState.load(forged)
    assert (state.code, state.spacing, state.pace_until) == ("", 0.0, 0.0)
    assert KeyState.load('{"a": 1}') == KeyState()
    assert KeyState.load("[" * 5000) == KeyState()

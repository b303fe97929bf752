"""OpenTelemetry with the SDK's in-memory span exporter and metric reader; the failure hooks
in rc.retry, the agents runner and the Celery adapter."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from opentelemetry.trace import StatusCode

import recoverable as rc
from recoverable.agents import RunOptions
from recoverable.agents._run_sync import run_process_sync
from recoverable.integrations import otel
from recoverable.testing import FakeProvider, Fault

from ..support import runner as runner_support
from ..support.telemetry import Telemetry


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    before = rc.instrumentation.get_failure_hooks()
    found = Telemetry()
    otel.instrument(meter_provider=found.meters)
    try:
        yield found
    finally:
        rc.instrumentation.set_failure_hooks(before)


def ask(fake: FakeProvider) -> str:
    client = openai.OpenAI(api_key="sk-test", base_url=fake.openai_url, max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
    )
    return str(reply.choices[0].message.content)


def no_wait(seconds: float) -> None:
    pass


def test_record_error_follows_the_conventions_and_keeps_developer_text_out() -> None:
    telemetry = Telemetry()
    detail = rc.ErrorDetail.create(
        "provider_rate_limited", "429 from upstream: slow down", retry_after_ms=1500, status=429,
        source="openai",
    )  # fmt: skip
    with telemetry.tracer.start_as_current_span("call") as span:
        otel.record_error(detail)
    with telemetry.tracer.start_as_current_span("other"):
        otel.record_error(detail, span, include_message=True)  # a span given, not the current
    (recorded, other) = telemetry.finished()
    assert recorded.status.status_code is StatusCode.ERROR
    assert recorded.status.description == "provider_rate_limited"
    assert dict(recorded.attributes or {}) == {
        "error.type": "provider_rate_limited",
        "recoverable.category": "provider",
        "recoverable.retryable": True,
        "recoverable.recovery": "retry",
        "recoverable.retry_after_ms": 1500,
        "recoverable.upstream_status": 429,
        "recoverable.source": "openai",
    }
    assert other.status.status_code is StatusCode.UNSET
    assert recorded is not other


def test_the_message_goes_on_the_span_only_when_asked() -> None:
    telemetry = Telemetry()
    detail = rc.ErrorDetail.create("unknown", "key sk-proj-abcdefghijklmnopqrstuvwxyz012345 bad")
    with telemetry.tracer.start_as_current_span("call"):
        otel.record_error(detail, include_message=True)
    message = (telemetry.finished()[0].attributes or {})["recoverable.message"]
    assert isinstance(message, str)
    assert "abcdefghijklmnopqrstuvwxyz012345" not in message  # scrubbed when the detail was made


def test_retries_become_span_events_and_a_counter_by_code(
    telemetry: Telemetry, fake: FakeProvider
) -> None:
    fake.fail(Fault.rate_limited(retry_after_ms=20), times=2)
    with telemetry.tracer.start_as_current_span("ask"):
        assert rc.retry(sleep=no_wait).call(ask, fake) == "Hello from FakeProvider."
    (span,) = telemetry.finished()
    assert [(e.name, dict(e.attributes or {})) for e in span.events] == [
        ("recoverable.retry", {"error.type": "provider_rate_limited", "recoverable.attempt": n,
                               "recoverable.wait_s": 0.02})
        for n in (1, 2)
    ]  # fmt: skip
    assert span.status.status_code is StatusCode.UNSET  # it succeeded in the end
    assert telemetry.counts() == {("provider_rate_limited", "retry"): 2}


def test_a_quota_stop_and_a_give_up_mark_the_span(telemetry: Telemetry, fake: FakeProvider) -> None:
    fake.fail(Fault.insufficient_quota(), times=1)
    with (
        telemetry.tracer.start_as_current_span("quota"),
        pytest.raises(rc.RecoverableError) as quota_stop,
    ):
        rc.retry(sleep=no_wait).call(ask, fake)
    assert isinstance(quota_stop.value.__cause__, openai.RateLimitError)
    fake.fail(Fault.overloaded(), times=2)
    with telemetry.tracer.start_as_current_span("overloaded"), pytest.raises(rc.RecoverableError):
        rc.retry(attempts=2, sleep=no_wait).call(ask, fake)
    quota, overloaded = telemetry.finished()
    assert (quota.status.status_code, (quota.attributes or {})["error.type"]) == (
        StatusCode.ERROR, "provider_quota_exceeded",
    )  # fmt: skip
    assert overloaded.status.status_code is StatusCode.ERROR
    assert (overloaded.attributes or {})["recoverable.retryable"] is False  # exhausted
    assert telemetry.counts() == {
        ("provider_quota_exceeded", "stop"): 1,
        ("provider_overloaded", "retry"): 1,
        ("provider_overloaded", "give_up"): 1,
    }
    assert len(fake.requests) == 3


async def test_a_failed_agent_run_is_reported(telemetry: Telemetry, tmp_path: Path) -> None:
    with telemetry.tracer.start_as_current_span("run"):
        result = await runner_support.run("async", [str(tmp_path / "no-such-cli")])
    assert result.error is not None
    (span,) = telemetry.finished()
    assert (span.attributes or {})["error.type"] == "cli_not_found"
    assert telemetry.counts() == {("cli_not_found", "run_failed"): 1}


def test_a_failed_sync_agent_run_is_reported(telemetry: Telemetry, tmp_path: Path) -> None:
    argv = runner_support.script(tmp_path, "sys.exit(3)")
    options = RunOptions(keep_events=None)
    with telemetry.tracer.start_as_current_span("run"):
        events = list(run_process_sync(runner_support.MODULE, argv, options))  # type: ignore[arg-type]
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.error is not None
    assert result.error.code == "cli_crashed"
    (span,) = telemetry.finished()
    assert (span.attributes or {})["error.type"] == "cli_crashed"
    assert telemetry.counts() == {("cli_crashed", "run_failed"): 1}


def test_a_hook_that_raises_changes_nothing(
    fake: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    before = rc.instrumentation.get_failure_hooks()
    seen: list[rc.instrumentation.FailureEvent] = []

    def broken(event: rc.instrumentation.FailureEvent) -> None:
        raise RuntimeError("exporter down")

    rc.instrumentation.set_failure_hooks([broken, seen.append])
    try:
        fake.fail(Fault.rate_limited(retry_after_ms=10), times=1)
        assert rc.retry(sleep=no_wait).call(ask, fake) == "Hello from FakeProvider."
    finally:
        rc.instrumentation.set_failure_hooks(before)
    assert [(e.kind, e.code, e.attempt, e.wait_s) for e in seen] == [
        ("retry", "provider_rate_limited", 1, 0.01)
    ]
    assert "exporter down" in caplog.text


def test_hooks_are_checked_reset_and_turned_off() -> None:
    before = rc.instrumentation.get_failure_hooks()
    try:
        with pytest.raises(TypeError):
            rc.instrumentation.set_failure_hooks(["not callable"])  # type: ignore[list-item]
        rc.instrumentation.set_failure_hooks([])
        assert rc.instrumentation.get_failure_hooks() == ()
        rc.instrumentation.set_failure_hooks(None)
        assert len(rc.instrumentation.get_failure_hooks()) == 1  # the logging default
        otel.instrument()
        otel.instrument()
        assert (
            len(rc.instrumentation.get_failure_hooks()) == 2
        )  # instrument twice: still one otel hook
        otel.uninstrument()
        assert len(rc.instrumentation.get_failure_hooks()) == 1
    finally:
        rc.instrumentation.set_failure_hooks(before)


def test_the_default_hook_still_logs_retries(
    fake: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    fake.fail(Fault.overloaded(), times=1)
    caplog.set_level("WARNING", logger="recoverable.retry")
    rc.retry(sleep=no_wait, rng=lambda: 0.5).call(ask, fake)
    assert [r.getMessage() for r in caplog.records if r.name == "recoverable.retry"] == [
        "attempt 1 failed with provider_overloaded; retrying in 0.500 s"
    ]


def test_importing_recoverable_and_its_hooks_loads_no_engine() -> None:
    code = (
        "import sys, recoverable as rc\n"
        "rc.instrumentation.get_failure_hooks(); rc.retry(attempts=1)\n"
        "heavy = {'temporalio', 'celery', 'kombu', 'dbos', 'opentelemetry', 'sqlalchemy'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"

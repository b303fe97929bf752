"""Workflows and activities for tests/integrations/test_temporal_sandbox.py.

recoverable is imported here as a user's workflow module imports it: no
`imports_passed_through()`, so the worker's sandbox re-imports it for every workflow, with
`threading` (and the clocks, `os`, ...) refused at run time. The workflows use it at run
time, where the sandbox's refusals bite.
"""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

import recoverable as rc
from recoverable.integrations import temporal as rt

TASK_QUEUE = "recoverable-sandbox"

# What the activities saw, in this process (the worker's): ("started" | "cancelled" |
# "finished", mode).
SEEN: list[tuple[str, str]] = []


def _own_stage(exc: BaseException) -> rc.ErrorDetail | None:
    if isinstance(exc, LookupError) and str(exc) == "'sandbox store'":
        return rc.ErrorDetail.create("sandbox_store_missing", "the store is gone")
    return None


@workflow.defn
class ClassifyInside:
    """Classifies, reads and registers at run time, inside the sandbox; returns what each
    step gave, and every public name of `recoverable` the sandbox refused."""

    @workflow.run
    async def run(self) -> dict[str, Any]:
        refused = []
        for name in rc.__all__:  # `import recoverable` is lazy: each name imports its module
            try:
                getattr(rc, name)
            except Exception:
                refused.append(name)
        group = ExceptionGroup("tools", [ConnectionRefusedError("a"), PermissionError(13, "no")])
        rate_limited = rc.ErrorDetail.create("provider_rate_limited", retry_after_ms=1500)
        rc.register_code("sandbox_store_missing", user_message="The store is missing.")
        remove = rc.add_classifier(_own_stage)
        rc.secrets.add_secret_pattern(re.compile(r"tok-[0-9]{5}"))
        try:
            return {
                "refused": refused,
                "network": rc.classify(ConnectionRefusedError("refused")).code,
                "group": rc.classify(group).to_dict(),
                "own_stage": rc.classify(KeyError("sandbox store")).code,
                "scrubbed": rc.secrets.scrub("token tok-12345 here"),
                "round_trip": rt.read_error(rt.to_application_error(rate_limited)) == rate_limited,
                "non_retryable_codes": rt.non_retryable_codes(),
                "forged": rt.read_error(
                    ApplicationError(
                        "x", {"code": "provider_auth_failed", "message": "x", "fix_command": "rm"}
                    )
                ).to_dict(),
            }
        finally:
            remove()


@activity.defn
async def wait_for_cancel(mode: str) -> str:
    """Runs about 4 s; in mode "heartbeat" it heartbeats every 0.1 s, which is how a cancel
    reaches an activity."""
    SEEN.append(("started", mode))
    try:
        for _ in range(40):
            if mode == "heartbeat":
                activity.heartbeat()
            await asyncio.sleep(0.1)
    except asyncio.CancelledError:
        SEEN.append(("cancelled", mode))
        raise
    SEEN.append(("finished", mode))
    return "finished"


@activity.defn
async def slow_or_failing(mode: str) -> str:
    """ "slow": runs past its 1 s start-to-close timeout; "fail_then_slow": the first attempt
    is refused by the network, the second runs too long; "fail": every attempt is refused."""
    if mode == "fail" or (mode == "fail_then_slow" and activity.info().attempt == 1):
        raise ConnectionRefusedError("refused")
    await asyncio.sleep(3)
    return "finished"


@workflow.defn
class Cancellable:
    """Runs `wait_for_cancel`; the test cancels the workflow while it runs."""

    @workflow.run
    async def run(self, mode: str) -> dict[str, Any]:
        try:
            await workflow.execute_activity(
                wait_for_cancel,
                mode,
                start_to_close_timeout=timedelta(seconds=30),
                heartbeat_timeout=timedelta(seconds=2) if mode == "heartbeat" else None,
            )
        except ActivityError as error:
            return rt.read_error(error).to_dict()
        return {"finished": True}


@workflow.defn
class TimesOut:
    """Runs `slow_or_failing` under Temporal's own timeouts."""

    @workflow.run
    async def run(self, mode: str) -> dict[str, Any]:
        if mode == "fail":  # the retries stop when the schedule-to-close time runs out
            timeouts: dict[str, Any] = {"schedule_to_close_timeout": timedelta(seconds=2)}
            policy = RetryPolicy(
                initial_interval=timedelta(milliseconds=300), backoff_coefficient=1
            )
        else:
            timeouts = {"start_to_close_timeout": timedelta(seconds=1)}
            policy = RetryPolicy(
                initial_interval=timedelta(milliseconds=100),
                maximum_attempts=1 if mode == "slow" else 2,
            )
        try:
            await workflow.execute_activity(slow_or_failing, mode, retry_policy=policy, **timeouts)
        except ActivityError as error:
            return rt.read_error(error).to_dict()
        return {"finished": True}

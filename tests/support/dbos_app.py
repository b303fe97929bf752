"""DBOS workflows for tests/integrations/test_dbos.py, run as a process of their own:

    python -m tests.support.dbos_app run DATABASE CASES_JSON   # run each case; print the outcomes
    python -m tests.support.dbos_app read DATABASE IDS_JSON    # a fresh process reads them back

DBOS keeps its state in the SQLite file DATABASE; nothing listens on a port. A case is a dict:
`id` (the workflow id), `loop` (`ours`: `rdb.step`; `dbos`: DBOS's own loop with
`rdb.should_retry` over `rdb.classified`; `dbos-async`: the same over an async function that
calls openai's async client, which reads only `url`), `serialization` (`native` or
`portable`), `sdk` (`openai`, `anthropic`, `google` or `httpx`), `url` (FakeProvider's), and
optionally `sdk_retries` (true: the SDK client at its default retries) and `mode` (`unknown`:
the step fails with an exception nobody classifies after the provider answered).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from dbos import DBOS, SetWorkflowID, WorkflowSerializationFormat

import recoverable as rc
from recoverable.integrations import dbos as rdb

from .engines import ReplyNotUnderstood

POLICY = rc.RetryPolicy(attempts=3, initial_delay=0.05, max_delay=0.1)
ATTEMPTS: list[float] = []  # monotonic time of every attempt of a step, in this process
MESSAGES: Any = [{"role": "user", "content": "hi"}]
STEPS_SEEN: list[list[Any]] = []  # (workflow id, step id) of every attempt, in this process


# Each SDK is imported where it is called: the process that only reads back needs none.


def _openai(url: str, sdk_retries: bool) -> str:
    import openai

    client = openai.OpenAI(api_key="sk-test", base_url=url + "/v1")  # max_retries=2
    if not sdk_retries:
        client = rc.without_sdk_retries(client)
    # The step's request key: the same on every attempt, DBOS's loop's or ours
    headers = rc.request_headers()
    reply = client.chat.completions.create(model="gpt-4o", messages=MESSAGES, extra_headers=headers)
    return str(reply.choices[0].message.content)


def _anthropic(url: str, sdk_retries: bool) -> str:
    import anthropic

    client = anthropic.Anthropic(api_key="sk-ant-test", base_url=url)
    if not sdk_retries:
        client = rc.without_sdk_retries(client)
    reply = client.messages.create(model="claude-x", max_tokens=8, messages=MESSAGES)
    block = reply.content[0]
    return str(getattr(block, "text", ""))


def _google(url: str, sdk_retries: bool) -> str:
    del sdk_retries  # google-genai does not retry unless told to
    from google import genai
    from google.genai import types as genai_types

    client = genai.Client(api_key="test", http_options=genai_types.HttpOptions(base_url=url))
    return str(client.models.generate_content(model="gemini-2.0-flash", contents="hi").text)


def _httpx(url: str, sdk_retries: bool) -> str:
    del sdk_retries  # httpx never retries a request that got an answer
    import httpx

    body = {"model": "gpt-4o", "messages": MESSAGES}
    response = httpx.post(url + "/v1/chat/completions", json=body, timeout=5)
    response.raise_for_status()
    return str(response.json()["choices"][0]["message"]["content"])


SDKS: dict[str, Callable[[str, bool], str]] = {
    "openai": _openai, "anthropic": _anthropic, "google": _google, "httpx": _httpx,
}  # fmt: skip


def ask(sdk: str, url: str, sdk_retries: bool, mode: str) -> str:
    """One attempt: ask the fake provider through `sdk`'s real client."""
    ATTEMPTS.append(time.monotonic())
    status = DBOS.step_status
    STEPS_SEEN.append([DBOS.workflow_id, None if status is None else status.step_id])
    text = SDKS[sdk](url, sdk_retries)
    if mode == "unknown":
        raise ReplyNotUnderstood("the reply had no field we expected")
    return text


@rdb.step(POLICY)
def ours(sdk: str, url: str, sdk_retries: bool, mode: str) -> str:
    """recoverable's retry inside the step, DBOS's loop off."""
    return ask(sdk, url, sdk_retries, mode)


@DBOS.step(retries_allowed=True, max_attempts=3, interval_seconds=0.05,
           should_retry=rdb.should_retry)  # fmt: skip
@rdb.classified
def dbos_loop(sdk: str, url: str, sdk_retries: bool, mode: str) -> str:
    """DBOS's own loop (a short interval: a server's hint is the longer wait)."""
    return ask(sdk, url, sdk_retries, mode)


@DBOS.step(retries_allowed=True, max_attempts=3, interval_seconds=0.05,
           should_retry=rdb.should_retry)  # fmt: skip
@rdb.classified
async def dbos_loop_async(url: str) -> str:
    """DBOS's own loop over an async function: the async openai client, its retries off."""
    import openai

    ATTEMPTS.append(time.monotonic())
    client = rc.without_sdk_retries(openai.AsyncOpenAI(api_key="sk-test", base_url=url + "/v1"))
    reply = await client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    return str(reply.choices[0].message.content)


@DBOS.workflow()
async def answer_async(url: str) -> str:
    return await dbos_loop_async(url)


async def run_async(case: dict[str, Any]) -> str:
    with SetWorkflowID(case["id"]):
        handle = await DBOS.start_workflow_async(answer_async, case["url"])
    return await handle.get_result()


STEPS = {"ours": ours, "dbos": dbos_loop}


@DBOS.workflow()
def answer(loop: str, sdk: str, url: str, sdk_retries: bool, mode: str) -> str:
    return STEPS[loop](sdk, url, sdk_retries, mode)


@DBOS.workflow(serialization_type=WorkflowSerializationFormat.PORTABLE)
def answer_portably(loop: str, sdk: str, url: str, sdk_retries: bool, mode: str) -> str:
    return STEPS[loop](sdk, url, sdk_retries, mode)


WORKFLOWS = {"native": answer, "portable": answer_portably}


def launch(database: str) -> None:
    DBOS(config={"name": "recoverable-tests", "system_database_url": f"sqlite:///{database}"})
    DBOS.launch()


def outcome(run: Any) -> dict[str, Any]:
    """A workflow's result, or its error's class name and detail."""
    try:
        return {"text": run()}
    except Exception as error:
        cause = error.__cause__  # the original: only in the process that ran the step
        return {
            "error_class": type(error).__name__,
            "cause_class": None if cause is None else type(cause).__name__,
            "detail": rdb.read_error(error).to_dict(),
        }


def run_cases(cases: list[dict[str, Any]]) -> dict[str, Any]:
    outcomes = {}
    for case in cases:
        ATTEMPTS.clear()
        STEPS_SEEN.clear()
        if case["loop"] == "dbos-async":
            result = outcome(lambda: asyncio.run(run_async(case)))  # noqa: B023 -- run at once
        else:
            result = outcome(_start(case).get_result)
        result["attempt_times"] = list(ATTEMPTS)
        result["steps"] = list(STEPS_SEEN)
        outcomes[case["id"]] = result
    return outcomes


def _start(case: dict[str, Any]) -> Any:
    arguments = (case["loop"], case["sdk"], case["url"], case.get("sdk_retries", False),
                 case.get("mode", "ok"))  # fmt: skip
    with SetWorkflowID(case["id"]):
        return DBOS.start_workflow(WORKFLOWS[case["serialization"]], *arguments)


def read_back(ids: list[str]) -> dict[str, Any]:
    return {
        workflow_id: outcome(DBOS.retrieve_workflow(workflow_id).get_result) for workflow_id in ids
    }


def main(command: str, database: str, argument: str) -> None:
    launch(database)
    try:
        if command == "run":
            outcomes = run_cases(json.loads(argument))
        else:
            outcomes = read_back(json.loads(argument))
    finally:
        DBOS.destroy()
    print(json.dumps(outcomes))


if __name__ == "__main__":
    main(*sys.argv[1:4])

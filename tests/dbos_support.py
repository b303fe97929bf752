"""DBOS workflows for tests/test_engine_dbos.py, run as a process of their own:

    python -m tests.dbos_support run DATABASE CASES_JSON   # run each case; print the outcomes
    python -m tests.dbos_support read DATABASE IDS_JSON    # a fresh process reads them back

DBOS keeps its state in the SQLite file DATABASE; nothing listens on a port. Each case is
(workflow id, serialization "native" or "portable", provider URL, mode).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import openai
from dbos import DBOS, SetWorkflowID, WorkflowSerializationFormat

import recoverable as rc
from recoverable.integrations import dbos as rdb

POLICY = rc.RetryPolicy(attempts=3, initial_delay=0.05, max_delay=0.1)
ATTEMPTS: list[float] = []  # monotonic time of every attempt of the step, in this process


class ReplyNotUnderstood(Exception):
    """A failure recoverable cannot classify: `unknown`."""


@rdb.step(POLICY)
def call_model(base_url: str, mode: str) -> str:
    """Ask the fake provider through the real openai client, its own retries off."""
    ATTEMPTS.append(time.monotonic())
    client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
    )
    if mode == "unknown":
        raise ReplyNotUnderstood("the reply had no field we expected")
    return str(reply.choices[0].message.content)


@DBOS.workflow()
def answer(base_url: str, mode: str) -> str:
    return call_model(base_url, mode)


@DBOS.workflow(serialization_type=WorkflowSerializationFormat.PORTABLE)
def answer_portably(base_url: str, mode: str) -> str:
    return call_model(base_url, mode)


WORKFLOWS = {"native": answer, "portable": answer_portably}


def launch(database: str) -> None:
    DBOS(config={"name": "recoverable-tests", "system_database_url": f"sqlite:///{database}"})
    DBOS.launch()


def outcome(run: Any) -> dict[str, Any]:
    """A workflow's result, or its error's class name and detail."""
    try:
        return {"text": run()}
    except Exception as error:
        return {
            "error_class": type(error).__name__,
            "detail": rdb.detail_from_error(error).to_dict(),
        }


def run_cases(cases: list[list[str]]) -> dict[str, Any]:
    outcomes = {}
    for workflow_id, serialization, base_url, mode in cases:
        ATTEMPTS.clear()
        with SetWorkflowID(workflow_id):
            handle = DBOS.start_workflow(WORKFLOWS[serialization], base_url, mode)
        result = outcome(handle.get_result)
        result["attempt_times"] = list(ATTEMPTS)
        outcomes[workflow_id] = result
    return outcomes


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

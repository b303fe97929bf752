# worker.py: a worker for both, and one run of the workflow (TEMPORAL_ADDRESS, OPENAI_API_KEY)
import asyncio
import os
import uuid

from activities import call_model
from temporalio.client import Client, WorkflowFailureError
from temporalio.worker import Worker
from workflows import Ask

from recoverable.integrations import temporal as rt


async def main() -> None:
    client = await Client.connect(os.environ.get("TEMPORAL_ADDRESS", "localhost:7233"))
    async with Worker(
        client,
        task_queue="ask",
        workflows=[Ask],
        activities=[call_model],
        interceptors=[rt.ClassifyInterceptor()],  # or @rt.classified on each activity
    ):
        try:
            reply = await client.execute_workflow(
                Ask.run, "Say hello", id=f"ask-{uuid.uuid4()}", task_queue="ask"
            )
            print(reply)
        except WorkflowFailureError as failure:
            detail = rt.read_error(failure)  # the activity's detail, through the workflow
            print(f"{detail.code}: {detail.user_message}")


if __name__ == "__main__":
    asyncio.run(main())

# workflows.py: the worker's sandbox imports this module as it is (no imports_passed_through)
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

from recoverable.integrations import temporal as rt


@workflow.defn
class Ask:
    @workflow.run
    async def run(self, prompt: str) -> str:
        try:
            reply: str = await workflow.execute_activity(
                "call_model",  # by name: the sandbox never imports the activity's SDK
                prompt,
                start_to_close_timeout=timedelta(minutes=1),
                retry_policy=RetryPolicy(
                    maximum_attempts=4, non_retryable_error_types=rt.non_retryable_codes()
                ),
            )
        except ActivityError as error:
            detail = rt.read_error(error)  # not retryable once Temporal ran out
            workflow.logger.warning("call_model failed: %s", detail.code)
            raise rt.to_application_error(detail) from None  # the workflow fails with it
        return reply

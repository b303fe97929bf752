# activities.py: the activity calls the model; whatever it raises reaches Temporal classified
import openai
from temporalio import activity

import recoverable as rc

# The SDK's own retries off: Temporal's retry, which obeys the classification, is the only one.
client = rc.without_sdk_retries(openai.AsyncOpenAI())


@activity.defn
async def call_model(prompt: str) -> str:
    reply = await client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": prompt}]
    )
    return reply.choices[0].message.content or ""

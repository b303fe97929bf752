"""The Celery app and tasks for tests/integrations/test_celery.py, imported by the worker processes
(`celery -A tests.support.celery_app worker`) and by the test that sends the tasks.

Broker and result backend: a redis-server the test starts on 127.0.0.1 (its URL in
RECOVERABLE_CELERY_REDIS), results stored with the JSON serializer. (Kombu's filesystem
broker was tried first: a consumer can read a message file its producer is still writing,
so under load a task can be lost, which is the broker's fault, not the one tested here.)
"""

from __future__ import annotations

import functools
import os
from typing import Any

import openai
from celery import Celery

import recoverable as rc
from recoverable.integrations import celery as rcc

from .engines import ReplyNotUnderstood

REDIS_VARIABLE = "RECOVERABLE_CELERY_REDIS"
SECRET = "sk-proj-" + "Abc123" * 8
POLICY = rc.RetryPolicy(attempts=3, initial_delay=0.05, max_delay=0.1)


def make_app(redis_url: str) -> Celery:
    """An app whose broker and JSON result backend are the redis-server at `redis_url`."""
    app = Celery("recoverable_tests", broker=redis_url, backend=redis_url)
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        worker_enable_remote_control=False,
        worker_prefetch_multiplier=1,
        broker_connection_retry_on_startup=True,
    )
    return app


app = make_app(os.environ.get(REDIS_VARIABLE, "redis://127.0.0.1:1/0"))

_clients: dict[str, openai.OpenAI] = {}


@app.task(bind=True, base=rcc.ClassifiedTask, recoverable_policy=POLICY, name="ask")
def ask(self: Any, base_urls: list[str], mode: str = "ok") -> dict[str, Any]:
    """Ask a fake provider through the real openai client (its own retries off). Attempt n
    goes to `base_urls[n - 1]` (the last one repeats), so a test can give each attempt its
    own provider."""
    attempt = self.recoverable_attempt
    url = base_urls[min(attempt, len(base_urls)) - 1]
    client = _clients.get(url)
    if client is None:
        client = _clients[url] = openai.OpenAI(api_key="sk-test", base_url=url, max_retries=0)
    ask = client.chat.completions.create
    if mode == "inner_retry":  # the author's own rc.retry defers to Celery's (one layer)
        ask = rc.retry(attempts=5)(ask)
    # The task's request key (from its id: the same on every Celery attempt, on any worker)
    messages = [{"role": "user", "content": "hi"}]
    reply = ask(model="gpt-4o", messages=messages, extra_headers=rc.request_headers())
    if mode == "unknown":
        raise ReplyNotUnderstood("the reply had no field we expected")
    if mode == "secret":
        raise ReplyNotUnderstood(f"rejected key {SECRET}")
    text = reply.choices[0].message.content
    return {"text": text, "attempt": attempt, "worker": self.request.hostname}


# How `ask_shared` builds its client: its retries off, the SDK's default (max_retries=2), or
# the default passed through rc.without_sdk_retries.
CLIENTS = ("off", "sdk", "without")
MODEL = "gpt-4o"


@functools.cache
def _client(url: str, how: str) -> openai.OpenAI:
    if how == "off":
        return openai.OpenAI(api_key="sk-test", base_url=url, max_retries=0)
    client = openai.OpenAI(api_key="sk-test", base_url=url)
    return rc.without_sdk_retries(client) if how == "without" else client


@functools.cache
def shared_fleet(redis_url: str, prefix: str, max_wait_ms: int | None) -> rc.fleet.Cooldowns:
    """The key every worker shares: one per test (its `prefix`) in the tests' redis-server."""
    fleet = rc.fleet.Cooldowns.redis(redis_url, prefix=prefix, max_wait_ms=max_wait_ms)
    return fleet.key(source="openai", model=MODEL)


def shared_key(task: Any) -> rc.fleet.Cooldowns | None:
    """`recoverable_cooldowns=` as a function of the task: its args name the key (None: no
    key)."""
    _url, _how, fleet = task.request.args
    if fleet is None:
        return None
    prefix, max_wait_ms = fleet
    return shared_fleet(os.environ[REDIS_VARIABLE], prefix, max_wait_ms)


@app.task(
    bind=True, base=rcc.ClassifiedTask, recoverable_policy=POLICY,
    recoverable_cooldowns=shared_key, name="ask_shared",
)  # fmt: skip
def ask_shared(
    self: Any, url: str, how: str, fleet: tuple[str, int | None] | None
) -> dict[str, Any]:
    """One chat completion with the client built as `how` says, under the shared key that
    `fleet` (prefix, max_wait_ms) names."""
    reply = _client(url, how).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    )
    return {
        "text": reply.choices[0].message.content,
        "attempt": self.recoverable_attempt,
        "retries": self.request.retries,
        "turned_back": (self.request.headers or {}).get(rcc.TURNED_BACK_HEADER, 0),
    }

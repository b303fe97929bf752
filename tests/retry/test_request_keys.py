"""Request keys: one key for every attempt of one `rc.retry` call, a new one for the next call.

Unit tests of every form, then the real openai and anthropic SDKs through a loopback
FakeProvider: the server records the `Idempotency-Key` each request carried.
"""

from __future__ import annotations

import asyncio
import contextvars
import re
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

import recoverable as rc
from recoverable._retry.engine_scope import engine_retries
from recoverable._retry.keys import (
    check_request_key,
    engine_key,
    is_request_key,
    keyed,
    sub_key,
)
from recoverable.testing import FakeProvider, Fault

MESSAGES: Any = [{"role": "user", "content": "hi"}]
KEY_SHAPE = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def no_wait(_seconds: float) -> None:
    pass


async def ano_wait(_seconds: float) -> None:
    pass


class Flaky:
    """Fails `failures` times with a retryable error, recording the key each attempt saw."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.keys: list[str | None] = []

    def __call__(self) -> str | None:
        self.keys.append(rc.request_key())
        if len(self.keys) <= self.failures:
            raise ConnectionResetError("reset")
        return rc.request_key()


# --- every form: one key per call ---------------------------------------------------------


def test_outside_a_retry_there_is_no_key_and_no_header() -> None:
    assert rc.request_key() is None
    assert rc.request_headers() == {}


def test_the_call_form_gives_every_attempt_one_key_and_the_next_call_a_new_one() -> None:
    first, second = Flaky(2), Flaky(1)
    retrying = rc.retry(attempts=3, sleep=no_wait)
    assert retrying.call(first) == first.keys[0]
    retrying.call(second)
    assert len(first.keys) == 3 and len(set(first.keys)) == 1
    assert len(second.keys) == 2 and len(set(second.keys)) == 1
    assert first.keys[0] != second.keys[0]
    assert all(KEY_SHAPE.fullmatch(str(key)) for key in first.keys + second.keys)
    assert rc.request_key() is None  # the scope closed with the call


@pytest.mark.parametrize("options", [{}, {"deadline": 60.0}], ids=["fast path", "slow path"])
def test_the_decorator_keys_each_call(options: dict[str, Any]) -> None:
    # The fast path reads no clock; a deadline takes the call form's path.
    seen: list[str | None] = []

    @rc.retry(attempts=3, sleep=no_wait, **options)
    def send(fail: bool) -> None:
        seen.append(rc.request_key())
        if fail and len(seen) == 1:
            raise ConnectionResetError("reset")

    send(True)
    send(False)
    assert seen[0] == seen[1] != seen[2]
    assert None not in seen
    assert rc.request_key() is None


def test_a_key_a_call_never_asks_for_is_never_made() -> None:
    @rc.retry
    def quiet() -> int:
        return 1

    assert quiet() == 1
    assert rc.request_key() is None


def test_the_block_form_keys_its_attempts() -> None:
    seen: list[str | None] = []
    for attempt in rc.retry(attempts=3, sleep=no_wait):
        with attempt:
            seen.append(rc.request_key())
            if len(seen) < 3:
                raise ConnectionResetError("reset")
    assert len(seen) == 3 and len(set(seen)) == 1 and seen[0] is not None
    assert rc.request_key() is None


def test_the_async_forms_key_their_attempts_and_a_task_started_inside_shares_the_key() -> None:
    async def main() -> None:
        seen: list[str | None] = []

        @rc.retry(attempts=3, asleep=ano_wait)
        async def send() -> None:
            child = await asyncio.create_task(_key_in_a_task())
            seen.append(rc.request_key())
            assert child == seen[-1]
            if len(seen) < 2:
                raise ConnectionResetError("reset")

        await send()
        await send()
        assert seen[0] == seen[1] != seen[2]
        direct = Flaky(1)

        async def adirect() -> str | None:
            return direct()

        await rc.retry(asleep=ano_wait).acall(adirect)
        assert direct.keys[0] == direct.keys[1] not in seen
        keys: list[str | None] = []
        async for attempt in rc.retry(asleep=ano_wait):
            with attempt:
                keys.append(rc.request_key())
                if len(keys) < 2:
                    raise ConnectionResetError("reset")
        assert keys[0] == keys[1] is not None
        assert rc.request_key() is None

    asyncio.run(main())


async def _key_in_a_task() -> str | None:
    return rc.request_key()


def test_the_stream_form_keys_every_attempt_s_source_and_leaves_the_reader_unkeyed() -> None:
    async def main() -> None:
        seen: list[str | None] = []
        between: list[str | None] = []

        async def source() -> AsyncIterator[int]:
            seen.append(rc.request_key())
            if len(seen) == 1:
                raise ConnectionResetError("reset")
            yield 1
            seen.append(rc.request_key())
            yield 2

        async for _item in rc.retry(asleep=ano_wait).stream(source):
            between.append(rc.request_key())
        assert len(seen) == 3 and len(set(seen)) == 1 and seen[0] is not None
        assert between == [None, None]  # the key is the source's, never left set in the reader

    asyncio.run(main())


def test_a_retry_inside_another_has_a_sub_key_of_the_outer_one() -> None:
    inner_keys: list[str | None] = []

    def inner() -> None:
        inner_keys.append(rc.request_key())
        if len(inner_keys) == 1:
            raise ConnectionResetError("reset")

    def outer() -> str | None:
        rc.retry(sleep=no_wait).call(inner)
        return rc.request_key()

    outer_key = rc.retry(sleep=no_wait).call(outer)
    assert inner_keys == [f"{outer_key}.1", f"{outer_key}.1"]


def test_sibling_retries_get_distinct_keys_and_the_outer_retry_resends_them_in_order() -> None:
    sends: list[tuple[int, str | None]] = []
    outer_keys: list[str | None] = []

    @rc.retry(sleep=no_wait)
    def send(step: int) -> None:
        sends.append((step, rc.request_key()))

    async def asend(step: int) -> None:
        sends.append((step, rc.request_key()))

    def step() -> None:
        outer_keys.append(rc.request_key())
        send(1)
        rc.retry(sleep=no_wait).call(send, 2)  # a retry inside a retry inside this one
        asyncio.run(rc.retry(asleep=ano_wait).acall(asend, 3))
        if len(outer_keys) == 1:
            raise ConnectionResetError("the step failed after its sends")

    rc.retry(attempts=2, sleep=no_wait).call(step)
    key = outer_keys[0]
    assert outer_keys == [key, key]
    first = [(1, f"{key}.1"), (2, f"{key}.2.1"), (3, f"{key}.3")]
    assert sends == first + first  # the resent step: the same key for each send, in order
    assert all(is_request_key(k) for _, k in sends)


@pytest.mark.parametrize("form", ["sync", "async"])
def test_the_block_form_resends_its_nested_calls_under_the_same_sub_keys(form: str) -> None:
    outer: list[str | None] = []
    sends: list[str | None] = []

    def body() -> None:
        outer.append(rc.request_key())
        sends.append(rc.retry(sleep=no_wait).call(rc.request_key))
        sends.append(rc.retry(sleep=no_wait).call(rc.request_key))
        if len(outer) == 1:
            raise ConnectionResetError("the block failed after its sends")

    async def ablock() -> None:
        async for attempt in rc.retry(attempts=2, asleep=ano_wait):
            with attempt:
                body()

    if form == "sync":
        for attempt in rc.retry(attempts=2, sleep=no_wait):
            with attempt:
                body()
    else:
        asyncio.run(ablock())
    key = outer[0]
    assert outer == [key, key]
    assert sends == [f"{key}.1", f"{key}.2"] * 2  # the second attempt: the same sub-keys


def test_an_engine_s_step_lends_its_key_to_its_first_retry_and_sub_keys_to_the_next() -> None:
    step = engine_key("temporal", "wf", "run", "1")
    with engine_retries("temporal", step):
        direct = rc.request_key()
        keys = [rc.retry(defer_to_engine=False).call(rc.request_key) for _ in range(3)]
    assert direct == step
    assert keys == [step, f"{step}.2", f"{step}.3"]


def test_the_block_and_stream_forms_inside_a_retry_get_sub_keys() -> None:
    async def main() -> list[str | None]:
        seen: list[str | None] = []

        async def source() -> AsyncIterator[int]:
            seen.append(rc.request_key())
            yield 1

        async def step() -> None:
            seen.append(rc.request_key())
            for attempt in rc.retry():
                with attempt:
                    seen.append(rc.request_key())
            async for _item in rc.retry().stream(source):
                pass

        await rc.retry().acall(step)
        return seen

    outer, block, stream = asyncio.run(main())
    assert (block, stream) == (f"{outer}.1", f"{outer}.2")


@given(
    st.text(alphabet="abcXYZ019._:-", min_size=1, max_size=128),
    st.integers(min_value=1, max_value=10**6),
)
def test_a_sub_key_is_a_valid_key_distinct_for_each_place(outer: str, ordinal: int) -> None:
    key = sub_key(outer, ordinal)
    assert is_request_key(key)
    assert key == sub_key(outer, ordinal)
    assert key != sub_key(outer, ordinal + 1) and key != outer


def test_a_sub_key_under_a_key_at_the_limit_stays_within_it() -> None:
    longest = "k" * 128
    with keyed(longest):
        keys = [rc.retry().call(rc.request_key) for _ in range(2)]
        nested = rc.retry().call(lambda: rc.retry().call(rc.request_key))
    assert keys[0] == longest
    assert all(is_request_key(key) for key in [*keys, nested])
    assert len({*keys, nested}) == 3


def test_a_caller_s_own_key_is_every_attempt_s_and_wins_over_an_outer_one() -> None:
    flaky = Flaky(1)
    assert rc.retry(request_key="order-42:v1", sleep=no_wait).call(flaky) == "order-42:v1"
    assert flaky.keys == ["order-42:v1", "order-42:v1"]
    with keyed("outer.key"):
        assert rc.request_key() == "outer.key"
        assert rc.retry(request_key="mine").call(rc.request_key) == "mine"
        assert rc.retry().call(rc.request_key) == "outer.key"
        assert rc.request_headers() == {"Idempotency-Key": "outer.key"}
    assert rc.request_key() is None


@pytest.mark.parametrize("bad", ["", "a" * 129, "has space", "é", "a/b", "k\n", 42, None])
def test_a_key_of_the_wrong_shape_is_refused_without_repeating_it(bad: object) -> None:
    if bad is not None:
        with pytest.raises(rc.RecoverableError) as refused:
            rc.retry(request_key=bad)  # type: ignore[arg-type]
        assert refused.value.code == "invalid_input"
        assert str(bad) not in refused.value.detail.message or str(bad) in {"", "a"}
    assert not is_request_key(bad)
    with pytest.raises(rc.RecoverableError):
        check_request_key(bad)


@given(st.text(max_size=200))
def test_the_shape_rule_is_helix_s(text: str) -> None:
    assert is_request_key(text) == (KEY_SHAPE.fullmatch(text) is not None)


@given(
    st.lists(st.text(max_size=40), min_size=1, max_size=4), st.sampled_from(["temporal", "dbos"])
)
def test_an_engine_key_is_a_valid_key_the_same_in_every_process_for_the_same_ids(
    ids: list[str], engine: str
) -> None:
    key = engine_key(engine, *ids)
    assert is_request_key(key) and key.startswith(f"{engine}:")
    assert key == engine_key(engine, *ids)
    assert key != engine_key(engine, *ids, "")  # another id list, another key


def test_an_engine_key_tells_apart_ids_a_plain_join_would_confuse() -> None:
    assert engine_key("temporal", "a:b", "c") != engine_key("temporal", "a", "b:c")


def test_an_engine_s_step_gives_every_retry_inside_its_key() -> None:
    with engine_retries("celery", engine_key("celery", "task-1")):
        inside = rc.retry(defer_to_engine=False).call(rc.request_key)
    assert inside == engine_key("celery", "task-1")
    assert rc.request_key() is None


def test_a_thread_copying_the_context_sees_the_call_s_key() -> None:
    def send() -> tuple[str | None, str | None]:
        context = contextvars.copy_context()
        return rc.request_key(), context.run(rc.request_key)

    here, copied = rc.retry().call(send)
    assert here == copied is not None


# --- the real SDKs, through a loopback server ---------------------------------------------


def test_openai_sends_one_key_on_every_attempt_of_a_call_and_a_new_one_on_the_next(
    fake: FakeProvider,
) -> None:
    client = openai.OpenAI(api_key="sk-test", base_url=fake.openai_url, max_retries=0)

    @rc.retry(attempts=3, sleep=no_wait)
    def ask() -> str:
        reply = client.chat.completions.create(
            model="gpt-4o", messages=MESSAGES, extra_headers=rc.request_headers()
        )
        return str(reply.choices[0].message.content)

    fake.fail(Fault.server_error(), times=2)
    assert ask() == "Hello from FakeProvider."
    assert ask() == "Hello from FakeProvider."
    requests = fake.requests
    assert [r.fault for r in requests] == ["server_error", "server_error", None, None]
    keys = [r.idempotency_key for r in requests]
    assert keys[0] == keys[1] == keys[2] is not None
    assert keys[3] is not None and keys[3] != keys[0]
    assert all(KEY_SHAPE.fullmatch(str(key)) for key in keys)
    # The SDK's own retry header says it did not retry: the attempts were ours.
    assert [r.headers.get("x-stainless-retry-count") for r in requests] == ["0"] * 4


def test_the_sdk_s_own_retries_resend_the_same_key(fake: FakeProvider) -> None:
    client = openai.OpenAI(api_key="sk-test", base_url=fake.openai_url, max_retries=2)
    fake.fail(Fault.rate_limited(retry_after=0.01), times=2)
    with keyed("send-7"):
        client.chat.completions.create(
            model="gpt-4o", messages=MESSAGES, extra_headers=rc.request_headers()
        )
    assert [r.idempotency_key for r in fake.requests] == ["send-7"] * 3
    assert [r.headers.get("x-stainless-retry-count") for r in fake.requests] == ["0", "1", "2"]


def test_without_a_key_the_sdks_send_no_idempotency_header(fake: FakeProvider) -> None:
    openai.OpenAI(
        api_key="sk-test", base_url=fake.openai_url, max_retries=0
    ).chat.completions.create(model="gpt-4o", messages=MESSAGES)
    anthropic.Anthropic(api_key="sk-ant", base_url=fake.url, max_retries=0).messages.create(
        model="claude-opus-4-8", max_tokens=16, messages=MESSAGES
    )
    assert [r.idempotency_key for r in fake.requests] == [None, None]
    assert all("idempotency-key" not in r.headers for r in fake.requests)


def test_async_anthropic_keeps_the_key_across_attempts(fake: FakeProvider) -> None:
    client = anthropic.AsyncAnthropic(api_key="sk-ant", base_url=fake.url, max_retries=0)

    @rc.retry(attempts=3, asleep=ano_wait)
    async def ask() -> None:
        await client.messages.create(
            model="claude-opus-4-8",
            max_tokens=16,
            messages=MESSAGES,
            extra_headers=rc.request_headers(),
        )

    async def main() -> None:
        await ask()
        await ask()
        await client.close()

    fake.fail(Fault.overloaded(), times=1)
    asyncio.run(main())
    keys = [r.idempotency_key for r in fake.requests]
    assert [r.fault for r in fake.requests] == ["overloaded", None, None]
    assert keys[0] == keys[1] != keys[2]
    assert None not in keys


def test_a_block_left_early_closes_its_key_scope() -> None:
    for attempt in rc.retry(request_key="block-1"):
        with attempt:
            assert rc.request_key() == "block-1"
        break
    assert rc.request_key() is None


def test_the_stream_form_takes_a_caller_s_key_and_an_outer_one() -> None:
    async def main() -> list[str | None]:
        seen: list[str | None] = []

        async def source() -> AsyncIterator[int]:
            seen.append(rc.request_key())
            yield 1

        async for _item in rc.retry(request_key="mine").stream(source):
            pass
        with keyed("outer"):
            async for _item in rc.retry().stream(source):
                pass
        return seen

    assert asyncio.run(main()) == ["mine", "outer"]

"""Request keys: one key for every attempt of one call, so a retried send is not run twice.

Inside a `rc.retry` call (every form: `call`, `acall`, the decorator, the block, `stream`),
`request_key()` is one key, the same on every attempt of that call and new for the next call;
a retry inside another keeps the outer key. Sent as `Idempotency-Key` (`request_headers()`,
for an SDK's `extra_headers=`), it lets a server that honours the header answer a repeated
send from the first one instead of running it again. An engine's adapter (Temporal, Celery,
DBOS) opens the scope with a key made from the engine's own ids, so the key is also the same
on every retry the engine makes.

A key is 1 to 128 characters of `[A-Za-z0-9._:-]` (Helix's rule for its request keys): what a
header, a log line and a database column all keep as it is. The key is made on first use (a
call that never asks for it costs one context variable set and reset, no uuid).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar, Token

from .._core.error import RecoverableError

__all__ = [
    "KEY_HEADER",
    "MAX_KEY_CHARS",
    "call_cell",
    "check_request_key",
    "close_key",
    "engine_key",
    "enter_cell",
    "is_request_key",
    "key_cell",
    "keyed",
    "open_key",
    "request_headers",
    "request_key",
]

KEY_HEADER = "Idempotency-Key"
"""The header a key is sent in (the IETF draft's and Stripe's name)."""
MAX_KEY_CHARS = 128
_KEY = re.compile(r"[A-Za-z0-9._:-]{1,128}")

# The current call's key, in a one-item list: made on first use, shared by every attempt
# (and every task the call starts, which copies the context and so the same list).
_cell: ContextVar[list[str | None] | None] = ContextVar("recoverable_request_key", default=None)
key_cell = _cell  # for the decorator's fast path, which opens the scope inline

KeyToken = Token[list[str | None] | None]


def is_request_key(value: object) -> bool:
    """Whether `value` is a request key: a str of 1 to 128 characters of `[A-Za-z0-9._:-]`."""
    return isinstance(value, str) and _KEY.fullmatch(value) is not None


def check_request_key(value: object) -> str:
    """`value` when it is a request key, else `invalid_input` (RecoverableError), whose
    message never repeats what was given (it may be anything, a credential too)."""
    if isinstance(value, str) and _KEY.fullmatch(value) is not None:
        return value
    raise RecoverableError(
        "invalid_input",
        f"a request key is 1 to {MAX_KEY_CHARS} characters of letters, digits and . _ : -",
    )


def request_key() -> str | None:
    """The request key of the `rc.retry` call running now (the same on each of its attempts,
    new for the next call), None outside one.

        @rc.retry
        def send(order):
            return client.post("/orders", json=order, headers={"Idempotency-Key": rc.request_key()})
    """
    cell = _cell.get()
    if cell is None:
        return None
    key = cell[0]
    if key is None:
        import uuid  # on first use: most calls never ask for their key

        key = cell[0] = str(uuid.uuid4())
    return key


def request_headers() -> dict[str, str]:
    """The headers that carry the current call's request key: `{"Idempotency-Key": key}`
    inside a `rc.retry` call, `{}` outside one. For an SDK's `extra_headers=`, read inside
    the retried function (an argument of `.call(...)` is read before the call begins):

        @rc.retry(attempts=3)
        def ask(messages):
            return client.chat.completions.create(
                model="gpt-4o", messages=messages, extra_headers=rc.request_headers()
            )

    The openai and anthropic SDKs send no idempotency header of their own (their clients'
    `_idempotency_header` is None), so nothing is sent twice; their own retries resend the
    same `extra_headers`."""
    key = request_key()
    return {} if key is None else {KEY_HEADER: key}


def open_key(key: str | None = None) -> KeyToken | None:
    """Open a call's key scope: `key` when given (checked), else a key made on first use;
    None (nothing opened) when a scope is already open and no key is given: the outer key
    stays. Close it with `close_key`."""
    if key is None:
        if _cell.get() is not None:
            return None
        return _cell.set([None])
    return _cell.set([check_request_key(key)])


def call_cell(key: str | None = None) -> list[str | None]:
    """The key cell of a call that `open_key(key)` would open, without opening it: the open
    scope's when no key is given, else a new one (for the stream form, which enters it
    around each step of its source: `enter_cell`)."""
    cell = _cell.get() if key is None else None
    return [None if key is None else check_request_key(key)] if cell is None else cell


def enter_cell(cell: list[str | None]) -> KeyToken:
    """Make `cell` the current key's until `close_key`."""
    return _cell.set(cell)


def close_key(token: KeyToken | None) -> None:
    """Close what `open_key` opened (nothing for None)."""
    if token is None:
        return
    # A generator closed from another context (the garbage collector's) cannot reset: the
    # context it ran in is gone with it.
    with contextlib.suppress(ValueError):
        _cell.reset(token)


@contextlib.contextmanager
def keyed(key: str | None = None) -> Iterator[None]:
    """The block as one call's key scope (`open_key`): every `rc.retry` inside keeps it."""
    token = open_key(key)
    try:
        yield
    finally:
        close_key(token)


def engine_key(engine: str, *ids: object) -> str:
    """The key of an engine's step from the engine's own ids (Temporal's workflow, run and activity
    ids, Celery's task id, DBOS's workflow and step ids): the same on every retry the engine
    makes, in any process. Hashed, so any id (of any length or characters) gives a valid key
    and two different id lists never give the same one."""
    import hashlib  # the engines' adapters only

    joined = "\x00".join(str(part) for part in ids)
    digest = hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()[:40]
    return f"{engine}:{digest}"

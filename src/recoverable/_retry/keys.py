"""Request keys: one key for every attempt of one call, so a retried send is not run twice.

Inside a `rc.retry` call (every form: `call`, `acall`, the decorator, the block, `stream`),
`request_key()` is one key, the same on every attempt of that call and new for the next call.
Sent as `Idempotency-Key` (`request_headers()`, for an SDK's `extra_headers=`), it lets a
server that honours the header answer a repeated send from the first one instead of running
it again.

A retry opened inside another call's attempt is another send, so it has a key of its own: the
n-th one opened in an attempt of a call keyed K is `K.n`. The count starts again with each
attempt of the outer call (`restart_calls`), so a step the outer call sends again carries the
sub-keys it carried the first time, in order, and is deduplicated; two sibling sends never
share one key. An engine's adapter (Temporal, Celery, DBOS) opens its step's scope with a key
made from the engine's own ids (`open_step`): the first retry inside uses that key itself, the
next ones `K.2`, `K.3`, so they are the same on every retry the engine makes.

A key is 1 to 128 characters of `[A-Za-z0-9._:-]` (Helix's rule for its request keys): what a
header, a log line and a database column all keep as it is (a `K.n` that would pass the limit
has a digest of K in its place). A key is made on first use, once, whichever thread asks first
(a call that never asks for it costs one context variable set and reset, no uuid).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from contextvars import ContextVar, Token

from .._core.error import RecoverableError

__all__ = [
    "KEY_HEADER",
    "MAX_KEY_CHARS",
    "KeyCell",
    "call_cell",
    "check_request_key",
    "close_key",
    "engine_key",
    "enter_cell",
    "is_request_key",
    "key_cell",
    "keyed",
    "open_key",
    "open_step",
    "request_headers",
    "request_key",
    "restart_calls",
    "sub_key",
]

KEY_HEADER = "Idempotency-Key"
"""The header a key is sent in (the IETF draft's and Stripe's name)."""
MAX_KEY_CHARS = 128
_KEY = re.compile(r"[A-Za-z0-9._:-]{1,128}")
# Makes each key once (two threads that copied one context may ask at once) and counts the
# calls a scope opens (from any of its threads).
_lock = threading.Lock()


class KeyCell:
    """One call's (or an engine step's) key, made on first use and shared by every attempt
    (and every task or thread the call starts, which copies the context and so this cell)."""

    __slots__ = ("calls", "key", "lends", "ordinal", "outer")

    def __init__(
        self,
        key: str | None = None,
        outer: KeyCell | None = None,
        ordinal: int = 0,
        lends: bool = False,
    ) -> None:
        self.key = key
        """The key once made (or given)."""
        self.outer = outer
        """The scope this call was opened in, whose key its own is made from."""
        self.ordinal = ordinal
        """Which of `outer`'s calls this is (from 1); 0: it uses `outer`'s key itself."""
        self.lends = lends
        """Whether the first call opened inside uses this key itself (an engine's step)."""
        self.calls = 0
        """How many calls the current attempt opened inside (`restart_calls`)."""


# The current call's key cell: made on first use, shared by every attempt.
_cell: ContextVar[KeyCell | None] = ContextVar("recoverable_request_key", default=None)
key_cell = _cell  # for the decorator's fast path, which opens the scope inline

KeyToken = Token[KeyCell | None]


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
    key = cell.key
    return _make(cell) if key is None else key


def _make(cell: KeyCell) -> str:
    """`cell`'s key, made now: once, whichever thread asks first."""
    outer = cell.outer
    if outer is None:
        import uuid  # on first use: most calls never ask for their key

        made = str(uuid.uuid4())
    else:
        base = outer.key or _make(outer)
        made = base if cell.ordinal == 0 else sub_key(base, cell.ordinal)
    with _lock:
        if cell.key is None:
            cell.key = made
        return cell.key


def sub_key(outer: str, ordinal: int) -> str:
    """The key of the `ordinal`-th call (from 1) opened inside a call keyed `outer`: `outer.n`,
    or a digest of `outer` in its place when that would pass the 128 characters."""
    suffix = f".{ordinal}"
    if len(outer) + len(suffix) > MAX_KEY_CHARS:
        import hashlib  # only for a key near the limit

        outer = hashlib.sha256(outer.encode("utf-8", "surrogatepass")).hexdigest()[:40]
    return outer + suffix


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


def call_cell(key: str | None = None) -> KeyCell:
    """The key cell of a call opened now, not yet entered (`enter_cell`): `key`'s when given
    (checked), else a new key, or under an open scope the sub-key of its next call."""
    if key is not None:
        return KeyCell(check_request_key(key))
    outer = _cell.get()
    if outer is None:
        return KeyCell()
    with _lock:
        outer.calls += 1
        ordinal = outer.calls
    return KeyCell(None, outer, 0 if outer.lends and ordinal == 1 else ordinal)


def open_key(key: str | None = None) -> KeyToken:
    """Open a call's key scope (`call_cell`) until `close_key`."""
    return _cell.set(call_cell(key))


def open_step(key: str) -> KeyToken:
    """Open an engine step's scope keyed `key` (checked): the first call inside uses it, the
    next ones its sub-keys. Close it with `close_key`."""
    return _cell.set(KeyCell(check_request_key(key), lends=True))


def enter_cell(cell: KeyCell) -> KeyToken:
    """Make `cell` the current key's until `close_key`."""
    return _cell.set(cell)


def restart_calls(cell: KeyCell | None = None) -> None:
    """A new attempt of `cell`'s call (by default the current one): its nested calls are
    counted from 1 again, so they get the sub-keys the last attempt's got, in order (a resent
    step is deduplicated)."""
    if cell is None:
        cell = _cell.get()
    if cell is not None:
        cell.calls = 0


def close_key(token: KeyToken | None) -> None:
    """Close what `open_key` or `enter_cell` opened (nothing for None)."""
    if token is None:
        return
    # A coroutine or generator closed from another context (the garbage collector's, a
    # timeout's) cannot reset: the context it ran in is gone with it.
    with contextlib.suppress(ValueError):
        _cell.reset(token)


@contextlib.contextmanager
def keyed(key: str) -> Iterator[None]:
    """The block as an engine step's key scope (`open_step`): its first `rc.retry` uses it."""
    token = open_step(key)
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

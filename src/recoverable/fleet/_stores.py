"""Where fleet state lives: one process (memory), one machine (SQLite), a fleet (Redis).

A store keeps short strings under keys, each with a time to live, and offers one atomic
step: read a key, compute its new value with a pure function, write it back, with nothing
interleaved. All of the cooldown, breaker and budget rules live in that pure function
(`_cooldowns`), so the three stores cannot disagree. A store that fails (Redis down, the
SQLite file locked for too long) is replaced by a local one for a while, with a warning: a
call is never blocked or crashed by its bookkeeping.

Every store has an async face too (`aget`, `aupdate`), which the async forms of `retry` use,
so an event loop is never held up by a store: memory answers directly, SQLite runs in a
worker thread, Redis through `redis.asyncio` (one client per event loop).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .._core.untrusted import clean_text, safe_str

if TYPE_CHECKING:
    import sqlite3

__all__ = ["CooldownStore", "FallibleStore", "MemoryStore", "RedisStore", "SqliteStore"]

R = TypeVar("R")
Change = Callable[[str | None], tuple[str | None, R]]
"""Old value (None: absent) -> (new value, None to delete; what the caller gets back)."""

logger = logging.getLogger("recoverable.cooldowns")

_RETRY_REMOTE_S = 5.0  # after a store failed, how long calls use the local store alone
_WATCH_TRIES = 64  # optimistic Redis transactions lost in a row before the store counts as failed
_SQLITE_BUSY_MS = 2000


class CooldownStore(Protocol):
    """What `Cooldowns` needs of a store: a read, and an atomic read-change-write."""

    def get(self, key: str) -> str | None:
        """The live value under `key`, or None."""
        ...

    def update(self, key: str, change: Change[R], ttl_s: float) -> R:
        """Atomically replace the value under `key` by `change(old)[0]` (kept `ttl_s`
        seconds; None deletes it) and return `change(old)[1]`. `change` is pure: a store may
        call it more than once."""
        ...

    async def aget(self, key: str) -> str | None:
        """`get`, without holding up the event loop."""
        ...

    async def aupdate(self, key: str, change: Change[R], ttl_s: float) -> R:
        """`update`, without holding up the event loop."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


async def in_thread(fn: Callable[..., R], *args: Any) -> R:
    """`fn(*args)` in a worker thread of the running loop: asyncio's, else trio's."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no asyncio loop: trio (the async retry runs under both)
        import trio

        return await trio.to_thread.run_sync(fn, *args)
    return await asyncio.to_thread(fn, *args)


class MemoryStore:
    """One process: a dict behind a lock."""

    def __init__(self) -> None:
        self._values: dict[str, tuple[str, float]] = {}  # key -> (value, expires, monotonic)
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        """The live value under `key`, or None."""
        item = self._values.get(key)
        if item is None or item[1] <= time.monotonic():
            return None
        return item[0]

    def update(self, key: str, change: Change[R], ttl_s: float) -> R:
        """Read, change and write `key` under the lock."""
        with self._lock:
            new, result = change(self.get(key))
            if new is None:
                self._values.pop(key, None)
            else:
                self._values[key] = (new, time.monotonic() + ttl_s)
            if len(self._values) > 4096:  # now and then, forget what has expired
                now = time.monotonic()
                self._values = {k: v for k, v in self._values.items() if v[1] > now}
            return result

    async def aget(self, key: str) -> str | None:
        """`get`: a dict lookup, done on the loop."""
        return self.get(key)

    async def aupdate(self, key: str, change: Change[R], ttl_s: float) -> R:
        """`update`: the lock is only ever held for a pure change, done on the loop."""
        return self.update(key, change, ttl_s)

    def close(self) -> None:
        """Nothing to release."""


class SqliteStore:
    """One machine: a SQLite file in WAL mode, a connection per thread and process.

    A change runs in a `BEGIN IMMEDIATE` transaction, which takes the write lock first, so
    two processes never read the same old value.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = os.fspath(path)
        self._local = threading.local()
        self._connect()  # fail here, at construction, when the path is unusable

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            return conn
        import sqlite3  # here: a process that keeps its cooldowns in memory never loads it

        conn = sqlite3.connect(self._path, timeout=_SQLITE_BUSY_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {_SQLITE_BUSY_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS recoverable_cooldowns "
            "(key TEXT PRIMARY KEY, value TEXT NOT NULL, expires REAL NOT NULL)"
        )
        self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def get(self, key: str) -> str | None:
        """The live value under `key`, or None."""
        row = (
            self._connect()
            .execute(
                "SELECT value FROM recoverable_cooldowns WHERE key = ? AND expires > ?",
                (key, time.time()),
            )
            .fetchone()
        )
        return None if row is None else str(row[0])

    def update(self, key: str, change: Change[R], ttl_s: float) -> R:
        """Read, change and write `key` in one immediate transaction."""
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            now = time.time()
            row = conn.execute(
                "SELECT value FROM recoverable_cooldowns WHERE key = ? AND expires > ?",
                (key, now),
            ).fetchone()
            new, result = change(None if row is None else str(row[0]))
            if new is None:
                conn.execute("DELETE FROM recoverable_cooldowns WHERE key = ?", (key,))
            else:
                conn.execute(
                    "INSERT OR REPLACE INTO recoverable_cooldowns VALUES (?, ?, ?)",
                    (key, new, now + ttl_s),
                )
            if hash(key) % 64 == 0:  # now and then, forget what has expired
                conn.execute("DELETE FROM recoverable_cooldowns WHERE expires <= ?", (now,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return result

    async def aget(self, key: str) -> str | None:
        """`get` in a worker thread (which has a connection of its own)."""
        return await in_thread(self.get, key)

    async def aupdate(self, key: str, change: Change[R], ttl_s: float) -> R:
        """`update` in a worker thread: a busy file waits there, not on the loop."""
        return await in_thread(self.update, key, change, ttl_s)

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class RedisStore:
    """A fleet: Redis (redis-py, imported on first use), keys with a TTL, changes in
    optimistic transactions (WATCH, then MULTI/EXEC, again when another writer came first).

    Timeouts are short: a Redis that does not answer within `timeout_s` counts as down.
    """

    def __init__(self, url: str, *, prefix: str = "recoverable:", timeout_s: float = 0.5) -> None:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self._url = url
        self._prefix = prefix
        # No retries of redis-py's own: a store that does not answer in time counts as down
        # at once (its default retries would hold a call up for seconds).
        self._options: dict[str, Any] = {
            "socket_timeout": timeout_s,
            "socket_connect_timeout": timeout_s,
            "retry": Retry(NoBackoff(), 0),
        }
        self._redis = redis.Redis.from_url(url, **self._options)
        self._watch_error: type[Exception] = redis.WatchError
        # redis.asyncio's connections belong to the loop that opened them: one client each
        # (a client holds its loop, so a weak mapping would keep both: closed loops are
        # dropped whenever a new loop needs a client).
        self._async: dict[asyncio.AbstractEventLoop, Any] = {}

    def _async_client(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._async.get(loop)
        if client is None:
            import redis.asyncio

            for closed in [old for old in self._async if old.is_closed()]:
                del self._async[closed]
            client = redis.asyncio.Redis.from_url(self._url, **self._options)
            self._async[loop] = client
        return client

    def get(self, key: str) -> str | None:
        """The live value under `key`, or None."""
        value: Any = self._redis.get(self._prefix + key)
        return None if value is None else bytes(value).decode()

    def update(self, key: str, change: Change[R], ttl_s: float) -> R:
        """Read, change and write `key` in a WATCH transaction, again if it was raced."""
        name = self._prefix + key
        ttl_ms = max(1, int(ttl_s * 1000))
        with self._redis.pipeline() as pipe:
            for _ in range(_WATCH_TRIES):
                try:
                    pipe.watch(name)  # type: ignore[no-untyped-call]
                    old: Any = pipe.get(name)
                    new, result = change(None if old is None else bytes(old).decode())
                    _queue_write(pipe, name, new, ttl_ms)
                    pipe.execute()
                    return result
                except self._watch_error:
                    continue
        raise TimeoutError(f"Redis key {key!r} changed under us {_WATCH_TRIES} times in a row")

    async def aget(self, key: str) -> str | None:
        """`get` through redis.asyncio (under trio: redis-py in a worker thread)."""
        try:
            client = self._async_client()
        except RuntimeError:
            return await in_thread(self.get, key)
        value: Any = await client.get(self._prefix + key)
        return None if value is None else bytes(value).decode()

    async def aupdate(self, key: str, change: Change[R], ttl_s: float) -> R:
        """`update` through redis.asyncio: the same WATCH transaction, awaited."""
        try:
            client = self._async_client()
        except RuntimeError:
            return await in_thread(self.update, key, change, ttl_s)
        name = self._prefix + key
        ttl_ms = max(1, int(ttl_s * 1000))
        async with client.pipeline() as pipe:
            for _ in range(_WATCH_TRIES):
                try:
                    await pipe.watch(name)
                    old: Any = await pipe.get(name)
                    new, result = change(None if old is None else bytes(old).decode())
                    _queue_write(pipe, name, new, ttl_ms)
                    await pipe.execute()
                    return result
                except self._watch_error:
                    continue
        raise TimeoutError(f"Redis key {key!r} changed under us {_WATCH_TRIES} times in a row")

    def close(self) -> None:
        """Close the connection pool (the async clients' connections close with their loop)."""
        self._redis.close()
        self._async.clear()


class FallibleStore:
    """A shared store with a local one behind it: when the shared one fails, the call goes
    on with local state and a warning, and the shared one is tried again `_RETRY_REMOTE_S`
    later."""

    def __init__(self, shared: CooldownStore, *, name: str) -> None:
        self.shared = shared
        self.local = MemoryStore()
        self._name = name
        self._down_until = 0.0

    def _failed(self, exc: Exception) -> None:
        self._down_until = time.monotonic() + _RETRY_REMOTE_S
        logger.warning(
            "the %s cooldown store failed (%s: %s); using this process's own state for %.0f s",
            self._name,
            type(exc).__name__,
            clean_text(safe_str(exc), 300),  # a store's error may quote its URL: scrubbed
            _RETRY_REMOTE_S,
            extra={"store": self._name},
        )

    def get(self, key: str) -> str | None:
        """The shared value, or the local one while the shared store is down."""
        if time.monotonic() >= self._down_until:
            try:
                return self.shared.get(key)
            except Exception as exc:
                self._failed(exc)
        return self.local.get(key)

    def update(self, key: str, change: Change[R], ttl_s: float) -> R:
        """The change in the shared store, or in the local one while it is down."""
        if time.monotonic() >= self._down_until:
            try:
                return self.shared.update(key, change, ttl_s)
            except Exception as exc:
                self._failed(exc)
        return self.local.update(key, change, ttl_s)

    async def aget(self, key: str) -> str | None:
        """`get`, awaited."""
        if time.monotonic() >= self._down_until:
            try:
                return await self.shared.aget(key)
            except Exception as exc:
                self._failed(exc)
        return self.local.get(key)

    async def aupdate(self, key: str, change: Change[R], ttl_s: float) -> R:
        """`update`, awaited."""
        if time.monotonic() >= self._down_until:
            try:
                return await self.shared.aupdate(key, change, ttl_s)
            except Exception as exc:
                self._failed(exc)
        return self.local.update(key, change, ttl_s)

    def close(self) -> None:
        """Close the shared store."""
        try:
            self.shared.close()
        except Exception as exc:  # closing a broken connection is not the caller's problem
            logger.debug("closing the %s cooldown store failed: %s", self._name, type(exc).__name__)


def _queue_write(pipe: Any, name: str, new: str | None, ttl_ms: int) -> None:
    """The transaction's write, queued (the same for redis-py's sync and asyncio pipelines):
    the new value with its TTL, or the key deleted when the change leaves nothing."""
    pipe.multi()
    if new is None:
        pipe.delete(name)
    else:
        pipe.set(name, new, px=ttl_ms)

"""Test support for the fleet: the virtual clock's start, and one `Cooldowns` factory per store
(the redis one on tests/support/redis.py's server), so the same tests run against all three."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import recoverable as rc
from recoverable.fleet._stores import MemoryStore

from ..support.retry import Clock

STORES = ("memory", "sqlite", "redis")


# Wall-clock seconds a fleet test starts at (a store keeps absolute times).
NOW = 1_800_000_000.0


Factory = Callable[..., rc.fleet.Cooldowns]


def factory(kind: str, folder: Path, redis_url: str | None) -> Factory:
    """A function building `Cooldowns` on one shared backing store, as a new process would
    (memory: the same store object; sqlite: the same file; redis: the same key prefix)."""
    if kind == "memory":
        store = MemoryStore()
        return lambda **options: rc.fleet.Cooldowns(store, **options)
    if kind == "sqlite":
        path = folder / "fleet.sqlite3"
        return lambda **options: rc.fleet.Cooldowns.sqlite(path, **options)
    assert redis_url is not None
    prefix = f"test-{uuid.uuid4().hex[:8]}:"
    return lambda **options: rc.fleet.Cooldowns.redis(redis_url, prefix=prefix, **options)


def raw_contents(cooldowns: rc.fleet.Cooldowns) -> str:
    """Everything the store holds, keys and values, as one text (to look for secrets in)."""
    store: Any = cooldowns.store
    shared = getattr(store, "shared", store)
    if hasattr(shared, "_values"):
        return repr(shared._values)
    if hasattr(shared, "_path"):
        import sqlite3

        with sqlite3.connect(shared._path) as conn:
            return repr(conn.execute("SELECT * FROM recoverable_cooldowns").fetchall())
    client = shared._redis
    return repr([(k, client.get(k)) for k in client.keys("*")])


CREDENTIAL = "sk-proj-Zq3v9T1xS8uVbN2mK7wLpR4dYcE6hJ0a"


def worker(make: Factory, clock: Clock, **options: Any) -> rc.fleet.Cooldowns:
    """One worker's view of the fleet key (a new instance: as another process would build)."""
    return make(clock=clock, **options).key(source="openai", model="gpt-4o", credential=CREDENTIAL)


def retrying(clock: Clock, cooldowns: rc.fleet.Cooldowns, **options: Any) -> rc.Retrying:
    options.setdefault("rng", lambda: 1.0)
    return rc.retry(cooldowns=cooldowns, sleep=clock.sleep, clock=clock, **options)


def rate_limited(ms: int | None = 2000) -> rc.RecoverableError:
    return rc.RecoverableError("provider_rate_limited", "429", retry_after_ms=ms, source="openai")


def refusal(call: Callable[[], object]) -> rc.ErrorDetail:
    with pytest.raises(rc.RecoverableError) as info:
        call()
    return info.value.detail

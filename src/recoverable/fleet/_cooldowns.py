"""Fleet-wide recovery: `Cooldowns`, the shared state `retry(..., cooldowns=...)` consults.

One worker's 429 quiets the key for every worker that shares the store; a quota stops it
for all; a key that keeps failing opens its circuit for all; a task's attempts and cost
survive restarts. The rules are pure (`_cooldown_rules`), the stores hold strings
(`_cooldown_stores`); this module joins them into the gate the retry loop consults.

    fleet = rc.fleet.Cooldowns.redis("redis://127.0.0.1:6379/0")
    openai_4o = fleet.key(source="openai", model="gpt-4o", credential=api_key)
    answer = rc.retry(policy, cooldowns=openai_4o).call(client.responses.create, ...)

The credential is hashed (SHA-256, 16 hex digits) into the key and never stored or shown.
The retry loop (`_retry`) calls the gate: `before_call` before an attempt, `after_failure` or
`after_success` after it, each with an async face (`abefore_call`, ...) for async code.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import os
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .._core.codes import codes
from .._core.detail import ErrorDetail
from .._core.error import RecoverableError
from ._rules import (
    GO,
    FleetPolicy,
    Gate,
    KeyState,
    TaskUsage,
    admit,
    charge,
    claim_attempt,
    failed,
    probe_succeeded,
)
from ._stores import CooldownStore, FallibleStore, MemoryStore

logger = logging.getLogger("recoverable.cooldowns")

__all__ = ["Cooldowns"]

_Update = tuple[str, Callable[[str | None], tuple[str | None, Any]], float]
"""One atomic change of the store: key, pure change, time to live (`CooldownStore.update`)."""

_KEY_PREFIX = "key:"
_TASK_PREFIX = "task:"
_TTL_MARGIN_S = 60.0
_TASK_TTL_S = 7 * 86400.0  # a task's usage is kept a week after its last attempt
_MAX_LABEL = 200


def _part(value: str | None) -> str:
    if value is None:
        return "*"
    if not isinstance(value, str):
        raise TypeError(f"a key part must be a string, not {type(value).__name__}")
    # Any text makes a usable key: lone surrogates (which no store can encode) spelled out.
    text = value[:_MAX_LABEL].encode("utf-8", "backslashreplace").decode("utf-8")
    return text.replace("/", "_") or "*"


def credential_hash(credential: str) -> str:
    """A short, stable, one-way name for a credential (never the credential itself)."""
    return hashlib.sha256(credential.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class Cooldowns:
    """Quiet times, circuit breakers and task budgets shared by every process using `store`.

    Build one with `Cooldowns.memory()` (this process), `Cooldowns.sqlite(path)` (processes
    of one machine) or `Cooldowns.redis(url)` (a fleet); narrow it with `.key(...)` (what a
    quiet time applies to) and `.task(...)` (what a budget applies to); pass it as
    `retry(policy, cooldowns=...)`. Values are immutable: `.key` and `.task` return copies
    that share the store.
    """

    store: CooldownStore
    """Where the state lives."""
    policy: FleetPolicy = field(default_factory=FleetPolicy)
    """How long quiet times and stops last; the breaker's thresholds."""
    scope: str = "*/*/*"
    """The key quiet times apply to: source/model/credential hash (see `key`)."""
    task_name: str | None = None
    """The task budgets apply to (see `task`); None: no budget."""
    max_attempts: int | None = None
    """The task's attempts in all, across processes and restarts."""
    max_cost_usd: float | None = None
    """The task's cost in all (what `charge` adds up)."""
    max_wait_ms: int | None = None
    """The longest a call waits out a quiet key; longer, it fails fast with the remaining
    time as `retry_after_ms` (0: never wait). None: the retry policy's `max_retry_after_ms`."""
    clock: Callable[[], float] = time.time
    """Wall-clock seconds, the same on every machine of the fleet (injectable for tests)."""

    @classmethod
    def memory(cls, **options: Any) -> Cooldowns:
        """Shared by the threads and tasks of this process (no dependency)."""
        return cls(MemoryStore(), **options)

    @classmethod
    def sqlite(cls, path: str | os.PathLike[str], **options: Any) -> Cooldowns:
        """Shared by the processes of one machine: a SQLite file (WAL mode) at `path`."""
        from ._stores import SqliteStore

        return cls(FallibleStore(SqliteStore(path), name="sqlite"), **options)

    @classmethod
    def redis(cls, url: str, *, prefix: str = "recoverable:", **options: Any) -> Cooldowns:
        """Shared by a fleet: Redis at `url` (the `redis` extra), keys under `prefix`."""
        from ._stores import RedisStore

        return cls(FallibleStore(RedisStore(url, prefix=prefix), name="redis"), **options)

    def __post_init__(self) -> None:
        if self.max_wait_ms is not None and (
            isinstance(self.max_wait_ms, bool)
            or not isinstance(self.max_wait_ms, int)
            or self.max_wait_ms < 0
        ):
            raise ValueError(f"max_wait_ms must be an integer >= 0, not {self.max_wait_ms!r}")

    # --- narrowing -------------------------------------------------------------------------

    def key(
        self,
        name: str | None = None,
        *,
        source: str | None = None,
        model: str | None = None,
        credential: str | None = None,
    ) -> Cooldowns:
        """The same store, for one key: by default (source, model, a hash of the credential);
        `name` replaces the three with a key of your own."""
        if name is not None:
            return replace(self, scope=_part(name))
        secret = "*" if credential is None else credential_hash(credential)
        return replace(self, scope=f"{_part(source)}/{_part(model)}/{secret}")

    def task(
        self, name: str, *, max_attempts: int | None = None, max_cost_usd: float | None = None
    ) -> Cooldowns:
        """The same store and key, with a budget for the logical task `name`: its attempts
        and cost are counted in the store, so they survive a crash and a restart."""
        if max_attempts is not None and (
            isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1
        ):
            raise ValueError(f"max_attempts must be an integer >= 1, not {max_attempts!r}")
        if max_cost_usd is not None and not _is_amount(max_cost_usd):
            raise ValueError(f"max_cost_usd must be a finite number >= 0, not {max_cost_usd!r}")
        return replace(
            self, task_name=_part(name), max_attempts=max_attempts, max_cost_usd=max_cost_usd
        )

    # --- reading and changing it by hand ----------------------------------------------------

    def charge(self, cost_usd: float) -> None:
        """Add `cost_usd` to the task's cost (a call at or over `max_cost_usd` is refused)."""
        if not _is_amount(cost_usd):
            raise ValueError(f"cost_usd must be a finite number >= 0, not {cost_usd!r}")
        name = self._task_key()

        def change(old: str | None) -> tuple[str | None, None]:
            return charge(TaskUsage.load(old, self.max_attempts), float(cost_usd)).dump(), None

        self.store.update(name, change, _TASK_TTL_S)

    def usage(self) -> TaskUsage:
        """The task's attempts and cost so far."""
        return TaskUsage.load(self.store.get(self._task_key()), self.max_attempts)

    def state(self) -> KeyState:
        """What the store holds for this key, as this process reads it (`_read`)."""
        return self._read(self.store.get(_KEY_PREFIX + self.scope))

    def _read(self, text: str | None) -> KeyState:
        """The stored state bounded by this policy from this clock; a value no policy of ours
        could have written is read as no state, and noted once (a warning)."""
        state, why = KeyState.read(text, self.clock(), self.policy)
        if why:
            _note_unread(self.scope, why)
        return state

    def quiet_ms(self) -> int:
        """How long this key stays quiet or stopped (0: it may be called now)."""
        state = self.state()
        return max(0, math.ceil((state.until - self.clock()) * 1000))

    def circuit(self) -> Literal["closed", "open", "half_open"]:
        """The key's circuit breaker."""
        state = self.state()
        if not state.open_until:
            return "closed"
        return "open" if self.clock() < state.open_until else "half_open"

    def reset(self) -> None:
        """Forget this key's state and the task's usage."""

        def forget(old: str | None) -> tuple[str | None, None]:
            return None, None

        self.store.update(_KEY_PREFIX + self.scope, forget, 1.0)
        if self.task_name is not None:
            self.store.update(self._task_key(), forget, 1.0)

    def close(self) -> None:
        """Release the store's connections."""
        self.store.close()

    def _task_key(self) -> str:
        if self.task_name is None:
            raise ValueError("no task: use cooldowns.task(name, ...) first")
        return _TASK_PREFIX + self.task_name

    # --- the gate the retry loop calls (sync and async faces of one set of rules) -----------

    def before_call(self, max_wait_ms: int) -> Gate:
        """The gate before one attempt: how long to wait first; raises `RecoverableError`
        when the key is stopped, its circuit open, its quiet time over `max_wait_ms` or the
        task's budget spent."""
        text = self.store.get(_KEY_PREFIX + self.scope)
        if text is None and self.task_name is None:
            return GO  # the common case: nothing known about the key, no budget
        steps = self._admission(text, max_wait_ms)
        store = self.store
        try:
            change = next(steps)
            while True:
                change = steps.send(store.update(*change))
        except StopIteration as done:
            gate: Gate = done.value
            return gate

    async def abefore_call(self, max_wait_ms: int) -> Gate:
        """`before_call` for async code: the store is awaited (the loop never waits on it)."""
        text = await self.store.aget(_KEY_PREFIX + self.scope)
        if text is None and self.task_name is None:
            return GO
        steps = self._admission(text, max_wait_ms)
        store = self.store
        try:
            change = next(steps)
            while True:
                change = steps.send(await store.aupdate(*change))
        except StopIteration as done:
            gate: Gate = done.value
            return gate

    def _admission(self, text: str | None, max_wait_ms: int) -> Generator[_Update, Any, Gate]:
        """The gate's rules, free of I/O: yields each atomic update for the caller's face of
        the store to run (and is sent its result); returns the gate or raises its refusal."""
        name = _KEY_PREFIX + self.scope
        breaker = self.policy.breaker
        probe_s = breaker.probe_s if breaker is not None else 0.0
        max_wait_s = max_wait_ms / 1000
        new, gate = admit(self._read(text), self.clock(), max_wait_s, probe_s)
        if new is not None:  # a slot or a probe to claim: again, atomically

            def change(old: str | None) -> tuple[str | None, Gate]:
                current = self._read(old)
                now = self.clock()
                changed, answer = admit(current, now, max_wait_s, probe_s)
                kept = current if changed is None else changed
                return kept.dump(now), answer

            gate = yield (name, change, self._ttl(new))
        if gate.refused:
            raise RecoverableError(self._refusal(gate))
        if self.task_name is not None:
            limits = (self.max_attempts, self.max_cost_usd)

            def claim(old: str | None) -> tuple[str | None, tuple[TaskUsage, str]]:
                new, usage, out = claim_attempt(TaskUsage.load(old, self.max_attempts), *limits)
                return (old if new is None else new.dump()), (usage, out)

            usage, out = yield (self._task_key(), claim, _TASK_TTL_S)
            if out:
                raise RecoverableError(self._over_budget(usage, out))
        return gate

    def after_failure(self, detail: ErrorDetail, gate: Gate) -> None:
        """Record a failed attempt: a quiet time, a stop, or a failure the breaker counts."""
        update = self._failure_update(detail, gate)
        if update is not None:
            self.store.update(*update)

    async def aafter_failure(self, detail: ErrorDetail, gate: Gate) -> None:
        """`after_failure` for async code."""
        update = self._failure_update(detail, gate)
        if update is not None:
            await self.store.aupdate(*update)

    def _failure_update(self, detail: ErrorDetail, gate: Gate) -> _Update | None:
        row = codes.resolve(detail.code)
        breaker = self.policy.breaker
        counted = breaker is not None and breaker.threshold(row) is not None
        if row.cooldown is None and not counted and not gate.probe:
            return None  # nothing the fleet needs to know

        def change(old: str | None) -> tuple[str | None, None]:
            current = self._read(old)
            now = self.clock()
            new = failed(current, detail, now, self.policy, probe=gate.probe)
            return (old if new is None else new.dump(now)), None

        return _KEY_PREFIX + self.scope, change, self._ttl_after(row.cooldown)

    def after_success(self, gate: Gate) -> None:
        """Record a successful attempt: a probe's success closes the circuit."""
        if gate.probe:
            self.store.update(_KEY_PREFIX + self.scope, self._closed, _TTL_MARGIN_S)

    async def aafter_success(self, gate: Gate) -> None:
        """`after_success` for async code."""
        if gate.probe:
            await self.store.aupdate(_KEY_PREFIX + self.scope, self._closed, _TTL_MARGIN_S)

    def _closed(self, old: str | None) -> tuple[str | None, None]:
        """A probe succeeded: the circuit closes."""
        return probe_succeeded(self._read(old)).dump(self.clock()), None

    def waits_out(self, detail: ErrorDetail) -> bool:
        """Whether the next gate waits for this failure (so the retry loop need not)."""
        return codes.resolve(detail.code).cooldown == "quiet"

    def _ttl(self, state: KeyState) -> float:
        return state.horizon(self.clock()) + _TTL_MARGIN_S

    def _ttl_after(self, cooldown: str | None) -> float:
        policy = self.policy
        longest = max(
            policy.quota_stop_s if cooldown == "stop" else 0.0,
            policy.max_quiet_s + policy.resume_window_s if cooldown == "quiet" else 0.0,
            86400.0 if policy.breaker is not None else 0.0,
        )
        return longest + _TTL_MARGIN_S

    def _refusal(self, gate: Gate) -> ErrorDetail:
        wait_ms = max(1, math.ceil(gate.remaining_s * 1000))
        where = {"cooldown_key": self.scope}
        if gate.refused == "stop":
            return ErrorDetail.create(
                gate.code or "provider_quota_exceeded",
                f"the key {self.scope} is stopped for {wait_ms} ms after a quota failure",
                details={**where, "cooldown": "stop", "stopped_for_ms": wait_ms},
            )
        if gate.refused == "open":
            return ErrorDetail.create(
                gate.code or "provider_server_error",
                f"the circuit of {self.scope} is open for {wait_ms} ms",
                retryable=True,
                retry_after_ms=wait_ms,
                details={**where, "circuit": "open"},
            )
        return ErrorDetail.create(
            gate.code or "provider_rate_limited",
            f"the key {self.scope} is quiet for {wait_ms} ms (another caller was told to wait)",
            retryable=True,
            retry_after_ms=wait_ms,
            details={**where, "cooldown": "quiet"},
        )

    def _over_budget(self, usage: TaskUsage, out: str) -> ErrorDetail:
        spent = (
            f"{usage.attempts} attempts"
            if out == "attempts"
            else f"{usage.cost_usd:.6g} USD of {self.max_cost_usd:.6g}"
        )
        return ErrorDetail.create(
            "run_budget_exceeded",
            f"task {self.task_name} has spent its budget: {spent}",
            details={
                "task": self.task_name,
                "budget": out,
                "attempts": usage.attempts,
                "max_attempts": self.max_attempts,
                "cost_usd": usage.cost_usd,
                "max_cost_usd": self.max_cost_usd,
                "retries_exhausted": True,
            },
        )


def _is_amount(value: object) -> bool:
    return (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and math.isfinite(value)
        and value >= 0
    )


@functools.lru_cache(maxsize=256)  # once per key and reason: a bad value is read many times
def _note_unread(scope: str, why: str) -> None:
    logger.warning(
        "the cooldown state of %s was read as none: %s", scope, why, extra={"cooldown_key": scope}
    )

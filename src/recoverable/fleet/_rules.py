"""The fleet's rules, pure: what one key's shared state says before a call, and how a
failure or a probe's success changes it. Times are wall-clock seconds from the caller's clock.

One key (a provider, model and credential) has one `KeyState`:

- a **quiet time** (`until`): a failure whose code row says `cooldown="quiet"` (a rate limit,
  an overload) quiets the key until its hint has passed (or `default_quiet_s`), for every
  caller; a `cooldown="stop"` row (a quota) stops it for `quota_stop_s`.
- an **orderly resume**: when the server gave a hint, the callers that were waiting go one
  per hint (at most `max_spacing_s` apart), not all at once at the end of the quiet time (a
  token bucket refills one token per interval: a stampede at the refill would be answered
  with a 429 for all but one). The pace lasts `resume_window_s` after the last such failure.
- a **circuit breaker**: retryable failures with no cooldown of their own (server errors,
  lost connections) counted per family; `threshold` of them within `window_s` open the key
  for `open_s` (callers are refused at once), then one probe goes through (half-open): its
  success closes the key, its failure opens it again.

A task (a caller's logical unit of work) has a `TaskUsage`: attempts and cost so far.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from .._core.codes import CodeRow, codes
from .._core.detail import ErrorDetail

__all__ = [
    "BreakerPolicy",
    "FleetPolicy",
    "Gate",
    "KeyState",
    "TaskUsage",
    "admit",
    "charge",
    "claim_attempt",
    "failed",
    "probe_succeeded",
]

_MAX_SECONDS = 366 * 86400.0  # any stored or hinted time is clipped to a year
_MAX_FAILURES = 1000
# Paced callers may use this many slots that passed unused (the server's bucket kept their
# room): a pace that fell behind catches up, in a burst no larger than this.
_CATCH_UP_SLOTS = 8
_TIGHTEN = 1 - 1 / 500  # each paced call: the pace 0.2% faster (a 429 slows it again)


# A writer's clock may run this far ahead of the reader's before its times are read from the
# reader's clock instead (the durations it wrote kept, its absolute times moved back).
CLOCK_SKEW_S = 1.0


def _seconds(value: object) -> float:
    """A stored number read defensively: a finite float >= 0, else 0 (a forged or corrupt
    value, a 400-digit integer included, cannot crash a caller; `read` bounds the rest)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    try:
        number = float(value)
    except OverflowError:
        return 0.0
    return number if math.isfinite(number) and number > 0 else 0.0


@dataclass(frozen=True, slots=True)
class BreakerPolicy:
    """When a key's circuit opens: `thresholds` failures of a family within `window_s`.

    A failure counts when its code is retryable and has no cooldown of its own (a rate limit
    is a quiet time, not a broken key); its threshold is `thresholds[code]`, else
    `thresholds[category]`; a code with neither is not counted.
    """

    thresholds: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"provider": 5, "network": 5, "service": 5})
    )
    """Failures that open the circuit, by code or by category (the table's family)."""
    window_s: float = 30.0
    """The window the failures are counted in, in seconds."""
    open_s: float = 30.0
    """How long an open circuit refuses every call before it lets one probe through."""
    probe_s: float = 60.0
    """How long a half-open probe may take before another caller may probe instead."""

    def __post_init__(self) -> None:
        for name in ("window_s", "open_s", "probe_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number of seconds, not {value!r}")
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be finite and > 0, not {value!r}")
        for key, count in self.thresholds.items():
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise ValueError(f"threshold for {key!r} must be an integer >= 1, not {count!r}")
        object.__setattr__(self, "thresholds", MappingProxyType(dict(self.thresholds)))

    def threshold(self, row: CodeRow) -> int | None:
        """The failures of this code that open the circuit; None: it is not counted."""
        if not row.retryable or row.cooldown is not None:
            return None
        return self.thresholds.get(row.code, self.thresholds.get(row.category))


@dataclass(frozen=True, slots=True)
class FleetPolicy:
    """How long the quiet times and stops last; see the module docstring."""

    default_quiet_s: float = 1.0
    """The quiet time after a `quiet` failure that carried no hint."""
    max_quiet_s: float = 3600.0
    """The longest quiet time a hint can set (a larger hint is clipped to it)."""
    quota_stop_s: float = 3600.0
    """How long a `stop` failure (a quota) stops the key."""
    max_spacing_s: float = 1.0
    """The longest interval between resuming callers."""
    resume_window_s: float = 10.0
    """How long after the last hinted failure the callers keep going one per interval."""
    breaker: BreakerPolicy | None = field(default_factory=BreakerPolicy)
    """The circuit breaker's thresholds; None: no breaker."""

    def __post_init__(self) -> None:
        for name in (
            "default_quiet_s",
            "max_quiet_s",
            "quota_stop_s",
            "max_spacing_s",
            "resume_window_s",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number of seconds, not {value!r}")
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be finite and >= 0, not {value!r}")


@dataclass(frozen=True, slots=True)
class KeyState:
    """What the fleet knows about one key (stored as a short JSON list)."""

    until: float = 0.0
    """Quiet (or stopped) until this time."""
    code: str = ""
    """The code that set `until`."""
    stop: bool = False
    """Whether `until` is a long stop (a quota) rather than a quiet time."""
    spacing: float = 0.0
    """The interval between resuming callers."""
    next_slot: float = 0.0
    """The time the next resuming caller may go."""
    pace_until: float = 0.0
    """Callers go one per `spacing` until then."""
    failures: tuple[float, ...] = ()
    """The breaker's counted failures (their times) within its window."""
    open_until: float = 0.0
    """The circuit is open until then (0: closed); after it, half-open."""
    open_code: str = ""
    """The code of the failure that opened the circuit."""
    probe_until: float = 0.0
    """Half-open: a probe is out until then."""
    anchor: float = 0.0
    """When the latest hint said the key would next have room (the pace is measured from it)."""
    written: float = 0.0
    """The writer's clock when it stored this state (a reader whose clock is behind reads the
    state from its own clock; 0: a state stored before this field existed)."""

    def dump(self, now: float = 0.0) -> str:
        """The stored form, written at `now` (the writer's clock)."""
        return json.dumps(
            [
                round(self.until, 6),
                self.code,
                self.stop,
                round(self.spacing, 6),
                round(self.next_slot, 6),
                round(self.pace_until, 6),
                [round(t, 6) for t in self.failures],
                round(self.open_until, 6),
                self.open_code,
                round(self.probe_until, 6),
                round(self.anchor, 6),
                round(now, 6),
            ],
            separators=(",", ":"),
        )

    @classmethod
    def load(cls, text: str | None) -> KeyState:
        """The state from its stored form; anything malformed reads as no state."""
        if not text:
            return _EMPTY
        return _parse_state(text)

    @classmethod
    def read(cls, text: str | None, now: float, policy: FleetPolicy) -> tuple[KeyState, str]:
        """The state from its stored form, bounded from the reader's clock: (state, why it
        was read as no state, or "").

        A writer whose clock runs ahead is read from this one (its durations kept). A time
        further ahead than `policy` itself could have set (a quiet time past `max_quiet_s`, a
        stop past `quota_stop_s`, an open circuit past `open_s`) is no state: a forged, corrupt
        or foreign value cannot make a call wait past this process's own policy.
        """
        state = cls.load(text)
        if state is _EMPTY:
            return state, "" if not text or text == _EMPTY_TEXT else "malformed"
        if state.written > now + CLOCK_SKEW_S:
            state = _moved(state, now - state.written)
        why = _beyond(state, now, policy)
        return (_EMPTY, why) if why else (state, "")

    @classmethod
    def _parse(cls, text: str) -> KeyState:
        try:
            items = json.loads(text)
            if len(items) == _FIELDS - 1:  # stored before `written` existed
                items = [*items, 0.0]
            (
                until,
                code,
                stop,
                spacing,
                next_slot,
                pace_until,
                fails,
                opened,
                ocode,
                probe,
                anchor,
                written,
            ) = items
            return cls(
                _seconds(until),
                _name(code),
                stop is True,
                min(_seconds(spacing), _MAX_SECONDS),
                _seconds(next_slot),
                _seconds(pace_until),
                tuple(_seconds(t) for t in fails[:_MAX_FAILURES]),
                _seconds(opened),
                _name(ocode),
                _seconds(probe),
                _seconds(anchor),
                _seconds(written),
            )
        except (ValueError, TypeError, RecursionError):
            return _EMPTY

    def horizon(self, now: float) -> float:
        """How long, from `now`, this state still matters (its time to live)."""
        last = max(self.until, self.next_slot, self.pace_until, self.open_until, self.probe_until)
        if self.failures:
            last = max(last, self.failures[-1] + _MAX_SECONDS / 366)  # a day covers any window
        return max(0.0, last - now)


_EMPTY = KeyState()
_EMPTY_TEXT = _EMPTY.dump()
_FIELDS = 12
# A key's state is read before every call and changes rarely: parse each stored text once.
_parse_state = functools.lru_cache(maxsize=1024)(KeyState._parse)


def _moved(state: KeyState, by: float) -> KeyState:
    """The state with every time in it moved by `by` seconds (a time of 0 stays unset)."""

    def move(t: float) -> float:
        return max(0.0, t + by) if t else 0.0

    return replace(
        state,
        until=move(state.until),
        next_slot=move(state.next_slot),
        pace_until=move(state.pace_until),
        failures=tuple(move(t) for t in state.failures),
        open_until=move(state.open_until),
        probe_until=move(state.probe_until),
        anchor=move(state.anchor),
        written=move(state.written),
    )


def _beyond(state: KeyState, now: float, policy: FleetPolicy) -> str:
    """Which time of `state` lies further ahead of `now` than `policy` could have set ("":
    none). The reader's own maxima, plus the skew a writer's clock may have."""
    ahead = now + CLOCK_SKEW_S
    quiet = policy.max_quiet_s + policy.resume_window_s + policy.max_spacing_s
    breaker = policy.breaker
    limits = (
        ("until", state.until, policy.quota_stop_s if state.stop else policy.max_quiet_s),
        ("next_slot", state.next_slot, quiet),
        ("pace_until", state.pace_until, quiet),
        ("anchor", state.anchor, quiet),
        ("open_until", state.open_until, breaker.open_s if breaker is not None else 0.0),
        ("probe_until", state.probe_until, breaker.probe_s if breaker is not None else 0.0),
        ("failures", max(state.failures, default=0.0), 0.0),
    )
    for name, at, longest in limits:
        if at > ahead + longest:
            return f"{name} is {at - now:.6g} s ahead, past this policy's {longest:g} s"
    if state.spacing > policy.max_spacing_s + CLOCK_SKEW_S:
        return f"spacing of {state.spacing:.6g} s is past this policy's {policy.max_spacing_s:g} s"
    return ""


def _name(value: object) -> str:
    """A stored code name: a registered code, else none (a forged name is not echoed)."""
    return value if isinstance(value, str) and value in codes else ""


@dataclass(frozen=True, slots=True)
class Gate:
    """The answer before a call: go (after `wait_s`), or refused."""

    wait_s: float = 0.0
    """How long to wait before the call."""
    refused: Literal["", "quiet", "stop", "open", "budget"] = ""
    """Why the call may not go now ("": it may)."""
    code: str = ""
    """The code behind a wait or a refusal."""
    remaining_s: float = 0.0
    """A refusal: how long until the key may be called again."""
    probe: bool = False
    """The call is the half-open circuit's probe."""


GO = Gate()


def admit(
    state: KeyState, now: float, max_wait_s: float, probe_s: float
) -> tuple[KeyState | None, Gate]:
    """Before a call: the gate, and the new state to store (None: nothing changed). A call
    that would wait over `max_wait_s` is refused; a half-open probe may take `probe_s`."""
    if state.stop and state.until > now:
        return None, Gate(refused="stop", code=state.code, remaining_s=state.until - now)
    probe = False
    if state.open_until:
        if now < state.open_until:
            remaining = state.open_until - now
            return None, Gate(refused="open", code=state.open_code, remaining_s=remaining)
        if state.probe_until > now:  # another caller's probe is out
            remaining = state.probe_until - now
            return None, Gate(refused="open", code=state.open_code, remaining_s=remaining)
        probe = True
    pacing = state.pace_until > now
    at = 0.0 if state.stop else state.until
    if pacing:  # the next free slot; slots missed lately (nobody was ready) may be used now
        at = max(at, state.next_slot, now - _CATCH_UP_SLOTS * state.spacing)
    wait = max(0.0, at - now)
    if wait > max_wait_s:
        return None, Gate(refused="quiet", code=state.code, remaining_s=wait)
    slot = max(at, now) if not pacing else at
    new = state
    if pacing:  # and a little faster each time, so that a pace too slow finds out
        new = replace(new, next_slot=slot + state.spacing, spacing=state.spacing * _TIGHTEN)
    if probe:
        new = replace(new, probe_until=slot + probe_s)
    gate = Gate(wait_s=wait, code=state.code, probe=probe) if wait or probe else GO
    return (new if new is not state else None), gate


def failed(
    state: KeyState, detail: ErrorDetail, now: float, policy: FleetPolicy, *, probe: bool = False
) -> KeyState | None:
    """After a failed call: the new state (None: this failure changes nothing shared)."""
    row = codes.resolve(detail.code)
    if row.cooldown == "stop":
        until = max(state.until if state.stop else 0.0, now + policy.quota_stop_s)
        return replace(state, until=until, code=row.code, stop=True, probe_until=0.0)
    if row.cooldown == "quiet":
        return _quieted(state, detail, now, policy)
    breaker = policy.breaker
    threshold = None if breaker is None else breaker.threshold(row)
    if breaker is None or threshold is None:
        return replace(state, probe_until=0.0) if probe else None
    if probe:  # the half-open probe failed: open again
        return _opened(state, row.code, now, breaker)
    recent = tuple(t for t in state.failures if t > now - breaker.window_s)[-threshold:]
    failures = (*recent, now)
    if len(failures) >= threshold:
        return _opened(state, row.code, now, breaker)
    return replace(state, failures=failures)


def _quieted(state: KeyState, detail: ErrorDetail, now: float, policy: FleetPolicy) -> KeyState:
    hint = detail.retry_after_ms
    quiet = policy.default_quiet_s if hint is None else hint / 1000
    quiet = min(quiet, policy.max_quiet_s)
    new = replace(state, probe_until=0.0)  # a probe told to wait is no verdict on the circuit
    if not (state.stop and state.until > now):
        new = replace(new, until=max(state.until, now + quiet), code=detail.code, stop=False)
    if hint is not None:  # the server said when it has room: resume one caller at a time
        new = _paced(new, now, quiet, policy)
    return new


def _paced(state: KeyState, now: float, quiet: float, policy: FleetPolicy) -> KeyState:
    """The pace after a hinted failure. A new pace starts one hint apart (a bucket that just
    ran dry has room again one refill later). A pace kept for at least one interval since
    `anchor` that still ran dry `quiet` too early was too fast: `elapsed` at `spacing` apart
    made room for only `elapsed + quiet` worth of calls, so the server's interval is
    `spacing * (elapsed + quiet) / elapsed`. Sooner than one interval, the failure is a late
    answer to a call sent under the last pace: it says nothing new (and dividing by a tiny
    `elapsed` would stall the fleet)."""
    freed = now + quiet
    spacing = state.spacing
    if state.pace_until <= now or spacing <= 0:
        spacing, next_slot = quiet, freed
    else:
        elapsed = now - state.anchor
        if elapsed >= spacing:
            spacing *= (elapsed + quiet) / elapsed
        next_slot = max(state.next_slot, freed)
    return replace(
        state,
        spacing=min(spacing, policy.max_spacing_s),
        next_slot=next_slot,
        anchor=max(state.anchor, freed),
        pace_until=max(state.pace_until, freed + policy.resume_window_s),
    )


def _opened(state: KeyState, code: str, now: float, breaker: BreakerPolicy) -> KeyState:
    return replace(
        state, failures=(), open_until=now + breaker.open_s, open_code=code, probe_until=0.0
    )


def probe_succeeded(state: KeyState) -> KeyState:
    """The half-open probe answered: the circuit closes."""
    return replace(state, failures=(), open_until=0.0, open_code="", probe_until=0.0)


@dataclass(frozen=True, slots=True)
class TaskUsage:
    """What a task has spent so far (stored as a short JSON list)."""

    attempts: int = 0
    """Calls started for the task, in every process, across restarts."""
    cost_usd: float = 0.0
    """Cost charged to the task."""

    def dump(self) -> str:
        """The stored form."""
        return json.dumps([self.attempts, self.cost_usd])

    @classmethod
    def load(cls, text: str | None, max_attempts: int | None = None) -> TaskUsage:
        """The usage from its stored form; anything malformed, or past what a budget of
        `max_attempts` could have counted (claims stop there) or `MAX_COST_USD`, reads as
        none."""
        try:
            attempts, cost = json.loads(text) if text else (0, 0.0)
        except (ValueError, TypeError, RecursionError):
            return _NO_USAGE
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 0:
            return _NO_USAGE
        if attempts > (2**53 if max_attempts is None else max_attempts):
            return _NO_USAGE
        spent = _seconds(cost)  # the same reading: a finite float >= 0
        return cls(attempts, spent) if spent <= MAX_COST_USD else _NO_USAGE


_NO_USAGE = TaskUsage()
MAX_COST_USD = 1e15
"""The most a stored task cost may say (more is a corruption, read as no usage)."""


def claim_attempt(
    usage: TaskUsage, max_attempts: int | None, max_cost_usd: float | None
) -> tuple[TaskUsage | None, TaskUsage, str]:
    """Before a call of a task: (the usage to store, or None; the usage; what ran out, or "")."""
    if max_attempts is not None and usage.attempts >= max_attempts:
        return None, usage, "attempts"
    if max_cost_usd is not None and usage.cost_usd >= max_cost_usd:
        return None, usage, "cost"
    claimed = replace(usage, attempts=usage.attempts + 1)
    return claimed, claimed, ""


def charge(usage: TaskUsage, cost_usd: float) -> TaskUsage:
    """The usage with `cost_usd` added."""
    return replace(usage, cost_usd=min(usage.cost_usd + cost_usd, MAX_COST_USD))

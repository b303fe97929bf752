"""What runs around each attempt of a `Retrying`: before it, the cancel and the hook, then the
cooldowns' gate (`retry(cooldowns=...)`), waited out; after it, its outcome told to the key
and the decider's wait before the next one.

The gate is only there with `cooldowns`: without them, no attempt pays for it (no gate, no
second classification). A gate that refuses the attempt (the key stopped, its circuit open, a
quiet time past the cap, the budget spent) raises its `RecoverableError` before the call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import recoverable._classify as classification  # the module: its stages load on first use

from .._core.error import RecoverableError
from .waits import await_wait, wait

if TYPE_CHECKING:
    from ..fleet._cooldowns import Cooldowns
    from ..fleet._rules import Gate
    from .loop import Retrying

__all__ = [
    "apass_gate",
    "attempt_afailed",
    "attempt_asucceeded",
    "attempt_failed",
    "attempt_succeeded",
    "begin_attempt",
    "pass_gate",
]


def begin_attempt(retrying: Retrying, attempt: int) -> None:
    """Before every attempt of every form: a set cancel stops here; then the hook."""
    cancel = retrying.cancel
    if cancel is not None and cancel.is_set():
        raise RecoverableError(
            "run_cancelled", f"cancelled before attempt {attempt}", details={"attempt": attempt}
        )
    if retrying.before_attempt is not None:
        retrying.before_attempt(attempt)


def _cap(retrying: Retrying, cooldowns: Cooldowns, started: float) -> int:
    """The longest a gate may wait: the cooldowns' cap, else the policy's, within the
    deadline."""
    policy = retrying.policy
    cap = cooldowns.max_wait_ms
    if cap is None:
        cap = policy.max_retry_after_ms
    if policy.deadline is not None:
        left = policy.deadline - (retrying.clock() - started)
        cap = min(cap, max(0, int(left * 1000)))
    return cap


def pass_gate(retrying: Retrying, started: float) -> Gate | None:
    """Before an attempt: the cooldowns' gate, waited out (None without cooldowns); raises
    when the key refuses the attempt."""
    cooldowns = retrying.cooldowns
    if cooldowns is None:
        return None
    gate = cooldowns.before_call(_cap(retrying, cooldowns, started))
    if gate.wait_s > 0:  # most gates are open: no wait to make (and no sleep to call)
        wait(gate.wait_s, retrying.cancel, retrying.sleep)
    return gate


async def apass_gate(retrying: Retrying, started: float) -> Gate | None:
    """`pass_gate` for the async forms: the store is awaited, then the wait."""
    cooldowns = retrying.cooldowns
    if cooldowns is None:
        return None
    gate = await cooldowns.abefore_call(_cap(retrying, cooldowns, started))
    if gate.wait_s > 0:  # an open gate: no wait, and no coroutine built for one
        await await_wait(gate.wait_s, retrying.cancel, retrying.asleep)
    return gate


def attempt_failed(
    retrying: Retrying, gate: Gate | None, exc: BaseException, attempt: int, started: float
) -> float:
    """After a failed attempt: its outcome told to the gate (if any); the decider's wait
    before the next attempt (0 when the next gate waits this failure out); raises when there
    is none."""
    cooldowns = retrying.cooldowns
    if gate is None or cooldowns is None:
        return retrying.decide(retrying, exc, attempt, started, detail=None, gate_waits=False)
    detail = classification.classify(exc)  # once: the gate and the decider read the same detail
    cooldowns.after_failure(detail, gate)
    gate_waits = cooldowns.waits_out(detail)
    wait_s = retrying.decide(retrying, exc, attempt, started, detail=detail, gate_waits=gate_waits)
    return 0.0 if gate_waits else wait_s


async def attempt_afailed(
    retrying: Retrying, gate: Gate | None, exc: BaseException, attempt: int, started: float
) -> float:
    """`attempt_failed` for the async forms."""
    cooldowns = retrying.cooldowns
    if gate is None or cooldowns is None:
        return retrying.decide(retrying, exc, attempt, started, detail=None, gate_waits=False)
    detail = classification.classify(exc)
    await cooldowns.aafter_failure(detail, gate)
    gate_waits = cooldowns.waits_out(detail)
    wait_s = retrying.decide(retrying, exc, attempt, started, detail=detail, gate_waits=gate_waits)
    return 0.0 if gate_waits else wait_s


def attempt_succeeded(retrying: Retrying, gate: Gate | None) -> None:
    """After an attempt that answered: its success told to the gate (if any)."""
    if gate is not None and retrying.cooldowns is not None:
        retrying.cooldowns.after_success(gate)


async def attempt_asucceeded(retrying: Retrying, gate: Gate | None) -> None:
    """`attempt_succeeded` for the async forms."""
    if gate is not None and retrying.cooldowns is not None:
        await retrying.cooldowns.aafter_success(gate)

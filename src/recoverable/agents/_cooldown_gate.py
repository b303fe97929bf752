"""Shared cooldowns before each CLI of a run (`agents.run(..., cooldowns=...)`).

Before a CLI starts, its key is consulted: a quiet key is waited out (up to the cooldowns'
`max_wait_ms`, by default the retry policy's `max_retry_after_ms`); a longer quiet time, a
stop after a quota failure or an open circuit ends that CLI at once, without starting it, as
a failed run whose error carries the remaining time in `retry_after_ms` (so a run with
several CLIs moves to the next one). When the CLI's run ends, its outcome is recorded on
the key: a rate limit, an overload or a quota failure quiets or stops it for every process
sharing the store.

Which key: a mapping of CLI name to `Cooldowns`, a function of the CLI name, or one
`Cooldowns`: narrowed with `.key(...)` it is that key for every CLI; not narrowed, each CLI
gets its own key (source = the CLI, model = the run's model).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeAlias

from .._core.error import RecoverableError
from .._core.events import Done, ErrorEvent, Event, RunResult
from .._core.values import value_class

if TYPE_CHECKING:
    from .._core.detail import ErrorDetail
    from ..fleet._cooldowns import Cooldowns
    from ..fleet._rules import Gate

__all__ = ["CliCooldowns", "CliGate", "acli_gate", "cli_gate"]

CliCooldowns: TypeAlias = "Cooldowns | Mapping[str, Cooldowns] | Callable[[str], Cooldowns | None]"
"""What `cooldowns=` of a run takes: see the module's docstring."""

_UNNARROWED = "*/*/*"  # Cooldowns.scope before .key(...)


def _key_for(cooldowns: CliCooldowns, cli: str, model: str | None) -> Cooldowns | None:
    from ..fleet._cooldowns import Cooldowns

    if isinstance(cooldowns, Cooldowns):
        if cooldowns.scope == _UNNARROWED:
            return cooldowns.key(source=cli, model=model)
        return cooldowns
    if isinstance(cooldowns, Mapping):
        return cooldowns.get(cli)
    if callable(cooldowns):
        key = cooldowns(cli)
        if key is not None and not isinstance(key, Cooldowns):
            raise TypeError(f"cooldowns({cli!r}) must return a Cooldowns or None")
        return key
    raise TypeError(
        "cooldowns= takes a Cooldowns, a mapping of CLI name to Cooldowns or a function of "
        f"the CLI name, not {type(cooldowns).__name__}"
    )


@value_class
class CliGate:
    """One CLI's turn at the key: the wait before it, or its refusal; then its outcome."""

    key: Cooldowns | None
    gate: Gate | None = None
    wait_s: float = 0.0
    """How long to wait before starting the CLI."""
    refused: ErrorDetail | None = None
    """Set: the CLI must not start; this is its failure."""

    def refusal_events(self, cli: str) -> list[Event]:
        """The events of a CLI that never started: its error, then its failed `Done`."""
        from .._core.detail import copy_with  # a refusal is a failure: the detail is loaded

        assert self.refused is not None
        detail = copy_with(self.refused, source=cli)
        result = RunResult(success=False, error=detail, cli=cli)
        return [ErrorEvent(detail), Done(result)]

    def record(self, event: Event) -> None:
        """Record a run's outcome on the key when `event` is its `Done`."""
        if self.key is None or self.gate is None or not isinstance(event, Done):
            return
        error = event.result.error
        if error is None:
            self.key.after_success(self.gate)
        else:
            self.key.after_failure(error, self.gate)

    async def arecord(self, event: Event) -> None:
        """`record` for the async runner: the store is awaited, never called on the loop."""
        if self.key is None or self.gate is None or not isinstance(event, Done):
            return
        error = event.result.error
        if error is None:
            await self.key.aafter_success(self.gate)
        else:
            await self.key.aafter_failure(error, self.gate)


def _cap(key: Cooldowns) -> int:
    from .._retry.policy import RetryPolicy

    return key.max_wait_ms if key.max_wait_ms is not None else RetryPolicy().max_retry_after_ms


def _passed(key: Cooldowns, gate: Gate) -> CliGate:
    from .._retry.waits import waits_are_off

    return CliGate(key, gate, 0.0 if waits_are_off() else gate.wait_s)


def cli_gate(cooldowns: CliCooldowns | None, cli: str, model: str | None) -> CliGate:
    """Consult the key of `cli` before starting it (a refusal is kept, not raised)."""
    key = None if cooldowns is None else _key_for(cooldowns, cli, model)
    if key is None:
        return CliGate(None)
    try:
        gate = key.before_call(_cap(key))
    except RecoverableError as refused:
        return CliGate(key, refused=refused.detail)
    return _passed(key, gate)


async def acli_gate(cooldowns: CliCooldowns | None, cli: str, model: str | None) -> CliGate:
    """`cli_gate` for the async runner: the store is awaited."""
    key = None if cooldowns is None else _key_for(cooldowns, cli, model)
    if key is None:
        return CliGate(None)
    try:
        gate = await key.abefore_call(_cap(key))
    except RecoverableError as refused:
        return CliGate(key, refused=refused.detail)
    return _passed(key, gate)

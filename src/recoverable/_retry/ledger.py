"""Falling back, the one rule and its record: when a run moves on from a candidate (a provider
in `fallback`, an AI CLI in `agents.run(cli=[...])`), and the failures it leaves behind.

A run moves on only when the failure's code says another provider could succeed (the
registry's `fallback` column, read through `ErrorDetail.fallback`, never a list kept here: a
cancel's row cannot say so, `registration.check_row`), and the failed candidate had no side
effects yet (an AI CLI whose tool started may have changed something, and a second agent
would start over on top of it). The failures are kept in order and read as one cause chain,
the first one deepest.

Pure bookkeeping, light to import: the agents' runner loads it on a failed run only.
"""

from __future__ import annotations

from .._core.detail import ErrorDetail, copy_with

__all__ = ["FallbackLedger"]


class FallbackLedger:
    """The failures of one fallback run, in order, and the rule for moving on."""

    __slots__ = ("failures",)

    def __init__(self, failures: list[ErrorDetail] | None = None) -> None:
        self.failures: list[ErrorDetail] = [] if failures is None else failures
        """Each failure the run moved on from, in order (the list given is kept, not copied:
        the agents' runs share one along the CLIs of an order)."""

    def moves_on(self, failure: ErrorDetail, *, side_effects: bool = False) -> bool:
        """Whether the run moves on after `failure` (recorded when it does): another provider
        could succeed (the code's `fallback` column), and the candidate changed nothing
        (`side_effects`)."""
        if failure.fallback and not side_effects:
            self.failures.append(failure)
            return True
        return False

    def chain(self) -> ErrorDetail:
        """The failures as one cause chain: the last outermost, the first one deepest (each
        failure's own cause replaced by the one before it)."""
        chain = self.failures[0]
        for failure in self.failures[1:]:
            chain = copy_with(failure, cause=chain)
        return chain

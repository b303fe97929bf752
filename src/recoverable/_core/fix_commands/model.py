"""What every reader of a fix command shares: the refusal it answers, and its context."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

MAX_DEPTH = 8
"""How many programs one command may pass through (`nice timeout 5 uv run python -m x`):
each reader that hands words on to another program counts one."""

NO_MARKS: Mapping[str, frozenset[str]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a command may not be a fix: the rule it broke, and one sentence that says so."""

    rule: str
    """A stable name for the rule (`inline_code`, `git_destructive`, ...): tests and callers
    branch on it."""
    sentence: str
    """One sentence for a developer, starting with `fix_command `."""


def refuse(rule: str, text: str) -> Refusal:
    """A refusal of `rule` whose sentence is `fix_command <text>`."""
    return Refusal(rule, f"fix_command {text}")


Follow = Callable[["Context", Sequence[str]], "Refusal | None"]


@dataclass(frozen=True, slots=True)
class Context:
    """What a reader needs beyond its own words: the subcommands tool authors marked
    destructive, and the way to read a command it hands on (`python -m pip ...`)."""

    marks: Mapping[str, frozenset[str]]
    """Program name (lower case) to the subcommands its author marked destructive."""
    follow: Follow
    """Reads a whole argv as a command (the dispatcher: wrappers, then the program's reader)."""
    depth: int = 0
    """How many programs have handed words on so far."""

    def again(self, argv: Sequence[str]) -> Refusal | None:
        """Read `argv` as the command that the current program runs."""
        if self.depth >= MAX_DEPTH:
            return refuse("too_deep", f"hands its words on through more than {MAX_DEPTH} programs")
        return self.follow(replace(self, depth=self.depth + 1), argv)

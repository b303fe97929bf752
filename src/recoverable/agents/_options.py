"""What a caller can ask of a CLI run, and how a CLI module turns it into flags."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from .._core.error import RecoverableError
from .._core.values import value_class, value_field

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_TEXT_CHARS",
    "KEPT_EVENT_BYTES",
    "RUN_KEEP_EVENTS",
    "RunOptions",
    "RunRefused",
    "option_flags",
    "refuse_unsupported",
]

DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_TEXT_CHARS = 1_000_000
RUN_KEEP_EVENTS = 10_000
"""How many events a `run` / `run_sync` result keeps unless told (`keep_events`)."""
KEPT_EVENT_BYTES = 32 * 1024 * 1024
"""A counted `keep_events` also keeps no more than this many bytes of the stdout lines the
kept events came from (so a result of a few huge lines stays small too)."""


@value_class
class RunOptions:
    """Options every CLI understands (each CLI module maps them to its own flags)."""

    model: str | None = None
    """The model the CLI should use (its own default when None)."""
    cwd: str | None = None
    """The CLI's working directory (ours when None)."""
    env: Mapping[str, str] = value_field(default_factory=dict)
    """Variables added to the inherited environment (the whole of it with `inherit_env=False`)."""
    inherit_env: bool = True
    """False: `env` is the whole environment of the CLI."""
    system_prompt: str | None = None
    """Appended to the CLI's own system prompt (claude, codex; gemini refuses it)."""
    allowed_tools: Sequence[str] = ()
    """Tools the CLI may run without asking (claude, gemini; codex refuses it)."""
    permission_mode: str | None = None
    """Claude's permission mode, Codex's sandbox, Gemini's approval mode."""
    max_turns: int | None = None
    """The most agent turns (claude; codex and gemini refuse it)."""
    resume: str | None = None
    """A session id from an earlier `RunResult`, to go on with that conversation."""
    timeout: float | None = None
    """Total seconds before we stop the run (`run_timeout`); None: no limit."""
    idle_timeout: float | None = 300.0
    """Seconds without any event before we stop the run (`run_timeout`); None: no limit."""
    max_tool_failures: int | None = 3
    """Consecutive tool failures before we stop the run (`run_tool_failures`); None: no limit."""
    executable: str | None = None
    """Path of the CLI binary (found on PATH and in the usual install places when None)."""
    extra_args: Sequence[str] = ()
    """Passed to the CLI verbatim, after the flags made from the options above."""
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    """A longer stdout line is skipped and reported as a warning event (bounded memory)."""
    keep_events: int | Literal["auto"] | None = "auto"
    """How many events `RunResult.events` keeps: the last ones, at most this many and (for a
    number) at most KEPT_EVENT_BYTES (32 MiB) of the lines they came from; None: every one.
    "auto": none for `stream` / `stream_sync` (their consumer has each event as it comes),
    RUN_KEEP_EVENTS (10,000) for `run` / `run_sync`. The events a run yields are never cut."""
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS
    """`RunResult.text` keeps the last this many characters of the answer (bounded memory);
    the `TextDelta` events carry all of it."""


class RunRefused(RecoverableError, ValueError):
    """A run refused before anything started, for the caller's own mistake: a typed failure
    (its code says which) that is still the ValueError such a mistake always was."""


def option_flags(options: RunOptions, flags: Mapping[str, str]) -> list[str]:
    """`--flag=value` for each option in `flags` (field name -> the CLI's long flag) that is
    set, in that order; a sequence (`allowed_tools`) gives its flag once per item.

    Always one argument with `=`: a value that starts with a dash (a model, a system prompt, a
    session name) is then a value to commander, clap and yargs alike; as `--flag -x`, clap and
    yargs (and commander for an optional value) read `-x` as a flag of its own."""
    argv: list[str] = []
    for name, flag in flags.items():
        value = getattr(options, name)
        if value is None or value == "":
            continue
        items = (value,) if isinstance(value, (str, int)) else value
        argv += [f"{flag}={item}" for item in items]
    return argv


def refuse_unsupported(cli: str, options: RunOptions, *names: str) -> None:
    """`RunRefused` (`not_supported`, still a ValueError) for options this CLI cannot apply:
    silently dropping them would surprise."""
    given = [name for name in names if getattr(options, name)]
    if given:
        raise RunRefused(
            "not_supported",
            f"{cli} has no way to apply {', '.join(given)}; leave it unset for {cli}",
            source=cli,
            details={"options": given},
        )

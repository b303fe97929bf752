"""What a caller can ask of a CLI run, and how a CLI module turns it into flags."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["DEFAULT_MAX_LINE_BYTES", "RunOptions", "option_flags", "refuse_unsupported"]

DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class RunOptions:
    """Options every CLI understands (each CLI module maps them to its own flags)."""

    model: str | None = None
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # added to the inherited environment
    inherit_env: bool = True  # False: `env` is the whole environment of the CLI
    system_prompt: str | None = None  # appended to the CLI's own system prompt
    allowed_tools: Sequence[str] = ()
    permission_mode: str | None = None  # claude's modes; codex sandbox; gemini approval mode
    max_turns: int | None = None
    resume: str | None = None  # a session id from an earlier RunResult
    timeout: float | None = None  # total seconds
    idle_timeout: float | None = 300.0  # seconds without any event
    max_tool_failures: int | None = 3  # consecutive tool failures before we stop the run
    executable: str | None = None  # path of the CLI binary
    extra_args: Sequence[str] = ()  # appended verbatim, before the prompt
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES  # a longer stdout line is an error event, skipped


def option_flags(options: RunOptions, flags: Mapping[str, str]) -> list[str]:
    """`--flag=value` for each option in `flags` (field name -> the CLI's long flag) that is
    set, in that order; a sequence (`allowed_tools`) gives its flag once per item.

    Always one argument with `=`: a value that starts with a dash (a model, a system prompt, a
    session name) is then a value to commander, clap and yargs alike, where `--flag -x` would
    be read as two flags, or the value refused."""
    argv: list[str] = []
    for name, flag in flags.items():
        value = getattr(options, name)
        if value is None or value == "":
            continue
        items = (value,) if isinstance(value, (str, int)) else value
        argv += [f"{flag}={item}" for item in items]
    return argv


def refuse_unsupported(cli: str, options: RunOptions, *names: str) -> None:
    """A ValueError for options this CLI cannot apply: silently dropping them would surprise."""
    given = [name for name in names if getattr(options, name)]
    if given:
        raise ValueError(f"{cli} has no way to apply {', '.join(given)}; leave it unset for {cli}")

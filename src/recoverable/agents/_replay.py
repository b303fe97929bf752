"""From a finished (or replayed) process's output to events and a RunResult: pure."""

from __future__ import annotations

from collections.abc import Iterable

from .._detail import ErrorDetail
from ._events import Done, Error, Event, RunResult
from ._options import DEFAULT_MAX_LINE_BYTES
from ._parsing import CliModule, ParseState, bad_line, killed

__all__ = ["decode_line", "finish", "replay"]

STDERR_TAIL_CHARS = 8192  # the end of stderr kept on a RunResult


def decode_line(
    raw: bytes, module: CliModule, state: ParseState, max_line_bytes: int
) -> list[Event]:
    """One stdout line (without its newline) to events; a bad line is an error event."""
    if len(raw) > max_line_bytes:
        why = f"line of {len(raw)} bytes over the {max_line_bytes}-byte cap"
        return [bad_line(module.NAME, raw[:200].decode("utf-8", "replace"), why)]
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        return [bad_line(module.NAME, raw.decode("utf-8", "replace"), "invalid UTF-8")]
    if not line or line.isspace():
        return []
    return module.parse_line(line, state)


def finish(
    module: CliModule,
    state: ParseState,
    events: list[Event],
    exit_code: int | None,
    signal: int | None,
    stderr_tail: str,
    *,
    forced: ErrorDetail | None = None,
) -> RunResult:
    """Decide the outcome (our own reason first, else the CLI's), close the event list."""
    error = (
        forced if forced is not None else _outcome(module, state, exit_code, signal, stderr_tail)
    )
    if error is not None and not any(
        isinstance(event, Error) and event.detail is error for event in events
    ):
        events.append(Error(error))
    result = RunResult(
        success=error is None,
        text=state.text,
        error=error,
        exit_code=exit_code,
        signal=signal,
        session_id=state.session_id,
        usage=state.usage,
        cost_usd=state.cost_usd,
        stderr_tail=stderr_tail,
        events=tuple(events),
    )
    events.append(Done(result))
    return result


def _outcome(
    module: CliModule, state: ParseState, exit_code: int | None, signal: int | None, tail: str
) -> ErrorDetail | None:
    """One rule for every CLI: the terminal event decides, whatever the exit code; without
    one, a signal (one we did not send: the runner speaks for ours) is a kill; only then does
    the CLI module read its exit code and stderr."""
    if state.terminal == "success":
        return None
    if isinstance(state.terminal, ErrorDetail):
        return state.terminal
    if signal is not None:
        before = "before its terminal event"
        return killed(module.NAME, signal, before)
    return module.outcome(state, exit_code, signal, tail)


def _lines(stdout: bytes | str) -> Iterable[bytes]:
    data = stdout.encode("utf-8", "surrogateescape") if isinstance(stdout, str) else stdout
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return (line.rstrip(b"\r") for line in lines)


def replay(
    cli: str,
    stdout: bytes | str,
    stderr: bytes | str = "",
    exit_code: int | None = 0,
    signal: int | None = None,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> RunResult:
    """The RunResult of a finished process, from its output (the same parsers `run` uses)."""
    from ._clis import module_for

    module = module_for(cli)
    state = ParseState(module.NAME)
    events: list[Event] = []
    for raw in _lines(stdout):
        events.extend(decode_line(raw, module, state, max_line_bytes))
    tail = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    return finish(module, state, events, exit_code, signal, tail[-STDERR_TAIL_CHARS:])

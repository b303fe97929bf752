"""From a process's output to events and a RunResult: pure.

The runners feed stdout here chunk by chunk as it comes; `replay` feeds a finished process's
whole stdout as one chunk. Either way the lines are cut and capped by the same splitter
(`_core.lines.BoundedLines`, of bytes).
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from .._core.events import Done, Error, Event, Raw, RunResult, ToolEnd
from .._core.lines import BoundedLines
from .._core.secrets import scrub
from .._core.untrusted import valid_unicode
from ._deferred import ErrorDetail
from ._line_json import STANDARD_SCAN, accelerator_pending, json_accelerator
from ._options import DEFAULT_MAX_LINE_BYTES
from ._parsing import (
    HANDLERS,
    KEPT_ERRORS,
    CliModule,
    StateT,
    bad_line,
    killed,
)

__all__ = [
    "NO_LIMIT",
    "STDERR_TAIL_CHARS",
    "EventLog",
    "LineReader",
    "ProcessEnd",
    "decode_line",
    "finish",
    "line_reader",
    "replay",
    "stderr_tail",
]

STDERR_TAIL_CHARS = 8192  # the end of stderr kept on a RunResult
_SCRUB_MARGIN = 2048  # scrubbed with the tail: a credential that starts just before it


def decode_line(
    line: bytes | int, module: CliModule[StateT], state: StateT, max_line_bytes: int
) -> list[Event]:
    """One line from `BoundedLines` to events: its bytes (without the newline), or the size of an
    oversize line it skipped. A bad line is an error event; the stream goes on."""
    return line_reader(module, state, max_line_bytes)([line], NO_LIMIT)[0]


NO_LIMIT = sys.maxsize
"""A count of consecutive tool failures no run reaches: `LineReader` without a guardrail."""

LineReader = Callable[[list[bytes | int], int], tuple[list[Event], bool]]
"""Lines from `BoundedLines` and the guardrail's limit -> (their events, whether the guardrail
stopped them): a line with a `ToolEnd` that leaves `limit` consecutive tool failures ends the
events at its first `ToolEnd`, and no line after it is read."""


def line_reader(module: CliModule[StateT], state: StateT, max_line_bytes: int) -> LineReader:
    """The `LineReader` of one run, its lookups done once: a line that holds a JSON object
    goes from its bytes to the module's handler of its `type` (decoded by the accelerator when
    there is one, else by the standard parser); any other line, and any the fast decoding
    refuses, takes the general path (text, `parse_line`), which decides. One loop for all the
    lines of a read: no call a line but the decoder's and the handler's."""
    parse_line = module.parse_line
    handlers = HANDLERS.get(parse_line)
    handler_for = handlers.get if handlers is not None else None
    # The standard parser until the accelerator's byte budget is spent (then looked up once).
    pending = accelerator_pending()
    fast = None if pending else json_accelerator()
    scan = STANDARD_SCAN  # the standard parser's own C scanner: one call a line
    cli = module.NAME

    def general(line: bytes | int) -> list[Event]:
        if isinstance(line, int):
            why = f"line of {line} bytes over the {max_line_bytes}-byte cap"
            return [bad_line(cli, "", why)]
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            return [bad_line(cli, line.decode("utf-8", "replace"), "invalid UTF-8")]
        if not text or text.isspace():
            return []
        return parse_line(text, state)

    def careful(line: bytes | int) -> list[Event] | Event:
        """One line read step by step, assuming nothing of it: what the hot loops do with a
        typed object, and the general path for whatever the fast decoding refuses (an
        oversize line's size, invalid UTF-8, a blank line, a value that is not the whole
        line, whitespace around it, anything the accelerator refuses)."""
        try:
            if fast is None:
                text = line.decode()  # type: ignore[union-attr]
                data, end = scan(text, 0)
                if end != len(text):
                    data = None
            else:
                data = fast(line)  # type: ignore[arg-type]
        except Exception:
            data = None
        if type(data) is not dict:
            return general(line)
        # What `line_parser`'s parse_line does with the object, without its calls.
        kind: Any = data.get("type")
        try:
            handler = handler_for(kind)  # type: ignore[misc]
        except TypeError:  # a `type` that is a list or an object: no handler's
            handler = None
        return handler(data, state) if handler is not None else Raw(cli, data)

    def counted(line: bytes | int) -> list[Event] | Event:
        """`careful`, while the accelerator is to be looked up: the line's bytes counted
        first (`json_accelerator`'s budget)."""
        nonlocal fast, pending
        if pending:
            fast = json_accelerator(len(line) if type(line) is bytes else 0)
            pending = accelerator_pending()
        return careful(line)

    if handler_for is None:  # a module written by hand: every line as text
        return lambda lines, limit: _each(general, state, lines, limit)
    standard = _standard_loop(handler_for, state, cli, careful, general)
    accelerated = _accelerated_loop(handler_for, state, cli, careful)

    def read_lines(lines: list[bytes | int], limit: int) -> tuple[list[Event], bool]:
        if pending:  # ACCELERATE_AFTER_BYTES: counted line by line, then looked up once
            return _each(counted, state, lines, limit)
        if fast is None:
            return standard(lines, limit)
        return accelerated(fast, lines, limit)

    return read_lines


def _each(
    read: Callable[[bytes | int], list[Event] | Event],
    state: StateT,
    lines: list[bytes | int],
    limit: int,
) -> tuple[list[Event], bool]:
    """The events of `lines`, each read by `read`, up to the guardrail's stop."""
    events: list[Event] = []
    for line in lines:
        found = read(line)
        if type(found) is not list:
            found = [found]  # type: ignore[list-item]
        if state.consecutive_tool_failures >= limit and ToolEnd in map(type, found):
            return stopped(events, found)
        events += found
    return events, False


# The hot loops of `line_reader`: most lines are a JSON object whose `type` has a handler,
# decoded in one call, one event made. Any other line raises in the `try` (not an object, no
# `type`, one that is a list or an object, a line the decoding refuses) and `careful` decides.


def _standard_loop(
    handler_for: Callable[[Any], Callable[[dict[str, Any], StateT], list[Event] | Event] | None],
    state: StateT,
    cli: str,
    careful: Callable[[bytes | int], list[Event] | Event],
    general: Callable[[bytes | int], list[Event]],
) -> LineReader:
    """The loop with the standard parser's scanner."""
    scan = STANDARD_SCAN

    def read_lines(lines: list[bytes | int], limit: int) -> tuple[list[Event], bool]:
        events: list[Event] = []
        append = events.append
        found: list[Event] | Event
        for line in lines:
            try:
                text = line.decode()  # type: ignore[union-attr]
                data, end = scan(text, 0)
                handler = handler_for(data["type"])
            except Exception:
                found = careful(line)
            else:
                if end != len(text):  # not the whole line: the general path decides
                    found = general(line)
                elif handler is not None:
                    found = handler(data, state)
                else:
                    found = Raw(cli, data)
            if type(found) is not list:
                if state.consecutive_tool_failures >= limit and type(found) is ToolEnd:
                    return stopped(events, [found])
                append(found)  # type: ignore[arg-type]
                continue
            if state.consecutive_tool_failures >= limit and ToolEnd in map(type, found):
                return stopped(events, found)
            events += found
        return events, False

    return read_lines


def _accelerated_loop(
    handler_for: Callable[[Any], Callable[[dict[str, Any], StateT], list[Event] | Event] | None],
    state: StateT,
    cli: str,
    careful: Callable[[bytes | int], list[Event] | Event],
) -> Callable[[Callable[[bytes], Any], list[bytes | int], int], tuple[list[Event], bool]]:
    """The loop with the accelerator (given each call: it is looked up once, in a run)."""

    def read_lines(
        decode: Callable[[bytes], Any], lines: list[bytes | int], limit: int
    ) -> tuple[list[Event], bool]:
        events: list[Event] = []
        append = events.append
        found: list[Event] | Event
        for line in lines:
            try:
                data = decode(line)  # type: ignore[arg-type]
                handler = handler_for(data["type"])
            except Exception:
                found = careful(line)
            else:
                found = handler(data, state) if handler is not None else Raw(cli, data)
            if type(found) is not list:
                if state.consecutive_tool_failures >= limit and type(found) is ToolEnd:
                    return stopped(events, [found])
                append(found)  # type: ignore[arg-type]
                continue
            if state.consecutive_tool_failures >= limit and ToolEnd in map(type, found):
                return stopped(events, found)
            events += found
        return events, False

    return read_lines


def stopped(events: list[Event], found: list[Event]) -> tuple[list[Event], bool]:
    """`events`, then a line's `found` up to its first `ToolEnd`: the guardrail stopped them."""
    first = next(i for i, event in enumerate(found) if type(event) is ToolEnd)
    return [*events, *found[: first + 1]], True


def stderr_tail(text: str) -> str:
    """The end of a CLI's stderr as a result keeps it: its last STDERR_TAIL_CHARS, valid
    Unicode, credentials scrubbed (a CLI may print its environment or a key it was given)."""
    return valid_unicode(scrub(text[-(STDERR_TAIL_CHARS + _SCRUB_MARGIN) :]))[-STDERR_TAIL_CHARS:]


class EventLog:
    """The events a result keeps: the last `limit` (None: every one; 0: none), within
    `max_bytes` of the stdout lines they came from. Also the latest failures sent as events,
    so that the one that decides the run is not sent twice.

    A plain slotted class, as `BoundedLines` is: it is on the import path of `recoverable run`."""

    __slots__ = ("events", "max_bytes", "sent_errors", "size", "sizes")

    def __init__(self, limit: int | None = None, max_bytes: int | None = None) -> None:
        self.events: deque[Event] = deque(maxlen=limit)
        self.max_bytes = max_bytes
        # The line bytes of each kept event, evicted with it (with a byte budget only).
        self.sizes: deque[int] | None = deque(maxlen=limit) if max_bytes and limit else None
        self.size = 0
        self.sent_errors: deque[ErrorDetail] = deque(maxlen=KEPT_ERRORS)

    def add(self, event: Event, line_bytes: int = 0) -> None:
        """An event was sent; `line_bytes`: the size of the line it came from (0 for the
        second event of one line, and for events of no line)."""
        if type(event) is Error and event.severity == "error":
            self.sent_errors.append(event.detail)
        self.events.append(event)  # the oldest leaves a full deque by itself
        sizes = self.sizes
        if sizes is None:
            return
        if len(sizes) == sizes.maxlen:
            self.size -= sizes[0]  # the size of the event that just left
        sizes.append(line_bytes)
        self.size += line_bytes
        if self.max_bytes is not None and self.size > self.max_bytes:
            events = self.events
            while self.size > self.max_bytes and len(events) > 1:
                events.popleft()
                self.size -= sizes.popleft()

    @classmethod
    def holding(cls, events: Iterable[Event]) -> EventLog:
        """A log of every one of `events` (what `add` would make of them, in one pass)."""
        log = cls()
        log.events.extend(events)
        log.sent_errors.extend(
            event.detail
            for event in log.events
            if type(event) is Error and event.severity == "error"
        )
        return log

    def sent(self, detail: ErrorDetail) -> bool:
        """Whether `detail` was sent as a failure (lately: the last KEPT_ERRORS)."""
        return any(sent is detail for sent in self.sent_errors)


# A NamedTuple, not a frozen dataclass: this is on the import path of `recoverable run`, where
# a dataclass takes up to ~1 ms to create and a NamedTuple a tenth of that.
class ProcessEnd(NamedTuple):
    """How a CLI process ended, as its runner (or `replay`'s caller) saw it."""

    exit_code: int | None = None
    """Its exit code; None when a signal killed it, or when it never started."""
    signal: int | None = None
    """The signal that killed it."""
    stderr_tail: str = ""
    """The end of its stderr, as `stderr_tail` makes it."""

    @classmethod
    def from_returncode(cls, returncode: int, stderr_tail: str) -> ProcessEnd:
        """From a `returncode` as subprocess and asyncio report it (below 0: minus the signal)."""
        if returncode < 0:
            return cls(None, -returncode, stderr_tail)
        return cls(returncode, None, stderr_tail)


def finish(
    module: CliModule[StateT],
    state: StateT,
    log: EventLog,
    end: ProcessEnd,
    *,
    forced: ErrorDetail | None = None,
) -> list[Event]:
    """Decide the outcome (our own reason first, else the CLI's): the events that close the
    run, the deciding `Error` when it was not sent yet, then `Done`."""
    error = forced if forced is not None else _outcome(module, state, end)
    closing: list[Event] = []
    if error is not None and not log.sent(error):
        closing.append(Error(error))
        log.add(closing[-1])
    result = RunResult(
        success=error is None,
        text=state.text,
        error=error,
        exit_code=end.exit_code,
        signal=end.signal,
        session_id=state.session_id,
        usage=state.usage,
        cost_usd=state.cost_usd,
        stderr_tail=end.stderr_tail,
        events=tuple(log.events),
        cli=module.NAME,
    )
    closing.append(Done(result))
    return closing


def _outcome(module: CliModule[StateT], state: StateT, end: ProcessEnd) -> ErrorDetail | None:
    """One rule for every CLI: the terminal event decides, whatever the exit code; without
    one, a signal (one we did not send: the runner speaks for ours) is a kill; only then does
    the CLI module read its exit code and stderr."""
    if state.terminal == "success":
        return None
    if isinstance(state.terminal, ErrorDetail):
        return state.terminal
    if end.signal is not None:
        return killed(module.NAME, end.signal, "before its terminal event")
    return module.outcome(state, end.exit_code, end.stderr_tail)


def replay(  # noqa: PLR0913 -- the public signature: what a finished process left
    cli: str,
    stdout: bytes | str,
    stderr: bytes | str = "",
    exit_code: int | None = 0,
    signal: int | None = None,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> RunResult:
    """The RunResult of a finished process, from its output (the same parsers `run` uses)."""
    from ._cli_modules import module_for

    module = module_for(cli)
    state = module.new_state()
    data = stdout.encode("utf-8", "surrogateescape") if isinstance(stdout, str) else stdout
    lines = BoundedLines(max_line_bytes, bytes)
    events, _ = line_reader(module, state, max_line_bytes)(
        [*lines.feed(data), *lines.close()], NO_LIMIT
    )
    log = EventLog.holding(events)
    tail = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    end = ProcessEnd(exit_code, signal, stderr_tail(tail))
    done = finish(module, state, log, end)[-1]
    assert isinstance(done, Done)
    return done.result

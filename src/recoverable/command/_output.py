"""How `recoverable run` shows a run to a person: the answer on stdout, the rest on stderr.

A warning starts on a line of its own without a blank line before it; a text cut to fit
ends with an ellipsis, at a word boundary; a CLI's own retry of a failure that is not
retryable says so.

While the CLI is silent (its own retries can take a minute, a provider may never answer),
the run says what it waits for, counted down: the CLI's own retry when it said how long it
waits, else the deadline that stops a silent run (`--idle-timeout`, `--timeout`). In a
terminal that is one status line on stderr, rewritten each second; without one, a
`[waiting]` line at the start of a known wait and then one every `line_interval` seconds
(15, or a fifth of the nearest deadline when that is shorter), so a log shows it too. A
wait shorter than that interval gets no countdown (its warning says it). Nothing here is
used with `--json`. What a wait is (`Waiting`, `RetryWait`) is in `_waiting`, loaded at the
first silence or announced retry: a run that is never silent does not build those classes.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import TextIO

from .. import agents
from .._core.values import value_class

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .._core.detail import ErrorDetail
    from ._waiting import RetryWait, Waiting

__all__ = [
    "Deadlines",
    "Printer",
    "clip",
    "describe_failure",
    "line_interval",
]

ELLIPSIS = "…"
MESSAGE_CHARS = 300  # a warning's message, on one screen line or two
TOOL_INPUT_CHARS = 200
PROGRESS_AFTER_S = 1.0  # silence before the status line appears
PROGRESS_EVERY_S = 1.0
LINE_EVERY_S = 15.0  # without a terminal: a [waiting] line this often, at most
LINE_EVERY_MIN_S = 1.0
_CLEAR_LINE = "\r\x1b[K"


def clip(text: str, limit: int) -> str:
    """`text` in at most `limit` characters: whole, or cut at a word boundary (when one is
    in the second half) and ended with an ellipsis, never mid-word without one."""
    text = " ".join(text.split())  # one line: a message's own newlines would break the layout
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + ELLIPSIS


def describe_failure(error: ErrorDetail) -> list[str]:
    """How a run failed, for a person: the code, whether a retry may help, and the fix."""
    from .._core.public import public_sentence  # a person reads only this process's sentences

    sentence = public_sentence(error)
    lines = [f"{error.code} (retryable: {str(error.retryable).lower()}) - {sentence}"]
    if error.fix_required:
        lines.append(f"fix: {error.fix_required}")
    if error.fix_command:
        lines.append(f"run: {error.fix_command}")
    return lines


def _warning_line(event: agents.ErrorEvent) -> str:
    detail = event.detail
    message = clip(detail.message, MESSAGE_CHARS)
    if event.is_retry and not detail.retryable:
        # The CLI retries something waiting will not fix (Claude retries a 401): say so.
        cli = detail.source or "the CLI"
        return (
            f"[warning] {cli} retries {detail.code} on its own, though it is not retryable"
            f" - {message}"
        )
    if event.is_retry:
        return f"[warning] retrying after {detail.code} - {message}"
    next_cli = detail.details.get("fallback_to")
    if isinstance(next_cli, str):  # a run that falls back along an order of CLIs
        return f"[warning] {detail.source} failed: {detail.code} - {message}; trying {next_cli}"
    label = "failed: " if event.severity == "error" else ""  # else: just what it says
    return f"[{event.severity}] {label}{detail.code} - {message}"


@value_class
class Deadlines:
    """The run's own deadlines, in seconds (None: none): what stops a silent run."""

    idle_s: float | None
    """`--idle-timeout`: seconds without any event."""
    total_s: float | None = None
    """`--timeout`: seconds the whole run may take."""


def line_interval(deadlines: Deadlines) -> float:
    """How often a silent run gets a `[waiting]` line without a terminal: every 15 s, or a
    fifth of the nearest deadline when that is shorter (a short deadline still gets a
    countdown), never more often than once a second."""
    given = [s for s in (deadlines.idle_s, deadlines.total_s) if s is not None]
    fifth = min(given) / 5 if given else LINE_EVERY_S
    return max(LINE_EVERY_MIN_S, min(LINE_EVERY_S, fifth))


class Printer:
    """Writes a run's events for a person; while the run is silent, what it waits for (a
    thread: the status line each second in a `terminal`, else `[waiting]` lines) until
    `close`."""

    def __init__(
        self, out: TextIO, err: TextIO, cli: str, *, terminal: bool, deadlines: Deadlines
    ) -> None:
        self.out, self.err, self.cli = out, err, cli
        self.terminal, self.deadlines = terminal, deadlines
        self.mid_line = False
        """The answer's last line on stdout is not finished yet."""
        self.shared = _same_screen(out, err)
        """stdout and stderr end up in one place (a terminal, one file): a line on stderr
        must end the answer's unfinished line first."""
        self.started = self.last_event = time.monotonic()
        self.last_warning: str | None = None
        self.retry: RetryWait | None = None
        self.every = PROGRESS_EVERY_S if terminal else line_interval(deadlines)
        self.next_line: float | None = None
        """Without a terminal: when the next [waiting] line is due (None: after `every` s of
        silence)."""
        self.status_shown = False
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._tick, name="recoverable-progress")
        self.thread.daemon = True
        self.thread.start()

    def close(self) -> None:
        """Stop the status line and clear it."""
        self.stop.set()
        self.thread.join()
        with self.lock:
            self._clear_status()

    def event(self, event: agents.Event) -> None:
        with self.lock:
            now = self.last_event = time.monotonic()
            self.next_line = None
            self._clear_status()
            self._write(event)
            if isinstance(event, agents.ErrorEvent):
                self._waits(event, now)

    # -- under the lock ---------------------------------------------------------------

    def _waits(self, event: agents.ErrorEvent, now: float) -> None:
        """A retry the CLI announces with its wait: counted down; without a terminal, a wait
        of one interval or more gets its first line now."""
        from ._waiting import retry_wait

        retry = retry_wait(event, now)
        self.retry = retry
        if retry is not None and not self.terminal and retry.ends - now >= self.every:
            self._line(self._waiting(now).line())
            self.next_line = now + self.every

    def _waiting(self, now: float) -> Waiting:
        from ._waiting import Waiting

        return Waiting(
            self.cli,
            now,
            self.started,
            self.last_event,
            self.deadlines,
            self.retry,
            self.last_warning,
        )

    def _write(self, event: agents.Event) -> None:
        if isinstance(event, agents.TextDelta):
            self.out.write(event.text)
            self.out.flush()
            if event.text:
                self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, agents.ToolStart):
            self._line(f"[tool] {event.name} {clip(json.dumps(event.input), TOOL_INPUT_CHARS)}")
        elif isinstance(event, agents.ToolEnd):
            self._line(f"[tool] {'ok' if event.success else 'failed'}")
        elif isinstance(event, agents.ErrorEvent):
            line = _warning_line(event)
            if event.severity == "warning":
                self.last_warning = line.removeprefix("[warning] ")
            self._line(line)
        elif isinstance(event, agents.Done):
            if event.result.error is None:
                if self.mid_line:
                    print(file=self.out)  # the answer ends with its line
                    self.mid_line = False
            else:
                for line in describe_failure(event.result.error):
                    self._line(line)

    def _line(self, text: str) -> None:
        """One line on stderr, starting on a line of its own: where the answer's unfinished
        line and stderr meet, that line is ended first."""
        self._end_answer_line()
        print(text, file=self.err, flush=True)

    def _end_answer_line(self) -> None:
        if self.mid_line and self.shared:
            print(file=self.out, flush=True)
            self.mid_line = False

    def _clear_status(self) -> None:
        if self.status_shown:
            self.err.write(_CLEAR_LINE)
            self.err.flush()
            self.status_shown = False

    def _tick(self) -> None:
        while not self.stop.wait(PROGRESS_EVERY_S if self.terminal else _LINE_TICK_S):
            with self.lock:
                now = time.monotonic()
                if self.terminal and now - self.last_event >= PROGRESS_AFTER_S:
                    self._show_status(now)
                elif not self.terminal:
                    self._due_line(now)

    def _due_line(self, now: float) -> None:
        due = self.last_event + self.every if self.next_line is None else self.next_line
        if now >= due:
            self._line(self._waiting(now).line())
            self.next_line = due + self.every

    def _show_status(self, now: float) -> None:
        self._end_answer_line()  # the answer's unfinished line stays
        import shutil  # in a terminal only: shutil loads the archive modules (~1.5 ms)

        width = shutil.get_terminal_size().columns  # a wrapped line could not be rewritten
        self.err.write(_CLEAR_LINE + clip(self._waiting(now).status(), max(width - 1, 20)))
        self.err.flush()
        self.status_shown = True


_LINE_TICK_S = 0.25  # how often a due [waiting] line is looked for


def _same_screen(out: TextIO, err: TextIO) -> bool:
    """Whether stdout and stderr show up together: both terminals, or one file or pipe."""
    try:
        if out.isatty() and err.isatty():
            return True
        first, second = os.fstat(out.fileno()), os.fstat(err.fileno())
    except (OSError, ValueError, AttributeError):  # a StringIO, a closed stream
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)

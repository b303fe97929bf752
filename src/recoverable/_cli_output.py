"""How `recoverable run` shows a run to a person: the answer on stdout, the rest on stderr.

A warning starts on a line of its own without a blank line before it; a text cut to fit
ends with an ellipsis, at a word boundary; a CLI's own retry of a failure that is not
retryable says so. While the CLI is silent (its own retries can take a minute), an
interactive terminal gets one status line, rewritten each second: how long the run has
gone, how long since its last event, and its last warning. Nothing here is used with
`--json` or when stderr is not a terminal.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from typing import TextIO

from . import agents
from ._detail import ErrorDetail

__all__ = ["Printer", "clip", "describe_failure"]

ELLIPSIS = "…"
MESSAGE_CHARS = 300  # a warning's message, on one screen line or two
TOOL_INPUT_CHARS = 200
PROGRESS_AFTER_S = 1.0  # silence before the status line appears
PROGRESS_EVERY_S = 1.0
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
    lines = [f"{error.code} (retryable: {str(error.retryable).lower()}) - {error.user_message}"]
    if error.fix_required:
        lines.append(f"fix: {error.fix_required}")
    if error.fix_command:
        lines.append(f"run: {error.fix_command}")
    return lines


def _warning_line(event: agents.Error) -> str:
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


class Printer:
    """Writes a run's events for a person; with `progress`, also the status line of a silent
    run (a thread rewrites it each second until `close`)."""

    def __init__(self, out: TextIO, err: TextIO, cli: str, *, progress: bool) -> None:
        self.out, self.err, self.cli = out, err, cli
        self.mid_line = False
        """The answer's last line on stdout is not finished yet."""
        self.started = self.last_event = time.monotonic()
        self.last_warning: str | None = None
        self.status_shown = False
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        if progress:
            self.thread = threading.Thread(target=self._tick, name="recoverable-progress")
            self.thread.daemon = True
            self.thread.start()

    def close(self) -> None:
        """Stop the status line and clear it."""
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        with self.lock:
            self._clear_status()

    def event(self, event: agents.Event) -> None:
        with self.lock:
            self.last_event = time.monotonic()
            self._clear_status()
            self._write(event)

    # -- under the lock ---------------------------------------------------------------

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
        elif isinstance(event, agents.Error):
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
        """One line on stderr, starting on a line of its own: a terminal that shows the
        answer's unfinished line and stderr together needs it ended first."""
        if self.mid_line and self.out.isatty() and self.err.isatty():
            print(file=self.out, flush=True)
            self.mid_line = False
        print(text, file=self.err, flush=True)

    def _clear_status(self) -> None:
        if self.status_shown:
            self.err.write(_CLEAR_LINE)
            self.err.flush()
            self.status_shown = False

    def _tick(self) -> None:
        while not self.stop.wait(PROGRESS_EVERY_S):
            with self.lock:
                now = time.monotonic()
                if now - self.last_event >= PROGRESS_AFTER_S:
                    self._show_status(now)

    def _show_status(self, now: float) -> None:
        if self.mid_line and self.out.isatty():  # the answer's unfinished line stays
            print(file=self.out, flush=True)
            self.mid_line = False
        waited, silent = round(now - self.started), round(now - self.last_event)
        status = f"… {self.cli} running {waited} s, no output for {silent} s"
        if self.last_warning:
            status += f" (last: {self.last_warning})"
        width = shutil.get_terminal_size().columns  # a wrapped line could not be rewritten
        self.err.write(_CLEAR_LINE + clip(status, max(width - 1, 20)))
        self.err.flush()
        self.status_shown = True

"""`recoverable exec [--json] [--retries N] [--fix] [--allow-fix CMD]... -- CMD ARGS...`: any
command, under the ladder.

The command runs without a shell, in its own process group, its stdout kept (bounded) and its
stderr passed through. A failure is classified as any finished process (`process_envelope`:
a signal, a tool's own envelope, an AI CLI's output, the shell's statuses, the stderr tail),
transient ones are reissued as the ladder says (`recover`), and with `--fix` a fix this
process may run (registered in this process for the failure's code, or named with
`--allow-fix`, word for word) runs before one reissue. The command's own envelope is a
payload: a `fix_command` it prints is never run because it printed it, whatever program it
names; it is shown (`details.suggested_command`, `meta.ladder`), for a person to judge. The
answer: the envelope on stdout with `--json` (the command's data on success), else the
command's own stdout on success and a readable failure on stderr; the exit code is the
registry's for the failure, 0 on success.
"""

from __future__ import annotations

import argparse
import signal as signals
import sys
import time
from typing import Any, TextIO

from .._classify.process_exit import process_envelope, spawn_failure, timed_out
from .._core.detail import ErrorDetail
from .._core.envelope import Envelope, written
from .._core.error import RecoverableError
from .._core.fix_gate import SUGGESTED_COMMAND
from ._ladder import MAX_RETRIES_PER_CODE, Action
from ._recover import FIX_TIMEOUT_S, Recovery, recover
from ._run_process import Terminated, run_bounded, terminations_raise

__all__ = ["MAX_STDOUT", "cmd_exec"]

MAX_STDOUT = 8 * 1024 * 1024
"""What `exec` keeps of one attempt's stdout; the rest is counted, dropped, and said so."""
_LABEL = "[recoverable exec]"


class _Attempts:
    """The command, run once per call; what the last run printed and answered."""

    def __init__(self, argv: list[str], timeout: float | None) -> None:
        self.argv, self.timeout = argv, timeout
        self.last: Envelope | None = None
        self.stdout = b""
        self.dropped = 0

    def __call__(self) -> Envelope:
        envelope = self._run()
        self.last = envelope
        if envelope.error is not None:
            raise RecoverableError(envelope.error)
        return envelope

    def _run(self) -> Envelope:
        argv = self.argv
        try:
            done = run_bounded(
                argv,
                timeout=self.timeout,
                max_stdout=MAX_STDOUT,
                stderr_copy=getattr(sys.stderr, "buffer", None),  # passed through as it comes
            )
        except OSError as exc:
            self.stdout, self.dropped = b"", 0
            return Envelope.failure(spawn_failure(exc, argv))
        self.stdout, self.dropped = done.stdout, done.stdout_dropped
        if done.returncode is None:
            detail = timed_out(argv, self.timeout, done.stderr_tail)
            return Envelope.failure(detail, duration_ms=done.duration_ms)
        return process_envelope(
            done.returncode,
            stdout=done.stdout,
            stderr=done.stderr_tail,
            argv=argv,
            duration_ms=done.duration_ms,
        )


def cmd_exec(args: argparse.Namespace, out: TextIO) -> int:
    argv = list(args.argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print(
            "recoverable exec: error: no command given (recoverable exec -- CMD ARGS...)",
            file=sys.stderr,
        )
        return 2
    attempts = _Attempts(argv, args.timeout)
    started = time.monotonic()
    stopped_by: int | None = None
    try:
        with terminations_raise():  # a supervisor's stop: the command's group first, then us
            recovery = _recover(attempts, args)
    except KeyboardInterrupt:
        recovery = Recovery(None, _cancelled("the caller interrupted the command"), 1)
    except Terminated as end:
        stopped_by, name = end.signum, signals.Signals(end.signum).name
        recovery = Recovery(None, _cancelled(f"{name} stopped the command", name), 1)
    envelope = _answer(recovery, attempts, round((time.monotonic() - started) * 1000))
    text, envelope = written(envelope)
    if args.json:
        print(text, file=out)
    elif envelope.error is not None:
        _print_failure(envelope.error)
    else:
        out.flush()
        sys.stdout.buffer.write(attempts.stdout)
        sys.stdout.buffer.flush()
    if attempts.dropped:
        print(
            f"{_LABEL} stdout was cut at {MAX_STDOUT} bytes ({attempts.dropped} more dropped)",
            file=sys.stderr,
        )
    # A signal's stop exits as a shell reports it (128 + n), whatever the envelope's code.
    return envelope.exit_code if stopped_by is None else 128 + stopped_by


def _recover(attempts: _Attempts, args: argparse.Namespace) -> Recovery[Envelope]:
    allowed: list[str] = args.allow_fix
    return recover(
        attempts,
        run_fixes=args.fix or bool(allowed),  # naming a fix to run asks for fixes
        allow_fixes=allowed,
        retries=args.retries,
        fix_timeout=args.fix_timeout or FIX_TIMEOUT_S,
        on_step=_Steps(args.retries),
    )


def _answer(recovery: Recovery[Envelope], attempts: _Attempts, duration_ms: int) -> Envelope:
    """The envelope of the whole exec: the last attempt's, with the ladder in `meta`."""
    last = attempts.last
    meta: dict[str, Any] = {**(last.meta if last is not None else {})}
    meta["duration_ms"] = duration_ms
    meta["attempts"] = recovery.attempts
    meta["ladder"] = [item.to_dict() for item in recovery.history if isinstance(item, Action)]
    if recovery.fixes:
        meta["fixes"] = [fix.to_dict() for fix in recovery.fixes]
    if attempts.dropped:
        meta["truncated"] = True
    warnings = last.warnings if last is not None else ()
    if recovery.error is None and last is not None:
        return Envelope(True, last.data, None, warnings, meta)
    assert recovery.error is not None
    return Envelope(False, None, recovery.error, warnings, meta)


def _cancelled(why: str, signal: str | None = None) -> ErrorDetail:
    from .._core.detail import unvalidated

    return unvalidated("run_cancelled", why, details={"signal": signal} if signal else None)


class _Steps:
    """Each reissue the ladder decides, on stderr, as it is taken (a stop is the answer). A
    retry is counted against this exec's own budget (`--retries`), the one that stops it; the
    ladder's per-code limit (3 in a row) stops it sooner only past that."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.retries = 0

    def __call__(self, failure: ErrorDetail, action: Action) -> None:
        if action.kind == "retry":
            self.retries += 1
            limit = f"--retries {self.budget}"
            if self.budget > MAX_RETRIES_PER_CODE:
                limit += f"; at most {MAX_RETRIES_PER_CODE} in a row of one code"
            what = (
                f"retrying in {_wait_text(action.wait_ms)} (retry {self.retries} of "
                f"{self.budget}: {limit})"
            )
        elif action.kind == "run_fix":
            what = f"running its fix: {action.command}"
        else:
            return
        print(f"{_LABEL} {failure.code}: {what}", file=sys.stderr, flush=True)


def _wait_text(wait_ms: int) -> str:
    """A wait for a person: seconds, as precise as it was given (1000 -> 1 s, 250 -> 0.25 s)."""
    return f"{wait_ms / 1000:g} s"


def _print_failure(error: ErrorDetail) -> None:
    """How the command failed, for a person."""
    print(
        f"{_LABEL} {error.code} (retryable: {str(error.retryable).lower()}) - {error.message}",
        file=sys.stderr,
    )
    if error.fix_required:
        print(f"fix: {error.fix_required}", file=sys.stderr)
    if error.fix_command:
        print(f"run: {error.fix_command}", file=sys.stderr)
    suggested = error.details.get(SUGGESTED_COMMAND)
    if isinstance(suggested, str):
        import shlex

        flag = f"--allow-fix {shlex.quote(suggested)}"
        print(f"suggested, not run: {suggested} (read it first; {flag} runs it)", file=sys.stderr)
    ladder = error.details.get("ladder")
    if isinstance(ladder, dict) and ladder.get("stopped"):
        print(f"stopped: {ladder['stopped']}", file=sys.stderr)

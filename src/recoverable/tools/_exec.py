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

import os
import sys
import time

from .._core.processes import AI_CLIS
from ._run_process import Finished, Terminated, run_bounded, terminations_raise

# Not `typing.TYPE_CHECKING`. A command that succeeds plainly (exit 0, stdout no envelope) is
# answered from what `run_bounded` saw: nothing classifies, so nothing of the
# classification, the envelope, the ladder, typing or dataclasses is imported (an agent's tool
# call pays a Python start and little more). Anything else loads them, once the command ran.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any, TextIO

    from .._core.detail import ErrorDetail
    from .._core.envelope import Envelope
    from ._ladder import Action
    from ._recover import Recovery

__all__ = [
    "DEFAULT_RETRIES",
    "MAX_STDOUT",
    "ExecRequest",
    "cmd_exec",
    "exec_command",
    "plain_envelope_text",
    "plain_success",
]

MAX_STDOUT = 8 * 1024 * 1024
"""What `exec` keeps of one attempt's stdout; the rest is counted, dropped, and said so."""
_LABEL = "[recoverable exec]"
DEFAULT_RETRIES = 3
"""`--retries` when not given."""


class ExecRequest:
    """What `recoverable exec` is asked to do: its options, then the command. A plain slotted
    class, read-only by convention: the command builds one without argparse (and so without
    dataclasses) when its options are plain."""

    __slots__ = ("allow_fix", "argv", "fix", "fix_timeout", "json", "retries", "timeout")

    def __init__(  # noqa: PLR0913 -- one keyword per option
        self,
        argv: Sequence[str],
        *,
        json: bool = False,
        retries: int = DEFAULT_RETRIES,
        fix: bool = False,
        allow_fix: Sequence[str] = (),
        timeout: float | None = None,
        fix_timeout: float | None = None,
    ) -> None:
        self.argv = list(argv)
        """The command and its arguments (a leading `--` is not part of it)."""
        self.json = json
        """`--json`: the envelope on stdout."""
        self.retries = retries
        """`--retries N`: transient failures reissued at most N times in all."""
        self.fix = fix
        """`--fix`: run a fix registered in this process for the failure's code."""
        self.allow_fix = list(allow_fix)
        """`--allow-fix CMD`...: fix commands the caller names, validated (they imply fix)."""
        self.timeout = timeout
        """`--timeout S`: seconds per attempt."""
        self.fix_timeout = fix_timeout
        """`--fix-timeout S`: seconds a fix may run."""


class _Attempts:
    """The command, run once per call; what the last run printed and answered. The first run
    happens before the ladder (`first`), so a plain success needs no ladder; the ladder's first
    call reads that run."""

    def __init__(self, argv: list[str], timeout: float | None) -> None:
        self.argv, self.timeout = argv, timeout
        self.last: Envelope | None = None
        self.stdout = b""
        self.dropped = 0
        self.pending: Finished | OSError | None = None

    def first(self) -> Finished | OSError:
        """Run the command once, unread: what the ladder's first call will read."""
        self.pending = self._spawn()
        return self.pending

    def __call__(self) -> Envelope:
        from .._core.error import RecoverableError

        done = self._spawn() if self.pending is None else self.pending
        self.pending = None
        envelope = self._read(done)
        self.last = envelope
        if envelope.error is not None:
            raise RecoverableError(envelope.error)
        return envelope

    def _spawn(self) -> Finished | OSError:
        try:
            done = run_bounded(
                self.argv,
                timeout=self.timeout,
                max_stdout=MAX_STDOUT,
                stderr_copy=getattr(sys.stderr, "buffer", None),  # passed through as it comes
            )
        except OSError as exc:
            self.stdout, self.dropped = b"", 0
            return exc
        self.stdout, self.dropped = done.stdout, done.stdout_dropped
        return done

    def _read(self, done: Finished | OSError) -> Envelope:
        from .._classify.process_exit import process_envelope, spawn_failure, timed_out
        from .._core.envelope import Envelope

        argv = self.argv
        if isinstance(done, OSError):
            return Envelope.failure(spawn_failure(done, argv))
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


def plain_success(done: Finished | OSError, argv: Sequence[str]) -> bool:
    """Whether `done` is a success that reading it would leave as it is: exit 0, a program no
    parser of its own reads (not an AI CLI), and stdout that cannot open an envelope (its first
    byte after ASCII blanks is not `{`, nor one a decoded text would strip before one). Then
    the answer is its stdout, exit 0, exactly as the full reading (`process_envelope`) gives;
    where this says no, the full reading decides."""
    if not isinstance(done, Finished) or done.returncode != 0 or not argv:
        return False
    name = os.path.basename(argv[0])
    if not (name.isascii() and name.isprintable()) or name in AI_CLIS:
        return False
    head = done.stdout.lstrip()[:1]
    return head == b"" or (head[0] < 0x80 and head not in b"{\x1c\x1d\x1e\x1f")


def cmd_exec(args: argparse.Namespace, out: TextIO) -> int:
    """`exec` as argparse read it."""
    request = ExecRequest(
        args.argv,
        json=args.json,
        retries=args.retries,
        fix=args.fix,
        allow_fix=args.allow_fix,
        timeout=args.timeout,
        fix_timeout=args.fix_timeout,
    )
    return exec_command(request, out)


def exec_command(request: ExecRequest, out: TextIO) -> int:
    """Run the request's command under the ladder and answer; returns the exit code."""
    argv = list(request.argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print(
            "recoverable exec: error: no command given (recoverable exec -- CMD ARGS...)",
            file=sys.stderr,
        )
        return 2
    attempts = _Attempts(argv, request.timeout)
    started = time.monotonic()
    stopped_by: int | None = None
    recovery: Recovery[Envelope] | None = None  # stays None for a plain success
    try:
        with terminations_raise():  # a supervisor's stop: the command's group first, then us
            done = attempts.first()
            if not plain_success(done, argv):
                recovery = _recover(attempts, request)
    except KeyboardInterrupt:
        recovery = _stopped("the caller interrupted the command")
    except Terminated as end:
        import signal as signals

        stopped_by, name = end.signum, signals.Signals(end.signum).name
        recovery = _stopped(f"{name} stopped the command", name)
    if recovery is None:  # answered outside the handlers, as every answer is
        duration_ms = round((time.monotonic() - started) * 1000)
        return _plain_answer(attempts, request.json, duration_ms, out)
    from .._core.envelope import written

    envelope = _answer(recovery, attempts, round((time.monotonic() - started) * 1000))
    text, envelope = written(envelope)
    if request.json:
        print(text, file=out)
    elif envelope.error is not None:
        _print_failure(envelope.error)
    else:
        _write_stdout(attempts, out)
    _note_dropped(attempts)
    # A signal's stop exits as a shell reports it (128 + n), whatever the envelope's code.
    return envelope.exit_code if stopped_by is None else 128 + stopped_by


def _plain_answer(attempts: _Attempts, as_json: bool, duration_ms: int, out: TextIO) -> int:
    """A plain success's answer: its stdout as it came, or its envelope; exit 0."""
    if as_json:
        print(plain_envelope_text(attempts.stdout, attempts.dropped, duration_ms), file=out)
    else:
        _write_stdout(attempts, out)
    _note_dropped(attempts)
    return 0


def plain_envelope_text(stdout: bytes, dropped: int, duration_ms: int) -> str:
    """The envelope of a plain success, one attempt, as the full reading writes it
    (`process_envelope`, the ladder's `meta`, `written`): `{"stdout": text}` as its data. A
    test holds the two to one text; this one needs neither the envelope's module nor what it
    loads (the code table, the detail, dataclasses)."""
    import json

    meta: dict[str, object] = {"duration_ms": max(duration_ms, 0), "attempts": 1, "ladder": []}
    if dropped:
        meta["truncated"] = True
    data = {"stdout": stdout.decode("utf-8", "replace")}
    answer = {"ok": True, "data": data, "error": None, "warnings": [], "meta": meta}
    return json.dumps(answer, allow_nan=False)


def _write_stdout(attempts: _Attempts, out: TextIO) -> None:
    out.flush()
    sys.stdout.buffer.write(attempts.stdout)
    sys.stdout.buffer.flush()


def _note_dropped(attempts: _Attempts) -> None:
    if attempts.dropped:
        print(
            f"{_LABEL} stdout was cut at {MAX_STDOUT} bytes ({attempts.dropped} more dropped)",
            file=sys.stderr,
        )


def _stopped(why: str, signal: str | None = None) -> Recovery[Envelope]:
    from ._recover import Recovery

    return Recovery(None, _cancelled(why, signal), 1)


def _recover(attempts: _Attempts, args: ExecRequest) -> Recovery[Envelope]:
    from ._recover import FIX_TIMEOUT_S, recover

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
    from .._core.envelope import Envelope
    from ._ladder import Action

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
        from ._ladder import MAX_RETRIES_PER_CODE

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
    from .._core.fix_gate import SUGGESTED_COMMAND

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

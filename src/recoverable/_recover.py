"""The ladder, carried out: run a call, and on each failure do what `next_action` says
(wait and reissue, run the fix and reissue once, or stop): `recover`. The I/O edge of
`_ladder`: it sleeps and runs fix commands.

A fix runs only when asked (`run_fixes=True`), only a command registered for the failure's
code here or one of the tool being run (`companions`), validated again just before it runs,
never built from failure text (principle 7). It runs without a shell (argv by shlex), stdin
closed, under a deadline, its output bounded; a fix that fails is classified and ends the
ladder. The same code coming back after its fix ends it too, saying so, instead of looping.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ._codes import FixCommandRejected, codes, validate_fix_command
from ._detail import ErrorDetail, RecoverableError, mark_exhausted, unvalidated, with_details
from ._ladder import Action, next_action
from ._policy import DEFAULT_MAX_RETRY_AFTER_MS
from ._untrusted import clean_text

__all__ = ["FIX_TIMEOUT_S", "FixRun", "Recovery", "fix_refusal", "recover", "run_fix"]

T = TypeVar("T")

FIX_TIMEOUT_S = 120.0
"""How long a fix command may run before it is stopped (and counted as failed)."""
_FIX_OUTPUT = 64 * 1024  # of a fix's stdout kept while it runs
_REPORTED_OUTPUT = 2000  # of its stdout and stderr a `FixRun` keeps
_MAX_FIXES = 3  # fix runs in one `recover`, whatever the codes


@dataclass(frozen=True, slots=True)
class FixRun:
    """One run of a fix command."""

    command: str
    """The command, as registered."""
    ok: bool
    """Whether it exited 0 within its deadline."""
    error: ErrorDetail | None = None
    """Its own failure, classified (`from_process`, or why it was not run); None when ok."""
    exit_code: int | None = None
    """Its exit code; None when it did not start, was killed or stopped at its deadline."""
    stdout: str = ""
    """The start of what it printed (cleaned, at most 2000 characters)."""
    stderr_tail: str = ""
    """The end of its stderr (cleaned, at most 2000 characters)."""
    duration_ms: int = 0
    """How long it ran."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe."""
        return {
            "command": self.command,
            "ok": self.ok,
            "error": None if self.error is None else self.error.to_dict(),
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr_tail": self.stderr_tail,
            "duration_ms": self.duration_ms,
        }


@dataclass(frozen=True, slots=True)
class Recovery(Generic[T]):
    """How a call went under the ladder."""

    value: T | None
    """What the call returned, when it succeeded."""
    error: ErrorDetail | None
    """The failure the ladder stopped on (`details["ladder"]` says why); None on success."""
    attempts: int
    """Calls made in all."""
    history: tuple[ErrorDetail | Action, ...] = ()
    """Each failure and the action taken on it, in order (what `next_action` was given)."""
    fixes: tuple[FixRun, ...] = field(default=())
    """Each fix that ran."""

    @property
    def ok(self) -> bool:
        """Whether the call succeeded in the end."""
        return self.error is None

    def result(self) -> T:
        """The value; raises `RecoverableError` with the final failure when there is none."""
        if self.error is not None:
            raise RecoverableError(self.error)
        return self.value  # type: ignore[return-value]


def run_fix(command: str, *, timeout: float = FIX_TIMEOUT_S) -> FixRun:
    """Run a fix command: validated again, split by shlex, no shell, stdin closed, stopped at
    `timeout` seconds, its output bounded. Its own failure is classified as any process's."""
    from ._process_exit import from_process, spawn_failure, timed_out
    from ._run_process import run_bounded

    try:
        argv = shlex.split(validate_fix_command(command))
    except FixCommandRejected as refused:
        return FixRun(command, False, _refused(command, str(refused)))
    try:
        done = run_bounded(argv, timeout=timeout, max_stdout=_FIX_OUTPUT, stdin=subprocess.DEVNULL)
    except OSError as exc:
        return FixRun(command, False, spawn_failure(exc, argv))
    stdout = clean_text(done.stdout.decode("utf-8", "replace"), _REPORTED_OUTPUT)
    stderr = clean_text(done.stderr_tail[-_REPORTED_OUTPUT:])
    if done.returncode == 0:
        return FixRun(command, True, None, 0, stdout, stderr, done.duration_ms)
    if done.returncode is None:
        error = timed_out(argv, timeout, done.stderr_tail)
    else:
        error = from_process(done.returncode, stderr=done.stderr_tail, stdout=done.stdout,
                             argv=argv)  # fmt: skip
    exit_code = done.returncode if done.returncode is not None and done.returncode > 0 else None
    return FixRun(command, False, error, exit_code, stdout, stderr, done.duration_ms)


def fix_refusal(detail: ErrorDetail, command: str, companions: Collection[str] = ()) -> str | None:
    """Why `command` may not run as the fix of `detail`; None when it may: it passes the
    validator and is registered for the code here, or runs one of `companions` (the tool
    being run, whose own envelope named it: the spec's "same tool")."""
    try:
        argv = shlex.split(validate_fix_command(command))
    except FixCommandRejected as refused:
        return str(refused)
    row = codes.get(detail.code)
    if row is not None and command in row.fix_commands.values():
        return None
    if argv[0] in companions:
        return None
    return f"{command!r} is not registered for {detail.code} here and runs another program"


def recover(  # noqa: PLR0913 -- one keyword per setting of the ladder
    call: Callable[[], T],
    *,
    run_fixes: bool = False,
    retries: int = 3,
    fix_timeout: float = FIX_TIMEOUT_S,
    companions: Collection[str] = (),
    on_step: Callable[[ErrorDetail, Action], None] | None = None,
) -> Recovery[T]:
    """Call `call()` until it succeeds or the ladder says stop (`next_action`).

    A failure (any exception, classified) is retried after its wait, at most `retries` times
    in all and 3 times a code without a state change; a wait over 60 s stops instead. With
    `run_fixes`, a `fix_command` (see `fix_refusal`) runs and the call is reissued once; the
    same code after it stops. `apply_fix` (a change only a person or an agent can make) stops
    with the `fix_required`. `on_step(failure, action)` sees each decision before it is acted
    on. A KeyboardInterrupt propagates. Never raises otherwise: see `Recovery.result()`.
    """
    ladder = _Ladder(run_fixes, retries, fix_timeout, frozenset(companions), on_step)
    while True:
        try:
            value = call()
        except Exception as exc:
            if ladder.handle(exc):
                continue
            return Recovery(None, ladder.final, ladder.attempts, *ladder.record())
        return Recovery(value, None, ladder.attempts + 1, *ladder.record())


class _Ladder:
    """One `recover`: its settings, what happened so far, and why it stopped."""

    def __init__(
        self,
        run_fixes: bool,
        retries: int,
        fix_timeout: float,
        companions: frozenset[str],
        on_step: Callable[[ErrorDetail, Action], None] | None,
    ) -> None:
        self.run_fixes, self.retries_left, self.fix_timeout = run_fixes, retries, fix_timeout
        self.companions, self.on_step = companions, on_step
        self.attempts = 0
        self.history: list[ErrorDetail | Action] = []
        self.fixes: list[FixRun] = []
        self.fixed: dict[str, str] = {}  # code -> the fix that ran for it and exited 0
        self.final: ErrorDetail | None = None

    def record(self) -> tuple[tuple[ErrorDetail | Action, ...], tuple[FixRun, ...]]:
        return tuple(self.history), tuple(self.fixes)

    def handle(self, exc: Exception) -> bool:
        """Act on one failure; True: call again."""
        from ._classify import classify

        self.attempts += 1
        detail = classify(exc)
        action = self._bounded(detail, next_action(detail, history=self.history))
        self.history += [detail, action]
        if self.on_step is not None:
            self.on_step(detail, action)
        if action.kind == "retry":
            self.retries_left -= 1
            _sleep(action.wait_ms)
            return True
        if action.kind == "run_fix" and action.command is not None:
            return self._fix(detail, action.command)
        self._stop(detail, action.reason, self.fixed.get(detail.code))
        return False

    def _bounded(self, detail: ErrorDetail, action: Action) -> Action:
        """The ladder's action, or `stop` where this run's own limits say so."""
        why = ""
        if action.kind == "retry" and self.retries_left <= 0:
            why = "the retry budget is spent"
        elif action.kind == "retry" and action.wait_ms > DEFAULT_MAX_RETRY_AFTER_MS:
            why = f"the wait of {action.wait_ms} ms is too long to wait here"
        elif action.kind == "run_fix" and not self.run_fixes:
            why = f"a fix exists but fixes are off: run {action.command!r}, then reissue once"
        elif action.kind == "run_fix" and len(self.fixes) >= _MAX_FIXES:
            why = f"{_MAX_FIXES} fixes ran already"
        elif action.kind == "run_fix":
            refused = fix_refusal(detail, action.command or "", self.companions)
            why = f"the fix was not run: {refused}" if refused else ""
        elif action.kind == "apply_fix":
            why = f"needs a change this cannot make: {action.reason}; then reissue once"
        return Action("stop", detail.code, reason=why) if why else action

    def _fix(self, detail: ErrorDetail, command: str) -> bool:
        fix = run_fix(command, timeout=self.fix_timeout)
        self.fixes.append(fix)
        if fix.ok:
            self.fixed[detail.code] = command
            return True
        assert fix.error is not None
        why = f"the fix {command!r} failed: {fix.error.code}"
        self.history.append(Action("stop", detail.code, reason=why))
        self._stop(with_details(detail, fix_error=fix.error.to_dict()), why, None)
        return False

    def _stop(self, detail: ErrorDetail, why: str, fix_did_not_help: str | None) -> None:
        if detail.retryable:  # an exhausted retry: outer layers must not retry it again
            detail = mark_exhausted(detail, self.attempts)
        ladder: dict[str, Any] = {"stopped": why, "attempts": self.attempts}
        if fix_did_not_help is not None:
            ladder["fix_did_not_help"] = fix_did_not_help
        self.final = with_details(detail, ladder=ladder)


def _refused(command: str, why: str) -> ErrorDetail:
    return unvalidated(
        "invalid_input",
        clean_text(f"fix_command refused: {why}"),
        details={"command": clean_text(command)},
    )


def _sleep(wait_ms: int) -> None:
    from ._retry import waits_are_off

    if not waits_are_off():
        time.sleep(wait_ms / 1000)

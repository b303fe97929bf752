"""The ladder, carried out: run a call, and on each failure do what `next_action` says
(wait and reissue, run the fix and reissue once, or stop): `recover`. The I/O edge of
`_ladder`: it runs fix commands; the attempts after a failure, their waits and the testing
switch are the one retry loop's (`Retrying`, the ladder its decider), loaded on the first
failure: a call that succeeds costs the loop nothing, as the decorator's own success path.

A fix runs only when asked (`run_fixes=True`), and only a command this process may run
(`_fix_gate`): registered here for the failure's code, or named by the caller
(`allow_fixes`), checked again just before it runs, never built from failure text and never
run because a payload carried it (principle 7). It runs without a shell (argv by shlex),
stdin closed, under a deadline, its output bounded; a fix that fails is classified and ends
the ladder. The same code coming back after its fix ends it too, saying so, instead of
looping. The failure `recover` stops on carries in `fix_command` only what this process
would run; another command is in `details["suggested_command"]`, for a person.
"""

from __future__ import annotations

import math
import shlex
import subprocess
import warnings
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import recoverable._classify as classification  # the module: its stages load on first use

from .._core.codes import FixCommandRejected, validate_fix_command
from .._core.detail import ErrorDetail, mark_exhausted, unvalidated, with_details
from .._core.error import RecoverableError
from .._core.fix_gate import allowed_commands, fix_refusal, runnable_fix_only, unsafe_reason
from .._core.untrusted import clean_text
from .._retry.keys import close_key, open_key
from .._retry.policy import DEFAULT_MAX_RETRY_AFTER_MS, RetryPolicy
from ._ladder import Action, next_action

if TYPE_CHECKING:
    from .._retry.loop import Retrying

__all__ = ["FIX_TIMEOUT_S", "FixRun", "Recovery", "recover", "run_fix"]

T = TypeVar("T")

FIX_TIMEOUT_S = 120.0
"""How long a fix command may run before it is stopped (and counted as failed)."""
_FIX_OUTPUT = 64 * 1024  # of a fix's stdout kept while it runs
_REPORTED_OUTPUT = 2000  # of its stdout and stderr a `FixRun` keeps
_MAX_FIXES = 3  # fix runs in one `recover`, whatever the codes
_LOOP_POLICY = RetryPolicy()  # unread: the ladder's limits are its own (`_Ladder`); built once


@dataclass(frozen=True, slots=True)
class FixRun:
    """One run of a fix command."""

    command: str
    """The command, verbatim (registered here for the failure's code, or named by the
    caller)."""
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
    """Run `command`, a fix the CALLER names: validated again, split by shlex, no shell,
    stdin closed, stopped at `timeout` seconds, its output bounded. Its own failure is
    classified as any process's; a command the validator refuses never starts.

    Calling it is naming the command explicitly, so it runs any command the validator
    accepts: pass one you chose, or one `next_action` returned as `run_fix`; never a
    `fix_command` read from a failure (an envelope, a payload, the wire) nor an
    `Action.suggested_command`. The library calls it only through `recover`'s gate.
    Raises ValueError when `timeout` is not a finite number of seconds > 0 (NaN, infinite,
    <= 0), TypeError when it is not a number.
    """
    from .._classify.process_exit import from_process, spawn_failure, timed_out
    from ._run_process import run_bounded

    _check_timeout(timeout, "timeout")
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
        stderr_tail = done.stderr_tail
        error = from_process(done.returncode, stderr=stderr_tail, stdout=done.stdout, argv=argv)
    exit_code = done.returncode if done.returncode is not None and done.returncode > 0 else None
    return FixRun(command, False, error, exit_code, stdout, stderr, done.duration_ms)


def _check_timeout(value: object, name: str) -> None:
    """A deadline is a finite number of seconds > 0: NaN, inf or 0 would never or always
    stop a fix."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number of seconds > 0, not {value!r}")


def recover(  # noqa: PLR0913 -- one keyword per setting of the ladder
    call: Callable[[], T],
    *,
    run_fixes: bool = False,
    allow_fixes: Iterable[str] = (),
    retries: int = 3,
    fix_timeout: float = FIX_TIMEOUT_S,
    on_step: Callable[[ErrorDetail, Action], None] | None = None,
    companions: Collection[str] | None = None,
) -> Recovery[T]:
    """Call `call()` until it succeeds or the ladder says stop (`next_action`).

    A failure (any exception, classified) is retried after its wait, at most `retries` times
    in all and 3 times a code without a state change; a wait over 60 s stops instead. With
    `run_fixes`, a `fix_command` this process may run (registered here for the failure's
    code, or word for word one of `allow_fixes`) runs, checked again just before, and the
    call is reissued once; the same code after it stops. Any other command, however it
    arrived, is not run: the ladder stops and the final error keeps it in
    `details["suggested_command"]` for a person. `apply_fix` (a change only a person or an
    agent can make) stops with the `fix_required`. `on_step(failure, action)` sees each
    decision before it is acted on. A KeyboardInterrupt propagates. Raises ValueError for a
    `fix_timeout` that is not a number of seconds > 0 (and TypeError for `allow_fixes` given
    as one string), before calling; never otherwise: see `Recovery.result()`.

    `companions` is deprecated and ignored (a DeprecationWarning): a fix running "the same
    program as the tool" is no longer trusted, since any tool can print any envelope. Name
    such a fix in `allow_fixes`.
    """
    if companions is not None:
        warnings.warn(
            "recover(companions=...) is ignored: a fix runs only when it is registered for its "
            "code in this process or named in allow_fixes",
            DeprecationWarning,
            stacklevel=2,
        )
    _check_timeout(fix_timeout, "fix_timeout")
    allowed = allowed_commands(allow_fixes)
    key = open_key()  # every call of one recover() carries one request key (rc.request_key)
    try:
        value = call()
    except Exception as exc:
        ladder = _Ladder(_Settings(run_fixes, allowed, retries, fix_timeout, on_step))
        return ladder.after(exc, call)
    finally:
        close_key(key)
    return Recovery(value, None, 1)


@dataclass(frozen=True, slots=True)
class _Settings:
    """One `recover`'s settings, as given."""

    run_fixes: bool
    allowed: frozenset[str]
    retries: int
    fix_timeout: float
    on_step: Callable[[ErrorDetail, Action], None] | None


class _Ladder:
    """One `recover`: its settings, what happened so far, and why it stopped; the decider of
    its retry loop (`_retry.decide.Decider`)."""

    def __init__(self, settings: _Settings) -> None:
        self.settings = settings
        self.retries_left = settings.retries
        self.attempts = 0
        self.history: list[ErrorDetail | Action] = []
        self.fixes: list[FixRun] = []
        self.fixed: dict[str, str] = {}  # code -> the fix that ran for it and exited 0
        self.final: ErrorDetail | None = None

    def record(self) -> tuple[tuple[ErrorDetail | Action, ...], tuple[FixRun, ...]]:
        return tuple(self.history), tuple(self.fixes)

    def after(self, exc: Exception, call: Callable[[], T]) -> Recovery[T]:
        """The calls after the first, which failed with `exc`: the retry loop's, with this
        ladder as its decider, until a call succeeds or the ladder stops."""
        from .._retry.loop import Retrying, after_first_failure  # only once something failed

        try:
            value = after_first_failure(Retrying(_LOOP_POLICY, decide=self), exc, call)
        except RecoverableError:
            if self.final is None:
                raise  # not the ladder's stop (`on_step` raised it): as it is
            return Recovery(None, self.final, self.attempts, *self.record())
        return Recovery(value, None, self.attempts + 1, *self.record())

    def __call__(
        self,
        _retrying: Retrying,
        exc: BaseException,
        attempt: int,
        _started: float,
        /,
        *,
        detail: ErrorDetail | None,
        gate_waits: bool,
    ) -> float:
        """Act on the failure of call `attempt`: the wait before the call is made again
        (after a fix that ran, at once); else the stop, raised as the final failure."""
        self.attempts = attempt
        if detail is None:
            detail = classification.classify(exc)
        allowed = self.settings.allowed
        action = self._bounded(detail, next_action(detail, history=self.history, allowed=allowed))
        self.history += [detail, action]
        if self.settings.on_step is not None:
            self.settings.on_step(detail, action)
        if action.kind == "retry":
            self.retries_left -= 1
            return action.wait_ms / 1000
        if action.kind == "run_fix" and action.command is not None:
            if self._fix(detail, action.command):
                return 0.0  # it exited 0: the call is made again at once, once
        else:
            self._stop(detail, action.reason, self.fixed.get(detail.code))
        assert self.final is not None
        raise RecoverableError(self.final) from exc

    def _bounded(self, detail: ErrorDetail, action: Action) -> Action:
        """The ladder's action, or `stop` where this run's own limits say so (a suggested
        command stays on the stop, to be shown)."""
        why = ""
        if action.kind == "retry" and self.retries_left <= 0:
            why = "the retry budget is spent"
        elif action.kind == "retry" and action.wait_ms > DEFAULT_MAX_RETRY_AFTER_MS:
            why = f"the wait of {action.wait_ms} ms is too long to wait here"
        elif action.kind == "run_fix" and not self.settings.run_fixes:
            why = f"a fix exists but fixes are off: run {action.command!r}, then reissue once"
        elif action.kind == "run_fix" and len(self.fixes) >= _MAX_FIXES:
            why = f"{_MAX_FIXES} fixes ran already"
        elif action.kind == "apply_fix" and detail.fix_command:
            refused = fix_refusal(detail.code, detail.fix_command, self.settings.allowed)
            shown = "; it is shown as a suggestion for a person" if action.suggested_command else ""
            why = f"the fix was not run: {refused}{shown}"
        elif action.kind == "apply_fix":
            why = f"needs a change this cannot make: {action.reason}; then reissue once"
        if not why:
            return action
        return Action("stop", detail.code, reason=why, suggested_command=action.suggested_command)

    def _fix(self, detail: ErrorDetail, command: str) -> bool:
        # Checked again right before it runs: `on_step` may have changed the registry.
        refused = fix_refusal(detail.code, command, self.settings.allowed)
        if refused is not None:
            why = f"the fix was not run: {refused}"
            suggested = None if unsafe_reason(command) else command
            self.history.append(
                Action("stop", detail.code, reason=why, suggested_command=suggested)
            )
            self._stop(detail, why, None)
            return False
        fix = run_fix(command, timeout=self.settings.fix_timeout)
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
        # The answer's fix_command is one this process would run; another is a suggestion.
        answer = runnable_fix_only(detail, self.settings.allowed)
        self.final = with_details(answer, ladder=ladder)


def _refused(command: str, why: str) -> ErrorDetail:
    return unvalidated(
        "invalid_input",
        clean_text(f"fix_command refused: {why}"),
        details={"command": clean_text(command)},
    )

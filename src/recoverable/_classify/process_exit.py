"""A finished process, ours or not, read as an outcome: its exit status backwards. Pure.

From a return code (as `subprocess` reports it), stdout, the end of stderr and argv, by this
order of evidence (structured first, text last):

1. an AI CLI (argv[0] is `claude`, `codex` or `gemini`): its own output, through
   `agents.replay` (its terminal event decides);
2. a signal: a negative return code, or 128+N (N >= 2) as a shell reports one:
   `tool_killed`, the signal in `details`, no exit code invented;
3. an envelope on stdout (a tool that speaks cli-agent-spec): the truth, read by the spec's
   rules (`Envelope.parse` with the exit code: the exit code beats `ok`);
4. the statuses of the shell and of timeout(1): 124 `tool_timeout`, 126
   `tool_not_executable`, 127 `tool_not_found`;
5. the end of stderr through the phrase tables (`rate limit exceeded`, `Could not resolve
   host`, an SDK's `Error code: 429 - {...}`);
6. else `tool_execution_failed`, not retryable: a bare exit 1 from a tool we do not know says
   that it failed, not that a retry would help.

Exit 0 is success: the data is the envelope's when the tool printed one, else
`{"stdout": text}`. The other direction (a code's exit status) is the registry's, read
through `ErrorDetail.exit_code` and `Envelope.exit_code`.
"""

from __future__ import annotations

import errno
import os
import signal as signals
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._core.config import CONFIG
from .._core.detail import ErrorDetail, copy_with, unvalidated
from .._core.envelope import MAX_ENVELOPE_CHARS, Envelope, load_json_object, looks_like_envelope
from .._core.events import ErrorEvent, Raw
from .._core.processes import AI_CLIS, STDERR_TAIL_CHARS
from .._core.untrusted import clean_text, safe_str

if TYPE_CHECKING:
    from .._core.code_names import BuiltinCode

__all__ = [
    "AI_CLIS",
    "STDERR_TAIL_CHARS",
    "Argv",
    "from_process",
    "process_envelope",
    "program_name",
    "signal_of",
    "spawn_failure",
    "timed_out",
]

_DETAIL_TAIL_CHARS = 2000  # the end of stderr a detail keeps
_MAX_ARGS = 32
_MAX_ARG_CHARS = 200

# The statuses a shell (126, 127) and timeout(1) (124) exit with for a command they ran.
_SHELL_STATUS: dict[int, tuple[BuiltinCode, str]] = {
    124: ("tool_timeout", "timed out"),
    126: ("tool_not_executable", "could not be executed"),
    127: ("tool_not_found", "was not found"),
}

Argv = Sequence[str | bytes | os.PathLike[str]] | str | bytes | None
"""A command as `subprocess` takes it: a sequence of words, or one string (shell=True)."""


def from_process(
    returncode: int, *, stderr: str | bytes = "", stdout: str | bytes = "", argv: Argv = None
) -> ErrorDetail:
    """The failure a finished process reports (the module's order of evidence). Never raises.

    A process that succeeded (exit 0, nothing saying otherwise) has no failure to report:
    `unknown`, with the exit code in `details`.
    """
    try:
        outcome = _outcome(returncode, stdout, stderr, argv)
    except Exception as exc:  # our bug: never the caller's exception
        return unvalidated("unknown", f"the process could not be read ({type(exc).__name__})")
    if isinstance(outcome, ErrorDetail):
        return outcome
    if outcome.error is not None:
        return outcome.error
    return unvalidated(
        "unknown",
        f"{program_name(argv) or 'the process'} exited 0: nothing says it failed",
        details={"exit_code": 0},
    )


def process_envelope(
    returncode: int,
    *,
    stdout: str | bytes = "",
    stderr: str | bytes = "",
    argv: Argv = None,
    duration_ms: int = 0,
) -> Envelope:
    """The envelope of a finished process: its data on success, its failure classified."""
    outcome = _outcome(returncode, stdout, stderr, argv)
    if isinstance(outcome, ErrorDetail):
        return Envelope.failure(outcome, duration_ms=duration_ms)
    return Envelope(
        outcome.ok,
        outcome.data,
        outcome.error,
        outcome.warnings,
        {**outcome.meta, "duration_ms": duration_ms},
    )


def _outcome(
    returncode: int, stdout: str | bytes, stderr: str | bytes, argv: Argv
) -> Envelope | ErrorDetail:
    """A success or a tool's own envelope (an `Envelope`), or the failure we read."""
    if isinstance(returncode, bool) or not isinstance(returncode, int):
        raise TypeError(f"returncode must be an int, not {type(returncode).__name__}")
    facts = _Facts(argv, _tail(stderr))
    out = _head(stdout)
    if facts.program in AI_CLIS:
        return _ai_cli(facts, returncode, out)
    signal = signal_of(returncode)
    if signal is not None:
        return facts.killed(returncode, signal)
    claimed, _ = load_json_object(out.strip()) if out.lstrip()[:1] == "{" else (None, "")
    if claimed is not None and looks_like_envelope(claimed):
        envelope = Envelope.parse(claimed, exit_code=returncode)
        return _tool_envelope(envelope, out, facts, succeeded=returncode == 0)
    if returncode == 0:
        return Envelope.success({"stdout": out})
    return facts.failed(returncode)


def _tool_envelope(
    envelope: Envelope, out: str, facts: _Facts, *, succeeded: bool
) -> Envelope | ErrorDetail:
    """A tool's own envelope, read with its exit code: its answer (its warnings too), the
    program as the source of its error. With exit 0 a malformed one is plain output (the
    exit code beats it)."""
    error = envelope.error
    if error is None:
        return envelope
    if succeeded:  # with exit 0, only a malformed envelope has an error
        note = f"stdout looked like an envelope but was not one: {error.message}"
        return Envelope.success({"stdout": out}, warnings=[note])
    if error.source:
        return envelope
    error = copy_with(error, source=facts.program)
    return Envelope(False, None, error, envelope.warnings, envelope.meta)


def signal_of(returncode: int) -> int | None:
    """The signal a return code reports: minus it (subprocess), or 128 + it (a shell). Not
    129: git and others exit 129 on a usage error far more often than a SIGHUP kills them."""
    number = -returncode if returncode < 0 else returncode - 128 if returncode > 129 else 0
    return number if number in _signal_numbers() else None


def _signal_numbers() -> frozenset[int]:
    return frozenset(int(number) for number in signals.valid_signals())


def program_name(argv: Argv) -> str | None:
    """The program a command runs, as its file name (`/usr/bin/git` -> `git`); None for none."""
    try:
        first: object = argv.split(None, 1)[0] if isinstance(argv, (str, bytes)) else argv[0]  # type: ignore[index]
        name = os.fsdecode(first)  # type: ignore[arg-type]
    except (TypeError, IndexError, ValueError, AttributeError):
        return None
    return clean_text(os.path.basename(name), 100) or None


def spawn_failure(exc: OSError, argv: Argv) -> ErrorDetail:
    """A command that could not start: errno first (principle 4). An AI CLI that is not
    installed is `cli_not_found` with its install command."""
    facts = _Facts(argv, "")
    name = facts.program or "the command"
    if exc.errno == errno.ENOENT:
        code: BuiltinCode = "cli_not_found" if facts.program in AI_CLIS else "tool_not_found"
        why = "was not found"
    elif exc.errno in (errno.EACCES, errno.ENOEXEC, errno.EPERM):
        code, why = "tool_not_executable", "could not be executed"
    else:
        code, why = "tool_execution_failed", "could not be started"
    details = {**facts.details(), "errno": errno.errorcode.get(exc.errno or 0, "unknown")}
    message = f"{name} {why}: {exc.strerror or safe_str(exc)}"
    return unvalidated(code, clean_text(message), source=facts.program, details=details)


def timed_out(argv: Argv, seconds: float | None, stderr: str | bytes | None = "") -> ErrorDetail:
    """A command stopped at its deadline: `tool_timeout` (not retried: it may have acted)."""
    facts = _Facts(argv, _tail(stderr or ""))
    details = {**facts.details(), "timeout_s": seconds}
    name = facts.program or "the command"
    after = "" if seconds is None else f" after {seconds:.3g} s"
    return unvalidated(
        "tool_timeout", f"{name} timed out{after}", source=facts.program, details=details
    )


# --- reading ---------------------------------------------------------------------------------


def _head(stdout: str | bytes) -> str:
    """The start of stdout, as far as an envelope may reach."""
    if isinstance(stdout, (bytes, bytearray)):
        return bytes(stdout[: MAX_ENVELOPE_CHARS + 1]).decode("utf-8", "replace")
    return stdout[: MAX_ENVELOPE_CHARS + 1] if isinstance(stdout, str) else ""


def _tail(stderr: str | bytes) -> str:
    if isinstance(stderr, (bytes, bytearray)):
        return bytes(stderr[-4 * STDERR_TAIL_CHARS :]).decode("utf-8", "replace")[
            -STDERR_TAIL_CHARS:
        ]
    return stderr[-STDERR_TAIL_CHARS:] if isinstance(stderr, str) else ""


class _Facts:
    """What every detail of one process carries: the program, argv, the end of stderr."""

    __slots__ = ("argv", "program", "stderr")

    def __init__(self, argv: Argv, stderr: str) -> None:
        self.program = program_name(argv)
        self.argv = _clean_argv(argv)
        self.stderr = stderr

    def details(self, **extra: Any) -> dict[str, Any]:
        details: dict[str, Any] = {**extra}
        if self.argv is not None:
            details["argv"] = self.argv
        tail = self.stderr.strip()
        if tail:
            details["stderr_tail"] = clean_text(tail[-_DETAIL_TAIL_CHARS:])
        return details

    def killed(self, returncode: int, signal: int) -> ErrorDetail:
        name = _signal_name(signal)
        details = self.details(signal=signal, signal_name=name)
        if returncode > 0:  # a shell said so: the status is a fact, the signal its reading
            details["exit_code"] = returncode
        message = f"{self.program or 'the process'} was killed by {name}"
        return unvalidated("tool_killed", message, source=self.program, details=details)

    def failed(self, returncode: int) -> ErrorDetail:
        from .stderr import classify_stderr, failure_line

        name = self.program or "the process"
        shell = _SHELL_STATUS.get(returncode)
        if shell is not None:
            code, why = shell
            message = f"{name} {why} (exit {returncode})"
            return unvalidated(
                code, message, source=self.program, details=self.details(exit_code=returncode)
            )
        found = classify_stderr(self.stderr, source=self.program)
        if found is not None:
            return copy_with(found, details={**found.details, **self.details(exit_code=returncode)})
        last = failure_line(self.stderr)  # git's unknown option, not its usage's last line
        message = f"{name} exited {returncode}" + (f": {last}" if last else "")
        return unvalidated(
            "tool_execution_failed",
            clean_text(message),
            source=self.program,
            details=self.details(exit_code=returncode),
        )


def _clean_argv(argv: Argv) -> list[str] | None:
    """argv as a detail keeps it: at most _MAX_ARGS words, each cleaned and clipped."""
    if argv is None:
        return None
    if isinstance(argv, (str, bytes)):
        words: list[object] = [argv]
    else:
        try:
            words = list(argv[: _MAX_ARGS + 1])
        except TypeError:
            return None
    kept = [clean_text(_word(word), _MAX_ARG_CHARS) for word in words[:_MAX_ARGS]]
    if len(words) > _MAX_ARGS:
        kept.append("...")
    return kept


def _word(word: object) -> str:
    if isinstance(word, (str, bytes, os.PathLike)):
        try:
            return os.fsdecode(word)
        except (TypeError, ValueError):
            pass
    return safe_str(word)


def _signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _ai_cli(facts: _Facts, returncode: int, out: str) -> Envelope | ErrorDetail:
    """An AI CLI's output read by its own parser: its terminal event decides. Exit 0 with
    output the parser does not know (plain text, `--version`) is a success."""
    assert facts.program is not None
    signal = -returncode if returncode < 0 else None
    exit_code = None if signal is not None else returncode
    result = CONFIG.replay_cli(facts.program, out, facts.stderr, exit_code, signal)
    if result.error is None or (returncode == 0 and not _structured(result.events)):
        return Envelope.success({"stdout": out})
    return result.error


def _structured(events: Sequence[object]) -> bool:
    """Whether the CLI printed its machine format (some line was JSON), not plain text."""
    return any(
        not isinstance(event, ErrorEvent)
        and not (isinstance(event, Raw) and isinstance(event.event, str))
        for event in events
    )

"""One run of a tool command, whichever framework parsed it: the outcome to the envelope or
to a readable message, and the exit code. click and typer differ only in their exception
classes (`Framework`).

The toolkit never runs a fix. What it answers, an agent pastes: its envelope's `fix_command`
is one registered in this process for the code (`_fix_gate.runnable_fix_only`); any other a
command raised or relayed (an upstream envelope, a payload) is in
`details["suggested_command"]`, for a person.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..._core.detail import ErrorDetail, unvalidated
from ..._core.envelope import Envelope, written
from ..._core.fix_gate import SUGGESTED_COMMAND, runnable_fix_only
from ..._core.untrusted import clean_text, safe_str

__all__ = ["DEBUG_FLAG", "DEBUG_HELP", "JSON_FLAG", "JSON_HELP", "Framework", "ToolMain"]

JSON_FLAG = "--json"
DEBUG_FLAG = "--debug"
JSON_HELP = "Print the result as a JSON envelope on stdout (cli-agent-spec)."
DEBUG_HELP = "On a failure, print the traceback on stderr."


@dataclass(frozen=True, slots=True)
class Framework:
    """The classes a framework's parsing and commands raise."""

    exit: type[BaseException]
    """`--help`, `--version`, `ctx.exit(n)`: an end, not an outcome."""
    abort: type[BaseException]
    """The user aborted a prompt (Ctrl-C, end of input): a cancel."""
    usage_error: type[BaseException]
    """A bad argument or option: ARG_ERROR."""


class ToolMain:
    """`main` for a framework's Command or Group: parse, invoke, answer, exit."""

    framework: Framework
    json_when_piped: bool = False

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command as an agent tool; exit (or, not standalone, return) its code.
        (`windows_expand_args` is taken and ignored: arguments are used as given.)"""
        given = list(sys.argv[1:] if args is None else args)
        prog = prog_name or os.path.basename(sys.argv[0]) or "tool"
        completion = getattr(self, "_main_shell_completion", None)
        if completion is not None:
            completion(extra, prog, complete_var)
        as_json, debug, given = _take_flags(given)
        as_json = as_json or (self.json_when_piped and not _is_terminal(sys.stdout))
        code = _answer(self, self.framework, (prog, given, extra), as_json=as_json, debug=debug)
        if standalone_mode:
            sys.exit(code)
        return code


def _take_flags(args: list[str]) -> tuple[bool, bool, list[str]]:
    """(--json given, --debug given, the rest): both are ours wherever they stand before
    `--`, so they work after a subcommand and even when the rest fails to parse."""
    end = args.index("--") if "--" in args else len(args)
    head = args[:end]
    rest = [arg for arg in head if arg not in (JSON_FLAG, DEBUG_FLAG)] + args[end:]
    return JSON_FLAG in head, DEBUG_FLAG in head, rest


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _answer(
    command: Any,
    framework: Framework,
    call: tuple[str, list[str], dict[str, Any]],
    *,
    as_json: bool,
    debug: bool,
) -> int:
    """Invoke the command and answer; the exit code."""
    prog, args, extra = call
    started = time.monotonic()
    try:
        with command.make_context(prog, args, **extra) as ctx:
            value = command.invoke(ctx)
    except (framework.exit, SystemExit) as end:
        return _ended(end, as_json, started)
    except BaseException as exc:  # every failure is answered, a cancel included
        if debug:
            traceback.print_exception(exc, file=sys.stderr)
        envelope = Envelope.failure(_detail(exc, framework), duration_ms=_ms(started))
        if not as_json and isinstance(exc, framework.usage_error) and hasattr(exc, "show"):
            exc.show()  # the framework's own usage message, for a person
            return envelope.exit_code
    else:
        envelope = (
            value
            if isinstance(value, Envelope)
            else Envelope.success(value, duration_ms=_ms(started))
        )
    return _emit(envelope, value if envelope.ok else None, as_json=as_json)


def _ended(end: BaseException, as_json: bool, started: float) -> int:
    """`--help`, `ctx.exit(n)` or `sys.exit(n)`: that exit code. An envelope only for a
    non-zero one under JSON (a help text on stdout is answer enough)."""
    status = getattr(end, "exit_code", getattr(end, "code", 0))
    if status is None:
        status = 0
    if not isinstance(status, int):  # sys.exit("message")
        print(safe_str(status), file=sys.stderr)
        status = 1
    if status and as_json:
        detail = unvalidated("unknown", f"the command exited {status}")
        print(Envelope.failure(detail, duration_ms=_ms(started)).to_json())
    return status


def _detail(exc: BaseException, framework: Framework) -> ErrorDetail:
    from ..._classify import classify

    if isinstance(exc, framework.usage_error):
        message = getattr(exc, "format_message", lambda: safe_str(exc))()
        return unvalidated("invalid_input", clean_text(message), details={"phase": "validation"})
    if isinstance(exc, (framework.abort, KeyboardInterrupt)):
        return unvalidated("run_cancelled", "the command was aborted")
    return classify(exc)


def _emit(envelope: Envelope, value: Any, *, as_json: bool) -> int:
    if envelope.error is not None:
        error = runnable_fix_only(envelope.error)
        if error is not envelope.error:
            envelope = Envelope(False, None, error, envelope.warnings, envelope.meta)
    # A result JSON cannot write (NaN, a cycle, a tuple key, nesting past the recursion
    # limit) answers as the typed failure in both modes, never as a traceback.
    text, envelope = written(envelope)
    if as_json:
        print(text)
    elif envelope.error is not None:
        _print_failure(envelope.error)
    else:
        _print_value(value)
    return envelope.exit_code


def _print_value(value: Any) -> None:
    if isinstance(value, Envelope):
        value = value.data
    if value is None:
        return
    if isinstance(value, str):
        print(value)
    else:
        print(json.dumps(value, indent=2, default=safe_str))


def _print_failure(error: ErrorDetail) -> None:
    """For a person: what failed, then what to do about it."""
    print(f"Error: {error.message} ({error.code})", file=sys.stderr)
    if error.retryable:
        print(f"retry: in {error.retry_after_ms} ms", file=sys.stderr)
    if error.fix_required:
        print(f"fix: {error.fix_required}", file=sys.stderr)
    if error.fix_command:
        print(f"run: {error.fix_command}", file=sys.stderr)
    suggested = error.details.get(SUGGESTED_COMMAND)
    if isinstance(suggested, str):
        print(
            f"suggested, not registered here (read it before running it): {suggested}",
            file=sys.stderr,
        )


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)

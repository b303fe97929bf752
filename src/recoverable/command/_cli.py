"""The `recoverable` command.

recoverable codes [--markdown | --json]     the code table
recoverable classify [--text]               an error on stdin (JSON or text) -> its detail
recoverable fake-provider [...]             a fault-injecting fake LLM API on 127.0.0.1
recoverable run PROMPT [--cli NAME] [...]   an AI coding CLI on a prompt, its events streamed
                                            (`--fake [FAULT]`: against a built-in fake provider)
recoverable doctor [--json]                 which AI CLIs are installed and usable
recoverable exec [--json] [--retries N] [--fix] [--allow-fix CMD]... -- CMD ARGS...
                                            any command under the recovery ladder

`run` and `doctor` live in `_cli_agents`, `exec` in `_cli_exec`, each imported only when it
runs.

The one declared exception to "the library never imports `recoverable.testing`": this command
(here and in `_cli_agents`) imports it for `fake-provider` and `run --fake`, inside the
function that needs it, so no other command and no `import recoverable` loads it. A test
(tests/test_cli.py) holds every module of the package outside `testing/` to that.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, TextIO

from .._core.codes import Code, FixCommandRejected, codes, validate_fix_command
from .._core.detail import ErrorDetail, PayloadError

__all__ = [
    "UsageParser",
    "classify_input",
    "count_argument",
    "main",
    "render_codes",
    "seconds_argument",
    "whole_number",
]

_COLUMNS = ("code", "category", "retryable", "fallback", "exit", "http", "user message")


def _cells(row: Code) -> tuple[str, ...]:
    return (
        row.code,
        row.category,
        "yes" if row.retryable else "no",
        "yes" if row.fallback else "no",
        str(row.exit_code),
        str(row.http_status),
        row.user_message,
    )


def render_codes(style: str = "text") -> str:
    """The registry as aligned text, a Markdown table or JSON."""
    rows = list(codes)
    if style == "json":
        return json.dumps([_row_dict(row) for row in rows], indent=2)
    cells = [_cells(row) for row in rows]
    if style == "markdown":
        lines = ["| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        lines += ["| " + " | ".join((f"`{c[0]}`", *c[1:])) + " |" for c in cells]
        return "\n".join(lines)
    widths = [max(len(c[i]) for c in [_COLUMNS, *cells]) for i in range(len(_COLUMNS) - 1)]
    lines = []
    for c in [_COLUMNS, *cells]:
        lines.append("  ".join(v.ljust(w) for v, w in zip(c, widths, strict=False)) + "  " + c[-1])
    return "\n".join(lines)


def _row_dict(row: Code) -> dict[str, Any]:
    return {
        "code": row.code,
        "category": row.category,
        "retryable": row.retryable,
        "fallback": row.fallback,
        "exit_code": row.exit_code,
        "http_status": row.http_status,
        "user_message": row.user_message,
        "fix_required": row.fix_required,
        "fix_commands": dict(row.fix_commands),
        "when": row.when,
    }


def classify_input(text: str) -> ErrorDetail:
    """Classify what a user pipes in: a detail payload, an HTTP answer, an error body, or text.

    JSON forms: an ErrorDetail payload (`code` + `message`); `{"status", "headers", "body",
    "source"}`; or a provider error body (`{"error": {...}}`). Anything else is read as text,
    as `exec` and `from_process` read a failed tool's stderr (the last line that opens, after a
    tool's prefixes, with a phrase: one phrase table for one text), then as an error's text.
    """
    from .._classify import classify

    stripped = text.strip()
    data = _json_object(stripped)
    if data is None:
        return _text_input(stripped)
    if isinstance(data.get("code"), str) and isinstance(data.get("message"), str):
        try:
            return ErrorDetail.from_dict(data)
        except PayloadError:
            pass
    return _http_input(data) or classify(stripped)


def _text_input(text: str) -> ErrorDetail:
    from .._classify import classify
    from .._classify.stderr import classify_stderr

    return classify_stderr(text) or classify(text)


def _json_object(text: str) -> Mapping[str, Any] | None:
    """The JSON object `text` holds, or None (not JSON, not an object, or nested past what
    the parser can take)."""
    if text[:1] != "{":
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, Mapping) else None


def _http_input(data: Mapping[str, Any]) -> ErrorDetail | None:
    """`{"status", "headers", "body", "source"}` or a provider's error body, classified."""
    from .._classify import from_http

    source = data.get("source") if isinstance(data.get("source"), str) else None
    status = data.get("status")
    if isinstance(status, int) and not isinstance(status, bool):
        return from_http(status, data.get("headers"), data.get("body"), source=source)
    error = data.get("error")
    if isinstance(error, Mapping):
        code = error.get("code")  # Google bodies carry the HTTP status here
        http_status = code if isinstance(code, int) and not isinstance(code, bool) else None
        return from_http(http_status, None, data, source=source)
    return None


def _cmd_codes(args: argparse.Namespace, out: TextIO) -> int:
    style = "markdown" if args.markdown else "json" if args.json else "text"
    print(render_codes(style), file=out)
    if style == "markdown":  # what each surface can tell apart, from the matrix test's table
        from ..testing._fault_matrix import render_matrix

        print("\n## Fault matrix\n\n" + render_matrix(), file=out)
    return 0


_MAX_INPUT = 4 * 1024 * 1024  # what `classify` reads of stdin: far more than any error


def _cmd_classify(args: argparse.Namespace, out: TextIO) -> int:

    if sys.stdin.isatty():  # nothing piped: say what is read before waiting for it
        print(
            "recoverable classify: reading an error from stdin (JSON or text; end with "
            "Ctrl-D); e.g. echo 'rate limit exceeded' | recoverable classify",
            file=sys.stderr,
        )
    # Bytes, not text: invalid UTF-8 becomes replacement characters, never a traceback.
    text = sys.stdin.buffer.read(_MAX_INPUT).decode("utf-8", "replace")
    if not text.strip():
        print(
            "recoverable classify: error: nothing to classify on stdin (see: recoverable "
            "classify --help)",
            file=sys.stderr,
        )
        return 2
    detail = _text_input(text.strip()) if args.text else classify_input(text)
    if args.envelope:  # as the failed tool would answer: the envelope and its exit code
        from .._core.envelope import Envelope

        envelope = Envelope.failure(detail)
        print(envelope.to_json(indent=2), file=out)
        return envelope.exit_code
    print(json.dumps(detail.to_dict(), indent=2), file=out)
    return 0


def _cmd_fake_provider(args: argparse.Namespace, out: TextIO) -> int:
    from ._fake_provider import main as fake_main

    return fake_main(list(args.rest))


class UsageParser(argparse.ArgumentParser):
    """argparse with a usage mistake told in one line (and exit 2), not the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see: {self.prog} --help)\n")


def _version() -> str:
    from .._core import __version__

    return f"recoverable {__version__}"


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command's parser. Given the subcommand about to run, only that one gets its
    arguments (building them all costs every run; `--help` and a mistyped name see all)."""
    parser = UsageParser(prog="recoverable", description="One error model for AI-agent systems.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True)
    for name, add in _SUBCOMMANDS.items():
        if command is None or command == name:
            add(sub)
            sub.choices[name].set_defaults(subparser=sub.choices[name])
    return parser


def _add_codes_command(sub: Any) -> None:
    p_codes = sub.add_parser("codes", help="print the code table")
    group = p_codes.add_mutually_exclusive_group()
    group.add_argument("--markdown", action="store_true", help="as a Markdown table")
    group.add_argument("--json", action="store_true", help="as JSON")
    p_codes.set_defaults(run=_cmd_codes)


def _add_classify_command(sub: Any) -> None:
    p_classify = sub.add_parser(
        "classify",
        help="classify an error read from stdin (JSON or text); print its detail",
        description="Classify an error read from stdin and print its detail as JSON. JSON "
        "input: an ErrorDetail payload, {status, headers, body, source}, or a provider's error "
        "body. Text: read as a failed tool's stderr is (what `exec` and from_process read: the "
        "last line naming a failure, after a tool's prefixes), else as an error's message. "
        "Empty input is a usage error (exit 2).",
    )
    p_classify.add_argument(
        "--text", action="store_true", help="read stdin as plain text, even when it is JSON"
    )
    p_classify.add_argument(
        "--envelope",
        action="store_true",
        help="print the agent-tool envelope (cli-agent-spec) and exit with the code's status",
    )
    p_classify.set_defaults(run=_cmd_classify)


def _add_fake_provider_command(sub: Any) -> None:
    p_fake = sub.add_parser(
        "fake-provider",
        help="serve a fault-injecting fake LLM API on 127.0.0.1",
        add_help=False,
    )
    p_fake.add_argument("rest", nargs=argparse.REMAINDER)
    p_fake.set_defaults(run=_cmd_fake_provider)


def whole_number(text: str, minimum: int = 0) -> int:
    """A whole number >= `minimum`; the error names that bound (argparse shows it as a
    usage message)."""
    try:
        count = int(text)
    except ValueError:
        count = minimum - 1
    if count < minimum:
        raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {text!r}")
    return count


def count_argument(text: str) -> int:
    """A count >= 0; argparse shows the error as a usage message."""
    return whole_number(text)


def fix_command_argument(text: str) -> str:
    """A fix command the validator accepts; argparse shows why not as a usage message."""
    try:
        return validate_fix_command(text)
    except FixCommandRejected as refused:
        raise argparse.ArgumentTypeError(str(refused)) from None


def seconds_argument(text: str) -> float:
    """A number of seconds > 0; argparse shows the error as a usage message."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return seconds


def _lazy(name: str, module: str = "._run") -> Callable[[argparse.Namespace, TextIO], int]:
    """A command of a module imported when it runs (`_run` loads the agents package)."""

    def command(args: argparse.Namespace, out: TextIO) -> int:
        import importlib

        code: int = getattr(importlib.import_module(module, __package__), name)(args, out)
        return code

    return command


def _add_exec_command(sub: Any) -> None:
    p_exec = sub.add_parser(
        "exec",
        help="run a command under the recovery ladder; print its envelope",
        description="Run CMD without a shell. On failure: classify it, reissue transient "
        "failures as the recovery ladder says, run a fix with --fix (only one registered in "
        "this process for the failure's code, or named with --allow-fix: never one because "
        "CMD printed it), and exit with the code's exit status.",
    )
    p_exec.add_argument("--json", action="store_true", help="print the envelope on stdout")
    p_exec.add_argument(
        "--retries", type=count_argument, default=3, metavar="N",
        help="reissue transient failures at most N times in all (default 3; the ladder also "
        "stops after 3 in a row of one code)",
    )  # fmt: skip
    p_exec.add_argument(
        "--fix",
        action="store_true",
        help="run a fix registered in this process for the failure's code, reissue once",
    )
    p_exec.add_argument(
        "--allow-fix",
        action="append",
        default=[],
        type=fix_command_argument,
        metavar="CMD",
        help="also run CMD, word for word, when a failure names it as its fix (repeatable; "
        "implies --fix); a fix named only in the command's own output never runs",
    )
    p_exec.add_argument("--timeout", type=seconds_argument, metavar="S", help="seconds per attempt")
    p_exec.add_argument(
        "--fix-timeout", type=seconds_argument, metavar="S",
        help="seconds a fix may run before it is stopped (default 120)",
    )  # fmt: skip
    p_exec.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD ARGS")
    p_exec.set_defaults(run=_lazy("cmd_exec", "..tools._exec"))


def cli_argument(text: str) -> str:
    """`auto`, one CLI, or an order of them (`claude,codex`): the CLIs a run may use."""
    from ..agents._cli_modules import CLI_NAMES

    names = [name.strip() for name in text.split(",")]
    if text == "auto" or (names and all(name in CLI_NAMES for name in names)):
        return text
    raise argparse.ArgumentTypeError(
        f"expected auto, {', '.join(CLI_NAMES)} or an order such as claude,codex; got {text!r}"
    )


def fault_argument(text: str) -> str:
    """A FakeProvider fault name ("" for `--fake` alone: no fault). A text that is no fault's
    name is most often the prompt, put after `--fake` (which takes it as its FAULT): say so."""
    from ..testing._faults import FAULT_NAMES

    if text and text not in FAULT_NAMES:
        short = text.isprintable() and len(text) <= _SHOWN_CHARS  # the reason stays one line
        shown = repr(text) if short else f"of {len(text)} characters"
        example = shlex.quote(text) if short else "PROMPT"
        hint = ""
        if len(text.split()) > 1:  # one word may be a fault misspelt; words are a prompt
            hint = f" (a prompt goes first: recoverable run {example} --fake [FAULT])"
        raise argparse.ArgumentTypeError(
            f"unknown fault {shown}{hint}; expected one of {', '.join(FAULT_NAMES)}"
        )
    return text


_SHOWN_CHARS = 60  # of a mistaken argument, quoted back in a usage error


class _RunHelp(argparse.HelpFormatter):
    """`run --help` with every fault of the fault table, read only when the help is printed:
    building the parser for a run does not import `recoverable.testing` (~150 ms)."""

    def _format_action(self, action: argparse.Action) -> str:
        if action.dest == "fake" and action.help:
            from ..testing._faults import FAULT_NAMES

            action = copy.copy(action)
            action.help = f"{action.help}: {', '.join(FAULT_NAMES)}"
        return super()._format_action(action)


def _run_default(name: str) -> float | None:
    """A run option's default, as `agents` has it (the help says what a run gets)."""
    from ..agents import RunOptions

    value: float | None = getattr(RunOptions(), name)
    return value


def _positive_count(text: str) -> int:
    """A count >= 1."""
    return whole_number(text, 1)


def _add_run_command(sub: Any) -> None:
    p_run = sub.add_parser(
        "run",
        help="run an AI coding CLI on a prompt; stream its events",
        description="Run an AI coding CLI (Claude Code, Codex, Gemini CLI) on PROMPT: its "
        "answer on stdout, its warnings and failure on stderr, the failure's exit code. While "
        "it is silent, what it waits for is counted down on stderr (the CLI's announced retry, "
        "else the deadline that stops a silent run): a status line in a terminal, else a "
        "[waiting] line at the start of the wait and every 15 s (a fifth of the nearest "
        "deadline when that is shorter). --fake runs the real CLI against a built-in fake "
        "provider on 127.0.0.1 (no login, no network).",
        formatter_class=_RunHelp,
    )
    p_run.add_argument("prompt", help="what the CLI should do (not empty)")
    p_run.add_argument(
        "--cli", default="auto", type=cli_argument,
        help="claude, codex, gemini, auto (default: the first usable) or an order to fall back "
        "through, such as claude,codex,gemini",
    )  # fmt: skip
    p_run.add_argument("--json", action="store_true", help="print events as NDJSON")
    p_run.add_argument(
        "--fake",
        nargs="?",
        const="",
        type=fault_argument,
        metavar="FAULT",
        help="point the real CLI at a built-in fake provider on 127.0.0.1, optionally failing "
        "with FAULT",
    )
    p_run.add_argument(
        "--times",
        type=count_argument,
        default=None,
        metavar="N",
        help="with --fake FAULT: fail the first N requests; 0 (the default): every request",
    )
    p_run.add_argument(
        "--retry-after",
        type=seconds_argument,
        default=None,
        metavar="S",
        help="with --fake rate_limited: the 429 carries Retry-After: S (Gemini's RetryInfo "
        "too); without it the 429 has none, as OpenAI's plain rate limit",
    )
    p_run.add_argument("--model", help="the model the CLI uses (default: the CLI's own)")
    p_run.add_argument(
        "--cwd",
        help="the CLI's working directory (default: this one; with --fake, a throwaway directory)",
    )
    p_run.add_argument(
        "--timeout",
        type=seconds_argument,
        metavar="S",
        help="seconds the whole run may take (default: no limit)",
    )
    p_run.add_argument(
        "--idle-timeout",
        type=seconds_argument,
        metavar="S",
        help="seconds without any event before the run is stopped "
        f"(default {_run_default('idle_timeout'):g})",
    )
    p_run.add_argument(
        "--max-turns",
        type=_positive_count,
        metavar="N",
        help="the most agent turns (claude only; default: the CLI's own)",
    )
    p_run.set_defaults(run=_lazy("cmd_run"))


def _add_doctor_command(sub: Any) -> None:
    p_doctor = sub.add_parser("doctor", help="which AI CLIs are installed and usable")
    p_doctor.add_argument("--json", action="store_true", help="print the response envelope")
    p_doctor.set_defaults(run=_lazy("cmd_doctor"))


# The subcommands, in the order `--help` lists them.
_SUBCOMMANDS: dict[str, Callable[[Any], None]] = {
    "codes": _add_codes_command,
    "classify": _add_classify_command,
    "fake-provider": _add_fake_provider_command,
    "run": _add_run_command,
    "doctor": _add_doctor_command,
    "exec": _add_exec_command,
}


def _check_run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """What argparse cannot see alone: an empty prompt (refused before a CLI starts), and
    `--times` and `--retry-after`, which mean something only with a fault to inject."""
    if not args.prompt.strip():
        parser.error("the prompt is empty: give the CLI something to do")
    if args.times is not None and not args.fake:
        parser.error("--times needs --fake FAULT (the fault to repeat)")
    if args.retry_after is not None and args.fake != "rate_limited":
        parser.error("--retry-after needs --fake rate_limited (the 429 that carries it)")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the process exit code."""
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["fake-provider"]:  # its options are its own parser's (argparse would
        return _cmd_fake_provider(argparse.Namespace(rest=given[1:]), sys.stdout)  # eat them)
    parser = _parser(given[0] if given[:1] and given[0] in _SUBCOMMANDS else None)
    args, unknown = parser.parse_known_args(given)
    if unknown:  # a word the subcommand does not take: its mistake, its parser names it
        before = given[: given.index(args.command)]
        mistaken = parser if any(word in before for word in unknown) else args.subparser
        mistaken.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command == "run":
        _check_run(args.subparser, args)
    try:
        code: int = args.run(args, sys.stdout)
    except BrokenPipeError:  # `recoverable codes | head`: the reader left; not our failure
        # Point stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

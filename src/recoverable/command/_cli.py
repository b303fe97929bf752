"""The `recoverable` command.

recoverable codes [--markdown | --json]     the code table
recoverable classify [--text]               an error on stdin (JSON or text) -> its detail
recoverable fake-provider [...]             a fault-injecting fake LLM API on 127.0.0.1
recoverable run PROMPT [--cli NAME] [...]   an AI coding CLI on a prompt, its events streamed
                                            (`--fake [FAULT]`: against a built-in fake provider)
recoverable doctor [--json]                 which AI CLIs are installed and usable
recoverable exec [--json] [--retries N] [--fix] [--allow-fix CMD]... -- CMD ARGS...
                                            any command under the recovery ladder

This is the full parser; the console script (`_main.main`) sends `exec` and `run` with plain
options past it (`_plain`), and everything else here. `codes` lives in `_codes`, `classify` in
`_classify`, the argument types in `_arguments`; `run` and `doctor` in `_run`, `exec` in
`recoverable.tools._exec`, `fake-provider` in `_fake_provider`, each of the last three imported
only when it runs.

The one declared exception to "the library never imports `recoverable.testing`": this command
(here, in `_arguments`, `_codes`, `_plain`, `_run` and `_fake_provider`) imports it for
`fake-provider` and `run --fake`, inside the function that needs it (`_fake_provider` at its
top, and it is itself imported only so), so no other command and no `import recoverable` loads
it. A test (tests/command/test_command.py) holds every module of the package outside `testing/`
to that.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ._arguments import (
    UsageParser,
    cli_argument,
    count_argument,
    fault_argument,
    fix_command_argument,
    positive_count,
    seconds_argument,
)
from ._plain import run_mistake
from ._stdout import answered

__all__ = ["main"]


def _cmd_fake_provider(args: argparse.Namespace, out: TextIO) -> int:
    from ._fake_provider import main as fake_main

    return fake_main(list(args.rest))


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
    p_codes.set_defaults(run=_lazy("cmd_codes", "._codes"))


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
    p_classify.set_defaults(run=_lazy("cmd_classify", "._classify"))


def _add_fake_provider_command(sub: Any) -> None:
    p_fake = sub.add_parser(
        "fake-provider",
        help="serve a fault-injecting fake LLM API on 127.0.0.1",
        add_help=False,
    )
    p_fake.add_argument("rest", nargs=argparse.REMAINDER)
    p_fake.set_defaults(run=_cmd_fake_provider)


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
        "--retries",
        type=count_argument,
        default=3,  # tools._exec.DEFAULT_RETRIES (not imported: `run` does not load exec)
        metavar="N",
        help="reissue transient failures at most N times in all (default 3; the ladder also "
        "stops after 3 in a row of one code)",
    )
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
        "--fix-timeout",
        type=seconds_argument,
        metavar="S",
        help="seconds a fix may run before it is stopped (default 120)",
    )
    p_exec.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD ARGS")
    p_exec.set_defaults(run=_lazy("cmd_exec", "..tools._exec"))


class _RunHelp(argparse.HelpFormatter):
    """`run --help` with every fault of the fault table, read only when the help is printed:
    building the parser for a run does not import `recoverable.testing` (~150 ms)."""

    def _format_action(self, action: argparse.Action) -> str:
        if action.dest == "fake" and action.help:
            import copy

            from ..testing._faults import FAULT_NAMES

            action = copy.copy(action)
            action.help = f"{action.help}: {', '.join(FAULT_NAMES)}"
        return super()._format_action(action)


def _run_default(name: str) -> float | None:
    """A run option's default, as `agents` has it (the help says what a run gets)."""
    from ..agents import RunOptions

    value: float | None = getattr(RunOptions(), name)
    return value


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
        "--cli",
        default="auto",
        type=cli_argument,
        help="claude, codex, gemini, auto (default: the first usable) or an order to fall back "
        "through, such as claude,codex,gemini",
    )
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
        type=positive_count,
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
    """What argparse cannot see alone (`_plain.run_mistake`: the plain reader's rules too)."""
    mistake = run_mistake(args)
    if mistake is not None:
        parser.error(mistake)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command through the full parser; returns the process exit code (`_main.main`,
    the console script, sends here every command but a plain `exec` or `run`)."""
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
    return answered(lambda out: int(args.run(args, out)))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

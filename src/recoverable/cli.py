"""The `recoverable` command.

recoverable codes [--markdown | --json]     the code table
recoverable classify [--text]               an error on stdin (JSON or text) -> its detail
recoverable fake-provider [...]             a fault-injecting fake LLM API on 127.0.0.1
recoverable run PROMPT [--cli NAME] [...]   an AI coding CLI on a prompt, its events streamed
                                            (`--fake [FAULT]`: against a built-in fake provider)
recoverable doctor [--json]                 which AI CLIs are installed and usable
recoverable exec [--json] [--retries N] [--fix] -- CMD ARGS...
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
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from ._codes import Code, codes
from ._detail import ErrorDetail, PayloadError

__all__ = ["classify_input", "count_argument", "main", "render_codes", "seconds_argument"]

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
    "source"}`; or a provider error body (`{"error": {...}}`). Anything else is read as text.
    """
    from ._classify import classify

    stripped = text.strip()
    data = _json_object(stripped)
    if data is None:
        return classify(stripped)
    if isinstance(data.get("code"), str) and isinstance(data.get("message"), str):
        try:
            return ErrorDetail.from_dict(data)
        except PayloadError:
            pass
    return _http_input(data) or classify(stripped)


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
    from ._classify import from_http

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
        from ._fault_matrix import render_matrix

        print("\n## Fault matrix\n\n" + render_matrix(), file=out)
    return 0


_MAX_INPUT = 4 * 1024 * 1024  # what `classify` reads of stdin: far more than any error


def _cmd_classify(args: argparse.Namespace, out: TextIO) -> int:
    from ._classify import classify

    # Bytes, not text: invalid UTF-8 becomes replacement characters, never a traceback.
    text = sys.stdin.buffer.read(_MAX_INPUT).decode("utf-8", "replace")
    detail = classify(text.strip()) if args.text else classify_input(text)
    if args.envelope:  # as the failed tool would answer: the envelope and its exit code
        from ._envelope import Envelope

        envelope = Envelope.failure(detail)
        print(envelope.to_json(indent=2), file=out)
        return envelope.exit_code
    print(json.dumps(detail.to_dict(), indent=2), file=out)
    return 0


def _cmd_fake_provider(args: argparse.Namespace, out: TextIO) -> int:
    from .testing._command import main as fake_main

    return fake_main(list(args.rest))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recoverable", description="One error model for AI-agent systems."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_codes = sub.add_parser("codes", help="print the code table")
    group = p_codes.add_mutually_exclusive_group()
    group.add_argument("--markdown", action="store_true", help="as a Markdown table")
    group.add_argument("--json", action="store_true", help="as JSON")
    p_codes.set_defaults(run=_cmd_codes)
    p_classify = sub.add_parser(
        "classify", help="classify an error read from stdin (JSON or text); print its detail"
    )
    p_classify.add_argument("--text", action="store_true", help="read stdin as plain text")
    p_classify.add_argument(
        "--envelope",
        action="store_true",
        help="print the agent-tool envelope (cli-agent-spec) and exit with the code's status",
    )
    p_classify.set_defaults(run=_cmd_classify)
    p_fake = sub.add_parser(
        "fake-provider",
        help="serve a fault-injecting fake LLM API on 127.0.0.1",
        add_help=False,
    )
    p_fake.add_argument("rest", nargs=argparse.REMAINDER)
    p_fake.set_defaults(run=_cmd_fake_provider)
    _add_agent_commands(sub)
    _add_exec_command(sub)
    return parser


def count_argument(text: str) -> int:
    """A count >= 0; argparse shows the error as a usage message."""
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return count


def seconds_argument(text: str) -> float:
    """A number of seconds > 0; argparse shows the error as a usage message."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return seconds


def _lazy(name: str, module: str = "_cli_agents") -> Callable[[argparse.Namespace, TextIO], int]:
    """A command of a module imported when it runs (`_cli_agents` loads the agents package)."""

    def command(args: argparse.Namespace, out: TextIO) -> int:
        import importlib

        code: int = getattr(importlib.import_module(f".{module}", __package__), name)(args, out)
        return code

    return command


def _add_exec_command(sub: Any) -> None:
    p_exec = sub.add_parser(
        "exec",
        help="run a command under the recovery ladder; print its envelope",
        description="Run CMD without a shell. On failure: classify it, reissue transient "
        "failures as the recovery ladder says, run a registered fix with --fix, and exit "
        "with the code's exit status.",
    )
    p_exec.add_argument("--json", action="store_true", help="print the envelope on stdout")
    p_exec.add_argument(
        "--retries", type=count_argument, default=3, metavar="N",
        help="reissue transient failures at most N times in all (default 3; the ladder also "
        "stops after 3 in a row of one code)",
    )  # fmt: skip
    p_exec.add_argument(
        "--fix", action="store_true", help="run a failure's registered fix_command, reissue once"
    )
    p_exec.add_argument("--timeout", type=seconds_argument, metavar="S", help="seconds per attempt")
    p_exec.add_argument(
        "--fix-timeout", type=seconds_argument, metavar="S",
        help="seconds a fix may run before it is stopped (default 120)",
    )  # fmt: skip
    p_exec.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD ARGS")
    p_exec.set_defaults(run=_lazy("cmd_exec", "_cli_exec"))


def _add_agent_commands(sub: Any) -> None:
    p_run = sub.add_parser("run", help="run an AI coding CLI on a prompt; stream its events")
    p_run.add_argument("prompt")
    p_run.add_argument("--cli", default="auto", help="claude, codex, gemini or auto (default)")
    p_run.add_argument("--json", action="store_true", help="print events as NDJSON")
    p_run.add_argument(
        "--fake",
        nargs="?",
        const="",
        metavar="FAULT",
        help="point the real CLI at a built-in fake provider on 127.0.0.1, optionally failing "
        "with FAULT (rate_limited, insufficient_quota, unauthorized, overloaded, drop, ...)",
    )
    p_run.add_argument(
        "--times",
        type=count_argument,
        default=0,
        metavar="N",
        help="with --fake FAULT: fail the first N requests; 0 (the default): every request",
    )
    p_run.add_argument("--model")
    p_run.add_argument("--cwd")
    p_run.add_argument("--timeout", type=float, help="total seconds")
    p_run.add_argument(
        "--idle-timeout", type=float, help="seconds without any event before the run is stopped"
    )
    p_run.add_argument("--max-turns", type=int)
    p_run.set_defaults(run=_lazy("cmd_run"))
    p_doctor = sub.add_parser("doctor", help="which AI CLIs are installed and usable")
    p_doctor.add_argument("--json", action="store_true", help="print the response envelope")
    p_doctor.set_defaults(run=_lazy("cmd_doctor"))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the process exit code."""
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["fake-provider"]:  # its options are its own parser's (argparse would
        return _cmd_fake_provider(argparse.Namespace(rest=given[1:]), sys.stdout)  # eat them)
    args = _parser().parse_args(given)
    try:
        code: int = args.run(args, sys.stdout)
    except BrokenPipeError:  # `recoverable codes | head`: the reader left; not our failure
        # Point stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

"""`recoverable run` and `recoverable doctor`: the agents package, from a terminal.

Imported only when one of them runs. The run goes through the synchronous runner, so the
command never imports asyncio (~40 ms); what only `doctor` or `--fake` needs (the envelope,
discovery, `recoverable.testing`), and what only a person reads (`_output`, not `--json`), is
imported inside them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO, TypeAlias

from .. import agents

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    import types

    from .._core.detail import ErrorDetail
    from ._output import Printer

__all__ = ["Arguments", "cmd_doctor", "cmd_run"]

Arguments: TypeAlias = "argparse.Namespace | types.SimpleNamespace"
"""What a command reads: argparse's answer, or the same names read without it (`_plain`)."""

# --- doctor ---------------------------------------------------------------------------------


def cmd_doctor(args: Arguments, out: TextIO) -> int:
    from .._core.envelope import Envelope  # doctor's alone: `run` does not load it

    started = time.monotonic()
    infos = agents.discover()
    usable = [info for info in infos if info.usable]
    problems = [problem for info in infos for problem in info.problems]
    first = problems[0] if problems and not usable else None
    if args.json:
        warnings = [problem for problem in problems if problem is not first]
        duration_ms = round((time.monotonic() - started) * 1000)
        clis = {"clis": [info.to_dict() for info in infos]}
        envelope = (  # a failure carries no data: what was found goes in `meta` then
            Envelope.failure(first, warnings=warnings, duration_ms=duration_ms, meta=clis)
            if first is not None
            else Envelope.success(clis, warnings=warnings, duration_ms=duration_ms)
        )
        print(envelope.to_json(indent=2), file=out)
    else:
        for info in infos:
            _print_cli(info, out)
        if any(info.path is not None and info.authenticated is False for info in infos):
            print(_FAKE_NEEDS_NO_LOGIN, file=out)
    return 0 if first is None else first.exit_code


# After a `run --fake` a CLI still has no login of its own: say why that run worked.
_FAKE_NEEDS_NO_LOGIN = (
    "note: `recoverable run --fake` needs no login (it gives the CLI fake keys for a built-in "
    "fake provider, in a throwaway home); a real provider needs the logins above"
)


def _print_cli(info: agents.CliInfo, out: TextIO) -> None:
    """One CLI for a person: whether it is usable, where, which version, what to fix."""
    state = "problem" if not info.usable else "ok" if info.authenticated else "unverified"
    where = f"{info.path} ({info.version or 'version unknown'})" if info.path else "-"
    print(f"{info.name:7s} {state:10s} {where}", file=out)
    if info.path is not None and info.authenticated is None:
        print(f"        login: not verified (kept in {info.auth_source})", file=out)
    for problem in info.problems:
        print(f"        {problem.code}: {problem.fix_required or problem.message}", file=out)
        if problem.fix_command:
            print(f"        run: {problem.fix_command}", file=out)
        if problem.suggestion:
            print(f"        how: {problem.suggestion}", file=out)


# --- run ------------------------------------------------------------------------------------


@contextlib.contextmanager
def _fake_setup(
    cli: str | list[str], args: Arguments
) -> Iterator[tuple[str | list[str], dict[str, Any]]]:
    """An embedded FakeProvider failing as `args` ask (`--fake FAULT`, `--times`,
    `--retry-after`), a throwaway home, and the options pointing `cli` (one CLI or an order of
    them) at them."""
    import tempfile

    from ..testing import FakeProvider, Fault, cli_setup

    if cli == "auto":  # the first installed; one named is the run's to find (cli_not_found)
        from ..agents._discovery import choose

        cli = choose(agents.CLI_NAMES, need_auth=False).name
    with FakeProvider() as fake, tempfile.TemporaryDirectory(prefix="recoverable-") as home:
        if args.retry_after is not None:  # `--fake rate_limited` only (the command checks)
            fake.fail(Fault.rate_limited(retry_after=args.retry_after), times=args.times or None)
        elif args.fake:
            fake.fail(Fault.named(args.fake), times=args.times or None)
        setup = cli_setup(cli, fake, home)
        work = os.path.join(home, "work")
        os.makedirs(work, exist_ok=True)
        options = {"env": setup.environ(), "inherit_env": False, "extra_args": setup.args}
        yield cli, {**options, "cwd": work}


def _print_failure(error: ErrorDetail, err: TextIO) -> None:
    from ._output import describe_failure

    for line in describe_failure(error):
        print(line, file=err)


def _run(args: Arguments, cli: str | list[str], options: dict[str, Any], out: TextIO) -> int:
    result: agents.RunResult | None = None
    printer: Printer | None = None
    if not args.json:
        from ._output import Deadlines, Printer  # for a person: `--json` does not load it

        name = cli if isinstance(cli, str) else "/".join(cli)
        idle = options.get("idle_timeout", agents.RunOptions().idle_timeout)
        deadlines = Deadlines(idle, options.get("timeout"))
        printer = Printer(out, sys.stderr, name, terminal=sys.stderr.isatty(), deadlines=deadlines)
    try:
        for event in agents.stream_sync(args.prompt, cli, **options):
            if printer is None:
                print(json.dumps(agents.event_to_dict(event), default=str), file=out, flush=True)
            else:
                printer.event(event)
            if isinstance(event, agents.Done):
                result = event.result
    finally:
        if printer is not None:
            printer.close()
    assert result is not None
    return 0 if result.success or result.error is None else result.error.exit_code


def cmd_run(args: Arguments, out: TextIO) -> int:
    options: dict[str, Any] = {}
    for name in ("model", "cwd", "timeout", "idle_timeout", "max_turns"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    cli: str | list[str] = args.cli.split(",") if "," in args.cli else args.cli
    try:
        if args.fake is None:
            return _run(args, cli, options, out)
        with _fake_setup(cli, args) as (chosen, fake_options):
            return _run(args, chosen, {**fake_options, **options}, out)
    except KeyboardInterrupt:
        from .._core.codes import codes  # a run that ends well reads no code

        return codes["run_cancelled"].exit_code
    except ValueError as exc:  # an option a CLI cannot apply: a usage mistake, told in a line
        print(f"recoverable run: error: {exc} (see: recoverable run --help)", file=sys.stderr)
        return 2
    except Exception as exc:  # a failure before the run: typed, never a traceback
        from .._classify import classify

        detail = classify(exc)
        if args.json:
            print(json.dumps(agents.event_to_dict(agents.ErrorEvent(detail))), file=out)
        else:
            _print_failure(detail, sys.stderr)
        return detail.exit_code

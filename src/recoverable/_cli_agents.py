"""`recoverable run` and `recoverable doctor`: the agents package, from a terminal.

Imported only when one of them runs. The run goes through the synchronous runner, so the
command never imports asyncio (~40 ms).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO

from . import agents
from ._codes import codes
from ._detail import ErrorDetail
from ._envelope import Envelope

__all__ = ["cmd_doctor", "cmd_run"]

# --- doctor ---------------------------------------------------------------------------------


def cmd_doctor(args: argparse.Namespace, out: TextIO) -> int:
    started = time.monotonic()
    infos = agents.discover()
    usable = [info for info in infos if info.usable]
    problems = [problem for info in infos for problem in info.problems]
    first = problems[0] if problems and not usable else None
    if args.json:
        warnings = [problem for problem in problems if problem is not first]
        duration_ms = round((time.monotonic() - started) * 1000)
        envelope = (
            Envelope.failure(first, warnings=warnings, duration_ms=duration_ms)
            if first is not None
            else Envelope.success(
                {"clis": [info.to_dict() for info in infos]},
                warnings=warnings,
                duration_ms=duration_ms,
            )
        )
        print(envelope.to_json(indent=2), file=out)
    else:
        for info in infos:
            state = "ok" if info.usable else "problem"
            where = f"{info.path} ({info.version or 'version unknown'})" if info.path else "-"
            print(f"{info.name:7s} {state:8s} {where}", file=out)
            for problem in info.problems:
                print(
                    f"        {problem.code}: {problem.fix_required or problem.message}", file=out
                )
                if problem.fix_command:
                    print(f"        run: {problem.fix_command}", file=out)
    return 0 if first is None else first.exit_code


# --- run ------------------------------------------------------------------------------------


@contextlib.contextmanager
def _fake_setup(cli: str, fault: str, times: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """An embedded FakeProvider, a throwaway home, and the options pointing `cli` at them."""
    import tempfile

    from .agents._discovery import choose
    from .testing import FakeProvider, Fault, cli_setup

    name = choose(agents.CLI_NAMES if cli == "auto" else (cli,), need_auth=False).name
    with FakeProvider() as fake, tempfile.TemporaryDirectory(prefix="recoverable-") as home:
        if fault:
            fake.fail(Fault.named(fault), times=times or None)
        setup = cli_setup(name, fake, home)
        work = os.path.join(home, "work")
        os.makedirs(work, exist_ok=True)
        options = {"env": setup.environ(), "inherit_env": False, "extra_args": setup.args}
        yield name, {**options, "cwd": work}


def _print_event(event: agents.Event, out: TextIO, err: TextIO) -> None:
    if isinstance(event, agents.TextDelta):
        out.write(event.text)
        out.flush()
    elif isinstance(event, agents.ToolStart):
        print(f"\n[tool] {event.name} {json.dumps(event.input)[:200]}", file=err)
    elif isinstance(event, agents.ToolEnd):
        print(f"[tool] {'ok' if event.success else 'failed'}", file=err)
    elif isinstance(event, agents.Error):
        detail = event.detail
        if event.is_retry:
            label = "retrying after "
        else:  # a warning that is not a retry (an unreadable line, say) is just what it says
            label = "failed: " if event.severity == "error" else ""
        print(f"\n[{event.severity}] {label}{detail.code} - {detail.message[:300]}", file=err)
    elif isinstance(event, agents.Done):
        if event.result.error is None:
            print(file=out)
        else:
            print(file=err)
            _print_failure(event.result.error, err)


def _print_failure(error: ErrorDetail, err: TextIO) -> None:
    """How a run failed, for a person: the code, whether a retry may help, and the fix."""
    retryable = str(error.retryable).lower()
    print(f"{error.code} (retryable: {retryable}) - {error.user_message}", file=err)
    if error.fix_required:
        print(f"fix: {error.fix_required}", file=err)
    if error.fix_command:
        print(f"run: {error.fix_command}", file=err)


def _run(args: argparse.Namespace, cli: str, options: dict[str, Any], out: TextIO) -> int:
    result: agents.RunResult | None = None
    for event in agents.stream_sync(args.prompt, cli, **options):
        if args.json:
            print(json.dumps(agents.event_to_dict(event), default=str), file=out, flush=True)
        else:
            _print_event(event, out, sys.stderr)
        if isinstance(event, agents.Done):
            result = event.result
    assert result is not None
    return 0 if result.success or result.error is None else result.error.exit_code


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    options: dict[str, Any] = {}
    for name in ("model", "cwd", "timeout", "idle_timeout", "max_turns"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    try:
        if args.fake is None:
            return _run(args, args.cli, options, out)
        from .testing._faults import FAULT_NAMES

        if args.fake and args.fake not in FAULT_NAMES:
            print(f"unknown fault {args.fake!r}; one of: {', '.join(FAULT_NAMES)}", file=sys.stderr)
            return 2
        with _fake_setup(args.cli, args.fake, args.times) as (name, fake_options):
            return _run(args, name, {**fake_options, **options}, out)
    except KeyboardInterrupt:
        return codes["run_cancelled"].exit_code
    except Exception as exc:  # a failure before the run: typed, never a traceback
        from ._classify import classify

        detail = classify(exc)
        if args.json:
            print(json.dumps(agents.event_to_dict(agents.Error(detail))), file=out)
        else:
            _print_failure(detail, sys.stderr)
        return detail.exit_code

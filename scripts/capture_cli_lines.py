#!/usr/bin/env python3
"""Capture what the real AI CLIs print against a FakeProvider, as test data.

For each CLI (claude, codex, gemini) and each scenario, start a `FakeProvider` with the
scenario's fault, run the real CLI headless in a scratch directory (its own HOME, fake
keys, only loopback traffic: see `recoverable.testing.cli_setup`), and write

    tests/data/cli/<cli>/<scenario>.stdout   raw bytes as printed
    tests/data/cli/<cli>/<scenario>.stderr   raw bytes as printed
    tests/data/cli/<cli>/<scenario>.json     cli, version, argv, scenario, fault,
                                             exit_code, signal, requests, ...

with the scratch paths, the install path and the port replaced by `<tmp>`, `<install>`
and `<port>`. Usage (from the repo root, the CLIs installed with npm)::

    .venv/bin/python scripts/capture_cli_lines.py [--bin-dir DIR] [--cli claude] [--scenario text]

The binaries come from --bin-dir, else $RECOVERABLE_CLI_BIN_DIR, else node_modules/.bin
under the repo root, else PATH.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The library from src/, and the tests' own helpers (tests/support/cli.py) from the repo root.
_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]

from tests.support.cli import (  # noqa: E402
    REPO,
    TIMEOUT,
    TOOL_ARGS,
    TOOL_CALLS,
    TOOL_OUTPUT,
    cli_bin_dir,
    locate_cli,
    missing_cli,
    processes_with,
)

from recoverable.agents import CLI_NAMES  # noqa: E402
from recoverable.testing import CliSetup, FakeProvider, Fault, Reply, cli_setup  # noqa: E402

SIGNAL_GRACE = 20.0  # how long a signalled CLI gets to exit before SIGKILL
MAX_FILE = 200 * 1024  # larger captures are truncated (and the .json says so)

PROMPT = "Say hello."
TOOL_PROMPT = f"Run `echo {TOOL_OUTPUT}` with your shell tool, then tell me what it printed."
FINAL_TEXT = f"The tool printed {TOOL_OUTPUT}."


@dataclass(frozen=True)
class Scenario:
    """One capture: the fault queue, the reply, and how the run is driven."""

    name: str
    faults: tuple[tuple[Fault, int | None], ...] = ()
    tool: bool = False
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)  # merged into gemini settings
    send: signal.Signals | None = None
    only: tuple[str, ...] = CLI_NAMES


def _always(fault: Fault) -> tuple[tuple[Fault, int | None], ...]:
    return ((fault, None),)


SCENARIOS = (
    Scenario("text"),
    Scenario("tool", tool=True),
    Scenario("unauthorized", _always(Fault.unauthorized())),
    Scenario("rate_limited", _always(Fault.rate_limited(retry_after=1))),
    Scenario("rate_limited_then_ok", ((Fault.rate_limited(retry_after=1), 1),)),
    Scenario("quota", _always(Fault.insufficient_quota())),
    Scenario("overloaded", _always(Fault.overloaded())),
    Scenario("unavailable", _always(Fault.unavailable())),
    Scenario("server_error", _always(Fault.server_error())),
    Scenario("context_too_long", _always(Fault.context_too_long())),
    Scenario("model_not_found", _always(Fault.model_not_found())),
    Scenario("drop", _always(Fault.drop())),
    Scenario("cut_stream", _always(Fault.cut_stream())),
    # The body ends cleanly, but without the stream's finish event.
    Scenario("cut_stream_graceful", _always(Fault.cut_stream(graceful=True))),
    # Claude re-sends a broken stream once without streaming; the others retry the stream.
    Scenario("cut_stream_then_ok", ((Fault.cut_stream(), 1),)),
    Scenario(
        "max_turns",
        tool=True,
        extra={"claude": ("--max-turns", "1")},
        settings={"model": {"maxSessionTurns": 1}},
        only=("claude", "gemini"),  # codex has no turn limit
    ),
    Scenario("bad_flags", extra={cli: ("--bogus-flag",) for cli in CLI_NAMES}),
    Scenario("sigint", _always(Fault.hang()), send=signal.SIGINT),
    Scenario("sigterm", _always(Fault.hang()), send=signal.SIGTERM),
)


# -- binaries ---------------------------------------------------------------------------------


def find_cli(cli: str, where: Path | None) -> str:
    """The path of `cli`, or exit with how to install it."""
    found = locate_cli(cli, where)
    if found is None:
        sys.exit(missing_cli(cli, where))
    return found


def install_root(binary: str) -> str | None:
    """The folder holding `node_modules` of an npm-installed binary (for <install>)."""
    for path in (Path(binary).parent, Path(binary).resolve().parent):
        for parent in (path, *path.parents):
            if parent.name == "node_modules":
                return str(parent.parent)
    return None


# -- running -----------------------------------------------------------------------------------


def argv_for(
    cli: str, binary: str, setup: CliSetup, prompt: str, extra: tuple[str, ...]
) -> list[str]:
    """The headless command line of one run."""
    if cli == "claude":
        head = ["-p", prompt, "--output-format", "stream-json", "--verbose"]
        return [binary, *head, *setup.args, *extra]
    if cli == "codex":
        head = ["exec", "--json", "--skip-git-repo-check", "--ephemeral"]
        return [binary, *head, *setup.args, *extra, prompt]
    head = ["-p", prompt, "-o", "stream-json", "--skip-trust", "-m", "gemini-2.5-flash"]
    return [binary, *head, *setup.args, *extra]


def kill_leftovers(pgid: int, marker: bytes) -> list[int]:
    """SIGKILL the run's process group and any process that escaped it; returns the escapees."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    escaped = processes_with(marker)
    for pid in escaped:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return escaped


@dataclass
class Outcome:
    """A finished run."""

    stdout: bytes
    stderr: bytes
    returncode: int | None
    sent: str | None
    timed_out: bool
    escaped: list[int]
    duration: float


def run(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    fake: FakeProvider,
    send: signal.Signals | None,
) -> Outcome:
    """Run one CLI to the end (or the timeout) in `cwd` (the scratch dir's work/), signalling
    its group when asked."""
    scratch_dir = cwd.parent
    out_path, err_path = scratch_dir / "stdout", scratch_dir / "stderr"
    started = time.monotonic()
    timed_out = False
    sent = None
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            if send is not None:
                # Wait until the fake holds the request (the CLI is mid-call), then signal.
                while not any(r.fault == "hang" for r in fake.requests):
                    if proc.poll() is not None or time.monotonic() - started > TIMEOUT:
                        break
                    time.sleep(0.05)
                else:
                    time.sleep(0.5)
                    os.killpg(proc.pid, send)
                    sent = send.name
                try:
                    proc.wait(SIGNAL_GRACE)
                except subprocess.TimeoutExpired:
                    timed_out = True
            else:
                try:
                    proc.wait(max(1.0, TIMEOUT - (time.monotonic() - started)))
                except subprocess.TimeoutExpired:
                    timed_out = True
        finally:
            # Every process of the run has the scratch dir in its environment (HOME, TMPDIR).
            escaped = kill_leftovers(proc.pid, str(scratch_dir).encode())
            proc.wait()
    return Outcome(
        out_path.read_bytes(),
        err_path.read_bytes(),
        proc.returncode,
        sent,
        timed_out,
        escaped,
        time.monotonic() - started,
    )


def version_of(cli: str, binary: str, env: dict[str, str], cwd: Path) -> str:
    """The CLI's version number from `--version`."""
    done = subprocess.run(
        [binary, "--version"],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
        start_new_session=True,
    )
    match = re.search(r"\d+\.\d+\.\d+\S*", done.stdout.decode(errors="replace"))
    return match.group(0) if match else done.stdout.decode(errors="replace").strip()


# -- scrubbing ---------------------------------------------------------------------------------


def scrubber(tmp: Path, port: int, install: str | None) -> Callable[[bytes], bytes]:
    """Replace the scratch dir, install dir and port with placeholders."""
    pairs: list[tuple[bytes, bytes]] = []
    for path in {str(tmp), str(tmp.resolve())}:
        pairs.append((path.encode(), b"<tmp>"))
        # Claude names project folders after the cwd with every non-alphanumeric as "-".
        pairs.append((re.sub(r"[^A-Za-z0-9]", "-", path).encode(), b"<tmp>"))
    if install:
        pairs.append((install.encode(), b"<install>"))
        pairs.append((str(Path(install).resolve()).encode(), b"<install>"))
    pairs.append((str(REPO).encode(), b"<repo>"))
    pairs.sort(key=lambda p: len(p[0]), reverse=True)  # longest first
    port_re = re.compile(rb"(127\.0\.0\.1|localhost|\[::1\]):%d\b" % port)

    def scrub(data: bytes) -> bytes:
        for old, new in pairs:
            data = data.replace(old, new)
        return port_re.sub(rb"\1:<port>", data)

    return scrub


def describe(faults: tuple[tuple[Fault, int | None], ...]) -> list[dict[str, Any]] | None:
    """The fault queue as JSON: each fault's non-default fields and how many times."""
    if not faults:
        return None
    out = []
    for fault, times in faults:
        doc: dict[str, Any] = {"name": fault.name}
        plain = Fault(fault.name)  # every field at its default
        for f in dataclasses.fields(fault):
            value = getattr(fault, f.name)
            if f.name != "name" and value != getattr(plain, f.name):
                doc[f.name] = value
        doc["times"] = times  # None: every request
        out.append(doc)
    return out


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge two JSON objects."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


# -- main --------------------------------------------------------------------------------------


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A scratch dir holding home/, work/ and tmp/, removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="cli-capture-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def capture(
    cli: str, binary: str, scenario: Scenario, out_dir: Path, version: str
) -> dict[str, Any]:
    """Run one scenario for one CLI and write its three files; returns the .json document."""
    reply = Reply.tool_call(*TOOL_CALLS[cli], then=FINAL_TEXT) if scenario.tool else None
    prompt = TOOL_PROMPT if scenario.tool else PROMPT
    extra = (*(TOOL_ARGS[cli] if scenario.tool else ()), *scenario.extra.get(cli, ()))
    with scratch() as tmp, FakeProvider(faults=scenario.faults, reply=reply) as fake:
        cwd = tmp / "work"
        cwd.mkdir()
        setup = cli_setup(cli, fake, tmp / "home", max_retries=1)
        if cli == "gemini" and scenario.settings:
            [(path, text)] = setup.files.items()
            Path(path).write_text(json.dumps(merge(json.loads(text), scenario.settings), indent=2))
        env = setup.environ()
        argv = argv_for(cli, binary, setup, prompt, extra)
        outcome = run(argv, env, cwd, fake, scenario.send)
        requests = fake.requests
        scrub = scrubber(tmp, fake.port, install_root(binary))
    doc: dict[str, Any] = {
        "cli": cli,
        "version": version,
        "argv": [scrub(a.encode()).decode() for a in [Path(argv[0]).name, *argv[1:]]],
        "scenario": scenario.name,
        "fault": describe(scenario.faults),
        "exit_code": outcome.returncode if (outcome.returncode or 0) >= 0 else None,
        "signal": (
            signal.Signals(-outcome.returncode).name
            if outcome.returncode is not None and outcome.returncode < 0
            else None
        ),
        "sent_signal": outcome.sent,
        "requests": len(requests),
        "request_log": [
            {"api": r.api, "path": r.path, "stream": r.stream, "fault": r.fault} for r in requests
        ],
        "timed_out": outcome.timed_out,
        "duration_s": round(outcome.duration, 1),
    }
    if outcome.escaped:
        doc["escaped_processes"] = len(outcome.escaped)
    target = out_dir / cli
    target.mkdir(parents=True, exist_ok=True)
    truncated = {}
    for suffix, raw in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
        data = scrub(raw)
        if len(data) > MAX_FILE:
            truncated[suffix] = len(data)
            data = data[:MAX_FILE]
        (target / f"{scenario.name}.{suffix}").write_bytes(data)
    if truncated:
        doc["truncated"] = {k: f"first {MAX_FILE} of {n} bytes kept" for k, n in truncated.items()}
    (target / f"{scenario.name}.json").write_text(json.dumps(doc, indent=2) + "\n")
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", help="folder holding claude, codex and gemini")
    parser.add_argument("--out", default=str(REPO / "tests" / "data" / "cli"))
    parser.add_argument(
        "--cli", action="append", choices=CLI_NAMES, help="only this CLI (repeatable)"
    )
    parser.add_argument("--scenario", action="append", help="only this scenario (repeatable)")
    args = parser.parse_args()
    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            del os.environ[name]  # loopback only, never through a proxy
    where = Path(args.bin_dir) if args.bin_dir else cli_bin_dir()
    names = {s.name for s in SCENARIOS}
    unknown = set(args.scenario or ()) - names
    if unknown:
        parser.error(f"unknown scenario(s) {sorted(unknown)}; known: {sorted(names)}")
    for cli in args.cli or CLI_NAMES:
        binary = find_cli(cli, where)
        with scratch() as tmp, FakeProvider() as fake:
            setup = cli_setup(cli, fake, tmp / "home")
            version = version_of(cli, binary, setup.environ(), tmp)
        for scenario in SCENARIOS:
            if cli not in scenario.only or (args.scenario and scenario.name not in args.scenario):
                continue
            doc = capture(cli, binary, scenario, Path(args.out), version)
            print(
                f"{cli:7} {scenario.name:22} exit={doc['exit_code']} signal={doc['signal']}"
                f" requests={doc['requests']} {doc['duration_s']}s"
                + (" TIMED OUT" if doc["timed_out"] else "")
                + (f" escaped={doc['escaped_processes']}" if doc.get("escaped_processes") else ""),
                flush=True,
            )


if __name__ == "__main__":
    main()

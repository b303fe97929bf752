"""`recoverable exec` and `recoverable run` without argparse: the plain options read as the full
parser reads them, and a plain `exec` success answered without loading what classifies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable.command._cli import _parser
from recoverable.command._plain import plain_exec_request, plain_run_args
from recoverable.tools._exec import plain_success
from recoverable.tools._run_process import Finished

SOURCE = str(Path(rc.__file__).resolve().parent.parent)

# Words an agent or a person could put after `exec`: every option, spelt right and wrong, good
# and bad values, the `--` and command words (one that looks like an option too).
_WORDS = st.sampled_from(
    [
        "--json", "--fix", "--retries", "--timeout", "--fix-timeout", "--allow-fix",
        "--retries=2", "--timeout=0.5", "--fix-timeout=1e3", "--json=1", "--ret", "--tim",
        "-h", "--help", "--", "-", "-1", "0", "2", " 3", "1_0", "x", "nan", "inf", "1.5",
        "uv sync", "true", "echo", "--version", "-x y", "",
    ]
)  # fmt: skip


def _argparse(words: list[str]) -> dict[str, object] | None:
    """What the full parser reads from `exec WORDS`, or None when it refuses them."""
    try:
        args, unknown = _parser("exec").parse_known_args(["exec", *words])
    except SystemExit:
        return None
    if unknown:
        return None
    argv = list(args.argv)
    return {
        "argv": argv[1:] if argv[:1] == ["--"] else argv,
        "json": args.json,
        "fix": args.fix,
        "allow_fix": args.allow_fix,
        "retries": args.retries,
        "timeout": args.timeout,
        "fix_timeout": args.fix_timeout,
    }


@settings(max_examples=400, deadline=None)
@given(st.lists(_WORDS, max_size=7))
def test_what_the_plain_reader_takes_the_full_parser_reads_the_same(words: list[str]) -> None:
    request = plain_exec_request(words)
    if request is None:
        return
    full = _argparse(words)
    assert full is not None, words  # the plain reader never takes what argparse refuses
    argv = request.argv[1:] if request.argv[:1] == ["--"] else request.argv
    assert argv, words
    plain = {
        "argv": argv,
        "json": request.json,
        "fix": request.fix,
        "allow_fix": request.allow_fix,
        "retries": request.retries,
        "timeout": request.timeout,
        "fix_timeout": request.fix_timeout,
    }
    assert plain == full, words


_RUN_WORDS = st.sampled_from(
    [
        "--json", "--cli", "--model", "--cwd", "--timeout", "--idle-timeout", "--max-turns",
        "--fake", "--times", "--retry-after", "--cli=codex", "--model=-x", "--max-turns=0",
        "--mod", "-h", "--", "-", "claude", "codex,gemini", "auto", "nope", "0", "1", "2.5",
        "-1", "Say hello", " ", "", "hi", "rate_limited", "--json=1", "x y",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(_RUN_WORDS, max_size=7))
def test_what_the_plain_run_reader_takes_the_full_parser_reads_the_same(words: list[str]) -> None:
    plain = plain_run_args(words)
    if plain is None:
        return
    try:
        args, unknown = _parser("run").parse_known_args(["run", *words])
    except SystemExit:
        pytest.fail(f"the plain reader took what argparse refuses: {words}")
    assert unknown == [], words
    assert args.prompt.strip(), words  # what `_check_run` refuses is never taken
    full = {name: value for name, value in vars(args).items() if name not in ("run", "subparser")}
    assert vars(plain) == full, words


def test_a_plain_run_reads_every_option() -> None:
    words = ["--cli", "claude,codex", "Say hi", "--json", "--model=m", "--max-turns", "2"]
    plain = plain_run_args(words)
    assert plain is not None
    assert (plain.prompt, plain.cli, plain.json, plain.model, plain.max_turns) == (
        "Say hi",
        "claude,codex",
        True,
        "m",
        2,
    )
    fake = plain_run_args(["Say hi", "--fake", "rate_limited", "--times=2", "--retry-after", "3"])
    assert fake is not None
    assert (fake.fake, fake.times, fake.retry_after) == ("rate_limited", 2, 3.0)
    assert plain_run_args(["Say hi", "--fake", "--json"]).fake == ""  # type: ignore[union-attr]
    assert plain_run_args(["--fake", "Say hi"]) is None  # the prompt taken for a fault: told
    assert plain_run_args(["Say hi", "--times", "2"]) is None  # no fault to repeat: told
    assert plain_run_args(["Say hi", "--fake", "drop", "--retry-after", "1"]) is None
    assert plain_run_args(["  "]) is None
    assert plain_run_args(["a", "b"]) is None


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["--", "true"], (["--", "true"], False, 3, None)),
        (["--json", "--retries", "0", "--", "x"], (["--", "x"], True, 0, None)),
        (["--timeout=2.5", "echo", "--json"], (["echo", "--json"], False, 3, 2.5)),
    ],
)
def test_the_plain_options(words: list[str], expected: tuple[object, ...]) -> None:
    request = plain_exec_request(words)
    assert request is not None
    assert (request.argv, request.json, request.retries, request.timeout) == expected


@pytest.mark.parametrize(
    "words",
    [
        [],
        ["--"],
        ["--json"],
        ["--help"],
        ["--ret", "2", "--", "x"],  # an abbreviation: argparse's to read
        ["--retries", "-1", "--", "x"],
        ["--timeout", "0", "--", "x"],
        ["--allow-fix", "uv sync", "--", "x"],  # validated by the full parser
        ["--json=1", "--", "x"],
    ],
)
def test_anything_else_is_the_full_parsers(words: list[str]) -> None:
    assert plain_exec_request(words) is None


def _finished(stdout: bytes, returncode: int | None = 0) -> Finished:
    return Finished(returncode, stdout, 0, "", 1)


@pytest.mark.parametrize(
    ("stdout", "argv", "plain"),
    [
        (b"", ["true"], True),
        (b"hello\n", ["/bin/echo", "hello"], True),
        (b"  [1, 2]", ["tool"], True),
        (b'{"ok": true}', ["tool"], False),  # may be an envelope: read in full
        (b" \n\t{", ["tool"], False),
        (b"\x1c{", ["tool"], False),  # str.strip takes \x1c, bytes.strip does not
        (b"\xc2\xa0{", ["tool"], False),  # U+00A0 too
        (b"hi", ["/usr/bin/claude"], False),  # an AI CLI's output is its parser's
        (b"hi", ["gemini"], False),
        (b"hi", ["caf\u00e9"], False),  # names checked as written only when plain ASCII
    ],
)
def test_a_plain_success(stdout: bytes, argv: list[str], plain: bool) -> None:
    assert plain_success(_finished(stdout), argv) is plain


def test_a_failure_or_a_stop_is_never_plain() -> None:
    assert not plain_success(_finished(b"", 1), ["tool"])
    assert not plain_success(_finished(b"", None), ["tool"])  # stopped at its deadline
    assert not plain_success(OSError(2, "missing"), ["tool"])


_WRAPPER = """
import json, sys
before = set(sys.modules)
sys.argv = ["recoverable", *sys.argv[1:]]
from recoverable.command import main
code = main()
sys.stdout.flush()
print("\\nMODULES " + json.dumps(sorted(set(sys.modules) - before)))
sys.exit(code)
"""

# What a plain success must not load: argparse, the types and values, the classification
# (json, which the `--json` answer needs, the wrapper loads itself: not counted).
NOT_FOR_A_PLAIN_SUCCESS = (
    "argparse",
    "dataclasses",
    "typing",
    "json",
    "recoverable._classify",
    "recoverable._core.codes",
    "recoverable._core.detail",
    "recoverable._core.envelope",
    "recoverable.tools._ladder",
    "recoverable.tools._recover",
    "recoverable.agents",
)


def _modules(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    env = {**os.environ, "PYTHONPATH": SOURCE}
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    output, _, line = done.stdout.rpartition("\nMODULES ")
    return subprocess.CompletedProcess(done.args, done.returncode, output, done.stderr), set(
        json.loads(line)
    )


def test_a_plain_success_loads_nothing_that_classifies() -> None:
    done, modules = _modules("exec", "--", sys.executable, "-c", "print('hi')")
    assert (done.returncode, done.stdout) == (0, "hi\n")
    assert [name for name in NOT_FOR_A_PLAIN_SUCCESS if name in modules] == []


def test_a_failure_loads_what_it_needs_and_answers_as_ever() -> None:
    done, modules = _modules("exec", "--json", "--retries", "0", "--", "false")
    envelope = json.loads(done.stdout)
    assert (done.returncode, envelope["error"]["code"]) == (1, "TOOL_EXECUTION_FAILED")
    assert "recoverable._classify.process_exit" in modules
    assert "argparse" not in modules  # plain options: still no parser


@settings(max_examples=300, deadline=None)
@given(
    stdout=st.binary(max_size=40) | st.text(max_size=40).map(str.encode),
    dropped=st.sampled_from([0, 7]),
    duration_ms=st.integers(0, 10**6),
)
def test_a_plain_envelope_is_the_one_the_full_reading_writes(
    stdout: bytes, dropped: int, duration_ms: int
) -> None:
    from recoverable._core.envelope import written
    from recoverable.tools._exec import (
        ExecRequest,
        _answer,
        _Attempts,
        _recover,
        plain_envelope_text,
    )

    done, argv = Finished(0, stdout, dropped, "", 3), ["tool"]
    assume(plain_success(done, argv))
    attempts = _Attempts(argv, None)
    attempts.pending, attempts.stdout, attempts.dropped = done, stdout, dropped
    recovery = _recover(attempts, ExecRequest(argv))  # the ladder reads the run already made
    full, _ = written(_answer(recovery, attempts, duration_ms))
    assert plain_envelope_text(stdout, dropped, duration_ms) == full


def test_a_plain_json_success_loads_nothing_that_classifies() -> None:
    done, modules = _modules("exec", "--json", "--", sys.executable, "-c", "print('hi')")
    envelope = json.loads(done.stdout)
    assert (done.returncode, envelope["ok"], envelope["data"]) == (0, True, {"stdout": "hi\n"})
    assert list(envelope["meta"]) == ["duration_ms", "attempts", "ladder"]
    assert [name for name in NOT_FOR_A_PLAIN_SUCCESS if name in modules] == []

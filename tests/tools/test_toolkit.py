"""The toolkit: click and typer commands answering as agent tools, through each framework's
own test runner and as real subprocesses."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import click
import pytest
import typer
from click.testing import CliRunner
from typer.testing import CliRunner as TyperRunner

import recoverable as rc
from recoverable.tools import toolkit

from ..core.test_hostile_values import INJECTIONS

REPO = Path(__file__).resolve().parents[2]
NOTES_CODES = ("notes_not_initialised", "notes_note_missing")


def _tool(module: str, codes: tuple[str, ...]) -> Iterator[ModuleType]:
    """Import a tool module (registering its codes); forget both afterwards."""
    sys.path.insert(0, str(REPO))
    try:
        yield importlib.import_module(module)
    finally:
        sys.path.remove(str(REPO))
        sys.modules.pop(module, None)
        for code in codes:
            rc.codes.unregister(code)


@pytest.fixture
def notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.setenv("NOTES_HOME", str(tmp_path / "notes"))
    yield from _tool("examples.notes_tool", NOTES_CODES)


@pytest.fixture
def stubborn() -> Iterator[ModuleType]:
    yield from _tool("tests.tools.stubborn_tool", ("stubborn_cache_stale",))


def _envelope(text: str) -> dict[str, Any]:
    envelope: dict[str, Any] = json.loads(text)
    assert list(envelope) == ["ok", "data", "error", "warnings", "meta"]
    assert isinstance(envelope["meta"]["duration_ms"], int)
    return envelope


# --- click, through click's runner -----------------------------------------------------------


def test_click_tool_success_is_the_envelope_with_the_data(notes: ModuleType) -> None:
    runner = CliRunner()
    assert runner.invoke(notes.notes, ["init"]).exit_code == 0
    result = runner.invoke(notes.notes, ["add", "buy milk", "--json"])
    assert (result.exit_code, result.stderr) == (0, "")
    envelope = _envelope(result.stdout)
    assert (envelope["ok"], envelope["data"], envelope["error"]) == (
        True, {"id": 1, "text": "buy milk"}, None,
    )  # fmt: skip


def test_click_tool_failure_is_the_envelope_with_its_codes_exit_code(notes: ModuleType) -> None:
    result = CliRunner().invoke(notes.notes, ["--json", "add", "buy milk"])
    assert result.exit_code == 4
    error = _envelope(result.stdout)["error"]
    assert (error["code"], error["retryable"], error["fix_command"]) == (
        "NOTES_NOT_INITIALISED", False, "python examples/notes_tool.py init",
    )  # fmt: skip
    read = rc.Envelope.parse(result.stdout, exit_code=result.exit_code)
    assert read.error is not None and read.error.code == "notes_not_initialised"


def test_click_tool_answers_with_the_envelope_when_piped_if_the_author_opted_in(
    notes: ModuleType,
) -> None:
    result = CliRunner().invoke(notes.notes, ["show", "1"])  # the runner's stdout is a pipe
    assert result.exit_code == 4
    assert _envelope(result.stdout)["error"]["code"] == "NOTES_NOT_INITIALISED"


@toolkit.click_tool()
@click.argument("count", type=int)
@click.option(
    "--fail", type=click.Choice(["rate", "crash", "exit", "abort", "nan", "keys", "deep", "cycle"])
)
@click.pass_context
def counter(ctx: click.Context, count: int, fail: str | None) -> object:
    """A tool without json_when_piped: human output unless --json. Counts its side effects."""
    ctx.obj.append(count)  # the side effect
    if fail == "rate":
        raise rc.RecoverableError("rate_limited", "slow down", retry_after_ms=250)
    if fail == "crash":
        raise RuntimeError("the disk is on fire")
    if fail == "exit":
        sys.exit(3)
    if fail == "abort":
        raise KeyboardInterrupt
    return _unwritable(fail) if fail else ({"count": count} if count else None)


def _unwritable(fail: str) -> object:
    """Results JSON cannot write: each must answer as a typed failure, never a traceback."""
    if fail == "nan":
        return {"ratio": float("nan")}
    if fail == "keys":
        return {(1, 2): "a tuple key", 3: "an int key is fine"}
    if fail == "deep":
        deep: list[object] = []
        for _ in range(sys.getrecursionlimit() * 2):
            deep = [deep]
        return deep
    cycle: list[object] = []
    cycle.append(cycle)
    return cycle


def _count(*args: str) -> tuple[Any, list[int]]:
    effects: list[int] = []
    return CliRunner().invoke(counter, list(args), obj=effects), effects


def test_click_tool_prints_a_readable_answer_without_json() -> None:
    result, _ = _count("3")
    assert (result.exit_code, json.loads(result.stdout)) == (0, {"count": 3})
    result, _ = _count("3", "--fail", "rate")
    assert (result.exit_code, result.stdout) == (11, "")
    assert result.stderr == "Error: slow down (rate_limited)\nretry: in 250 ms\n"


def test_click_tool_success_without_a_value_is_empty_data() -> None:
    result, _ = _count("0", "--json")
    assert _envelope(result.stdout)["data"] == {}
    result, _ = _count("0")
    assert (result.exit_code, result.stdout) == (0, "")


@pytest.mark.parametrize(
    "args",
    [
        ["--json"],  # missing argument
        ["x", "--json"],  # not an int
        ["3", "--fail", "nope", "--json"],  # not a choice
        ["3", "--no-such-option", "--json"],
        ["3", "4", "--json"],  # one argument too many
    ],
)
def test_click_argument_errors_are_arg_error_with_zero_side_effects(args: list[str]) -> None:
    result, effects = _count(*args)
    assert (result.exit_code, effects) == (2, [])
    error = _envelope(result.stdout)["error"]
    assert (error["code"], error["retryable"], error["details"]) == (
        "INVALID_INPUT", False, {"phase": "validation"},
    )  # fmt: skip


def test_click_argument_error_without_json_is_clicks_usage_message() -> None:
    result, effects = _count("x")
    assert (result.exit_code, effects, result.stdout) == (2, [], "")
    assert "Usage:" in result.stderr and "'x' is not a valid integer" in result.stderr


def test_a_stack_trace_goes_to_stderr_only_and_only_under_debug() -> None:
    result, _ = _count("1", "--fail", "crash", "--json")
    assert result.exit_code == 1
    assert "Traceback" not in result.stdout + result.stderr
    error = _envelope(result.stdout)["error"]
    assert (error["code"], error["message"]) == ("UNKNOWN", "the disk is on fire")
    result, _ = _count("1", "--fail", "crash", "--json", "--debug")
    assert "Traceback" not in result.stdout
    assert "Traceback (most recent call last)" in result.stderr
    assert "RuntimeError: the disk is on fire" in result.stderr


def test_click_tool_ends_and_cancels() -> None:
    result, _ = _count("1", "--fail", "exit", "--json")
    assert result.exit_code == 3
    assert _envelope(result.stdout)["error"]["message"] == "the command exited 3"
    result, _ = _count("1", "--fail", "abort", "--json")
    assert result.exit_code == 130
    assert _envelope(result.stdout)["error"]["code"] == "RUN_CANCELLED"
    result, _ = _count("1", "--fail", "nan", "--json")
    assert result.exit_code == 1
    assert _envelope(result.stdout)["error"]["code"] == "TOOL_OUTPUT_INVALID"


def test_help_lists_the_flags_and_prints_no_envelope() -> None:
    result, effects = _count("--help", "--json")
    assert (result.exit_code, effects) == (0, [])
    assert "--json" in result.stdout and "--debug" in result.stdout
    assert '"ok"' not in result.stdout


def test_the_flags_are_the_commands_own_after_a_double_dash() -> None:
    @toolkit.click_tool()
    @click.argument("words", nargs=-1)
    def say(words: tuple[str, ...]) -> list[str]:
        return list(words)

    result = CliRunner().invoke(say, ["a", "--json", "--", "--json", "--debug"])
    assert _envelope(result.stdout)["data"] == ["a", "--json", "--debug"]


def test_an_unsafe_fix_command_never_reaches_the_envelope() -> None:
    for command in INJECTIONS:

        @toolkit.click_tool()
        def bad() -> None:
            raise rc.RecoverableError("precondition_failed", "m", fix_command=command)  # noqa: B023

        result = CliRunner().invoke(bad, ["--json"])
        error = _envelope(result.stdout)["error"]
        assert error["fix_command"] is None
        assert command not in result.stdout


RELAYED = {"code": "precondition_failed", "message": "upstream says", "retryable": False,
           "fix_required": "Set it up", "fix_command": "python relay.py pwn"}  # fmt: skip


@pytest.mark.parametrize(
    "failure",
    [
        lambda: rc.RecoverableError(rc.ErrorDetail.from_dict(RELAYED)),  # a payload relayed
        lambda: rc.RecoverableError(rc.Envelope.parse(  # an upstream tool's envelope
            {"ok": False, "data": None, "error": {**RELAYED, "code": "PRECONDITION_FAILED"}}
        ).error),
        # named at raise time, registered for the code nowhere: not what the registry says
        lambda: rc.RecoverableError("precondition_failed", "m", fix_required="Set it up",
                                    fix_command="python relay.py pwn"),
    ],
    ids=["from_dict", "envelope", "raised"],
)  # fmt: skip
def test_a_fix_command_not_registered_here_is_a_suggestion_in_the_tools_answer(
    failure: Any,
) -> None:
    @toolkit.click_tool()
    def relay() -> None:
        raise failure()

    result = CliRunner().invoke(relay, ["--json"])
    error = _envelope(result.stdout)["error"]
    assert (result.exit_code, error["code"], error["fix_command"]) == (
        4,
        "PRECONDITION_FAILED",
        None,
    )
    assert error["details"]["suggested_command"] == "python relay.py pwn"
    human = CliRunner().invoke(relay, [])
    assert human.exit_code == 4
    assert "run: " not in human.stderr
    assert (
        "suggested, not registered here (read it before running it): python relay.py pwn"
        in human.stderr
    )


def test_a_fix_command_registered_here_stays_in_the_tools_answer(stubborn: ModuleType) -> None:
    result = TyperRunner().invoke(stubborn.app, ["run"])
    error = _envelope(result.stdout)["error"]
    assert error["fix_command"] == "python tests/tools/stubborn_tool.py refresh"
    assert "suggested_command" not in error["details"]
    human = TyperRunner().invoke(stubborn.app, ["run"], env={})
    assert "suggested" not in human.stderr


def test_a_group_answers_for_its_subcommands(notes: ModuleType) -> None:
    result = CliRunner().invoke(notes.notes, ["nope", "--json"])
    assert result.exit_code == 2
    assert _envelope(result.stdout)["error"]["message"] == "No such command 'nope'."


# --- typer, through typer's runner -----------------------------------------------------------


def test_typer_tool_failure_and_success(stubborn: ModuleType) -> None:
    runner = TyperRunner()
    failed = runner.invoke(stubborn.app, ["run"])
    assert failed.exit_code == 4
    error = _envelope(failed.stdout)["error"]
    assert (error["code"], error["fix_command"]) == (
        "STUBBORN_CACHE_STALE", "python tests/tools/stubborn_tool.py refresh",
    )  # fmt: skip
    echoed = runner.invoke(stubborn.app, ["echo", "7", "--shout"])
    assert (echoed.exit_code, _envelope(echoed.stdout)["data"]) == (0, {"n": 7, "shout": True})


def test_typer_argument_errors_are_arg_error(stubborn: ModuleType) -> None:
    for args in (["echo", "x"], ["echo"], ["nope"], ["echo", "1", "--loud"]):
        result = TyperRunner().invoke(stubborn.app, args)
        assert result.exit_code == 2, args
        assert _envelope(result.stdout)["error"]["code"] == "INVALID_INPUT"


def test_a_single_command_typer_tool() -> None:
    app = typer.Typer()
    calls: list[str] = []

    @toolkit.typer_tool(app)
    def greet(name: str) -> dict[str, str]:
        calls.append(name)
        if name == "x":
            raise rc.RecoverableError("invalid_input", "not a name")
        return {"greeting": f"Hello, {name}"}

    runner = TyperRunner()
    human = runner.invoke(app, ["Ada"])
    assert (human.exit_code, json.loads(human.stdout)) == (0, {"greeting": "Hello, Ada"})
    as_json = runner.invoke(app, ["Ada", "--json"])
    assert _envelope(as_json.stdout)["data"] == {"greeting": "Hello, Ada"}
    refused = runner.invoke(app, ["x", "--json"])
    assert (refused.exit_code, _envelope(refused.stdout)["error"]["code"]) == (2, "INVALID_INPUT")
    missing = runner.invoke(app, ["--json"])
    assert (missing.exit_code, calls) == (2, ["Ada", "Ada", "x"])


# --- as real processes -----------------------------------------------------------------------


def _process(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, cwd=REPO,
        env={**os.environ, **(env or {})}, timeout=60, check=False,
    )  # fmt: skip


def test_the_click_example_as_a_process(tmp_path: Path) -> None:
    env = {"NOTES_HOME": str(tmp_path)}
    failed = _process("examples/notes_tool.py", "add", "buy milk", env=env)
    assert failed.returncode == 4
    assert _envelope(failed.stdout)["error"]["code"] == "NOTES_NOT_INITIALISED"
    assert _process("examples/notes_tool.py", "init", env=env).returncode == 0
    added = _process("examples/notes_tool.py", "add", "buy milk", env=env)
    assert (added.returncode, _envelope(added.stdout)["data"]) == (0, {"id": 1, "text": "buy milk"})
    bad = _process("examples/notes_tool.py", "show", "one", "--debug", env=env)
    assert (bad.returncode, _envelope(bad.stdout)["error"]["code"]) == (2, "INVALID_INPUT")


def test_the_typer_tool_as_a_process() -> None:
    failed = _process("tests/tools/stubborn_tool.py", "run")
    assert (failed.returncode, _envelope(failed.stdout)["error"]["code"]) == (
        4, "STUBBORN_CACHE_STALE",
    )  # fmt: skip
    bad = _process("tests/tools/stubborn_tool.py", "echo", "x")
    assert (bad.returncode, _envelope(bad.stdout)["error"]["code"]) == (2, "INVALID_INPUT")


def test_import_recoverable_loads_no_framework() -> None:
    code = (
        "import sys, recoverable as rc\n"
        "rc.Envelope, rc.next_action, rc.from_process, rc.tools.recover\n"
        "from recoverable.tools import toolkit\n"
        "print(sorted(m for m in ('click', 'typer') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("fail", ["nan", "keys", "deep", "cycle"])
@pytest.mark.parametrize("as_json", [True, False])
def test_a_result_json_cannot_write_is_a_typed_failure_in_both_modes(
    fail: str, as_json: bool
) -> None:
    result, effects = _count("1", "--fail", fail, *(["--json"] if as_json else []))
    assert result.exit_code == 1  # tool_output_invalid's exit code, not a traceback's
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert effects == [1]
    if as_json:
        error = _envelope(result.stdout)["error"]
        assert (error["code"], error["retryable"]) == ("TOOL_OUTPUT_INVALID", False)
        assert error["message"].startswith("the answer could not be written as JSON (")
    else:
        assert result.stdout == ""
        assert result.stderr.startswith("Error: the answer could not be written as JSON (")
        assert "Traceback" not in result.stderr

"""The process runner, driven by a small scripted CLI (deterministic and fast).

The real CLIs run through the same runner in test_agents_real_clis.py; here each edge of the
runner is pinned: spawn errno, oversize lines, our deadlines, our cancel, a kill from outside,
the tool-failure guardrail, and that no process of the group is ever left behind.
"""

from __future__ import annotations

import asyncio
import signal
import stat
from pathlib import Path
from typing import Any

import pytest

from recoverable.agents import ErrorEvent, RunOptions, RunResult, TextDelta, ToolEnd
from recoverable.agents._replay import STDERR_TAIL_CHARS
from recoverable.agents._run_sync import run_process_sync

from ..support import runner as runner_support
from ..support.runner import MODULE, alive, script

_DRIVER = ["async"]


@pytest.fixture(autouse=True, params=["async", "sync"])
def driver(request: pytest.FixtureRequest) -> None:
    """Every test here runs through both drivers: asyncio, and subprocess + selectors."""
    _DRIVER[0] = request.param


async def _run(argv: list[str], cancel_after: float | None = None, **options: Any) -> RunResult:
    return await runner_support.run(_DRIVER[0], argv, cancel_after, **options)


async def test_a_clean_run(tmp_path: Path) -> None:
    result = await _run(script(tmp_path, """
        say(type="text", text="Hello ")
        say(type="text", text="world")
        say(type="done")
    """))  # fmt: skip
    assert (result.success, result.text, result.exit_code, result.error) == (
        True, "Hello world", 0, None,
    )  # fmt: skip


async def test_no_terminal_event_is_a_failure_even_with_exit_0(tmp_path: Path) -> None:
    result = await _run(script(tmp_path, 'say(type="text", text="partial")\n'))
    assert result.success is False
    assert result.error is not None
    assert result.error.code == "cli_crashed"


async def test_stderr_keeps_a_bounded_tail(tmp_path: Path) -> None:
    result = await _run(script(tmp_path, """
        sys.stderr.write("x" * 50000 + "THE END")
        say(type="done")
    """))  # fmt: skip
    assert result.stderr_tail.endswith("THE END")
    assert len(result.stderr_tail) == STDERR_TAIL_CHARS


async def test_an_oversize_line_is_an_error_event_and_the_stream_goes_on(tmp_path: Path) -> None:
    result = await _run(script(tmp_path, """
        say(type="text", text="a")
        sys.stdout.write('{"type": "text", "text": "' + "z" * 300000 + '"}\\n')
        say(type="text", text="b")
        sys.stdout.flush()
        sys.stdout.buffer.write(b"\\xff\\xfe not utf-8\\n")
        sys.stdout.buffer.flush()
        say(type="done")
    """), max_line_bytes=100_000)  # fmt: skip
    assert result.success is True
    assert result.text == "ab"
    errors = [e for e in result.events if isinstance(e, ErrorEvent)]
    assert [e.detail.code for e in errors] == ["cli_output_invalid", "cli_output_invalid"]
    assert "300028 bytes over the 100000-byte cap" in errors[0].detail.message
    assert errors[1].detail.message.startswith("invalid UTF-8")


async def test_a_ten_megabyte_line_with_no_newline_yet_is_cut_off(tmp_path: Path) -> None:
    result = await _run(script(tmp_path, """
        for _ in range(10):
            sys.stdout.write("y" * 1_000_000)
            sys.stdout.flush()
        sys.stdout.write("\\n")
        say(type="text", text="after")
        say(type="done")
    """), max_line_bytes=1_000_000)  # fmt: skip
    assert (result.success, result.text) == (True, "after")
    errors = [e.detail.code for e in result.events if isinstance(e, ErrorEvent)]
    assert errors == ["cli_output_invalid"]


async def test_spawn_enoent_is_cli_not_found(tmp_path: Path) -> None:
    result = await _run([str(tmp_path / "no-such-cli")])
    assert result.error is not None
    assert (result.error.code, result.error.details, result.exit_code) == (
        "cli_not_found", {"errno": "ENOENT"}, None,
    )  # fmt: skip


async def test_spawn_eacces_is_cli_spawn_failed(tmp_path: Path) -> None:
    path = tmp_path / "not-executable"
    path.write_text("#!/bin/sh\n")
    path.chmod(stat.S_IRUSR)
    result = await _run([str(path)])
    assert result.error is not None
    assert (result.error.code, result.error.details) == ("cli_spawn_failed", {"errno": "EACCES"})


LOADED_START_S = 2.0
"""A deadline the script's first lines beat even on a loaded machine (a Python start took over
0.5 s at load 10 on 2 cores, and the run ended before the script had said anything)."""

CHILD_AND_HANG = """
    child = subprocess.Popen(["sleep", "1000"])
    say(type="child", pid=child.pid)
    say(type="text", text="working")
    time.sleep(1000)
"""


async def _run_with_child(tmp_path: Path, body: str, **options: Any) -> tuple[RunResult, int]:
    """Run a script that starts a grandchild; return the result and the grandchild's pid."""
    pid_file = tmp_path / "child.pid"
    argv = script(tmp_path, body.replace(
        'say(type="child", pid=child.pid)', f'open({str(pid_file)!r}, "w").write(str(child.pid))'
    ))  # fmt: skip
    result = await _run(argv, **options)
    return result, int(pid_file.read_text())


async def test_the_idle_deadline_stops_the_group_and_is_retryable_before_any_tool(
    tmp_path: Path,
) -> None:
    result, child = await _run_with_child(tmp_path, CHILD_AND_HANG, idle_timeout=LOADED_START_S)
    assert result.error is not None
    assert (result.error.code, result.error.retryable) == ("run_timeout", True)
    assert result.error.details["deadline"] == "idle"
    assert result.signal == signal.SIGTERM
    assert result.text == "working"
    assert not alive(child)


async def test_a_timeout_after_a_tool_started_is_not_retryable(tmp_path: Path) -> None:
    result = await _run(script(tmp_path, """
        say(type="tool_start", id="t1")
        time.sleep(1000)
    """), timeout=LOADED_START_S, idle_timeout=None)  # fmt: skip
    assert result.error is not None
    assert (result.error.code, result.error.retryable) == ("run_timeout", False)
    assert result.error.details["deadline"] == "total"


async def test_our_cancel_is_run_cancelled_and_leaves_nothing(tmp_path: Path) -> None:
    result, child = await _run_with_child(tmp_path, CHILD_AND_HANG, cancel_after=LOADED_START_S)
    assert result.error is not None
    assert (result.error.code, result.error.retryable, result.error.exit_code) == (
        "run_cancelled", False, 130,
    )  # fmt: skip
    assert not alive(child)


async def test_stopping_early_stops_the_group(tmp_path: Path) -> None:
    """async: the awaiting task is cancelled (and the cancel propagates); sync: the reader
    closes the iterator after the first event. Either way the grandchild is gone."""
    pid_file = tmp_path / "child.pid"
    argv = script(tmp_path, CHILD_AND_HANG.replace(
        'say(type="child", pid=child.pid)', f'open({str(pid_file)!r}, "w").write(str(child.pid))'
    ))  # fmt: skip
    if _DRIVER[0] == "async":
        task = asyncio.create_task(_run(argv))
        while not pid_file.exists() or not pid_file.read_text():
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        events = run_process_sync(MODULE, argv, RunOptions())  # type: ignore[arg-type]
        assert isinstance(next(events), TextDelta)
        events.close()
    assert not alive(int(pid_file.read_text()))


async def test_a_kill_from_outside_is_cli_killed_with_no_exit_code(tmp_path: Path) -> None:
    result = await _run(script(tmp_path, """
        say(type="text", text="before")
        os.kill(os.getpid(), 9)
    """))  # fmt: skip
    assert result.error is not None
    assert (result.error.code, result.exit_code, result.signal) == ("cli_killed", None, 9)


async def test_consecutive_tool_failures_stop_the_run(tmp_path: Path) -> None:
    result = await _run(script(tmp_path, """
        for n in range(10):
            say(type="tool_start", id=str(n))
            say(type="tool_end", id=str(n), ok=n == 0)
        time.sleep(1000)
    """), max_tool_failures=3)  # fmt: skip
    assert result.error is not None
    assert (result.error.code, result.error.details) == (
        "run_tool_failures", {"tool": "sh", "failures": 3},
    )  # fmt: skip
    ends = [e for e in result.events if isinstance(e, ToolEnd)]
    assert [e.success for e in ends] == [True, False, False, False]

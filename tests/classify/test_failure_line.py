"""`failure_line` (_classify/stderr.py): the line of a failed tool's stderr a person should read,
not its usage text or a pointer to its help (issue 26). The real tools are in test_exec.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recoverable import from_process
from recoverable._classify.stderr import failure_line

GIT_USAGE = """unknown option: --no-such-option
usage: git [-v | --version] [-h | --help] [-C <path>] [-c <name>=<value>]
           [--exec-path[=<path>]] [--html-path] [--man-path] [--info-path]
           <command> [<args>]
"""
GIT_COMMIT_USAGE = """error: unknown option `bogus'
usage: git commit [-a | --interactive | --patch] [-s] [-v] [-u<mode>] [--amend]
                  [--] [<pathspec>...]

    -q, --quiet           suppress summary after successful commit

Commit message options
    -F, --[no-]file <file>
                          read message from file

Commit contents options
    -a, --[no-]all        commit all changed files
"""
ARGPARSE = """usage: tool [-h] [--level LEVEL]
tool: error: unrecognized arguments: --x
"""
CLICK = """Usage: tool [OPTIONS] COMMAND [ARGS]...
Try 'tool --help' for help.

Error: No such option: --foo
"""
GNU = """ls: unrecognized option '--no-such-option'
Try 'ls --help' for more information.
"""
TRACEBACK = """Traceback (most recent call last):
  File "x.py", line 1, in <module>
    raise ValueError("bad value")
ValueError: bad value
"""


@pytest.mark.parametrize(
    ("tail", "line"),
    [
        (GIT_USAGE, "unknown option: --no-such-option"),
        (GIT_COMMIT_USAGE, "error: unknown option `bogus'"),
        (ARGPARSE, "tool: error: unrecognized arguments: --x"),
        (CLICK, "Error: No such option: --foo"),
        (GNU, "ls: unrecognized option '--no-such-option'"),
        (TRACEBACK, "ValueError: bad value"),
        ("usage: tool FILE\n    FILE  what to read\n", "usage: tool FILE"),  # nothing else
        ("See 'git help config'.\n", ""),  # only a pointer to help
        ("  compiling\n    error[E0425]: cannot find value\n", "error[E0425]: cannot find value"),
        ("\n\n", ""),
        ("", ""),
    ],
)
def test_the_line_that_names_the_failure(tail: str, line: str) -> None:
    assert failure_line(tail) == line


def test_a_failed_tool_is_told_by_it() -> None:
    detail = from_process(129, stderr=GIT_USAGE, argv=["git", "--no-such-option"])
    assert (detail.code, detail.message) == (
        "tool_execution_failed", "git exited 129: unknown option: --no-such-option",
    )  # fmt: skip
    assert detail.details["stderr_tail"] == GIT_USAGE.strip()  # the whole tail stays


@given(st.lists(st.text(st.sampled_from("ab:- \tusage()Try--help\n"), max_size=30), max_size=12))
def test_the_line_is_one_of_the_tails_own(lines: list[str]) -> None:
    tail = "\n".join(lines)
    found = failure_line(tail)
    assert found == "" or found in [x.strip() for x in tail.splitlines()]
    assert "\n" not in found


@given(st.lists(st.text(st.sampled_from("ab:- \tusage()\n"), max_size=30), max_size=12))
def test_a_tail_with_text_and_no_help_pointer_always_has_a_line(lines: list[str]) -> None:
    # (no `h` in the alphabet: no line can point to help)
    tail = "\n".join(lines)
    assert bool(failure_line(tail)) == bool(tail.strip())

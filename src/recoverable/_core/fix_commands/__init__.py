"""What a fix command may be: one static invocation of a known program, read as a shell reads
it, that destroys nothing and runs no code it was handed.

An agent pastes a `fix_command` into a shell, and `run_fix` runs it without one; so the
command is read the way both would read it, never as a bag of words:

1. as text (`_text`): printable ASCII, no shell metacharacters or unquoted expansions, no
   placeholders, at most `MAX_COMMAND_CHARS`; then split by shlex into the words a POSIX shell
   hands the program;
2. the program: a name, not a path, not an environment assignment (`FOO=bar cmd`); wrappers
   that run the program after them (`env`, `nice`, `timeout`, `nohup`, `command`, `exec`,
   `stdbuf`, `ionice`, `time`, `chrt`, `setsid`, `taskset`, `busybox`) read through with
   their own options and operands (`_wrappers`); programs that change user (`sudo`, `doas`)
   or build their command from input (`xargs`) refused;
3. the program's own reader: git (`_git`), the interpreters and package runners
   (`_interpreters`), the programs refused by name and the options and subcommands refused
   per program (`_programs`), and for every other program its subcommands and options read
   for destructive verbs and for the subcommands its author marked destructive (`_generic`).

Every reader leans the safe way (a cluster is each of its letters, an abbreviation each option
it may stand for, a word it cannot place an operand), and every refusal names its rule and
says why in one sentence. The work is bounded by the length cap: each step consumes words,
and a command hands words on through at most `MAX_DEPTH` programs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from .generic import marked
from .git import read_git, read_git_command
from .interpreters import (
    RUN_THROUGH_PROGRAMS,
    SCRIPT_INTERPRETERS,
    is_python,
    read_bun,
    read_deno,
    read_py_launcher,
    read_python,
    read_run_through,
    read_script_interpreter,
)
from .model import MAX_DEPTH, NO_MARKS, Context, Refusal, refuse
from .programs import READERS, Reader, read_listed, read_refused, refused_program
from .text import MAX_COMMAND_CHARS, split_words, text_refusal
from .words import is_option, program_name
from .wrappers import WRAPPERS, unwrap

__all__ = [
    "MAX_COMMAND_CHARS",
    "MAX_DEPTH",
    "Refusal",
    "fix_command_refusal",
    "program_name",
]

_PROGRAM = r"^[A-Za-z0-9][A-Za-z0-9._+-]*$"
_ASSIGNMENT = r"^[A-Za-z_][A-Za-z0-9_]*="
# ssh options that run a local command, however they reach ssh (git, rsync, scp, a URL).
_SSH_COMMANDS = ("proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand")


def fix_command_refusal(
    command: object, marks: Mapping[str, frozenset[str]] = NO_MARKS
) -> Refusal | None:
    """Why `command` may not be a fix command; None when it may.

    `marks` maps a program (lower case) to the subcommands its author marked destructive."""
    refused = text_refusal(command)
    if refused is not None:
        return refused
    words = split_words(str(command))
    if isinstance(words, Refusal):
        return words
    if not words:
        return refuse("empty", "has no words")
    ssh = next((word for word in words if any(key in word.lower() for key in _SSH_COMMANDS)), None)
    if ssh is not None:
        return refuse("command_option", f"passes {ssh!r}, an ssh option that runs a command")
    return read_command(Context(marks=marks, follow=read_command), words)


def read_command(ctx: Context, argv: Sequence[str]) -> Refusal | None:
    """Read one command: its program, through wrappers, then the program's own reader."""
    if not argv:
        return None  # a wrapper with nothing after it (`nice`) runs nothing
    program = argv[0]
    if re.match(_ASSIGNMENT, program):
        return refuse(
            "environment",
            f"sets an environment variable ({program.partition('=')[0]}=...); a fix runs "
            "with the caller's environment",
        )
    if not re.match(_PROGRAM, program):
        return refuse("program_path", "must start with a program name, not a path")
    name = program_name(program)
    wrapper = WRAPPERS.get(name)
    if wrapper is not None:
        rest = unwrap(name, wrapper, list(argv[1:]))
        return rest if isinstance(rest, Refusal) else ctx.again(rest)
    args = list(argv[1:])
    return _marked(name, args, ctx) or reader_for(name)(name, args, ctx)


def _marked(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """A subcommand the program's author marked destructive, whichever reader reads it."""
    marks = ctx.marks.get(name, frozenset())
    hit = next((word for word in args if not is_option(word) and marked(word, marks)), None)
    if hit is None:
        return None
    return refuse("marked_destructive", f"runs {name}'s {hit}, which its author marked destructive")


def reader_for(name: str) -> Reader:
    """The reader of the program known as `name`."""
    if refused_program(name) is not None:
        return read_refused
    if name.startswith("git-"):  # git's commands installed as programs (`git-clean -f`)
        return lambda _, args, ctx: read_git_command("git", name[4:], args, ctx)
    if is_python(name):
        return read_python
    if name in SCRIPT_INTERPRETERS:
        return read_script_interpreter
    if name in RUN_THROUGH_PROGRAMS:
        return read_run_through
    return _NAMED.get(name) or READERS.get(name) or read_listed


# The readers of programs whose reader lives beside git's and the interpreters'.
_NAMED: Mapping[str, Reader] = MappingProxyType(
    {"git": read_git, "py": read_py_launcher, "deno": read_deno, "bun": read_bun}
)

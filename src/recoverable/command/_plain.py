"""`recoverable exec`'s and `recoverable run`'s options read without argparse, when they are plain.

A command's start is most of what `exec` costs an agent per tool call, and much of what `run`
adds over the CLI it runs: argparse, the formatter it builds for every argument (which loads
shutil and the archive modules) and the argument types are a good part of that. The words
after the subcommand are read here when each is one this reader knows, spelt in full, with a
value after a space or an `=` that does not start with `-`:

- `exec`: `--json`, `--fix`, `--retries N`, `--timeout S`, `--fix-timeout S`, then `--` or the
  command's first word (the rest is the command's);
- `run`: one prompt that is not blank, `--json`, `--cli NAME`, `--model M`, `--cwd D`,
  `--timeout S`, `--idle-timeout S`, `--max-turns N`, `--fake` alone or with a fault's name,
  `--times N` and `--retry-after S` where they mean something (argparse's and `_cli`'s
  checks), in any order.

Anything else (`--help`, `exec --allow-fix`, which validates its command, an abbreviation, a
value argparse would refuse, a word left over) is the full parser's (`_cli`), which answers
exactly as before: these readers only ever
accept what that parser accepts, and read it the same (a property test holds them to it). The
values are read by the functions argparse's types (`_arguments`) call too.
"""

from __future__ import annotations

import types

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from ..tools._exec import ExecRequest

__all__ = [
    "plain_exec_request",
    "plain_run_args",
    "read_clis",
    "read_seconds",
    "read_whole_number",
    "run_mistake",
]

# --- a word read as a value: the value, or None (argparse's types in `_arguments` too) ---------


def read_whole_number(text: str, minimum: int = 0) -> int | None:
    """`text` as a whole number >= `minimum`, or None."""
    try:
        count = int(text)
    except ValueError:
        return None
    return count if count >= minimum else None


def read_seconds(text: str) -> float | None:
    """`text` as a number of seconds > 0 (and finite), or None."""
    try:
        seconds = float(text)
    except ValueError:
        return None
    return seconds if 0 < seconds < float("inf") else None


def read_fault(text: str) -> str | None:
    """A FakeProvider fault's name, or "" (`--fake=`: none): `text` when it is one, else None."""
    from ..testing._faults import FAULT_NAMES  # only a word after `--fake` loads the faults

    return text if text == "" or text in FAULT_NAMES else None


def read_clis(text: str) -> str | None:
    """`auto`, one CLI, or an order of them (`claude,codex`): `text` when it is one, else None."""
    from ..agents._cli_modules import CLI_NAMES

    names = [name.strip() for name in text.split(",")]
    return text if text == "auto" or all(name in CLI_NAMES for name in names) else None


# --- the options ------------------------------------------------------------------------------

_EXEC_FLAGS = ("--json", "--fix")
_EXEC_VALUES: dict[str, Callable[[str], object | None]] = {
    "--retries": read_whole_number,
    "--timeout": read_seconds,
    "--fix-timeout": read_seconds,
}
_RUN_FLAGS = ("--json",)
_RUN_VALUES: dict[str, Callable[[str], object | None]] = {
    "--cli": read_clis,
    "--model": str,
    "--cwd": str,
    "--timeout": read_seconds,
    "--idle-timeout": read_seconds,
    "--max-turns": lambda text: read_whole_number(text, 1),
    "--fake": read_fault,
    "--times": read_whole_number,
    "--retry-after": read_seconds,
}
# The options whose value may be left out (argparse's nargs="?"): what they are then.
_RUN_CONSTANTS: dict[str, object] = {"--fake": ""}


class _Words:
    """What the option words said: the flags given, the values read, and where they stopped."""

    def __init__(self) -> None:
        self.flags: set[str] = set()
        self.values: dict[str, object] = {}
        self.positionals: list[str] = []
        self.rest: list[str] = []


def _read(
    words: Sequence[str],
    flags: Sequence[str],
    valued: Mapping[str, Callable[[str], object | None]],
    *,
    rest: bool,
    constants: Mapping[str, object] | None = None,
) -> _Words | None:
    """The words read by the plain rules, or None. With `rest`, the first word that is no
    option (or a `--`) starts the rest, kept whole; without, such words are positionals.
    An option in `constants` followed by none but an option, or by nothing, takes its
    constant, as argparse gives an optional value left out."""
    constants = constants or {}
    read = _Words()
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--" or not word.startswith("-"):
            if rest:
                read.rest = list(words[index:])
                return read
            if word == "--":
                return None
            read.positionals.append(word)
            index += 1
            continue
        name, equals, value = word.partition("=")
        if name in flags and not equals:
            read.flags.add(name)
        elif name in constants and not equals and _no_value_follows(words, index):
            read.values[name] = constants[name]
        elif name in valued:
            if not equals:
                index += 1
                if index == len(words) or words[index].startswith("-"):
                    return None
                value = words[index]
            got = valued[name](value)
            if got is None:
                return None
            read.values[name] = got
        else:
            return None
        index += 1
    return read


def _no_value_follows(words: Sequence[str], index: int) -> bool:
    """Whether the word after `index` is none, or an option (argparse gives no value then)."""
    return index + 1 == len(words) or words[index + 1].startswith("-")


def plain_exec_request(words: Sequence[str]) -> ExecRequest | None:
    """The request the words after `exec` make, or None when the full parser must read them."""
    from ..tools._exec import DEFAULT_RETRIES, ExecRequest  # `run` does not load exec

    read = _read(words, _EXEC_FLAGS, _EXEC_VALUES, rest=True)
    if read is None or read.rest in ([], ["--"]):
        return None  # no command: the full parser's path says so
    values = read.values
    retries = values.get("--retries", DEFAULT_RETRIES)
    timeout, fix_timeout = values.get("--timeout"), values.get("--fix-timeout")
    assert isinstance(retries, int)
    assert timeout is None or isinstance(timeout, float)
    assert fix_timeout is None or isinstance(fix_timeout, float)
    return ExecRequest(
        read.rest,
        json="--json" in read.flags,
        fix="--fix" in read.flags,
        retries=retries,
        timeout=timeout,
        fix_timeout=fix_timeout,
    )


def plain_run_args(words: Sequence[str]) -> types.SimpleNamespace | None:
    """The arguments the words after `run` make, as the full parser names them (what
    `_run.cmd_run` reads), or None when the full parser must read them."""
    read = _read(words, _RUN_FLAGS, _RUN_VALUES, rest=False, constants=_RUN_CONSTANTS)
    if read is None or len(read.positionals) != 1:
        return None  # no prompt, or a word too many: the parser says which
    values = read.values
    args = types.SimpleNamespace(
        command="run",
        prompt=read.positionals[0],
        cli=values.get("--cli", "auto"),
        json="--json" in read.flags,
        fake=values.get("--fake"),
        times=values.get("--times"),
        retry_after=values.get("--retry-after"),
        model=values.get("--model"),
        cwd=values.get("--cwd"),
        timeout=values.get("--timeout"),
        idle_timeout=values.get("--idle-timeout"),
        max_turns=values.get("--max-turns"),
    )
    return None if run_mistake(args) is not None else args  # the full parser says which


def run_mistake(args: Any) -> str | None:
    """What a `run`'s arguments get wrong that argparse cannot see alone (the full parser's
    error, `_cli._check_run`), else None: an empty prompt, and `--times` and `--retry-after`,
    which mean something only with a fault to inject."""
    if not args.prompt.strip():
        return "the prompt is empty: give the CLI something to do"
    if args.times is not None and not args.fake:
        return "--times needs --fake FAULT (the fault to repeat)"
    if args.retry_after is not None and args.fake != "rate_limited":
        return "--retry-after needs --fake rate_limited (the 429 that carries it)"
    return None

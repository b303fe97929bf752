"""Programs that run the program after them (`nice -n 5 x`, `timeout -s KILL 5 x`, `env -i x`),
read through: their own options and operands are skipped exactly, so the program they run is
read as if it stood first. An option a wrapper reader does not know is refused, because past
it the reader cannot tell where the next program starts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from .model import Refusal, refuse
from .words import long_name

_NICE_NUMBER = r"^-[+-]?[0-9]+$"


@dataclass(frozen=True, slots=True)
class Wrapper:
    """How one program that runs another reads its own words first."""

    flags: str = ""
    """Short options that take no value."""
    values: str = ""
    """Short options that take a value: the rest of the cluster, or the next word."""
    long_flags: frozenset[str] = frozenset()
    """Long options that take no value (or only an attached `=value`)."""
    long_values: frozenset[str] = frozenset()
    """Long options that take a value: attached with `=`, or the next word."""
    operands: int = 0
    """Words between the options and the program (timeout's duration, chrt's priority)."""
    refused: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Options that are refused (`-S`, `--split-string`), with what they do."""
    numbers: bool = False
    """Whether `-N` is an option (nice's old `nice -5 x`)."""


def _refusing(**why: str) -> Mapping[str, str]:
    """Refused options by name: `S=...` is `-S`, `split_string=...` is `--split-string`."""
    return MappingProxyType({_option_name(key): text for key, text in why.items()})


def _option_name(key: str) -> str:
    return f"-{key}" if len(key) == 1 else f"--{key.replace('_', '-')}"


_SPLITS = "splits a string into a command this reader cannot follow"
_ANOTHER_PROCESS = "changes a process that is already running"
_OVERWRITES = "writes its report over a file"
WRAPPERS: Mapping[str, Wrapper] = MappingProxyType(
    {
        "env": Wrapper(
            flags="i0v", values="uCSP",
            long_flags=frozenset({"ignore-environment", "null", "debug", "block-signal",
                                  "default-signal", "ignore-signal", "list-signal-handling"}),
            long_values=frozenset({"unset", "chdir", "split-string"}),
            refused=_refusing(S=_SPLITS, split_string=_SPLITS,
                              P="chooses the folders the program is found in"),
        ),
        "nice": Wrapper(values="n", long_values=frozenset({"adjustment"}), numbers=True),
        "nohup": Wrapper(),
        "timeout": Wrapper(
            flags="fpv", values="sk", operands=1,
            long_flags=frozenset({"foreground", "preserve-status", "verbose"}),
            long_values=frozenset({"signal", "kill-after"}),
        ),
        "command": Wrapper(flags="pvV"),
        "exec": Wrapper(flags="cl", values="a"),
        "stdbuf": Wrapper(values="ioe", long_values=frozenset({"input", "output", "error"})),
        "ionice": Wrapper(
            flags="t", values="cnpPu", long_flags=frozenset({"ignore"}),
            long_values=frozenset({"class", "classdata", "pid", "pgid", "uid"}),
            refused=_refusing(p=_ANOTHER_PROCESS, P=_ANOTHER_PROCESS, u=_ANOTHER_PROCESS,
                              pid=_ANOTHER_PROCESS, pgid=_ANOTHER_PROCESS, uid=_ANOTHER_PROCESS),
        ),
        "time": Wrapper(
            flags="pvaq", values="fo",
            long_flags=frozenset({"portability", "verbose", "append", "quiet"}),
            long_values=frozenset({"format", "output"}),
            refused=_refusing(o=_OVERWRITES, output=_OVERWRITES),
        ),
        "chrt": Wrapper(
            flags="abdefimorRvp", values="TPD", operands=1,
            long_flags=frozenset({"all-tasks", "batch", "deadline", "ext", "fifo", "idle", "max",
                                  "other", "rr", "reset-on-fork", "verbose", "pid"}),
            long_values=frozenset({"sched-runtime", "sched-period", "sched-deadline"}),
            refused=_refusing(p=_ANOTHER_PROCESS, pid=_ANOTHER_PROCESS, a=_ANOTHER_PROCESS,
                              all_tasks=_ANOTHER_PROCESS),
        ),
        "setsid": Wrapper(flags="cfw", long_flags=frozenset({"ctty", "fork", "wait"})),
        "taskset": Wrapper(
            flags="acp", operands=1, long_flags=frozenset({"all-tasks", "cpu-list", "pid"}),
            refused=_refusing(p=_ANOTHER_PROCESS, pid=_ANOTHER_PROCESS),
        ),
        # multi-call binaries: the next word is the program (`busybox rm -rf /`)
        "busybox": Wrapper(),
        "toybox": Wrapper(),
        "corepack": Wrapper(),
        "eatmydata": Wrapper(),
        "nocache": Wrapper(),
        "chronic": Wrapper(flags="ev"),
    }
)  # fmt: skip


def unwrap(name: str, wrapper: Wrapper, args: Sequence[str]) -> Sequence[str] | Refusal:
    """The words of the program `wrapper` runs (empty when it runs none), or a refusal."""
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            index += 1
            break
        if not word.startswith("-") or (word == "-" and name != "env"):
            break  # the first operand
        read = _option(name, wrapper, word)
        if isinstance(read, Refusal):
            return read
        index += 1 + read
    return args[min(index + wrapper.operands, len(args)) :]


def _option(name: str, wrapper: Wrapper, word: str) -> int | Refusal:
    """How many following words one option of a wrapper takes as its value."""
    if word == "-" or (wrapper.numbers and re.match(_NICE_NUMBER, word)):
        return 0  # env's `-` is -i; nice's `-5` is -n 5
    named = long_name(word)
    if named is not None:
        return _long_option(name, wrapper, word, named)
    for position, letter in enumerate(word[1:], start=1):
        why = wrapper.refused.get(f"-{letter}")
        if why is not None:
            return refuse("wrapper_option", f"runs {name} with -{letter}, which {why}")
        if letter in wrapper.values:
            return 1 if position == len(word) - 1 else 0
        if letter not in wrapper.flags:
            return _unknown(name, word)
    return 0


def _long_option(
    name: str, wrapper: Wrapper, word: str, named: tuple[str, str | None]
) -> int | Refusal:
    given, value = named
    known = sorted(
        wrapper.long_flags
        | wrapper.long_values
        | {option[2:] for option in wrapper.refused if option.startswith("--")}
    )
    matches = [option for option in known if option.startswith(given)] if given else []
    exact = given if given in known else None
    for option in [exact] if exact else matches:
        why = wrapper.refused.get(f"--{option}")
        if why is not None:
            return refuse("wrapper_option", f"runs {name} with --{option}, which {why}")
    if exact is None and len(matches) != 1:
        return _unknown(name, word)
    option = exact or matches[0]
    return 1 if option in wrapper.long_values and value is None else 0


def _unknown(name: str, word: str) -> Refusal:
    return refuse(
        "wrapper_option",
        f"gives {name} an option this reader does not know ({word!r}), so it cannot tell "
        "which program runs",
    )

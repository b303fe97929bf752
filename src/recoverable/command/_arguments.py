"""The command's argument types and its parser class: a mistake told in one line."""

from __future__ import annotations

import argparse
from typing import NoReturn

from .._core.codes import FixCommandRejected, validate_fix_command
from ._plain import read_clis, read_seconds, read_whole_number

__all__ = [
    "UsageParser",
    "cli_argument",
    "count_argument",
    "fault_argument",
    "fix_command_argument",
    "positive_count",
    "seconds_argument",
    "whole_number",
]


class UsageParser(argparse.ArgumentParser):
    """argparse with a usage mistake told in one line (and exit 2), not the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see: {self.prog} --help)\n")


def whole_number(text: str, minimum: int = 0) -> int:
    """A whole number >= `minimum`; the error names that bound (argparse shows it as a
    usage message)."""
    count = read_whole_number(text, minimum)
    if count is None:
        raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {text!r}")
    return count


def count_argument(text: str) -> int:
    """A count >= 0; argparse shows the error as a usage message."""
    return whole_number(text)


def fix_command_argument(text: str) -> str:
    """A fix command the validator accepts; argparse shows why not as a usage message."""
    try:
        return validate_fix_command(text)
    except FixCommandRejected as refused:
        raise argparse.ArgumentTypeError(str(refused)) from None


def seconds_argument(text: str) -> float:
    """A number of seconds > 0; argparse shows the error as a usage message."""
    seconds = read_seconds(text)
    if seconds is None:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return seconds


def cli_argument(text: str) -> str:
    """`auto`, one CLI, or an order of them (`claude,codex`): the CLIs a run may use."""
    from ..agents._cli_modules import CLI_NAMES

    if read_clis(text) is not None:
        return text
    raise argparse.ArgumentTypeError(
        f"expected auto, {', '.join(CLI_NAMES)} or an order such as claude,codex; got {text!r}"
    )


def fault_argument(text: str) -> str:
    """A FakeProvider fault name ("" for `--fake` alone: no fault). A text that is no fault's
    name is most often the prompt, put after `--fake` (which takes it as its FAULT): say so."""
    from ..testing._faults import FAULT_NAMES

    if text and text not in FAULT_NAMES:
        import shlex

        short = text.isprintable() and len(text) <= _SHOWN_CHARS  # the reason stays one line
        shown = repr(text) if short else f"of {len(text)} characters"
        example = shlex.quote(text) if short else "PROMPT"
        hint = ""
        if len(text.split()) > 1:  # one word may be a fault misspelt; words are a prompt
            hint = f" (a prompt goes first: recoverable run {example} --fake [FAULT])"
        raise argparse.ArgumentTypeError(
            f"unknown fault {shown}{hint}; expected one of {', '.join(FAULT_NAMES)}"
        )
    return text


_SHOWN_CHARS = 60  # of a mistaken argument, quoted back in a usage error


def positive_count(text: str) -> int:
    """A count >= 1."""
    return whole_number(text, 1)

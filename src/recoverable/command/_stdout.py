"""The command's answer on stdout: a reader that left (`recoverable codes` into `head`) is
no failure.

Its own module, importing nothing of ours: both the entry (`_main`) and the full parser
(`_cli`) answer through it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

__all__ = ["answered"]


def answered(command: Callable[[TextIO], int]) -> int:
    """`command`'s exit code, its answer written on stdout; 0 when the reader left first."""
    try:
        return command(sys.stdout)
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0

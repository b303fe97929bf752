"""The `recoverable` command."""

from ._cli import main

__all__ = ["main"]

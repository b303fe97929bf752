"""The CLI modules by name."""

from __future__ import annotations

import importlib
from typing import cast

from ._parsing import CliModule

__all__ = ["CLI_NAMES", "module_for"]

CLI_NAMES = ("claude", "codex", "gemini")


def module_for(cli: str) -> CliModule:
    """The parser/argv module of a CLI; ValueError for an unknown name."""
    if cli not in CLI_NAMES:
        raise ValueError(f"unknown CLI {cli!r}; expected one of {', '.join(CLI_NAMES)}")
    return cast(CliModule, importlib.import_module(f"._{cli}", __package__))

"""The CLI modules by name."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, cast

from ._parsing import CliModule, ParseState

__all__ = ["CLI_NAMES", "module_for"]

CLI_NAMES = ("claude", "codex", "gemini")
"""The CLIs a run can name, in the order `cli="auto"` tries them."""

if TYPE_CHECKING:  # mypy holds each module to the contract, with the state it keeps
    from . import _claude, _codex, _gemini

    _CLAUDE: CliModule[_claude.ClaudeState] = _claude
    _CODEX: CliModule[ParseState] = _codex
    _GEMINI: CliModule[_gemini.GeminiState] = _gemini


def module_for(cli: str) -> CliModule[Any]:
    """The parser/argv module of a CLI; ValueError for an unknown name.

    Imported on first use: a run loads only its own CLI's parser."""
    if cli not in CLI_NAMES:
        raise ValueError(f"unknown CLI {cli!r}; expected one of {', '.join(CLI_NAMES)}")
    return cast("CliModule[Any]", importlib.import_module(f"._{cli}", __package__))

"""The toolkit for typer: a TyperCommand and a TyperGroup whose `main` answers as an agent
tool. typer >= 0.20 carries its own copy of click (`typer.core._click`); older ones use
click itself: the classes are read from whichever it has."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer
from typer import core

from ._run import Framework, ToolMain

__all__ = ["TyperTool", "TyperToolGroup", "typer_app", "typer_tool"]

_click: Any = getattr(core, "_click", None) or getattr(core, "click")  # noqa: B009

_TYPER = Framework(
    exit=typer.Exit,
    abort=typer.Abort,
    usage_error=_click.exceptions.UsageError,
)


class TyperTool(ToolMain, core.TyperCommand):
    """A typer command that answers as an agent tool (see `recoverable.tools.toolkit`)."""

    framework = _TYPER


class TyperToolGroup(ToolMain, core.TyperGroup):
    """A typer app with several commands that answers as an agent tool, for each of them."""

    framework = _TYPER


def _piped(base: type[Any], json_when_piped: bool) -> type[Any]:
    # typer builds the command itself, from the class alone: the setting rides on a subclass.
    if not json_when_piped:
        return base
    return type(base.__name__, (base,), {"json_when_piped": True})


def typer_app(*, json_when_piped: bool = False, **kwargs: Any) -> typer.Typer:
    """`typer.Typer(...)` for a tool with several commands."""
    return typer.Typer(cls=_piped(TyperToolGroup, json_when_piped), **kwargs)


def typer_tool(
    app: typer.Typer, name: str | None = None, *, json_when_piped: bool = False, **kwargs: Any
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`@app.command()` for an agent tool (what answers when the app has this one command)."""
    return app.command(name, cls=_piped(TyperTool, json_when_piped), **kwargs)

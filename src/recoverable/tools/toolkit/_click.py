"""The toolkit for click: a Command and a Group whose `main` answers as an agent tool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ._run import DEBUG_FLAG, DEBUG_HELP, JSON_FLAG, JSON_HELP, Framework, ToolMain

__all__ = ["ClickTool", "ClickToolGroup", "click_tool", "click_tool_group"]

_CLICK = Framework(
    exit=click.exceptions.Exit,
    abort=click.exceptions.Abort,
    usage_error=click.exceptions.UsageError,
)


def _flag_options() -> list[click.Parameter]:
    """`--json` and `--debug` as `--help` lists them (the toolkit reads them itself)."""
    return [
        click.Option([JSON_FLAG], is_flag=True, expose_value=False, help=JSON_HELP),
        click.Option([DEBUG_FLAG], is_flag=True, expose_value=False, help=DEBUG_HELP),
    ]


class _ClickToolMain(ToolMain):
    """What both click classes add: the setting, and the two flags in `--help`."""

    framework = _CLICK

    def __init__(self, *args: Any, json_when_piped: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.json_when_piped = json_when_piped
        self.params.extend(_flag_options())  # type: ignore[attr-defined]


class ClickTool(_ClickToolMain, click.Command):
    """A click Command that answers as an agent tool (see `recoverable.tools.toolkit`)."""


class ClickToolGroup(_ClickToolMain, click.Group):
    """A click Group that answers as an agent tool, for each of its subcommands."""


def click_tool(
    name: str | None = None, *, json_when_piped: bool = False, **attrs: Any
) -> Callable[[Callable[..., Any]], ClickTool]:
    """`@click.command()` for an agent tool. `json_when_piped`: the envelope also when stdout
    is not a terminal (an agent's pipe), not only with `--json`."""
    decorator = click.command(name, cls=ClickTool, json_when_piped=json_when_piped, **attrs)
    return decorator


def click_tool_group(
    name: str | None = None, *, json_when_piped: bool = False, **attrs: Any
) -> Callable[[Callable[..., Any]], ClickToolGroup]:
    """`@click.group()` for a tool with subcommands (each a plain `@group.command()`)."""
    decorator = click.group(name, cls=ClickToolGroup, json_when_piped=json_when_piped, **attrs)
    return decorator

"""Make a click or typer command an agent tool (cli-agent-spec): what it returns becomes the
envelope's `data`, what it raises its `error`, and the process exits with the registry's
exit code for that error.

    import click
    import recoverable as rc
    from recoverable.tools import toolkit

    @toolkit.click_tool(json_when_piped=True)   # in place of @click.command()
    @click.argument("name")
    def greet(name: str) -> dict[str, str]:
        if not name.isalpha():
            raise rc.RecoverableError("invalid_input", f"not a name: {name!r}")
        return {"greeting": f"Hello, {name}"}

    app = toolkit.typer_app()                   # typer: in place of typer.Typer()
    @toolkit.typer_tool(app)                    # in place of @app.command()
    def greet(name: str) -> dict[str, str]: ...

Every such command takes `--json` (print the envelope on stdout; with `json_when_piped`, also
whenever stdout is not a terminal) and `--debug` (a failure's traceback on stderr, never on
stdout), anywhere before a `--`. Without JSON, a success prints its value and a failure a
readable message on stderr. An argument error is `invalid_input` (ARG_ERROR, exit 2), raised
while parsing, before the command's own code runs: no side effects. A multi-command tool uses
`click_tool_group` / `typer_app`; its subcommands are plain `@group.command()`.

click and typer are optional extras (`pip install recoverable[click]` or `[typer]`): each is
imported only when its names are used.
"""

from __future__ import annotations

from ..._core.exports import Face

TYPE_CHECKING = False

__all__ = [
    "ClickTool",
    "ClickToolGroup",
    "TyperTool",
    "TyperToolGroup",
    "click_tool",
    "click_tool_group",
    "typer_app",
    "typer_tool",
]

# public name -> the module that defines it (loaded, with click or typer, on first use)
_FACE = Face(
    __name__,
    {
        "ClickTool": "recoverable.tools.toolkit._click",
        "ClickToolGroup": "recoverable.tools.toolkit._click",
        "click_tool": "recoverable.tools.toolkit._click",
        "click_tool_group": "recoverable.tools.toolkit._click",
        "TyperTool": "recoverable.tools.toolkit._typer",
        "TyperToolGroup": "recoverable.tools.toolkit._typer",
        "typer_app": "recoverable.tools.toolkit._typer",
        "typer_tool": "recoverable.tools.toolkit._typer",
    },
)

if TYPE_CHECKING:
    from ._click import ClickTool, ClickToolGroup, click_tool, click_tool_group
    from ._typer import TyperTool, TyperToolGroup, typer_app, typer_tool


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()

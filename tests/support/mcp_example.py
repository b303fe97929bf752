"""The example MCP server (examples/mcp_server.py) run as the tests run it: every tool
failure's exception text carries a credential, a path and an HTML marker (`HOSTILE`), so a
test can assert that none of it reaches what a client sees.

    python tests/support/mcp_example.py --stdio [--fastmcp] [--plain] [--mask]
    python tests/support/mcp_example.py --http PORT ...
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-proj-Zx81mQ2vLr7TnB4kYw9eHs3Jd6Fa0Pc5Ug"
PATH = "/home/alice/.config/demo/credentials.json"
MARKUP = "<script>alert(1)</script>"
HOSTILE = f"{SECRET} {PATH} {MARKUP}"
"""What every tool failure's text carries here."""


def taint(exc: BaseException) -> None:
    """`exc`, its text ending with HOSTILE wherever it can be read (`str`, `args`, an SDK's
    `message`): its class is a subclass of the same module and name, so it classifies alike."""
    cls = type(exc)
    text = f"{exc} {HOSTILE}"
    namespace = {"__str__": lambda self: text, "__module__": cls.__module__}
    exc.__class__ = type(cls.__name__, (cls,), namespace)
    exc.args = (*exc.args, HOSTILE)
    if isinstance(getattr(exc, "message", None), str):
        with contextlib.suppress(AttributeError):  # RecoverableError's is its detail's
            exc.message = f"{exc.message} {HOSTILE}"  # type: ignore[attr-defined]


def hostile(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function`, whose failures (but a protocol error, the tool's own words) are tainted."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except Exception as exc:
            if type(exc).__name__ != "MCPError":
                taint(exc)
            raise

    return wrapper


def main() -> None:
    sys.path.insert(0, str(REPO))
    from examples import mcp_server as example

    args = example.arguments()
    with example.FakeProvider() as fake:
        server = example.build(
            fake, fastmcp=args.fastmcp, plain=args.plain, mask=args.mask or None, decorate=hostile
        )
        example.serve(server, fastmcp=args.fastmcp, http_port=args.http)


if __name__ == "__main__":
    main()

"""The `recoverable` command: `main` is its console script."""

from .._core.exports import Face

TYPE_CHECKING = False

__all__ = ["main"]

_FACE = Face(__name__, {"main": "recoverable.command._cli"})

if TYPE_CHECKING:
    from ._cli import main


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()

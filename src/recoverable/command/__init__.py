"""The `recoverable` command: `main` is its console script."""

from .._core.exports import Face

TYPE_CHECKING = False

__all__ = ["main"]

_FACE = Face(__name__, {"main": "recoverable.command._main"})

if TYPE_CHECKING:
    from ._main import main


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()
